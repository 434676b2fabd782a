#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/qemu/initramfs.sh BUILD OUT [ARCH] - the kernel matrix's initramfs
# (gzip'ed newc cpio) at OUT for guests of ARCH (amd64, the default, or
# arm64; BUILD holds programs built for it): a static busybox
# (test/qemu/busybox.sh) with a link per applet, BUILD/ptimer, the test
# programs of the guest flavours' cases (BUILD/test/PROG, drive_progs of
# test/lib/driver.sh) and BUILD/qemu/kprobe with the shared libraries
# they need and the dynamic loader, test/qemu/guest-suite.sh and
# test/lib/harness.sh (as /ptimer/harness.sh), and test/qemu/init as /init.
# Built with the host's tools only.
#
# Libraries: for the host's own architecture those ldd names; for another
# (ldd cannot run a foreign loader) the DT_NEEDED entries of `readelf -d`,
# walked recursively and looked up in ARCH's multiarch and cross directories
# (/usr/lib/TRIPLET, /lib/TRIPLET, /usr/TRIPLET/lib: Debian's :ARCH and
# cross packages) and in $PTIMER_SYSROOT/{usr/lib,lib}/TRIPLET when set;
# the loader from the PT_INTERP of `readelf -l`.
set -euo pipefail
B=$(cd "${1:?usage: initramfs.sh BUILD OUT [ARCH]}" && pwd)
OUT=$2
ARCH=${3:-amd64}
HERE=$(cd "$(dirname "$0")" && pwd)
S=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-initramfs.XXXXXX")
trap 'rm -rf "$S"' EXIT

case $ARCH in
amd64) TRIPLET=x86_64-linux-gnu ;;
arm64) TRIPLET=aarch64-linux-gnu ;;
*) echo "initramfs.sh: architecture '$ARCH' is not amd64 or arm64" >&2; exit 1 ;;
esac
NATIVE=0
[ "$ARCH" = "$(dpkg --print-architecture 2>/dev/null)" ] && NATIVE=1
BB=$(bash "$HERE/busybox.sh" "$ARCH")

mkdir -p "$S"/{bin,sbin,proc,sys,dev,tmp,etc,ptimer,lib64}
cp "$BB" "$S/bin/busybox"
# the applet list from the busybox itself when it runs here, else from the host's
if [ "$NATIVE" = 1 ]; then applets=$("$BB" --list); else applets=$(busybox --list); fi
for a in $applets; do
	[ "$a" = busybox ] || ln -sf busybox "$S/bin/$a"
done
ln -sf ../bin/busybox "$S/sbin/poweroff"
cp "$HERE/init" "$S/init"
cp "$HERE/guest-suite.sh" "$HERE/../lib/harness.sh" "$HERE/../lib/driver.sh" "$S/ptimer/"
cp -r "$HERE/../cases" "$S/ptimer/cases"
chmod 755 "$S/init"

# put LIB (a path on the host) at GUEST-PATH
put() {
	[ -e "$S$2" ] && return 0
	mkdir -p "$S$(dirname "$2")"
	cp -L "$1" "$S$2"
}

# foreign_lib NAME: the host path of ARCH's library NAME
LIBDIRS=()
[ -n "${PTIMER_SYSROOT:-}" ] && LIBDIRS+=("$PTIMER_SYSROOT/usr/lib/$TRIPLET" "$PTIMER_SYSROOT/lib/$TRIPLET")
LIBDIRS+=("/usr/lib/$TRIPLET" "/lib/$TRIPLET" "/usr/$TRIPLET/lib")
foreign_lib() {
	local d
	for d in "${LIBDIRS[@]}"; do
		[ -e "$d/$1" ] && { echo "$d/$1"; return 0; }
	done
	return 1
}

# foreign_deps FILE: each library FILE needs, recursively, into the image at
# /lib/TRIPLET/NAME (the guest's loader searches there), and the loader
foreign_deps() {
	local f=$1 n p interp
	interp=$(readelf -lW "$f" | sed -n 's/.*Requesting program interpreter: \([^]]*\)].*/\1/p')
	if [ -n "$interp" ] && [ ! -e "$S$interp" ]; then
		p=$(foreign_lib "$(basename "$interp")") ||
			{ echo "initramfs.sh: the loader $interp of $f is not in ${LIBDIRS[*]}" >&2; exit 1; }
		put "$p" "$interp"
	fi
	for n in $(readelf -dW "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		[ -e "$S/lib/$TRIPLET/$n" ] && continue
		p=$(foreign_lib "$n") ||
			{ echo "initramfs.sh: $n (needed by $f) is not in ${LIBDIRS[*]}" >&2; exit 1; }
		put "$p" "/lib/$TRIPLET/$n"
		foreign_deps "$p"
	done
}

# copy_elf FILE: the file into /ptimer, its libraries and loader at their paths
copy_elf() {
	local f=$1 lib
	cp "$f" "$S/ptimer/"
	if [ "$NATIVE" = 0 ]; then
		foreign_deps "$f"
		return
	fi
	for lib in $(ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
		put "$lib" "$lib"
	done
}
# the programs of the guests' cases (test/lib/driver.sh drive_progs)
PROGS=$(DRIVE_CASES=$HERE/../cases && . "$HERE/../lib/driver.sh" && unset PTIMER_CASES && drive_progs guest guest-linear)
for f in "$B/ptimer" $(for p in $PROGS; do echo "$B/test/$p"; done) "$B/qemu/kprobe"; do
	[ -x "$f" ] || { echo "initramfs.sh: $f missing (make tests; matrix.sh builds kprobe)" >&2; exit 1; }
	copy_elf "$f"
done
(cd "$S" && find . -print0 | cpio --null -o -H newc --quiet -R 0:0) | gzip -1 >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
