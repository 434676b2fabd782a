// SPDX-License-Identifier: MIT
/*
 * The plugin after criu restored the tree: criu calls RESUME_DEVICES_LATE
 * for each task in one loop, once it has caught every task at the exit of
 * its rt_sigreturn and stopped it (criu/cr-restore.c restore_root_task()).
 * So at the first call every task is stopped and ptimer's to reach, and
 * the whole plan is carried out there: each task gets its timers (ptimer
 * makes them, or checks and completes what criu made: a leader's timer
 * aimed back, a thread-CPU-clock timer moved to its thread, a pending
 * expiry queued again, rseq slice state) and its dumped parent-death
 * signal back, in the same run of ptimer's code where ptimer makes them.
 *
 * Until then every held task has pdeath_sig SIGKILL (plan.c), so a criu
 * killed before the first call takes the whole tree with it.  For the
 * call itself every thread of each held task is set PTRACE_O_EXITKILL
 * (Linux 3.8; criu, whose process this is, is the tracer): a criu killed
 * while ptimer works still takes the whole tree, though some tasks have
 * their own signal back already.  The option goes again at the end, so
 * that a criu killed in its own detach loop leaves the tree as criu alone
 * would.  A task
 * ptimer could not complete is killed, so that criu fails the restore
 * rather than let it run without its timers.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "core/fault.h"
#include "core/leader.h"
#include "core/log.h"
#include "core/pending.h"
#include "core/restore.h"
#include "core/task.h"
#include "lib/procfs.h"
#include "plugin/plugin.h"

static bool pidns_ino(pid_t pid, ino_t *ino)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", pid);
	if (stat(path, &st))
		return false;
	*ino = st.st_ino;
	return true;
}

static pid_t ppid_of(pid_t pid)
{
	char buf[32];

	return ptimer_proc_status(pid, pid, "PPid", buf, sizeof(buf)) ? 0 : (pid_t)atoi(buf);
}

/*
 * PTRACE_O_EXITKILL on every thread of the task (on) or off again, criu's
 * own options kept: PTRACE_O_TRACESYSGOOD and, for a task under seccomp,
 * PTRACE_O_SUSPEND_SECCOMP (criu/cr-restore.c attach_to_tasks()), the
 * second set where the kernel lets criu (*opts loses it where it does
 * not).  Every thread: a dead tracer's tracees are detached one by one
 * (kernel/ptrace.c exit_ptrace()), and one without the option, detached
 * before its leader is killed, would run on for a moment with what ptimer
 * left in its registers (inject.h, PTIMER_BLOB_DIES_WITH_TRACER).
 * Returns 0 or the first -errno; every thread is tried.
 */
static int exitkill(pid_t pid, bool on, unsigned long *opts)
{
	pid_t *tids = NULL;
	int n = ptimer_proc_threads(pid, &tids), ret = n < 0 ? n : 0;

	for (int i = 0; i < n; i++) {
		unsigned long o = *opts | (on ? PTRACE_O_EXITKILL : 0);
		int r = ptrace(PTRACE_SETOPTIONS, tids[i], NULL, (void *)o) ? -errno : 0;

		if (r == -EINVAL || r == -EPERM) {
			*opts &= ~(unsigned long)PTRACE_O_SUSPEND_SECCOMP;
			o &= ~(unsigned long)PTRACE_O_SUSPEND_SECCOMP;
			r = ptrace(PTRACE_SETOPTIONS, tids[i], NULL, (void *)o) ? -errno : 0;
		}
		ret = ret ? ret : r;
	}
	if (n > 0)
		free(tids);
	return ret;
}

/*
 * The host pid of every planned task into host[] (0: not found).  In
 * criu's own pid namespace a task has its image's pid (criu refuses nested
 * pid namespaces at dump, criu/namespaces.c); else the tree is found from
 * the task of the first call: up to the root (the last ancestor in the
 * same pid namespace: criu, or its caller under --restore-sibling, is
 * outside it), then down through each thread's children.
 */
static void find_hosts(const struct plan *plan, pid_t first, pid_t *host)
{
	size_t n = 0, cap = 64, at = 0;
	pid_t *q, root = first, up;
	ino_t ns, pns;
	int same = ptimer_proc_same_pidns(first);

	/* no ns/pid (CONFIG_PID_NS=n): one namespace */
	if (same == 1 || (same < 0 && ptimer_proc_nspid(first, first) == -EINVAL)) {
		for (size_t i = 0; i < plan->n; i++)
			host[i] = plan->task[i].vpid;
		return;
	}
	if (!pidns_ino(first, &ns))
		return;
	while ((up = ppid_of(root)) > 0 && up != getpid() && pidns_ino(up, &pns) && pns == ns)
		root = up;
	q = malloc(cap * sizeof(*q));
	if (!q)
		return;
	q[n++] = root;
	while (at < n) {
		pid_t x = q[at++], *tids = NULL, v = ptimer_proc_nspid(x, x);
		struct planned *p = v > 0 ? plan_find(plan, v) : NULL;
		int nt;

		if (p)
			host[p - plan->task] = x;
		nt = ptimer_proc_threads(x, &tids);
		for (int i = 0; i < nt; i++) {
			char path[64];
			long c;
			FILE *f;

			snprintf(path, sizeof(path), "/proc/%d/task/%d/children", x, tids[i]);
			f = fopen(path, "re");
			while (f && fscanf(f, "%ld", &c) == 1) {
				if (n == cap) {
					pid_t *v2 = realloc(q, (cap *= 2) * sizeof(*q));

					if (!v2)
						break;
					q = v2;
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

/* One task (t adopted): its timers as the plan says, and its dumped
 * parent-death signal back where it is held. */
static int complete_task(struct ptimer_task *t, const struct planned *p, const struct ptimer_plugin_conf *conf,
			 struct ptimer_err *err)
{
	struct ptimer_restore_opts o = { .mode = conf->restore_mode, .rseq_slice = conf->rseq_slice,
					 .slice_start_disabled = true,
					 .pdeath_sig = (int)p->pdeath_orig };
	const struct ptimer_image *img = &p->img;
	unsigned int todo = p->d.todo;
	struct ptimer_restore_stats st;
	int ret = 0;

	if (!p->has_image)
		return ptimer_put_pdeath(t, o.pdeath_sig, err);
	if (p->d.outcome == DECIDE_PTIMER) {
		/* the signal in the same run of ptimer's code as the timers */
		o.put_pdeath = p->held;
		ret = ptimer_restore_task(t, img, &o, &st, err);
		if (!ret && (todo & DO_PENDING))
			ret = ptimer_criu_pending(t, img, err);
		if (!ret)
			ptimer_log(PTIMER_LOG_INFO, "task %d (vpid %d): %u POSIX timers restored, %s mode, %.3f ms",
				   t->pid, p->vpid, img->n_timers,
				   st.mode == PTIMER_RESTORE_LINEAR ? "linear" : "exact-ID", (double)st.ns_total / 1e6);
		return ret;
	}
	if (todo & DO_REAIM) {
		struct ptimer_timer *with = NULL;
		int k = ptimer_leader_timers(t, img, &with, err);

		ret = k > 0 ? ptimer_aim_timers(t, with, (uint32_t)k, false, err) : k;
		if (k > 0 && !ret)
			ptimer_log(PTIMER_LOG_INFO, "task %d: %d timer%s criu made aimed at the process aimed at its "
				   "leader again, as the image has %s", t->pid, k, k > 1 ? "s" : "",
				   k > 1 ? "them" : "it");
		free(with);
	}
	if (!ret && p->d.outcome == DECIDE_CRIU_CHECKED)
		ret = ptimer_verify_task(t, img, &o, err);
	if (!ret && (todo & DO_SLICE))
		ret = ptimer_restore_slice_task(t, img, &o, err);
	if (!ret && (todo & DO_CLOCKS))
		ret = ptimer_rebind_clock_timers(t, img, &o, err);
	if (!ret && (todo & DO_PENDING))
		ret = ptimer_criu_pending(t, img, err);
	if (!ret && p->held)
		ret = ptimer_put_pdeath(t, o.pdeath_sig, err);
	if (!ret && p->d.outcome == DECIDE_CRIU_CHECKED)
		ptimer_log(PTIMER_LOG_INFO, "task %d (vpid %d): the %u timers criu restored match the image", t->pid,
			   p->vpid, img->n_timers);
	else if (!ret)
		ptimer_log(PTIMER_LOG_DEBUG, "task %d (vpid %d): criu restored its %u POSIX timers (criu-mode auto)",
			   t->pid, p->vpid, img->n_timers);
	return ret;
}

/* A task ptimer could not complete: killed, said in one line. */
static int failed(pid_t pid, pid_t vpid, int ret, const struct ptimer_err *err)
{
	int left;

	ptimer_log(PTIMER_LOG_ERROR, "task %d (vpid %d): %s; killing the task so that the restore fails rather "
		   "than run without its timers", pid, vpid, err->msg);
	/* criu's detach loop stops at the dead leader and its wait for the
	 * root task has no __WALL (criu/cr-restore.c, 4.2 and criu-dev): the
	 * killed task's other threads are ptimer's to reap, or a
	 * multi-threaded root would never finish exiting */
	left = ptimer_task_kill(pid, 10000);
	if (left)
		ptimer_log(PTIMER_LOG_WARN, "task %d: %d of its threads not reaped 10 s after SIGKILL", pid, left);
	return ret < 0 ? ret : -EIO;
}

int resume_tree(const struct plan *plan, const struct ptimer_plugin_conf *conf, int pid)
{
	unsigned long opts = PTRACE_O_TRACESYSGOOD | PTRACE_O_SUSPEND_SECCOMP;
	pid_t *host = calloc(plan->n ? plan->n : 1, sizeof(*host));
	bool *kills = calloc(plan->n ? plan->n : 1, sizeof(*kills));
	struct ptimer_err err;
	int ret = 0;

	if (!host || !kills) {
		free(host);
		free(kills);
		ptimer_errf(&err, ENOMEM, "out of memory");
		return failed(pid, 0, -ENOMEM, &err);
	}
	find_hosts(plan, pid, host);
	for (size_t i = 0; i < plan->n; i++)
		kills[i] = plan->task[i].held && host[i] && !exitkill(host[i], true, &opts);
	for (size_t i = 0; !ret && i < plan->n; i++) {
		const struct planned *p = &plan->task[i];
		struct ptimer_task t;

		if (!planned_work(p))
			continue;
		/* a task only held that is not there: nothing of it to complete */
		if (!host[i] && (!p->has_image || (p->d.outcome == DECIDE_CRIU && !p->d.todo))) {
			ptimer_log(PTIMER_LOG_WARN, "task vpid %d is not among the tasks criu restored: its "
				   "parent-death signal stays SIGKILL", p->vpid);
			continue;
		}
		if (!host[i]) {
			/* the task of this call killed: criu fails the restore */
			ptimer_errf(&err, ESRCH, "task vpid %d is not among the tasks criu restored", p->vpid);
			ret = failed(pid, p->vpid, -ESRCH, &err);
			break;
		}
		if (ptimer_fault("resume-late"))
			ret = ptimer_errf(&err, EIO, "injected failure in RESUME_DEVICES_LATE");
		else if (!(ret = ptimer_task_adopt(&t, host[i], &err))) {
			/* set so above: its syscalls need no stub (inject.h) */
			t.dies_with_tracer = kills[i];
			ret = complete_task(&t, p, conf, &err);
			ptimer_task_release(&t);
		}
		if (ret)
			ret = failed(host[i], p->vpid, ret, &err);
	}
	for (size_t i = 0; i < plan->n; i++)
		if (plan->task[i].held && host[i])	/* on some threads, at least */
			exitkill(host[i], false, &opts);
	free(host);
	free(kills);
	return ret;
}
