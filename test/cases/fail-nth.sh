#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# fail-nth: every call of ptimer's own work failed in turn, as SQLite fails
# every allocation and I/O in turn.  The fault build ('make asan',
# lib/fault_nth.h) fails the N-th call it counts (each host-side syscall
# of the Makefile's FAULT_WRAP list, each syscall run in the target
# through the stub, each the in-target restorer makes itself but
# timer_delete of its own timers and exact-ID mode OFF, which cannot
# fail, and the restorer's close as one) with an errno that call can
# return.  For each path, N
# = 1, 2, ... until a run ends without reaching N; each N in a fresh run
# (a fresh target for a restore), and each must end either
#   - in success: a dump's image shows the target's timers, a restore's
#     target finds every timer as dumped (its own check), or
#   - exit status 1-123 with one line on stderr, and the target as it was
#     before: alive, not stopped, not traced, the same maps, timers and,
#     per thread, signal mask and pending signals (a dump: its image not
#     written; a restore: no timer left);
# never a hang (PTIMER_FAIL_NTH_S, 10 s) or a dead target.  One PASS line
# per path counts the N tried and how each ended; each harm is a FAIL.
# Paths: dump of zdtm_timers mix (threads, a timer aimed at a thread);
# restore of it in exact-ID and linear mode; restore of cpuclocks (timers
# on threads' CPU clocks) and of pending_timer (expiries queued at dump).
#
#   bash test/cases/fail-nth.sh BUILD
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

n=fail-nth
# the fault build is the sanitizer build: the campaign runs once, in the
# sanitizer stage of test/run.sh (test/e2e.sh BUILD-asan), where ASan and
# UBSan also watch every error path it takes
case $B in
*-asan) FPT=$B/ptimer ;;
*)
	info "$n: runs with the sanitizer build ('make asan'), in test/run.sh's sanitizer stage"
	exit 0 ;;
esac
[ -x "$FPT" ] || { fail "$n/setup" "$FPT is missing: 'make asan' builds the fault-injection ptimer"; exit 1; }
LIMIT=${PTIMER_FAIL_NTH_MAX:-2000}	# a path that never completes
TO=${PTIMER_FAIL_NTH_S:-10}

# state PID FILE [signals]: what a failed run must leave as it was: maps,
# timers, and per thread its tracer and whether it is stopped (a run state
# of t or T), with "signals" its signal mask and pending signals too (a
# target whose timers fire changes those by itself, a handler's signal
# blocked while it runs)
state() {
	local t
	{
		cat "/proc/$1/maps"
		cat "/proc/$1/timers"
		for t in /proc/"$1"/task/*; do
			echo "thread ${t##*/}"
			awk -v p="${3:-}" '/^State:/ { print "stopped:", ($2 == "t" || $2 == "T") }
				/^TracerPid:/ || (p != "" && /^(SigBlk|SigPnd|ShdPnd):/)' "$t/status"
		done
	} >"$2" 2>/dev/null
}

# outcome LABEL N RC ERR LOG PID BEFORE [signals]: RES "ok" (success), "clean" (a
# clean failure) or "harm" (a FAIL line said why).  A target that dies of
# what ptimer left in it may die a moment after ptimer exits: looked at
# after 50 ms.
outcome() {
	local label=$1 nth=$2 rc=$3 err=$4 log=$5 pid=$6 before=$7 pend=${8:-} what why=
	what=$(sed -n 's/^failed [0-9]* //p' "$log" | head -n 1)
	sleep 0.05
	if ! alive "$pid"; then
		why="the target died"
	elif [ "$rc" -ge 124 ]; then
		why="exit $rc (a hang or a crash)"
	elif [ "$rc" -ne 0 ] && [ "$(grep -cvE '^ptimer: (info|warning): ' "$err")" -ne 1 ]; then
		why="exit $rc with $(grep -cvE '^ptimer: (info|warning): ' "$err") lines on stderr besides information and warnings"
	fi
	if [ -z "$why" ] && [ "$rc" -ne 0 ]; then
		state "$pid" "$before.after" "$pend"
		cmp -s "$before" "$before.after" ||
			why="the target changed: $(diff "$before" "$before.after" | grep '^[<>]' | head -n 4 | tr '\n' ' ')"
	fi
	if [ -n "$why" ]; then
		fail "$label/n$nth" "$what failed: $why; stderr: $(oneline "$err" 200)"
		RES=harm
	elif [ "$rc" -eq 0 ]; then
		RES=ok
	else
		RES=clean
	fi
}

# tally LABEL TRIED OK CLEAN HARM CALLS
report() {
	if [ "$5" -eq 0 ] && [ "$6" -gt 0 ]; then
		pass "$1: $2 runs, each failing one call (N = 1..$(($2 - 1)), then none): $3 succeeded, $4 failed clean; a whole run makes $6 calls"
	elif [ "$6" -eq 0 ]; then
		fail "$1" "no run completed within N = $LIMIT ($3 succeeded, $4 failed clean, $5 harms)"
	else
		info "$1: $2 runs: $3 succeeded, $4 failed clean, $5 harmed"
	fi
}

# ---- dump -------------------------------------------------------------------------
# timing_of PID FILE: "ID IT_VALUE IT_INTERVAL" of each timer of PID, as
# the normal build's `ptimer dump` reads them.
timing_of() {
	local i=$TMP/timing.img
	rm -rf "$i"
	mkdir -p "$i"
	"$PT" dump -q -t "$1" -D "$i" >/dev/null 2>&1 || return 1
	"$PT" show "$i"/ptimers-*.img 2>/dev/null | awk '$1 ~ /^[0-9]+$/ { for (f = 2; f < NF; f++) if ($f ~ /^0x/) { print $1, $(f + 1), $(f + 2); break } }' >"$2"
}

# timing_kept PID DIR: the timers' times now against DIR/timing.base (read
# at t_base): each interval the same; a one-shot timer disarmed as it was,
# or armed with no more left than then and no less than then less the
# time since (2 s of slack; a CPU clock moves slower); why in DIR/timing.why.
timing_kept() {
	timing_of "$1" "$2/timing.now" || { echo "ptimer dump of the target failed" >"$2/timing.why"; return 1; }
	awk -v el="$(awk -v a="$t_base" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')" '
		NR == FNR { v[$1] = $2; iv[$1] = $3; next }
		{
			if (!($1 in v)) { printf "timer %s is new; ", $1; bad = 1; next }
			seen[$1] = 1
			if ($3 != iv[$1]) { printf "timer %s: interval %s, was %s; ", $1, $3, iv[$1]; bad = 1 }
			else if ($3 + 0 == 0 && (($2 + 0 == 0) != (v[$1] + 0 == 0) || $2 > v[$1] + 0.01 || $2 < v[$1] - el - 2)) {
				printf "timer %s: %s s left, was %s s %.1f s ago; ", $1, $2, v[$1], el; bad = 1
			}
		}
		END { for (id in v) if (!(id in seen)) { printf "timer %s is gone; ", id; bad = 1 }; exit bad }
	' "$2/timing.base" "$2/timing.now" >"$2/timing.why"
}

dump_campaign() {
	local label=$n/dump d=$TMP/fn-dump spid sjob k rc ok=0 clean=0 harm=0 calls=0
	mkdir -p "$d"
	case_load mix
	drive_start setup "$d"
	sjob=$ROLE_PID
	drive_ready "$label" "$d" setup "$sjob" || return
	spid=$(cat "$d/setup.pid")
	timing_of "$spid" "$d/timing.base" || { fail "$label/baseline" "ptimer dump of the target failed"; return; }
	t_base=$EPOCHREALTIME
	for ((k = 1; k <= LIMIT; k++)); do
		rm -rf "$d/img" "$d/log"
		mkdir -p "$d/img"
		state "$spid" "$d/before"
		PTIMER_FAIL_NTH=$k PTIMER_FAIL_NTH_LOG=$d/log timeout -k 2 "$TO" "$FPT" dump -t "$spid" -D "$d/img" \
			>"$d/out" 2>"$d/err" </dev/null
		rc=$?
		# the timers' times as they were, whatever the run did (the look
		# at a thread-aimed timer arms it for 1 ns and back)
		if alive "$spid" && grep -q '^failed ' "$d/log" 2>/dev/null && ! timing_kept "$spid" "$d"; then
			fail "$label/n$k" "after a failed $(sed -n 's/^failed [0-9]* //p' "$d/log"), the target's timers' times changed: $(oneline "$d/timing.why")"
			harm=$((harm + 1))
		fi
		if ! grep -q '^failed ' "$d/log" 2>/dev/null; then
			calls=$(sed -n 's/^calls //p' "$d/log")
			check "$label/complete" "the run that failed nothing: exit $rc: $(oneline "$d/err")" test "$rc" -eq 0
			break
		fi
		outcome "$label" "$k" "$rc" "$d/err" "$d/log" "$spid" "$d/before"
		case $RES in
		ok)
			# a success despite a failed call: an image of every timer
			state "$spid" "$d/before.after"
			"$PT" show "$d/img" >"$d/show" 2>&1
			if [ "$(sed -n 's/^pid [0-9]*: \([0-9]*\) timers.*/\1/p' "$d/show")" != "$(grep -c '^ID:' "/proc/$spid/timers")" ]; then
				fail "$label/n$k" "exit 0 after a failed $(sed -n 's/^failed [0-9]* //p' "$d/log"), but its image does not hold the target's $(grep -c '^ID:' "/proc/$spid/timers") timers: $(oneline "$d/show")"
				harm=$((harm + 1))
			elif ! cmp -s "$d/before" "$d/before.after"; then
				fail "$label/n$k" "exit 0 after a failed $(sed -n 's/^failed [0-9]* //p' "$d/log"), but the target changed: $(diff "$d/before" "$d/before.after" | grep '^[<>]' | head -n 4 | tr '\n' ' ')"
				harm=$((harm + 1))
			else
				ok=$((ok + 1))
			fi ;;
		clean)
			if [ -n "$(ls "$d/img")" ]; then
				fail "$label/n$k" "a failed dump wrote $(ls "$d/img" | tr '\n' ' ')"
				harm=$((harm + 1))
			else
				clean=$((clean + 1))
			fi ;;
		harm) harm=$((harm + 1)) ;;
		esac
		alive "$spid" || break
	done
	alive "$spid" || fail "$label/target-alive" "the dumped process died at N = $k"
	reap "$spid" "$sjob"
	report "$label" "$k" "$ok" "$clean" "$harm" "$calls"
}

# ---- restore ----------------------------------------------------------------------
# restore_campaign LABEL CASE [OPTION...]: an image of CASE (its setup role,
# dumped by the normal build), then per N its verify role restored by the
# fault build with OPTIONs
restore_campaign() {
	local label=$n/$1 c=$2 d=$TMP/fn-$1 spid sjob vpid vjob k rc map ok=0 clean=0 harm=0 calls=0
	shift 2
	mkdir -p "$d"
	case_load "$c"
	drive_start "$CASE_SETUP" "$d"
	sjob=$ROLE_PID
	drive_ready "$label" "$d" "$CASE_SETUP" "$sjob" || return
	spid=$(cat "$d/$CASE_SETUP.pid")
	ptimer_run "$d/dump.out" 60 dump -t "$spid" -D "$d"
	reap "$spid" "$sjob"
	if [ "$PT_RC" -ne 0 ]; then
		fail "$label/dump" "ptimer dump: exit $PT_RC: $(oneline "$d/dump.out.err")"
		return
	fi
	for ((k = 1; k <= LIMIT; k++)); do
		rm -f "$d/log" "$d/restored" "$d/$CASE_VERIFY.ready"
		drive_start "$CASE_VERIFY" "$d" "$H_PREFIX$label"
		vjob=$ROLE_PID
		drive_ready "$label" "$d" "$CASE_VERIFY" "$vjob" || return
		vpid=$(cat "$d/$CASE_VERIFY.pid")
		map=$(tidmap "$d" "$CASE_SETUP" "$CASE_VERIFY")
		state "$vpid" "$d/before" signals
		# shellcheck disable=SC2086
		PTIMER_FAIL_NTH=$k PTIMER_FAIL_NTH_LOG=$d/log timeout -k 2 "$TO" "$FPT" restore -t "$vpid" -D "$d" "$@" $map \
			>"$d/out" 2>"$d/err" </dev/null
		rc=$?
		if ! grep -q '^failed ' "$d/log" 2>/dev/null; then
			calls=$(sed -n 's/^calls //p' "$d/log")
			check "$label/complete" "the run that failed nothing: exit $rc: $(oneline "$d/err")" test "$rc" -eq 0
			finish_verify "$d" "$vjob" "$CASE_VERIFY" "$label/complete" "$CASE_TAG"
			break
		fi
		outcome "$label" "$k" "$rc" "$d/err" "$d/log" "$vpid" "$d/before" signals
		case $RES in
		ok)
			# a success despite a failed call: every timer as dumped
			touch "$d/restored"
			wait_pid_max "$vjob" 30
			if [ "$WAIT_RC" -ne 0 ] || grep -q '^FAIL ' "$d/$CASE_VERIFY.out"; then
				fail "$label/n$k" "exit 0 after a failed $(sed -n 's/^failed [0-9]* //p' "$d/log"), but the target's check: exit $WAIT_RC, $(grep '^FAIL ' "$d/$CASE_VERIFY.out" | head -n 2 | tr '\n' ' ')"
				harm=$((harm + 1))
			else
				ok=$((ok + 1))
			fi ;;
		clean)
			if [ -s "/proc/$vpid/timers" ]; then
				fail "$label/n$k" "a failed restore left timers $(ids_of_proc "/proc/$vpid/timers")"
				harm=$((harm + 1))
			else
				clean=$((clean + 1))
			fi ;;
		harm) harm=$((harm + 1)) ;;
		esac
		reap "$vpid" "$vjob"
	done
	report "$label" "$k" "$ok" "$clean" "$harm" "$calls"
}

# PTIMER_FAIL_NTH_PATHS (while working on it): the paths to run
paths=${PTIMER_FAIL_NTH_PATHS:-dump restore-exact restore-linear restore-cpuclocks restore-pending}
for p in $paths; do
	case $p in
	dump) dump_campaign ;;
	restore-exact) restore_campaign "$p" mix --mode exact ;;
	restore-linear) restore_campaign "$p" mix --mode linear ;;
	restore-cpuclocks) restore_campaign "$p" cpuclocks ;;
	restore-pending) restore_campaign "$p" pending-expiry ;;
	esac
done
totals
