#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/criu/criu-build.sh TARBALL DIR [plugins] - inside a SUITE-criu-dev
# root (roots.sh ensure SUITE criu-dev): build criu from a source tarball
# with one top directory NAME into DIR (a host cache bound into the root),
# once: DIR/NAME/criu/criu and the stamp DIR/NAME.built.  Prints the path
# of the built criu; exit 1 with the build's last lines when it fails.
#
# TARBALL is a snapshot of CRIU's criu-dev branch (../shared/vendor, the
# criu-dev suite) or Debian's orig tarball of a released criu (suite.sh's
# GPU plugins).  With "plugins" also criu's two GPU plugins of that source,
# DIR/NAME/plugins/cuda/cuda_plugin.so and
# DIR/NAME/plugins/amdgpu/amdgpu_plugin.so (stamp DIR/NAME.plugins), built
# as criu's Makefile builds them, against this tree's headers and compel;
# loaded into the same release of criu, they call criu's own functions.
#
# The two changes to criu (not to ptimer) that sid needs, harmless
# elsewhere: the generated config.h must not define
# CONFIG_HAS_NO_LIBC_RSEQ_DEFS (sid's headers define enum rseq_flags
# themselves), and glibc 2.43's const strrchr() warns in criu/tty.c
# (WERROR=0).
set -u
tarball=$1 dir=$2 want=${3:-}
name=$(tar -tJf "$tarball" | head -n 1 | cut -d/ -f1)
src=$dir/$name
log=$dir/$name.build.log
me=criu-build.sh
if [ ! -f "$dir/$name.built" ] || [ ! -x "$src/criu/criu" ]; then
	rm -rf "$src" "$dir/$name.built" "$dir/$name.plugins"
	mkdir -p "$dir"
	tar -xJf "$tarball" -C "$dir" || { echo "$me: cannot extract $tarball" >&2; exit 1; }
	cd "$src" || exit 1
	# config.h first (scripts/feature-tests), then the fix, then criu
	{ make include/common/config.h WERROR=0 || make -j2 criu WERROR=0; } >"$log" 2>&1
	[ -f include/common/config.h ] && sed -i '/#define CONFIG_HAS_NO_LIBC_RSEQ_DEFS/d' include/common/config.h
	if ! make -j2 criu WERROR=0 >>"$log" 2>&1 || [ ! -x criu/criu ]; then
		echo "$me: building criu from $(basename "$tarball") failed: $(tail -n 5 "$log" | tr '\n' ' ')" >&2
		exit 1
	fi
	touch "$dir/$name.built"
fi
if [ "$want" = plugins ] && [ ! -f "$dir/$name.plugins" ]; then
	cd "$src" || exit 1
	# criu's own targets (amdgpu_plugin.so only when its Makefile.config
	# found libdrm: CONFIG_AMDGPU)
	if ! make -j2 cuda_plugin amdgpu_plugin WERROR=0 >>"$log" 2>&1 ||
		[ ! -f plugins/cuda/cuda_plugin.so ] || [ ! -f plugins/amdgpu/amdgpu_plugin.so ]; then
		echo "$me: building the GPU plugins of $(basename "$tarball") failed: $(tail -n 5 "$log" | tr '\n' ' ')" >&2
		exit 1
	fi
	touch "$dir/$name.plugins"
fi
echo "$src/criu/criu"
