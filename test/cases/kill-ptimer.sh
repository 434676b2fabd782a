#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# kill-ptimer: SIGKILL of ptimer at random moments of a dump and of a
# restore must never kill or stop the target (ptimer's code ends in the
# thread's own context when its tracer is gone: restorer/abi.h).  After each
# kill: the target is alive and not stopped, its timers are as before (dump)
# or as before or complete (restore), and the next ptimer run removes what
# the killed one left (mapping, stub): at the end /proc/PID/maps is as at
# the start, and a last dump or restore succeeds.
#
# 20 kills of `ptimer dump` of a process with 3000 timers, at delays spread
# over one dump's duration; 20 kills of `ptimer restore --mode linear` of
# three sparse IDs (200001 create/delete pairs: four budgeted runs) into fresh
# targets, each followed by a `ptimer dump` that must clean up: a restore
# killed between its runs leaves its first timers, which that dump removes
# with a line saying so; with the exact-ID prctl a retry into the same
# process then restores every timer.
# PTIMER_KILLS=N changes the 20.
#
#   bash test/cases/kill-ptimer.sh BUILD
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/test/lib/harness.sh"
. "$TOP/test/e2e/lib.sh"

IDLE=$B/test/idle_timers
KILLS=${PTIMER_KILLS:-20}
[ -x "$IDLE" ] || { fail kill-ptimer/setup "$IDLE is missing: run 'make tests'"; exit 1; }

# ms_of CMD...: wall time of CMD in ms.
ms_of() {
	local t0 t1
	t0=$(now)
	"$@" >/dev/null 2>&1
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", (b - a) * 1000 + 1 }'
}

# kill_at_random SPAN_MS ARGS...: run ptimer ARGS, SIGKILL it after a random
# delay in [0, SPAN_MS] ms.
kill_at_random() {
	local span=$1 d
	shift
	d=$(awk -v r="$RANDOM" -v s="$span" 'BEGIN { printf "%.4f", r / 32767 * s / 1000 }')
	"$PT" "$@" >/dev/null 2>>"$TMP/killed.err" </dev/null &
	local k=$!
	sleep "$d"
	kill -KILL "$k" 2>/dev/null
	wait "$k" 2>/dev/null
}

# target_ok NAME PID: alive, not stopped.
target_ok() {
	local why
	if ! alive "$2"; then
		fail "$1" "process $2 died: $(oneline "$TMP/killed.err" 300)"
		return 1
	fi
	# ptrace detaches the dead tracer's tracees at once; allow the scheduler a moment
	if ! wait_until 20 not_stopped "$2" >/dev/null; then
		why=$(not_stopped "$2")
		fail "$1" "$why"
		return 1
	fi
	return 0
}

# ---- dump --------------------------------------------------------------------
d=$TMP/dump
start_idle leader "$d/src" 3000 || { fail kill-ptimer/dump/setup "$(oneline "$d/src/out")"; exit 1; }
src=$IDLE_PID
cat "/proc/$src/maps" >"$d/maps0"
ids0=$(ids_of_proc "/proc/$src/timers")
span=$(ms_of "$PT" dump -t "$src" -D "$d")
info "kill-ptimer: one dump of 3002 timers takes ${span} ms; $KILLS kills spread over $((span * 3 / 2)) ms"
bad=0
for ((i = 1; i <= KILLS; i++)); do
	kill_at_random $((span * 3 / 2)) dump -t "$src" -D "$d"
	target_ok "kill-ptimer/dump/kill$i" "$src" || { bad=1; break; }
	ids=$(ids_of_proc "/proc/$src/timers")
	[ "$ids" = "$ids0" ] || { fail "kill-ptimer/dump/kill$i-timers" "timer IDs changed"; bad=1; break; }
done
[ "$bad" = 0 ] && pass "kill-ptimer/dump/$KILLS-kills-target-runs"
ptimer_run "$d/last.out" 60 dump -t "$src" -D "$d"
check kill-ptimer/dump/next-run "exit $PT_RC: $(oneline "$d/last.out.err")" test "$PT_RC" = 0
cat "/proc/$src/maps" >"$d/maps1"
if cmp -s "$d/maps0" "$d/maps1"; then
	pass kill-ptimer/dump/maps-cleaned
else
	fail kill-ptimer/dump/maps-cleaned "$(diff "$d/maps0" "$d/maps1" | grep '^[<>]' | head -3 | tr '\n' ' ')"
fi
grep -h 'left by a ptimer that was killed' "$TMP/killed.err" "$d/last.out.err" 2>/dev/null | sed 's/process [0-9]*/process P/; s/0x[0-9a-f]*/ADDR/g' | sort | uniq -c | sed 's/^/# /'
reap "$src"

# ---- restore -----------------------------------------------------------------
d=$TMP/restore
mkdir -p "$d"
cat >"$d/img.json" <<'JSON'
{ "pid": 4242, "timers": [
  { "id": 0, "clock_id": 1, "sigev_notify": 1, "signo": 0, "sival": 0, "notify_tid": 4242,
    "it_value": { "sec": 1000, "nsec": 0 }, "it_interval": { "sec": 0, "nsec": 0 }, "overrun": 0 },
  { "id": 100000, "clock_id": 1, "sigev_notify": 1, "signo": 0, "sival": 0, "notify_tid": 4242,
    "it_value": { "sec": 0, "nsec": 0 }, "it_interval": { "sec": 0, "nsec": 0 }, "overrun": 0 },
  { "id": 200000, "clock_id": 0, "sigev_notify": 1, "signo": 0, "sival": 0, "notify_tid": 4242,
    "it_value": { "sec": 500, "nsec": 0 }, "it_interval": { "sec": 5, "nsec": 0 }, "overrun": 0 } ] }
JSON
ptimer_run "$d/encode.out" 30 encode -i "$d/img.json" -o "$d/ptimers-4242.img"
[ "$PT_RC" = 0 ] || { fail kill-ptimer/restore/encode "$(oneline "$d/encode.out.err")"; totals; exit; }
start_idle leader "$d/probe" none || { fail kill-ptimer/restore/setup "$(oneline "$d/probe/out")"; totals; exit; }
span=$(ms_of "$PT" restore -t "$IDLE_PID" -D "$d" --image-pid 4242 --mode linear)
reap "$IDLE_PID"
info "kill-ptimer: one linear restore of 200001 IDs takes ${span} ms"
bad=0 complete=0 untouched=0 partial=0 halfgone=0 retried=0
EXACT=no
"$PT" check 2>/dev/null | grep -q '^exact timer IDs.* yes ' && EXACT=yes
for ((i = 1; i <= KILLS; i++)); do
	start_idle leader "$d/t$i" none || { fail "kill-ptimer/restore/setup$i" "$(oneline "$d/t$i/out")"; bad=1; break; }
	dst=$IDLE_PID
	cat "/proc/$dst/maps" >"$d/t$i/maps0"
	kill_at_random $((span * 3 / 2)) restore -t "$dst" -D "$d" --image-pid 4242 --mode linear
	target_ok "kill-ptimer/restore/kill$i" "$dst" || { bad=1; break; }
	# (the killed ptimer's last run may still be going: this is a glimpse;
	# what counts is the state after the next run)
	state=$(ids_of_proc "/proc/$dst/timers")
	# the next run (any: a dump here) says what was left and removes it
	# (a dump refuses when the kernel drops proc events on a busy machine: again)
	for try in 1 2 3; do
		ptimer_run "$d/t$i/next.out" 60 dump -t "$dst" -D "$d/t$i"
		[ "$PT_RC" = 0 ] || ! grep -q 'dropped process events' "$d/t$i/next.out.err" || continue
		break
	done
	[ "$PT_RC" = 0 ] || { fail "kill-ptimer/restore/kill$i-next-run" "exit $PT_RC: $(oneline "$d/t$i/next.out.err")"; bad=1; }
	# after it the process holds all of the image's timers or none: a
	# partial restore is removed, with a line saying so; a complete one kept
	got=$(ids_of_proc "/proc/$dst/timers")
	said=no
	grep -q 'restore that a killed ptimer left unfinished.*: removed' "$d/t$i/next.out.err" && said=yes
	case $got/$said in
	"0 100000 200000 /no") complete=$((complete + 1)) ;;
	"/no") untouched=$((untouched + 1))
		case $state in
		"0 " | "0 100000 ") fail "kill-ptimer/restore/kill$i-half-restore-said" "timers '$state' were removed without a line saying so"; bad=1 ;;
		esac ;;
	"/yes") partial=$((partial + 1)) ;;
	*) fail "kill-ptimer/restore/kill$i-half-restore-removed" "timers '$state' after the kill, '$got' after the next run (removed line: $said); want all of 0 100000 200000 or none"
		bad=1 ;;
	esac
	if [ "$got/$said" = "/yes" ]; then
		halfgone=$((halfgone + 1))
		# with the exact-ID prctl a retry into the same process completes it
		if [ "$EXACT" = yes ]; then
			ptimer_run "$d/t$i/retry.out" 60 restore -t "$dst" -D "$d" --image-pid 4242
			got=$(ids_of_proc "/proc/$dst/timers")
			if [ "$PT_RC" = 0 ] && [ "$got" = "0 100000 200000 " ]; then
				retried=$((retried + 1))
			else
				fail "kill-ptimer/restore/kill$i-retry" "exit $PT_RC, timers '$got': $(oneline "$d/t$i/retry.out.err")"
				bad=1
			fi
		fi
	fi
	cat "/proc/$dst/maps" >"$d/t$i/maps1"
	if ! cmp -s "$d/t$i/maps0" "$d/t$i/maps1"; then
		fail "kill-ptimer/restore/kill$i-maps-cleaned" "$(diff "$d/t$i/maps0" "$d/t$i/maps1" | grep '^[<>]' | head -3 | tr '\n' ' ')"
		bad=1
	fi
	target_ok "kill-ptimer/restore/kill$i-next" "$dst" || bad=1
	reap "$dst"
done
[ "$bad" = 0 ] && pass "kill-ptimer/restore/$KILLS-kills-target-runs"
info "kill-ptimer: after the kills: $complete complete, $untouched without the image's timers, $partial partly restored ($halfgone removed by the next run, $retried then restored whole by an exact-ID retry)"
if [ "$partial" = 0 ]; then
	skip kill-ptimer/restore/half-restore-cleanup "no kill landed between the runs of a linear restore this time"
elif [ "$bad" = 0 ]; then
	pass "kill-ptimer/restore/half-restore-cleanup"
fi
[ "$EXACT" = yes ] || [ "$partial" = 0 ] || skip kill-ptimer/restore/exact-retry "no exact-ID prctl (Linux 6.15+): a retry into a process past the IDs is refused"
totals
