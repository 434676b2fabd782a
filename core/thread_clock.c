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
#include "core/fault.h"
#include "core/log.h"
#include "core/timer_state.h"
#include "lib/procfs.h"
#include "restorer/host/inject.h"

/* How long a disarmed timer is armed for the look: never reached meanwhile. */
#define LOOK_SEC	1000

/*
 * Arm (it_value LOOK_SEC) or disarm (it_value 0) each timer of look[k] in
 * t's runner, with the it_interval it has (a disarmed timer keeps and shows
 * its interval: common_timer_get(), posix_cpu_timer_get()).  Arming, a timer
 * the kernel answers ESRCH is on the CPU clock of a thread that has exited
 * (posix_cpu_timer_set(): no task for the clock): gone[i] is set and the
 * timer is left as it was.  Disarming skips the gone ones.  On any other
 * failure while arming, the timers armed so far are disarmed again before
 * the error returns, so that the process is left as it was.
 */
static int set_each(const struct ptimer_task *t, const struct ptimer_timer *look, uint32_t k, bool arm,
		    bool *gone, struct ptimer_err *err)
{
	struct itimerspec *its;
	struct ptimer_blob *b;
	uint64_t data;
	uint32_t armed = 0;
	size_t room;
	int ret, r;

	if (!k)
		return 0;
	its = calloc(k, sizeof(*its));
	if (!its)
		return ptimer_errf(err, ENOMEM, "out of memory for %u timers", k);
	for (uint32_t i = 0; i < k; i++) {
		its[i].it_interval.tv_sec = look[i].it_interval.sec;
		its[i].it_interval.tv_nsec = look[i].it_interval.nsec;
		its[i].it_value.tv_sec = arm ? LOOK_SEC : 0;
	}
	ret = ptimer_blob_open(&b, ptimer_task_runner(t), k, 0, ptimer_task_blob_flags(t), err);
	if (ret) {
		free(its);
		return ret;
	}
	data = ptimer_blob_data(b, &room);
	ret = ptimer_blob_data_rw(b, 0, its, k * sizeof(*its), true, err);
	for (uint32_t i = 0; !ret && i < k; i++) {
		const unsigned long args[6] = { (unsigned long)look[i].timer_id, 0, data + i * sizeof(*its), 0, 0, 0 };
		long res;

		if (!arm && gone[i])
			continue;
		if (arm && armed && ptimer_fault("look-arm"))
			ret = ptimer_errf(err, EIO, "injected failure after arming %u timers for the look", armed);
		if (!ret)
			ret = ptimer_blob_syscall(b, __NR_timer_settime, args, &res, err);
		if (!ret && arm && res == -ESRCH) {
			gone[i] = true;
			continue;
		}
		if (!ret && res)
			ret = ptimer_errf(err, EIO, "process %d: timer_settime(%d) for a look at its clock: %s",
					  t->pid, look[i].timer_id,
					  res < 0 && res > -4096 ? strerror((int)-res) : "?");
		if (!ret && arm)
			armed = i + 1;
	}
	if (ret && armed) {
		/* undo: each timer armed so far disarmed again, as it was */
		struct ptimer_err uerr;

		for (uint32_t i = 0; i < armed; i++)
			its[i].it_value.tv_sec = 0;
		r = ptimer_blob_data_rw(b, 0, its, armed * sizeof(*its), true, &uerr);
		for (uint32_t i = 0; !r && i < armed; i++) {
			const unsigned long args[6] = { (unsigned long)look[i].timer_id, 0, data + i * sizeof(*its),
							0, 0, 0 };
			long res;

			if (!gone[i])
				r = ptimer_blob_syscall(b, __NR_timer_settime, args, &res, &uerr);
		}
		/* a process that exited holds no timer to disarm: the error
		 * that ends the dump says so, once */
		if (r && r != -ESRCH)
			ptimer_log(PTIMER_LOG_ERROR, "process %d: disarming the timers armed for a look at their clock "
				   "again: %s", t->pid, uerr.msg);
	}
	r = ptimer_blob_close(b, ret ? NULL : err);
	free(its);
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

int ptimer_find_clock_threads(const struct ptimer_task *t, struct ptimer_timer *timers, uint32_t n, bool *gone,
			      struct ptimer_err *err)
{
	struct ptimer_timer *sub, *v0, *v1, *look;
	uint32_t k = 0, left, n_look = 0;
	int32_t *idx, *look_idx;
	bool *look_gone;
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
	look_idx = calloc(k, sizeof(*look_idx));
	look_gone = calloc(k, sizeof(*look_gone));
	if (!sub || !v0 || !v1 || !idx || !look || !look_idx || !look_gone) {
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
		if (!tm->it_value.sec && !tm->it_value.nsec && !tm->pending && !tm->overrun) {
			look_idx[n_look] = (int32_t)k;
			look[n_look++] = *tm;
		}
		sub[k++] = *tm;
	}
	ret = set_each(t, look, n_look, true, look_gone, err);
	if (ret)
		goto out;
	/* a gone thread's timer: no thread's clock moves it, none is tried */
	for (uint32_t j = 0; j < n_look; j++)
		if (look_gone[j] && gone)
			gone[idx[look_idx[j]]] = true;
	cand = candidates(t, sub, k, &n_cand);
	if (!cand) {
		ret = ptimer_errf(err, ENOMEM, "out of memory");
		goto disarm;
	}
	left = k;
	for (uint32_t j = 0; j < n_look; j++)
		left -= look_gone[j];
	for (int c = 0; c < n_cand && left && !ret; c++) {
		memcpy(v0, sub, k * sizeof(*sub));
		memcpy(v1, sub, k * sizeof(*sub));
		/* two looks in thread cand[c]: its clock alone moves in between */
		ret = ptimer_read_timer_state_in(t, cand[c], v0, k, err);
		if (!ret && ptimer_fault("look-read"))
			ret = ptimer_errf(err, EIO, "injected failure between the looks in thread %d", cand[c]);
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
		bool dead = false;

		for (uint32_t m = 0; m < n_look; m++)
			dead = dead || (look_gone[m] && look_idx[m] == (int32_t)j);
		if (tm->clock_tid)
			continue;
		if (dead)
			continue;	/* the caller says what it makes of it */
		if (hint && ptimer_task_host_tid(t, hint))
			tm->clock_tid = hint;
		ptimer_log(PTIMER_LOG_INFO, "process %d: timer %d on the thread CPU clock: no thread's clock "
			   "moves it (disarmed with a signal or overrun to keep, or its thread has exited): "
			   "%s", t->pid, tm->timer_id, tm->clock_tid ? "taken to measure its SIGEV_THREAD_ID "
			   "target" : "the thread it measures is unknown");
	}
disarm:
	if (!ret && ptimer_fault("look-disarm"))
		ret = ptimer_errf(err, EIO, "injected failure before the disarm after the look");
	r = set_each(t, look, n_look, false, look_gone, ret ? NULL : err);
	if (!ret)
		ret = r;
out:
	free(cand);
	free(sub);
	free(v0);
	free(v1);
	free(idx);
	free(look);
	free(look_idx);
	free(look_gone);
	return ret;
}

int ptimer_probe_gone_clocks(const struct ptimer_task *t, const struct ptimer_timer *timers, uint32_t n,
			     const bool *want, bool *gone, struct ptimer_err *err)
{
	struct ptimer_timer *look;
	uint32_t n_look = 0;
	int32_t *at;
	bool *look_gone;
	int ret, r;

	look = calloc((size_t)n + 1, sizeof(*look));
	at = calloc((size_t)n + 1, sizeof(*at));
	look_gone = calloc((size_t)n + 1, sizeof(*look_gone));
	if (!look || !at || !look_gone) {
		ret = ptimer_errf(err, ENOMEM, "out of memory for %u timers", n);
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct ptimer_timer *tm = &timers[i];

		/* armed: its thread lives (an exit dequeues the thread's timers) */
		if (!want[i] || tm->it_value.sec || tm->it_value.nsec || tm->pending || tm->overrun)
			continue;
		at[n_look] = (int32_t)i;
		look[n_look++] = *tm;
	}
	ret = set_each(t, look, n_look, true, look_gone, err);
	if (ret)
		goto out;
	r = set_each(t, look, n_look, false, look_gone, err);
	ret = r;
	for (uint32_t j = 0; !ret && j < n_look; j++)
		gone[at[j]] = look_gone[j];
out:
	free(look);
	free(at);
	free(look_gone);
	return ret;
}
