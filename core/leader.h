/* SPDX-License-Identifier: MIT */
/*
 * Timers aimed at the leader of a task in a pid namespace of its own.
 *
 * criu 4.1 and 4.2 save a SIGEV_THREAD_ID timer's tid before they know the
 * leader's tid in its namespace (criu/seize.c collect_threads() leaves
 * threads[0].ns[0].virt unset until criu/cr-dump.c dump_task_threads(),
 * after the timers): the dump fails "Unable to convert the notify thread id"
 * or saves a tid no restore accepts.  So the CRIU plugin aims such timers at
 * the process (SIGEV_SIGNAL, which the kernel gives the leader first:
 * kernel/signal.c complete_signal()) while criu saves them, and at the
 * leader again after the dump and after criu restored them.
 */
#ifndef PTIMER_CORE_LEADER_H
#define PTIMER_CORE_LEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/task.h"
#include "lib/err.h"
#include "lib/timer.h"
#include "images/image.h"

/*
 * ptimer_leader_timers - img's timers aimed at t's leader (SIGEV_THREAD_ID,
 * notify_tid t's vpid, t in a pid namespace other than ptimer's), with the
 * timing they have in t now (ptimer_read_timer_state), into *out (malloc'd;
 * NULL when none).  Returns how many, or -errno (err set).
 */
int ptimer_leader_timers(struct ptimer_task *t, const struct ptimer_image *img, struct ptimer_timer **out,
			 struct ptimer_err *err);

/*
 * ptimer_aim_timers - make tm[n] again in t (all threads stopped) with
 * their IDs and timing, aimed at the process (at_process: SIGEV_SIGNAL)
 * or as tm[] has them; no overrun or pending expiry carried.  Needs the
 * exact-ID prctl (ptimer_replace_timers).  Returns 0 or -errno (err set).
 */
int ptimer_aim_timers(struct ptimer_task *t, const struct ptimer_timer *tm, uint32_t n, bool at_process,
		      struct ptimer_err *err);

#endif
