/* SPDX-License-Identifier: MIT */
/*
 * Readers of /proc/PID/status and /proc/PID/stat (proc(5); fs/proc/array.c),
 * below everything that needs them: the host loader (restorer/host/), the
 * core and the test programs.
 */
#ifndef PTIMER_LIB_PROCFS_H
#define PTIMER_LIB_PROCFS_H

#include <stddef.h>
#include <stdbool.h>
#include <sys/types.h>

/*
 * ptimer_proc_status - the text after "key:" in /proc/PID/status, or with
 * tid > 0 in /proc/PID/task/TID/status (pid 0: /proc/self, as the mounted
 * /proc sees the caller), blanks after the colon and the newline left out,
 * into buf (len bytes, truncated to fit).  Returns 0, -ENOENT (no such
 * process or thread), -ENODATA (no such line: an older kernel), or -errno
 * of the read.
 */
int ptimer_proc_status(pid_t pid, pid_t tid, const char *key, char *buf, size_t len);

/*
 * ptimer_proc_status_longs - the first max numbers of that line ("Uid:"
 * has 4, "NSpid:" one per pid namespace level, outermost first) into v.
 * Returns how many were there (may exceed max: only max are stored), or
 * -errno as above.
 */
int ptimer_proc_status_longs(pid_t pid, pid_t tid, const char *key, long *v, int max);

/* ptimer_proc_tgid - the process (Tgid: of /proc/<tid>/status) that host
 * thread tid belongs to; -ENOENT when it is gone. */
pid_t ptimer_proc_tgid(pid_t tid);

/*
 * ptimer_proc_nspid - the innermost pid of thread tid of pid (NSpid: last
 * field of /proc/<pid>/task/<tid>/status, Linux 4.1+; pid 0: /proc/self).
 * Returns that pid (> 0), or -ENOENT (gone), -EINVAL (no NSpid line: then
 * the caller's namespace is the only one and tid itself is the answer).
 */
pid_t ptimer_proc_nspid(pid_t pid, pid_t tid);

/* What ptimer reads of /proc/PID/stat (the fields after "(comm)"). */
struct ptimer_proc_stat {
	char state;		/* field 3: R, S, D, T, t, Z, X, ... */
	unsigned long flags;	/* field 9: PF_* (include/linux/sched.h) */
};
#define PTIMER_PF_EXITING	0x00000004ul	/* include/linux/sched.h: in do_exit() */
#define PTIMER_PF_KTHREAD	0x00200000ul	/* include/linux/sched.h: a kernel thread */

/*
 * ptimer_proc_stat - read /proc/PID/stat, or with tid > 0
 * /proc/PID/task/TID/stat, into st.  comm may hold blanks and parentheses:
 * fields are counted from the last ')'.  Returns 0, -ENOENT (gone, or an
 * empty file: the task is being released), -EINVAL (a line this reader
 * does not understand), or -errno.
 */
int ptimer_proc_stat(pid_t pid, pid_t tid, struct ptimer_proc_stat *st);

/*
 * ptimer_thread_exiting - whether thread tid of process pid (tid 0: the
 * process's leader) is gone or on its way out: no /proc entry, state Z or X,
 * PF_EXITING (set in do_exit(), kernel/exit.c), or SIGKILL pending for it or
 * its group (complete_signal() in kernel/signal.c queues SIGKILL to every
 * thread of a group being killed, before any of them reaches do_exit()).
 * A false answer for a thread that cannot be read for another reason.
 * ptrace_attach() (kernel/ptrace.c) refuses a PF_EXITING task with EPERM,
 * the errno of a permission failure too: this tells them apart.
 */
bool ptimer_thread_exiting(pid_t pid, pid_t tid);

#endif
