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
# amd64 also keeps, in modules/, what criu needs at start and a cloud
# flavour builds as a module (6.12's nfnetlink: criu's kerndat asks
# nftables in a network namespace of its own, and libnftables exits when it
# cannot open a netfilter netlink socket): those of GUEST_MODULES that are
# modules there, uncompressed, with the modules they depend on (their
# .modinfo), and modules/order, the order to load them in (the guests have
# no modprobe: test/criu/guest-init.sh loads them with finit_module).  A
# kernel cached without them is fetched again only when
# PTIMER_KERNEL_MODULES=1, as test/criu/guest.sh asks.
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

GUEST_MODULES=nfnetlink
if [ -s "$KDIR/stamp" ] && [ -s "$KDIR/vmlinuz" ] && [ "${PTIMER_KERNEL_REFRESH:-0}" != 1 ] &&
	{ [ "$ARCH" != amd64 ] || [ "${PTIMER_KERNEL_MODULES:-0}" != 1 ] || grep -q '^modules=' "$KDIR/stamp"; }; then
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
rm -rf "$KDIR/modules"
mods=
if [ "$ARCH" = amd64 ]; then
	mkdir -p "$KDIR/modules"
	# a module's file by name; its dependencies from its own .modinfo
	# section ("depends=a,b"; the package ships no modules.dep: depmod
	# makes it at install, and this host needs no kmod to read it)
	kofile() { find "$x" -name "$1.ko" -o -name "$1.ko.xz" -o -name "$1.ko.zst" | head -1; }
	keep() {
		local f b d
		f=$(kofile "$1")
		[ -n "$f" ] || return 0
		b=$1.ko
		[ -e "$KDIR/modules/$b" ] && return 0
		case $f in
		*.xz) xz -dc "$f" >"$KDIR/modules/$b.new" ;;
		*.zst) zstd -qdc "$f" >"$KDIR/modules/$b.new" ;;
		*) cp "$f" "$KDIR/modules/$b.new" ;;
		esac || return 1
		for d in $(grep -a -o 'depends=[a-z0-9_,-]*' "$KDIR/modules/$b.new" | head -1 | cut -d= -f2 | tr ',' ' '); do
			keep "$d" || return 1
		done
		mv "$KDIR/modules/$b.new" "$KDIR/modules/$b" || return 1
		echo "$b" >>"$KDIR/modules/order"
		mods="$mods $1"
	}
	for m in $GUEST_MODULES; do
		keep "$m" || die 1 "cannot unpack module $m of $DEB"
	done
fi
rm -rf "$x" "$DEB" "$KDIR/.why"
printf 'suite=%s\narch=%s\npackage=%s\nversion=%s\nrelease=%s\nfetched=%s\n' "$SUITE" "$ARCH" "$pkg" \
	"$debver" "$release" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$KDIR/stamp"
[ "$ARCH" = amd64 ] && echo "modules=${mods# }" >>"$KDIR/stamp"
echo "$KDIR/vmlinuz"
