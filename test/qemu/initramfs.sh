#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/qemu/initramfs.sh BUILD OUT - the kernel matrix's initramfs (gzip'ed
# newc cpio) at OUT: busybox (busybox-static) with a link per applet,
# BUILD/ptimer, BUILD/test/zdtm_timers and BUILD/qemu/kprobe with the shared
# libraries ldd names and the dynamic loader, test/qemu/guest-suite.sh and
# test/lib/harness.sh (as /ptimer/harness.sh), and
# test/qemu/init as /init.  Built with the host's tools only.
set -euo pipefail
B=$(cd "${1:?usage: initramfs.sh BUILD OUT}" && pwd)
OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
S=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-initramfs.XXXXXX")
trap 'rm -rf "$S"' EXIT

BB=$(command -v busybox) || { echo "initramfs.sh: no busybox (apt-get install busybox-static)" >&2; exit 1; }
file -L "$BB" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$BB" 2>&1 | grep -q 'not a dynamic' ||
	{ echo "initramfs.sh: $BB is not static (apt-get install busybox-static)" >&2; exit 1; }

mkdir -p "$S"/{bin,sbin,proc,sys,dev,tmp,etc,ptimer,lib64}
cp "$BB" "$S/bin/busybox"
for a in $("$BB" --list); do
	[ "$a" = busybox ] || ln -sf busybox "$S/bin/$a"
done
ln -sf ../bin/busybox "$S/sbin/poweroff"
cp "$HERE/init" "$S/init"
cp "$HERE/guest-suite.sh" "$HERE/../lib/harness.sh" "$S/ptimer/"
chmod 755 "$S/init"

# copy_elf FILE: the file into /ptimer, its libraries and loader at their paths
copy_elf() {
	local f=$1 lib
	cp "$f" "$S/ptimer/"
	for lib in $(ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
		[ -e "$S$lib" ] && continue
		mkdir -p "$S$(dirname "$lib")"
		cp -L "$lib" "$S$lib"
	done
}
for f in "$B/ptimer" "$B/test/zdtm_timers" "$B/qemu/kprobe"; do
	[ -x "$f" ] || { echo "initramfs.sh: $f missing (make tests; matrix.sh builds kprobe)" >&2; exit 1; }
	copy_elf "$f"
done
(cd "$S" && find . -print0 | cpio --null -o -H newc --quiet -R 0:0) | gzip -1 >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
