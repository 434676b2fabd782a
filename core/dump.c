// SPDX-License-Identifier: MIT
/*
 * Dump: what the kernel shows in /proc/PID/timers (ID, clock, signal,
 * sival, notification), plus what only the process itself can read
 * (timer_gettime, timer_getoverrun) through one run of the in-target blob.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/dump.h"
#include "core/aim_probe.h"
#include "core/fault.h"
#include "core/log.h"
#include "core/pending.h"
#include "core/thread_clock.h"
#include "core/proc_timers.h"
#include "core/procwatch.h"
#include "core/restore.h"
#include "core/rseq.h"
#include "core/task.h"
#include "core/timer_state.h"
#include "core/util.h"
#include "lib/procfs.h"
#include "restorer/host/inject.h"

/* CPUCLOCK_PID() of include/linux/posix-timers_types.h: pid 0 is "self". */
static pid_t cpu_clock_pid(int32_t clock_id)
{
	return clock_id < 0 ? (pid_t)~(clock_id >> 3) : 0;
}

/*
 * A timer on the CPU clock of a thread that has exited (named by its tid,
 * or a thread's own clock, -2, whose thread is gone): the kernel keeps it,
 * but it can never fire again (timer_settime() answers ESRCH).  Keep the ID
 * with a timer that cannot fire either: a disarmed SIGEV_NONE timer on
 * CLOCK_MONOTONIC.  strict: refused instead.  what: how the clock names its
 * thread, for the messages.
 */
static int write_off_dead_clock(const struct ptimer_task *t, struct ptimer_timer *tm, bool strict, pid_t cpu_pid,
				const bool *quiet, struct ptimer_err *err)
{
	char what[64];

	if (quiet && *quiet)
		goto clear;

	if (cpu_pid)
		snprintf(what, sizeof(what), "the CPU clock of thread %d", cpu_pid);
	else
		snprintf(what, sizeof(what), "the CPU clock of the thread that made it");
	if (strict)
		return ptimer_errf(err, ESRCH, "process %d: timer %d uses %s, which has exited (without strict it is "
				   "kept as a disarmed SIGEV_NONE timer)", t->pid, tm->timer_id, what);
	ptimer_log(PTIMER_LOG_WARN, "process %d: timer %d uses %s, which has exited; dumping it as a disarmed "
		   "SIGEV_NONE CLOCK_MONOTONIC timer (it could never fire again)", t->pid, tm->timer_id, what);
clear:
	tm->clock_id = 1;	/* CLOCK_MONOTONIC */
	tm->sigev_notify = PTIMER_SIGEV_NONE;
	tm->notify_tid = t->vpid;
	tm->clock_tid = 0;
	memset(&tm->it_value, 0, sizeof(tm->it_value));
	memset(&tm->it_interval, 0, sizeof(tm->it_interval));
	tm->overrun = 0;
	tm->pending = 0;
	tm->pending_overrun = 0;
	return 0;
}

/*
 * A SIGEV_THREAD_ID timer whose thread has exited (tid: as /proc named it,
 * why: what tells): kept as SIGEV_NONE, since it can never signal anyone
 * again; strict: refused.
 */
static int aimed_at_gone(const struct ptimer_task *t, struct ptimer_timer *tm, bool strict, pid_t tid,
			 const char *why, struct ptimer_err *err)
{
	if (strict)
		return ptimer_errf(err, ESRCH, "process %d: timer %d is aimed at thread %d, which %s (without "
				   "strict it is kept as SIGEV_NONE)", t->pid, tm->timer_id, tid, why);
	ptimer_log(PTIMER_LOG_WARN, "process %d: timer %d is aimed at thread %d, which %s; dumping it as "
		   "SIGEV_NONE (it can never fire)", t->pid, tm->timer_id, tid, why);
	tm->sigev_notify = PTIMER_SIGEV_NONE;
	tm->notify_tid = t->vpid;
	return 0;
}

/* What translate_notify found out about a timer. */
enum clock_fate {
	CLOCK_KEPT,	/* nothing to do about its clock */
	CLOCK_DEAD,	/* written off (write_off_dead_clock) */
	CLOCK_PROBE,	/* another task's, or a gone thread's: ptimer_probe_gone_clocks tells */
};

/*
 * /proc printed the notify pid as its own pid namespace sees it; the image
 * keeps the dumped process's own view.  A thread that is gone, or that is
 * not in this process, cannot be aimed at on restore.  for_criu: criu dumps
 * the whole process tree and restores every pid as it was, so the CPU
 * clock of another process is kept as criu keeps it.
 */
static int translate_notify(struct ptimer_task *t, struct ptimer_timer *tm, bool strict, bool for_criu,
			    enum clock_fate *fate, struct ptimer_err *err)
{
	pid_t cpu_pid = cpu_clock_pid(tm->clock_id);
	pid_t v;

	*fate = CLOCK_KEPT;
	if (cpu_pid && !ptimer_task_host_tid(t, cpu_pid)) {
		/*
		 * The CPU clock of another live process.  Known only when the
		 * process sees pids as we do (same pid namespace); otherwise
		 * the clock's task counts as gone, below, or, for criu, the
		 * kernel tells (CLOCK_PROBE).
		 */
		pid_t tgid = !t->other_pidns ? ptimer_proc_tgid(cpu_pid) : 0;

		if (tgid > 0 && tgid != t->pid) {
			if (for_criu)
				return 0;
			return ptimer_errf(err, EXDEV, "process %d: timer %d uses the CPU clock of pid %d, in "
					   "another process (%d); ptimer can only recreate clocks of the dumped "
					   "process's own threads: delete that timer (or dump both as one process "
					   "tree with criu) and try again", t->pid, tm->timer_id, cpu_pid, tgid);
		}
		if (for_criu && t->other_pidns) {
			*fate = CLOCK_PROBE;
			return 0;
		}
		*fate = CLOCK_DEAD;
		return write_off_dead_clock(t, tm, strict, cpu_pid, NULL, err);
	}
	if (!(tm->sigev_notify & PTIMER_SIGEV_THREAD_ID)) {
		tm->notify_tid = t->vpid;
		return 0;
	}
	v = tm->notify_tid ? ptimer_task_vtid(t, tm->notify_tid) : 0;
	if (v) {
		tm->notify_tid = v;
		return 0;
	}
	return aimed_at_gone(t, tm, strict, tm->notify_tid, "is gone", err);
}

/*
 * On the CPU clock of a live thread other than the leader, whose number a
 * new thread may have taken from the one the timer measures (a leader's
 * number is never given again while its process lives):
 * ptimer_probe_gone_clocks tells.
 */
static bool reusable_clock(const struct ptimer_task *t, const struct ptimer_timer *tm)
{
	pid_t cpu_pid = cpu_clock_pid(tm->clock_id);

	return cpu_pid && cpu_pid != t->vpid && ptimer_task_host_tid(t, cpu_pid) != 0;
}


static struct ptimer_timer *timer_by_id(struct ptimer_timer *timers, uint32_t n, int32_t id)
{
	struct ptimer_timer key = { .timer_id = id };

	return n ? bsearch(&key, timers, n, sizeof(*timers), ptimer_timer_cmp_id) : NULL;
}

/*
 * One signal queue of a stopped thread (shared: the process's), read
 * without dequeuing (PTRACE_PEEKSIGINFO, Linux 3.10): every SI_TIMER
 * siginfo marks its timer (si_timerid) pending.  A timer owns one sigqueue
 * (kernel/time/posix-timers.c), so at most one is its own.
 */
static int peek_queue(const struct ptimer_task *t, pid_t tid, bool shared, struct ptimer_timer *timers, uint32_t n,
		      struct ptimer_err *err)
{
	siginfo_t *si;
	size_t got;
	int ret = ptimer_sigqueue_peek(tid, shared, &si, &got);

	/* an exited leader (a zombie, not in a ptrace stop: ESRCH) has no
	 * queue of its own left; its process's queue is read through a live
	 * thread */
	if (ret == -ESRCH && !shared && tid != ptimer_task_runner(t))
		return 0;
	if (ret)
		return ptimer_errf(err, -ret, "reading the %s signal queue of thread %d "
				   "(PTRACE_PEEKSIGINFO): %s", shared ? "shared" : "private", tid,
				   strerror(-ret));
	for (size_t i = 0; i < got; i++) {
		struct ptimer_timer *tm;

		if (si[i].si_code != SI_TIMER)
			continue;
		tm = timer_by_id(timers, n, si[i].si_timerid);
		if (tm && tm->signo == si[i].si_signo) {
			tm->pending = 1;
			tm->pending_overrun = si[i].si_overrun > 0 ? si[i].si_overrun : 0;
		}
	}
	free(si);
	return 0;
}

void ptimer_pending_drop_stale(struct ptimer_timer *tm)
{
	if (tm->pending && !tm->it_interval.sec && !tm->it_interval.nsec &&
	    (tm->it_value.sec || tm->it_value.nsec)) {
		ptimer_log(PTIMER_LOG_DEBUG, "timer %d: queued signal predates timer_settime(), the "
			   "kernel drops it: not pending", tm->timer_id);
		tm->pending = 0;
		tm->pending_overrun = 0;
	}
}

/*
 * Pending expiries: the timers whose signal is queued and not delivered.
 * A one-shot timer armed again after it fired has its queued signal
 * dropped at delivery (timer_settime() bumps it_signal_seq, checked by
 * posixtimer_deliver_signal(), Linux 6.13+): not pending.  Needs every
 * thread in a ptrace stop of ours (or of criu's, the plugin runs in it).
 */
static int read_pending(const struct ptimer_task *t, struct ptimer_timer *timers, uint32_t n, bool have_state,
			struct ptimer_err *err)
{
	int ret = peek_queue(t, ptimer_task_runner(t), true, timers, n, err);

	for (int i = 0; !ret && i < t->n_threads; i++)
		ret = peek_queue(t, t->tids[i], false, timers, n, err);
	for (uint32_t i = 0; !ret && i < n; i++) {
		struct ptimer_timer *tm = &timers[i];

		if (have_state)
			ptimer_pending_drop_stale(tm);
		if (tm->pending)
			ptimer_log(PTIMER_LOG_INFO, "timer %d: expired, signal %d queued and not delivered: "
				   "recorded as a pending expiry", tm->timer_id, tm->signo);
	}
	return ret;
}

/*
 * ptimer_dump_task's work on the timers: sort them, translate each
 * notification (translate_notify), read the timing state inside t, the
 * pending expiries and the threads of thread-CPU-clock timers, and write
 * off the timers whose CPU clock is gone.  timers is freed on failure.
 */
static int dump_timers(struct ptimer_task *t, const struct ptimer_dump_opts *o, struct ptimer_timer *timers,
		       uint32_t n, struct ptimer_err *err)
{
	bool strict = o && o->strict;
	enum clock_fate fate;
	bool *gone, *dead, *probe, *aim_gone;
	int ret = 0;

	gone = calloc((size_t)n + 1, sizeof(*gone));
	dead = calloc((size_t)n + 1, sizeof(*dead));
	probe = calloc((size_t)n + 1, sizeof(*probe));
	aim_gone = calloc((size_t)n + 1, sizeof(*aim_gone));
	if (!gone || !dead || !probe || !aim_gone)
		ret = ptimer_errf(err, ENOMEM, "out of memory for %u timers", n);
	if (n)
		qsort(timers, n, sizeof(*timers), ptimer_timer_cmp_id);
	for (uint32_t i = 0; i < n && !ret; i++) {
		ret = translate_notify(t, &timers[i], strict, false, &fate, err);
		dead[i] = fate == CLOCK_DEAD;
		probe[i] = !ret && fate == CLOCK_KEPT && reusable_clock(t, &timers[i]);
	}
	if (!ret && n)
		ret = ptimer_read_timer_state(t, timers, n, err);
	if (!ret && n)
		ret = read_pending(t, timers, n, true, err);
	if (!ret && n)
		ret = ptimer_probe_gone_clocks(t, timers, n, probe, gone, err);
	if (!ret && n)
		ret = ptimer_probe_thread_targets(t, timers, n, aim_gone, err);
	for (uint32_t i = 0; i < n && !ret; i++)
		if (aim_gone[i] && !gone[i])
			ret = aimed_at_gone(t, &timers[i], strict, timers[i].notify_tid,
					    "has exited (a new thread has its number)", err);
	if (!ret && n)
		ret = ptimer_find_clock_threads(t, timers, n, gone, err);
	for (uint32_t i = 0; i < n && !ret; i++) {
		struct ptimer_timer *tm = &timers[i];

		/* the state read is the dead clock's: nothing to keep */
		if (gone[i] || dead[i])
			ret = write_off_dead_clock(t, tm, strict, probe[i] ? cpu_clock_pid(tm->clock_id) : 0,
						   &dead[i], err);
		else if (tm->sigev_notify == PTIMER_SIGEV_NONE) {
			/* an exited thread's: nothing to deliver */
			tm->pending = 0;
			tm->pending_overrun = 0;
		}
	}
	if (!ret && ptimer_fault("after-dump"))
		ret = ptimer_errf(err, EIO, "injected failure after the dump of process %d", t->pid);
	free(gone);
	free(dead);
	free(probe);
	free(aim_gone);
	if (ret)
		free(timers);
	return ret;
}

int ptimer_dump_task(struct ptimer_task *t, const struct ptimer_dump_opts *o, struct ptimer_image *img,
		     struct ptimer_err *err)
{
	struct ptimer_timer *timers = NULL;
	uint32_t n = 0;
	int ret;

	memset(img, 0, sizeof(*img));
	ret = ptimer_proc_read_timers(t->pid, &timers, &n, err);
	if (ret)
		return ret;
	ret = dump_timers(t, o, timers, n, err);
	if (ret)
		return ret;
	img->version = PTIMER_IMG_VERSION;
	img->pid = t->vpid;
	img->n_timers = n;
	img->timers = timers;
	ret = ptimer_dump_threads(t, NULL, img, err);
	if (ret)
		ptimer_image_free(img);
	return ret;
}

int ptimer_dump(pid_t pid, const char *dir, const struct ptimer_dump_opts *o, struct ptimer_dump_result *res,
		struct ptimer_err *err)
{
	struct ptimer_procwatch_window win = { 0 };
	struct ptimer_procwatch *w = NULL;
	struct ptimer_image img;
	struct ptimer_task t;
	struct ptimer_err werr;
	char path[4096];
	pid_t *tids = NULL;
	struct stat sb;
	int ret, n_tids = 0, left, sig;
	bool unwatched;

	if (stat(dir, &sb))
		return ptimer_errf(err, errno, "image directory %s: %s; %s", dir, strerror(errno),
				   errno == ENOENT ? "create it or pass another -D" : "pass another -D");
	if (!S_ISDIR(sb.st_mode))
		return ptimer_errf(err, ENOTDIR, "image directory %s: not a directory; pass a directory as -D",
				   dir);
	if (access(dir, W_OK | X_OK))
		return ptimer_errf(err, errno, "image directory %s: %s; pass a writable -D", dir, strerror(errno));
	/*
	 * The image is the process as it was while stopped: an exec from before
	 * the seize to the release, or an exit of a dumped thread while it was
	 * stopped, makes it stale.  What happens after the release does not.
	 */
	unwatched = ptimer_procwatch_start(&w, pid, &werr) != 0;
	ret = ptimer_task_seize(&t, pid, err);
	if (ret) {
		ptimer_procwatch_stop(w);
		return ret;
	}
	/* a process ptimer may not stop is refused with that one line alone:
	 * the watch's own trouble (no CAP_NET_ADMIN) is said once it is */
	if (unwatched)
		ptimer_log(PTIMER_LOG_WARN, "%s; dumping without that check", werr.msg);
	win.exit_from_ns = ptimer_now_ns();
	if (w) {
		/* take what queued during the seize: the socket starts the stop empty */
		const struct ptimer_proc_event *ev;
		size_t n_ev;

		ptimer_procwatch_poll(w, &ev, &n_ev);
	}
	ret = ptimer_task_gone(pid, ptimer_dump_task(&t, o, &img, err), "dumping its timers", err);
	if (!ret && w) {
		tids = malloc((size_t)t.n_threads * sizeof(*tids));
		if (tids) {
			memcpy(tids, t.tids, (size_t)t.n_threads * sizeof(*tids));
			n_tids = t.n_threads;
		} else {
			ret = ptimer_errf(err, ENOMEM, "out of memory");
			ptimer_image_free(&img);
		}
	}
	win.until_ns = ptimer_now_ns();
	left = ptimer_task_release(&t);
	if (!ret && left) {
		ret = ptimer_errf(err, ESTALE, "process %d: %d of its threads left their stop (killed?) while it "
				  "was being dumped; nothing written, dump again if it still runs", pid, left);
		ptimer_image_free(&img);
	}
	if (ret) {
		ptimer_procwatch_stop(w);
		free(tids);
		return ret;
	}
	ret = ptimer_image_path(path, sizeof(path), dir, img.pid);
	if (ret)
		ret = ptimer_errf(err, ret, "image path in %s is too long", dir);
	if (!ret && w)
		ret = ptimer_procwatch_check(w, tids, n_tids, &win, err);
	/*
	 * The last point where the dump can be abandoned with nothing written:
	 * a stop signal held since the freeze (ptimer_block_stop_signals) ends
	 * it here; one that comes later lets it finish.
	 */
	sig = ret ? 0 : ptimer_pending_stop_signal();
	if (sig)
		ret = ptimer_errf(err, EINTR, "process %d: interrupted by signal %d (%s); nothing written",
				  pid, sig, strsignal(sig));
	if (!ret)
		ret = ptimer_image_write(path, &img, err);
	if (!ret && res) {
		res->n_timers = img.n_timers;
		res->vpid = img.pid;
		snprintf(res->path, sizeof(res->path), "%s", path);
	}
	ptimer_procwatch_stop(w);
	free(tids);
	ptimer_image_free(&img);
	return ret;
}

/* Does the kernel have the exact-ID prctl (Linux 6.15)?  GET changes nothing. */
static bool kernel_exact_ids(void)
{
	return prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) >= 0;
}

/*
 * The timers of timers[n] (translated) that translate_notify changed from
 * what /proc showed (orig[n], same order): aimed at, or on the CPU clock
 * of, a thread that is gone.  Made so in t too, each keeping its time (a
 * dead clock's timer is disarmed: the kernel reaps it).  *done: made.
 */
static int replace_dead(struct ptimer_task *t, const struct ptimer_timer *orig, const struct ptimer_timer *timers,
			uint32_t n, bool *done, struct ptimer_err *err)
{
	struct ptimer_timer *with;
	uint32_t k = 0;
	int ret = 0;

	*done = false;
	with = calloc(n, sizeof(*with));
	if (!with)
		return ptimer_errf(err, ENOMEM, "out of memory for %u timers", n);
	for (uint32_t i = 0; i < n; i++)
		if (timers[i].sigev_notify != orig[i].sigev_notify || timers[i].clock_id != orig[i].clock_id)
			with[k++] = orig[i];
	if (!k)
		goto out;
	ret = ptimer_read_timer_state(t, with, k, err);
	for (uint32_t i = 0, j = 0; !ret && i < n; i++) {
		if (timers[i].sigev_notify == orig[i].sigev_notify && timers[i].clock_id == orig[i].clock_id)
			continue;
		/* the translated timer, with the state read; a dead clock: disarmed */
		struct ptimer_timer w = timers[i];

		if (timers[i].clock_id == orig[i].clock_id) {
			w.it_value = with[j].it_value;
			w.it_interval = with[j].it_interval;
		}
		w.overrun = 0;
		w.pending = 0;
		w.pending_overrun = 0;
		with[j++] = w;
	}
	if (!ret)
		ret = ptimer_replace_timers(t, with, k, err);
	if (!ret) {
		*done = true;
		ptimer_log(PTIMER_LOG_INFO, "process %d: %u timer%s that can never fire made SIGEV_NONE in the "
			   "process itself, so that criu saves and restores %s", t->pid, k, k > 1 ? "s" : "",
			   k > 1 ? "them" : "it");
	}
out:
	free(with);
	return ret;
}

/* Is an SI_TIMER signal in tid's queue (shared: its process's)? */
static int timer_signal_queued(pid_t tid, bool shared, bool *yes, struct ptimer_err *err)
{
	siginfo_t *si;
	size_t got;
	int ret = ptimer_sigqueue_peek(tid, shared, &si, &got);

	*yes = false;
	if (ret)
		return ptimer_errf(err, -ret, "reading the %s signal queue of thread %d (PTRACE_PEEKSIGINFO): %s",
				   shared ? "shared" : "private", tid, strerror(-ret));
	for (size_t i = 0; i < got && !*yes; i++)
		*yes = si[i].si_code == SI_TIMER;
	free(si);
	return 0;
}

int ptimer_timers_all_criu(const struct ptimer_task *t, bool *yes, struct ptimer_err *err)
{
	clockid_t process_clock = (clockid_t)((~(unsigned int)t->pid << 3) | 2u);	/* CPUCLOCK_SCHED */
	unsigned long long runtime;
	struct timespec ts;
	bool queued;
	int ret;

	*yes = false;
	if (t->other_pidns || t->n_threads != 1 || t->tids[0] != t->pid || ptimer_proc_same_pidns(t->pid) != 1)
		return 0;
	ret = ptimer_proc_runtime(t->pid, t->pid, &runtime);
	if (ret == -ENOENT && ptimer_proc_same_pidns(t->pid) == -ENOENT)
		return ptimer_errf(err, ESRCH, "process %d has exited", t->pid);
	if (ret)
		return 0;	/* no schedstat (no CONFIG_SCHED_INFO): the timers are read */
	if (clock_gettime(process_clock, &ts))
		return errno == EINVAL ? ptimer_errf(err, ESRCH, "process %d has exited", t->pid) : 0;
	if ((unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec != runtime)
		return 0;	/* a thread ran and exited: which clock a timer measures needs the look */
	ret = timer_signal_queued(t->pid, true, &queued, err);
	if (!ret && !queued)
		ret = timer_signal_queued(t->pid, false, &queued, err);
	if (!ret)
		*yes = !queued;
	return ret;
}

int ptimer_dump_task_for_criu(struct ptimer_task *t, const struct ptimer_dump_opts *o, bool replace_dead_ok,
			      struct ptimer_image *img, bool *criu_wrong, struct ptimer_err *err)
{
	struct ptimer_timer *timers = NULL, *orig = NULL, *sub = NULL;
	bool changed = false, replaced = false, strict = o && o->strict, longer = false, all_criu = false;
	bool list_all = strict || (o && o->list_all);
	bool *probe = NULL, *gone = NULL, *aim_gone = NULL;
	uint32_t n = 0, k = 0;
	int ret;

	memset(img, 0, sizeof(*img));
	*criu_wrong = false;
	ret = ptimer_proc_read_timers_within(t->pid, PTIMER_DUMP_LEAN_BYTES, &timers, &n, &longer, err);
	/* strict refuses a timer on a gone clock: only the full read sees one;
	 * list_all (native) wants every timer listed */
	if (!ret && longer && !list_all)
		ret = ptimer_timers_all_criu(t, &all_criu, err);
	if (!ret && longer && all_criu) {
		img->version = PTIMER_IMG_VERSION;
		img->pid = t->vpid;
		img->state_in_core = 1;
		img->timers_in_core = 1;
		return 0;
	}
	if (!ret && longer)
		ret = ptimer_proc_read_timers(t->pid, &timers, &n, err);
	if (ret)
		return ret;
	if (n)
		qsort(timers, n, sizeof(*timers), ptimer_timer_cmp_id);
	orig = malloc(((size_t)n + 1) * sizeof(*orig));
	probe = calloc((size_t)n + 1, sizeof(*probe));
	gone = calloc((size_t)n + 1, sizeof(*gone));
	aim_gone = calloc((size_t)n + 1, sizeof(*aim_gone));
	if (!orig || !probe || !gone || !aim_gone) {
		ret = ptimer_errf(err, ENOMEM, "out of memory for %u timers", n);
		goto out;
	}
	if (n)
		memcpy(orig, timers, n * sizeof(*orig));
	for (uint32_t i = 0; i < n && !ret; i++) {
		enum clock_fate fate;

		ret = translate_notify(t, &timers[i], strict, true, &fate, err);
		probe[i] = fate == CLOCK_PROBE || (!ret && fate == CLOCK_KEPT && reusable_clock(t, &timers[i]));
	}
	if (!ret && n)
		ret = read_pending(t, timers, n, false, err);
	if (!ret && n)
		ret = ptimer_probe_thread_targets(t, timers, n, aim_gone, err);
	for (uint32_t i = 0; !ret && i < n; i++)
		if (aim_gone[i])
			ret = aimed_at_gone(t, &timers[i], strict, timers[i].notify_tid,
					    "has exited (a new thread has its number)", err);
	/*
	 * Thread CPU clocks and the clocks of other tasks: their state, which
	 * thread each measures, whether its task has exited.  Nothing else
	 * needs the state: criu saves it.
	 */
	for (uint32_t i = 0; !ret && i < n; i++)
		k += ptimer_thread_clock(timers[i].clock_id) || probe[i];
	if (!ret && k) {
		sub = calloc(k, sizeof(*sub));
		if (!sub)
			ret = ptimer_errf(err, ENOMEM, "out of memory for %u timers", k);
		for (uint32_t i = 0, j = 0; !ret && i < n; i++)
			if (ptimer_thread_clock(timers[i].clock_id) || probe[i])
				sub[j++] = timers[i];
		if (!ret)
			ret = ptimer_read_timer_state(t, sub, k, err);
		for (uint32_t i = 0, j = 0; !ret && i < n; i++)
			if (ptimer_thread_clock(timers[i].clock_id) || probe[i])
				timers[i] = sub[j++];
		if (!ret)
			ret = ptimer_find_clock_threads(t, timers, n, gone, err);
		if (!ret)
			ret = ptimer_probe_gone_clocks(t, timers, n, probe, gone, err);
	}
	/*
	 * native (!replace_dead_ok): the task is left be and the image says
	 * what criu makes of such a timer, its clock as it is (criu alone
	 * restores a thread's own clock in the leader, disarmed).
	 */
	for (uint32_t i = 0; !ret && i < n; i++)
		if (gone[i] && replace_dead_ok)
			ret = write_off_dead_clock(t, &timers[i], strict, probe[i] ? cpu_clock_pid(orig[i].clock_id) : 0,
						   NULL, err);
	for (uint32_t i = 0; !ret && i < n; i++)
		changed = changed || timers[i].sigev_notify != orig[i].sigev_notify ||
			  timers[i].clock_id != orig[i].clock_id;
	if (!ret && changed && ptimer_fault("replace-dead"))
		ret = ptimer_errf(err, EIO, "injected failure before the timers that can never fire are replaced");
	if (!ret && changed) {
		if (replace_dead_ok && kernel_exact_ids())
			ret = replace_dead(t, orig, timers, n, &replaced, err);
		if (!ret && !replaced) {
			*criu_wrong = true;
			ptimer_log(PTIMER_LOG_WARN, "process %d: criu saves such a timer as it is (in a pid namespace "
				   "it cannot: \"Unable to convert the notify thread id\"), and only ptimer's restore "
				   "makes it SIGEV_NONE%s", t->pid, replace_dead_ok ? "; this kernel lacks exact-ID "
				   "timer_create (Linux 6.15) to make it so in the process now" : "");
		}
	}
	/*
	 * What criu makes of the rest is right: a CPU clock named by a tid or
	 * pid names the same task after criu's restore (criu restores every
	 * pid), a thread's own clock is moved to its thread after criu made it
	 * (ptimer_rebind_clock_timers), a timer aimed at a pid-namespace leader
	 * is saved aimed at the process (the plugin's dump) and aimed back
	 * after criu made it.
	 */
	for (uint32_t i = 0; !ret && i < n; i++) {
		struct ptimer_timer *tm = &timers[i];

		/* the state is criu's (core-<pid>.img) */
		memset(&tm->it_value, 0, sizeof(tm->it_value));
		memset(&tm->it_interval, 0, sizeof(tm->it_interval));
		tm->overrun = 0;
		if (tm->sigev_notify == PTIMER_SIGEV_NONE) {
			tm->pending = 0;
			tm->pending_overrun = 0;
		}
	}
	if (ret)
		goto out;
	img->version = PTIMER_IMG_VERSION;
	img->pid = t->vpid;
	img->n_timers = n;
	img->timers = timers;
	img->state_in_core = 1;
	timers = NULL;
out:
	free(timers);
	free(orig);
	free(sub);
	free(probe);
	free(gone);
	free(aim_gone);
	return ret;
}
