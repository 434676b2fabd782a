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
#include "core/timer_state.h"
#include "core/util.h"
#include "restorer/host/inject.h"

/* How long an expiry 1 ns away may take to be seen (a loaded host). */
#define FIRE_WAIT_NS	(2 * 1000000000LL)

struct cand {
	uint32_t i;		/* index in timers[] */
	pid_t tid;		/* host tid /proc names */
	struct ptimer_timer old;	/* its state just before the look */
	bool fired;		/* made to expire */
	bool queued;		/* its signal found in tid's own queue */
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

/*
 * Drop the candidates c[*k] (sorted by tid) whose signal is already in
 * their thread's own queue: the one taken back would be that, not the
 * look's.  Their count in *kept.
 */
static int drop_busy(struct cand *c, uint32_t *k, const struct ptimer_timer *timers, uint32_t *kept,
		     struct ptimer_err *err)
{
	uint32_t m = 0;

	for (uint32_t j = 0; j < *k;) {
		uint32_t end = j;
		uint64_t busy = 0;
		siginfo_t *si;
		size_t got;
		int ret = ptimer_sigqueue_peek(c[j].tid, false, &si, &got);

		if (ret)
			return ptimer_errf(err, -ret, "reading the signal queue of thread %d (PTRACE_PEEKSIGINFO): "
					   "%s", c[j].tid, strerror(-ret));
		for (size_t q = 0; q < got; q++)
			if (si[q].si_signo > 0 && si[q].si_signo <= 64)
				busy |= 1ull << (si[q].si_signo - 1);
		free(si);
		while (end < *k && c[end].tid == c[j].tid)
			end++;
		for (; j < end; j++) {
			if (busy & (1ull << (timers[c[j].i].signo - 1)))
				(*kept)++;
			else
				c[m++] = c[j];
		}
	}
	*k = m;
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
				if (c[m].fired && si[q].si_code == SI_TIMER &&
				    si[q].si_timerid == timers[c[m].i].timer_id &&
				    si[q].si_signo == timers[c[m].i].signo)
					c[m].queued = true;
		free(si);
	}
	return 0;
}

/*
 * Run op over timers[n] in thread tid (one blob), look_ns in its
 * arguments: the timers loaded, the blob run until it is done or
 * deadline_ns passes (PTIMER_AGAIN), the timers read back into timers[]
 * when fetch and the blob ran, failed or not (*fetched then set).  *a: the
 * arguments as the last run left them.  0, or -errno (err set) when the
 * blob could not run or answered one.
 */
static int run_op(const struct ptimer_task *t, pid_t tid, uint32_t op, struct ptimer_timer *timers, uint32_t n,
		  int64_t deadline_ns, int64_t look_ns, bool *fetched, struct ptimer_blob_args *a,
		  struct ptimer_err *err)
{
	struct ptimer_err scratch;
	struct ptimer_blob *b;
	int ret, r;

	memset(a, 0, sizeof(*a));
	a->op = op;
	a->n_timers = n;
	a->look_ns = look_ns;
	ret = ptimer_blob_open(&b, tid, n, 0, ptimer_task_blob_flags(t), err);
	if (ret)
		return ret;
	ret = ptimer_blob_load(b, timers, NULL, err);
	while (!ret) {
		ret = ptimer_blob_call(b, a, err);
		/* how far it got, as the target has it; else taken as all */
		if (ret && ptimer_blob_args_read(b, a, &scratch))
			a->n_armed = n;
		if (ret || a->result != PTIMER_AGAIN || (int64_t)ptimer_now_ns() > deadline_ns)
			break;
	}
	if (!ret && fetched) {
		ret = ptimer_blob_fetch(b, timers, err);
		*fetched = !ret;
	}
	if (!ret && a->result == PTIMER_AGAIN)
		ret = ptimer_errf(err, ETIMEDOUT, "process %d: a timer made to expire for the look at its thread did "
				  "not within 2 s", t->pid);
	else if (!ret && a->result && a->result != PTIMER_E_FOREIGN)
		ret = ptimer_errf(err, a->result < 0 ? (int)a->result : EIO, "process %d: timer %d, in the look at "
				  "its thread: %s", t->pid, a->fail_index < n ? timers[a->fail_index].timer_id : -1,
				  a->result < 0 && a->result > -4096 ? strerror((int)-a->result) : "restorer fault");
	r = ptimer_blob_close(b, ret ? &scratch : err);
	return ret ? ret : r;
}

/* The siginfo info (siginfo_t) queued to thread tid again, from itself. */
static int requeue(const struct ptimer_task *t, pid_t tid, const uint64_t info[16], struct ptimer_err *err)
{
	struct ptimer_blob *b;
	size_t room;
	long res = 0;
	int ret, r;

	ret = ptimer_blob_open(&b, tid, 1, 0, ptimer_task_blob_flags(t), err);
	if (ret)
		return ret;
	ret = ptimer_blob_data_rw(b, 0, (void *)info, 16 * sizeof(*info), true, err);
	if (!ret) {
		const unsigned long args[6] = { (unsigned long)t->vpid, (unsigned long)ptimer_task_vtid(t, tid),
						(unsigned long)(int32_t)info[0], ptimer_blob_data(b, &room), 0, 0 };

		ret = ptimer_blob_syscall(b, __NR_rt_tgsigqueueinfo, args, &res, err);
	}
	if (!ret && res < 0)
		ret = ptimer_errf(err, (int)-res, "process %d: queueing signal %d of another sender again in "
				  "thread %d: %s", t->pid, (int)(int32_t)info[0], tid, strerror((int)-res));
	r = ptimer_blob_close(b, ret ? NULL : err);
	return ret ? ret : r;
}

/* How often the undoing of the look is tried before it is given up: a
 * failed allocation or an interrupted wait passes. */
#define UNDO_TRIES	3

/*
 * Take out of thread c[j].tid's queue (c[j..end), one thread's candidates)
 * the signals of the fired timers still in it: its queue read, then
 * PTIMER_OP_TAKE in the thread.  A signal another sender queued since the
 * look is queued again (rt_tgsigqueueinfo from the thread itself may carry
 * any si_code) and the take goes on.  0, or -errno (err set).
 */
static int take_thread(const struct ptimer_task *t, const struct ptimer_timer *timers, const struct cand *c,
		       uint32_t j, uint32_t end, struct ptimer_timer *sub, struct ptimer_err *err)
{
	struct ptimer_blob_args a;
	siginfo_t *si;
	size_t got;
	uint32_t m = 0;
	int ret = ptimer_sigqueue_peek(c[j].tid, false, &si, &got);

	if (ret)
		return ptimer_errf(err, -ret, "reading the signal queue of thread %d (PTRACE_PEEKSIGINFO): %s",
				   c[j].tid, strerror(-ret));
	for (uint32_t q = j; q < end; q++) {
		const struct ptimer_timer *tm = &timers[c[q].i];

		for (size_t e = 0; c[q].fired && e < got; e++)
			if (si[e].si_code == SI_TIMER && si[e].si_timerid == tm->timer_id &&
			    si[e].si_signo == tm->signo) {
				sub[m] = *tm;
				sub[m++].pending = 1;
				break;
			}
	}
	free(si);
	for (int tries = 0; m && !ret; tries++) {
		bool fetched = false;

		ret = run_op(t, c[j].tid, PTIMER_OP_TAKE, sub, m, 0, 0, &fetched, &a, err);
		if (ret || !a.result)
			break;
		/* another sender's signal, taken by mistake: queued again */
		ret = tries < 64 ? requeue(t, c[j].tid, a.taken_info, err) :
			ptimer_errf(err, EAGAIN, "process %d: thread %d keeps being sent signals: the look's "
				    "signals stay queued", t->pid, c[j].tid);
	}
	return ret;
}

/*
 * In each thread, the fired timers' signals taken out again.  The look
 * has queued them: this undoes it, so a failure is tried again, from a
 * fresh read of the queue (a take that failed half-way took some), up to
 * UNDO_TRIES times.  Past a failure in one thread, the others' are taken;
 * the first failure is returned.
 */
static int take_back(const struct ptimer_task *t, const struct ptimer_timer *timers, const struct cand *c, uint32_t k,
		     struct ptimer_err *err)
{
	struct ptimer_timer *sub = calloc((size_t)k + 1, sizeof(*sub));
	int first = 0;

	if (!sub)
		return ptimer_errf(err, ENOMEM, "out of memory for %u timers", k);
	for (uint32_t j = 0, end; j < k; j = end) {
		struct ptimer_err last;
		int ret = 0;

		for (end = j; end < k && c[end].tid == c[j].tid; end++)
			;
		for (int tries = 0; tries < UNDO_TRIES; tries++) {
			ret = take_thread(t, timers, c, j, end, sub, &last);
			if (!ret)
				break;
		}
		if (ret && !first) {
			first = ret;
			if (err)
				*err = last;
		}
	}
	free(sub);
	return first;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid ? 1 : (x->i > y->i) - (x->i < y->i);
}

/*
 * The fired timers armed again with what they had when FIRE read them at
 * look_ns, less the time since (PTIMER_OP_ARM, in the blob: a target in a
 * time namespace has its own CLOCK_MONOTONIC); look_ns 0: as they are
 * (FIRE's read was lost, the host's own read is used).
 */
static int rearm(const struct ptimer_task *t, struct ptimer_timer *sub, const struct cand *c, uint32_t k,
		 int64_t look_ns, struct ptimer_err *err)
{
	struct ptimer_blob_args a;
	struct ptimer_err last;
	uint32_t m = 0;
	int ret = 0;

	for (uint32_t j = 0; j < k; j++)
		if (c[j].fired)
			sub[m++] = c[j].old;
	/* undoing the look: tried again as take_back is (each try sets the
	 * same times, measured from look_ns) */
	for (int tries = 0; m && tries < UNDO_TRIES; tries++) {
		ret = run_op(t, ptimer_task_runner(t), PTIMER_OP_ARM, sub, m, 0, look_ns, NULL, &a, &last);
		if (!ret)
			break;
	}
	if (ret && err)
		*err = last;
	return ret;
}

int ptimer_probe_thread_targets(const struct ptimer_task *t, const struct ptimer_timer *timers, uint32_t n,
				bool *gone, struct ptimer_err *err)
{
	struct ptimer_timer *sub = NULL;
	struct ptimer_blob_args a;
	struct ptimer_err scratch;
	struct cand *c;
	uint32_t k = 0, kept = 0, m = 0;
	int64_t look_ns;
	bool fetched = false;
	int ret = 0, r;

	c = calloc((size_t)n + 1, sizeof(*c));
	if (!c)
		return ptimer_errf(err, ENOMEM, "out of memory for %u timers", n);
	for (uint32_t i = 0; i < n; i++) {
		pid_t tid;

		if (candidate(t, &timers[i], &tid)) {
			c[k].i = i;
			c[k++].tid = tid;
		}
	}
	qsort(c, k, sizeof(*c), cmp_tid);
	ret = drop_busy(c, &k, timers, &kept, err);
	if (ret)
		goto out;
	if (kept)
		ptimer_log(PTIMER_LOG_DEBUG, "process %d: %u timer%s aimed at a thread that has its signal queued "
			   "already: taken as aimed at the thread with that number", t->pid, kept,
			   kept > 1 ? "s" : "");
	if (!k)
		goto out;
	sub = calloc(k, sizeof(*sub));
	if (!sub) {
		ret = ptimer_errf(err, ENOMEM, "out of memory for %u timers", k);
		goto out;
	}
	/* what each has now: it is armed back to that */
	for (uint32_t j = 0; j < k; j++)
		sub[j] = timers[c[j].i];
	ret = ptimer_read_timer_state(t, sub, k, err);
	if (ret)
		goto out;
	/* an overrun count would be reset by timer_settime(): not looked at */
	for (uint32_t j = 0; j < k; j++)
		if (!sub[j].overrun) {
			c[j].old = sub[j];
			c[m] = c[j];
			sub[m++] = sub[j];
		}
	k = m;
	if (!k)
		goto out;
	/* each made to expire now: its signal goes to the thread the kernel
	 * holds, or nowhere; what each had read again right before */
	ret = run_op(t, ptimer_task_runner(t), PTIMER_OP_FIRE, sub, k, (int64_t)ptimer_now_ns() + FIRE_WAIT_NS, 0,
		     &fetched, &a, err);
	look_ns = fetched ? a.look_ns : 0;
	for (uint32_t j = 0; j < k; j++) {
		c[j].fired = j < a.n_armed;
		if (fetched)
			c[j].old = sub[j];
	}
	/* after a failure too: what was queued is taken back, each armed again */
	r = find_queued(timers, c, k, ret ? &scratch : err);
	if (!ret)
		ret = r;
	r = take_back(t, timers, c, k, ret ? &scratch : err);
	if (!ret)
		ret = r;
	r = rearm(t, sub, c, k, look_ns, ret ? &scratch : err);
	if (!ret)
		ret = r;
	for (uint32_t j = 0; !ret && j < k; j++)
		if (!c[j].queued)
			gone[c[j].i] = true;
out:
	free(sub);
	free(c);
	return ret;
}
