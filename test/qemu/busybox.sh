#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/qemu/busybox.sh ARCH - a static busybox for the guests of ARCH.  amd64
# on an amd64 host: the host's own (busybox-static, test/qemu/deps.sh
# installs it).  Otherwise Debian's busybox-static for ARCH, of the host's
# suite (bookworm when /etc/os-release names none), fetched once with
# `apt-get download` + `dpkg -x` through a private apt configuration
# (test/qemu/apt.sh: no `dpkg --add-architecture`, nothing installed) into
# /var/cache/ptimer-test/busybox/ARCH.  Prints its path on stdout.
#
# Exit 0: found; 2: cannot be had (the reason on stderr: a SKIP); 1: other.
set -u
ARCH=${1:?usage: busybox.sh ARCH}
ROOT=${PTIMER_TEST_CACHE:-/var/cache/ptimer-test}
die() { echo "busybox.sh: $ARCH: $2" >&2; exit "$1"; }

if [ "$ARCH" = "$(dpkg --print-architecture 2>/dev/null)" ]; then
	bb=$(command -v busybox) || die 1 "no busybox (apt-get install busybox-static)"
	file -L "$bb" 2>/dev/null | grep -q 'statically linked' ||
		ldd "$bb" 2>&1 | grep -q 'not a dynamic' ||
		die 1 "$bb is not static (apt-get install busybox-static)"
	echo "$bb"
	exit 0
fi

D=$ROOT/busybox/$ARCH
mkdir -p "$D" || die 1 "cannot create $D"
exec 9>"$D/.lock"
flock -w 600 9 || die 1 "another fetch of $D holds its lock"
if [ -s "$D/stamp" ] && [ -x "$D/busybox" ]; then
	echo "$D/busybox"
	exit 0
fi
suite=$(. /etc/os-release 2>/dev/null; echo "${VERSION_CODENAME:-}")
[ -n "$suite" ] || suite=bookworm
. "$(dirname "$0")/apt.sh"
apt_suite "$suite" "$ARCH" "$ROOT/apt/$suite-$ARCH" 2>"$D/.why" || die $? "$(cat "$D/.why")"
apt_fetch busybox-static 2>"$D/.why" || die $? "$(cat "$D/.why")"
x=$APT_DIR/x
rm -rf "$x"
dpkg -x "$DEB" "$x" || die 1 "dpkg -x $DEB failed"
[ -f "$x/bin/busybox" ] || die 1 "$DEB holds no bin/busybox"
cp "$x/bin/busybox" "$D/busybox.new" && chmod 755 "$D/busybox.new" && mv "$D/busybox.new" "$D/busybox"
printf 'suite=%s\narch=%s\nversion=%s\nfetched=%s\n' "$suite" "$ARCH" \
	"$(dpkg-deb -f "$DEB" Version 2>/dev/null)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$D/stamp"
rm -rf "$x" "$DEB" "$D/.why"
echo "$D/busybox"
