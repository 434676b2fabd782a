/* SPDX-License-Identifier: MIT */
/*
 * Timers on the calling thread's CPU clock (CLOCK_THREAD_CPUTIME_ID, 3, or
 * glibc's -2): which thread each one measures.
 */
#ifndef PTIMER_CORE_THREAD_CLOCK_H
#define PTIMER_CORE_THREAD_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "core/task.h"
#include "lib/err.h"
#include "lib/timer.h"

/*
 * ptimer_find_clock_threads - set clock_tid (the process's own-namespace
 * tid, 0 when it cannot be told) of every timer of timers[n] on the
 * calling thread's CPU clock (ptimer_thread_clock()).  The kernel binds such
 * a timer to the thread that created it (posix_cpu_timer_create(),
 * kernel/time/posix-cpu-timers.c) and /proc/PID/timers does not say which.
 * What it does show: with every thread of t stopped, only the bound thread's
 * CPU clock moves while ptimer's code runs in it, so a timer's remaining
 * time read twice in thread X (timer_gettime(), the in-target blob) changes
 * only when X is its thread.  Threads a timer is aimed at (SIGEV_THREAD_ID)
 * are tried first, then the others, until every timer is placed.  A
 * disarmed timer is armed for the look (1000 s) and disarmed again, unless
 * its signal is queued or it has an overrun count (timer_settime() would
 * drop or reset those): then, like a timer whose thread has exited, it keeps
 * the hint of its SIGEV_THREAD_ID target when that thread lives, else 0.
 * A timer the kernel answers ESRCH when armed is on the CPU clock of a
 * thread that has exited (posix_cpu_timer_set()): gone[i] (bool[n], may be
 * NULL) is set for it and its clock_tid stays 0.  Whatever fails, every
 * timer armed for the look is disarmed again before the return (each keeps
 * its it_interval), so the process is left as it was.  Costs nothing
 * without such timers.  it_value and overrun of timers[] are not changed.
 * Returns 0, or the -errno of running code in t (err set).
 */
int ptimer_find_clock_threads(const struct ptimer_task *t, struct ptimer_timer *timers, uint32_t n, bool *gone,
			      struct ptimer_err *err);

/*
 * ptimer_probe_gone_clocks - of the timers of timers[n] (their state read:
 * ptimer_read_timer_state) with want[i] set, which are on the CPU clock of
 * a thread or process that has exited: gone[i] set (bool[n], others left
 * as they are).  An armed timer's clock lives (the kernel dequeues a dying
 * task's CPU timers, which then read disarmed); a disarmed one is armed for
 * LOOK_SEC and disarmed again, keeping its it_interval: the kernel answers
 * ESRCH when the clock's task is gone (posix_cpu_timer_set(),
 * kernel/time/posix-cpu-timers.c).  A disarmed timer with a queued signal
 * or an overrun count is not touched (timer_settime() would reset those)
 * and counts as live.  The process is left as it was, also on failure.
 * Returns 0, or the -errno of running code in t (err set).
 */
int ptimer_probe_gone_clocks(const struct ptimer_task *t, const struct ptimer_timer *timers, uint32_t n,
			     const bool *want, bool *gone, struct ptimer_err *err);

#endif
