// SPDX-License-Identifier: MIT
/*
 * The plugin after criu restored a task: RESUME_DEVICES_LATE(pid), per
 * task, every thread stopped by criu at the exit of rt_sigreturn
 * (criu/cr-restore.c), the plan (plan.c) carried out in it: ptimer makes
 * the timers, or checks and completes what criu made (a leader's timer
 * aimed back, a thread-CPU-clock timer moved to its thread, a pending
 * expiry queued again, rseq slice state).  A task ptimer could not give
 * its timers is killed, so that criu fails the restore rather than let it
 * run without them; one whose timers ptimer makes dies with a killed criu
 * until ptimer is done with it (hold).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <criu/criu-plugin.h>

#include "core/fault.h"
#include "core/log.h"
#include "core/pending.h"
#include "core/restore.h"
#include "core/rseq.h"
#include "core/task.h"
#include "core/timer_state.h"
#include "lib/procfs.h"
#include "plugin/plugin.h"
#include "restorer/abi.h"
#include "restorer/host/inject.h"

/*
 * After criu made the timers as it saved them (criu 4.2+ in criu-mode auto,
 * criu-mode native, a read-only directory): the ones the dump aimed at the
 * process while criu saved them (struct
 * reaimed) are aimed at the leader again, as the image has them, with the
 * timing criu gave them.  Needs the exact-ID prctl.  Returns 0 or -errno.
 */
static int reaim_restored(struct ptimer_task *t, const struct ptimer_image *img, struct ptimer_err *err)
{
	struct ptimer_timer *with;
	uint32_t k;
	int ret;

	if (prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) < 0)
		return 0;
	ret = leader_timers(t, img, &with, err);
	if (ret <= 0)
		return ret;
	k = (uint32_t)ret;
	for (uint32_t i = 0; i < k; i++) {
		with[i].overrun = 0;
		with[i].pending = 0;
		with[i].pending_overrun = 0;
	}
	ret = ptimer_replace_timers(t, with, k, err);
	if (!ret)
		ptimer_log(PTIMER_LOG_INFO, "task %d: %u timer%s criu made aimed at the process aimed at its leader "
			   "again, as the image has %s", t->pid, k, k > 1 ? "s" : "", k > 1 ? "them" : "it");
	free(with);
	return ret;
}

/*
 * A task whose timers ptimer restores must not run without them.  Between
 * criu's RESUME_DEVICES_LATE calls for two tasks, or while ptimer works in
 * one, a criu that is killed (an orchestrator's timeout, the OOM killer)
 * leaves its tracees detached, and a task whose call had not come ran on
 * with no timer where criu's core image had them stripped.  So at the
 * first call, when criu holds every task stopped (criu/cr-restore.c: after
 * compel_stop_on_syscall() and finalize_restore()), each task whose timers
 * ptimer restores is set PTRACE_O_EXITKILL (Linux 3.8): the kernel kills it if
 * its tracer, criu, dies; when ptimer has done its work the option goes
 * again and the task is criu's as before.  criu set PTRACE_O_TRACESYSGOOD
 * and, for a task under seccomp, PTRACE_O_SUSPEND_SECCOMP
 * (criu/cr-restore.c attach_to_tasks()); both are kept (the second is set
 * where the kernel lets criu, as it does for every task then: without a
 * filter there is nothing to suspend).  Tasks are found by their pid where
 * criu restored them in its own pid namespace (their pids are the
 * image's), else among the descendants of the first task called (the
 * tree's root: criu calls it first).
 */
static unsigned long held_opts = PTRACE_O_TRACESYSGOOD | PTRACE_O_SUSPEND_SECCOMP;

static int hold_opts(pid_t pid, bool exitkill)
{
	unsigned long o = held_opts | (exitkill ? PTRACE_O_EXITKILL : 0);

	if (!ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)o))
		return 0;
	if (errno == EINVAL || errno == EPERM) {
		/* no seccomp suspension here: criu could not set it either */
		held_opts &= ~(unsigned long)PTRACE_O_SUSPEND_SECCOMP;
		o &= ~(unsigned long)PTRACE_O_SUSPEND_SECCOMP;
		if (!ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)o))
			return 0;
	}
	return -errno;
}

static void hold(struct planned *p, pid_t pid)
{
	/* only a task criu gave no timer (ptimer's): the others have criu's */
	if (p->run.held || p->maker != MAKER_PTIMER || hold_opts(pid, true))
		return;
	p->run.held = pid;
}

/* root's descendants (the children of each of its threads), breadth first */
static void hold_tree(pid_t root)
{
	size_t n = 0, cap = 64, at = 0;
	pid_t *q = malloc(cap * sizeof(*q));

	if (!q)
		return;
	q[n++] = root;
	while (at < n) {
		pid_t x = q[at++], *tids = NULL, v = ptimer_proc_nspid(x, x);
		struct planned *p = v > 0 ? planned_of(v) : NULL;
		int nt;

		if (p)
			hold(p, x);
		nt = ptimer_proc_threads(x, &tids);
		for (int i = 0; i < nt; i++) {
			char path[64];
			long c;
			FILE *f;

			snprintf(path, sizeof(path), "/proc/%d/task/%d/children", x, tids[i]);
			f = fopen(path, "re");
			while (f && fscanf(f, "%ld", &c) == 1) {
				if (n == cap) {
					pid_t *v2 = realloc(q, (cap * 2) * sizeof(*q));

					if (!v2)
						break;
					q = v2;
					cap *= 2;
				}
				q[n++] = (pid_t)c;
			}
			if (f)
				fclose(f);
		}
		if (nt > 0)
			free(tids);
	}
	free(q);
}

static bool held_all;		/* the first RESUME_DEVICES_LATE held them (hold_all) */
/*
 * The first call's task is in criu's pid namespace (its ns/pid is criu's):
 * criu restored the tree there, every task with its image's pid (criu
 * refuses nested pid namespaces at dump, criu/namespaces.c), so no call
 * reads a task's NSpid to find its plan.
 */
static bool own_pidns;

void resume_reset(void)
{
	held_all = false;
	own_pidns = false;
}

/* At the first call (pid: its task). */
static void hold_all(pid_t pid)
{
	held_all = true;
	if (own_pidns) {
		/* criu's own pid namespace: each task has its image's pid */
		for (size_t i = 0; i < n_plan; i++)
			hold(&plan[i], plan[i].vpid);
	} else {
		hold_tree(pid);
	}
}

/* Done with p: the task is criu's as before. */
static void release_hold(struct planned *p)
{
	if (p->run.held && !hold_opts(p->run.held, false))
		p->run.held = 0;
}

/*
 * Kill a task criu holds (RESUME_DEVICES_LATE: every thread ptrace-stopped
 * by criu, whose process this code runs in) and reap its threads other
 * than the leader.  A traced thread that dies stays a zombie until its
 * tracer waits for it with __WALL; criu's detach loop stops at the dead
 * leader ("Unable to detach") and its wait for the root task has no
 * __WALL (criu/cr-restore.c, 4.2 and criu-dev), so a multi-threaded root
 * (pid 1 of a pid namespace) never finished exiting and criu waited for
 * ever.  With the other threads reaped here, the leader exits and criu
 * fails the restore at once.
 */
static void kill_task(pid_t pid)
{
	pid_t *tids = NULL;
	int n;

	n = ptimer_proc_threads(pid, &tids);
	kill(pid, SIGKILL);
	for (int i = 0; i < n; i++) {
		int st;

		if (tids[i] != pid)
			while (waitpid(tids[i], &st, __WALL) < 0 && errno == EINTR)
				;
	}
	free(tids);
}

int plugin_resume_late(int pid)
{
	struct ptimer_restore_opts o = { .mode = conf.restore_mode, .rseq_slice = conf.rseq_slice };
	struct ptimer_restore_stats st;
	struct ptimer_task t;
	struct ptimer_err err;
	struct planned *p;
	pid_t vpid;
	int ret;

	/* nothing of ptimer's in any task (no image, or criu makes all): not even a look */
	if (pid <= 0 || !n_work)
		return -ENOTSUP;
	/* the first call: is the tree in criu's pid namespace (then a pid is
	 * its vpid, and no task's NSpid is read)? */
	if (!held_all) {
		int same = ptimer_proc_same_pidns(pid);

		own_pidns = same == 1;
		/* no ns/pid (CONFIG_PID_NS=n): no NSpid either, one namespace */
		if (same < 0)
			own_pidns = ptimer_proc_nspid(pid, pid) == -EINVAL;
	}
	vpid = own_pidns ? pid : ptimer_proc_nspid(pid, pid);
	if (vpid == -EINVAL)
		vpid = pid;
	if (vpid <= 0) {
		ptimer_log(PTIMER_LOG_ERROR, "task %d: cannot read its pid namespace view (NSpid)", pid);
		return -1;
	}
	/* planned at init: a task with nothing to restore has no image */
	p = planned_of(vpid);
	if (!held_all) {
		hold_all(pid);
		overlay_release();
	}
	if (p)
		p->run.seen = true;
	if (!p) {
		ptimer_log(PTIMER_LOG_DEBUG, "task %d (vpid %d): no ptimers-%d.img, nothing to do", pid, vpid, vpid);
		return -ENOTSUP;
	}
	if (!p->work)		/* said at init */
		return -ENOTSUP;
	if (ptimer_fault("resume-late")) {
		ret = ptimer_errf(&err, EIO, "injected failure in RESUME_DEVICES_LATE");
		goto fail;
	}
	ret = ptimer_task_adopt(&t, pid, &err);
	if (ret)
		goto fail;
	o.put_pdeath = p->pdeath;
	o.pdeath_sig = (int)p->pdeath_orig;
	if (!p->img.version) {
		/* an ancestor without an image, held by its pdeath_sig (plan.c) */
		ret = ptimer_put_pdeath(&t, o.pdeath_sig, &err);
	} else if (p->maker == MAKER_PTIMER) {
		ret = ptimer_restore_task(&t, &p->img, &o, &st, &err);
		if (!ret)
			ret = ptimer_criu_pending(&t, &p->img, &err);
		if (!ret)
			ptimer_log(PTIMER_LOG_INFO, "task %d (vpid %d): %u POSIX timers restored, %s mode, %.3f ms",
				   pid, vpid, p->img.n_timers, st.mode == PTIMER_RESTORE_LINEAR ? "linear" : "exact-ID",
				   (double)st.ns_total / 1e6);
	} else {
		ret = reaim_restored(&t, &p->img, &err);
		if (!ret && p->verify)
			ret = ptimer_verify_task(&t, &p->img, &o, &err);
		if (!ret)
			ret = ptimer_restore_slice_task(&t, &p->img, &o, &err);
		if (!ret)
			ret = ptimer_rebind_clock_timers(&t, &p->img, &o, &err);
		if (!ret)
			ret = ptimer_criu_pending(&t, &p->img, &err);
		if (!ret && p->pdeath)
			ret = ptimer_put_pdeath(&t, o.pdeath_sig, &err);
		if (!ret && p->verify)
			ptimer_log(PTIMER_LOG_INFO, "task %d (vpid %d): the %u timers criu restored match the image",
				   pid, vpid, p->img.n_timers);
		else if (!ret)
			ptimer_log(PTIMER_LOG_DEBUG, "task %d (vpid %d): criu restored its %u POSIX timers "
				   "(criu-mode auto)", pid, vpid, p->img.n_timers);
	}
	ptimer_task_release(&t);
	if (!ret) {
		release_hold(p);
		return -ENOTSUP;
	}
fail:
	/*
	 * criu only logs a failed RESUME_DEVICES_LATE (criu/cr-restore.c).  A
	 * task without its timers, or with timers that differ, must not run:
	 * killing it makes criu's detach fail, and criu then fails the whole
	 * restore and kills the tree.
	 */
	ptimer_log(PTIMER_LOG_ERROR, "task %d (vpid %d): %s; killing the task so that the restore fails "
		   "rather than run without its timers", pid, vpid, err.msg);
	kill_task(pid);
	return ret < 0 && ret != -ENOTSUP ? ret : -1;
}
