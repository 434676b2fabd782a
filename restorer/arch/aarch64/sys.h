/* SPDX-License-Identifier: MIT */
/*
 * Raw aarch64 syscalls for the blob (restorer/sys.h includes this when not
 * built for the simulated kernel), musl style (arch/aarch64/syscall_arch.h):
 * number in x8, arguments in x0..x5, `svc #0`, the result in x0; no other
 * register is clobbered.
 */
#ifndef PTIMER_ARCH_AARCH64_SYS_H
#define PTIMER_ARCH_AARCH64_SYS_H

/* include/uapi/asm-generic/unistd.h (arm64 uses the generic table) */
#define PTIMER_NR_timer_create	107
#define PTIMER_NR_timer_gettime	108
#define PTIMER_NR_timer_getoverrun 109
#define PTIMER_NR_timer_settime	110
#define PTIMER_NR_timer_delete	111
#define PTIMER_NR_clock_gettime	113
#define PTIMER_NR_rt_sigtimedwait 137
#define PTIMER_NR_prctl		167

static inline long ptimer_syscall5(long n, long a1, long a2, long a3, long a4, long a5)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = a5;

	__asm__ __volatile__ ("svc #0"
		: "+r"(x0)
		: "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4)
		: "memory");
	return x0;
}

static inline long ptimer_syscall4(long n, long a1, long a2, long a3, long a4)
{
	return ptimer_syscall5(n, a1, a2, a3, a4, 0);
}

static inline long ptimer_syscall3(long n, long a1, long a2, long a3)
{
	return ptimer_syscall5(n, a1, a2, a3, 0, 0);
}

#endif
