/* SPDX-License-Identifier: MIT */
/*
 * The one reader of /proc (proc(5)) besides core/proc_timers.c, the
 * /proc/PID/timers parser: status and stat (fs/proc/array.c), the thread
 * list, maps, comm, /proc/locks and the rest, below everything that needs
 * them: the host loader (restorer/host/), the core, the plugin and the test
 * programs.
 */
#ifndef PTIMER_LIB_PROCFS_H
#define PTIMER_LIB_PROCFS_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
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
 * ptimer_proc_status_keys - several lines of that file from one read:
 * keys[i].key's text into keys[i].out (keys[i].len bytes, truncated to
 * fit; len 0: only whether it is there), keys[i].found set.  status is
 * rendered anew on each read (fs/proc/array.c proc_pid_status(), a few
 * KiB): one read instead of one per line.  Returns how many were found,
 * or -errno as ptimer_proc_status.
 */
struct ptimer_status_key {
	const char *key;
	char *out;
	size_t len;
	bool found;
};
int ptimer_proc_status_keys(pid_t pid, pid_t tid, struct ptimer_status_key *keys, int n);

/*
 * ptimer_proc_status_longs - the first max numbers of that line ("Uid:"
 * has 4, "NSpid:" one per pid namespace level, outermost first) into v.
 * Returns how many were there (may exceed max: only max are stored), or
 * -errno as above.
 */
int ptimer_proc_status_longs(pid_t pid, pid_t tid, const char *key, long *v, int max);

/* ptimer_proc_tgid - the process (Tgid: of /proc/<tid>/status) that host
 * thread tid belongs to; -ENOENT when it is gone, else the -errno of the
 * read (-EIO, -ENOMEM...). */
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
 * ptimer_proc_runtime - the CPU time thread tid of process pid has run, in
 * ns: the first field of /proc/PID/task/TID/schedstat, se.sum_exec_runtime
 * (fs/proc/base.c proc_pid_schedstat()), exact for a thread that is not on
 * a CPU (a stopped one).  Returns 0; -ENOENT when the thread is gone or
 * the kernel has no CONFIG_SCHED_INFO (no schedstat file, Linux 5.14+;
 * whether /proc/PID is there tells them apart); -ENODATA for a kernel
 * before 5.14 that prints "0 0 0" (sched_info_on() false); -EINVAL; or
 * -errno.
 */
int ptimer_proc_runtime(pid_t pid, pid_t tid, unsigned long long *ns);

/*
 * ptimer_proc_same_pidns - is process pid in the caller's pid namespace
 * (/proc/PID/ns/pid and /proc/self/ns/pid the same inode)?  Numbers alone
 * cannot tell: a pid namespace's pid N may be its host pid N too.
 * Returns 1, 0, or -errno (-ENOENT: gone).
 */
int ptimer_proc_same_pidns(pid_t pid);

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

/*
 * ptimer_proc_threads - the host tids of pid's threads (/proc/<pid>/task),
 * sorted, the leader first, into *tids (malloc'd, the caller frees).
 * Returns how many (> 0), or -ENOENT (no such process), -ESRCH (no thread
 * listed: it is being released), -ENOMEM, or another -errno of opendir.
 */
int ptimer_proc_threads(pid_t pid, pid_t **tids);

/* ptimer_proc_sigmasks - SigCgt: and SigIgn: of /proc/PID/status (the
 * process's handlers, shared by its threads: caught and ignored signals,
 * bit signo - 1) and, when not NULL, its Tgid: and Seccomp: (0 none, 1
 * strict, 2 filter; 0 where the kernel has no such line), from one read
 * (pid may be any thread's tid).  Returns 0, -ENOENT (gone), -EPROTO (a
 * line missing), or -errno. */
int ptimer_proc_sigmasks(pid_t pid, pid_t *tgid, uint64_t *caught, uint64_t *ignored, int *seccomp);

/* One line of /proc/PID/maps (proc(5); fs/proc/task_mmu.c show_map_vma()). */
struct ptimer_proc_map {
	uint64_t start, end;	/* [start, end) */
	char perms[8];		/* "r-xp", "rw-p", ... */
	uint64_t inode;		/* 0: anonymous (or a special mapping) */
	const char *name;	/* path, "[stack]", "[vdso]", ...; "" for none */
};

/*
 * ptimer_proc_maps_each - call fn(m, ctx) for each mapping of thread tid's
 * process (/proc/TID/maps), lowest address first, read as it goes: a
 * mapping fn changes is seen as the kernel shows it after that.  Stops at
 * the first non-zero value fn returns, and returns it; 0 after the last
 * mapping; -errno when the file cannot be opened (-ENOENT: gone).
 */
int ptimer_proc_maps_each(pid_t tid, int (*fn)(const struct ptimer_proc_map *m, void *ctx), void *ctx);

/*
 * ptimer_proc_maps_text - the whole of /proc/TID/maps, read once, into
 * *text (malloc'd, NUL-terminated; free() it): a snapshot several walks
 * can share (ptimer_proc_maps_walk) where reading the file again for each
 * would cost a read of every line.  Returns 0 or -errno (-ENOENT: gone).
 */
int ptimer_proc_maps_text(pid_t tid, char **text);

/*
 * ptimer_proc_maps_walk - ptimer_proc_maps_each over a snapshot taken by
 * ptimer_proc_maps_text: fn(m, ctx) for each mapping, lowest address
 * first; stops at the first non-zero value fn returns and returns it, else
 * 0.  What fn changes in the process is not seen.
 */
int ptimer_proc_maps_walk(const char *text, int (*fn)(const struct ptimer_proc_map *m, void *ctx), void *ctx);

/* ptimer_proc_comm - /proc/PID/comm without its newline into buf (len
 * bytes), or "?" when it cannot be read. */
void ptimer_proc_comm(pid_t pid, char *buf, size_t len);

/* ptimer_proc_owner - the uid owning /proc/PID (root for a process that is
 * not dumpable: proc(5) "/proc/pid"); 0 or -errno. */
int ptimer_proc_owner(pid_t pid, uid_t *uid);

/* ptimer_yama_scope - /proc/sys/kernel/yama/ptrace_scope (0..3), or -1
 * when Yama is not there (Documentation/admin-guide/LSM/Yama.rst). */
int ptimer_yama_scope(void);

/* ptimer_proc_fd_path - "/proc/self/fd/FD" into buf: a path to what fd
 * names (a directory criu hands over as an fd, for path-based APIs). */
void ptimer_proc_fd_path(int fd, char *buf, size_t len);

/* ptimer_proc_self_exe - the program this process runs (/proc/self/exe)
 * into buf; 0, or -errno (-ENAMETOOLONG when it does not fit). */
int ptimer_proc_self_exe(char *buf, size_t len);

#endif
