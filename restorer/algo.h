/* SPDX-License-Identifier: MIT */
/*
 * The restore algorithm that runs inside the target (restorer/algo.c).  The
 * blob's entry (restorer/arch/ARCH/entry.S) calls ptimer_blob_main(); the
 * unit tests call it directly against the simulated kernel
 * (test/unit/simkernel.c).
 */
#ifndef PTIMER_RESTORER_ALGO_H
#define PTIMER_RESTORER_ALGO_H

#include "restorer/abi.h"

/* ptimer_blob_args.fail_index when a failure is about no single timer
 * (the prctl, an unsorted occupied[], an unknown op). */
#define PTIMER_NO_INDEX	0xffffffffu

/*
 * Run the operation a->op (enum ptimer_op) described by *a and the arrays it
 * points to, in the calling process.  Stores the result in a->result and
 * returns it: 0 done, PTIMER_AGAIN (linear RESTORE ran out of a->budget:
 * call again with the same *a to go on, or run PTIMER_OP_ROLLBACK), -errno
 * from the kernel, or PTIMER_E_*; a->fail_index names the timers[] entry a
 * failure is about (PTIMER_NO_INDEX if none), a->got_id the ID the kernel
 * handed out when that was the fault.  A failed RESTORE has deleted every
 * timer it created (n_created == 0).  Details per op in restorer/algo.c.
 */
long ptimer_blob_main(struct ptimer_blob_args *a);

#endif
