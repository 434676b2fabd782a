/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/timers and the other /proc files that describe a process's
 * threads (fs/proc/base.c, fs/proc/array.c).
 */
#ifndef PTIMER_CORE_PROC_TIMERS_H
#define PTIMER_CORE_PROC_TIMERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "lib/procfs.h"
#include "lib/timer.h"

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
 * plain read() into one growing buffer (ptimer_file_read): the kernel
 * returns at most a page per read() (fs/seq_file.c seq_read_iter()) and
 * walks the timer list again from the start for each one, so buffering
 * layers above read() only cost.  Returns 0, -ENOENT (no such process, or
 * no CONFIG_CHECKPOINT_RESTORE: err says which), -EACCES, -EFBIG, -EINVAL
 * (malformed: err names the line), -ENOMEM; err set.
 */
int ptimer_proc_read_timers(pid_t pid, struct ptimer_timer **out, uint32_t *n,
			    struct ptimer_err *err);

/*
 * ptimer_proc_read_timers_within - ptimer_proc_read_timers of a file of at
 * most max bytes.  Reading a file of L bytes costs the kernel about
 * L / 4096 walks of the timer list from its head (one per page, see
 * above) besides printing each timer (about 1.3 us): about 75 ms for
 * 20,000 timers (1.4 MB) on a 2-vCPU x86_64 virtual machine, 1.5 ms for
 * the first 64 KiB.  A longer file is
 * read no further than max + 1 bytes: *longer = true, *out = NULL, *n = 0,
 * returns 0.  Otherwise as ptimer_proc_read_timers, *longer = false.
 */
int ptimer_proc_read_timers_within(pid_t pid, size_t max, struct ptimer_timer **out, uint32_t *n,
				   bool *longer, struct ptimer_err *err);

#endif
