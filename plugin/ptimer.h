/* SPDX-License-Identifier: MIT */
/*
 * ptimer's core, shared by the CLI (plugin/cli.c) and the CRIU plugin:
 * reading /proc/PID/timers, stopping a process's threads, dumping and
 * restoring its POSIX timers.
 */
#ifndef PTIMER_PLUGIN_PTIMER_H
#define PTIMER_PLUGIN_PTIMER_H

#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "images/image.h"
#include "restorer/abi.h"

/* ptimer_errf - format a one-line message into err (may be NULL); returns -e. */
int ptimer_errf(struct ptimer_err *err, int e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Diagnostics to stderr (CLI) or criu's log (plugin): set by the caller. */
extern void (*ptimer_log_fn)(int level, const char *msg);
enum { PTIMER_LOG_ERROR, PTIMER_LOG_WARN, PTIMER_LOG_INFO, PTIMER_LOG_DEBUG };
extern int ptimer_verbosity;	/* messages above this level are dropped */
void ptimer_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- /proc/PID/timers (plugin/proc_timers.c) ---------------------------- */

/*
 * ptimer_proc_parse_timers - parse the text of /proc/PID/timers.
 * buf/len: the whole file.  Each timer is four lines
 * (fs/proc/base.c show_timer()):
 *   "ID: %d", "signal: %d/%px" (16 hex digits; kernels before the switch
 *   to %px printed %p: hex, or "(null)" for NULL),
 *   "notify: signal|none|thread/pid|tid.%d", "ClockID: %d".
 * Fills timer_id, signo, sival, sigev_notify (THREAD_ID for "tid"),
 * notify_tid (as the /proc mount's pid namespace sees it) and clock_id;
 * the timing fields are left 0.  Anything else is an error, not a guess.
 * @what names the source in messages.  *out is malloc'ed (free it), in file
 * order (newest first).  Returns 0, -EINVAL (malformed: err names the line),
 * -ENOMEM.
 */
int ptimer_proc_parse_timers(const char *buf, size_t len, const char *what,
			     struct ptimer_timer **out, uint32_t *n, struct ptimer_err *err);

/*
 * ptimer_proc_read_timers - read and parse /proc/<pid>/timers.  Reads with
 * plain read() into one growing buffer: the kernel returns at most a page per
 * read() and rewalks the list for each, so extra layers only cost (FACTS).
 * Returns 0, -ENOENT (no such process or no CONFIG_CHECKPOINT_RESTORE),
 * -EACCES, -EINVAL, -ENOMEM; err set.
 */
int ptimer_proc_read_timers(pid_t pid, struct ptimer_timer **out, uint32_t *n,
			    struct ptimer_err *err);

/*
 * ptimer_proc_nspid - the innermost pid of host tid (NSpid: last field of
 * /proc/<pid>/task/<tid>/status; Linux 4.1+).  Returns that pid (> 0), or
 * -ENOENT (gone), -EINVAL (no NSpid line: then the caller's namespace is the
 * only one and tid itself is returned instead).
 */
pid_t ptimer_proc_nspid(pid_t pid, pid_t tid);

/* ptimer_proc_tgid - the process (Tgid: of /proc/<tid>/status) that host
 * thread tid belongs to; -ENOENT when it is gone. */
pid_t ptimer_proc_tgid(pid_t tid);

/*
 * ptimer_proc_threads - the host tids of pid's threads (/proc/<pid>/task),
 * leader first.  *tids malloc'ed.  Returns the count (>= 1) or -errno.
 */
int ptimer_proc_threads(pid_t pid, pid_t **tids);

/* ---- stopping a process (plugin/task.c) ---------------------------------- */

struct ptimer_task {
	pid_t pid;		/* host pid (tgid) */
	pid_t vpid;		/* pid in its own pid namespace */
	int n_threads;
	pid_t *tids;		/* host tids, leader first */
	pid_t *vtids;		/* the same, in the process's own namespace */
	bool *seized;		/* tids[i] is attached by us */
};

/*
 * ptimer_task_seize - PTRACE_SEIZE + PTRACE_INTERRUPT every thread of pid
 * and wait until each is in a ptrace stop, listing /proc/PID/task again
 * until no new thread shows up (bounded).  Pending signals met on the way
 * are re-injected, so nothing is lost.  Source: ptrace(2) "PTRACE_SEIZE",
 * CRIU compel/src/lib/infect.c compel_stop_task().  On failure every thread
 * seized so far is released.  Returns 0 or -errno (EPERM: no ptrace
 * permission, ESRCH: gone), err set.
 */
int ptimer_task_seize(struct ptimer_task *t, pid_t pid, struct ptimer_err *err);

/*
 * ptimer_task_adopt - describe a process someone else (criu) already holds
 * stopped: fills tids/vtids, attaches nothing, releases nothing.
 */
int ptimer_task_adopt(struct ptimer_task *t, pid_t pid, struct ptimer_err *err);

/* ptimer_task_release - detach every thread we seized (the process runs on,
 * or stays stopped if it was); frees t's arrays.  Safe to call twice. */
void ptimer_task_release(struct ptimer_task *t);

/* ptimer_task_vtid - the process's own-namespace id of host tid, or 0. */
pid_t ptimer_task_vtid(const struct ptimer_task *t, pid_t host_tid);
/* ptimer_task_host_tid - the host tid of own-namespace vtid, or 0. */
pid_t ptimer_task_host_tid(const struct ptimer_task *t, pid_t vtid);

/* ---- dump and restore (plugin/dump.c, plugin/restore.c) ------------------- */

struct ptimer_dump_opts {
	bool strict;		/* refuse timers aimed at a thread that is gone */
};

/*
 * ptimer_dump_task - read the timers of t (all threads stopped, by us or by
 * criu) into img: /proc/PID/timers for IDs, clocks and notification, and
 * one run of the in-target blob for it_value/it_interval/overrun.
 * notify_tid is translated to the process's own pid namespace.  img->timers
 * is sorted by timer_id.  Returns 0 or -errno, err set.
 */
int ptimer_dump_task(struct ptimer_task *t, const struct ptimer_dump_opts *o,
		     struct ptimer_image *img, struct ptimer_err *err);

/*
 * ptimer_read_timer_state - fill it_value/it_interval/overrun of
 * timers[n] (timer_id set) with timer_gettime()/timer_getoverrun() run
 * inside t (stopped) by the blob, one run for all.  Returns 0 or -errno
 * (-EINVAL: no such timer), err set.
 */
int ptimer_read_timer_state(const struct ptimer_task *t, struct ptimer_timer *timers, uint32_t n,
			    struct ptimer_err *err);

/*
 * ptimer_dump - the CLI's whole dump: seize pid, ptimer_dump_task, release,
 * write DIR/ptimers-<vpid>.img atomically.  The process is released before
 * the image is written.  Returns 0 or -errno, err set.
 */
int ptimer_dump(pid_t pid, const char *dir, const struct ptimer_dump_opts *o,
		struct ptimer_err *err);

struct ptimer_tid_map {
	pid_t from;		/* tid in the image (dumped process's namespace) */
	pid_t to;		/* host tid in the target */
};

enum ptimer_restore_mode {
	PTIMER_RESTORE_AUTO = 0,	/* exact if the kernel has the prctl, else linear */
	PTIMER_RESTORE_EXACT,
	PTIMER_RESTORE_LINEAR,
};

struct ptimer_restore_opts {
	enum ptimer_restore_mode mode;
	bool allow_wrap;		/* linear: go through INT_MAX to reach passed IDs */
	int n_tid_map;
	const struct ptimer_tid_map *tid_map;
	bool progress;			/* report linear progress on stderr */
	bool verify;			/* re-read /proc/PID/timers afterwards and
					   compare (costs O(n^2) in the kernel) */
};

struct ptimer_restore_stats {
	int mode;			/* PTIMER_MODE_EXACT or _LINEAR, as used */
	uint64_t pairs;			/* linear create/delete pairs */
	uint64_t ns_total;		/* restore wall time, ns */
	uint64_t ns_inject;		/* of which in the target, ns */
};

/*
 * ptimer_restore_task - recreate img's timers in t (all threads stopped)
 * with their IDs and arm them, all or nothing.  Checks before touching
 * anything: the target holds none of the IDs, every notify tid and CPU-clock
 * pid maps to a thread of t.  Then in the target: exact-ID prctl ON, create,
 * OFF (always), arm; or the linear create/delete loop when the kernel lacks
 * the prctl (kernel commit ec2d0c04624b, Linux 6.15).  Returns 0 or -errno,
 * err set; on failure the target holds none of img's timers.
 */
int ptimer_restore_task(struct ptimer_task *t, const struct ptimer_image *img,
			const struct ptimer_restore_opts *o, struct ptimer_restore_stats *st,
			struct ptimer_err *err);

/*
 * ptimer_verify_task - check that t (stopped) holds img's timers as restore
 * would have made them (someone else restored them: criu 4.2+ "native"):
 * same IDs, clock, notification, signal, sival and thread in
 * /proc/PID/timers, the same it_interval, and an it_value not larger than
 * the image's (read inside the process).  Returns 0, or -EPROTO naming the
 * first timer that differs, or -errno; err set.
 */
int ptimer_verify_task(struct ptimer_task *t, const struct ptimer_image *img,
		       const struct ptimer_restore_opts *o, struct ptimer_err *err);

/* ptimer_restore - the CLI's whole restore: read image_path, seize pid,
 * ptimer_restore_task, release.  Returns 0 or -errno, err set. */
int ptimer_restore(pid_t pid, const char *image_path, const struct ptimer_restore_opts *o,
		   struct ptimer_restore_stats *st, struct ptimer_err *err);

/* ---- criu's images (plugin/criu_core.c) ----------------------------------- */

/*
 * ptimer_criu_core_strip_timers - take the POSIX timers (CoreEntry
 * tc.timers.posix, criu images/core.proto + timer.proto) out of
 * DIR/core-<vpid>.img, rewriting it atomically; every other field keeps its
 * bytes.  *removed = how many were there (0: the file is left untouched).
 * Returns 0 or -errno (err set).
 */
int ptimer_criu_core_strip_timers(const char *dir, pid_t vpid, uint32_t *removed, struct ptimer_err *err);

/* ptimer_criu_core_count_timers - how many POSIX timers DIR/core-<vpid>.img
 * holds.  Returns 0 or -errno. */
int ptimer_criu_core_count_timers(const char *dir, pid_t vpid, uint32_t *count, struct ptimer_err *err);

/* ptimer_check - print one line per capability of this kernel and caller
 * to stdout; returns 0 when dump and restore can work here, else 1. */
int ptimer_check(void);

/*
 * ptimer_block_stop_signals - block SIGINT, SIGTERM, SIGHUP and SIGQUIT (old
 * mask into *old): a ptimer killed while its code runs in a target leaves
 * the target to die of the code's final trap, so these wait until the
 * target is released.  ptimer_pending_stop_signal - one of them if it is
 * blocked and pending, else 0: long restores check it between chunks and
 * roll back.
 */
void ptimer_block_stop_signals(sigset_t *old);
int ptimer_pending_stop_signal(void);

/* ptimer_now_ns - CLOCK_MONOTONIC in ns. */
uint64_t ptimer_now_ns(void);

#endif
