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
# A dump, failed or not, leaves its target exactly as it was: besides the
# above, each thread's syscall and registers (/proc/PID/task/TID/syscall),
# the timers' times, and what the target checks in itself on request: each
# thread's rseq registration and rseq_cs, exact-ID mode off, its queued
# signals in order (test/e2e/still_target.c, whose state stands still).
# Paths: dump of still_target (threads, a timer aimed at a thread, one at
# the leader, one on a thread's CPU clock, a pending expiry, signals
# blocked and queued); dump of zdtm_timers mix (timers firing all through
# the dump: maps, timers, tracer, stopped and times only); restore of mix
# in exact-ID and linear mode; restore of cpuclocks (timers on threads'
# CPU clocks) and of pending_timer (expiries queued at dump).
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

# state PID FILE [signals] [syscall]: what a failed run must leave as it
# was: maps, timers, and per thread its tracer and whether it is stopped (a
# run state of t or T); with "signals" its signal mask and pending signals
# too (a target whose timers fire changes those by itself, a handler's
# signal blocked while it runs); with "syscall" the syscall it is blocked in
# and its registers as /proc/PID/task/TID/syscall gives them (number, the
# six argument registers, sp, pc: a target whose threads all sit in one
# syscall; "running" is looked at again for up to 1 s, the time a thread a
# run let go may take to be back in it)
state() {
	local t w sc i
	{
		cat "/proc/$1/maps"
		cat "/proc/$1/timers"
		for t in /proc/"$1"/task/*; do
			echo "thread ${t##*/}"
			awk -v p=" ${*:3} " '/^State:/ { print "stopped:", ($2 == "t" || $2 == "T") }
				/^TracerPid:/ || (p ~ / signals / && /^(SigBlk|SigPnd|ShdPnd):/)' "$t/status"
			for w in "${@:3}"; do
				[ "$w" = syscall ] || continue
				for ((i = 0; i < 100; i++)); do
					sc=$(cat "$t/syscall")
					[ "$sc" = running ] || break
					sleep 0.01
				done
				echo "syscall: $sc"
			done
		done
	} >"$2" 2>/dev/null
}

# outcome LABEL N RC ERR LOG PID BEFORE [WHAT...]: RES "ok" (success), "clean" (a
# clean failure) or "harm" (a FAIL line said why).  A target that dies of
# what ptimer left in it may die a moment after ptimer exits: looked at
# after 50 ms.
outcome() {
	local label=$1 nth=$2 rc=$3 err=$4 log=$5 pid=$6 before=$7 what why=
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
		state "$pid" "$before.after" "${@:8}"
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

# report LABEL TRIED OK CLEAN HARM CALLS [STEP]: STEP > 1, N = 1, 1 + STEP, ...
report() {
	if [ "$5" -eq 0 ] && [ "$6" -gt 0 ] && [ "${7:-1}" -gt 1 ]; then
		pass "$1: $2 runs, each failing one call (N = 1, $((1 + $7)), $((1 + 2 * $7)) ... up to $6, then none): $3 succeeded, $4 failed clean; a whole run makes $6 calls"
	elif [ "$5" -eq 0 ] && [ "$6" -gt 0 ]; then
		pass "$1: $2 runs, each failing one call (N = 1..$(($2 - 1)), then none): $3 succeeded, $4 failed clean; a whole run makes $6 calls"
	elif [ "$6" -eq 0 ]; then
		fail "$1" "no run completed within N = $LIMIT ($3 succeeded, $4 failed clean, $5 harms)"
	else
		info "$1: $2 runs: $3 succeeded, $4 failed clean, $5 harmed"
	fi
}

# ---- dump -------------------------------------------------------------------------
# timing_of PID FILE: "ID IT_VALUE IT_INTERVAL" of each timer of PID, as
# the normal build's `ptimer dump` reads them (its image in FILE.img: paths
# run side by side).
timing_of() {
	local i=$2.img
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

# still_ask DIR: one answer of the dump's target (test/e2e/still_target:
# what only the process itself sees: each thread's rseq registration and
# rseq_cs, exact-ID mode, its queued signals in order) in ANSWER; status 1
# when none came within 5 s.  Both FIFOs opened read-write: no open blocks,
# whether the target is there or not.
still_ask() {
	ANSWER=
	printf c 1<>"$1/ask" && IFS= read -r -t 5 ANSWER 0<>"$1/answer"
}

# still_same DIR BASE: the target's answer now is BASE (its first); the
# answer in ANSWER either way.
still_same() {
	still_ask "$1" || ANSWER="no answer within 5 s"
	[ "$ANSWER" = "$2" ]
}

# still_oracle LABEL DIR PID THREADS: the still target's oracle sees what
# it is to compare: every thread blocked in a syscall, signals blocked and
# pending, rseq registered in every thread (else a SKIP of that part), the
# target's queue as queued; its first answer in BASE.  Status 1 (a FAIL
# said why) otherwise.
still_oracle() {
	state "$3" "$2/before" signals syscall
	still_ask "$2" || ANSWER="no answer within 5 s"
	base=$ANSWER
	case $base in
	"ok rseq=$4/$4 exact_ids="*" queue=5/5") ;;
	"ok rseq=0/0 "*) skip "$1/rseq" "glibc registered no rseq area in the target (__rseq_size 0): rseq registration and rseq_cs not compared" ;;
	*)
		fail "$1/oracle" "the target's first answer: $base"
		return 1 ;;
	esac
	case $base in
	*exact_ids=n/a*) skip "$1/exact-ids" "no prctl(PR_TIMER_CREATE_RESTORE_IDS) in this kernel (Linux 6.15+): exact-ID mode not compared" ;;
	esac
	if awk -v n="$4" '/^syscall: [0-9]+ / { sc++ } /^SigBlk:/ && $2 !~ /^0+$/ { blk++ }
		/^(SigPnd|ShdPnd):/ && $2 !~ /^0+$/ { pnd[$1] = 1 }
		END { exit !(sc == n && blk == n && ("SigPnd:" in pnd) && ("ShdPnd:" in pnd)) }' "$2/before"; then
		pass "$1/oracle: $4 threads, each blocked in a syscall with signals blocked, signals pending to a thread and to the process; the target: $base"
		return 0
	fi
	fail "$1/oracle" "the target's state is not what the oracle needs (every thread in a syscall, signals blocked, pending to a thread and to the process): $(grep -E '^(thread|syscall|Sig|Shd)' "$2/before" | tr '\n' ' ' | cut -c1-400)"
	return 1
}

# dump_campaign still|mix: `ptimer dump` of a live target failed at each N.
# still: test/e2e/still_target, whose state stands still while nobody
# touches it, so that all of it is compared after each run: state with
# signals and syscall, the timers' times (timing_kept) and the target's
# own answer (still_ask).  mix: zdtm_timers mix, whose periodic timers
# fire and run handlers all through the dump (signals queued while ptimer
# holds the threads, the look at a thread whose signal is queued
# already): its signals and registers move by themselves, so state
# without them, and the timers' times.
dump_campaign() {
	local label=$n/dump d=$TMP/fn-dump spid sjob k rc nth base what hurt ok=0 clean=0 harm=0 calls=0 sw=() step=1 tried=0
	if [ "$1" = mix ]; then
		# every call of the dump is failed on the still target; this
		# one adds timers that fire during it: every 4th N (make check's
		# time), PTIMER_FAIL_NTH_MIX_STEP=1 for all
		step=${PTIMER_FAIL_NTH_MIX_STEP:-4}
		label=$n/dump-mix d=$TMP/fn-dump-mix
		case_load mix
	else
		sw=(signals syscall)
		# drive_start's and drive_ready's program (test/lib/driver.sh)
		# shellcheck disable=SC2034
		CASE_PROG=still_target CASE_ARGS='' CASE_TAG=''
	fi
	mkdir -p "$d"
	drive_start setup "$d"
	sjob=$ROLE_PID
	drive_ready "$label" "$d" setup "$sjob" || return
	spid=$(cat "$d/setup.pid")
	nth=$(grep -c . "$d/setup.tids")
	[ "$1" = still ] && ! still_oracle "$label" "$d" "$spid" "$nth" && { reap "$spid" "$sjob"; return; }
	timing_of "$spid" "$d/timing.base" || { fail "$label/baseline" "ptimer dump of the target failed"; return; }
	t_base=$EPOCHREALTIME
	for ((k = 1; k <= LIMIT; k += step)); do
		tried=$((tried + 1))
		rm -rf "$d/img" "$d/log"
		mkdir -p "$d/img"
		state "$spid" "$d/before" "${sw[@]}"
		PTIMER_FAIL_NTH=$k PTIMER_FAIL_NTH_LOG=$d/log timeout -k 2 "$TO" "$FPT" dump -t "$spid" -D "$d/img" \
			>"$d/out" 2>"$d/err" </dev/null
		rc=$?
		if ! grep -q '^failed ' "$d/log" 2>/dev/null; then
			calls=$(sed -n 's/^calls //p' "$d/log")
			check "$label/complete" "the run that failed nothing: exit $rc: $(oneline "$d/err")" test "$rc" -eq 0
			sleep 0.05
			state "$spid" "$d/before.after" "${sw[@]}"
			check "$label/complete-untouched" "the target changed: $(diff "$d/before" "$d/before.after" | grep '^[<>]' | head -n 4 | tr '\n' ' ')" \
				cmp -s "$d/before" "$d/before.after"
			if [ "$1" = still ]; then
				still_same "$d" "$base"
				check "$label/complete-target-check" "the target finds: $ANSWER" test "$ANSWER" = "$base"
			fi
			break
		fi
		what=$(sed -n 's/^failed [0-9]* //p' "$d/log" | head -n 1)
		hurt=0
		outcome "$label" "$k" "$rc" "$d/err" "$d/log" "$spid" "$d/before" "${sw[@]}"
		case $RES in
		ok)
			# a success despite a failed call: an image of every timer
			state "$spid" "$d/before.after" "${sw[@]}"
			"$PT" show "$d/img" >"$d/show" 2>&1
			if [ "$(sed -n 's/^pid [0-9]*: \([0-9]*\) timers.*/\1/p' "$d/show")" != "$(grep -c '^ID:' "/proc/$spid/timers")" ]; then
				fail "$label/n$k" "exit 0 after a failed $what, but its image does not hold the target's $(grep -c '^ID:' "/proc/$spid/timers") timers: $(oneline "$d/show")"
				hurt=1
			elif ! cmp -s "$d/before" "$d/before.after"; then
				fail "$label/n$k" "exit 0 after a failed $what, but the target changed: $(diff "$d/before" "$d/before.after" | grep '^[<>]' | head -n 4 | tr '\n' ' ')"
				hurt=1
			fi ;;
		clean)
			if [ -n "$(ls "$d/img")" ]; then
				fail "$label/n$k" "a failed dump wrote $(ls "$d/img" | tr '\n' ' ')"
				hurt=1
			fi ;;
		harm) hurt=1 ;;
		esac
		alive "$spid" || { harm=$((harm + 1)); break; }
		# what only the target sees: rseq, exact-ID mode, its queue
		if [ "$1" = still ] && ! still_same "$d" "$base"; then
			fail "$label/n$k" "after a failed $what (exit $rc), the target finds: $ANSWER"
			hurt=1
		fi
		# the timers' times as they were, whatever the run did (the look
		# at a thread-aimed timer arms it for 1 ns and back)
		if ! timing_kept "$spid" "$d"; then
			fail "$label/n$k" "after a failed $what, the target's timers' times changed: $(oneline "$d/timing.why")"
			hurt=1
		fi
		if [ "$hurt" -ne 0 ]; then
			harm=$((harm + 1))
		elif [ "$RES" = ok ]; then
			ok=$((ok + 1))
		else
			clean=$((clean + 1))
		fi
	done
	alive "$spid" || fail "$label/target-alive" "the dumped process died at N = $k"
	reap "$spid" "$sjob"
	report "$label" "$tried" "$ok" "$clean" "$harm" "$calls" "$step"
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

run_path() {
	case $1 in
	dump) dump_campaign still ;;
	dump-mix) dump_campaign mix ;;
	restore-exact) restore_campaign "$1" mix --mode exact ;;
	restore-linear) restore_campaign "$1" mix --mode linear ;;
	restore-cpuclocks) restore_campaign "$1" cpuclocks ;;
	restore-pending) restore_campaign "$1" pending-expiry ;;
	esac
}

# PTIMER_FAIL_NTH_PATHS (while working on it): the paths to run.  The
# still target's dump, about half of all runs, goes beside the others
# (each path has a target and a directory of its own; each run is one
# process after another, one core): on two cores the campaign takes half
# the time.  PTIMER_FAIL_NTH_JOBS=1: one path after the other.
paths=${PTIMER_FAIL_NTH_PATHS:-dump dump-mix restore-exact restore-linear restore-cpuclocks restore-pending}
rest=$(echo " $paths " | sed 's/ dump / /')
if [ "${PTIMER_FAIL_NTH_JOBS:-2}" -gt 1 ] && [ "$(echo $rest)" != "$(echo $paths)" ] && [ -n "$(echo $rest)" ]; then
	(
		for p in $rest; do
			run_path "$p"
		done
	) >"$TMP/fn-beside.out" 2>&1 &
	beside=$!
	bg_add "$beside"
	run_path dump
	wait "$beside"
	cat "$TMP/fn-beside.out"
	tally "$TMP/fn-beside.out"
else
	for p in $paths; do
		run_path "$p"
	done
fi
totals
