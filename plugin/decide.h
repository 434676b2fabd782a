/* SPDX-License-Identifier: MIT */
/*
 * Who restores a task's timers, decided from facts read before: the
 * table of docs/criu-plugin.md as one pure function, with no I/O, so
 * that test/unit/test_decide.c can drive it through every row.
 */
#ifndef PTIMER_PLUGIN_DECIDE_H
#define PTIMER_PLUGIN_DECIDE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * What decide() is given.  The image's part is its head (images/image.h)
 * until decide() asks for the whole image (DECIDE_READ_IMAGE); then the
 * counts are those of the timers read.
 */
struct decide_in {
	uint32_t img_mode;	/* the image's criu_mode: PTIMER_IMG_STANDALONE,
				   or the dump's enum ptimer_criu_mode */
	bool state_in_core;	/* criu's core image holds the timing */
	bool timers_in_core;	/* the image lists no timer: criu's core image
				   holds them all (ptimer_timers_all_criu) */
	bool whole;		/* the image was read whole (its timers) */
	bool counts_known;	/* the head carries the three counts */
	uint32_t n_timers;	/* listed in the image */
	uint32_t n_pending;	/* timers with a queued expiry */
	uint32_t n_clock_tid;	/* timers on another thread's CPU clock */
	uint32_t n_leader_aimed; /* pid-namespace leader's SIGEV_THREAD_ID
				   timers that criu saves aimed at the process */
	bool slice;		/* a thread's rseq slice extension to enable */

	bool takeover;		/* criu-mode takeover in the restore's settings */
	bool criu_exact;	/* the restoring criu makes exact IDs itself
				   (criu 4.2+ on a kernel with the prctl) */
	bool prctl;		/* this kernel has PR_TIMER_CREATE_RESTORE_IDS */
	bool ahead;		/* a plugin loaded before ptimer handles
				   RESUME_DEVICES_LATE */
	bool pairs_known;	/* pairs counted (DECIDE_COUNT_PAIRS) */
	uint64_t pairs;		/* create/delete pairs criu's loop would need */
	bool no_overlay;	/* criu cannot be given core images without
				   the timers (a read-only directory) */
};

enum decide_outcome {
	DECIDE_REFUSE,		/* the image cannot be restored: why says */
	DECIDE_READ_IMAGE,	/* read the image whole, then decide again */
	DECIDE_COUNT_PAIRS,	/* count criu's loop pairs, then decide again */
	DECIDE_CRIU,		/* criu makes the timers; ptimer completes them */
	DECIDE_CRIU_CHECKED,	/* criu makes them; ptimer checks and completes */
	DECIDE_PTIMER,		/* ptimer makes them: criu reads the core image
				   without them, and the task is held by its
				   parent-death signal until ptimer is done */
};

/* What RESUME_DEVICES_LATE does after criu made the timers (DECIDE_CRIU*). */
enum {
	DO_REAIM = 1u << 0,	/* aim the leader's timers at the leader again */
	DO_CLOCKS = 1u << 1,	/* move thread-CPU-clock timers to their thread */
	DO_PENDING = 1u << 2,	/* queue pending expiries as the timer's own */
	DO_SLICE = 1u << 3,	/* enable the threads' rseq slice extension */
};

/* Where ptimer needs criu's core image at init. */
enum {
	NEED_TIMING = 1u << 0,	/* the timers' timing (checked, made, pending) */
	NEED_CORE_TIMERS = 1u << 1, /* the timers themselves (timers_in_core) */
};

struct decision {
	enum decide_outcome outcome;
	unsigned int todo;	/* DO_* */
	unsigned int needs;	/* NEED_* */
	const char *why;	/* one phrase: the row of the table */
};

/* criu's loop is left a task that costs it at most this many pairs. */
#define CRIU_LOOP_PAIRS_MAX 256

/*
 * decide - the row of the decision table for in.  Pure: the caller reads
 * what the outcome asks (DECIDE_READ_IMAGE, DECIDE_COUNT_PAIRS) and calls
 * it again.  Returns the decision; why points to a string constant.
 */
struct decision decide(const struct decide_in *in);

#endif
