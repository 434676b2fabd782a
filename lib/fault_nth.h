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
 * there before it runs, or made by the restorer itself there
 * (ptimer_fail_nth_ahead below); and the close of a restore's restorer
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

/*
 * The in-target restorer's own syscalls, counted in the target
 * (restorer/sys.h), as if made between the write of its arguments and
 * the host's next call: ptimer_fail_nth_blob_at - which of the blob's
 * syscalls is the N-th, the write of its arguments (one call) counted
 * first (0: none, or not the fault build).  ptimer_fail_nth_hold - while
 * on, the host's calls are neither counted nor failed: the waits for
 * the blob and the read of its results, whose place in the count comes
 * after the blob's own calls, unknown until it has run.
 * ptimer_fail_nth_took - the run made calls syscalls and failed the one
 * numbered nr (0: none) with -err: counted, and logged as
 * "blob-syscall-NR".
 */
#ifdef PTIMER_FAULT_INJECT
unsigned ptimer_fail_nth_blob_at(void);
void ptimer_fail_nth_hold(bool on);
void ptimer_fail_nth_took(unsigned calls, int nr, int err);
#else
static inline unsigned ptimer_fail_nth_blob_at(void)
{
	return 0;
}
static inline void ptimer_fail_nth_hold(bool on)
{
	(void)on;
}
static inline void ptimer_fail_nth_took(unsigned calls, int nr, int err)
{
	(void)calls;
	(void)nr;
	(void)err;
}
#endif

#endif
