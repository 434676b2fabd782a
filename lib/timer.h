/* SPDX-License-Identifier: MIT */
/*
 * The timer record: one POSIX timer as ptimer dumps, stores and restores
 * it.  The bottom layer, so every other one uses the same record: the
 * in-target restorer (restorer/abi.h places it in the blob's arguments, so
 * it has a fixed size and layout and needs no libc), the /proc parser
 * (core/), the image codec (images/) and the CRIU plugin.
 */
#ifndef PTIMER_LIB_TIMER_H
#define PTIMER_LIB_TIMER_H

#define PTIMER_ID_MAX		0x7fffffff	/* timer IDs are 0..INT_MAX */

/*
 * The calling thread's CPU clock: CLOCK_THREAD_CPUTIME_ID (3), or glibc's
 * MAKE_THREAD_CPUCLOCK(0, CPUCLOCK_SCHED) (-2, include/linux/posix-timers_
 * types.h): a timer on it measures the thread that created it.
 */
#define PTIMER_CLOCK_THREAD_SELF	(-2)
#define PTIMER_CLOCK_THREAD_CPUTIME_ID	3
#define ptimer_thread_clock(c)	((c) == PTIMER_CLOCK_THREAD_SELF || (c) == PTIMER_CLOCK_THREAD_CPUTIME_ID)

/* uapi/asm-generic/siginfo.h */
#define PTIMER_SIGEV_SIGNAL	0
#define PTIMER_SIGEV_NONE	1
#define PTIMER_SIGEV_THREAD	2
#define PTIMER_SIGEV_THREAD_ID	4

/* uapi/linux/prctl.h, kernel commit ec2d0c04624b (Linux 6.15) */
#define PTIMER_PR_TIMER_CREATE_RESTORE_IDS	77
#define PTIMER_PR_TIMER_CREATE_RESTORE_IDS_OFF	0
#define PTIMER_PR_TIMER_CREATE_RESTORE_IDS_ON	1
#define PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET	2

#ifndef __ASSEMBLER__
#include <stdint.h>

/* Same layout as struct __kernel_timespec on 64-bit: s and ns. */
struct ptimer_ts {
	int64_t sec;
	int64_t nsec;		/* 0 .. 999,999,999 */
};

/* One POSIX timer, as dumped and as restored. */
struct ptimer_timer {
	int32_t timer_id;	/* kernel timer ID, 0..INT_MAX */
	int32_t clock_id;	/* clockid_t; negative for CPU clocks */
	int32_t sigev_notify;	/* PTIMER_SIGEV_* (THREAD_ID is SIGNAL|THREAD_ID) */
	int32_t signo;		/* si_signo the kernel queues */
	uint64_t sival;		/* sigev_value, pointer-sized bits */
	int32_t notify_tid;	/* thread (THREAD_ID) or process the signal goes to */
	int32_t overrun;	/* timer_getoverrun() at dump; informational */
	struct ptimer_ts it_value;	/* remaining time, relative; 0 = disarmed */
	struct ptimer_ts it_interval;	/* period; 0 = one-shot */
	int32_t pending;	/* 1: its signal was queued, undelivered, at dump
				   (PTRACE_PEEKSIGINFO, SI_TIMER); RESTORE makes
				   the timer expire at once so the kernel queues
				   it again; 0: nothing pending, or left to criu */
	int32_t pending_overrun;	/* si_overrun of that queued siginfo as
					   peeked (6.13+ fill it at delivery:
					   0); informational */
	int32_t clock_tid;	/* thread clock (clock_id -2 or 3): the thread
				   it measures, own-namespace tid; 0 unknown */
	int32_t pad;
};
#endif

#endif
