#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/containers/suite.sh [check|bench] [SUITE]... - ptimer's CRIU plugin under
# container runtimes: runc, crun, podman, LXC, Docker and containerd (its CRI, as the
# kubelet drives it, and ctr) on criu 4.1.1 (trixie) and 4.2.1 (sid), in cached Debian roots of their own (test/criu/roots.sh ensure
# SUITE containers: the base build packages plus test/criu/roots.d/
# containers.pkgs).
#
# check (run by test/run.sh; PTIMER_SKIP_CONTAINERS=1 leaves it out): in each
#   root inner.sh builds the project and its .deb ('make deb'), installs it
#   with apt-get install ./build/ptimer_*.deb, and runs a static container
#   program holding five timers (zdtm_timers criu container) through
#   checkpoint and restore under each runtime (containerd's: cri.sh); then
#   the moves from trixie to sid: runc image directories, podman
#   --export/--import.  One host
#   directory, bound at /xfer into both roots, carries what moves.
# bench (test/bench.sh): "cbench: SUITE VERSION RUNTIME PHASE MODE MEDIAN
#   RUNS..." lines, runc checkpoint and restore times with and without the
#   plugin (test/containers/bench.sh reads them).
# A root that cannot be built, or a runtime that cannot run here, is a SKIP
# with the reason.  Reported through test/lib/harness.sh: the plan "1..N" (N
# roots), each root's own plan, checks and totals, "ok K containers-SUITE"
# after each, then the install checks (install.sh) and the totals last.
# Needs root.  Exit 1 when a check failed.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
roots=$top/test/criu/roots.sh
what=check
case "${1:-}" in check|bench) what=$1; shift ;; esac
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(trixie sid)
TIMEOUT=${PTIMER_CONTAINERS_TIMEOUT:-900}	# seconds per root
. "$top/test/lib/harness.sh"
. "$top/test/lib/host.sh"

if [ "$(id -u)" != 0 ]; then
	skip_suite containers "needs root (debootstrap, namespaces, criu)"
	totals containers
	exit 0
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-containers.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

ensure_roots "$TMP" containers "${suites[@]}"
pack_tree "$top" "$TMP/src.tar" || { fail containers/source "cannot pack the work tree"; totals containers; exit 1; }
# copies: editing the work tree during a run must not change the running one
cp -r "$here" "$TMP/scripts"
cp "$top/test/criu/hwbp-probe.c" "$top"/test/lib/*.sh "$TMP/scripts/"
cp -r "$top/test/cases" "$TMP/scripts/cases"
mkdir -p "$TMP/xfer"

mkdir -p "$TMP/xfer/debs"
plan "${#suites[@]}"
k=0
for s in "${suites[@]}"; do
	k=$((k + 1))
	f0=$H_FAIL
	if [ "${ROOT_RC[$s]}" != 0 ]; then
		why=$(grep -E 'roots.sh: ' "$TMP/root.$s.err" 2>/dev/null | tail -n 1 | cut -c1-300)
		fail "containers-$s" "cannot build the Debian root: ${why:-roots.sh ensure $s containers failed}"
		echo "not ok $k containers-$s"
		continue
	fi
	root=$("$roots" path "$s" containers)
	echo "# containers-$s: $(sed -n 's/^criu=//p' "$root/.ptimer-root") in $root"
	out=$TMP/$s.out
	# one run at a time in a root: its containers, cgroups and work
	# directory have fixed names
	exec 8>"$(dirname "$root")/.$(basename "$root").run.lock"
	flock 8
	timeout -s KILL "$TIMEOUT" "$top/test/criu/enter.sh" "$root" --pidns --pts --sys \
		--ro-bind "$TMP/src.tar:/ptimer-src.tar" --ro-bind "$TMP/scripts:/ptimer-ct" \
		--bind "$TMP/xfer:/xfer" ${PTIMER_CT_REUSE:+--env PTIMER_CT_REUSE=1} ${PTIMER_CT_CASES:+--env "PTIMER_CT_CASES=$PTIMER_CT_CASES"} -- \
		bash /ptimer-ct/inner.sh "$s" "$what" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	exec 8>&-
	tally "$out"
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
		[ "$rc" = 137 ] && rc="$rc (killed after ${TIMEOUT} s)"
		fail "containers-$s" "inner.sh exited $rc with no FAIL line"
	fi
	if [ "$H_FAIL" -eq "$f0" ]; then echo "ok $k containers-$s"; else echo "not ok $k containers-$s"; fi
done

# The install on Debian 12, 13 and sid: each root's .deb (inner.sh leaves
# it in /xfer/debs/SUITE), this host's when it is one of them (built from
# PTIMER_BUILD, default build/), and the README's from-source commands
# (PTIMER_INSTALL_SOURCE: the suites to build from source in, default
# trixie; "bookworm trixie sid" for all three).
if [ "$what" = check ] && [ -z "${PTIMER_SKIP_INSTALL:-}" ]; then
	host=$(. /etc/os-release 2>/dev/null; echo "${VERSION_CODENAME:-}")
	case "$host" in
	bookworm|trixie|sid)
		if [ ! -d "$TMP/xfer/debs/$host" ] &&
			make --no-print-directory -s -C "$top" B="${PTIMER_BUILD:-build}" deb >"$TMP/hostdeb.out" 2>&1; then
			mkdir -p "$TMP/xfer/debs/$host"
			cp "$(tail -n 1 "$TMP/hostdeb.out")" "$TMP/xfer/debs/$host/" 2>/dev/null ||
				cp "$top/$(tail -n 1 "$TMP/hostdeb.out")" "$TMP/xfer/debs/$host/"
			# built against a criu-plugin.h without CHECKPOINT_DEVICES
			# (Debian 12's criu 3.17): the package holds no plugin, as
			# `make install` says; the install check of it is a SKIP
			if ! dpkg-deb -c "$TMP/xfer/debs/$host"/ptimer_*.deb 2>/dev/null | grep -q 'usr/lib/criu/ptimer_plugin.so$'; then
				grep -h 'ptimer_plugin.so not installed' "$TMP/hostdeb.out" | head -n 1 |
					sed 's/^make install: //' >"$TMP/xfer/debs/$host/NO-PLUGIN"
				[ -s "$TMP/xfer/debs/$host/NO-PLUGIN" ] ||
					echo "ptimer_plugin.so not in the package built here" >"$TMP/xfer/debs/$host/NO-PLUGIN"
			fi
		fi ;;
	esac
	# run_install ARGS...: install.sh's lines shown and counted here
	run_install() {
		local rc
		bash "$here/install.sh" "$TMP/xfer/debs" "$@" 2>&1 | tee "$TMP/install.out"
		rc=${PIPESTATUS[0]}
		tally "$TMP/install.out"
		[ "$rc" -eq 0 ] || grep -q '^FAIL ' "$TMP/install.out" ||
			fail install "install.sh $* exited $rc with no FAIL line"
	}
	run_install deb bookworm trixie sid
	# shellcheck disable=SC2086
	run_install source ${PTIMER_INSTALL_SOURCE:-trixie}
fi
totals containers
