#!/bin/sh
# SPDX-License-Identifier: MIT
#
# packaging/mkdeb.sh BUILD VERSION: build BUILD/ptimer_VERSION_ARCH.deb from
# an already built tree (make all): /usr/bin/ptimer, the CRIU plugin in
# /usr/lib/criu (where criu loads plugins from by default), the plugin's
# settings file /etc/criu/ptimer.conf (a conffile, every key commented out)
# and the copyright.  Depends lists the Debian package of every shared
# library the two link (dpkg -S), at least the version installed here, and
# criu (>= 4.0 when the plugin was built with the CHECKPOINT_DEVICES hook,
# which criu 3.x lacks).  Only dpkg-deb and dpkg-query are needed: no
# debhelper, nothing beyond what 'make deps' installs.
set -eu

B=$1 VERSION=$2
die() { echo "mkdeb: $*" >&2; exit 1; }
[ -x "$B/ptimer" ] && [ -f "$B/ptimer_plugin.so" ] || die "build $B/ptimer and $B/ptimer_plugin.so first ('make')"
command -v dpkg-deb >/dev/null || die "dpkg-deb not found: 'make deb' needs a Debian system"
ARCH=$(dpkg --print-architecture)
STAGE=$B/deb/ptimer_${VERSION}_$ARCH
OUT=$B/ptimer_${VERSION}_$ARCH.deb
rm -rf "$STAGE"
mkdir -p "$STAGE/DEBIAN" "$STAGE/usr/share/doc/ptimer" "$STAGE/etc/criu"
make --no-print-directory -s install B="$B" DESTDIR="$STAGE" PREFIX=/usr >/dev/null
install -m 0644 packaging/ptimer.conf "$STAGE/etc/criu/ptimer.conf"
install -m 0644 packaging/copyright "$STAGE/usr/share/doc/ptimer/copyright"
for f in "$STAGE"/usr/share/man/man*/*.[0-9]; do
	[ -f "$f" ] && gzip -9n "$f"
done

# pkg_of SONAME: the package holding the library the dynamic linker finds.
pkg_of() {
	path=$(ldconfig -p | awk -v s="$1" '$1 == s && /x86-64|x86_64|64bit/ { print $NF; exit }')
	[ -n "$path" ] || path=$(ldconfig -p | awk -v s="$1" '$1 == s { print $NF; exit }')
	[ -n "$path" ] || die "no $1 on this system"
	# dpkg -S wants the path as the package installed it (/usr/lib or /lib)
	for p in "$path" "$(readlink -f "$path")" "/usr$path" "${path#/usr}"; do
		pkg=$(dpkg-query -S "$p" 2>/dev/null | head -n1 | cut -d: -f1) && [ -n "$pkg" ] && { echo "$pkg"; return; }
	done
	die "no Debian package owns $path ($1)"
}
deps=$(
	for elf in "$B/ptimer" "$B/ptimer_plugin.so"; do
		objdump -p "$elf" | awk '$1 == "NEEDED" { print $2 }'
	done | sort -u | while read -r so; do pkg_of "$so"; done | sort -u | while read -r pkg; do
		[ "$pkg" = criu ] && continue
		# upstream version of what was linked against: epoch kept,
		# Debian revision dropped; this architecture's package (with a
		# foreign one installed too, multiarch, dpkg-query -W PKG
		# prints both versions run together)
		v=$(dpkg-query -W -f='${Version}\n' "$pkg:$ARCH" 2>/dev/null || dpkg-query -W -f='${Version}\n' "$pkg")
		v=$(printf '%s\n' "$v" | head -n 1 | sed 's/-[^-]*$//')
		echo "$pkg (>= $v)"
	done
)
if grep -q CR_PLUGIN_HOOK__CHECKPOINT_DEVICES "${CRIU_PLUGIN_H:-/usr/include/criu/criu-plugin.h}" 2>/dev/null; then
	criu_dep="criu (>= 4.0)"
else
	criu_dep="criu"
fi
depends=$(printf '%s\n%s\n' "$deps" "$criu_dep" | sed '/^$/d' | paste -sd, - | sed 's/,/, /g')
size=$(du -sk --exclude=DEBIAN "$STAGE" | cut -f1)
cat >"$STAGE/DEBIAN/control" <<CONTROL
Package: ptimer
Version: $VERSION
Architecture: $ARCH
Maintainer: ptimer developers <ptimer@localhost>
Installed-Size: $size
Depends: $depends
Section: admin
Priority: optional
Homepage: https://example.invalid/ptimer
Description: checkpoint/restore of POSIX timers with exact IDs (CRIU plugin and CLI)
 ptimer_plugin.so takes the restore of POSIX timers over from criu: every
 timer comes back with the same ID, clock, notification and remaining time,
 with PR_TIMER_CREATE_RESTORE_IDS on Linux 6.15+ and a create/delete loop on
 older kernels.  criu loads it from /usr/lib/criu under runc, crun, podman
 and the kubelet.  Settings: /etc/criu/ptimer.conf.  The ptimer command
 dumps, restores and shows the timers of a live process on its own.
CONTROL
echo /etc/criu/ptimer.conf >"$STAGE/DEBIAN/conffiles"
find "$STAGE" -type d -exec chmod 0755 {} +
dpkg-deb --root-owner-group --build "$STAGE" "$OUT" >/dev/null
echo "$OUT"
