/* SPDX-License-Identifier: MIT */
/*
 * The contract between ptimer's host side and the code it runs inside the
 * target process (restorer/algo.c, restorer/arch/).  Both sides are built
 * from this header, so every type here has a fixed size and layout and
 * nothing here needs libc.
 *
 * Memory the host maps into the target (one anonymous mapping, RWX in one
 * mmap; where the process may not have W+X memory, RW with the code made
 * R-X after it is copied in):
 *
 *   [ blob code, page aligned                     ]  <- entry point at offset 0
 *   [ struct ptimer_blob_args, one page           ]  <- __blob_end in the blob
 *     (struct ptimer_resume_ctx at PTIMER_RESUME_CTX_OFF of that page)
 *   [ struct ptimer_timer[n_timers]               ]
 *   [ int32_t occupied[n_occupied]                ]
 *   [ stack, PTIMER_BLOB_STACK bytes              ]
 *
 * The blob finds its arguments PC-relative (the page after its code) and
 * switches to its own stack at once: it never touches the thread's stack.
 */
#ifndef PTIMER_RESTORER_ABI_H
#define PTIMER_RESTORER_ABI_H

#include "lib/timer.h"	/* struct ptimer_timer, PTIMER_SIGEV_*, ... */

#define PTIMER_ABI_VERSION	7u
#define PTIMER_BLOB_STACK	(64u * 1024u)

/* The architecture's part: stub offsets, register layout, rseq signature. */
#if defined(__x86_64__)
#include "restorer/arch/x86_64/abi.h"
#elif defined(__aarch64__)
#include "restorer/arch/aarch64/abi.h"
#else
#error "ptimer's restorer supports x86_64 and aarch64 (restorer/arch/)"
#endif

/*
 * How the blob hands control back (restorer/arch/ARCH/entry.S).  When its
 * work is done it sends the thread notify_sig (tgkill): while ptimer traces
 * the thread that is a signal-delivery stop, where the host puts the
 * thread's own registers and signal mask back.  If ptimer has died
 * meanwhile (the kernel detaches a dead tracer's tracees: kernel/ptrace.c
 * exit_ptrace()) the signal is one the process ignores, and the blob itself
 * returns to the thread's own context: signal mask, flags, every general
 * register, the instruction pointer; the thread runs on as if nothing
 * happened.  No breakpoint trap (int3, brk): an untraced one kills the
 * process with SIGTRAP.
 *
 * regs: the thread's general registers as ptrace reads them, laid out as
 * the architecture's part of this contract says (PTIMER_CTX_* of
 * restorer/arch/ARCH/abi.h); the mask and ids follow them.
 */
#define PTIMER_RESUME_CTX_OFF	2048	/* in the arguments page */
#define PTIMER_LEFTOVER_MARK_OFF 3072	/* host only: marks the mapping as ptimer's */
#define PTIMER_CTX_MASK		PTIMER_CTX_REGS_SIZE	/* the thread's signal mask, 8 bytes */
#define PTIMER_CTX_TGID		(PTIMER_CTX_REGS_SIZE + 8)
#define PTIMER_CTX_TID		(PTIMER_CTX_REGS_SIZE + 12)
#define PTIMER_CTX_SIG		(PTIMER_CTX_REGS_SIZE + 16)

#ifndef __ASSEMBLER__
struct ptimer_resume_ctx {
	uint64_t regs[PTIMER_CTX_REGS_SIZE / 8];	/* resume state, IP included */
	uint64_t sigmask;
	int32_t tgid;		/* host ids, for the host's own checks; the */
	int32_t tid;		/* blob asks getpid()/gettid() for tgkill */
	int32_t sig;
	uint32_t pad;
};
#endif

/*
 * uapi/linux/prctl.h (Linux 7.0+): rseq time-slice extension, per thread.
 * GET returns PR_RSEQ_SLICE_EXT_ENABLE or 0; SET takes 0 or ENABLE in arg3.
 * Errors: -EINVAL (kernel without it, bad args), -ENOTSUPP 524 (built but
 * disabled), -ENXIO (no rseq area registered for the thread).
 */
#define PTIMER_PR_RSEQ_SLICE_EXTENSION		79
#define PTIMER_PR_RSEQ_SLICE_EXTENSION_GET	1
#define PTIMER_PR_RSEQ_SLICE_EXTENSION_SET	2
#define PTIMER_PR_RSEQ_SLICE_EXT_ENABLE		0x1

/* uapi/linux/prctl.h: the calling thread's parent-death signal (0: none) */
#define PTIMER_PR_SET_PDEATHSIG			1

#ifndef __ASSEMBLER__

/* What the blob is asked to do. */
enum ptimer_op {
	PTIMER_OP_PROBE = 1,	/* prctl_get = exact-ID prctl GET; when that
				   fails, or when mode == PTIMER_MODE_LINEAR,
				   also probe_id = the ID the counter gives one
				   timer (created and deleted at once) */
	PTIMER_OP_GETTIME = 2,	/* fill it_value/it_interval/overrun of timers[] */
	PTIMER_OP_RESTORE = 3,	/* create timers[] with their IDs, arm them */
	PTIMER_OP_ROLLBACK = 4,	/* delete timers[0..n_created) */
	PTIMER_OP_SLICE = 5,	/* rseq slice extension prctl in this thread,
				   as slice_how says */
	PTIMER_OP_PROBE_RESTORE = 6,	/* PROBE, then, when the prctl is there
				   and off and mode == PTIMER_MODE_EXACT,
				   RESTORE at once (done: result 0 with
				   prctl_get 0):
				   one run of the thread instead of two */
	PTIMER_OP_FLUSH = 7,	/* after a rollback: take the signals in
				   flush_mask out of this thread's and the
				   process's queues */
	/* the dump's look at which thread a timer is aimed at (core/aim_probe.c) */
	PTIMER_OP_FIRE = 8,	/* phase 0: read timers[] (it_value,
				   it_interval) and look_ns, then arm each for
				   1 ns (n_armed: how many); then read them
				   until each has expired (PTIMER_AGAIN: not
				   yet, run again with phase 1) */
	PTIMER_OP_ARM = 9,	/* timer_settime(0) of each of timers[] with its
				   it_interval and its it_value less the time
				   since look_ns (1 ns at least), past failures
				   (the first in result, fail_index) */
	PTIMER_OP_TAKE = 10,	/* in this thread, take each signal of
				   timers[] with pending set (its SI_TIMER
				   siginfo) out of the queue, pending cleared;
				   another signal taken: PTIMER_E_FOREIGN, its
				   siginfo in taken_info */
};

/* PTIMER_OP_SLICE: what to do in the thread the blob runs in. */
enum ptimer_slice_how {
	PTIMER_SLICE_GET = 1,	/* slice_get = GET */
	PTIMER_SLICE_PROBE = 2,	/* slice_get = GET; if that worked, slice_set =
				   SET(slice_get): proves SET works here without
				   changing the thread's state */
	PTIMER_SLICE_SET = 3,	/* slice_set = SET(slice_arg), then slice_get =
				   GET to confirm */
};

enum ptimer_mode {
	PTIMER_MODE_EXACT = 1,	/* prctl(PR_TIMER_CREATE_RESTORE_IDS) */
	PTIMER_MODE_LINEAR = 2,	/* create/delete until the counter hits each ID */
};

/* Results in ptimer_blob_args.result besides 0 and -errno. */
#define PTIMER_AGAIN		1	/* budget used up; run again to go on */

/* Extra negative results naming faults no errno describes well. */
#define PTIMER_E_COUNTER	(-10001)	/* counter did not advance by one */
#define PTIMER_E_PASSED		(-10002)	/* counter already past a wanted ID */
#define PTIMER_E_ORDER		(-10003)	/* timers[] not in creation order */
#define PTIMER_E_GOTID		(-10004)	/* kernel gave another ID than asked */
#define PTIMER_E_ABI		(-10005)	/* abi_version mismatch */
#define PTIMER_E_FOREIGN	(-10006)	/* TAKE: took a signal none of timers[] is */

struct ptimer_blob_args {
	/* in: set by the host before the first run */
	uint64_t stack_top;	/* MUST stay first: read by entry.S */
	uint32_t abi_version;	/* PTIMER_ABI_VERSION */
	uint32_t op;		/* enum ptimer_op */
	uint32_t mode;		/* enum ptimer_mode, for RESTORE */
	uint32_t n_timers;
	uint64_t timers;	/* target address of struct ptimer_timer[] */
	uint32_t n_occupied;	/* IDs the target already holds (sorted) */
	uint32_t allow_wrap;	/* linear: may go through INT_MAX back to 0 */
	uint64_t occupied;	/* target address of int32_t[] */
	uint64_t budget;	/* linear: max create/delete pairs per run */
	uint64_t flush_mask;	/* FLUSH: signals (bit S-1) whose every queued
				   entry the host found to be a deleted timer's */

	/* state, carried between runs of one RESTORE */
	int32_t counter;	/* linear: next ID the kernel will hand out */
	uint32_t n_created;	/* timers[0..n_created) exist in the target */
	uint32_t n_armed;	/* timers[0..n_armed) have been armed */
	uint32_t phase;		/* blob-private progress marker */
	uint64_t pairs_done;	/* linear: create/delete pairs so far */

	/* out */
	int64_t result;		/* 0 done, PTIMER_AGAIN, or -errno/PTIMER_E_* */
	uint32_t fail_index;	/* timers[] index the failure is about */
	int32_t got_id;		/* what the kernel returned, on PTIMER_E_* */
	int32_t prctl_get;	/* PROBE: prctl GET result (0/1) or -errno */
	int32_t probe_id;	/* PROBE in linear mode: ID the probe timer got */
	int32_t prctl_off;	/* RESTORE exact: result of the final OFF */

	/* SLICE (in: slice_how, slice_arg; out: slice_get, slice_set) */
	uint32_t slice_how;	/* enum ptimer_slice_how */
	uint32_t slice_arg;	/* SET's arg3: 0 or PR_RSEQ_SLICE_EXT_ENABLE */
	int32_t slice_get;	/* GET's answer (0/1) or -errno */
	int32_t slice_set;	/* SET's answer (0) or -errno; 1 when not run */

	/* PROBE_RESTORE done (result 0): with pdeath_want, also
	 * prctl(PR_SET_PDEATHSIG, pdeath_sig) in this thread, its answer in
	 * pdeath_res (0 or -errno; 1 when not run): one run less where the
	 * plugin puts a task's parent-death signal back */
	uint32_t pdeath_want;
	int32_t pdeath_sig;
	int32_t pdeath_res;

	/* the fault build's N-th-call failure (lib/fault_nth.h), in: fail
	 * the fail_at-th syscall of this run (0: none); out: the syscalls
	 * made (fail_calls), the one failed and its -errno (fail_nr,
	 * fail_err; 0: none).  Unused in the builds users get. */
	uint32_t fail_at;
	uint32_t fail_calls;
	int32_t fail_nr;
	int32_t fail_err;

	/* TAKE: a signal taken that is none of timers[] (siginfo_t) */
	uint64_t taken_info[16];
	/* FIRE out, ARM in: CLOCK_MONOTONIC (ns) when timers[] were read */
	int64_t look_ns;
};

#endif /* __ASSEMBLER__ */

#endif
