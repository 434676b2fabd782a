/* SPDX-License-Identifier: MIT */
/*
 * The timing state of timers, read inside the process (core/timer_state.c).
 */
#ifndef PTIMER_CORE_TIMER_STATE_H
#define PTIMER_CORE_TIMER_STATE_H

#include <stdint.h>
#include <sys/types.h>

#include "core/task.h"
#include "lib/err.h"
#include "lib/timer.h"

/*
 * ptimer_read_timer_state - fill it_value/it_interval/overrun of
 * timers[n] (timer_id set) with timer_gettime()/timer_getoverrun() run
 * inside t (stopped) by the blob, one run for all.  Returns 0, -ESRCH
 * (gone), -EIO (the blob could not run), -ENOMEM
 * (-EINVAL: no such timer), err set.
 */
int ptimer_read_timer_state(const struct ptimer_task *t, struct ptimer_timer *timers, uint32_t n,
			    struct ptimer_err *err);

/*
 * ptimer_read_timer_state_in - the same, run in thread tid of t (a host
 * tid, in a ptrace stop) instead of t's runner.
 */
int ptimer_read_timer_state_in(const struct ptimer_task *t, pid_t tid, struct ptimer_timer *timers, uint32_t n,
			    struct ptimer_err *err);

#endif
