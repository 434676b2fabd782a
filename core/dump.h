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
	bool list_all;		/* ptimer_dump_task_for_criu: list every timer,
				   never timers_in_core (criu-mode native, whose
				   restore checks criu's timers against the list) */
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
 * ptimer_pending_drop_stale - a one-shot timer armed again after it fired
 * (it_value set, no it_interval) has its queued signal dropped by the
 * kernel at delivery (timer_settime() bumps it_signal_seq, checked by
 * posixtimer_deliver_signal(), Linux 6.13+): clear tm's pending mark then.
 * Needs tm's timing state.
 */
void ptimer_pending_drop_stale(struct ptimer_timer *tm);

/*
 * ptimer_dump_task_for_criu - what the CRIU plugin records of t at
 * CHECKPOINT_DEVICES (every thread stopped by criu, before criu saves the
 * task: criu/seize.c checkpoint_devices()), so that its image is complete
 * before criu hands the checkpoint on (post-dump script, lazy pages):
 * /proc/PID/timers (IDs, clocks, notification; notify_tid in the process's
 * own pid namespace), pending expiries (PTRACE_PEEKSIGINFO, nothing
 * dequeued) and the thread each thread-CPU-clock timer measures
 * (ptimer_find_clock_threads: the in-target blob runs only in a task that
 * holds such timers).  The timing state is criu's own, which it saves in
 * core-<pid>.img right after (img->state_in_core = 1: it_value,
 * it_interval and overrun are 0 here; a pending mark is not yet checked
 * against it, see ptimer_pending_drop_stale).
 * A timer criu cannot save as it is, aimed at or on the CPU clock of a
 * thread that has exited (criu 4.1/4.2 fail "Unable to convert the notify
 * thread id" in a pid namespace, criu/timer.c, and elsewhere save a timer
 * their restore cannot make): with o->strict -ESRCH; else, when
 * replace_dead and the kernel has the exact-ID prctl, it is replaced in t
 * by the SIGEV_NONE timer the dump keeps (ptimer_replace_timers), keeping
 * its time, with a warning; otherwise only the image says SIGEV_NONE and
 * *criu_wrong is set.  A timer on the CPU clock of the thread that made it
 * (-2), that thread gone, is found out by the look at the clocks
 * (ptimer_find_clock_threads: timer_settime() answers ESRCH) and replaced
 * the same way; without replace_dead (criu-mode native) it is kept as criu
 * keeps it.  What criu restores right is left to it: the CPU clock of
 * another task of the tree (criu restores every pid; in a pid namespace a
 * probe tells another task's clock from a gone thread's,
 * ptimer_probe_gone_clocks), a timer on a clock named by a tid, a timer
 * aimed at a pid-namespace leader (the plugin has criu save it aimed at the
 * process and aims it back after criu's restore).  The process is left as
 * it was on every failure (a timer already replaced stays replaced: it
 * could not fire either way).
 * img->timers sorted by timer_id; threads untouched.
 * Without o->strict or o->list_all, a task whose /proc/PID/timers is longer than
 * PTIMER_DUMP_LEAN_BYTES and whose timers criu's core image alone carries
 * right (ptimer_timers_all_criu) is not read further: the image lists no timer,
 * img->timers_in_core = 1, and the task is not touched.  That read costs
 * the kernel a walk of the timer list per 4 KiB page (quadratic: about
 * 75 ms for 20,000 timers), and criu reads the file again right after.
 * Returns 0, or with err set -ESRCH, -ENOMEM, the -errno of
 * ptimer_proc_read_timers or of running code in t.
 */
int ptimer_dump_task_for_criu(struct ptimer_task *t, const struct ptimer_dump_opts *o, bool replace_dead,
			      struct ptimer_image *img, bool *criu_wrong, struct ptimer_err *err);

/*
 * 64 KiB of /proc/PID/timers: about 900 timers, 1.5 ms to read on a 2-vCPU
 * x86_64 virtual machine (the kernel prints a timer in about 1.3 us and
 * walks the list from its head for every 4 KiB: 20,000 timers take 75 ms).
 */
#define PTIMER_DUMP_LEAN_BYTES	(64u * 1024u)

/*
 * ptimer_timers_all_criu - can criu's core image alone carry every timer of
 * t (every thread stopped by criu), however they are set?  *yes when:
 * t runs in the dumper's pid namespace (/proc/PID/ns/pid: no timer is
 * aimed at a leader whose tid criu cannot save, criu/timer.c); its one
 * thread is its
 * leader, and no other thread ever ran in it (the process's CPU clock,
 * clock_gettime(MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)), equals the
 * leader's sum_exec_runtime in /proc/PID/task/PID/schedstat: an exited
 * thread's runtime stays in signal_struct.sum_sched_runtime,
 * kernel/exit.c __exit_signal(); so every thread-CPU-clock timer measures
 * the leader, where criu's restorer makes it, and every SIGEV_THREAD_ID
 * timer is aimed at it); and no SI_TIMER signal is queued (the leader's
 * queue and the process's, PTRACE_PEEKSIGINFO).  What is left that criu
 * cannot restore (a timer on the CPU clock of a process that has exited)
 * criu alone cannot either.  It assumes an exited thread ran for at least
 * a nanosecond by sched_clock(), true wherever sched_clock() is the TSC
 * or the arch timer (x86_64, aarch64); on a jiffies sched_clock() a thread
 * that lived less than a tick could pass unseen.  A kernel without
 * CONFIG_SCHED_INFO (no schedstat) gives *yes false.  Returns 0, or -errno
 * with err set (-ESRCH: the task is gone).
 */
int ptimer_timers_all_criu(const struct ptimer_task *t, bool *yes, struct ptimer_err *err);

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
