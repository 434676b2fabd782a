/* SPDX-License-Identifier: MIT */
/*
 * Raw x86_64 syscalls for the blob (restorer/sys.h includes this when not
 * built for the simulated kernel), musl style (arch/x86_64/syscall_arch.h):
 * number in rax, arguments in rdi, rsi, rdx, r10, r8; the result in rax; the
 * kernel clobbers rcx and r11.
 */
#ifndef PTIMER_ARCH_X86_64_SYS_H
#define PTIMER_ARCH_X86_64_SYS_H

/* arch/x86/entry/syscalls/syscall_64.tbl */
#define PTIMER_NR_rt_sigtimedwait 128
#define PTIMER_NR_prctl		157
#define PTIMER_NR_timer_create	222
#define PTIMER_NR_timer_settime	223
#define PTIMER_NR_timer_gettime	224
#define PTIMER_NR_timer_getoverrun 225
#define PTIMER_NR_timer_delete	226
#define PTIMER_NR_clock_gettime	228

static inline long ptimer_syscall3(long n, long a1, long a2, long a3)
{
	long ret;

	__asm__ __volatile__ ("syscall"
		: "=a"(ret)
		: "a"(n), "D"(a1), "S"(a2), "d"(a3)
		: "rcx", "r11", "memory");
	return ret;
}

static inline long ptimer_syscall4(long n, long a1, long a2, long a3, long a4)
{
	register long r10 __asm__("r10") = a4;
	long ret;

	__asm__ __volatile__ ("syscall"
		: "=a"(ret)
		: "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10)
		: "rcx", "r11", "memory");
	return ret;
}

static inline long ptimer_syscall5(long n, long a1, long a2, long a3, long a4, long a5)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	long ret;

	__asm__ __volatile__ ("syscall"
		: "=a"(ret)
		: "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8)
		: "rcx", "r11", "memory");
	return ret;
}

#endif
