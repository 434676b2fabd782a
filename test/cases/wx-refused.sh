#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# wx-refused: a process that may not map memory writable and executable at
# once (its seccomp filter makes such an mmap fail with EPERM, as W^X
# policies do: test/e2e/wx_refused.c).  ptimer's restorer is mapped RWX
# in one step where that is allowed; under a seccomp filter it does not
# suspend (one could kill on W+X) ptimer takes the other way, RW and then
# R-X, and dump and restore must still work: every timer back with its ID
# and timing, nothing of ptimer's left mapped, the process running.
#
#   bash test/cases/wx-refused.sh BUILD
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/test/lib/harness.sh"
. "$TOP/test/e2e/lib.sh"

WX=$B/test/wx_refused
[ -x "$WX" ] || { fail wx-refused/setup "$WX is missing: run 'make tests'"; exit 1; }

# the number of anonymous mappings of a process (ptimer's would add one)
anon_maps() { awk '$5 == 0 && $6 == "" { n++ } END { print n + 0 }' "/proc/$1/maps"; }

d=$TMP/wx
if ! start_ready "$d/src" "$WX" "$d/src" timers || ! grep -q '^wx: refused (EPERM)' "$d/src/out"; then
	fail wx-refused/setup "$(oneline "$d/src/out")"
	totals
	exit 1
fi
src=$READY_PID
before=$(anon_maps "$src")
ptimer_run "$d/dump.out" 30 dump -t "$src" -D "$d"
check wx-refused/dump "exit $PT_RC: $(oneline "$d/dump.out.err")" test "$PT_RC" = 0
check wx-refused/dump-leaves-no-mapping "$before anonymous mappings before the dump, $(anon_maps "$src") after" \
	test "$(anon_maps "$src")" = "$before"

start_ready "$d/dst" "$WX" "$d/dst" none || { fail wx-refused/target "$(oneline "$d/dst/out")"; totals; exit 1; }
dst=$READY_PID
before=$(anon_maps "$dst")
ptimer_run "$d/restore.out" 30 restore -t "$dst" -D "$d" --image-pid "$src" --verify -v
check wx-refused/restore "exit $PT_RC: $(oneline "$d/restore.out.err")" test "$PT_RC" = 0
check wx-refused/restore-took-rw-then-rx "no 'code mapped RW, then R-X' in ptimer -v's output: $(oneline "$d/restore.out.err")" \
	grep -q 'code mapped RW, then R-X' "$d/restore.out.err"
got=$(ids_of_proc "/proc/$dst/timers") exp=$(ids_of_proc "/proc/$src/timers")
check wx-refused/restore-ids "target has IDs '$got', source '$exp'" test "$got" = "$exp" -a "$exp" = "0 2 "
check wx-refused/restore-leaves-no-mapping "$before anonymous mappings before the restore, $(anon_maps "$dst") after" \
	test "$(anon_maps "$dst")" = "$before"
why=$(not_stopped "$dst") || fail wx-refused/restore-not-stopped "$why"
reap "$dst"
reap "$src"
totals
