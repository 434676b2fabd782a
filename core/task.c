// SPDX-License-Identifier: MIT
/*
 * Stopping every thread of a process with ptrace and letting it go again.
 *
 * PTRACE_SEIZE + PTRACE_INTERRUPT (ptrace(2), Linux 3.4) attach without
 * sending a signal, so the process sees nothing.  A thread may be created
 * while we attach the others: list /proc/PID/task again until a pass finds
 * no new thread, as CRIU's seize_threads() does (criu/seize.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/task.h"
#include "core/caps.h"
#include "core/log.h"
#include "core/proc_timers.h"
#include "core/util.h"
#include "lib/procfs.h"
#include "restorer/host/inject.h"

#define SEIZE_PASSES	64	/* new threads keep appearing: give up after this */
#define STOP_WAITS	16	/* signal-delivery stops before our interrupt stop */

/* State letter of thread tid of pid (tid 0: the process) from its stat file, or 0. */
static char thread_state(pid_t pid, pid_t tid)
{
	struct ptimer_proc_stat st;

	return ptimer_proc_stat(pid, tid, &st) ? 0 : st.state;
}

static char proc_state(pid_t pid)
{
	return thread_state(pid, 0);
}

/* PF_KTHREAD in the flags field of /proc/PID/stat. */
static bool proc_is_kthread(pid_t pid)
{
	struct ptimer_proc_stat st;

	return !ptimer_proc_stat(pid, 0, &st) && (st.flags & PTIMER_PF_KTHREAD);
}

/*
 * Wait for the PTRACE_EVENT_STOP our interrupt asked for.  A signal that
 * was pending arrives first as a signal-delivery stop: hand it back to the
 * thread (PTRACE_CONT with it) so nothing is lost, then wait again.
 */
static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static int wait_interrupt_stop(struct ptimer_task *t, pid_t tid, struct ptimer_err *err)
{
	bool group_stop_seen = false;

	for (int i = 0; i < STOP_WAITS; i++) {
		int status;

		pid_t w;

		while ((w = waitpid(tid, &status, __WALL)) < 0 && errno == EINTR)
			;
		if (w != tid)
			return ptimer_errf(err, errno, "waiting for thread %d to stop: %s", tid, strerror(errno));
		/*
		 * The leader's exit reaches its tracer only once the whole
		 * group is dead (kernel/exit.c delay_group_leader()): the
		 * process is gone, which is what the user asked about.
		 */
		if ((WIFEXITED(status) || WIFSIGNALED(status)) && tid == t->pid)
			return ptimer_errf(err, ESRCH, "process %d exited while ptimer was attaching to it", tid);
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return ptimer_errf(err, ESRCH, "thread %d exited while being stopped", tid);
		if (!WIFSTOPPED(status))
			continue;
		if (status >> 16 == PTRACE_EVENT_STOP) {
			if (WSTOPSIG(status) == SIGTRAP)
				return 0;	/* our interrupt */
			/*
			 * A group-stop (the process was stopped, or stops now):
			 * a seized thread reports it as PTRACE_EVENT_STOP with
			 * the stop signal.  Let it out of that stop and into
			 * ours, as CRIU does (compel/src/lib/infect.c
			 * skip_sigstop()); the group stays stopped
			 * (SIGNAL_STOP_STOPPED), so PTRACE_DETACH, ours or the
			 * kernel's when ptimer dies, puts it back into the stop.
			 */
			if (is_stop_signal(WSTOPSIG(status))) {
				if (group_stop_seen)
					return 0;
				group_stop_seen = true;
				t->stopped = true;
				if (ptrace(PTRACE_CONT, tid, NULL, NULL))
					return ptimer_errf(err, errno, "cannot take stopped thread %d into a ptrace "
							   "stop: %s", tid, strerror(errno));
				continue;
			}
			return ptimer_errf(err, EPROTO, "thread %d: unexpected stop (signal %d) while ptimer "
					   "attached", tid, WSTOPSIG(status));
		}
		if (status >> 16)	/* other ptrace events: none enabled */
			continue;
		if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)WSTOPSIG(status)))
			return ptimer_errf(err, errno, "cannot resume thread %d with signal %d: %s", tid,
					   WSTOPSIG(status), strerror(errno));
		if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL))
			return ptimer_errf(err, errno, "cannot interrupt thread %d: %s", tid, strerror(errno));
	}
	return ptimer_errf(err, EBUSY, "thread %d keeps receiving signals; cannot stop it", tid);
}

static int task_add(struct ptimer_task *t, pid_t tid)
{
	int n = t->n_threads + 1;
	pid_t *tids = realloc(t->tids, (size_t)n * sizeof(pid_t));
	pid_t *vtids = tids ? realloc(t->vtids, (size_t)n * sizeof(pid_t)) : NULL;
	bool *seized;

	if (tids)
		t->tids = tids;
	if (vtids)
		t->vtids = vtids;
	seized = vtids ? realloc(t->seized, (size_t)n * sizeof(bool)) : NULL;
	if (!seized)
		return -ENOMEM;
	t->seized = seized;
	t->tids[t->n_threads] = tid;
	t->vtids[t->n_threads] = 0;
	t->seized[t->n_threads] = false;
	t->n_threads = n;
	return t->n_threads - 1;
}

static int task_find(const struct ptimer_task *t, pid_t tid)
{
	for (int i = 0; i < t->n_threads; i++)
		if (t->tids[i] == tid)
			return i;
	return -1;
}

/*
 * Fill vtids from NSpid (a kernel without NSpid has one namespace) and
 * pick the runner, the first thread that has not exited (the leader unless
 * it has), from State: of the same read of each thread's status.
 */
static int task_fill_vtids(struct ptimer_task *t, struct ptimer_err *err)
{
	int runner = -1;

	for (int i = 0; i < t->n_threads; i++) {
		char nspid[256] = "", state[16] = "";
		struct ptimer_status_key k[] = {
			{ .key = "State", .out = state, .len = sizeof(state) },
			{ .key = "NSpid", .out = nspid, .len = sizeof(nspid) },
		};
		int n = ptimer_proc_status_keys(t->pid, t->tids[i], k, 2);
		const char *last;
		pid_t v;

		if (n < 0 || !k[0].found)
			return ptimer_errf(err, ESRCH, "thread %d of process %d is gone", t->tids[i], t->pid);
		last = strrchr(nspid, '\t') ? strrchr(nspid, '\t') + 1 : nspid;
		v = k[1].found && *last ? (pid_t)strtol(last, NULL, 10) : t->tids[i];
		if (v <= 0)
			return ptimer_errf(err, ESRCH, "thread %d of process %d is gone", t->tids[i], t->pid);
		t->vtids[i] = v;
		if (runner < 0 && state[0] != 'Z' && state[0] != 'X')
			runner = i;
	}
	if (runner < 0)
		return ptimer_errf(err, ESRCH, "process %d has no live thread left", t->pid);
	t->runner = runner;
	t->vpid = t->vtids[0];
	t->other_pidns = t->vpid != t->pid || ptimer_proc_same_pidns(t->pid) == 0;
	return 0;
}

/* The leader has exited (pthread_exit) but other threads live. */
static bool leader_exited(pid_t pid)
{
	char st = proc_state(pid);

	return st == 'Z' || st == 'X';
}

#define LEADER_EXIT_WAITS	200	/* 1 ms each */

/* The leader is exiting (PF_EXITING): true once it is a zombie while
 * another thread of the process lives on; false when the whole process
 * goes, or it stays exiting for LEADER_EXIT_WAITS ms. */
static bool leader_becomes_zombie(pid_t pid)
{
	for (int i = 0; i < LEADER_EXIT_WAITS && ptimer_thread_exiting(pid, pid); i++) {
		if (leader_exited(pid)) {
			pid_t *tids;
			int n = ptimer_proc_threads(pid, &tids);

			if (n > 0)
				free(tids);
			return n > 1;
		}
		usleep(1000);
	}
	return false;
}

/* Threads of pid that have not exited (state other than Z and X). */
static int live_threads(pid_t pid)
{
	pid_t *tids;
	int n = ptimer_proc_threads(pid, &tids), live = 0;

	for (int i = 0; i < n; i++) {
		char st = thread_state(pid, tids[i]);

		live += st && st != 'Z' && st != 'X';
	}
	if (n > 0)
		free(tids);
	return live;
}

static int task_list(struct ptimer_task *t, pid_t pid, bool seize, bool *grew, struct ptimer_err *err)
{
	pid_t *tids;
	int n = ptimer_proc_threads(pid, &tids), ret = 0;

	if (n < 0)
		return ptimer_errf(err, n, "cannot list threads of process %d (/proc/%d/task): %s", pid, pid,
				   strerror(-n));
	*grew = false;
	for (int i = 0; i < n && !ret; i++) {
		int idx;

		if (task_find(t, tids[i]) >= 0)
			continue;
		*grew = true;
		/* a zombie leader cannot be attached (EPERM); its threads can */
		if (!seize || (tids[i] == pid && leader_exited(pid))) {
			if (task_add(t, tids[i]) < 0)
				ret = ptimer_errf(err, ENOMEM, "out of memory");
			continue;
		}
		if (ptrace(PTRACE_SEIZE, tids[i], NULL, NULL)) {
			int e = errno;

			/* exited meanwhile, or exiting: EPERM from ptrace_attach() */
			if ((e == ESRCH || (e == EPERM && ptimer_thread_exiting(pid, tids[i]))) && tids[i] != pid) {
				ptimer_log(PTIMER_LOG_DEBUG, "thread %d of process %d exited or is exiting (seize: "
					   "%s): skipped", tids[i], pid, strerror(e));
				continue;
			}
			/* a leader in pthread_exit() turns zombie in a moment: wait
			 * for that (its threads live on), at most LEADER_EXIT_WAITS ms */
			if (e == EPERM && leader_becomes_zombie(pid)) {
				if (task_add(t, tids[i]) < 0)
					ret = ptimer_errf(err, ENOMEM, "out of memory");
				continue;
			}
			if (e == EPERM && ptimer_thread_exiting(pid, tids[i]))
				ret = ptimer_errf(err, ESRCH, "cannot attach to process %d: its thread group leader "
						  "is exiting", pid);
			else if (e == EPERM)
				ret = ptimer_errf(err, EPERM, "cannot attach to process %d (thread %d): operation "
						  "not permitted; run as root or with CAP_SYS_PTRACE%s", pid, tids[i],
						  ptimer_yama_hint());
			else
				ret = ptimer_errf(err, e, "cannot attach to process %d (thread %d): %s", pid,
						  tids[i], strerror(e));
			break;
		}
		idx = task_add(t, tids[i]);
		if (idx < 0) {
			ptrace(PTRACE_DETACH, tids[i], NULL, NULL);
			ret = ptimer_errf(err, ENOMEM, "out of memory");
			break;
		}
		t->seized[idx] = true;
		if (ptrace(PTRACE_INTERRUPT, tids[i], NULL, NULL))
			ret = ptimer_errf(err, errno, "cannot interrupt thread %d: %s", tids[i], strerror(errno));
		else
			ret = wait_interrupt_stop(t, tids[i], err);
		if (ret == -ESRCH && tids[i] != pid) {
			/* exited between seize and stop: forget it */
			t->n_threads--;
			ret = 0;
		}
	}
	free(tids);
	return ret;
}

/*
 * After the thread list (ret: its result): own-namespace tids and the
 * thread code runs in; with sweep, what a ptimer that was killed left in
 * the process goes first.  On any failure t is released.
 */
static int task_finish(struct ptimer_task *t, int ret, bool sweep, struct ptimer_err *err)
{
	if (!ret)
		ret = task_fill_vtids(t, err);
	if (!ret && sweep)
		ret = ptimer_blob_sweep(ptimer_task_runner(t), err);
	if (ret)
		ptimer_task_release(t);
	return ret;
}

int ptimer_task_gone(pid_t pid, int ret, const char *doing, struct ptimer_err *err)
{
	pid_t *tids;
	int n, i;

	if (!ret)
		return 0;
	/* -ESRCH: /proc/PID is still there but lists no thread (being torn down) */
	n = ptimer_proc_threads(pid, &tids);
	if (n < 0 && n != -ENOENT && n != -ESRCH)
		return ret;
	for (i = 0; i < n && ptimer_thread_exiting(pid, tids[i]); i++)
		;
	if (n > 0)
		free(tids);
	if (i < n)
		return ret;
	return ptimer_errf(err, ESRCH, "process %d exited while ptimer was %s", pid, doing);
}

int ptimer_task_seize(struct ptimer_task *t, pid_t pid, struct ptimer_err *err)
{
	struct ptimer_proc_stat ps;
	bool grew = true;
	char st;
	int ret = 0, pass;
	pid_t tgid;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->owns_waits = true;
	if (pid == getpid())
		return ptimer_errf(err, EINVAL, "process %d is ptimer itself", pid);
	ret = ptimer_proc_stat(pid, 0, &ps);
	if (ret == -ENOENT || ret == -ESRCH)
		return ptimer_errf(err, ESRCH, "no process %d", pid);
	if (ret)
		return ptimer_errf(err, -ret, "cannot read /proc/%d/stat: %s", pid, strerror(-ret));
	st = ps.state;
	if ((st == 'Z' || st == 'X') && !live_threads(pid))
		return ptimer_errf(err, ESRCH, "process %d has exited: it is a zombie with no live thread, "
				   "waiting for its parent to reap it; it has no timers left", pid);
	tgid = ptimer_proc_tgid(pid);
	/* gone between the two reads (killed as ptimer starts) */
	if (tgid == -ENOENT || tgid == -ESRCH)
		return ptimer_errf(err, ESRCH, "process %d exited while ptimer was attaching to it", pid);
	if (tgid < 0)
		return ptimer_errf(err, -tgid, "cannot read /proc/%d/status: %s", pid, strerror(-tgid));
	if (tgid != pid)
		return ptimer_errf(err, EINVAL, "%d is a thread of process %d, not a process: pass -t %d", pid,
				   tgid, tgid);
	if (proc_is_kthread(pid))
		return ptimer_errf(err, EINVAL, "process %d is a kernel thread: it has no POSIX timers to dump "
				   "or restore", pid);
	/* name the missing capability, yama setting or other tracer up front */
	ret = ptimer_may_attach(pid, err);
	if (ret)
		return ret;
	for (pass = 0; pass < SEIZE_PASSES && grew && !ret; pass++)
		ret = task_list(t, pid, true, &grew, err);
	if (!ret && grew)
		ret = ptimer_errf(err, EAGAIN, "process %d keeps creating threads; cannot stop them all", pid);
	if (!ret && (t->n_threads == 0 || t->tids[0] != pid))
		ret = ptimer_errf(err, ESRCH, "thread group leader %d is gone", pid);
	return ptimer_task_gone(pid, task_finish(t, ret, true, err), "attaching to it", err);
}

int ptimer_task_adopt(struct ptimer_task *t, pid_t pid, struct ptimer_err *err)
{
	bool grew;
	int ret;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	ret = task_list(t, pid, false, &grew, err);
	return task_finish(t, ret, false, err);
}

unsigned int ptimer_task_blob_flags(const struct ptimer_task *t)
{
	return (t->owns_waits ? PTIMER_BLOB_OWNS_WAITS : 0) | (t->dies_with_tracer ? PTIMER_BLOB_DIES_WITH_TRACER : 0);
}

int ptimer_task_release(struct ptimer_task *t)
{
	int left = 0;

	for (int i = 0; i < t->n_threads; i++) {
		if (!t->seized[i] || !ptrace(PTRACE_DETACH, t->tids[i], NULL, NULL))
			continue;
		/* PTRACE_DETACH needs the thread in its ptrace stop
		 * (ptrace_check_attach()): ESRCH means it left it, killed */
		if (errno == ESRCH)
			left++;
		else
			ptimer_log(PTIMER_LOG_WARN, "cannot detach from thread %d: %s", t->tids[i],
				   strerror(errno));
	}
	free(t->tids);
	free(t->vtids);
	free(t->seized);
	t->tids = t->vtids = NULL;
	t->seized = NULL;
	t->n_threads = 0;
	return left;
}

int ptimer_task_kill(pid_t pid, int timeout_ms)
{
	pid_t *tids = NULL;
	int n = ptimer_proc_threads(pid, &tids), left = 0;
	uint64_t end = ptimer_now_ns() + (uint64_t)timeout_ms * 1000000ull;

	kill(pid, SIGKILL);
	for (int i = 0; i < n; i++)
		if (tids[i] != pid)
			tids[left++] = tids[i];
	while (left) {
		int st, k = 0;

		for (int i = 0; i < left; i++) {
			pid_t r = waitpid(tids[i], &st, __WALL | WNOHANG);

			/* 0: not dead yet; ECHILD: reaped, or not ours */
			if (r == 0 || (r < 0 && errno == EINTR))
				tids[k++] = tids[i];
		}
		left = k;
		if (!left || ptimer_now_ns() > end)
			break;
		usleep(1000);
	}
	if (n > 0)
		free(tids);
	return left;
}

pid_t ptimer_task_runner(const struct ptimer_task *t)
{
	return t->n_threads ? t->tids[t->runner] : t->pid;
}

pid_t ptimer_task_vtid(const struct ptimer_task *t, pid_t host_tid)
{
	int i = task_find(t, host_tid);

	return i < 0 ? 0 : t->vtids[i];
}

pid_t ptimer_task_host_tid(const struct ptimer_task *t, pid_t vtid)
{
	for (int i = 0; i < t->n_threads; i++)
		if (t->vtids[i] == vtid)
			return t->tids[i];
	return 0;
}

pid_t ptimer_map_tid(const struct ptimer_task *t, pid_t image_pid, const struct ptimer_tid_map *map,
		     int n_map, pid_t tid)
{
	if (tid == image_pid)
		return t->vpid;
	for (int i = 0; i < n_map; i++)
		if (map[i].from == tid)
			return ptimer_task_vtid(t, map[i].to);
	return ptimer_task_host_tid(t, tid) ? tid : 0;
}
