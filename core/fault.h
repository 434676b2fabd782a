/* SPDX-License-Identifier: MIT */
/*
 * Failures injected at named points, for the tests only.
 */
#ifndef PTIMER_CORE_FAULT_H
#define PTIMER_CORE_FAULT_H

#include <stdbool.h>

/*
 * ptimer_fault - true when the test build (-DPTIMER_FAULT_INJECT, the
 * sanitizer build of 'make asan') runs with PTIMER_FAULT set to point: the
 * caller then fails there as if the step had failed, so that a test can
 * check what a dump or restore that fails at that point leaves behind.
 * Always false in the builds users get.  Points: "look-arm" (after the
 * first timer armed for the look at its clock, core/thread_clock.c),
 * "look-read" (between the looks in each thread), "look-disarm" (the
 * disarm after the look), "replace-dead" (before a timer that can never
 * fire is replaced, core/dump.c), "after-dump" (the whole task dumped, the
 * image not yet written); in the CRIU plugin "restore-init" (the end of
 * init(RESTORE), core images stripped), "overlay-links" (each link of
 * criu's images into the overlay), "core-write" (a core image without
 * timers written into the overlay), "resume-late" (a task's
 * RESUME_DEVICES_LATE, before anything is done in it).
 * PTIMER_FAULT may list several, comma-separated.
 */
#ifdef PTIMER_FAULT_INJECT
bool ptimer_fault(const char *point);
#else
static inline bool ptimer_fault(const char *point)
{
	(void)point;
	return false;
}
#endif

#endif
