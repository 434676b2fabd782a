#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/criu/suite.sh [check|bench] [SUITE]...  - ptimer's CRIU plugin against
# real criu: trixie (Debian 13, criu 4.1.1) and sid (criu 4.2.1) by default.
#
# For each suite: the cached Debian root (roots.sh ensure; both built in
# parallel the first time, about 3 minutes), then inside it (enter.sh
# --pidns) suite-inner.sh: the project, taken from this work tree (tracked
# and untracked-but-not-ignored files), is built with `make deps && make &&
# make install DESTDIR=/tmp/inst PREFIX=/usr`, and the zdtm-style scenarios go
# through real `criu dump` + `criu restore --libdir /tmp/inst/usr/lib/criu`.
#
# check (default, run by test/run.sh): the plan "1..N" (N suites), one
#   PASS/FAIL/SKIP line a check (each suite's own plan, "ok K CASE" lines and
#   totals among them), "ok K criu-SUITE" after each suite, and the totals
#   last.  A root that cannot be built (no network, ...) gives a SKIP with
#   the reason.
# bench (test/bench.sh): "bench: SUITE VERSION CASE MODE MEDIAN RUNS..."
#   lines, criu restore wall times of the sparse sets with and without the
#   plugin.
# Needs root.  Exit 1 when a check failed.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
what=check
case "${1:-}" in check|bench) what=$1; shift ;; esac
suites=("$@")
# criu-dev: CRIU's criu-dev branch (../shared/vendor), built in a sid root
# with its build packages (roots.d/criu-dev.pkgs) by criu-build.sh, cached
# in $PTIMER_CRIU_DEV_CACHE; the plugin is built against its criu-plugin.h.
# Not in bench runs (the releases are what users run).
if [ ${#suites[@]} -eq 0 ]; then
	suites=(trixie sid)
	[ "$what" = check ] && suites+=(criu-dev)
fi
# the snapshot: beside the checkout (../shared/vendor), else the workplace's
CRIU_DEV_TAR=${PTIMER_CRIU_DEV_TAR:-$(ls "$top"/../shared/vendor/criu-dev-*.tar.xz /work/shared/vendor/criu-dev-*.tar.xz \
	2>/dev/null | head -n 1)}
CRIU_DEV_CACHE=${PTIMER_CRIU_DEV_CACHE:-${PTIMER_TEST_CACHE:-/var/cache/ptimer-test}/criu-dev}
TIMEOUT=${PTIMER_CRIU_SUITE_TIMEOUT:-900}	# seconds per suite, inside the root
[ "$what" = bench ] && TIMEOUT=${PTIMER_CRIU_SUITE_TIMEOUT:-2400}	# the trees take long on a busy machine
. "$top/test/lib/harness.sh"
. "$top/test/lib/host.sh"

if [ "$(id -u)" != 0 ]; then
	skip_suite criu "needs root (debootstrap, namespaces, criu)"
	totals criu
	exit 0
fi
# debootstrap: test/criu/roots.sh installs it when missing ('make deps' does too)
for t in unshare flock tar; do
	if ! command -v "$t" >/dev/null; then
		fail criu "no '$t' on this machine: 'make deps' installs it"
		totals criu
		exit 1
	fi
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-criu.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

plain=()
for s in "${suites[@]}"; do [ "$s" = criu-dev ] || plain+=("$s"); done
ensure_roots "$TMP" "" "${plain[@]}"
# criu-dev's root: sid with criu's build packages; then criu-dev built in it
CRIU_DEV_WHY=
if printf '%s\n' "${suites[@]}" | grep -qx criu-dev; then
	if [ -z "$CRIU_DEV_TAR" ] || [ ! -f "$CRIU_DEV_TAR" ]; then
		CRIU_DEV_WHY="no criu-dev snapshot (PTIMER_CRIU_DEV_TAR, ../shared/vendor/criu-dev-*.tar.xz)"
	elif ! "$here/roots.sh" check sid criu-dev 2>/dev/null &&
		{ echo "# building the sid-criu-dev root (cached in $("$here/roots.sh" path sid criu-dev); a few minutes)"
		  ! "$here/roots.sh" ensure sid criu-dev >"$TMP/root.criu-dev.out" 2>"$TMP/root.criu-dev.err"; }; then
		CRIU_DEV_WHY="cannot build the sid-criu-dev root: $(grep 'roots.sh: ' "$TMP/root.criu-dev.err" | tail -n 1 | cut -c1-300)"
	else
		mkdir -p "$CRIU_DEV_CACHE"
		echo "# criu-dev: building $(basename "$CRIU_DEV_TAR") in the sid-criu-dev root (once; cached in $CRIU_DEV_CACHE)"
		if CRIU_DEV_BIN=$(timeout -s KILL 1800 "$here/enter.sh" "$("$here/roots.sh" path sid criu-dev)" \
			--bind "$CRIU_DEV_CACHE:/criu-dev" --ro-bind "$CRIU_DEV_TAR:/criu-dev.tar.xz" \
			--ro-bind "$here/criu-build.sh:/criu-build.sh" -- bash /criu-build.sh /criu-dev.tar.xz /criu-dev \
			2>"$TMP/criu-dev.err"); then
			ROOT_RC[criu-dev]=0
		else
			CRIU_DEV_WHY="$(tail -n 1 "$TMP/criu-dev.err" | cut -c1-300)"
		fi
	fi
	[ -n "$CRIU_DEV_WHY" ] && ROOT_RC[criu-dev]=1
fi

# criu's own GPU plugins (case gpu-plugins): those of each suite's criu,
# built from its source by criu-build.sh in a root with criu's build
# packages (SUITE-criu-dev) and cached: for trixie and sid Debian's orig
# tarball of the root's criu (criu-src.sh), in $GPU_CACHE/SUITE; for
# criu-dev its snapshot, beside its criu.  The suite's root gets them at
# /gpu-plugins (PTIMER_GPU_PLUGINS), or PTIMER_GPU_WHY says why not.
GPU_CACHE=${PTIMER_GPU_CACHE:-${PTIMER_TEST_CACHE:-/var/cache/ptimer-test}/criu-build}
SRC_CACHE=${PTIMER_ZDTM_CACHE:-${PTIMER_TEST_CACHE:-/var/cache/ptimer-test}/zdtm}
. "$here/criu-src.sh"
declare -A GPU_DIR GPU_WHY
# gpu_build SUITE TARBALL CACHE: GPU_DIR[SUITE] (CACHE/NAME/plugins) or GPU_WHY[SUITE]
gpu_build() {
	local s=$1 base=$1 bin
	[ "$s" = criu-dev ] && base=sid
	if ! "$here/roots.sh" check "$base" criu-dev 2>/dev/null &&
		{ echo "# building the $base-criu-dev root (cached in $("$here/roots.sh" path "$base" criu-dev); a few minutes)"
		  ! "$here/roots.sh" ensure "$base" criu-dev >/dev/null 2>"$TMP/root.gpu-$s.err"; }; then
		GPU_WHY[$s]="cannot build the $base-criu-dev root: $(grep 'roots.sh: ' "$TMP/root.gpu-$s.err" | tail -n 1 | cut -c1-300)"
		return
	fi
	mkdir -p "$3"
	if bin=$(timeout -s KILL 1800 "$here/enter.sh" "$("$here/roots.sh" path "$base" criu-dev)" \
		--bind "$3:/criu-build" --ro-bind "$2:/criu.tar.xz" --ro-bind "$here/criu-build.sh:/criu-build.sh" -- \
		bash /criu-build.sh /criu.tar.xz /criu-build plugins 2>"$TMP/gpu-$s.err"); then
		GPU_DIR[$s]=$3/${bin#/criu-build/}
		GPU_DIR[$s]=${GPU_DIR[$s]%/criu/criu}/plugins
	else
		GPU_WHY[$s]="$(tail -n 1 "$TMP/gpu-$s.err" | cut -c1-300)"
	fi
}
gpu_plugins() {
	local s=$1 why=
	if [ "$s" = criu-dev ]; then
		gpu_build criu-dev "$CRIU_DEV_TAR" "$CRIU_DEV_CACHE"
		return
	fi
	if ! criu_src "$s" "$("$here/roots.sh" path "$s")" "$SRC_CACHE"; then
		GPU_WHY[$s]="no source of criu $SRC_DEBVER: $why"
		return
	fi
	echo "# criu-$s: building criu $SRC_UP's GPU plugins from Debian's source (once; cached in $GPU_CACHE/$s)"
	gpu_build "$s" "$SRC_TAR" "$GPU_CACHE/$s"
}
if [ "$what" = check ] && { [ -z "${PTIMER_CRIU_CASES:-}" ] || [[ " $PTIMER_CRIU_CASES " == *gpu-plugins* ]]; }; then
	for s in "${suites[@]}"; do
		[ "${ROOT_RC[$s]}" = 0 ] && gpu_plugins "$s"
	done
fi
pack_tree "$top" "$TMP/src.tar" || { fail criu/source "cannot pack the work tree"; totals criu; exit 1; }

# A copy of test/criu, test/lib (the harness, the case driver and its criu
# flavours) and test/cases: bash reads scripts as it runs them, so editing
# the work tree during a run must not change the running one.
cp -r "$here" "$TMP/criu-scripts"
cp "$top"/test/lib/*.sh "$TMP/criu-scripts/"
cp -r "$top/test/cases" "$TMP/criu-scripts/cases"

plan "${#suites[@]}"
k=0
for s in "${suites[@]}"; do
	k=$((k + 1))
	f0=$H_FAIL
	if [ "${ROOT_RC[$s]}" != 0 ]; then
		why=$(grep -E 'roots.sh: ' "$TMP/root.$s.err" 2>/dev/null | tail -n 1 | cut -c1-300)
		[ "$s" = criu-dev ] && why=$CRIU_DEV_WHY
		# not a SKIP: the suite needs the root, and criu $s would go untested
		fail "criu-$s" "cannot build the Debian root: ${why:-roots.sh ensure $s failed}"
		echo "not ok $k criu-$s"
		continue
	fi
	devargs=()
	if [ -n "${GPU_DIR[$s]:-}" ]; then
		devargs+=(--ro-bind "${GPU_DIR[$s]}:/gpu-plugins" --env PTIMER_GPU_PLUGINS=/gpu-plugins)
	elif [ -n "${GPU_WHY[$s]:-}" ]; then
		devargs+=(--env "PTIMER_GPU_WHY=${GPU_WHY[$s]}")
	fi
	if [ "$s" = criu-dev ]; then
		root=$("$here/roots.sh" path sid criu-dev)
		devargs+=(--ro-bind "$CRIU_DEV_CACHE:/criu-dev" --env "PTIMER_CRIU_DEV=${CRIU_DEV_BIN#/criu-dev/}")
		echo "# criu-$s: $(basename "$CRIU_DEV_TAR" .tar.xz) built in $root"
	else
		root=$("$here/roots.sh" path "$s")
		echo "# criu-$s: $(sed -n 's/^criu=//p' "$root/.ptimer-root") in $root"
	fi
	out=$TMP/$s.out
	timeout -s KILL "$TIMEOUT" "$here/enter.sh" "$root" --pidns --pts "${devargs[@]}" \
		--ro-bind "$TMP/src.tar:/ptimer-src.tar" --ro-bind "$TMP/criu-scripts:/ptimer-criu" \
		${PTIMER_BENCH_RUNS:+--env PTIMER_BENCH_RUNS=$PTIMER_BENCH_RUNS} \
		${PTIMER_BENCH_RUNS_SMALL:+--env PTIMER_BENCH_RUNS_SMALL=$PTIMER_BENCH_RUNS_SMALL} \
		${PTIMER_BENCH_TREE_RUNS:+--env PTIMER_BENCH_TREE_RUNS=$PTIMER_BENCH_TREE_RUNS} \
		${PTIMER_BENCH_SETS:+--env "PTIMER_BENCH_SETS=$PTIMER_BENCH_SETS"} \
		${PTIMER_CRIU_CASES:+--env "PTIMER_CRIU_CASES=$PTIMER_CRIU_CASES"} -- \
		bash /ptimer-criu/suite-inner.sh "$s" /ptimer-src.tar /ptimer-criu "$what" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	tally "$out"
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
		[ "$rc" = 137 ] && rc="$rc (killed after ${TIMEOUT} s)"
		fail "criu-$s" "suite-inner.sh exited $rc with no FAIL line"
	fi
	if [ "$H_FAIL" -eq "$f0" ]; then echo "ok $k criu-$s"; else echo "not ok $k criu-$s"; fi
done
totals criu
