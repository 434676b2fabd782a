#!/usr/bin/env bash
# Smoke test of real criu on this kernel, in the cached Debian roots.
#
#   smoke.sh [SUITE]...      default: trixie sid
#
# For each suite: roots.sh ensure SUITE, then inside the root (enter.sh
# --pidns): criu check; build ptimers.c with the root's gcc; dump and restore
# a setsid'ed process with mixed timers (same pid, same /proc/PID/timers,
# same timer_gettime() intervals); the same as pid 1 of its own pid namespace
# (unshare -pf setsid -w); and restore wall times for SMOKE_SPARSE_N (2048)
# timers with IDs spaced SMOKE_SPARSE_STRIDE (512) apart, made with
# PR_TIMER_CREATE_RESTORE_IDS, restored SMOKE_RESTORE_REPS (3) times.
# Last line: "N passed, N failed"; exit status 0 when nothing failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { echo "smoke.sh: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root"
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(trixie sid)

pass=0 fail=0 times=()
for suite in "${suites[@]}"; do
	echo "# === $suite"
	if ! root=$("$here/roots.sh" ensure "$suite"); then
		echo "FAIL - $suite: roots.sh ensure $suite"
		fail=$((fail + 1))
		continue
	fi
	out=$(mktemp)
	set +e
	"$here/enter.sh" "$root" --pidns --pts --ro-bind "$here:/ptimer-criu" \
		--env SMOKE_SPARSE_N="${SMOKE_SPARSE_N:-2048}" \
		--env SMOKE_SPARSE_STRIDE="${SMOKE_SPARSE_STRIDE:-512}" \
		--env SMOKE_RESTORE_REPS="${SMOKE_RESTORE_REPS:-3}" \
		-- bash /ptimer-criu/smoke-inner.sh "$suite" /ptimer-criu 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	set -e
	summary=$(sed -n 's/^# totals \([0-9]* passed, [0-9]* failed\)$/\1/p' "$out" | tail -n 1)
	if [ -n "$summary" ]; then
		pass=$((pass + ${summary%% passed*}))
		f=${summary#*passed, }; fail=$((fail + ${f%% failed*}))
		[ "$rc" = 0 ] || [ "${f%% failed*}" != 0 ] || { echo "FAIL - $suite: inner run exited $rc"; fail=$((fail + 1)); }
	else
		echo "FAIL - $suite: inner run ended early (exit $rc)"
		fail=$((fail + 1))
	fi
	while IFS= read -r l; do times+=("$l"); done < <(grep '^time: ' "$out" || true)
	rm -f "$out"
done

echo "# === summary"
for t in "${times[@]}"; do echo "$t"; done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
