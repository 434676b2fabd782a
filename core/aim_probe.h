/* SPDX-License-Identifier: MIT */
/*
 * Timers aimed at a thread whose number a new thread now has.
 */
#ifndef PTIMER_CORE_AIM_PROBE_H
#define PTIMER_CORE_AIM_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/task.h"
#include "lib/err.h"
#include "lib/timer.h"

/*
 * ptimer_probe_thread_targets - of the SIGEV_THREAD_ID timers of
 * timers[n] (notify_tid translated to the process's own namespace, pending
 * read), which are aimed at a thread that exited although a live thread
 * now has its number: gone[i] set (bool[n]; others left as they are).
 *
 * A SIGEV_THREAD_ID timer holds its thread's struct pid, not its number
 * (good_sigevent(), kernel/time/posix-timers.c); /proc/PID/timers prints
 * that pid's number (show_timer(), fs/proc/base.c), which the kernel gives
 * again once the thread is reaped, and an expiry for a thread that is gone
 * queues nothing (posixtimer_send_sigqueue(), kernel/signal.c, 6.13+;
 * send_sigqueue() before).  No interface tells the pid apart, so each
 * candidate is made to expire (timer_settime(), it_value 1 ns, in t's
 * runner): its siginfo (SI_TIMER, si_timerid) lands in the own queue of the
 * thread the kernel holds, or nowhere.  It is then taken out of that queue
 * again inside that thread and the timer armed again with what it had
 * (the remaining time less the probe's, relative, the same interval).
 *
 * Candidates: aimed at a live thread other than the leader, no signal
 * queued, no overrun count (timer_settime() resets it), a clock that
 * expires by itself (not a CPU clock), a signal that is not SIGKILL, a stop
 * or SIGCONT, and a thread whose own queue holds no such signal yet; the
 * others keep the thread with their number.  Every thread of t must be in
 * a ptrace stop (the signal is queued, not delivered).  Whatever fails,
 * each timer probed is armed again and each probe signal found is taken
 * back before the return.  Costs nothing without candidates.
 * Returns 0, or -errno (err set): the -errno of running code in t,
 * -ETIMEDOUT when a timer made to expire did not within 2 s.
 */
int ptimer_probe_thread_targets(const struct ptimer_task *t, const struct ptimer_timer *timers, uint32_t n,
				bool *gone, struct ptimer_err *err);

#endif
