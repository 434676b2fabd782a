/* SPDX-License-Identifier: MIT */
/*
 * Timers on the calling thread's CPU clock (CLOCK_THREAD_CPUTIME_ID, 3, or
 * glibc's -2): which thread each one measures.
 */
#ifndef PTIMER_CORE_THREAD_CLOCK_H
#define PTIMER_CORE_THREAD_CLOCK_H

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
 * Costs nothing without such timers.  it_value and overrun of timers[] are
 * not changed.  Returns 0, or the -errno of running code in t (err set).
 */
int ptimer_find_clock_threads(const struct ptimer_task *t, struct ptimer_timer *timers, uint32_t n,
			      struct ptimer_err *err);

#endif
