#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/qemu/kernels.sh SUITE - Debian's cloud kernel of SUITE (bookworm,
# trixie, sid, ...), fetched once into $PTIMER_KERNEL_CACHE/SUITE (default
# /var/cache/ptimer-test/kernels/SUITE) and reused while its stamp is there.
# Prints the path of the kernel image on stdout.  Set PTIMER_KERNEL_REFRESH=1
# to look for a newer one.
#
# How: a private apt configuration (its own sources list, lists and cache
# under /var/cache/ptimer-test/apt/SUITE; the host's apt is not changed) that
# names SUITE on the same URI as the host's own Debian source, read from
# /etc/apt at run time.  linux-image-cloud-amd64 of SUITE names the kernel
# package; newer suites split the image into linux-binary-VERSION-cloud-amd64.
# `apt-get download` + `dpkg -x`: nothing is installed.
#
# Exit 0: found; 2: cannot be had (no network, no such suite: the reason on
# stderr, the caller reports a SKIP); 1: anything else.
set -u
SUITE=${1:?usage: kernels.sh SUITE}
ROOT=${PTIMER_TEST_CACHE:-/var/cache/ptimer-test}
KDIR=${PTIMER_KERNEL_CACHE:-$ROOT/kernels}/$SUITE
ADIR=$ROOT/apt/$SUITE

die() { echo "kernels.sh: $SUITE: $2" >&2; exit "$1"; }

mkdir -p "$KDIR" "$ADIR" || die 1 "cannot create $KDIR"
exec 9>"$KDIR/.lock"
flock -w 600 9 || die 1 "another fetch of $KDIR holds its lock"

if [ -s "$KDIR/stamp" ] && [ -s "$KDIR/vmlinuz" ] && [ "${PTIMER_KERNEL_REFRESH:-0}" != 1 ]; then
	echo "$KDIR/vmlinuz"
	exit 0
fi

# The host's Debian URI: deb822 (URIs:) or one-line (deb URI suite ...).
uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
	awk 'tolower($1) == "uris:" && $2 ~ /debian\/?$/ && $2 !~ /security/ { print $2; exit }')
[ -n "$uri" ] || uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
	awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i ~ /:\/\//) { if ($i ~ /debian\/?$/ && $i !~ /security/) { print $i; exit } break } }')
[ -n "$uri" ] || die 2 "no Debian URI in /etc/apt/sources.list{,.d} to fetch the kernel from"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
opt="[signed-by=$keyring]"
[ -r "$keyring" ] || opt=""

mkdir -p "$ADIR/lists/partial" "$ADIR/cache/archives/partial" "$ADIR/deb"
echo "deb $opt $uri $SUITE main" >"$ADIR/sources.list"
A=(-o "Dir::Etc::sourcelist=$ADIR/sources.list" -o "Dir::Etc::sourceparts=-"
	-o "Dir::State::Lists=$ADIR/lists" -o "Dir::Cache=$ADIR/cache"
	-o "APT::Get::List-Cleanup=0" -o "Acquire::Retries=1" -o "Acquire::http::Timeout=30"
	-o "APT::Architecture=amd64" -o "APT::Architectures::=amd64")

if ! timeout -k 5 180 apt-get "${A[@]}" update -q >"$ADIR/update.log" 2>&1 </dev/null ||
	grep -qE '^(E:|Err:)' "$ADIR/update.log"; then
	die 2 "apt-get update of '$SUITE' at $uri failed: $(grep -E '^(E:|Err:|W:)' "$ADIR/update.log" | head -2 | tr '\n' ' ')"
fi
image=$(apt-cache "${A[@]}" depends linux-image-cloud-amd64 2>/dev/null |
	awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
[ -n "$image" ] || die 2 "no linux-image-cloud-amd64 in '$SUITE'"
ver=${image#linux-image-}
pkg=$image
binary=linux-binary-$ver
apt-cache "${A[@]}" depends "$image" 2>/dev/null | grep -q "Depends: $binary\$" && pkg=$binary
rm -f "$ADIR"/deb/*.deb
(cd "$ADIR/deb" && timeout -k 5 300 apt-get "${A[@]}" download -q "$pkg" >"$ADIR/download.log" 2>&1 </dev/null) ||
	die 2 "apt-get download $pkg failed: $(grep -E '^(E:|Err:)' "$ADIR/download.log" | head -2 | tr '\n' ' ')"
deb=$(ls "$ADIR"/deb/*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || die 2 "apt-get download $pkg left no .deb"
x=$ADIR/x
rm -rf "$x"
dpkg -x "$deb" "$x" || die 1 "dpkg -x $deb failed"
# boot/vmlinuz-RELEASE, or usr/lib/modules/RELEASE/vmlinuz (linux-binary-*)
vmlinuz=$(ls "$x"/boot/vmlinuz-* "$x"/usr/lib/modules/*/vmlinuz 2>/dev/null | head -1)
[ -n "$vmlinuz" ] || die 1 "$deb holds no boot/vmlinuz-* nor usr/lib/modules/*/vmlinuz"
case $vmlinuz in
*/boot/vmlinuz-*) release=${vmlinuz##*/vmlinuz-} ;;
*) release=$(basename "$(dirname "$vmlinuz")") ;;
esac
debver=$(dpkg-deb -f "$deb" Version 2>/dev/null)
cp "$vmlinuz" "$KDIR/vmlinuz.new" && mv "$KDIR/vmlinuz.new" "$KDIR/vmlinuz"
cp "$x"/boot/config-* "$KDIR/config" 2>/dev/null || cp "$x"/usr/lib/modules/*/config "$KDIR/config" 2>/dev/null
rm -rf "$x" "$deb"
printf 'suite=%s\npackage=%s\nversion=%s\nrelease=%s\nfetched=%s\n' "$SUITE" "$pkg" \
	"$debver" "$release" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$KDIR/stamp"
echo "$KDIR/vmlinuz"
