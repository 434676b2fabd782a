/* SPDX-License-Identifier: MIT */
/*
 * The system calls the in-target restorer (restorer/algo.c) makes, and the
 * kernel structures they take.
 *
 * Built for the blob (PTIMER_SIMKERNEL undefined): raw syscalls as static
 * inline functions, restorer/arch/ARCH/sys.h giving the numbers and the
 * instruction.  They return the kernel's value, -errno on failure; there is
 * no errno.
 *
 * Built with -DPTIMER_SIMKERNEL: the same functions are extern and
 * test/unit/simkernel.c implements them against a simulated kernel.
 *
 * Needs nothing but stdint.h, so it compiles freestanding.
 */
#ifndef PTIMER_RESTORER_SYS_H
#define PTIMER_RESTORER_SYS_H

#include <stdint.h>

#include "restorer/abi.h"

/* uapi/asm-generic/errno-base.h and errno.h */
#define PTIMER_EPERM	1
#define PTIMER_EAGAIN	11
#define PTIMER_EFAULT	14
#define PTIMER_EBUSY	16
#define PTIMER_EINVAL	22
#define PTIMER_EOPNOTSUPP 95
#define PTIMER_ENXIO	6
#define PTIMER_ENOTSUPP	524	/* kernel-internal, include/linux/errno.h */

/* uapi/linux/time.h */
#define PTIMER_CLOCK_REALTIME	0
#define PTIMER_CLOCK_MONOTONIC	1

/*
 * struct sigevent as the kernel copies it in (uapi/asm-generic/siginfo.h,
 * SIGEV_MAX_SIZE 64): an 8-byte sigev_value, signo, notify, then a union whose
 * first int is sigev_notify_thread_id.
 */
struct ptimer_ksigevent {
	uint64_t sigev_value;
	int32_t sigev_signo;
	int32_t sigev_notify;
	union {
		int32_t _tid;
		int32_t _pad[12];
	} _sigev_un;
};
_Static_assert(sizeof(struct ptimer_ksigevent) == 64, "kernel sigevent is 64 bytes");
_Static_assert(__builtin_offsetof(struct ptimer_ksigevent, _sigev_un._tid) == 16,
	       "sigev_notify_thread_id at offset 16");

/* struct __kernel_itimerspec (uapi/linux/time_types.h): interval first. */
struct ptimer_kitimerspec {
	struct ptimer_ts it_interval;
	struct ptimer_ts it_value;
};
_Static_assert(sizeof(struct ptimer_kitimerspec) == 32, "__kernel_itimerspec is 32 bytes");

#ifndef PTIMER_SIMKERNEL

/* raw syscalls and their numbers: ptimer_syscall3/4/5(nr, args...) */
#if defined(__x86_64__)
#include "restorer/arch/x86_64/sys.h"
#elif defined(__aarch64__)
#include "restorer/arch/aarch64/sys.h"
#endif

/*
 * The fault build (-DPTIMER_FAULT_INJECT, lib/fault_nth.h): the
 * args->fail_at-th syscall of a run fails before it is made, with an errno
 * that call can return.  The arguments page follows the blob's code
 * (__blob_end, blob.lds), reached PC-relative like the entry does.
 */
#ifdef PTIMER_FAULT_INJECT
extern char __blob_end[] __attribute__((visibility("hidden")));

static inline long ptimer_sys_fail(long nr, long err)
{
	struct ptimer_blob_args *a = (struct ptimer_blob_args *)(void *)__blob_end;

	if (!a->fail_at || ++a->fail_calls != a->fail_at)
		return 0;
	a->fail_nr = (int32_t)nr;
	a->fail_err = (int32_t)-err;
	return -err;
}
#define PTIMER_SYS_FAIL(nr, err) do { long f_ = ptimer_sys_fail(nr, err); if (f_) return f_; } while (0)
#else
#define PTIMER_SYS_FAIL(nr, err) do { } while (0)
#endif

/*
 * timer_create(2).  With PR_TIMER_CREATE_RESTORE_IDS on, the kernel reads the
 * wanted ID from *timer_id first (kernel commit ec2d0c04624b); it always
 * writes the ID it gave back there.  0 or -errno.
 */
static inline long sys_timer_create(int clock_id, struct ptimer_ksigevent *sev,
				    int32_t *timer_id)
{
	PTIMER_SYS_FAIL(PTIMER_NR_timer_create, PTIMER_EAGAIN);
	return ptimer_syscall3(PTIMER_NR_timer_create, clock_id, (long)sev, (long)timer_id);
}

/* timer_settime(2); old_value may be NULL.  0 or -errno. */
static inline long sys_timer_settime(int32_t timer_id, int flags,
				     const struct ptimer_kitimerspec *new_value,
				     struct ptimer_kitimerspec *old_value)
{
	PTIMER_SYS_FAIL(PTIMER_NR_timer_settime, PTIMER_EINVAL);
	return ptimer_syscall4(PTIMER_NR_timer_settime, timer_id, flags,
			       (long)new_value, (long)old_value);
}

/* timer_gettime(2): remaining time (relative) and period.  0 or -errno. */
static inline long sys_timer_gettime(int32_t timer_id, struct ptimer_kitimerspec *cur)
{
	PTIMER_SYS_FAIL(PTIMER_NR_timer_gettime, PTIMER_EINVAL);
	return ptimer_syscall3(PTIMER_NR_timer_gettime, timer_id, (long)cur, 0);
}

/* timer_getoverrun(2): overrun count (>= 0, clamped to INT_MAX) or -errno. */
static inline long sys_timer_getoverrun(int32_t timer_id)
{
	PTIMER_SYS_FAIL(PTIMER_NR_timer_getoverrun, PTIMER_EINVAL);
	return ptimer_syscall3(PTIMER_NR_timer_getoverrun, timer_id, 0, 0);
}

/* timer_delete(2).  0 or -errno (-EINVAL: no such timer). */
static inline long sys_timer_delete(int32_t timer_id)
{
	/* not failed on purpose: the blob deletes only timers it made, which
	 * no errno stops (kernel/time/posix-timers.c) */
	return ptimer_syscall3(PTIMER_NR_timer_delete, timer_id, 0, 0);
}

/*
 * clock_gettime(2) into *ts.  0 or -errno.  Not failed on purpose: the
 * blob asks only CLOCK_MONOTONIC into its own memory, which no errno
 * stops (kernel/time/posix-timers.c, posix_get_monotonic_timespec()).
 */
static inline long sys_clock_gettime(int clock_id, struct ptimer_ts *ts)
{
	return ptimer_syscall3(PTIMER_NR_clock_gettime, clock_id, (long)ts, 0);
}

/* prctl(2): the option's value or -errno. */
static inline long sys_prctl(int option, unsigned long arg2, unsigned long arg3,
			     unsigned long arg4, unsigned long arg5)
{
	/* ... nor PR_TIMER_CREATE_RESTORE_IDS OFF, which only clears a flag */
	if (option != PTIMER_PR_TIMER_CREATE_RESTORE_IDS || arg2 != PTIMER_PR_TIMER_CREATE_RESTORE_IDS_OFF)
		PTIMER_SYS_FAIL(PTIMER_NR_prctl, PTIMER_EINVAL);
	return ptimer_syscall5(PTIMER_NR_prctl, option, (long)arg2, (long)arg3,
			       (long)arg4, (long)arg5);
}

/*
 * rt_sigtimedwait(2) of the signals in *set (a 64-bit kernel sigset) with
 * the timeout *ts, the siginfo (128 bytes) into info when not NULL: the
 * signal number taken, or -EAGAIN when none is queued.  Failed on purpose
 * only where the siginfo is wanted: a flush (no info) only tidies up.
 */
static inline long sys_rt_sigtimedwait(const uint64_t *set, void *info, const struct ptimer_ts *ts)
{
	if (info)
		PTIMER_SYS_FAIL(PTIMER_NR_rt_sigtimedwait, PTIMER_EAGAIN);
	return ptimer_syscall4(PTIMER_NR_rt_sigtimedwait, (long)set, (long)info, (long)ts, 8);
}

#else /* PTIMER_SIMKERNEL: test/unit/simkernel.c, same contracts as above */

long sys_timer_create(int clock_id, struct ptimer_ksigevent *sev, int32_t *timer_id);
long sys_timer_settime(int32_t timer_id, int flags,
		       const struct ptimer_kitimerspec *new_value,
		       struct ptimer_kitimerspec *old_value);
long sys_timer_gettime(int32_t timer_id, struct ptimer_kitimerspec *cur);
long sys_timer_getoverrun(int32_t timer_id);
long sys_timer_delete(int32_t timer_id);
long sys_rt_sigtimedwait(const uint64_t *set, void *info, const struct ptimer_ts *ts);
long sys_clock_gettime(int clock_id, struct ptimer_ts *ts);
long sys_prctl(int option, unsigned long arg2, unsigned long arg3,
	       unsigned long arg4, unsigned long arg5);

#endif /* PTIMER_SIMKERNEL */

#endif
