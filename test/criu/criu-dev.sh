#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/criu/criu-dev.sh TARBALL DIR - inside the sid-criu-dev root (roots.sh
# ensure sid criu-dev): build criu from a snapshot of CRIU's criu-dev branch
# (../shared/vendor/criu-dev-*.tar.xz, a git archive with one top
# directory) into DIR (a host cache bound into the root), once:
# DIR/NAME/criu/criu and DIR/NAME.built.  The two changes the vendor README
# names for sid, to criu, not to ptimer: its generated config.h must not
# define CONFIG_HAS_NO_LIBC_RSEQ_DEFS (sid's headers define enum rseq_flags
# themselves), and glibc 2.43's const strrchr() warns in criu/tty.c
# (WERROR=0).  Prints the path of the built criu; exit 1 with the build's
# last lines when it fails.
set -u
tarball=$1 dir=$2
name=$(tar -tJf "$tarball" | head -n 1 | cut -d/ -f1)
src=$dir/$name
if [ -f "$dir/$name.built" ] && [ -x "$src/criu/criu" ]; then
	echo "$src/criu/criu"
	exit 0
fi
rm -rf "$src" "$dir/$name.built"
mkdir -p "$dir"
tar -xJf "$tarball" -C "$dir" || { echo "criu-dev.sh: cannot extract $tarball" >&2; exit 1; }
cd "$src" || exit 1
log=$dir/$name.build.log
# config.h first (scripts/feature-tests), then the fix, then criu
{ make include/common/config.h WERROR=0 || make -j2 criu WERROR=0; } >"$log" 2>&1
[ -f include/common/config.h ] && sed -i '/#define CONFIG_HAS_NO_LIBC_RSEQ_DEFS/d' include/common/config.h
if ! make -j2 criu WERROR=0 >>"$log" 2>&1 || [ ! -x criu/criu ]; then
	echo "criu-dev.sh: building criu-dev failed: $(tail -n 5 "$log" | tr '\n' ' ')" >&2
	exit 1
fi
touch "$dir/$name.built"
echo "$src/criu/criu"
