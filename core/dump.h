/* SPDX-License-Identifier: MIT */
/*
 * Dump: a stopped process's POSIX timers (and its threads' rseq state)
 * into an image.
 */
#ifndef PTIMER_CORE_DUMP_H
#define PTIMER_CORE_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/task.h"
#include "images/image.h"

struct ptimer_dump_opts {
	bool strict;		/* refuse timers aimed at a thread that is gone */
};

/*
 * ptimer_dump_task - read the timers of t (all threads stopped, by us or by
 * criu) into img: /proc/PID/timers for IDs, clocks and notification, and
 * one run of the in-target blob for it_value/it_interval/overrun.
 * notify_tid is translated to the process's own pid namespace.  img->timers
 * is sorted by timer_id.  Returns 0 or, with err set: -EXDEV (a timer on
 * the CPU clock of a process outside t), -ESRCH (a timer aimed at, or on
 * the CPU clock of, a thread that is gone, with o->strict; or the process
 * exited), -EIO (the in-target read could not run), -ENOMEM, or the
 * -errno of ptimer_proc_read_timers.
 */
int ptimer_dump_task(struct ptimer_task *t, const struct ptimer_dump_opts *o,
		     struct ptimer_image *img, struct ptimer_err *err);

/*
 * ptimer_read_timer_state - fill it_value/it_interval/overrun of
 * timers[n] (timer_id set) with timer_gettime()/timer_getoverrun() run
 * inside t (stopped) by the blob, one run for all.  Returns 0, -ESRCH
 * (gone), -EIO (the blob could not run), -ENOMEM
 * (-EINVAL: no such timer), err set.
 */
int ptimer_read_timer_state(const struct ptimer_task *t, struct ptimer_timer *timers, uint32_t n,
			    struct ptimer_err *err);

/*
 * ptimer_read_timer_state_in - the same, run in thread tid of t (a host
 * tid, in a ptrace stop) instead of t's runner.
 */
int ptimer_read_timer_state_in(const struct ptimer_task *t, pid_t tid, struct ptimer_timer *timers, uint32_t n,
			    struct ptimer_err *err);

/*
 * ptimer_dump_task_given - ptimer_dump_task for timers someone else already
 * read while t was stopped (criu: its core image, see
 * ptimer_criu_core_timers): timers[n] complete, it_value/it_interval/
 * overrun included, notify_tid in the process's own pid namespace (0 when
 * not SIGEV_THREAD_ID).  Nothing runs inside t; /proc/PID/timers is read
 * only when a SIGEV_THREAD_ID timer's tid is not one of t's threads (a
 * thread gone, or the -1 criu 4.1 and 4.2 write for the leader of a task in a pid
 * namespace), once, for the tids of those timers.  Then the same
 * corrections ptimer_dump_task makes (sorted by
 * timer_id; a target or CPU clock thread that is not a thread of t becomes a
 * disarmed SIGEV_NONE timer with a warning, or -ESRCH with o->strict; the
 * CPU clock of another live process: -EXDEV).  Takes timers over (freed on
 * failure); img->timers and n_timers set, threads untouched.  Returns 0,
 * -ESRCH, -EXDEV, -ENOMEM, or the -errno of ptimer_proc_read_timers; err set.
 */
int ptimer_dump_task_given(struct ptimer_task *t, const struct ptimer_dump_opts *o, struct ptimer_timer *timers,
			   uint32_t n, struct ptimer_image *img, struct ptimer_err *err);

/*
 * ptimer_dump - the CLI's whole dump: seize pid, ptimer_dump_task, release,
 * write DIR/ptimers-<vpid>.img atomically.  The process is released before
 * the image is written.  The image is consistent when nothing changed while
 * the process was stopped: an exec from before the seize to the release, or
 * an exit of a dumped thread from the moment all were stopped to the
 * release (proc connector, ptimer_procwatch_*, events by timestamp), or a
 * dumped thread that left its stop (PTRACE_DETACH ESRCH) fails the dump
 * (-ESTALE, no image left); what it does after the release does not count.
 * Without the watch (no CAP_NET_ADMIN) a warning.  A stop signal held and
 * pending (ptimer_pending_stop_signal) before the write gives -EINTR with
 * nothing written.  On success *res (may be NULL) says what was written.
 * Returns 0, -ENOTDIR (dir is not a directory), -EINTR, -ESTALE, or
 * another -errno of the seize, the dump or the write; err set.
 */
struct ptimer_dump_result {
	uint32_t n_timers;		/* timers in the image */
	int32_t vpid;			/* the process's pid in its own namespace */
	char path[4096];		/* the image written: DIR/ptimers-<vpid>.img */
};
int ptimer_dump(pid_t pid, const char *dir, const struct ptimer_dump_opts *o, struct ptimer_dump_result *res,
		struct ptimer_err *err);

#endif
