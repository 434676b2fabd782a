#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/qemu/slice-kernel.sh [--bg] - an x86_64 kernel that grants rseq
# time-slice extensions, for the guests of the matrix ("slice") and of the
# criu suite (test/criu/guest.sh amd64-slice sid|criu-dev).  Debian builds its
# kernels without CONFIG_RSEQ_SLICE_EXTENSION (sid's 7.2.13: "is not set";
# prctl(PR_RSEQ_SLICE_EXTENSION) then answers ENOTSUPP or EINVAL), but
# ships the source: this script fetches sid's newest linux-source-X.Y
# (the linux-source metapackage names it), configures x86_64_defconfig with
# test/qemu/slice-kernel.config merged over it (scripts/kconfig/
# merge_config.sh: the option, what criu needs, nothing a guest without
# disks, network or modules uses), checks that every option the fragment
# sets is in the result, builds bzImage only, and keeps it in
# $PTIMER_KERNEL_CACHE/slice (default /var/cache/ptimer-test/kernels/slice)
# as vmlinuz, with its config and a stamp.  A cached kernel is reused while
# the stamp's fragment hash and source package match; the source and the
# objects are removed after the build (about 2 GB while it runs).
#
# Measured on this workplace's 2-core machines: fetch 4 s, unpack 40 s,
# bzImage 11-13 min with both cores (test/run.sh starts it at the
# beginning of `make check`, niced, so that it uses what the stages before
# the matrix leave idle).
#
# --bg: start the build in the background (nice 19) unless the cache is
# current or a build holds the lock, print nothing, return at once; the
# next plain run waits for it (the lock) and prints the path.
#
# Prints the path of vmlinuz on stdout.  Exit 0: built or cached; 2: cannot
# be had (no mirror, no such package: the reason on stderr); 1: the build
# failed (its last lines on stderr, the whole log in the cache directory).
# Build tools (make deps, test/qemu/deps.sh): gcc, make, bison, flex, bc,
# libelf-dev, libssl-dev, xz-utils.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${PTIMER_TEST_CACHE:-/var/cache/ptimer-test}
KDIR=${PTIMER_KERNEL_CACHE:-$ROOT/kernels}/slice
FRAG=$HERE/slice-kernel.config
me=slice-kernel.sh

die() { echo "$me: $2" >&2; exit "$1"; }

mkdir -p "$KDIR" || die 1 "cannot create $KDIR"
fhash=$(sha256sum "$FRAG" | cut -c1-16)
current() {
	[ -s "$KDIR/stamp" ] && [ -s "$KDIR/vmlinuz" ] && grep -qx "fragment=$fhash" "$KDIR/stamp"
}

if [ "${1:-}" = --bg ]; then
	current && exit 0
	# a build already running holds the lock: leave it be
	exec 9>"$KDIR/.lock"
	flock -n 9 || exit 0
	exec 9>&-
	nohup nice -n 19 bash "$0" >"$KDIR/bg.log" 2>&1 </dev/null &
	exit 0
fi

exec 9>"$KDIR/.lock"
# a build by another run (or --bg) may take a quarter of an hour
flock -w 3600 9 || die 1 "another build of $KDIR holds its lock for more than an hour"
if current; then
	echo "$KDIR/vmlinuz"
	exit 0
fi

for t in gcc make bison flex bc xz; do
	command -v "$t" >/dev/null || die 1 "no $t on this host: 'make deps' installs the kernel's build tools (test/qemu/deps.sh)"
done
[ -f /usr/include/libelf.h ] || die 1 "no libelf.h: 'make deps' installs libelf-dev (test/qemu/deps.sh)"
[ -f /usr/include/openssl/ssl.h ] || die 1 "no openssl/ssl.h: 'make deps' installs libssl-dev (test/qemu/deps.sh)"

. "$HERE/apt.sh"
apt_suite sid amd64 "$ROOT/apt/slice" 2>"$KDIR/.why" || die $? "$(cat "$KDIR/.why")"
pkg=$(apt-cache "${A[@]}" depends linux-source 2>/dev/null |
	awk '$1 == "Depends:" && $2 ~ /^linux-source-[0-9]/ { print $2; exit }')
[ -n "$pkg" ] || die 2 "no linux-source-X.Y named by sid's linux-source"
ver=$(apt-cache "${A[@]}" show "$pkg" 2>/dev/null | awk '$1 == "Version:" { print $2; exit }')

W=$KDIR/work
rm -rf "$W"
mkdir -p "$W"
trap 'rm -rf "$W"' EXIT
t0=$(date +%s)
apt_fetch "$pkg" 2>"$KDIR/.why" || die $? "$(cat "$KDIR/.why")"
dpkg-deb --fsys-tarfile "$DEB" | tar -x -C "$W" --wildcards './usr/src/linux-source-*.tar.xz' ||
	die 1 "$DEB holds no usr/src/linux-source-*.tar.xz"
rm -f "$DEB"
tarball=$(ls "$W"/usr/src/linux-source-*.tar.xz | head -n 1)
tar -xJf "$tarball" -C "$W" || die 1 "cannot unpack $tarball"
rm -rf "$W/usr"
src=$(ls -d "$W"/linux-source-* | head -n 1)
t1=$(date +%s)

log=$KDIR/build.log
O=$W/o
{
	make -C "$src" O="$O" x86_64_defconfig &&
		"$src/scripts/kconfig/merge_config.sh" -m -O "$O" "$O/.config" "$FRAG" &&
		make -C "$src" O="$O" olddefconfig
} >"$log" 2>&1 || die 1 "configuring $pkg failed: $(tail -n 3 "$log" | tr '\n' ' ')"
# every option the fragment sets must have survived olddefconfig
missing=$(awk -v cfg="$O/.config" '
	BEGIN { while ((getline l < cfg) > 0) have[l] = 1 }
	/^CONFIG_[A-Z0-9_]+=/ { if (!($0 in have)) m = m " " $0 }
	/^# CONFIG_[A-Z0-9_]+ is not set/ { k = $2 "=y"; if (k in have) m = m " " $2 "=n" }
	END { print m }' "$FRAG")
[ -z "$missing" ] || die 1 "$pkg's Kconfig does not take from slice-kernel.config:$missing"
make -C "$src" O="$O" -j"$(nproc)" bzImage >>"$log" 2>&1 ||
	die 1 "building $pkg failed (log: $log): $(grep -E 'error|Error' "$log" | tail -n 3 | tr '\n' ' ')"
t2=$(date +%s)
release=$(cat "$O/include/config/kernel.release" 2>/dev/null)
cp "$O/arch/x86/boot/bzImage" "$KDIR/vmlinuz.new" && mv "$KDIR/vmlinuz.new" "$KDIR/vmlinuz"
cp "$O/.config" "$KDIR/config"
printf 'suite=sid\narch=amd64\npackage=%s\nversion=%s\nrelease=%s\nfragment=%s\nfetch_unpack_s=%s\nbuild_s=%s\nbuilt=%s\n' \
	"$pkg" "$ver" "$release" "$fhash" "$((t1 - t0))" "$((t2 - t1))" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$KDIR/stamp"
echo "$KDIR/vmlinuz"
