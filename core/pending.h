/* SPDX-License-Identifier: MIT */
/*
 * Queued timer signals: reading a thread's signal queues, and under criu
 * giving each pending expiry back as the timer's own signal.
 */
#ifndef PTIMER_CORE_PENDING_H
#define PTIMER_CORE_PENDING_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/task.h"
#include "images/image.h"
#include "lib/err.h"

/*
 * ptimer_sigqueue_peek - every siginfo queued for the ptrace-stopped thread
 * tid, in queue order, without dequeuing (PTRACE_PEEKSIGINFO, Linux 3.10):
 * its private queue, or with shared its process's.  *out malloc'ed (NULL
 * when empty), *n entries.  Returns 0, -ESRCH (not in a ptrace stop of
 * ours), -ENOMEM, or another -errno of ptrace.
 */
int ptimer_sigqueue_peek(pid_t tid, bool shared, siginfo_t **out, size_t *n);

/*
 * ptimer_criu_pending - after criu restored t (every thread stopped by
 * criu, the plugin in RESUME_DEVICES_LATE): each timer img marks pending
 * (its signal queued and undelivered at the dump) holds exactly one queued
 * signal again, its own.  criu queues the dumped siginfo again as a plain
 * signal (criu/pie/restorer.c: rt_sigqueueinfo, rt_tgsigqueueinfo), which
 * is no timer's: the restored timer queues its own beside it at its next
 * expiry (two signals where the kernel held one, for a real-time signal),
 * and the copy does not rearm a periodic timer when delivered
 * (posixtimer_deliver_signal(), kernel/signal.c, Linux 6.13+).  So every
 * SI_TIMER siginfo of those timers is taken out of the queue holding it
 * (rt_sigtimedwait in the thread that queue belongs to; the other signals
 * of that number dequeued with it go back in their order, rt_tgsigqueueinfo
 * or rt_sigqueueinfo), then each timer is set to expire at once with its
 * interval (timer_settime), and the kernel queues its own signal.  Nothing
 * to do, and nothing read, for an image without pending expiries.
 * A queue that cannot be put back as it was (a signal of that number sent
 * with kill() or tgkill() waits in a thread other than the leader: the
 * kernel refuses to queue those again from there) is left alone with a
 * warning.  Returns 0, or -ESRCH, -EIO, -ENOMEM, -EPROTO (the queue
 * changed under us) with err set.
 */
int ptimer_criu_pending(const struct ptimer_task *t, const struct ptimer_image *img, struct ptimer_err *err);

/* ptimer_image_pending - how many of img's timers are pending expiries. */
uint32_t ptimer_image_pending(const struct ptimer_image *img);

#endif
