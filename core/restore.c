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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/restore.h"
#include "core/log.h"
#include "core/pending.h"
#include "core/timer_state.h"
#include "core/proc_timers.h"
#include "core/rseq.h"
#include "core/task.h"
#include "core/util.h"
#include "lib/cmp.h"
#include "lib/fault_nth.h"
#include "lib/procfs.h"
#include "restorer/host/inject.h"

#define LINEAR_BUDGET		(1u << 16)	/* pairs per blob run: ~0.2 s here */
#define LINEAR_NS_PER_PAIR	1000		/* make bench (d): 0.97 us a pair on 6.18 */
#define PROGRESS_EVERY_NS	3000000000ull	/* a line, not on a terminal */

static pid_t map_tid(const struct ptimer_task *t, const struct ptimer_image *img,
		     const struct ptimer_restore_opts *o, pid_t tid)
{
	return ptimer_map_tid(t, img->pid, o ? o->tid_map : NULL, o ? o->n_tid_map : 0, tid);
}

/* glibc's and musl's SIGTIMER: the signal their SIGEV_THREAD helper waits for */
#define LIBC_SIGTIMER	32

/*
 * A libc SIGEV_THREAD timer going into another process.  glibc and musl
 * implement SIGEV_THREAD as SIGEV_THREAD_ID with signal 32 to a helper
 * thread of theirs, sival pointing at their own record of the callback
 * (glibc sysdeps/unix/sysv/linux/timer_create.c, musl src/time/
 * timer_create.c): in another process that pointer means nothing, and the
 * helper is another thread.  The same process (same pid, the helper still
 * there under its tid, no --tid-map for it) is fine.
 */
static int libc_sigev_thread(const struct ptimer_task *t, const struct ptimer_image *img,
			     const struct ptimer_restore_opts *o, const struct ptimer_timer *tm,
			     struct ptimer_err *err)
{
	bool same = img->pid == t->vpid && ptimer_task_host_tid(t, tm->notify_tid);

	if (img->criu_mode != PTIMER_IMG_STANDALONE || (o && o->force_signals) ||
	    !(tm->sigev_notify & PTIMER_SIGEV_THREAD_ID) || tm->signo != LIBC_SIGTIMER)
		return 0;
	for (int i = 0; o && i < o->n_tid_map; i++)
		same = same && o->tid_map[i].from != tm->notify_tid;
	if (same)
		return 0;
	return ptimer_errf(err, EXDEV, "timer %d is a SIGEV_THREAD timer of glibc or musl (signal %d to their "
			   "helper thread %d, sival %#llx pointing into the dumped process's memory): its "
			   "callback cannot move into process %d, whose helper thread and memory are others; "
			   "restore it with criu, which brings the memory along, or pass --force-signals; "
			   "nothing restored", tm->timer_id, tm->signo, tm->notify_tid,
			   (unsigned long long)tm->sival, t->pid);
}

/* A signal mask line of /proc/PID[/task/TID]/status ("SigBlk", ...); 0 when unreadable. */
static uint64_t status_mask(pid_t pid, pid_t tid, const char *key)
{
	char buf[32];

	return ptimer_proc_status(pid, tid, key, buf, sizeof(buf)) ? 0 : strtoull(buf, NULL, 16);
}

/* What a signal nobody takes does to the process (signal(7) "Standard signals"). */
static const char *default_action(int sig)
{
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
		return NULL;	/* ignored */
	case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
		return "stop";
	case SIGQUIT: case SIGILL: case SIGABRT: case SIGFPE: case SIGSEGV: case SIGBUS:
	case SIGSYS: case SIGTRAP: case SIGXCPU: case SIGXFSZ:
		return "kill, with a core dump,";
	default:
		return "kill";	/* the rest, real-time signals too */
	}
}

/*
 * Standalone: will the target take each timer's signal?  The receiving
 * thread (SIGEV_THREAD_ID), or for a process-directed signal every thread,
 * must block it, or the process must handle or ignore it, or its default
 * must be to ignore it.  Else an armed timer is refused (its first expiry
 * would kill or stop the process) and a disarmed one warned about.
 */
static int check_signals(const struct ptimer_task *t, const struct ptimer_image *img,
			 const struct ptimer_restore_opts *o, const struct ptimer_timer *w, uint32_t n,
			 struct ptimer_err *err)
{
	uint64_t taken, all_block = ~0ull;

	if (img->criu_mode != PTIMER_IMG_STANDALONE || (o && o->force_signals))
		return 0;
	taken = status_mask(t->pid, 0, "SigCgt") | status_mask(t->pid, 0, "SigIgn");
	for (int i = 0; i < t->n_threads; i++)	/* a zombie leader takes no signal */
		if (!ptimer_thread_exiting(t->pid, t->tids[i]))
			all_block &= status_mask(t->pid, t->tids[i], "SigBlk");
	for (uint32_t i = 0; i < n; i++) {
		const struct ptimer_timer *tm = &w[i];
		bool thread = tm->sigev_notify & PTIMER_SIGEV_THREAD_ID;
		pid_t tid = thread ? ptimer_task_host_tid(t, tm->notify_tid) : 0;
		uint64_t bit, blocked;
		const char *act;

		if ((tm->sigev_notify & ~PTIMER_SIGEV_THREAD_ID) != PTIMER_SIGEV_SIGNAL ||
		    tm->signo < 1 || tm->signo > 64)
			continue;
		bit = 1ull << (tm->signo - 1);
		blocked = thread ? status_mask(t->pid, tid, "SigBlk") : all_block;
		act = default_action(tm->signo);
		if ((taken & bit) || (blocked & bit) || !act)
			continue;
		if (!tm->it_value.sec && !tm->it_value.nsec) {
			ptimer_log(PTIMER_LOG_WARN, "process %d: timer %d sends signal %d (%s) to %s%d, which "
				   "neither handles, ignores nor blocks it: armed, its first expiry would %s "
				   "the process", t->pid, tm->timer_id, tm->signo, strsignal(tm->signo),
				   thread ? "thread " : "process ", thread ? tid : t->pid, act);
			continue;
		}
		return ptimer_errf(err, EXDEV, "timer %d sends signal %d (%s) to %s%d, which neither handles, "
				   "ignores nor blocks it: its first expiry would %s process %d; restore into "
				   "a process that takes it (or map it with --tid-map to a thread that does), "
				   "or pass --force-signals; nothing restored", tm->timer_id, tm->signo,
				   strsignal(tm->signo), thread ? "thread " : "process ", thread ? tid : t->pid,
				   act, t->pid);
	}
	return 0;
}

/*
 * What to do about a thread of the image the target lacks: the command's
 * option for a standalone image, none for criu's (criu restores every tid;
 * the plugin's own checks name the checkpoint).
 */
static const char *tid_hint(const struct ptimer_image *img, pid_t tid, char *buf, size_t len)
{
	if (img->criu_mode != PTIMER_IMG_STANDALONE)
		snprintf(buf, len, "; the image is not of the checkpoint criu restored");
	else
		snprintf(buf, len, ": pass --tid-map %d=TID", tid);
	return buf;
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
		if (img->criu_mode != PTIMER_IMG_STANDALONE)
			tm->pending = 0;

		if (tm->clock_id < 0 && ~(tm->clock_id >> 3)) {
			pid_t from = ~(tm->clock_id >> 3), to = map_tid(t, img, o, from);

			/* through criu: another task of the tree, whose pid criu
			 * restored as it was (the clock names it as the task sees it) */
			if (!to && img->criu_mode != PTIMER_IMG_STANDALONE)
				to = from;
			if (!to) {
				int32_t id = tm->timer_id;
				char h[80];

				free(w);
				return ptimer_errf(err, ESRCH, "timer %d uses the CPU clock of thread %d of the "
						   "dumped process; process %d has no such thread%s", id, from, t->pid,
						   tid_hint(img, from, h, sizeof(h)));
			}
			tm->clock_id = (int32_t)(((uint32_t)~to << 3) | ((uint32_t)tm->clock_id & 7));
		}
		if (tm->clock_tid) {
			pid_t to = map_tid(t, img, o, tm->clock_tid);

			if (!to) {
				int32_t id = tm->timer_id, tid = tm->clock_tid;
				char h[80];

				free(w);
				return ptimer_errf(err, ESRCH, "timer %d measures the CPU time of thread %d of the "
						   "dumped process (CLOCK_THREAD_CPUTIME_ID); process %d has no "
						   "thread %d%s", id, tid, t->pid, tid, tid_hint(img, tid, h, sizeof(h)));
			}
			tm->clock_tid = to;
		}
		if (!(tm->sigev_notify & PTIMER_SIGEV_THREAD_ID)) {
			tm->notify_tid = t->vpid;
			continue;
		}
		int ret = libc_sigev_thread(t, img, o, tm, err);

		if (ret) {
			free(w);
			return ret;
		}
		pid_t to = map_tid(t, img, o, tm->notify_tid);

		if (!to) {
			int32_t id = tm->timer_id, tid = tm->notify_tid;
			char h[80];

			free(w);
			return ptimer_errf(err, ESRCH, "timer %d is aimed at thread %d of the dumped process; "
					   "process %d has no thread %d%s", id, tid, t->pid, tid,
					   tid_hint(img, tid, h, sizeof(h)));
		}
		tm->notify_tid = to;
	}
	qsort(w, img->n_timers, sizeof(*w), ptimer_timer_cmp_id);
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
	qsort(ids, n_cur, sizeof(*ids), ptimer_cmp_int);
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
	/* a failure about no timer: exact-ID mode could not be switched on */
	if (!tm && a->result < 0 && a->result > -4096)
		return ptimer_errf(err, (int)-a->result, "process %d: the kernel refused %s: %s; restored nothing",
				   t->pid, a->mode == PTIMER_MODE_EXACT ? "exact-ID mode (prctl "
				   "PR_TIMER_CREATE_RESTORE_IDS, ON)" : "the restore's first step",
				   strerror((int)-a->result));
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

/* Hand the linear loop's progress to the caller's callback. */
static void progress(const struct ptimer_task *t, const struct ptimer_blob_args *a, uint64_t total,
		     uint64_t start_ns, const struct ptimer_restore_opts *o, bool last)
{
	struct ptimer_progress p = {
		.pid = t->pid,
		.pairs_done = a->pairs_done < total ? a->pairs_done : total,
		.pairs_total = total,
		.n_created = a->n_created,
		.n_timers = a->n_timers,
		.ns_elapsed = ptimer_now_ns() - start_ns,
		.last = last,
	};

	o->progress(&p, o->progress_ctx);
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
	qsort(cur, n_cur, sizeof(*cur), ptimer_timer_cmp_id);
	for (uint32_t i = 0; i < n && !ret; i++) {
		const struct ptimer_timer *want = &w[i];
		struct ptimer_timer *got = bsearch(want, cur, n_cur, sizeof(*cur), ptimer_timer_cmp_id);
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

/*
 * Delete what the blob created so far (a->n_created of the timers).  A
 * process that is gone (or being killed) holds nothing any more: the error
 * that ended the restore already says it exited, and nothing is logged.
 */
static void rollback(const struct ptimer_task *t, struct ptimer_blob *b, const struct ptimer_blob_args *a)
{
	struct ptimer_blob_args rb;
	struct ptimer_err e;
	uint32_t made;
	int r;

	/* the target's copy: a run that failed on the way updated only that */
	if (ptimer_blob_args_read(b, &rb, NULL) || rb.abi_version != PTIMER_ABI_VERSION ||
	    rb.n_created > rb.n_timers)
		rb = *a;
	if (!rb.n_created)
		return;
	made = rb.n_created;
	rb.op = PTIMER_OP_ROLLBACK;
	r = ptimer_blob_call(b, &rb, &e);
	if (r == -ESRCH)
		return;
	if (r || rb.result)
		ptimer_log(PTIMER_LOG_ERROR, "process %d: removing the %u timers created so far failed; "
			   "it may hold some of the image's timers", t->pid, made);
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

/*
 * The blob's runs until done (linear: LINEAR_BUDGET pairs each).  Linear
 * progress goes to o->progress every progress_every_ns between runs, and
 * once more at the end whenever a line was shown or the loop lasted an
 * interval: a loop of 3 s or more always says so, even when its runs are
 * long (a slow guest) and the last one crosses the interval.  *ns_loop
 * (when not NULL): the loop's time, ns, on the clock the rule above uses.
 */
static int run_restore(const struct ptimer_task *t, struct ptimer_blob *b, struct ptimer_timer *w,
		       uint32_t n, struct ptimer_blob_args *a, uint64_t total, const struct ptimer_restore_opts *o,
		       uint64_t *ns_loop, struct ptimer_err *err)
{
	bool show = o && o->progress && a->mode == PTIMER_MODE_LINEAR;
	uint64_t start = ptimer_now_ns(), last = start;
	uint64_t every = show && o->progress_every_ns ? o->progress_every_ns : PROGRESS_EVERY_NS;
	uint64_t took;
	bool shown = false;
	int ret;

	a->op = PTIMER_OP_RESTORE;
	a->budget = a->mode == PTIMER_MODE_LINEAR ? LINEAR_BUDGET : 0;
	for (;;) {
		ret = ptimer_blob_call(b, a, err);
		if (ret) {
			/* undo what the failed run made (rollback reads its progress) */
			rollback(t, b, a);
			return ret;
		}
		if (a->result != PTIMER_AGAIN)
			break;
		int sig = ptimer_pending_stop_signal();

		if (sig) {
			if (shown)
				progress(t, a, total, start, o, true);
			rollback(t, b, a);
			return interrupted(t, w, n, a, total, sig, err);
		}
		if (show && ptimer_now_ns() - last >= every) {
			last = ptimer_now_ns();
			progress(t, a, total, start, o, false);
			shown = true;
		}
	}
	took = ptimer_now_ns() - start;
	if (ns_loop)
		*ns_loop = took;
	if (shown || (show && took >= every))
		progress(t, a, total, start, o, true);
	if (a->result)
		return blob_failure(t, w, n, a, err);
	return 0;
}

/* One restore in the target: what the steps of ptimer_restore_task share. */
struct restore_run {
	const struct ptimer_task *t;
	const struct ptimer_restore_opts *o;
	enum ptimer_restore_mode want;	/* what the caller asked for */
	struct ptimer_timer *w;		/* the timers as the target gets them, by ID */
	uint32_t n;
	int32_t *occ;			/* IDs the target holds, sorted */
	uint32_t n_occ;
	struct ptimer_blob *b;
	struct ptimer_blob_args a;
	uint64_t pairs;			/* linear plan: create/delete pairs */
	uint64_t ns_loop;		/* the runner's create loop, ns (run_restore) */
	uint32_t n_main;		/* w[0..n_main) are made in the runner, the
					   rest in the thread whose CPU clock each
					   measures (exact mode: place_clock_timers) */
};

/* The host thread a timer must be created in: the one whose CPU time it
 * measures (clock_tid, own-namespace), else 0 (the runner will do). */
static pid_t clock_host(const struct ptimer_task *t, const struct ptimer_timer *tm)
{
	pid_t h = tm->clock_tid ? ptimer_task_host_tid(t, tm->clock_tid) : 0;

	return h == ptimer_task_runner(t) ? 0 : h;
}

static int cmp_clock_host(const void *a, const void *b, void *t)
{
	pid_t x = clock_host(t, a), y = clock_host(t, b);

	if (x != y)
		return x < y ? -1 : 1;
	return ptimer_timer_cmp_id(a, b);
}

/*
 * Exact mode: the timers on the calling thread's CPU clock that measure
 * another thread than the runner go last, grouped by that thread
 * (n_main: how many the runner makes).  Linear mode can make them only in
 * the runner (the ID counter is walked there): each says so.
 */
static void place_clock_timers(struct restore_run *r)
{
	r->n_main = r->n;
	for (uint32_t i = 0; i < r->n; i++) {
		pid_t h = clock_host(r->t, &r->w[i]);

		if (!h)
			continue;
		if (r->a.mode == PTIMER_MODE_LINEAR) {
			ptimer_log(PTIMER_LOG_WARN, "process %d: timer %d measures the CPU time of thread %d, but "
				   "without exact-ID timer_create (Linux 6.15+) ptimer can make it only in thread "
				   "%d, whose CPU time it will measure", r->t->pid, r->w[i].timer_id, h,
				   ptimer_task_runner(r->t));
			continue;
		}
		r->n_main--;
	}
	if (r->a.mode == PTIMER_MODE_EXACT && r->n_main < r->n)
		qsort_r(r->w, r->n, sizeof(*r->w), cmp_clock_host, (void *)r->t);
}

/*
 * Delete w[0..n) again (they exist in t), from the runner.  Only one
 * blob may be in a process at a time: another one's mapping and stub
 * would look like a killed ptimer's leftovers to it.
 */
/*
 * After a rollback in thread tid (b open there): the signals the deleted
 * timers w[0..n) queued are taken out of that thread's and the process's
 * queues (PTIMER_OP_FLUSH), where Linux 6.13+ leaves them pending until
 * they are dequeued.  Only a signal whose every queued entry is an SI_TIMER
 * of one of w's IDs (PTRACE_PEEKSIGINFO; the process holds none of them,
 * read_occupied): none of the process's own is taken.  Best effort: a
 * queue that cannot be read is left as it is.
 */
static void flush_stale(struct ptimer_blob *b, pid_t tid, const struct ptimer_timer *w, uint32_t n)
{
	struct ptimer_blob_args a = { .op = PTIMER_OP_FLUSH };
	uint64_t ours = 0, theirs = 0;

	for (int shared = 0; shared < 2; shared++) {
		siginfo_t *si;
		size_t k;

		if (ptimer_sigqueue_peek(tid, shared, &si, &k))
			return;
		for (size_t j = 0; j < k; j++) {
			int s = si[j].si_signo;
			bool mine = false;

			if (s < 1 || s > 64)
				continue;
			for (uint32_t i = 0; i < n && si[j].si_code == SI_TIMER && !mine; i++)
				mine = si[j].si_timerid == w[i].timer_id;
			*(mine ? &ours : &theirs) |= 1ull << (s - 1);
		}
		free(si);
	}
	a.flush_mask = ours & ~theirs;
	if (a.flush_mask)
		ptimer_blob_call(b, &a, NULL);
}

static void delete_made(const struct ptimer_task *t, const struct ptimer_timer *w, uint32_t n)
{
	struct ptimer_blob_args a = { .op = PTIMER_OP_ROLLBACK, .n_timers = n, .n_created = n };
	struct ptimer_blob *b;

	if (!n || ptimer_blob_open(&b, ptimer_task_runner(t), n, 0, ptimer_task_blob_flags(t), NULL))
		goto failed;
	if (ptimer_blob_load(b, w, NULL, NULL) || ptimer_blob_call(b, &a, NULL) || a.result) {
		ptimer_blob_close(b, NULL);
		goto failed;
	}
	flush_stale(b, ptimer_task_runner(t), w, n);
	ptimer_blob_close(b, NULL);
	return;
failed:
	if (n && !ptimer_thread_exiting(t->pid, 0))
		ptimer_log(PTIMER_LOG_ERROR, "process %d: removing the %u timers created so far failed; "
			   "it may hold some of the image's timers", t->pid, n);
}

/*
 * Make w[n_main..n) in their threads, one blob at a time, a thread each,
 * exact IDs.  *made: how many of w are made when it returns (n_main
 * before, n on success).
 */
static int run_clock_groups(struct restore_run *r, uint32_t *made, struct ptimer_err *err)
{
	int ret = 0;

	*made = r->n_main;
	for (uint32_t i = r->n_main; i < r->n && !ret;) {
		pid_t h = clock_host(r->t, &r->w[i]);
		struct ptimer_blob_args a = { .mode = PTIMER_MODE_EXACT };
		struct ptimer_blob *b;
		uint32_t first = i;
		int rc;

		while (i < r->n && clock_host(r->t, &r->w[i]) == h)
			i++;
		a.n_timers = i - first;
		ret = ptimer_blob_open(&b, h, a.n_timers, 0, ptimer_task_blob_flags(r->t), err);
		if (ret)
			break;
		ret = ptimer_blob_load(b, r->w + first, NULL, err);
		if (!ret)
			ret = run_restore(r->t, b, r->w + first, a.n_timers, &a, 0, r->o, NULL, err);
		if (ret)	/* the run deleted its timers: their signals too */
			flush_stale(b, h, r->w + first, a.n_timers);
		rc = ptimer_blob_close(b, ret ? NULL : err);
		if (!ret)
			ret = rc;
		if (!ret)
			*made = i;
	}
	return ret;
}

/*
 * rseq slice extension of the image's threads: every check (require) before
 * any change, then enable.  *sv for ptimer_slice_undo on a later failure.
 */
static int slice_begin(struct ptimer_task *t, const struct ptimer_image *img,
		       const struct ptimer_restore_opts *o, struct ptimer_slice_target **sv, int *n_sv,
		       struct ptimer_err *err)
{
	enum ptimer_rseq_slice mode = o ? o->rseq_slice : PTIMER_RSEQ_SLICE_AUTO;
	int ret;

	*sv = NULL;
	*n_sv = 0;
	if (mode == PTIMER_RSEQ_SLICE_OFF)
		return 0;
	ret = ptimer_slice_targets(t, img, o ? o->tid_map : NULL, o ? o->n_tid_map : 0,
				   o && o->slice_start_disabled, sv, n_sv, err);
	if (!ret)
		ret = ptimer_slice_prepare(t->pid, *sv, *n_sv, mode, NULL, err);
	if (!ret)
		ret = ptimer_slice_apply(t->pid, *sv, *n_sv, mode, NULL, err);
	return ret;
}

/*
 * Can the probe run restore too (PTIMER_OP_PROBE_RESTORE)?  When exact mode
 * may be used and every timer is made in the runner (none measures the CPU
 * time of another thread, place_clock_timers): the thread then runs our
 * code once, not twice, when the kernel has the prctl.  A run of the
 * thread (registers set, PTRACE_CONT, its stop waited for) costs about as
 * much as the rest of a small restore (40-60 us here, 300-task trees).
 */
static bool can_restore_in_probe(const struct restore_run *r)
{
	if (r->want == PTIMER_RESTORE_LINEAR || !r->n)
		return false;
	for (uint32_t i = 0; i < r->n; i++)
		if (clock_host(r->t, &r->w[i]))
			return false;
	return true;
}

/* Did the probe restore them too (result 0, or its failure, in a)? */
static bool restored_in_probe(const struct restore_run *r)
{
	return r->a.op == PTIMER_OP_PROBE_RESTORE && r->a.prctl_get == 0 && r->a.mode == PTIMER_MODE_EXACT;
}

/*
 * Ask the kernel, inside the target, for PR_TIMER_CREATE_RESTORE_IDS (GET):
 * already on means another restore runs there (or one crashed); absent
 * refuses --mode exact.  In linear mode the probe also creates one timer,
 * which tells where the ID counter stands (a.probe_id).
 */
static int probe_kernel(struct restore_run *r, struct ptimer_err *err)
{
	int ret;

	r->a.op = can_restore_in_probe(r) ? PTIMER_OP_PROBE_RESTORE : PTIMER_OP_PROBE;
	r->a.n_timers = r->n;
	r->a.n_occupied = r->n_occ;
	r->a.mode = r->want == PTIMER_RESTORE_LINEAR ? PTIMER_MODE_LINEAR : PTIMER_MODE_EXACT;
	/* the parent-death signal with the timers, in the leader (put_pdeath) */
	r->a.pdeath_want = r->o && r->o->put_pdeath && ptimer_task_runner(r->t) == r->t->pid;
	r->a.pdeath_sig = r->o ? r->o->pdeath_sig : 0;
	r->a.pdeath_res = 1;	/* not set yet */
	ret = ptimer_blob_call(r->b, &r->a, err);
	if (ret) {
		/* a run that may have made timers: undo what it reported */
		if (r->a.op == PTIMER_OP_PROBE_RESTORE)
			rollback(r->t, r->b, &r->a);
		return ret;
	}
	if (r->a.prctl_get == 1)
		return ptimer_errf(err, EBUSY, "process %d is already in exact timer ID mode "
				   "(PR_TIMER_CREATE_RESTORE_IDS on): another restore is running, or one "
				   "crashed; nothing restored", r->t->pid);
	if (r->a.prctl_get < 0 && r->want == PTIMER_RESTORE_EXACT) {
		/* the probe may have kept timers[0] (a linear probe's) */
		rollback(r->t, r->b, &r->a);
		return ptimer_errf(err, EOPNOTSUPP, "process %d: this kernel has no "
				   "prctl(PR_TIMER_CREATE_RESTORE_IDS) (Linux 6.15+): use --mode linear "
				   "or --mode auto; nothing restored", r->t->pid);
	}
	return 0;
}

/* Exact IDs when the kernel has the prctl (kernel commit ec2d0c04624b) and
 * the caller did not force linear mode. */
static bool use_exact(const struct restore_run *r)
{
	return r->a.prctl_get == 0 && r->want != PTIMER_RESTORE_LINEAR;
}

/*
 * Linear mode: plan the create/delete loop from where the probe left the
 * ID counter (refused when it has passed a wanted ID without --allow-wrap),
 * say what it costs, and load the timers again for the run.
 */
static int prepare_linear(struct restore_run *r, struct ptimer_err *err)
{
	const struct ptimer_restore_opts *o = r->o;
	uint32_t done = r->a.n_created;	/* the probe may have made timers[0] */
	int ret;

	if (r->a.result)
		return blob_failure(r->t, r->w, r->n, &r->a, err);
	r->a.mode = PTIMER_MODE_LINEAR;
	r->a.counter = (int32_t)(((uint32_t)r->a.probe_id + 1) & PTIMER_ID_MAX);
	ret = plan_linear(r->t, r->w + done, r->n - done, r->occ, r->n_occ, r->a.counter,
			  o && o->allow_wrap, r->want == PTIMER_RESTORE_LINEAR, &r->pairs, err);
	if (ret) {
		rollback(r->t, r->b, &r->a);
		return ret;
	}
	r->a.allow_wrap = o && o->allow_wrap;
	ptimer_log(PTIMER_LOG_INFO, "process %d: no exact-ID timer_create%s; linear mode: %llu "
		   "create/delete pairs for %u timers (IDs up to %d), about %.1f s", r->t->pid,
		   r->want == PTIMER_RESTORE_LINEAR ? " (forced)" : " on this kernel",
		   (unsigned long long)r->pairs, r->n, r->w[r->n - 1].timer_id,
		   (double)r->pairs * LINEAR_NS_PER_PAIR / 1e9);
	return ptimer_blob_load(r->b, r->w, r->occ, err);
}

/*
 * Create and arm everything (the runner's share, then each thread's
 * clock timers in their thread), then (--verify) compare with
 * /proc/PID/timers.  r->b is closed here when threads' groups follow.
 */
static int run_and_verify(struct restore_run *r, struct ptimer_err *err)
{
	uint32_t made = 0;
	int ret;

	place_clock_timers(r);
	r->a.n_timers = r->n_main;
	r->a.n_occupied = r->n_occ;
	r->a.phase = 0;
	ret = ptimer_blob_load(r->b, r->w, r->occ, err);
	if (!ret)
		ret = run_restore(r->t, r->b, r->w, r->n_main, &r->a, r->pairs, r->o, &r->ns_loop, err);
	if (!ret && r->n_main < r->n) {
		made = r->n_main;
		ret = ptimer_blob_close(r->b, err);
		r->b = NULL;
		if (!ret)
			ret = run_clock_groups(r, &made, err);
		if (ret)
			delete_made(r->t, r->w, made);
	}
	if (!ret && r->o && r->o->verify) {
		ret = verify_restored(r->t, r->w, r->n, err);
		if (ret && r->b)
			rollback(r->t, r->b, &r->a);
		else if (ret)
			delete_made(r->t, r->w, r->n);
	}
	return ret;
}

/*
 * After PTIMER_OP_PROBE_RESTORE made them (restored_in_probe): its failure
 * explained (the blob deleted what it made), else the check that
 * run_and_verify does for --verify.
 */
static int finish_probe_restore(struct restore_run *r, struct ptimer_err *err)
{
	int ret;

	r->n_main = r->n;
	if (r->a.result)
		return blob_failure(r->t, r->w, r->n, &r->a, err);
	if (!r->o || !r->o->verify)
		return 0;
	ret = verify_restored(r->t, r->w, r->n, err);
	if (ret)
		rollback(r->t, r->b, &r->a);
	return ret;
}

/* ptimer_put_pdeath, with b a blob open in the leader (NULL: none) */
static int put_pdeath(struct ptimer_task *t, struct ptimer_blob *b, int sig, struct ptimer_err *err)
{
	const unsigned long args[6] = { PR_SET_PDEATHSIG, (unsigned long)sig };
	struct ptimer_blob *own = NULL;
	long res = 0;
	int ret;

	if (ptimer_task_runner(t) != t->pid)
		return 0;	/* the leader has exited: no child gets its signal */
	if (!b) {
		ret = ptimer_blob_open(&own, t->pid, 0, 0, ptimer_task_blob_flags(t), err);
		if (ret)
			return ret;
		b = own;
	}
	ret = ptimer_blob_syscall(b, __NR_prctl, args, &res, err);
	if (!ret && res)
		ret = ptimer_errf(err, (int)-res, "process %d: cannot set its parent-death signal back to %d: %s",
				  t->pid, sig, strerror((int)-res));
	if (own) {
		int r = ptimer_blob_close(own, ret ? NULL : err);

		ret = ret ? ret : r;
	}
	return ret;
}

int ptimer_restore_task(struct ptimer_task *t, const struct ptimer_image *img,
			const struct ptimer_restore_opts *o, struct ptimer_restore_stats *st,
			struct ptimer_err *err)
{
	struct restore_run r = {
		.t = t,
		.o = o,
		.want = o ? o->mode : PTIMER_RESTORE_AUTO,
		.n = img->n_timers,
	};
	uint64_t t0 = ptimer_now_ns(), t1, ns_slice;
	struct ptimer_slice_target *sv = NULL;
	int ret, ret_close, n_sv = 0;

	if (st)
		memset(st, 0, sizeof(*st));
	ret = map_timers(t, img, o, &r.w, err);
	if (!ret)
		ret = check_signals(t, img, o, r.w, r.n, err);
	if (ret) {
		free(r.w);
		return ret;
	}
	ret = read_occupied(t, r.w, r.n, &r.occ, &r.n_occ, err);
	t1 = ptimer_now_ns();
	if (!ret)
		ret = slice_begin(t, img, o, &sv, &n_sv, err);
	ns_slice = ptimer_now_ns() - t1;	/* its runs are inside the process too */
	if (!ret && r.n == 0 && o && o->put_pdeath)
		ret = put_pdeath(t, NULL, o->pdeath_sig, err);
	if (ret || r.n == 0)
		goto out;

	t1 = ptimer_now_ns();
	ret = ptimer_blob_open(&r.b, ptimer_task_runner(t), r.n, r.n_occ, ptimer_task_blob_flags(t), err);
	if (ret)
		goto out;
	ret = ptimer_blob_load(r.b, r.w, r.occ, err);
	if (!ret)
		ret = probe_kernel(&r, err);
	if (!ret && restored_in_probe(&r))
		ret = finish_probe_restore(&r, err);
	else if (!ret && use_exact(&r))
		r.a.mode = PTIMER_MODE_EXACT;
	else if (!ret)
		ret = prepare_linear(&r, err);
	if (!ret && !restored_in_probe(&r))
		ret = run_and_verify(&r, err);
	if (!ret && o && o->put_pdeath && r.a.pdeath_res == 1)
		ret = put_pdeath(t, r.b, o->pdeath_sig, err);
	else if (!ret && o && o->put_pdeath && r.a.pdeath_res)
		ret = ptimer_errf(err, -r.a.pdeath_res, "process %d: cannot set its parent-death signal back to %d: %s",
				  t->pid, o->pdeath_sig, strerror(-r.a.pdeath_res));
	if (!ret) {
		if (st) {
			st->mode = r.a.mode == PTIMER_MODE_LINEAR ? PTIMER_RESTORE_LINEAR : PTIMER_RESTORE_EXACT;
			st->pairs = r.a.pairs_done;
			st->ns_inject = ptimer_now_ns() - t1;
			st->ns_loop = r.ns_loop;
		}
	}
	if (ret && r.b)		/* rolled back: the signals its timers queued too */
		flush_stale(r.b, ptimer_task_runner(t), r.w, r.n);
	ret_close = ptimer_blob_close(r.b, ret ? NULL : err);
	if (!ret && !ret_close && ptimer_fail_nth("restorer-close", EIO))
		ret_close = ptimer_errf(err, EIO, "process %d: cannot remove ptimer's restorer: injected failure",
					t->pid);
	if (!ret && ret_close) {
		/* every timer is made and armed: a restore that fails now
		 * deletes them, so that it fails whole */
		delete_made(t, r.w, r.n);
		ret = ret_close;
	}
out:
	if (ret)
		ptimer_slice_undo(t->pid, sv, n_sv, NULL);
	if (st) {
		st->ns_inject += ns_slice;
		st->ns_total = ptimer_now_ns() - t0;
	}
	free(sv);
	free(r.w);
	free(r.occ);
	return ret;
}

int ptimer_put_pdeath(struct ptimer_task *t, int sig, struct ptimer_err *err)
{
	return put_pdeath(t, NULL, sig, err);
}

int ptimer_rebind_clock_timers(struct ptimer_task *t, const struct ptimer_image *img,
			       const struct ptimer_restore_opts *o, struct ptimer_err *err)
{
	struct restore_run r = { .t = t, .o = o };
	const unsigned long get[6] = { PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET };
	struct ptimer_blob *b = NULL;
	uint32_t k = 0, made = 0;
	long prctl_get = -1;
	int ret;

	for (uint32_t i = 0; i < img->n_timers; i++)
		k += ptimer_thread_clock(img->timers[i].clock_id) && img->timers[i].clock_tid;
	if (!k)
		return 0;
	ret = map_timers(t, img, o, &r.w, err);
	if (ret)
		return ret;
	/* keep those made in another thread than the runner (criu's leader) */
	for (uint32_t i = 0; i < img->n_timers; i++)
		if (clock_host(t, &r.w[i]))
			r.w[r.n++] = r.w[i];
	if (!r.n)
		goto out;
	qsort_r(r.w, r.n, sizeof(*r.w), cmp_clock_host, (void *)t);
	/* the prctl first (GET changes nothing): without it nothing is deleted */
	ret = ptimer_blob_open(&b, ptimer_task_runner(t), r.n, 0, ptimer_task_blob_flags(t), err);
	if (!ret)
		ret = ptimer_blob_load(b, r.w, NULL, err);
	if (!ret)
		ret = ptimer_blob_syscall(b, __NR_prctl, get, &prctl_get, err);
	if (!ret && prctl_get < 0) {
		for (uint32_t i = 0; i < r.n; i++)
			ptimer_log(PTIMER_LOG_WARN, "process %d: timer %d measures the CPU time of thread %d, but "
				   "without exact-ID timer_create (Linux 6.15+) it stays where criu made it, in "
				   "thread %d", t->pid, r.w[i].timer_id, clock_host(t, &r.w[i]),
				   ptimer_task_runner(t));
	} else if (!ret) {
		struct ptimer_blob_args del = { .op = PTIMER_OP_ROLLBACK, .n_timers = r.n, .n_created = r.n };

		ret = ptimer_blob_call(b, &del, err);
		if (!ret && del.result)
			ret = ptimer_errf(err, del.result < 0 && del.result > -4096 ? (int)del.result : EIO,
					  "process %d: deleting criu's timers on thread CPU clocks to make them "
					  "again in their threads failed", t->pid);
		if (!ret) {
			ret = ptimer_blob_close(b, err);
			b = NULL;
		}
		if (!ret) {
			ret = run_clock_groups(&r, &made, err);
			if (ret)
				delete_made(t, r.w, made);
		}
		if (!ret)
			ptimer_log(PTIMER_LOG_INFO, "process %d: %u timer%s on thread CPU clocks made again in "
				   "the thread%s %s", t->pid, r.n, r.n > 1 ? "s" : "", r.n > 1 ? "s" : "",
				   r.n > 1 ? "they measure" : "it measures");
	}
	if (b) {
		int rc = ptimer_blob_close(b, ret ? NULL : err);

		if (!ret)
			ret = rc;
	}
out:
	free(r.w);
	return ret;
}

int ptimer_restore_slice_task(struct ptimer_task *t, const struct ptimer_image *img,
			      const struct ptimer_restore_opts *o, struct ptimer_err *err)
{
	struct ptimer_slice_target *sv;
	int n_sv, ret;

	ret = slice_begin(t, img, o, &sv, &n_sv, err);
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
	if (img.timers_in_core) {
		ret = ptimer_errf(err, EINVAL, "%s lists no timers: the CRIU plugin left every one in criu's "
				  "core-%d.img; restore the checkpoint with criu (and the plugin)", image_path, img.pid);
		ptimer_image_free(&img);
		return ret;
	}
	ret = ptimer_task_seize(&t, pid, err);
	if (!ret) {
		ret = ptimer_task_gone(pid, ptimer_restore_task(&t, &img, o, st, err),
				       "restoring its timers", err);
		ptimer_task_release(&t);
	}
	ptimer_image_free(&img);
	return ret;
}

int ptimer_replace_timers(struct ptimer_task *t, const struct ptimer_timer *with, uint32_t n,
			  struct ptimer_err *err)
{
	struct ptimer_image mini = {
		.version = PTIMER_IMG_VERSION,
		.pid = t->vpid,
		.criu_mode = PTIMER_IMG_CRIU_FIRST,	/* the plugin's: not standalone */
		.n_timers = n,
		.timers = (struct ptimer_timer *)with,
	};
	struct ptimer_restore_opts o = { .mode = PTIMER_RESTORE_EXACT };
	struct ptimer_blob_args a = { .op = PTIMER_OP_ROLLBACK, .n_timers = n, .n_created = n };
	struct ptimer_blob *b;
	int ret, r;

	if (!n)
		return 0;
	ret = ptimer_blob_open(&b, ptimer_task_runner(t), n, 0, ptimer_task_blob_flags(t), err);
	if (ret)
		return ret;
	ret = ptimer_blob_load(b, with, NULL, err);
	if (!ret)
		ret = ptimer_blob_call(b, &a, err);
	if (!ret && a.result)
		ret = ptimer_errf(err, a.result < 0 && a.result > -4096 ? (int)-a.result : EIO,
				  "process %d: deleting timer %d to make it again failed: %s", t->pid,
				  with[a.fail_index < n ? a.fail_index : 0].timer_id,
				  a.result < 0 && a.result > -4096 ? strerror((int)-a.result) : "restorer fault");
	r = ptimer_blob_close(b, ret ? NULL : err);
	if (!ret)
		ret = r;
	if (ret)
		return ret;
	ret = ptimer_restore_task(t, &mini, &o, NULL, err);
	if (ret && ret != -ESRCH && !ptimer_thread_exiting(t->pid, 0))
		ptimer_log(PTIMER_LOG_ERROR, "process %d: %u timer%s deleted could not be made again (%s): the "
			   "process no longer holds timer %d%s", t->pid, n, n > 1 ? "s" : "", err->msg,
			   with[0].timer_id, n > 1 ? " and others" : "");
	return ret;
}
