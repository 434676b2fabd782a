/* SPDX-License-Identifier: MIT */
/*
 * Stopping a process: every thread in a ptrace stop, and the translation
 * between host tids, the process's own-namespace tids and an image's tids.
 */
#ifndef PTIMER_CORE_TASK_H
#define PTIMER_CORE_TASK_H

#include <stdbool.h>
#include <sys/types.h>

#include "lib/err.h"

struct ptimer_task {
	pid_t pid;		/* host pid (tgid) */
	pid_t vpid;		/* pid in its own pid namespace */
	bool other_pidns;	/* in a pid namespace other than ptimer's (the
				   caller's): vpid != pid, or /proc/PID/ns/pid
				   another one (a namespace's pid can equal the
				   host's) */
	int n_threads;
	pid_t *tids;		/* host tids, leader first */
	pid_t *vtids;		/* the same, in the process's own namespace */
	bool *seized;		/* tids[i] is attached by us */
	int runner;		/* index of the thread code runs in: the first
				   live one (the leader may have exited) */
	bool stopped;		/* the process was in a group-stop (SIGSTOP,
				   SIGTSTP, ...) when seized: it stays stopped */
	bool owns_waits;	/* seized by ptimer (ptimer_task_seize), which owns
				   its threads' wait events; false when adopted
				   from another tracer (criu) */
	bool dies_with_tracer;	/* adopted, and every thread has
				   PTRACE_O_EXITKILL and PTRACE_O_TRACESYSGOOD
				   (set by the caller) */
};

/*
 * ptimer_task_blob_flags - ptimer_blob_open's flags for t's threads
 * (restorer/host/inject.h): PTIMER_BLOB_OWNS_WAITS, PTIMER_BLOB_DIES_WITH_TRACER.
 */
unsigned int ptimer_task_blob_flags(const struct ptimer_task *t);

/*
 * ptimer_task_runner - the host tid of t's thread that ptimer runs code in:
 * the leader, or when the leader has exited (pthread_exit() while other
 * threads live: a zombie that holds the process's pid) the first live
 * thread.  Timers belong to the process (kernel/time/posix-timers.c keeps
 * them in signal_struct), so any of its threads can read and create them.
 */
pid_t ptimer_task_runner(const struct ptimer_task *t);

/*
 * ptimer_task_seize - PTRACE_SEIZE + PTRACE_INTERRUPT every thread of pid
 * and wait until each is in a ptrace stop, listing /proc/PID/task again
 * until no new thread shows up (bounded).  Pending signals met on the way
 * are re-injected, so nothing is lost.  Source: ptrace(2) "PTRACE_SEIZE",
 * CRIU compel/src/lib/infect.c compel_stop_task().  A leader that has
 * exited while other threads live is listed but not attached (a zombie
 * cannot be traced); a process in a group-stop is seized stopped
 * (t->stopped) and goes back to its stop on release (ptrace(2) "group-stop";
 * PTRACE_DETACH re-enters it).  On failure every thread
 * seized so far is released.  Returns 0 or, with err set: -EPERM (no
 * ptrace permission: another user, yama, not dumpable), -EBUSY (traced by
 * another process, or a thread keeps receiving signals), -ESRCH (no such
 * process, a zombie, or gone meanwhile), -EINVAL (pid is ptimer itself, a
 * thread that is not a leader, or a kernel thread), -EAGAIN (threads keep
 * appearing), -EPROTO (an unexpected ptrace stop), -ENOMEM.
 */
int ptimer_task_seize(struct ptimer_task *t, pid_t pid, struct ptimer_err *err);

/*
 * ptimer_task_adopt - describe a process someone else (criu) already holds
 * stopped: fills tids/vtids, attaches nothing, releases nothing.  Returns
 * 0, -ESRCH (gone, or no live thread), -ENOENT (no /proc/PID/task),
 * -ENOMEM; err set.
 */
int ptimer_task_adopt(struct ptimer_task *t, pid_t pid, struct ptimer_err *err);

/* ptimer_task_release - detach every thread we seized (the process runs on,
 * or stays stopped if it was); frees t's arrays.  Safe to call twice.
 * Returns how many seized threads had left their ptrace stop (PTRACE_DETACH
 * ESRCH: killed while stopped), 0 normally. */
int ptimer_task_release(struct ptimer_task *t);

/*
 * ptimer_task_kill - SIGKILL process pid, whose threads the caller traces
 * (criu, or ptimer after ptimer_task_seize), and reap its threads other
 * than the leader within timeout_ms (ms): a traced thread that dies stays a
 * zombie until its tracer waits for it with __WALL.  They are reaped in the
 * order they die, none waited for by name: in a pid namespace's init the
 * last thread to exit waits in zap_pid_ns_processes()
 * (kernel/pid_namespace.c) until every other pid of the namespace is freed,
 * the other threads' zombies included, so a blocking wait for it first
 * would never return.  The leader is left to its parent's wait.  Returns
 * how many threads were still not reaped at the timeout, 0 normally.
 */
int ptimer_task_kill(pid_t pid, int timeout_ms);

/*
 * ptimer_task_gone - ret, unless ret is an error and process pid has no
 * live thread left (every thread gone, a zombie, in do_exit() or with
 * SIGKILL pending: ptimer_thread_exiting()): then -ESRCH, with err saying
 * "process PID exited while ptimer was DOING", whichever step met the exit
 * first.  A process killed meanwhile holds nothing ptimer could have left
 * in it: this is the one line the caller prints.
 */
int ptimer_task_gone(pid_t pid, int ret, const char *doing, struct ptimer_err *err);

/* ptimer_task_vtid - the process's own-namespace id of host tid, or 0. */
pid_t ptimer_task_vtid(const struct ptimer_task *t, pid_t host_tid);
/* ptimer_task_host_tid - the host tid of own-namespace vtid, or 0. */
pid_t ptimer_task_host_tid(const struct ptimer_task *t, pid_t vtid);

struct ptimer_tid_map {
	pid_t from;		/* tid in the image (dumped process's namespace) */
	pid_t to;		/* host tid in the target */
};

/*
 * ptimer_map_tid - an image tid (the dumped process's own namespace) as the
 * target's own-namespace tid: image_pid (the dumped process) is the
 * target's pid; an entry of map[n_map] (--tid-map OLD=NEW) names a host
 * tid; otherwise the same number must be a thread of t (criu restores tids
 * as they were).  Returns it, or 0 when it maps to no thread of t.
 */
pid_t ptimer_map_tid(const struct ptimer_task *t, pid_t image_pid, const struct ptimer_tid_map *map,
		     int n_map, pid_t tid);

#endif
