/* SPDX-License-Identifier: MIT */
/*
 * Restore: an image's POSIX timers recreated with their IDs in a stopped
 * process, or checked after someone else recreated them.
 */
#ifndef PTIMER_CORE_RESTORE_H
#define PTIMER_CORE_RESTORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/rseq.h"
#include "core/task.h"
#include "images/image.h"

enum ptimer_restore_mode {
	PTIMER_RESTORE_AUTO = 0,	/* exact if the kernel has the prctl, else linear */
	PTIMER_RESTORE_EXACT,
	PTIMER_RESTORE_LINEAR,
};

/* How far a linear restore is (struct ptimer_restore_opts.progress). */
struct ptimer_progress {
	pid_t pid;			/* the target */
	uint64_t pairs_done;		/* create/delete pairs so far */
	uint64_t pairs_total;		/* the plan's pairs */
	uint32_t n_created;		/* image timers created so far */
	uint32_t n_timers;		/* image timers in all */
	uint64_t ns_elapsed;		/* since the loop began, ns */
	bool last;			/* the loop has ended (done, failed or interrupted) */
};

struct ptimer_restore_opts {
	enum ptimer_restore_mode mode;
	bool allow_wrap;		/* linear: go through INT_MAX to reach passed IDs */
	int n_tid_map;
	const struct ptimer_tid_map *tid_map;
	/* linear mode: called about every progress_every_ns (0: 3 s) while
	   the loop runs (between its runs of 65,536 pairs), and once more
	   when it ends if it was called before or the loop lasted
	   progress_every_ns; NULL: no reports */
	void (*progress)(const struct ptimer_progress *p, void *ctx);
	void *progress_ctx;
	uint64_t progress_every_ns;
	bool verify;			/* re-read /proc/PID/timers afterwards and
					   compare (costs O(n^2) in the kernel) */
	enum ptimer_rseq_slice rseq_slice;
	bool slice_start_disabled;	/* every thread's extension starts disabled
					   (criu re-registers each rseq area with flags
					   0, criu/pie/restorer.c): only the image's
					   enabled threads are set, none is asked */
	bool force_signals;		/* standalone: restore timers whose signal the
					   target would not take (see ptimer_restore_task) */
	bool put_pdeath;		/* once the timers are made, set the leader's
					   parent-death signal to pdeath_sig (the CRIU
					   plugin: ptimer_put_pdeath) */
	int pdeath_sig;
};

/*
 * ptimer_put_pdeath - prctl(PR_SET_PDEATHSIG, sig) in t's leader thread
 * (the signal is per thread, and a child gets it when the thread that
 * forked it exits: kernel/exit.c forget_original_parent(); criu forks a
 * task's children from its leader), through the thread ptimer runs code
 * in.  A leader that has exited makes it moot: 0.  Returns 0 or -errno
 * (err set).  ptimer_restore_task does it with the blob it restored
 * with when opts put_pdeath is set.
 */
int ptimer_put_pdeath(struct ptimer_task *t, int sig, struct ptimer_err *err);

struct ptimer_restore_stats {
	enum ptimer_restore_mode mode;	/* PTIMER_RESTORE_EXACT or _LINEAR, as used */
	uint64_t pairs;			/* linear create/delete pairs */
	uint64_t ns_total;		/* restore wall time, ns */
	uint64_t ns_inject;		/* of which in the target, ns */
	uint64_t ns_loop;		/* of which the create loop, ns: a linear loop
					   of progress_every_ns (3 s unset) or more has shown
					   progress (core/restore.c run_restore) */
};

/*
 * ptimer_restore_task - recreate img's timers in t (all threads stopped)
 * with their IDs and arm them, all or nothing.  Checks before touching
 * anything: the target holds none of the IDs, every notify tid and CPU-clock
 * pid maps to a thread of t.  Then in the target: exact-ID prctl ON, create,
 * OFF (always), arm; or the linear create/delete loop when the kernel lacks
 * the prctl (kernel commit ec2d0c04624b, Linux 6.15).  On failure the
 * target holds none of img's timers.  Returns 0 or, with err set:
 *  -EEXIST  the target already holds one of the image's IDs
 *  -ESRCH   a notify thread or CPU-clock thread maps to no thread of t
 *           (--tid-map), or the process exited while ptimer worked in it
 *  -ERANGE  linear mode: the ID counter has passed a wanted ID (and no
 *           allow_wrap), or a wrap would be needed
 *  -EPROTO  the kernel handed out other IDs than asked, or --verify found
 *           a timer missing or different
 *  -EINTR   a held stop signal arrived during the linear loop (rolled back)
 *  -EBUSY   the target is in exact-ID mode already, or an ID is taken
 *  -EOPNOTSUPP  --mode exact without the prctl, or a clock without timers
 *  -EPERM   an alarm clock without CAP_WAKE_ALARM in the target
 *  -EAGAIN  RLIMIT_SIGPENDING of the target is exhausted
 *  -EINVAL  the kernel refused a timer's clock or notification
 *  -EXDEV   standalone (img->criu_mode NONE) and no o->force_signals:
 *           a glibc/musl SIGEV_THREAD timer (signal 32, SIGTIMER, to the
 *           libc's helper thread, sival a pointer into the dumped
 *           process's memory) going into another process; or an armed
 *           timer whose signal the receiving thread neither handles,
 *           ignores nor blocks, so that its first expiry would take the
 *           signal's default action (a disarmed one is a warning).  The
 *           masks come from /proc/PID/task/TID/status (SigBlk, SigIgn,
 *           SigCgt: fs/proc/array.c)
 *  -EIO     the in-target code could not be run (restorer/host/inject.c)
 *  -ENOMEM  out of memory
 *  and the -errno of the rseq slice steps (ptimer_slice_prepare).
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
 * first timer that differs, -ESRCH (gone), -EIO (the in-target read could
 * not run), -ENOMEM, or the -errno of reading /proc/PID/timers
 * (ptimer_proc_read_timers); err set.
 */
int ptimer_verify_task(struct ptimer_task *t, const struct ptimer_image *img,
		       const struct ptimer_restore_opts *o, struct ptimer_err *err);

/* ptimer_restore - the CLI's whole restore: read image_path, seize pid,
 * ptimer_restore_task, release.  Returns 0, the -errno of
 * ptimer_image_read (-ENOENT, -EINVAL, ...), -EINVAL for the CRIU plugin's
 * image that lists no timers (timers_in_core: they are in criu's core
 * image, criu restores them), the -errno of ptimer_task_seize (-EPERM,
 * -ESRCH, -EBUSY, ...) or of ptimer_restore_task; err set. */
int ptimer_restore(pid_t pid, const char *image_path, const struct ptimer_restore_opts *o,
		   struct ptimer_restore_stats *st, struct ptimer_err *err);

/*
 * ptimer_rebind_clock_timers - after criu made img's timers itself (criu
 * "native" and "auto" modes; criu creates every timer in the thread group
 * leader, criu/pie/restorer.c): each timer on the calling thread's CPU
 * clock that the image says measures another thread (clock_tid) is deleted
 * and made again in that thread, with its ID (the exact-ID prctl, kernel
 * commit ec2d0c04624b), clock, notification and the image's timing; a
 * timer's CPU clock is the one of the thread that creates it
 * (posix_cpu_timer_create(), kernel/time/posix-cpu-timers.c).  Nothing to
 * do for an image without such timers.  Without the prctl they stay as
 * criu made them, each with a warning.  Returns 0, or -ESRCH (the thread
 * is missing: the tids criu restored are the image's), the -errno of
 * running code in t, or of timer_create (all of them deleted again then);
 * err set.
 */
int ptimer_rebind_clock_timers(struct ptimer_task *t, const struct ptimer_image *img,
			       const struct ptimer_restore_opts *o, struct ptimer_err *err);

/*
 * ptimer_replace_timers - in t (all threads stopped), delete the timers
 * with the IDs of with[n] and make each again from with[] (its clock,
 * notification and timing), with its ID: the exact-ID prctl (kernel commit
 * ec2d0c04624b, Linux 6.15), which the caller has checked the kernel has.
 * For a timer criu cannot save as it is (one aimed at, or on the CPU clock
 * of, a thread that has exited): the CRIU plugin makes it the SIGEV_NONE
 * timer a dump keeps (core/dump.c), so that criu saves and restores it,
 * and the process, which could never get a signal from it, behaves as
 * before whether the dump goes on or not.  Returns 0, or with err set the
 * -errno of running code in t, or of ptimer_restore_task (then the
 * timers are gone from t: said in an error line).
 */
int ptimer_replace_timers(struct ptimer_task *t, const struct ptimer_timer *with, uint32_t n,
			  struct ptimer_err *err);

/*
 * ptimer_restore_slice_task - the rseq part of a restore alone (criu
 * "native" mode, where criu made the timers): prepare and apply below for
 * img's "enabled" threads in t (stopped); on failure the threads are left
 * as they were.  Returns 0 or the -errno of ptimer_slice_prepare and
 * ptimer_slice_apply (-ENOMEM, and with --rseq-slice=require -ESRCH,
 * -EINVAL, -ENXIO, -ENOTSUPP (524), ...); err set.
 */
int ptimer_restore_slice_task(struct ptimer_task *t, const struct ptimer_image *img,
			      const struct ptimer_restore_opts *o, struct ptimer_err *err);

#endif
