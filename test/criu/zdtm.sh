#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/criu/zdtm.sh [SUITE]...  - CRIU's own regression suite, zdtm, from the
# criu release of each root (trixie: 4.1.1, sid: 4.2.1; default both), run
# without and with ptimer_plugin.so, flavors h, ns and uns.  Run by `make
# check` through test/run.sh (PTIMER_SKIP_ZDTM=1 there leaves it out).
#
# For each suite, all cached under $PTIMER_ZDTM_CACHE (/var/cache/ptimer-test/zdtm):
# - the root SUITE-zdtm (roots.sh ensure SUITE zdtm: the base root plus
#   roots.d/zdtm.pkgs);
# - criu's source: Debian's orig tarball of the root's criu version, fetched
#   with `apt-get source --download-only` through a private apt configuration
#   (deb-src of the host's mirror; the host's apt is not changed), checked
#   against the SHA256 apt prints;
# - the tree, extracted once; zdtm-inner.sh builds the tests in it once.
# One suite after the other: zdtm.py mounts the named cgroup hierarchies
# zdtmtst and zdtmtst.defaultroot, which are the host's whatever the root,
# and unmounts them when it ends, under a lock file of its own tree only
# (test/zdtm_mount_cgroups); two runs at once can pull them from under each
# other.
#
# Verdicts, one line a test and flavor: PASS when the test gives the same
# result with and without the plugin (and, with it, the plugin dumped the
# test's tasks: it was loaded); FAIL when the results differ; SKIP when it
# fails both ways (criu's reason named) or zdtm does not run it.  A markdown
# table of all results goes to $PTIMER_ZDTM_TABLE when set, zdtm's output
# to the directory $PTIMER_ZDTM_LOGS.  ZDTM_TIMER_TESTS, ZDTM_OTHER_TESTS,
# ZDTM_FLAVORS (space-separated) narrow the run.
# Reported through test/lib/harness.sh: the plan "1..N" (N suites) first,
# "ok K zdtm-SUITE" after each suite's verdicts, totals last.
# Needs root.  Exit 1 when a check failed.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/test/lib/harness.sh"
. "$top/test/lib/host.sh"
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(trixie sid)
CACHE=${PTIMER_ZDTM_CACHE:-${PTIMER_TEST_CACHE:-/var/cache/ptimer-test}/zdtm}
# No zdtm.py run starts after PTIMER_ZDTM_BUDGET seconds (default 1500): the
# tests left are a SKIP each, so a slow machine cannot stretch `make check`
# without bound.  TIMEOUT kills a root's whole run.
BUDGET=${PTIMER_ZDTM_BUDGET:-1500}
TIMEOUT=${PTIMER_ZDTM_TIMEOUT:-$((BUDGET + 1200))}
POSIX_TIMER_TESTS=" posix_timers pthread_timers pthread_timers_h "

if [ "$(id -u)" != 0 ]; then
	skip_suite zdtm "needs root (debootstrap, namespaces, criu)"
	totals zdtm
	exit 0
fi

plan "${#suites[@]}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-zdtm.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP
mkdir -p "$CACHE"
t_start=$(date +%s)
. "$here/criu-src.sh"

# prepare SUITE: root, source, tree; sets TREE[SUITE], or FAILWHY[SUITE]
# when one of them could not be had (a FAIL: zdtm on SUITE would go untested).
declare -A TREE FAILWHY VER
prepare() {
	local s=$1 root debver up dir why=""
	if ! root=$("$here/roots.sh" ensure "$s" zdtm 2>"$TMP/root.$s.err"); then
		FAILWHY[$s]="cannot build the $s-zdtm root: $(grep 'roots.sh: ' "$TMP/root.$s.err" | tail -n 1 | cut -c1-300)"
		return
	fi
	if ! criu_src "$s" "$root" "$CACHE"; then
		FAILWHY[$s]="no criu $SRC_UP source: $why"
		return
	fi
	debver=$SRC_DEBVER up=$SRC_UP
	VER[$s]=$up
	# the tree, extracted once, under the same lock
	exec 8>"$CACHE/.$s.lock"
	flock 8
	dir=$CACHE/$s-$up
	if [ ! -d "$dir/criu-$up/test/zdtm" ]; then
		rm -rf "$dir.new" && mkdir -p "$dir.new" &&
			tar -C "$dir.new" -xf "$CACHE/criu_$up.orig.tar.xz" && rm -rf "$dir" && mv "$dir.new" "$dir"
	fi
	exec 8>&-
	if [ ! -d "$dir/criu-$up/test/zdtm" ]; then
		FAILWHY[$s]="criu_$up.orig.tar.xz has no test/zdtm"
		return
	fi
	TREE[$s]=$dir/criu-$up
	echo "# zdtm-$s: criu $debver, zdtm from $CACHE/criu_$up.orig.tar.xz, root $root"
}

for s in "${suites[@]}"; do
	prepare "$s"
done

# The project as in this work tree (as suite.sh packs it).
pack_tree "$top" "$TMP/src.tar" || { fail zdtm/source "cannot pack the work tree"; totals zdtm; exit 1; }
cp -r "$here" "$TMP/scripts"

envs=(--env "ZDTM_DEADLINE=$((t_start + BUDGET))")
for v in ZDTM_TIMER_TESTS ZDTM_OTHER_TESTS ZDTM_FLAVORS ZDTM_TIMEOUT CRIU_FAULT; do
	[ -n "${!v+set}" ] && envs+=(--env "$v=${!v}")
done
declare -A RCS
for s in "${suites[@]}"; do
	[ -n "${TREE[$s]:-}" ] || continue
	mkdir -p "$TMP/logs.$s"
	timeout -s KILL "$TIMEOUT" "$here/enter.sh" "$("$here/roots.sh" path "$s" zdtm)" --pidns --pts --sys \
		--bind "${TREE[$s]}:/zdtm-tree" --ro-bind "$TMP/src.tar:/ptimer-src.tar" \
		--ro-bind "$TMP/scripts:/ptimer-criu" --bind "$TMP/logs.$s:/zdtm-logs" "${envs[@]}" -- \
		bash /ptimer-criu/zdtm-inner.sh "$s" /zdtm-tree /ptimer-src.tar /ptimer-criu >"$TMP/$s.out" 2>&1
	RCS[$s]=$?
done

table=()
k=0
for s in "${suites[@]}"; do
	k=$((k + 1))
	f0=$H_FAIL
	if [ -z "${TREE[$s]:-}" ]; then
		fail "zdtm-$s" "${FAILWHY[$s]}"
		echo "not ok $k zdtm-$s"
		continue
	fi
	rc=${RCS[$s]}
	grep -E '^(# |PASS |FAIL |SKIP )' "$TMP/$s.out"
	tally "$TMP/$s.out"
	if [ -n "${PTIMER_ZDTM_LOGS:-}" ]; then
		mkdir -p "$PTIMER_ZDTM_LOGS/$s" && cp "$TMP/logs.$s"/* "$TMP/$s.out" "$PTIMER_ZDTM_LOGS/$s/" 2>/dev/null
	fi
	if ! grep -q '^R ' "$TMP/$s.out"; then
		[ "$rc" = 137 ] && rc="$rc (killed after $TIMEOUT s)"
		fail "zdtm-$s" "zdtm-inner.sh exited $rc with no result: $(tail -n 3 "$TMP/$s.out" | tr '\n' ' ' | cut -c1-300)"
		echo "not ok $k zdtm-$s"
		continue
	fi
	# one verdict a flavor and test
	while read -r fl t; do
		wo=$(awk -v f="$fl" -v t="$t" '$1 == "R" && $2 == "without" && $3 == f && $4 == t' "$TMP/$s.out")
		wi=$(awk -v f="$fl" -v t="$t" '$1 == "R" && $2 == "with" && $3 == f && $4 == t' "$TMP/$s.out")
		rwo=$(echo "$wo" | awk '{ print $5 }') rwi=$(echo "$wi" | awk '{ print $5 }')
		why=$(echo "$wo" | cut -d' ' -f6- | cut -c1-300)
		p=$(awk -v f="$fl" -v t="$t" '$1 == "P" && $2 == f && $3 == t { print $4, $5 }' "$TMP/$s.out")
		dumps=${p% *} timers=${p#* }
		name="zdtm-$s/$t/$fl"
		table+=("$t|$fl|${VER[$s]}|${rwo:-none}|${rwi:-none}")
		if [ -z "$rwo" ] || [ -z "$rwi" ]; then
			fail "$name" "missing result (without: '${rwo}', with: '${rwi}')"
		elif [ "$rwo" = budget ] || [ "$rwi" = budget ]; then
			skip "$name" "not run, over the time budget of $BUDGET s (PTIMER_ZDTM_BUDGET)"
		elif [ "$rwo" != "$rwi" ]; then
			fail "$name" "without the plugin $rwo, with it $rwi ($(echo "$wi" | cut -d' ' -f6- | cut -c1-700))"
		elif [ "$rwo" = skip ]; then
			skip "$name" "zdtm skips it: $why"
		elif [ "$rwo" = fail ]; then
			skip "$name" "fails without the plugin too (criu ${VER[$s]} here): $why"
		elif [ "${dumps:-0}" -eq 0 ]; then
			fail "$name" "passes both ways, but the plugin logged no dump in criu's dump.log (not loaded from test/plugins?)"
		elif [ "${POSIX_TIMER_TESTS/ $t /}" != "$POSIX_TIMER_TESTS" ] && [ "${timers:-0}" -eq 0 ]; then
			fail "$name" "passes both ways, but the plugin saved no POSIX timer in $dumps dumps"
		else
			pass "$name: passes with and without the plugin (plugin active in $dumps dumps, $timers POSIX timers saved)"
		fi
	done < <(awk '$1 == "R" && $2 == "without" { print $3, $4 }' "$TMP/$s.out")
	if [ "$H_FAIL" -eq "$f0" ]; then echo "ok $k zdtm-$s"; else echo "not ok $k zdtm-$s"; fi
done
if [ -n "${PTIMER_ZDTM_TABLE:-}" ]; then
	printf '%s\n' "${table[@]}" >"$PTIMER_ZDTM_TABLE"
fi
echo "# zdtm: $(( $(date +%s) - t_start )) s in all"
totals zdtm
