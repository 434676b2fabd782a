// SPDX-License-Identifier: MIT
/*
 * Restore: recreate an image's timers in a stopped process with their IDs.
 *
 * Everything that can be checked from outside is checked before the target
 * is touched: IDs it already holds, threads the timers aim at, CPU-clock
 * pids.  Then the in-target blob (restorer/algo.c) does the work, all or
 * nothing: exact IDs with prctl(PR_TIMER_CREATE_RESTORE_IDS) on Linux 6.15+
 * (kernel commit ec2d0c04624b), else the create/delete loop that walks the
 * kernel's per-process ID counter (Linux 3.11+, kernel/time/posix-timers.c
 * posix_timer_add()).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/ptimer.h"
#include "restorer/host/inject.h"

#define LINEAR_BUDGET		(1u << 16)	/* pairs per blob run: ~0.2 s here */
#define LINEAR_NS_PER_PAIR	2500		/* measured here: 2.5 us a pair on 6.18 */
#define PROGRESS_EVERY_NS	3000000000ull	/* a line, not on a terminal */
#define PROGRESS_TTY_NS		250000000ull	/* bar redraw on a terminal */

static int cmp_timer_id(const void *a, const void *b)
{
	const struct ptimer_timer *x = a, *y = b;

	return (x->timer_id > y->timer_id) - (x->timer_id < y->timer_id);
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

pid_t ptimer_map_tid(const struct ptimer_task *t, const struct ptimer_image *img,
		     const struct ptimer_restore_opts *o, pid_t tid)
{
	if (tid == img->pid)
		return t->vpid;
	for (int i = 0; o && i < o->n_tid_map; i++)
		if (o->tid_map[i].from == tid)
			return ptimer_task_vtid(t, o->tid_map[i].to);
	return ptimer_task_host_tid(t, tid) ? tid : 0;
}

/* The image's timers as the target must get them, sorted by ID. */
static int map_timers(const struct ptimer_task *t, const struct ptimer_image *img,
		      const struct ptimer_restore_opts *o, struct ptimer_timer **out,
		      struct ptimer_err *err)
{
	struct ptimer_timer *w;

	for (int i = 0; o && i < o->n_tid_map; i++)
		if (!ptimer_task_vtid(t, o->tid_map[i].to))
			return ptimer_errf(err, ESRCH, "--tid-map %d=%d: %d is not a thread of process %d",
					   o->tid_map[i].from, o->tid_map[i].to, o->tid_map[i].to, t->pid);
	w = malloc(((size_t)img->n_timers + 1) * sizeof(*w));
	if (!w)
		return ptimer_errf(err, ENOMEM, "out of memory for %u timers", img->n_timers);
	memcpy(w, img->timers, (size_t)img->n_timers * sizeof(*w));
	for (uint32_t i = 0; i < img->n_timers; i++) {
		struct ptimer_timer *tm = &w[i];

		/* criu dumped the queued siginfo and queues it again itself
		 * (criu/cr-restore.c, restorer signal queues): never twice */
		if (img->criu_mode != PTIMER_CRIU_NONE)
			tm->pending = 0;

		if (tm->clock_id < 0 && ~(tm->clock_id >> 3)) {
			pid_t from = ~(tm->clock_id >> 3), to = ptimer_map_tid(t, img, o, from);

			if (!to) {
				int32_t id = tm->timer_id;

				free(w);
				return ptimer_errf(err, ESRCH, "timer %d uses the CPU clock of thread %d of the "
						   "dumped process; process %d has no such thread: pass "
						   "--tid-map %d=TID", id, from, t->pid, from);
			}
			tm->clock_id = (int32_t)(((uint32_t)~to << 3) | ((uint32_t)tm->clock_id & 7));
		}
		if (!(tm->sigev_notify & PTIMER_SIGEV_THREAD_ID)) {
			tm->notify_tid = t->vpid;
			continue;
		}
		pid_t to = ptimer_map_tid(t, img, o, tm->notify_tid);

		if (!to) {
			int32_t id = tm->timer_id, tid = tm->notify_tid;

			free(w);
			return ptimer_errf(err, ESRCH, "timer %d is aimed at thread %d of the dumped process; "
					   "process %d has no thread %d: pass --tid-map %d=TID", id, tid,
					   t->pid, tid, tid);
		}
		tm->notify_tid = to;
	}
	qsort(w, img->n_timers, sizeof(*w), cmp_timer_id);
	*out = w;
	return 0;
}

/* IDs the target holds now, sorted; refuses when one is wanted. */
static int read_occupied(const struct ptimer_task *t, const struct ptimer_timer *w, uint32_t n,
			 int32_t **occ, uint32_t *n_occ, struct ptimer_err *err)
{
	struct ptimer_timer *cur;
	uint32_t n_cur, clash = 0;
	char list[160] = "";
	int32_t *ids;
	int ret;

	ret = ptimer_proc_read_timers(t->pid, &cur, &n_cur, err);
	if (ret)
		return ret;
	ids = malloc(((size_t)n_cur + 1) * sizeof(*ids));
	if (!ids) {
		free(cur);
		return ptimer_errf(err, ENOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < n_cur; i++)
		ids[i] = cur[i].timer_id;
	free(cur);
	qsort(ids, n_cur, sizeof(*ids), cmp_i32);
	for (uint32_t i = 0, j = 0; i < n && j < n_cur;) {
		if (w[i].timer_id < ids[j]) {
			i++;
		} else if (w[i].timer_id > ids[j]) {
			j++;
		} else {
			if (clash++ < 8)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%d",
					 clash > 1 ? ", " : "", ids[j]);
			i++;
			j++;
		}
	}
	if (clash) {
		free(ids);
		return ptimer_errf(err, EEXIST, "process %d already has timer ID%s %s%s from the image; "
				   "restore into a process without them (nothing was changed)", t->pid,
				   clash > 1 ? "s" : "", list, clash > 8 ? ", ..." : "");
	}
	*occ = ids;
	*n_occ = n_cur;
	return 0;
}

static const char *notify_str(int32_t notify)
{
	return ptimer_notify_name(notify);
}

/* One line for a failed blob verdict. */
static int blob_failure(const struct ptimer_task *t, const struct ptimer_timer *w, uint32_t n,
			const struct ptimer_blob_args *a, struct ptimer_err *err)
{
	const struct ptimer_timer *tm = a->fail_index < n ? &w[a->fail_index] : NULL;
	int32_t id = tm ? tm->timer_id : -1;
	char clk[64] = "?";

	if (tm)
		ptimer_clock_name(tm->clock_id, clk, sizeof(clk));
	switch (a->result) {
	case PTIMER_E_COUNTER:
		return ptimer_errf(err, EPROTO, "process %d: the kernel did not hand out timer IDs one by one "
				   "(wanted %d on the way to %d, got %d): its IDs are not per process "
				   "(Linux < 3.11?) or something else creates timers; restored nothing",
				   t->pid, a->counter, id, a->got_id);
	case PTIMER_E_PASSED:
		return ptimer_errf(err, ERANGE, "process %d: the kernel's timer ID counter (%d) is past "
				   "ID %d; restored nothing (pass --allow-wrap, or use Linux 6.15+)",
				   t->pid, a->counter, id);
	case PTIMER_E_GOTID:
		return ptimer_errf(err, EPROTO, "process %d: asked the kernel for timer ID %d, got %d; "
				   "restored nothing", t->pid, id, a->got_id);
	case PTIMER_E_ORDER:
		return ptimer_errf(err, EINVAL, "internal: timers not in creation order at %d", id);
	case PTIMER_E_ABI:
		return ptimer_errf(err, EINVAL, "internal: restorer ABI mismatch");
	case -EAGAIN:
		return ptimer_errf(err, EAGAIN, "process %d: timer_create for ID %d: EAGAIN: the pending "
				   "signal limit (RLIMIT_SIGPENDING, ulimit -i) of the user is reached or no "
				   "ID is free; raise the limit; restored nothing", t->pid, id);
	case -EOPNOTSUPP:
		return ptimer_errf(err, EOPNOTSUPP, "process %d: timer %d: clock %s has no timers on this "
				   "kernel (alarm clocks need an RTC); restored nothing", t->pid, id, clk);
	case -EPERM:
		return ptimer_errf(err, EPERM, "process %d: timer %d: clock %s needs CAP_WAKE_ALARM in the "
				   "process; restored nothing", t->pid, id, clk);
	case -EBUSY:
		return ptimer_errf(err, EBUSY, "process %d: timer ID %d is taken in the process; restored "
				   "nothing", t->pid, id);
	case -EINVAL:
		if (tm && (tm->sigev_notify & PTIMER_SIGEV_THREAD_ID))
			return ptimer_errf(err, EINVAL, "process %d: timer %d: the kernel refused to aim it "
					   "at thread %d (EINVAL); restored nothing", t->pid, id,
					   tm->notify_tid);
		return ptimer_errf(err, EINVAL, "process %d: timer %d (clock %s, %s, signal %d) refused "
				   "by the kernel: EINVAL; restored nothing", t->pid, id, clk,
				   notify_str(tm ? tm->sigev_notify : 0), tm ? tm->signo : 0);
	default:
		return ptimer_errf(err, a->result < 0 ? (int)a->result : EIO, "process %d: restoring timer "
				   "%d failed: %s; restored nothing", t->pid, id,
				   a->result < 0 && a->result > -4096 ? strerror((int)-a->result) : "restorer fault");
	}
}

/*
 * Linear mode plan: the counter after the probe, the creation order (IDs at
 * or above it first; the ones below only with allow_wrap) and the number of
 * create/delete pairs it costs.  Refuses unreachable IDs up front.
 */
static int plan_linear(const struct ptimer_task *t, struct ptimer_timer *w, uint32_t n,
		       const int32_t *occ, uint32_t n_occ, int32_t counter, bool allow_wrap,
		       bool forced, uint64_t *pairs, struct ptimer_err *err)
{
	uint32_t below = 0, o = 0;
	uint64_t span, skipped = 0;
	int32_t last;

	*pairs = 0;
	if (n == 0)
		return 0;
	while (below < n && w[below].timer_id < counter)
		below++;
	last = below ? w[below - 1].timer_id : w[n - 1].timer_id;
	span = below ? (uint64_t)PTIMER_ID_MAX + 1 - (uint64_t)counter + (uint64_t)last + 1
		     : (uint64_t)last - (uint64_t)counter + 1;
	/* occupied IDs on the way are skipped by the kernel for free */
	for (o = 0; o < n_occ; o++)
		if (below ? (occ[o] >= counter || occ[o] <= last) : (occ[o] >= counter && occ[o] <= last))
			skipped++;
	*pairs = span > n + skipped ? span - n - skipped : 0;
	if (below && !allow_wrap) {
		char list[160] = "";

		for (uint32_t i = 0; i < below && i < 8; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%d", i ? ", " : "",
				 w[i].timer_id);
		return ptimer_errf(err, ERANGE, "process %d: linear mode%s, and the process's timer ID "
				   "counter is at %d, past ID%s %s%s; reaching %s needs wrapping through "
				   "INT_MAX: %llu create/delete pairs, about %llu s (pass --allow-wrap to "
				   "pay that); nothing restored", t->pid,
				   forced ? " (--mode linear)" : " (no exact-ID timer_create before Linux 6.15)",
				   counter, below > 1 ? "s" : "", list, below > 8 ? ", ..." : "",
				   below > 1 ? "them" : "it", (unsigned long long)*pairs,
				   (unsigned long long)(*pairs * LINEAR_NS_PER_PAIR / 1000000000ull));
	}
	if (below) {
		/* rotate: [counter..] first, then the wrapped ones */
		struct ptimer_timer *tmp = malloc((size_t)below * sizeof(*tmp));

		if (!tmp)
			return ptimer_errf(err, ENOMEM, "out of memory");
		memcpy(tmp, w, (size_t)below * sizeof(*tmp));
		memmove(w, w + below, (size_t)(n - below) * sizeof(*w));
		memcpy(w + (n - below), tmp, (size_t)below * sizeof(*tmp));
		free(tmp);
	}
	return 0;
}

/*
 * Linear progress on stderr: on a terminal a bar redrawn in place with the
 * rate and the time left; otherwise (logs, CI) one line every few seconds.
 */
static void progress(const struct ptimer_task *t, const struct ptimer_blob_args *a, uint64_t total,
		     uint64_t start_ns, bool tty, bool last)
{
	uint64_t el = ptimer_now_ns() - start_ns, done = a->pairs_done < total ? a->pairs_done : total;
	double rate = el ? (double)a->pairs_done * 1e9 / (double)el : 0;
	double eta = rate > 0 ? (double)(total - done) / rate : 0;
	double frac = total ? (double)done / (double)total : 1.0;

	if (tty) {
		char bar[31];
		int fill = (int)(frac * 30);

		memset(bar, '#', (size_t)fill);
		memset(bar + fill, '.', (size_t)(30 - fill));
		bar[30] = '\0';
		fprintf(stderr, "\rptimer: [%s] %3.0f%% %llu/%llu pairs %.2f Mpairs/s ETA %.0f s  %s", bar,
			100.0 * frac, (unsigned long long)done, (unsigned long long)total, rate / 1e6, eta,
			last ? "\n" : "");
		return;
	}
	fprintf(stderr, "ptimer: process %d: linear mode: %llu/%llu pairs (%.0f%%), %u/%u timers, "
		"%.2f Mpairs/s, %.0f s left\n", t->pid, (unsigned long long)done, (unsigned long long)total,
		100.0 * frac, a->n_created, a->n_timers, rate / 1e6, eta);
}

/* Check what the kernel now shows against what we asked for. */
static int verify_restored(const struct ptimer_task *t, const struct ptimer_timer *w, uint32_t n,
			   struct ptimer_err *err)
{
	struct ptimer_timer *cur;
	uint32_t n_cur;
	int ret = ptimer_proc_read_timers(t->pid, &cur, &n_cur, err);

	if (ret)
		return ret;
	qsort(cur, n_cur, sizeof(*cur), cmp_timer_id);
	for (uint32_t i = 0; i < n && !ret; i++) {
		const struct ptimer_timer *want = &w[i];
		struct ptimer_timer *got = bsearch(want, cur, n_cur, sizeof(*cur), cmp_timer_id);
		pid_t host = want->sigev_notify & PTIMER_SIGEV_THREAD_ID
			     ? ptimer_task_host_tid(t, want->notify_tid) : t->pid;

		if (!got)
			ret = ptimer_errf(err, EPROTO, "process %d: timer %d missing after restore", t->pid,
					  want->timer_id);
		else if (got->clock_id != want->clock_id || got->sigev_notify != want->sigev_notify ||
			 got->signo != want->signo || got->sival != want->sival || got->notify_tid != host)
			ret = ptimer_errf(err, EPROTO, "process %d: timer %d after restore differs from the "
					  "image (clock %d/%d, notify %d/%d, signal %d/%d, tid %d/%d)", t->pid,
					  want->timer_id, got->clock_id, want->clock_id, got->sigev_notify,
					  want->sigev_notify, got->signo, want->signo, got->notify_tid, host);
	}
	free(cur);
	return ret;
}

/* Delete what the blob created so far (a->n_created of the timers). */
static void rollback(const struct ptimer_task *t, struct ptimer_blob *b, const struct ptimer_blob_args *a)
{
	struct ptimer_blob_args rb = *a;

	if (!a->n_created)
		return;
	rb.op = PTIMER_OP_ROLLBACK;
	if (ptimer_blob_call(b, &rb, NULL) || rb.result)
		ptimer_log(PTIMER_LOG_ERROR, "process %d: removing the %u timers created so far failed; "
			   "it may hold some of the image's timers", t->pid, a->n_created);
}

/*
 * A held stop signal ended a linear restore between chunks; everything made
 * was removed.  The kernel's ID counter cannot go back (next_posix_timer_id
 * in kernel/time/posix-timers.c only grows), so say where it stands and
 * whether a retry into this process can still reach every ID.
 */
static int interrupted(const struct ptimer_task *t, const struct ptimer_timer *w, uint32_t n,
		       const struct ptimer_blob_args *a, uint64_t total, int sig, struct ptimer_err *err)
{
	int32_t lowest = INT32_MAX;
	char next[160];

	for (uint32_t i = 0; i < n; i++)
		if (w[i].timer_id < lowest)
			lowest = w[i].timer_id;
	if (n && lowest < a->counter)
		snprintf(next, sizeof(next), "its timer ID counter stays at %d, past ID %d, so a retry into it is "
			 "refused (or needs --allow-wrap): restore into a fresh process", a->counter, lowest);
	else
		snprintf(next, sizeof(next), "its timer ID counter stays at %d; a retry goes on from there",
			 a->counter);
	return ptimer_errf(err, EINTR, "process %d: interrupted by signal %d (%s) after %llu of %llu pairs; "
			   "the %u timers made so far were removed: restored nothing; %s", t->pid, sig,
			   strsignal(sig), (unsigned long long)a->pairs_done, (unsigned long long)total,
			   a->n_created, next);
}

static int run_restore(const struct ptimer_task *t, struct ptimer_blob *b, struct ptimer_timer *w,
		       uint32_t n, struct ptimer_blob_args *a, uint64_t total, const struct ptimer_restore_opts *o,
		       struct ptimer_err *err)
{
	bool show = o && o->progress && a->mode == PTIMER_MODE_LINEAR;
	bool tty = show && isatty(STDERR_FILENO);
	uint64_t start = ptimer_now_ns(), last = start, every = tty ? PROGRESS_TTY_NS : PROGRESS_EVERY_NS;
	bool shown = false;
	int ret;

	a->op = PTIMER_OP_RESTORE;
	a->budget = a->mode == PTIMER_MODE_LINEAR ? LINEAR_BUDGET : 0;
	for (;;) {
		ret = ptimer_blob_call(b, a, err);
		if (ret) {
			/* a still holds the last run's progress: undo that much */
			rollback(t, b, a);
			return ret;
		}
		if (a->result != PTIMER_AGAIN)
			break;
		int sig = ptimer_pending_stop_signal();

		if (sig) {
			if (shown && tty)
				fputc('\n', stderr);
			rollback(t, b, a);
			return interrupted(t, w, n, a, total, sig, err);
		}
		if (show && ptimer_now_ns() - last >= every) {
			last = ptimer_now_ns();
			progress(t, a, total, start, tty, false);
			shown = true;
		}
	}
	if (shown)
		progress(t, a, total, start, tty, true);
	if (a->result)
		return blob_failure(t, w, n, a, err);
	return 0;
}

int ptimer_restore_task(struct ptimer_task *t, const struct ptimer_image *img,
			const struct ptimer_restore_opts *o, struct ptimer_restore_stats *st,
			struct ptimer_err *err)
{
	enum ptimer_restore_mode want_mode = o ? o->mode : PTIMER_RESTORE_AUTO;
	struct ptimer_blob_args a = { 0 };
	struct ptimer_timer *w = NULL;
	struct ptimer_blob *b = NULL;
	int32_t *occ = NULL;
	uint32_t n = img->n_timers, n_occ = 0;
	uint64_t t0 = ptimer_now_ns(), t1, pairs = 0;
	enum ptimer_rseq_slice slice_mode = o ? o->rseq_slice : PTIMER_RSEQ_SLICE_AUTO;
	struct ptimer_slice_target *sv = NULL;
	int ret, r, n_sv = 0;

	if (st)
		memset(st, 0, sizeof(*st));
	ret = map_timers(t, img, o, &w, err);
	if (ret)
		return ret;
	ret = read_occupied(t, w, n, &occ, &n_occ, err);
	if (ret)
		goto out;
	/* rseq slice extension: every check (require) before any change */
	if (slice_mode != PTIMER_RSEQ_SLICE_OFF)
		ret = ptimer_slice_targets(t, img, o, &sv, &n_sv, err);
	if (!ret)
		ret = ptimer_slice_prepare(t->pid, sv, n_sv, slice_mode, NULL, err);
	if (!ret)
		ret = ptimer_slice_apply(t->pid, sv, n_sv, slice_mode, NULL, err);
	if (ret || n == 0)
		goto out;

	t1 = ptimer_now_ns();
	ret = ptimer_blob_open(&b, ptimer_task_runner(t), n, n_occ, err);
	if (ret)
		goto out;
	ret = ptimer_blob_load(b, w, occ, err);
	if (ret)
		goto out_close;

	a.op = PTIMER_OP_PROBE;
	a.n_timers = n;
	a.n_occupied = n_occ;
	a.mode = want_mode == PTIMER_RESTORE_LINEAR ? PTIMER_MODE_LINEAR : PTIMER_MODE_EXACT;
	ret = ptimer_blob_call(b, &a, err);
	if (ret)
		goto out_close;
	if (a.prctl_get == 1) {
		ret = ptimer_errf(err, EBUSY, "process %d is already in exact timer ID mode "
				  "(PR_TIMER_CREATE_RESTORE_IDS on): another restore is running, or one "
				  "crashed; nothing restored", t->pid);
		goto out_close;
	}
	if (a.prctl_get < 0 && want_mode == PTIMER_RESTORE_EXACT) {
		ret = ptimer_errf(err, EOPNOTSUPP, "process %d: this kernel has no "
				  "prctl(PR_TIMER_CREATE_RESTORE_IDS) (Linux 6.15+): use --mode linear "
				  "or --mode auto; nothing restored", t->pid);
		goto out_close;
	}
	if (a.prctl_get == 0 && want_mode != PTIMER_RESTORE_LINEAR) {
		a.mode = PTIMER_MODE_EXACT;
	} else {
		if (a.result) {
			ret = blob_failure(t, w, n, &a, err);
			goto out_close;
		}
		uint32_t done = a.n_created;	/* the probe may have made timers[0] */

		a.mode = PTIMER_MODE_LINEAR;
		a.counter = (int32_t)(((uint32_t)a.probe_id + 1) & PTIMER_ID_MAX);
		ret = plan_linear(t, w + done, n - done, occ, n_occ, a.counter, o && o->allow_wrap,
				  want_mode == PTIMER_RESTORE_LINEAR, &pairs, err);
		if (ret) {
			rollback(t, b, &a);
			goto out_close;
		}
		a.allow_wrap = o && o->allow_wrap;
		ptimer_log(PTIMER_LOG_INFO, "process %d: no exact-ID timer_create%s; linear mode: %llu "
			   "create/delete pairs for %u timers (IDs up to %d), about %.1f s", t->pid,
			   want_mode == PTIMER_RESTORE_LINEAR ? " (forced)" : " on this kernel",
			   (unsigned long long)pairs, n, w[n - 1].timer_id,
			   (double)pairs * LINEAR_NS_PER_PAIR / 1e9);
		ret = ptimer_blob_load(b, w, occ, err);
		if (ret)
			goto out_close;
	}
	a.n_timers = n;
	a.n_occupied = n_occ;
	a.phase = 0;
	ret = run_restore(t, b, w, n, &a, pairs, o, err);
	if (!ret && o && o->verify) {
		ret = verify_restored(t, w, n, err);
		if (ret)
			rollback(t, b, &a);
	}
	if (st) {
		st->mode = (int)a.mode;
		st->pairs = a.pairs_done;
		st->ns_inject = ptimer_now_ns() - t1;
	}
out_close:
	r = ptimer_blob_close(b, ret ? NULL : err);
	if (!ret)
		ret = r;
out:
	if (ret)
		ptimer_slice_undo(t->pid, sv, n_sv, NULL);
	if (st)
		st->ns_total = ptimer_now_ns() - t0;
	free(sv);
	free(w);
	free(occ);
	return ret;
}

int ptimer_restore_slice_task(struct ptimer_task *t, const struct ptimer_image *img,
			      const struct ptimer_restore_opts *o, struct ptimer_err *err)
{
	enum ptimer_rseq_slice mode = o ? o->rseq_slice : PTIMER_RSEQ_SLICE_AUTO;
	struct ptimer_slice_target *sv = NULL;
	int n_sv = 0, ret = 0;

	if (mode == PTIMER_RSEQ_SLICE_OFF)
		return 0;
	ret = ptimer_slice_targets(t, img, o, &sv, &n_sv, err);
	if (!ret)
		ret = ptimer_slice_prepare(t->pid, sv, n_sv, mode, NULL, err);
	if (!ret)
		ret = ptimer_slice_apply(t->pid, sv, n_sv, mode, NULL, err);
	if (ret)
		ptimer_slice_undo(t->pid, sv, n_sv, NULL);
	free(sv);
	return ret;
}

/* Timing fields: interval equal, value not later than dumped (0 stays 0). */
static int verify_timing(const struct ptimer_task *t, const struct ptimer_timer *w, uint32_t n,
			 struct ptimer_err *err)
{
	struct ptimer_timer *got = malloc(((size_t)n + 1) * sizeof(*got));
	int ret;

	if (!got)
		return ptimer_errf(err, ENOMEM, "out of memory");
	memcpy(got, w, (size_t)n * sizeof(*got));
	ret = ptimer_read_timer_state(t, got, n, err);
	for (uint32_t i = 0; i < n && !ret; i++) {
		const struct ptimer_ts *wv = &w[i].it_value, *gv = &got[i].it_value;
		bool w_armed = wv->sec || wv->nsec, g_armed = gv->sec || gv->nsec;
		/*
		 * Not later than dumped; a periodic timer may have expired since it
		 * was armed and reloaded from its interval, so up to that is fine.
		 */
		const struct ptimer_ts *lim = wv;
		bool later;

		if (w[i].it_interval.sec > wv->sec ||
		    (w[i].it_interval.sec == wv->sec && w[i].it_interval.nsec > wv->nsec))
			lim = &w[i].it_interval;
		later = gv->sec > lim->sec || (gv->sec == lim->sec && gv->nsec > lim->nsec);

		/* A disarmed timer reads back with it_interval 0 (posix-timers.c). */
		if (w_armed && (got[i].it_interval.sec != w[i].it_interval.sec ||
				got[i].it_interval.nsec != w[i].it_interval.nsec))
			ret = ptimer_errf(err, EPROTO, "process %d: timer %d has it_interval %lld.%09lld, the "
					  "image %lld.%09lld", t->pid, w[i].timer_id,
					  (long long)got[i].it_interval.sec, (long long)got[i].it_interval.nsec,
					  (long long)w[i].it_interval.sec, (long long)w[i].it_interval.nsec);
		else if (w_armed != g_armed && !(w_armed && w[i].it_interval.sec == 0 &&
						 w[i].it_interval.nsec == 0))
			ret = ptimer_errf(err, EPROTO, "process %d: timer %d is %s, the image has it %s",
					  t->pid, w[i].timer_id, g_armed ? "armed" : "disarmed",
					  w_armed ? "armed" : "disarmed");
		else if (later)
			ret = ptimer_errf(err, EPROTO, "process %d: timer %d expires in %lld.%09lld s, later "
					  "than the image's %lld.%09lld", t->pid, w[i].timer_id,
					  (long long)gv->sec, (long long)gv->nsec, (long long)wv->sec,
					  (long long)wv->nsec);
	}
	free(got);
	return ret;
}

int ptimer_verify_task(struct ptimer_task *t, const struct ptimer_image *img,
		       const struct ptimer_restore_opts *o, struct ptimer_err *err)
{
	struct ptimer_timer *w = NULL;
	int ret = map_timers(t, img, o, &w, err);

	if (!ret)
		ret = verify_restored(t, w, img->n_timers, err);
	if (!ret && img->n_timers)
		ret = verify_timing(t, w, img->n_timers, err);
	free(w);
	return ret;
}

int ptimer_restore(pid_t pid, const char *image_path, const struct ptimer_restore_opts *o,
		   struct ptimer_restore_stats *st, struct ptimer_err *err)
{
	struct ptimer_image img;
	struct ptimer_task t;
	int ret;

	ret = ptimer_image_read(image_path, &img, err);
	if (ret)
		return ret;
	ret = ptimer_task_seize(&t, pid, err);
	if (!ret) {
		ret = ptimer_restore_task(&t, &img, o, st, err);
		ptimer_task_release(&t);
	}
	ptimer_image_free(&img);
	return ret;
}
