// SPDX-License-Identifier: MIT
/*
 * Timers aimed at a pid-namespace leader (core/leader.h says why).
 */
#include <errno.h>
#include <stdlib.h>

#include "core/leader.h"
#include "core/restore.h"
#include "core/timer_state.h"

static bool at_ns_leader(const struct ptimer_task *t, const struct ptimer_timer *tm)
{
	return (tm->sigev_notify & PTIMER_SIGEV_THREAD_ID) && tm->notify_tid == t->vpid && t->other_pidns;
}

int ptimer_leader_timers(struct ptimer_task *t, const struct ptimer_image *img, struct ptimer_timer **out,
			 struct ptimer_err *err)
{
	uint32_t k = 0;
	int ret;

	*out = NULL;
	for (uint32_t i = 0; i < img->n_timers; i++)
		k += at_ns_leader(t, &img->timers[i]);
	if (!k)
		return 0;
	*out = calloc(k, sizeof(**out));
	if (!*out)
		return ptimer_errf(err, ENOMEM, "out of memory");
	k = 0;
	for (uint32_t i = 0; i < img->n_timers; i++)
		if (at_ns_leader(t, &img->timers[i]))
			(*out)[k++] = img->timers[i];
	ret = ptimer_read_timer_state(t, *out, k, err);
	if (ret) {
		free(*out);
		*out = NULL;
		return ret;
	}
	return (int)k;
}

int ptimer_aim_timers(struct ptimer_task *t, const struct ptimer_timer *tm, uint32_t n, bool at_process,
		      struct ptimer_err *err)
{
	struct ptimer_timer *with = calloc(n ? n : 1, sizeof(*with));
	int ret;

	if (!with)
		return ptimer_errf(err, ENOMEM, "out of memory");
	for (uint32_t i = 0; i < n; i++) {
		with[i] = tm[i];
		if (at_process)
			with[i].sigev_notify = PTIMER_SIGEV_SIGNAL;
		with[i].overrun = 0;
		with[i].pending = 0;
		with[i].pending_overrun = 0;
	}
	ret = ptimer_replace_timers(t, with, n, err);
	free(with);
	return ret;
}
