/* SPDX-License-Identifier: MIT */
/*
 * A simulated kernel for the restore algorithm (restorer/algo.c built with
 * -DPTIMER_SIMKERNEL): one process's POSIX timers, its ID counter and the
 * PR_TIMER_CREATE_RESTORE_IDS mode, behind the sys_* functions of
 * restorer/sys.h.  See simkernel.c for what is modelled and why.
 *
 * Tests set the knobs in `simk` directly after simk_reset() and read the
 * counters and timers back.
 */
#ifndef PTIMER_TEST_SIMKERNEL_H
#define PTIMER_TEST_SIMKERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "restorer/sys.h"

/* How timer_create() picks an ID when exact-ID mode is off. */
enum simk_alloc {
	/* Linux 3.11+: per-process counter, next = (id + 1) & INT_MAX, IDs in
	 * use skipped (posix_timer_add()). */
	SIMK_ALLOC_COUNTER = 0,
	/* A counter other processes draw from too: after every allocation
	 * `others` more IDs are gone (or 0..others at random with
	 * others_random).  The counter does not advance by one. */
	SIMK_ALLOC_SHARED_COUNTER,
	/* Before Linux 3.11: one global idr, lowest free ID first, so a
	 * deleted ID comes straight back. */
	SIMK_ALLOC_LOWEST_FREE,
};

struct simk_timer {
	int32_t id;
	int32_t clock_id;
	int32_t sigev_notify;
	int32_t signo;
	uint64_t sival;
	int32_t notify_tid;		/* THREAD_ID only, else 0 */
	int32_t overrun;		/* what timer_getoverrun() returns */
	struct ptimer_kitimerspec its;	/* last timer_settime() (no time passes) */
	int settime_flags;
	int settime_calls;
};

/* prctl(PR_RSEQ_SLICE_EXTENSION) as kernels have it (uapi/linux/prctl.h). */
enum simk_slice {
	SIMK_SLICE_ABSENT = 0,	/* before 7.0 (6.18 here): -EINVAL */
	SIMK_SLICE_DISABLED,	/* built but off (7.x without the rseq ABI v2
				   registration, or rseq_slice_ext=0): SET
				   -ENOTSUPP (524) */
	SIMK_SLICE_ON,		/* what an extension-capable kernel does */
};

/* One thread's rseq state, as the kernel keeps it (task_struct::rseq). */
struct simk_thread {
	int32_t tid;
	uint64_t rseq;			/* registered struct rseq address; 0: none */
	uint32_t rseq_len;		/* its registered size */
	int slice_enabled;		/* rseq.slice.state.enabled */
	int flags_stuck;		/* SET leaves struct rseq.flags as it is */
	long slice_set_calls;
};

struct simk_counts {
	long timer_create;		/* calls, failed ones included */
	long timer_create_ok;
	long timer_delete;
	long sigtimedwait;
	long timer_settime;
	long timer_gettime;
	long timer_getoverrun;
	long prctl;
};

struct simk {
	/* knobs */
	int prctl_supported;		/* kernel >= 6.15: has the prctl */
	int prctl_ignored;		/* accepts the prctl but never reads *timer_id */
	enum simk_alloc alloc;
	uint32_t others;		/* SIMK_ALLOC_SHARED_COUNTER step */
	int others_random;
	uint32_t rand_state;
	long eagain_after;		/* creates that succeed before -EAGAIN; -1: never */
	int32_t fail_settime_id;	/* timer_settime() on it fails; -1: none */
	long fail_settime_err;		/* with this -errno */
	int32_t tgid;			/* the process; THREAD_ID may aim at it */
	int32_t tids[8];		/* its other threads */
	int n_tids;
	enum simk_slice slice;		/* prctl 79 */
	int slice_get_checks;		/* GET also answers -ENOTSUPP / -ENXIO */
	struct simk_thread threads[8];	/* rseq state per thread */
	int n_threads;
	int32_t cur_tid;		/* the thread the blob runs in */

	/* kernel state */
	int32_t next_id;		/* signal_struct::next_posix_timer_id */
	int restore_ids;		/* signal_struct::timer_create_restore_ids */
	struct simk_timer *timers;	/* sorted by id */
	size_t n_timers, cap_timers;
	size_t max_timers;		/* most timers alive at once */

	struct simk_counts calls;
};

extern struct simk simk;

/* Free all timers and set every knob to a 6.18-like default: prctl present,
 * per-process counter at 0, no failures, tgid 1000 with no other threads. */
void simk_reset(void);

/* The rseq state of thread @tid (added if new, up to 8), or NULL. */
struct simk_thread *simk_thread(int32_t tid);

/* The timer with @id, or NULL. */
struct simk_timer *simk_find(int32_t id);

/* Add a timer with @id the target already holds (SIGEV_NONE, disarmed),
 * without touching the counter.  0, or -1 if @id is taken or out of range. */
int simk_add_timer(int32_t id);

#endif
