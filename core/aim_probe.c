// SPDX-License-Identifier: MIT
/*
 * Is a SIGEV_THREAD_ID timer aimed at the thread that now has its target's
 * number, or at one that exited before that number was given again
 * (core/aim_probe.h)?
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/aim_probe.h"
#include "core/log.h"
#include "core/pending.h"
#include "core/util.h"
#include "restorer/host/inject.h"

/* How long an expiry 1 ns away may take to be seen (a loaded host). */
#define FIRE_WAIT_NS	(2 * 1000000000LL)

struct cand {
	uint32_t i;		/* index in timers[] */
	pid_t tid;		/* host tid /proc names */
	struct itimerspec old;	/* as read just before the probe */
	int64_t read_ns;	/* when (CLOCK_MONOTONIC, ns) */
	bool probed;		/* made to expire */
	bool fired;		/* armed for the probe, not armed back yet */
	bool queued;		/* its signal found in tid's own queue */
	bool taken;		/* and taken out again */
};

/*
 * A candidate: aimed (SIGEV_THREAD_ID) at a live thread other than the
 * leader (a leader's number is never given again while its process
 * lives: a zombie leader keeps it, kernel/exit.c), on a clock that expires
 * by itself (a CPU clock moves only while a thread runs), no signal queued
 * (a queued one is in its live target's own queue: an exiting thread's
 * queue is flushed, __exit_signal()), a signal the probe may queue without
 * side effects (no SIGKILL, stop or continue signal: prepare_signal()
 * flushes other signals for those).
 */
static bool candidate(const struct ptimer_task *t, const struct ptimer_timer *tm, pid_t *tid)
{
	int s = tm->signo;

	if (!(tm->sigev_notify & PTIMER_SIGEV_THREAD_ID) || tm->pending)
		return false;
	if (tm->clock_id < 0 || tm->clock_id == CLOCK_PROCESS_CPUTIME_ID || tm->clock_id == CLOCK_THREAD_CPUTIME_ID)
		return false;
	if (s <= 0 || s >= 65 || s == SIGKILL || s == SIGSTOP || s == SIGCONT || s == SIGTSTP || s == SIGTTIN ||
	    s == SIGTTOU)
		return false;
	*tid = ptimer_task_host_tid(t, tm->notify_tid);
	return *tid && *tid != t->pid;
}

/* Does tid's own queue hold signo? */
static int queue_has(pid_t tid, int signo, bool *yes, struct ptimer_err *err)
{
	siginfo_t *si;
	size_t got;
	int ret = ptimer_sigqueue_peek(tid, false, &si, &got);

	*yes = false;
	if (ret)
		return ptimer_errf(err, -ret, "reading the signal queue of thread %d (PTRACE_PEEKSIGINFO): %s", tid,
				   strerror(-ret));
	for (size_t i = 0; i < got && !*yes; i++)
		*yes = si[i].si_signo == signo;
	free(si);
	return 0;
}

/* Mark the candidates whose SI_TIMER siginfo is in their thread's queue. */
static int find_queued(const struct ptimer_timer *timers, struct cand *c, uint32_t k, struct ptimer_err *err)
{
	for (uint32_t j = 0; j < k; j++) {
		siginfo_t *si;
		size_t got;
		int ret;

		if (j && c[j - 1].tid == c[j].tid)
			continue;
		ret = ptimer_sigqueue_peek(c[j].tid, false, &si, &got);
		if (ret)
			return ptimer_errf(err, -ret, "reading the signal queue of thread %d (PTRACE_PEEKSIGINFO): "
					   "%s", c[j].tid, strerror(-ret));
		for (size_t q = 0; q < got; q++)
			for (uint32_t m = j; m < k && c[m].tid == c[j].tid; m++)
				if (c[m].probed && si[q].si_code == SI_TIMER &&
				    si[q].si_timerid == timers[c[m].i].timer_id &&
				    si[q].si_signo == timers[c[m].i].signo)
					c[m].queued = true;
		free(si);
	}
	return 0;
}

/*
 * In each thread with queued probe signals, take them out again
 * (rt_sigtimedwait, no wait: the thread's own queue is searched before
 * the process's, kernel/signal.c dequeue_signal(), and held no such signal
 * before the probe).  A signal another sender queued meanwhile is put back
 * (rt_tgsigqueueinfo from the thread itself may carry any si_code).
 */
static int take_back(const struct ptimer_task *t, const struct ptimer_timer *timers, struct cand *c, uint32_t k,
		     struct ptimer_err *err)
{
	struct ptimer_err scratch;
	int first = 0;

	/* each thread's, past a failure in another's */
	for (uint32_t j = 0; j < k; j++) {
		struct ptimer_err *e = first ? &scratch : err;
		struct ptimer_blob *b;
		uint64_t data;
		size_t room;
		uint32_t left = 0, tries = 0;
		int ret, r;

		if (j && c[j - 1].tid == c[j].tid)
			continue;
		for (uint32_t m = j; m < k && c[m].tid == c[j].tid; m++)
			left += c[m].queued && !c[m].taken;
		if (!left)
			continue;
		ret = ptimer_blob_open(&b, c[j].tid, 1, 0, t->owns_waits, e);
		if (ret) {
			first = first ? first : ret;
			continue;
		}
		data = ptimer_blob_data(b, &room);
		for (uint32_t m = j; m < k && c[m].tid == c[j].tid && !ret; m++) {
			uint64_t set = 1ull << (timers[c[m].i].signo - 1);
			struct timespec zero = { 0, 0 };
			unsigned long args[6] = { data, data + 16, data + 16 + sizeof(siginfo_t), 8, 0, 0 };
			siginfo_t si;
			long res;

			if (!c[m].queued || c[m].taken)
				continue;
			ret = ptimer_blob_data_rw(b, 0, &set, sizeof(set), true, e);
			if (!ret)
				ret = ptimer_blob_data_rw(b, 16 + sizeof(siginfo_t), &zero, sizeof(zero), true, e);
			if (!ret)
				ret = ptimer_blob_syscall(b, __NR_rt_sigtimedwait, args, &res, e);
			if (!ret && res < 0)
				ret = ptimer_errf(e, (int)-res, "process %d: taking timer %d's probe signal back in "
						  "thread %d: %s", t->pid, timers[c[m].i].timer_id, c[j].tid,
						  strerror((int)-res));
			if (!ret)
				ret = ptimer_blob_data_rw(b, 16, &si, sizeof(si), false, e);
			if (ret)
				break;
			/* whose it is: the first of our timers it names */
			for (uint32_t q = j; q < k && c[q].tid == c[j].tid; q++)
				if (c[q].queued && !c[q].taken && si.si_code == SI_TIMER &&
				    si.si_timerid == timers[c[q].i].timer_id) {
					c[q].taken = true;
					si.si_code = 0;
					break;
				}
			if (si.si_code) {
				/* another sender's, taken by mistake: back to the queue */
				unsigned long a2[6] = { (unsigned long)t->vpid,
							(unsigned long)ptimer_task_vtid(t, c[j].tid),
							(unsigned long)si.si_signo, data + 16, 0, 0 };

				ret = ptimer_blob_syscall(b, __NR_rt_tgsigqueueinfo, a2, &res, e);
				if (!ret && res < 0)
					ret = ptimer_errf(e, (int)-res, "process %d: putting signal %d back in "
							  "thread %d: %s", t->pid, si.si_signo, c[j].tid,
							  strerror((int)-res));
			}
			if (!ret && !c[m].taken && ++tries > 64)
				ret = ptimer_errf(e, EAGAIN, "process %d: thread %d keeps being sent signal %d: "
						  "timer %d's probe signal stays queued", t->pid, c[j].tid,
						  timers[c[m].i].signo, timers[c[m].i].timer_id);
			else if (!ret && !c[m].taken)
				m--;	/* ours is still queued: again */
		}
		r = ptimer_blob_close(b, ret ? &scratch : e);
		if (!ret)
			ret = r;
		first = first ? first : ret;
	}
	return first;
}

/* timer_settime(timer_id, 0, its) in the blob's thread. */
static int settime(struct ptimer_blob *b, int32_t timer_id, const struct itimerspec *its, long *res,
		   struct ptimer_err *err)
{
	size_t room;
	uint64_t data = ptimer_blob_data(b, &room);
	const unsigned long args[6] = { (unsigned long)timer_id, 0, data, 0, 0, 0 };
	int ret = ptimer_blob_data_rw(b, 0, (void *)its, sizeof(*its), true, err);

	return ret ? ret : ptimer_blob_syscall(b, __NR_timer_settime, args, res, err);
}

/* timer_gettime(timer_id) in the blob's thread into *its. */
static int gettime(struct ptimer_blob *b, int32_t timer_id, struct itimerspec *its, long *res,
		   struct ptimer_err *err)
{
	size_t room;
	uint64_t data = ptimer_blob_data(b, &room);
	const unsigned long args[6] = { (unsigned long)timer_id, data, 0, 0, 0, 0 };
	int ret = ptimer_blob_syscall(b, __NR_timer_gettime, args, res, err);

	return ret || *res ? ret : ptimer_blob_data_rw(b, 0, its, sizeof(*its), false, err);
}

/*
 * Each fired candidate armed again as it was read: the remaining time less
 * what the probe took (1 ns when that is all of it: it expires at once, as
 * it would have), the same interval.  Goes on past a failure (the first
 * is returned).
 */
static int rearm(const struct ptimer_task *t, struct ptimer_blob *b, const struct ptimer_timer *timers,
		 struct cand *c, uint32_t k, struct ptimer_err *err)
{
	int ret = 0;

	for (uint32_t j = 0; j < k; j++) {
		struct itimerspec its = c[j].old;
		struct ptimer_err e;
		long res = 0;
		int r;

		if (!c[j].fired)
			continue;
		if (its.it_value.tv_sec || its.it_value.tv_nsec) {
			int64_t left = (int64_t)its.it_value.tv_sec * 1000000000LL + its.it_value.tv_nsec -
				       ((int64_t)ptimer_now_ns() - c[j].read_ns);

			if (left < 1)
				left = 1;
			its.it_value.tv_sec = left / 1000000000LL;
			its.it_value.tv_nsec = left % 1000000000LL;
		}
		r = settime(b, timers[c[j].i].timer_id, &its, &res, &e);
		if (!r && res)
			r = ptimer_errf(&e, (int)-res, "process %d: arming timer %d again after the probe of its "
					"thread: %s", t->pid, timers[c[j].i].timer_id, strerror((int)-res));
		if (!r)
			c[j].fired = false;
		else if (!ret) {
			ret = r;
			*err = e;
		}
	}
	return ret;
}

static bool any_fired(const struct cand *c, uint32_t k)
{
	for (uint32_t j = 0; j < k; j++)
		if (c[j].fired)
			return true;
	return false;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid ? 1 : (x->i > y->i) - (x->i < y->i);
}

int ptimer_probe_thread_targets(const struct ptimer_task *t, const struct ptimer_timer *timers, uint32_t n,
				bool *gone, struct ptimer_err *err)
{
	const struct itimerspec now = { .it_value = { 0, 1 } };
	struct ptimer_blob *b = NULL;
	struct ptimer_err scratch;
	struct cand *c;
	uint32_t k = 0, kept = 0;
	int64_t until;
	int ret = 0, r, r2;

	c = calloc((size_t)n + 1, sizeof(*c));
	if (!c)
		return ptimer_errf(err, ENOMEM, "out of memory for %u timers", n);
	for (uint32_t i = 0; i < n; i++) {
		pid_t tid;
		bool busy;

		if (!candidate(t, &timers[i], &tid))
			continue;
		/* its signal already in the thread's queue: the one taken back
		 * would be the first, not the probe's */
		ret = queue_has(tid, timers[i].signo, &busy, err);
		if (ret)
			goto out;
		if (busy) {
			kept++;
			continue;
		}
		c[k].i = i;
		c[k++].tid = tid;
	}
	if (kept)
		ptimer_log(PTIMER_LOG_DEBUG, "process %d: %u timer%s aimed at a thread that has its signal queued "
			   "already: taken as aimed at the thread with that number", t->pid, kept,
			   kept > 1 ? "s" : "");
	if (!k)
		goto out;
	qsort(c, k, sizeof(*c), cmp_tid);
	ret = ptimer_blob_open(&b, ptimer_task_runner(t), k, 0, t->owns_waits, err);
	if (ret)
		goto out;
	/* each made to expire now: its signal goes to the thread the kernel holds */
	for (uint32_t j = 0; j < k && !ret; j++) {
		const struct ptimer_timer *tm = &timers[c[j].i];
		unsigned long oargs[6] = { (unsigned long)tm->timer_id, 0, 0, 0, 0, 0 };
		long res;

		/* an overrun count would be reset by timer_settime(): not probed */
		ret = ptimer_blob_syscall(b, __NR_timer_getoverrun, oargs, &res, err);
		if (!ret && res)
			continue;
		if (!ret)
			ret = gettime(b, tm->timer_id, &c[j].old, &res, err);
		c[j].read_ns = (int64_t)ptimer_now_ns();
		if (!ret && !res)
			ret = settime(b, tm->timer_id, &now, &res, err);
		if (!ret && res)
			ret = ptimer_errf(err, (int)-res, "process %d: timer %d for the probe of its thread: %s",
					  t->pid, tm->timer_id, strerror((int)-res));
		if (!ret)
			c[j].fired = c[j].probed = true;
	}
	/* expired: a one-shot timer reads disarmed once its expiry ran
	 * (common_timer_get(), kernel/time/posix-timers.c) */
	until = (int64_t)ptimer_now_ns() + FIRE_WAIT_NS;
	for (uint32_t j = 0; j < k && !ret; j++) {
		struct itimerspec its;
		long res;

		while (!ret && c[j].fired) {
			ret = gettime(b, timers[c[j].i].timer_id, &its, &res, err);
			if (!ret && res)
				ret = ptimer_errf(err, (int)-res, "process %d: reading timer %d in the probe: %s", t->pid,
						  timers[c[j].i].timer_id, strerror((int)-res));
			if (ret || (!its.it_value.tv_sec && !its.it_value.tv_nsec))
				break;
			if ((int64_t)ptimer_now_ns() > until)
				ret = ptimer_errf(err, ETIMEDOUT, "process %d: timer %d, made to expire for the probe "
						  "of its thread, did not within 2 s", t->pid,
						  timers[c[j].i].timer_id);
		}
	}
	/* one blob in a process at a time: this one's mapping is not another's leftover */
	if (ret)
		rearm(t, b, timers, c, k, &scratch);
	r = ptimer_blob_close(b, ret ? &scratch : err);
	if (!ret)
		ret = r;
	/* after a failure too: what was queued is taken back */
	r = find_queued(timers, c, k, ret ? &scratch : err);
	if (!ret)
		ret = r;
	r = take_back(t, timers, c, k, ret ? &scratch : err);
	if (!ret)
		ret = r;
	if (any_fired(c, k)) {
		r = ptimer_blob_open(&b, ptimer_task_runner(t), k, 0, t->owns_waits, ret ? &scratch : err);
		if (!r) {
			r = rearm(t, b, timers, c, k, ret ? &scratch : err);
			r2 = ptimer_blob_close(b, ret || r ? &scratch : err);
			if (!r)
				r = r2;
		}
		if (!ret)
			ret = r;
	}
	for (uint32_t j = 0; !ret && j < k; j++)
		if (c[j].probed && !c[j].queued)
			gone[c[j].i] = true;
out:
	free(c);
	return ret;
}
