// SPDX-License-Identifier: MIT
/*
 * Which thread a thread-CPU-clock timer measures (core/thread_clock.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "core/thread_clock.h"
#include "core/dump.h"
#include "core/log.h"
#include "lib/procfs.h"
#include "restorer/host/inject.h"

/* How long a disarmed timer is armed for the look: never reached meanwhile. */
#define LOOK_SEC	1000

/* timer_settime(id, 0, {interval 0, value sec}) for each of ids[k] in t's runner. */
static int set_each(const struct ptimer_task *t, const int32_t *ids, uint32_t k, long sec, struct ptimer_err *err)
{
	struct itimerspec its = { .it_value = { sec, 0 } };
	struct ptimer_blob *b;
	uint64_t data;
	size_t room;
	int ret, r;

	if (!k)
		return 0;
	ret = ptimer_blob_open(&b, ptimer_task_runner(t), 1, 0, t->owns_waits, err);
	if (ret)
		return ret;
	data = ptimer_blob_data(b, &room);
	ret = ptimer_blob_data_rw(b, 0, &its, sizeof(its), true, err);
	for (uint32_t i = 0; !ret && i < k; i++) {
		const unsigned long args[6] = { (unsigned long)ids[i], 0, data, 0, 0, 0 };
		long res;

		ret = ptimer_blob_syscall(b, __NR_timer_settime, args, &res, err);
		if (!ret && res)
			ret = ptimer_errf(err, EIO, "process %d: timer_settime(%d) for a look at its clock: %s",
					  t->pid, ids[i], res < 0 && res > -4096 ? strerror((int)-res) : "?");
	}
	r = ptimer_blob_close(b, ret ? NULL : err);
	return ret ? ret : r;
}

static bool ts_eq(const struct ptimer_ts *a, const struct ptimer_ts *b)
{
	return a->sec == b->sec && a->nsec == b->nsec;
}

/* Host tids of t's threads, SIGEV_THREAD_ID targets of sub[k] first. */
static pid_t *candidates(const struct ptimer_task *t, const struct ptimer_timer *sub, uint32_t k, int *n)
{
	pid_t *c = malloc(((size_t)t->n_threads + 1) * sizeof(*c));

	*n = 0;
	if (!c)
		return NULL;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < t->n_threads; i++) {
			pid_t vt = ptimer_task_vtid(t, t->tids[i]);
			bool hinted = false, seen = false;

			for (uint32_t j = 0; j < k && !hinted; j++)
				hinted = (sub[j].sigev_notify & PTIMER_SIGEV_THREAD_ID) && sub[j].notify_tid == vt;
			for (int m = 0; m < *n && !seen; m++)
				seen = c[m] == t->tids[i];
			/* an exited leader (a zombie) runs no code */
			if (!seen && (pass || hinted) && !ptimer_thread_exiting(t->pid, t->tids[i]))
				c[(*n)++] = t->tids[i];
		}
	return c;
}

int ptimer_find_clock_threads(const struct ptimer_task *t, struct ptimer_timer *timers, uint32_t n,
			      struct ptimer_err *err)
{
	struct ptimer_timer *sub, *v0, *v1;
	uint32_t k = 0, left, n_look = 0;
	int32_t *look;
	int32_t *idx;
	pid_t *cand = NULL;
	int n_cand = 0, ret = 0, r;

	for (uint32_t i = 0; i < n; i++)
		k += ptimer_thread_clock(timers[i].clock_id);
	if (!k)
		return 0;
	sub = calloc(k, sizeof(*sub));
	v0 = calloc(k, sizeof(*v0));
	v1 = calloc(k, sizeof(*v1));
	idx = calloc(k, sizeof(*idx));
	look = calloc(k, sizeof(*look));
	if (!sub || !v0 || !v1 || !idx || !look) {
		ret = ptimer_errf(err, ENOMEM, "out of memory for %u timers", k);
		goto out;
	}
	k = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct ptimer_timer *tm = &timers[i];

		if (!ptimer_thread_clock(tm->clock_id))
			continue;
		tm->clock_tid = 0;
		idx[k] = (int32_t)i;
		sub[k++] = *tm;
		if (!tm->it_value.sec && !tm->it_value.nsec && !tm->pending && !tm->overrun)
			look[n_look++] = tm->timer_id;
	}
	ret = set_each(t, look, n_look, LOOK_SEC, err);
	if (ret)
		goto out;
	cand = candidates(t, sub, k, &n_cand);
	if (!cand) {
		ret = ptimer_errf(err, ENOMEM, "out of memory");
		goto disarm;
	}
	left = k;
	for (int c = 0; c < n_cand && left && !ret; c++) {
		memcpy(v0, sub, k * sizeof(*sub));
		memcpy(v1, sub, k * sizeof(*sub));
		/* two looks in thread cand[c]: its clock alone moves in between */
		ret = ptimer_read_timer_state_in(t, cand[c], v0, k, err);
		if (!ret)
			ret = ptimer_read_timer_state_in(t, cand[c], v1, k, err);
		for (uint32_t j = 0; !ret && j < k; j++) {
			struct ptimer_timer *tm = &timers[idx[j]];

			if (tm->clock_tid || (!v0[j].it_value.sec && !v0[j].it_value.nsec))
				continue;
			if (!ts_eq(&v0[j].it_value, &v1[j].it_value)) {
				tm->clock_tid = ptimer_task_vtid(t, cand[c]);
				left--;
			}
		}
	}
	for (uint32_t j = 0; !ret && j < k; j++) {
		struct ptimer_timer *tm = &timers[idx[j]];
		pid_t hint = tm->sigev_notify & PTIMER_SIGEV_THREAD_ID ? tm->notify_tid : 0;

		if (tm->clock_tid)
			continue;
		if (hint && ptimer_task_host_tid(t, hint))
			tm->clock_tid = hint;
		ptimer_log(PTIMER_LOG_INFO, "process %d: timer %d on the thread CPU clock: no thread's clock "
			   "moves it (disarmed with a signal or overrun to keep, or its thread has exited): "
			   "%s", t->pid, tm->timer_id, tm->clock_tid ? "taken to measure its SIGEV_THREAD_ID "
			   "target" : "the thread it measures is unknown");
	}
disarm:
	r = set_each(t, look, n_look, 0, ret ? NULL : err);
	if (!ret)
		ret = r;
out:
	free(cand);
	free(sub);
	free(v0);
	free(v1);
	free(idx);
	free(look);
	return ret;
}
