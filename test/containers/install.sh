#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/containers/install.sh DEBDIR [deb|source|all] [SUITE]...  - the
# README's install commands on Debian 12, 13 and sid (bookworm, trixie, sid
# by default), each in a root that holds only what a container host has:
# criu and runc (test/criu/roots.sh ensure SUITE host; roots.d/host.pkgs),
# no compiler, no make.
#
# deb:    apt-get install ./ptimer_*.deb with DEBDIR/SUITE/ptimer_*.deb (the
#         package 'make deb' built on that release), then the plugin is in
#         /usr/lib/criu, every library of it and of /usr/bin/ptimer resolves,
#         and `ptimer check` runs.
# source: the commands of the README block that follows the line
#         "<!-- install-from-source -->", run as written in the work tree's
#         sources; then the same checks.
# Every case runs in an overlay on the cached root (upper layer in a
# temporary directory), so the cached root stays as it was: a host with
# nothing of ptimer on it.  Downloaded packages are kept in
# /var/cache/ptimer-test/install-apt/SUITE.  A root that cannot be built is a
# SKIP with the reason.  Reported through test/lib/harness.sh: the plan
# "1..N" (N suites), "ok K install_case SUITE" after each, totals last.  Exit
# 1 when a check failed.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
roots=$top/test/criu/roots.sh
enter=$top/test/criu/enter.sh
DEBDIR=${1:?usage: install.sh DEBDIR [deb|source|all] [SUITE]...}
shift
what=all
case "${1:-}" in deb|source|all) what=$1; shift ;; esac
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(bookworm trixie sid)
APTCACHE=${PTIMER_TEST_CACHE:-/var/cache/ptimer-test}/install-apt
TO=${PTIMER_INSTALL_TIMEOUT:-1500}
H_PREFIX=install-
. "$top/test/lib/harness.sh"
. "$top/test/lib/host.sh"

secs() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }'; }

if [ "$(id -u)" != 0 ]; then
	H_PREFIX= skip_suite install "needs root (debootstrap, overlay mounts)"
	exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-install.XXXXXX")
cleanup() {
	local m
	for m in "$TMP"/*/merged; do
		mountpoint -q "$m" && umount -l "$m"
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# The README's from-source commands, as written.
SOURCE_CMDS=$(awk '/<!-- install-from-source -->/ { f = 1; next }
	f && /^```/ { if (++n == 2) exit; next }
	f && n == 1 { sub(/[ \t]+#.*/, ""); if ($0 != "") print }' "$top/README.md")
pack_tree "$top" "$TMP/src.tar"

# The checks after an install, inside the root: installed files, libraries,
# the command.
cat >"$TMP/verify.sh" <<'EOF'
set -u
p=/usr/lib/criu/ptimer_plugin.so
[ -f "$p" ] || { echo "no $p"; exit 1; }
[ -x /usr/bin/ptimer ] || { echo "no /usr/bin/ptimer"; exit 1; }
if ldd "$p" /usr/bin/ptimer | grep -q 'not found'; then
	echo "unresolved libraries: $(ldd "$p" /usr/bin/ptimer | grep 'not found' | tr '\n' ' ')"; exit 1
fi
ptimer check >/tmp/check.out 2>&1 || { echo "ptimer check failed: $(tr '\n' ' ' </tmp/check.out | cut -c1-200)"; exit 1; }
echo "ok: $(criu --version | awk '/^Version/ { print "criu " $2 }'), $(grep -c . /tmp/check.out) lines of ptimer check"
EOF

# inroot SUITE CASE CMD: CMD (sh -c) in a fresh overlay of the SUITE-host root.
inroot() {
	local s=$1 c=$2 cmd=$3 root d
	root=$("$roots" path "$s" host)
	d=$TMP/$s-$c
	mkdir -p "$d/upper" "$d/work" "$d/merged" "$APTCACHE/$s/partial"
	mount -t overlay overlay -o "lowerdir=$root,upperdir=$d/upper,workdir=$d/work" "$d/merged" || return 98
	# the package cache is shared: one case of a suite at a time, also
	# across concurrent runs (apt locks it and fails at once otherwise)
	exec 7>"$APTCACHE/.$s.lock"
	flock 7
	timeout -s KILL "$TO" "$enter" "$d/merged" --env DEBIAN_FRONTEND=noninteractive \
		--bind "$APTCACHE/$s:/var/cache/apt/archives" --ro-bind "$TMP:/t" --ro-bind "$DEBDIR:/debs" -- \
		sh -c "$cmd" >"$d/out" 2>&1
	local rc=$?
	exec 7>&-
	umount -l "$d/merged"
	return $rc
}

# install_case SUITE: the deb and the source install in the SUITE-host root.
install_case() {
	local s=$1 have deb t0 cmds
	if ! "$roots" ensure "$s" host >"$TMP/root.$s.out" 2>"$TMP/root.$s.err"; then
		fail "$s" "cannot build the $s-host root: $(grep 'roots.sh: ' "$TMP/root.$s.err" | tail -n 1 | cut -c1-300)"
		return
	fi
	have=$(chroot "$("$roots" path "$s" host)" sh -c 'for c in gcc cc make; do command -v $c; done' | tr '\n' ' ')
	[ -z "$have" ] || fail "$s/root" "the host root holds build tools: $have"
	if [ "$what" != source ]; then
		deb=$(ls "$DEBDIR/$s"/ptimer_*.deb 2>/dev/null | head -n1)
		if [ -z "$deb" ]; then
			skip "$s/deb" "no package built on $s in $DEBDIR/$s"
		elif [ -s "$DEBDIR/$s/NO-PLUGIN" ]; then
			skip "$s/deb" "the package built on $s has no plugin: $(head -c 300 "$DEBDIR/$s/NO-PLUGIN")"
		else
			t0=$EPOCHREALTIME
			if inroot "$s" deb "i() { apt-get install -y -q /debs/$s/$(basename "$deb"); }; { i || { apt-get update -q >/dev/null && i; }; } && sh /t/verify.sh"; then
				pass "$s/deb: apt-get install ./$(basename "$deb") ($(secs "$t0") s): $(tail -n 1 "$TMP/$s-deb/out")"
			else
				fail "$s/deb" "$(tail -n 4 "$TMP/$s-deb/out" | tr '\n' ' ' | cut -c1-400)"
			fi
		fi
	fi
	if [ "$what" != deb ]; then
		if [ -z "$SOURCE_CMDS" ]; then
			fail "$s/source" "no install commands after '<!-- install-from-source -->' in README.md"
			return
		fi
		t0=$EPOCHREALTIME
		cmds=$(printf '%s\n' "$SOURCE_CMDS" | paste -sd';' -)
		if inroot "$s" source "set -e; mkdir -p /src; cd /src; tar xf /t/src.tar; $cmds; sh /t/verify.sh"; then
			pass "$s/source: '$(printf '%s' "$cmds" | cut -c1-80)' ($(secs "$t0") s): $(tail -n 1 "$TMP/$s-source/out")"
		else
			fail "$s/source" "'$cmds': $(tail -n 4 "$TMP/$s-source/out" | tr '\n' ' ' | cut -c1-400)"
		fi
	fi
}

run_cases "${suites[@]/#/install_case:}"
totals install
