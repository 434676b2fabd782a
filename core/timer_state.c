// SPDX-License-Identifier: MIT
/*
 * The timing state of timers as only the process itself can read it
 * (timer_gettime, timer_getoverrun), one run of the in-target blob for
 * all: what the dump keeps, the thread-clock look compares, and the
 * restore checks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/timer_state.h"
#include "restorer/host/inject.h"

int ptimer_read_timer_state(const struct ptimer_task *t, struct ptimer_timer *timers, uint32_t n,
			    struct ptimer_err *err)
{
	return ptimer_read_timer_state_in(t, ptimer_task_runner(t), timers, n, err);
}

int ptimer_read_timer_state_in(const struct ptimer_task *t, pid_t tid, struct ptimer_timer *timers, uint32_t n,
			       struct ptimer_err *err)
{
	struct ptimer_blob_args a = { .op = PTIMER_OP_GETTIME, .n_timers = n };
	struct ptimer_blob *b = NULL;
	struct ptimer_timer *got;
	int ret, r;

	got = calloc(n, sizeof(*got));
	if (!got)
		return ptimer_errf(err, ENOMEM, "out of memory for %u timers", n);
	ret = ptimer_blob_open(&b, tid, n, 0, ptimer_task_blob_flags(t), err);
	if (ret)
		goto out;
	ret = ptimer_blob_load(b, timers, NULL, err);
	if (!ret)
		ret = ptimer_blob_call(b, &a, err);
	if (!ret && a.result)
		ret = ptimer_errf(err, a.result < 0 ? (int)a.result : EIO,
				  "process %d: reading timer %d inside the process failed: %s", t->pid,
				  a.fail_index < n ? timers[a.fail_index].timer_id : -1,
				  a.result < 0 && a.result > -4096 ? strerror((int)-a.result) : "restorer fault");
	if (!ret)
		ret = ptimer_blob_fetch(b, got, err);
	r = ptimer_blob_close(b, ret ? NULL : err);
	if (!ret)
		ret = r;
	for (uint32_t i = 0; !ret && i < n; i++) {
		timers[i].it_value = got[i].it_value;
		timers[i].it_interval = got[i].it_interval;
		timers[i].overrun = got[i].overrun;
	}
out:
	free(got);
	return ret;
}
