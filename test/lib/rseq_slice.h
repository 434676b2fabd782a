/* SPDX-License-Identifier: MIT */
/*
 * test/lib/rseq_slice.h - what the rseq time-slice test programs
 * (test/e2e/slice_grants.c, test/e2e/slice_move.c) share: the uapi numbers
 * of Linux 7.0 that older headers lack, rseq(2) itself, and the area glibc
 * registered for the calling thread.
 */
#ifndef PTIMER_TEST_RSEQ_SLICE_H
#define PTIMER_TEST_RSEQ_SLICE_H

#include <errno.h>
#include <stdint.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

/* uapi/linux/auxvec.h, uapi/linux/prctl.h, uapi/linux/rseq.h (Linux 7.0) */
#define AT_RSEQ_FEATURE_SIZE_		27
#define AT_RSEQ_ALIGN_			28
#define PR_RSEQ_SLICE_EXTENSION_	79
#define PR_RSEQ_SLICE_EXTENSION_GET_	1
#define PR_RSEQ_SLICE_EXTENSION_SET_	2
#define PR_RSEQ_SLICE_EXT_ENABLE_	1
#define RSEQ_FLAG_SLICE_EXT_DEFAULT_ON_	(1 << 1)
#define RSEQ_FLAG_UNREGISTER_		(1 << 0)
#define SLICE_EXT_AVAILABLE		(1U << 4)	/* struct rseq.flags, kernel-written */
#define SLICE_EXT_ENABLED		(1U << 5)
#define ENOTSUPP_			524		/* include/linux/errno.h */

/* rseq(2): 0 or -errno */
static inline long rseq_sys(void *p, uint32_t len, int flags, uint32_t sig)
{
	return syscall(__NR_rseq, p, len, flags, sig) ? -errno : 0;
}

/* the calling thread's area as glibc registered it (2.35+) */
static inline void *glibc_area(void)
{
	return (char *)__builtin_thread_pointer() + __rseq_offset;
}

/* The length glibc registered the calling thread's area with, or 0: the
 * same pointer and length again answers EBUSY (kernel/rseq.c
 * rseq_reregister), another length EINVAL, and __rseq_size is not it on
 * every glibc.  feature_size, align_to: getauxval's AT_RSEQ_*. */
static inline uint32_t glibc_len(uint32_t feature_size, uint32_t align_to)
{
	uint32_t c[] = { __rseq_size, 32, feature_size, align_to };

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (c[i] >= 32 && rseq_sys(glibc_area(), c[i], 0, RSEQ_SIG) == -EBUSY)
			return c[i];
	return 0;
}

#endif
