/* SPDX-License-Identifier: MIT */
/*
 * Failures of the N-th call, for the tests only (beside core/fault.h's
 * named points).
 */
#ifndef PTIMER_LIB_FAULT_NTH_H
#define PTIMER_LIB_FAULT_NTH_H

#include <stdbool.h>

/*
 * ptimer_fail_nth - in the test build (-DPTIMER_FAULT_INJECT) with
 * PTIMER_FAIL_NTH=N: true, errno set to err (or to PTIMER_FAIL_ERRNO), for
 * the N-th call counted since the program started (1-based), false for
 * every other; always false in the builds users get.  Counted: every
 * host-side syscall the Makefile's FAULT_WRAP names (the linker's --wrap
 * puts lib/fault_nth.c in front of libc's) and every syscall run in a
 * target through the stub (restorer/host/inject.c), which then fails
 * there before it runs; and the close of a restore's restorer
 * (core/restore.c), as one call: its munmap and ptrace calls fail only on
 * a thread being killed, which the kill tests cover.  what names the call in the line appended to the
 * file PTIMER_FAIL_NTH_LOG ("failed N WHAT ERRNO-NAME", and "calls C" at
 * exit), from which a test learns which call failed and whether N was
 * reached at all.
 */
#ifdef PTIMER_FAULT_INJECT
bool ptimer_fail_nth(const char *what, int err);
#else
static inline bool ptimer_fail_nth(const char *what, int err)
{
	(void)what;
	(void)err;
	return false;
}
#endif

#endif
