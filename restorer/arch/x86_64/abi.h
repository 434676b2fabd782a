/* SPDX-License-Identifier: MIT */
/*
 * x86_64 part of the host/blob contract (restorer/abi.h includes it): where
 * the syscall stub lies in the blob's code, the layout of the thread's
 * registers in struct ptimer_resume_ctx, and the rseq signature.
 *
 * regs of the resume context: struct user_regs_struct of x86_64
 * (sys/user.h, what PTRACE_GETREGS fills), 27 registers; the offsets below
 * are read by entry.S and checked against sys/user.h in
 * restorer/arch/x86_64/regs.h.
 */
#ifndef PTIMER_ARCH_X86_64_ABI_H
#define PTIMER_ARCH_X86_64_ABI_H

/* the syscall stub inside the blob's code (restorer/arch/x86_64/entry.S);
 * the host copies [STUB_OFF, STUB_CTX_OFF) and puts the context right after */
#define PTIMER_STUB_OFF		16
#define PTIMER_STUB_CTX_OFF	320

#define PTIMER_CTX_R15		0
#define PTIMER_CTX_R14		8
#define PTIMER_CTX_R13		16
#define PTIMER_CTX_R12		24
#define PTIMER_CTX_RBP		32
#define PTIMER_CTX_RBX		40
#define PTIMER_CTX_R11		48
#define PTIMER_CTX_R10		56
#define PTIMER_CTX_R9		64
#define PTIMER_CTX_R8		72
#define PTIMER_CTX_RAX		80
#define PTIMER_CTX_RCX		88
#define PTIMER_CTX_RDX		96
#define PTIMER_CTX_RSI		104
#define PTIMER_CTX_RDI		112
#define PTIMER_CTX_RIP		128
#define PTIMER_CTX_EFLAGS	144
#define PTIMER_CTX_RSP		152
#define PTIMER_CTX_REGS_SIZE	216	/* 27 registers */

/* the same places under the names the arch-independent code uses */
#define PTIMER_CTX_IP		PTIMER_CTX_RIP
#define PTIMER_CTX_SP		PTIMER_CTX_RSP
#define PTIMER_CTX_ARG0		PTIMER_CTX_RDI	/* first argument register */

/* rseq(2) signature the x86_64 ABI puts before an abort_ip: glibc's
 * sysdeps/unix/sysv/linux/x86/bits/rseq.h, the kernel's
 * tools/testing/selftests/rseq/rseq-x86.h */
#define PTIMER_RSEQ_SIG		0x53053053

#endif
