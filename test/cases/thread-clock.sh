#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# thread-clock: timers on the calling thread's CPU clock (a CPU profiler's,
# test/e2e/thread_cpu.c: three burner threads, each with a SIGPROF timer on
# its own CPU clock aimed at itself, as Go's runtime/pprof makes them; one
# more, disarmed).  The dump finds out which thread each one measures
# (clock_tid in the image: asserted against the threads that created them,
# the disarmed one included, which is disarmed again afterwards); a restore
# into another process creates each in the mapped thread, whose SIGPROF
# then tracks its CPU time (>= 50 a CPU second at the 10 ms period).
# Control: the same image without clock_tid restores every timer into the
# main thread, and the burners get no SIGPROF (asserted: the check can
# fail).  --mode linear can make them in the main thread only, and says so
# for each.  A target without the image's thread (no --tid-map): refused.
#
#   bash test/cases/thread-clock.sh BUILD
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/test/lib/harness.sh"
. "$TOP/test/e2e/lib.sh"

TC=$B/test/thread_cpu
[ -x "$TC" ] || { fail thread-clock/setup "$TC is missing: run 'make tests'"; exit 1; }
n=thread-clock
d=$TMP/tc
mkdir -p "$d/img"

# target DIR: a thread_cpu target in DIR (ids copied in), its pid in TGT
target() {
	mkdir -p "$1"
	cp "$d/ids" "$1/ids"
	start_ready "$1" "$TC" target "$1" || true
	TGT=$READY_PID
	wait_ready "$1" target "$TGT" || { fail "$n/target" "$(oneline "$1/out")"; return 1; }
}

# maps DIR: --tid-map arguments, the source's burners onto DIR's target's
maps() {
	local s t i
	read -r -a s <"$d/tids"
	read -r -a t <"$1/target.tids"
	for i in 1 2 3; do printf -- '--tid-map %s=%s ' "${s[$i]}" "${t[$i]}"; done
}

start_ready "$d" "$TC" setup "$d" || true
src=$READY_PID
wait_ready "$d" setup "$src" || { fail "$n/setup" "$(oneline "$d/out")"; exit 1; }
read -r main b0 b1 b2 <"$d/tids"
read -r i0 i1 i2 off <"$d/ids"
ptimer_run "$d/dump.out" 30 dump -t "$src" -D "$d/img"
check "$n/dump" "exit $PT_RC: $(oneline "$d/dump.out.err")" test "$PT_RC" = 0
ptimer_run "$d/show.json" 30 show "$d/img" --json
# "id clock_tid" a line, from the JSON
awk '/"id" *:/ { gsub(/[^0-9]/, ""); id = $0 } /"clock_tid" *:/ { gsub(/[^0-9]/, ""); print id, $0 }' \
	"$d/show.json" | sort -n >"$d/bound"
printf '%s %s\n' "$i0" "$b0" "$i1" "$b1" "$i2" "$b2" "$off" "$b0" | sort -n >"$d/want"
check "$n/dump-finds-each-thread" "image: $(oneline "$d/bound"); created by: $(oneline "$d/want") (main $main)" \
	cmp -s "$d/bound" "$d/want"
ptimer_run "$d/again.out" 30 dump -t "$src" -D "$d"
ptimer_run "$d/again.json" 30 show "$d" --json
# the JSON flattened: that timer's it_value must be 0
v=$(tr -d ' \n\t' <"$d/again.json" | grep -o "\"id\":$off,[^}]*\"it_value\":{[^}]*}" | grep -o '"it_value".*')
check "$n/source-disarmed-stays-disarmed" "timer $off: ${v:-not found}" test "$v" = '"it_value":{"sec":0,"nsec":0}'
why=$(not_stopped "$src") || fail "$n/source-not-stopped" "$why"
reap "$src"

# into another process, each timer in its thread
target "$d/t1" || exit 1
t1=$TGT
# shellcheck disable=SC2046
ptimer_run "$d/r1.out" 30 restore -t "$t1" -D "$d/img" --verify $(maps "$d/t1")
check "$n/restore" "exit $PT_RC: $(oneline "$d/r1.out.err")" test "$PT_RC" = 0 -a ! -s "$d/r1.out.err"
touch "$d/t1/restored"
wait_until 100 test -e "$d/t1/target.done"
grep -E '^(PASS|FAIL) ' "$d/t1/target.result"
tally "$d/t1/target.result"
[ "$(grep -c '^PASS ' "$d/t1/target.result" 2>/dev/null)" = 4 ] || fail "$n/target-lines" "$(oneline "$d/t1/target.result")"
reap "$t1"

# a thread the image names is missing (no --tid-map): refused, untouched
target "$d/t0" || exit 1
t0=$TGT
ptimer_run "$d/r0.out" 30 restore -t "$t0" -D "$d/img"
check "$n/missing-thread-refused" "exit $PT_RC: $(oneline "$d/r0.out.err")" \
	grep -qE "timer [0-9]+ measures the CPU time of thread ($b0|$b1|$b2) of the dumped process.*pass --tid-map ($b0|$b1|$b2)=TID" "$d/r0.out.err"
check "$n/missing-thread-untouched" "timers: $(ids_of_proc "/proc/$t0/timers")" test -z "$(ids_of_proc "/proc/$t0/timers")"
reap "$t0"

# control: without clock_tid every timer is made in the main thread
sed 's/"clock_tid": *[0-9]*/"clock_tid": 0/' "$d/show.json" >"$d/unbound.json"
mkdir -p "$d/unbound"
ptimer_run "$d/enc.out" 30 encode -i "$d/unbound.json" -o "$d/unbound/ptimers-$src.img"
check "$n/control-encode" "exit $PT_RC: $(oneline "$d/enc.out.err")" test "$PT_RC" = 0
target "$d/t2" || exit 1
t2=$TGT
# shellcheck disable=SC2046
ptimer_run "$d/r2.out" 30 restore -t "$t2" -D "$d/unbound" $(maps "$d/t2")
info "$n: control restore: exit $PT_RC $(oneline "$d/r2.out.err")"
touch "$d/t2/restored"
wait_until 100 test -e "$d/t2/target.done"
sed 's/^/# control: /' "$d/t2/target.result"
check "$n/control-unbound-burners-get-nothing" "restore exit $PT_RC; $(oneline "$d/t2/target.result")" \
	test "$PT_RC" = 0 -a "$(grep -c '^FAIL thread-clock/burner' "$d/t2/target.result" 2>/dev/null)" = 3
reap "$t2"

# linear mode: made in the main thread, each with a warning
target "$d/t3" || exit 1
t3=$TGT
# shellcheck disable=SC2046
ptimer_run "$d/r3.out" 30 restore -t "$t3" -D "$d/img" --mode linear $(maps "$d/t3")
check "$n/linear-warns-each" "exit $PT_RC: $(oneline "$d/r3.out.err")" \
	test "$PT_RC" = 0 -a "$(grep -c 'warning: .*measures the CPU time of thread' "$d/r3.out.err")" = 4
reap "$t3"
totals
