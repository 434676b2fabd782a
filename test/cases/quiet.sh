#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# quiet: `ptimer dump -q` and `ptimer restore -q` print errors only: nothing
# on stdout or stderr when all goes well (no summary line, no linear
# progress), the image written and the timers restored all the same; an
# error still comes, one line.  Without -q the summary line is there.
#
#   bash test/cases/quiet.sh BUILD
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/test/lib/harness.sh"
. "$TOP/test/e2e/lib.sh"

IDLE=$B/test/idle_timers
[ -x "$IDLE" ] || { fail quiet/setup "$IDLE is missing: run 'make tests'"; exit 1; }

# silent NAME OUT: PASS when OUT and OUT.err are both empty
silent() {
	check "$1" "stdout '$(oneline "$2")', stderr '$(oneline "$2.err")'" test ! -s "$2" -a ! -s "$2.err"
}

d=$TMP/quiet
start_idle leader "$d/src" || { fail quiet/setup "$(oneline "$d/src/out")"; exit 1; }
src=$IDLE_PID
ptimer_run "$d/dump.out" 30 dump -t "$src" -D "$d" -q
check quiet/dump "exit $PT_RC: $(oneline "$d/dump.out.err")" test "$PT_RC" = 0
silent quiet/dump-prints-nothing "$d/dump.out"
check quiet/dump-wrote-image "no image in $d" test -s "$d/ptimers-$src.img"
ptimer_run "$d/dump2.out" 30 dump -t "$src" -D "$d/src"
check quiet/dump-without-q-summary "stdout: $(oneline "$d/dump2.out")" grep -q '^dumped 2 timers' "$d/dump2.out"

# linear mode too (its progress line comes only after 3 s: not tested here)
start_idle leader "$d/dst" none || { fail quiet/target "$(oneline "$d/dst/out")"; exit 1; }
dst=$IDLE_PID
ptimer_run "$d/restore.out" 30 restore -t "$dst" -D "$d" --image-pid "$src" --mode linear -q
check quiet/restore "exit $PT_RC: $(oneline "$d/restore.out.err")" test "$PT_RC" = 0
silent quiet/restore-prints-nothing "$d/restore.out"
got=$(ids_of_proc "/proc/$dst/timers") exp=$(ids_of_proc "/proc/$src/timers")
check quiet/restore-ids "target has IDs '$got', source '$exp'" test "$got" = "$exp"

# an error is still said, in one line
ptimer_run "$d/again.out" 30 restore -t "$dst" -D "$d" --image-pid "$src" -q
check quiet/error-one-line "exit $PT_RC, stderr: $(oneline "$d/again.out.err")" \
	test "$PT_RC" -ne 0 -a "$(grep -c . "$d/again.out.err")" -eq 1 -a ! -s "$d/again.out"
reap "$dst"
reap "$src"
totals
