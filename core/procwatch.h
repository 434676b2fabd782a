/* SPDX-License-Identifier: MIT */
/*
 * Exits and exec of a process during a dump, from the proc connector.
 */
#ifndef PTIMER_CORE_PROCWATCH_H
#define PTIMER_CORE_PROCWATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

/* One event of the watched process (uapi/linux/cn_proc.h PROC_EVENT_*). */
enum { PTIMER_PROC_EXEC = 1, PTIMER_PROC_EXIT = 2 };
struct ptimer_proc_event {
	uint32_t what;		/* PTIMER_PROC_EXEC or PTIMER_PROC_EXIT */
	pid_t tid;		/* the thread (host pid, initial pid namespace) */
	uint64_t ns;		/* proc_event.timestamp_ns: CLOCK_MONOTONIC, ns */
};

/* Which events count (CLOCK_MONOTONIC ns, as ptimer_now_ns()). */
struct ptimer_procwatch_window {
	uint64_t exit_from_ns;	/* exits of the given tids from here on (0: since start) */
	uint64_t until_ns;	/* exits and exec up to here (0: up to now) */
};

struct ptimer_procwatch;

/*
 * ptimer_procwatch_start - subscribe to the proc connector (libnl-3
 * NETLINK_CONNECTOR socket, group CN_IDX_PROC, PROC_CN_MCAST_LISTEN;
 * uapi/linux/connector.h, uapi/linux/cn_proc.h) and keep the EXEC and EXIT
 * events of process pid (tgid) from now on.  Needs CAP_NET_ADMIN and
 * CONFIG_PROC_EVENTS; events reach listeners in the initial user and pid
 * namespaces only.  *w set on success.  Returns 0, -EPERM (no
 * CAP_NET_ADMIN), -EIO (the socket or the subscription failed),
 * -ETIMEDOUT (no answer to the subscription), -ENOMEM (err names the
 * reason; callers go on without the watch, with a warning).
 */
int ptimer_procwatch_start(struct ptimer_procwatch **w, pid_t pid, struct ptimer_err *err);

/*
 * ptimer_procwatch_poll - take what the kernel has queued (non-blocking)
 * and return every event of the process since start (*ev owned by w, valid
 * until the next poll or stop).  Returns 0, or -ENOBUFS when events were
 * lost (socket overflow): then anything may have happened.
 */
int ptimer_procwatch_poll(struct ptimer_procwatch *w, const struct ptimer_proc_event **ev, size_t *n);

/*
 * ptimer_procwatch_check - poll, then: -ESTALE if the process exec'ed since
 * start, or one of tids[n_tids] (host tids: the threads that were dumped)
 * exited since win->exit_from_ns; events stamped after win->until_ns are
 * ignored (win NULL: every event since start).  -ENOBUFS if events were
 * lost; else 0.  err names the process and the thread.
 */
int ptimer_procwatch_check(struct ptimer_procwatch *w, const pid_t *tids, int n_tids,
			   const struct ptimer_procwatch_window *win, struct ptimer_err *err);

/* ptimer_procwatch_stop - PROC_CN_MCAST_IGNORE, close, free.  NULL is fine. */
void ptimer_procwatch_stop(struct ptimer_procwatch *w);

#endif
