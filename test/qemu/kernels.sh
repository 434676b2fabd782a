#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/qemu/kernels.sh SUITE [ARCH] - Debian's kernel of SUITE (bookworm,
# trixie, sid, ...) for ARCH (amd64, the default, or arm64), fetched once into
# $PTIMER_KERNEL_CACHE/SUITE for amd64, .../SUITE-arm64 for arm64 (default
# cache /var/cache/ptimer-test/kernels) and reused while its stamp is there.
# Prints the path of the kernel image on stdout.  Set PTIMER_KERNEL_REFRESH=1
# to look for a newer one.
#
# Which kernel: amd64 takes the cloud flavour (linux-image-cloud-amd64: no
# modules needed to boot from an initramfs, boots fastest); arm64 has no
# cloud flavour and takes linux-image-arm64, whose vmlinuz is already an
# uncompressed Image that qemu-system-aarch64 -kernel boots.  The
# metapackage names the kernel package; newer suites split the image into
# linux-binary-VERSION (sid).  The kernel's config file is kept as "config"
# when the package has one (sid's arm64 package has none: nothing depends on
# it).  How: a private apt configuration (test/qemu/apt.sh), `apt-get
# download` + `dpkg -x`: nothing is installed, the host's apt is unchanged.
#
# Exit 0: found; 2: cannot be had (no network, no such suite: the reason on
# stderr, the caller reports a SKIP); 1: anything else.
set -u
SUITE=${1:?usage: kernels.sh SUITE [amd64|arm64]}
ARCH=${2:-amd64}
ROOT=${PTIMER_TEST_CACHE:-/var/cache/ptimer-test}
case $ARCH in
amd64) NAME=$SUITE meta=linux-image-cloud-amd64 ;;
arm64) NAME=$SUITE-arm64 meta=linux-image-arm64 ;;
*) echo "kernels.sh: $SUITE: architecture '$ARCH' is not amd64 or arm64" >&2; exit 1 ;;
esac
KDIR=${PTIMER_KERNEL_CACHE:-$ROOT/kernels}/$NAME

die() { echo "kernels.sh: $NAME: $2" >&2; exit "$1"; }

mkdir -p "$KDIR" || die 1 "cannot create $KDIR"
exec 9>"$KDIR/.lock"
flock -w 600 9 || die 1 "another fetch of $KDIR holds its lock"

if [ -s "$KDIR/stamp" ] && [ -s "$KDIR/vmlinuz" ] && [ "${PTIMER_KERNEL_REFRESH:-0}" != 1 ]; then
	echo "$KDIR/vmlinuz"
	exit 0
fi

. "$(dirname "$0")/apt.sh"
apt_suite "$SUITE" "$ARCH" "$ROOT/apt/$NAME" 2>"$KDIR/.why" || die $? "$(cat "$KDIR/.why")"
image=$(apt-cache "${A[@]}" depends "$meta" 2>/dev/null |
	awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
[ -n "$image" ] || die 2 "no $meta in '$SUITE'"
ver=${image#linux-image-}
pkg=$image
binary=linux-binary-$ver
apt-cache "${A[@]}" depends "$image" 2>/dev/null | grep -q "Depends: $binary\$" && pkg=$binary
apt_fetch "$pkg" 2>"$KDIR/.why" || die $? "$(cat "$KDIR/.why")"
x=$APT_DIR/x
rm -rf "$x"
dpkg -x "$DEB" "$x" || die 1 "dpkg -x $DEB failed"
# boot/vmlinuz-RELEASE, or usr/lib/modules/RELEASE/vmlinuz (linux-binary-*)
vmlinuz=$(ls "$x"/boot/vmlinuz-* "$x"/usr/lib/modules/*/vmlinuz 2>/dev/null | head -1)
[ -n "$vmlinuz" ] || die 1 "$DEB holds no boot/vmlinuz-* nor usr/lib/modules/*/vmlinuz"
case $vmlinuz in
*/boot/vmlinuz-*) release=${vmlinuz##*/vmlinuz-} ;;
*) release=$(basename "$(dirname "$vmlinuz")") ;;
esac
debver=$(dpkg-deb -f "$DEB" Version 2>/dev/null)
cp "$vmlinuz" "$KDIR/vmlinuz.new" && mv "$KDIR/vmlinuz.new" "$KDIR/vmlinuz"
rm -f "$KDIR/config"
cp "$x"/boot/config-* "$KDIR/config" 2>/dev/null || cp "$x"/usr/lib/modules/*/config "$KDIR/config" 2>/dev/null
rm -rf "$x" "$DEB" "$KDIR/.why"
printf 'suite=%s\narch=%s\npackage=%s\nversion=%s\nrelease=%s\nfetched=%s\n' "$SUITE" "$ARCH" "$pkg" \
	"$debver" "$release" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$KDIR/stamp"
echo "$KDIR/vmlinuz"
