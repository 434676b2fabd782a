/* SPDX-License-Identifier: MIT */
/*
 * Clocks and the stop signals held while ptimer code runs in a target.
 */
#ifndef PTIMER_CORE_UTIL_H
#define PTIMER_CORE_UTIL_H

#include <signal.h>
#include <stdint.h>

/*
 * ptimer_block_stop_signals - block SIGINT, SIGTERM, SIGHUP and SIGQUIT (old
 * mask into *old): they wait until the target is released, so that an
 * interrupted restore can still remove what it made (a killed ptimer leaves
 * the target running, restorer/abi.h, but cannot clean up).
 * ptimer_pending_stop_signal - one of them if it is
 * blocked and pending, else 0: long restores check it between chunks and
 * roll back.
 */
void ptimer_block_stop_signals(sigset_t *old);
int ptimer_pending_stop_signal(void);

/* ptimer_now_ns - CLOCK_MONOTONIC in ns. */
uint64_t ptimer_now_ns(void);

#endif
