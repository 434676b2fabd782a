// SPDX-License-Identifier: MIT
/*
 * Queued timer signals (core/pending.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <time.h>

#include <linux/ptrace.h>	/* struct ptrace_peeksiginfo_args, PTRACE_PEEKSIGINFO_SHARED */

#include "core/pending.h"
#include "core/log.h"
#include "restorer/host/inject.h"

#define PEEK_BATCH	32	/* siginfos a PTRACE_PEEKSIGINFO call */

int ptimer_sigqueue_peek(pid_t tid, bool shared, siginfo_t **out, size_t *n)
{
	struct ptrace_peeksiginfo_args a = { .off = 0, .flags = shared ? PTRACE_PEEKSIGINFO_SHARED : 0,
					     .nr = PEEK_BATCH };
	siginfo_t *all = NULL;

	*out = NULL;
	*n = 0;
	for (;;) {
		siginfo_t *more = realloc(all, (*n + PEEK_BATCH) * sizeof(*all));
		long got;

		if (!more) {
			free(all);
			return -ENOMEM;
		}
		all = more;
		got = ptrace(PTRACE_PEEKSIGINFO, tid, &a, all + *n);
		if (got < 0) {
			int e = errno;

			free(all);
			*n = 0;
			return -e;
		}
		*n += (size_t)got;
		if (got < PEEK_BATCH)
			break;
		a.off += (uint64_t)got;
	}
	if (*n)
		*out = all;
	else
		free(all);
	return 0;
}

uint32_t ptimer_image_pending(const struct ptimer_image *img)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < img->n_timers; i++)
		k += img->timers[i].pending != 0;
	return k;
}

/* Is si one of img's pending timers' signals (the timer's own or criu's copy)? */
static bool ours(const struct ptimer_image *img, const siginfo_t *si)
{
	if (si->si_code != SI_TIMER)
		return false;
	for (uint32_t i = 0; i < img->n_timers; i++) {
		const struct ptimer_timer *tm = &img->timers[i];

		if (tm->pending && tm->timer_id == si->si_timerid && tm->signo == si->si_signo)
			return true;
	}
	return false;
}

/* One queue to mend: the entries of signal signo it holds, in order. */
struct mend {
	pid_t tid;		/* host tid the code runs in */
	int signo;
	siginfo_t *priv;	/* that thread's private entries of signo */
	size_t n_priv;
	siginfo_t *shared;	/* the process's entries of signo (shared queue) */
	size_t n_shared;
};

/* The entries of signo among q[n], copied into *out (malloc'ed). */
static int pick(const siginfo_t *q, size_t n, int signo, siginfo_t **out, size_t *k)
{
	*out = NULL;
	*k = 0;
	for (size_t i = 0; i < n; i++)
		*k += q[i].si_signo == signo;
	if (!*k)
		return 0;
	*out = malloc(*k * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	*k = 0;
	for (size_t i = 0; i < n; i++)
		if (q[i].si_signo == signo)
			(*out)[(*k)++] = q[i];
	return 0;
}

/*
 * Can every entry of m that is not ours go back from m->tid?  The kernel
 * queues a siginfo whose si_code says kill()/tgkill() (>= 0, SI_TKILL) only
 * when the sender is the process's leader (do_rt_sigqueueinfo(),
 * do_rt_tgsigqueueinfo(), kernel/signal.c).
 */
static bool can_put_back(const struct ptimer_task *t, const struct ptimer_image *img, const struct mend *m)
{
	const siginfo_t *lists[2] = { m->priv, m->shared };
	size_t lens[2] = { m->n_priv, m->n_shared };

	if (m->tid == t->pid)
		return true;
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < lens[l]; i++)
			if (!ours(img, &lists[l][i]) && (lists[l][i].si_code >= 0 || lists[l][i].si_code == SI_TKILL))
				return false;
	return true;
}

/* Data area layout for the calls below. */
#define OFF_SET		0	/* sigset_t, 8 bytes: the kernel's */
#define OFF_TS		16	/* struct timespec {0, 0}, or struct itimerspec */
#define OFF_INFO	64	/* siginfo_t, 128 bytes */

/* One call in the thread: 0 with the kernel's answer in *res, or the
 * -errno of running it (err set). */
static int call(struct ptimer_blob *b, int nr, unsigned long a0, unsigned long a1, unsigned long a2,
		unsigned long a3, long *res, struct ptimer_err *err)
{
	const unsigned long args[6] = { a0, a1, a2, a3, 0, 0 };

	return ptimer_blob_syscall(b, nr, args, res, err);
}

static const char *kerr(long res)
{
	return res < 0 && res > -4096 ? strerror((int)-res) : "unexpected answer";
}

/* Take m's entries out in m->tid, put back the ones not ours in order. */
/* Entry i of m's peeked entries, the thread's own first. */
static const siginfo_t *peeked(const struct mend *m, size_t i)
{
	return i < m->n_priv ? &m->priv[i] : &m->shared[i - m->n_priv];
}

/* Is got the entry peeked as want?  A timer's entry names its timer. */
static bool same_entry(const siginfo_t *got, const siginfo_t *want)
{
	return got->si_signo == want->si_signo && got->si_code == want->si_code &&
	       (want->si_code != SI_TIMER || got->si_timerid == want->si_timerid);
}

static int mend_queue(const struct ptimer_task *t, const struct ptimer_image *img, const struct mend *m,
		      struct ptimer_err *err)
{
	size_t total = m->n_priv + m->n_shared, room;
	uint64_t set = 1ull << (m->signo - 1);
	struct timespec zero = { 0, 0 };
	struct ptimer_blob *b;
	uint64_t data;
	pid_t vtid = ptimer_task_vtid(t, m->tid);
	bool *dropped = NULL;
	int ret, r;

	ret = ptimer_blob_open(&b, m->tid, 4, 0, ptimer_task_blob_flags(t), err);
	if (ret)
		return ret;
	data = ptimer_blob_data(b, &room);
	ret = ptimer_blob_data_rw(b, OFF_SET, &set, sizeof(set), true, err);
	if (!ret)
		ret = ptimer_blob_data_rw(b, OFF_TS, &zero, sizeof(zero), true, err);
	/* rt_sigtimedwait takes the thread's own entries first, then the
	 * process's (dequeue_signal(), kernel/signal.c): the order peeked.  A
	 * timer's own signal may be dropped at dequeue instead (Linux 6.13+:
	 * posixtimer_deliver_signal() drops it when its timer was re-armed or
	 * deleted since it was queued, as a running timer may be meanwhile):
	 * such a peeked SI_TIMER entry is passed over, and not put back. */
	dropped = calloc(total + 1, sizeof(*dropped));
	if (!dropped)
		ret = ptimer_errf(err, ENOMEM, "out of memory");
	for (size_t i = 0; !ret && i < total;) {
		siginfo_t got;
		long s;

		ret = call(b, __NR_rt_sigtimedwait, data + OFF_SET, data + OFF_INFO, data + OFF_TS, 8, &s, err);
		if (!ret && s == -EAGAIN) {
			/* nothing more: what is left was timers' signals the kernel dropped */
			for (; !ret && i < total; i++) {
				if (peeked(m, i)->si_code != SI_TIMER)
					ret = ptimer_errf(err, EPROTO, "thread %d: the queue of signal %d changed while "
							  "ptimer mended it (entry %zu, si_code %d, gone)", m->tid,
							  m->signo, i, peeked(m, i)->si_code);
				dropped[i] = true;
			}
			break;
		}
		if (!ret && s != m->signo)
			ret = ptimer_errf(err, EPROTO, "thread %d: rt_sigtimedwait for signal %d: %s", m->tid,
					  m->signo, kerr(s));
		if (!ret)
			ret = ptimer_blob_data_rw(b, OFF_INFO, &got, sizeof(got), false, err);
		while (!ret && i < total && !same_entry(&got, peeked(m, i)) && peeked(m, i)->si_code == SI_TIMER)
			dropped[i++] = true;
		if (!ret && (i == total || !same_entry(&got, peeked(m, i))))
			ret = ptimer_errf(err, EPROTO, "thread %d: the queue of signal %d changed while ptimer "
					  "mended it (entry %zu: si_code %d, peeked %d)", m->tid, m->signo, i,
					  got.si_code, i < total ? peeked(m, i)->si_code : 0);
		i++;
	}
	/* put back what is not ours, each list in its order and to its queue */
	for (size_t i = 0; !ret && i < total; i++) {
		bool priv = i < m->n_priv;
		siginfo_t si = *peeked(m, i);
		long s;

		if (ours(img, &si) || dropped[i])
			continue;
		ret = ptimer_blob_data_rw(b, OFF_INFO, &si, sizeof(si), true, err);
		if (ret)
			break;
		ret = priv ? call(b, __NR_rt_tgsigqueueinfo, (unsigned long)t->vpid, (unsigned long)vtid,
				  (unsigned long)m->signo, data + OFF_INFO, &s, err)
			   : call(b, __NR_rt_sigqueueinfo, (unsigned long)t->vpid, (unsigned long)m->signo,
				  data + OFF_INFO, 0, &s, err);
		if (!ret && s)
			ret = ptimer_errf(err, EPROTO, "thread %d: putting signal %d (si_code %d) back into its "
					  "queue failed: %s", m->tid, m->signo, si.si_code, kerr(s));
	}
	free(dropped);
	r = ptimer_blob_close(b, ret ? NULL : err);
	return ret ? ret : r;
}

/* Each pending timer expires at once (its interval kept): the kernel
 * queues the timer's own signal. */
static int expire_now(const struct ptimer_task *t, const struct ptimer_image *img, struct ptimer_err *err)
{
	struct ptimer_blob *b;
	uint64_t data;
	size_t room;
	int ret, r;

	ret = ptimer_blob_open(&b, ptimer_task_runner(t), 4, 0, ptimer_task_blob_flags(t), err);
	if (ret)
		return ret;
	data = ptimer_blob_data(b, &room);
	for (uint32_t i = 0; !ret && i < img->n_timers; i++) {
		const struct ptimer_timer *tm = &img->timers[i];
		struct itimerspec its = {
			.it_interval = { (time_t)tm->it_interval.sec, (long)tm->it_interval.nsec },
			.it_value = { 0, 1 },
		};
		long s;

		if (!tm->pending)
			continue;
		ret = ptimer_blob_data_rw(b, OFF_TS, &its, sizeof(its), true, err);
		if (ret)
			break;
		ret = call(b, __NR_timer_settime, (unsigned long)tm->timer_id, 0, data + OFF_TS, 0, &s, err);
		if (!ret && s)
			ret = ptimer_errf(err, EPROTO, "process %d: timer_settime(%d) to give its pending expiry "
					  "back failed: %s", t->pid, tm->timer_id, kerr(s));
	}
	r = ptimer_blob_close(b, ret ? NULL : err);
	return ret ? ret : r;
}

/* Mend signal signo of the private queue of thread tid, and with shared
 * also the process's queue (then tid is the thread code runs in). */
static int mend_signo(const struct ptimer_task *t, const struct ptimer_image *img, pid_t tid, int signo,
		      const siginfo_t *priv, size_t n_priv, const siginfo_t *sh, size_t n_sh,
		      struct ptimer_err *err)
{
	struct mend m = { .tid = tid, .signo = signo };
	int ret = pick(priv, n_priv, signo, &m.priv, &m.n_priv);

	if (!ret)
		ret = pick(sh, n_sh, signo, &m.shared, &m.n_shared);
	if (ret) {
		ret = ptimer_errf(err, ENOMEM, "out of memory");
	} else if (!can_put_back(t, img, &m)) {
		ptimer_log(PTIMER_LOG_WARN, "process %d: thread %d: a signal %d sent by kill() or tgkill() "
			   "waits beside a timer's; the kernel would not take it back from this thread, so "
			   "criu's copy of the timer's signal stays (it may come twice)", t->pid, tid, signo);
	} else {
		ret = mend_queue(t, img, &m, err);
	}
	free(m.priv);
	free(m.shared);
	return ret;
}

/* The signal numbers of our entries among q[n] (a bit each), 64 at most. */
static uint64_t our_signals(const struct ptimer_image *img, const siginfo_t *q, size_t n)
{
	uint64_t bits = 0;

	for (size_t i = 0; i < n; i++)
		if (ours(img, &q[i]) && q[i].si_signo >= 1 && q[i].si_signo <= 64)
			bits |= 1ull << (q[i].si_signo - 1);
	return bits;
}

int ptimer_criu_pending(const struct ptimer_task *t, const struct ptimer_image *img, struct ptimer_err *err)
{
	pid_t runner = ptimer_task_runner(t);
	siginfo_t *sh = NULL, *rp = NULL;
	size_t n_sh = 0, n_rp = 0;
	uint64_t bits;
	int ret;

	if (!ptimer_image_pending(img))
		return 0;
	ret = ptimer_sigqueue_peek(runner, true, &sh, &n_sh);
	if (!ret)
		ret = ptimer_sigqueue_peek(runner, false, &rp, &n_rp);
	if (ret) {
		ret = ptimer_errf(err, -ret, "reading the signal queues of thread %d (PTRACE_PEEKSIGINFO): %s",
				  runner, strerror(-ret));
		goto out;
	}
	/* the process's queue, through the runner (its own entries come first) */
	bits = our_signals(img, sh, n_sh);
	for (int s = 1; !ret && s <= 64; s++)
		if (bits & (1ull << (s - 1)))
			ret = mend_signo(t, img, runner, s, rp, n_rp, sh, n_sh, err);
	/* every thread's own queue (the runner's again: the above changed it) */
	for (int i = 0; !ret && i < t->n_threads; i++) {
		siginfo_t *q = NULL;
		size_t n = 0;

		ret = ptimer_sigqueue_peek(t->tids[i], false, &q, &n);
		if (ret == -ESRCH && t->tids[i] != runner) {
			ret = 0;	/* an exited leader: no queue of its own */
			continue;
		}
		if (ret) {
			ret = ptimer_errf(err, -ret, "reading the signal queue of thread %d: %s", t->tids[i],
					  strerror(-ret));
			break;
		}
		bits = our_signals(img, q, n);
		for (int s = 1; !ret && s <= 64; s++)
			if (bits & (1ull << (s - 1)))
				ret = mend_signo(t, img, t->tids[i], s, q, n, NULL, 0, err);
		free(q);
	}
	if (!ret)
		ret = expire_now(t, img, err);
out:
	free(sh);
	free(rp);
	return ret;
}
