/* SPDX-License-Identifier: MIT */
/*
 * aarch64 part of the host/blob contract (restorer/abi.h includes it): where
 * the syscall stub lies in the blob's code, the layout of the thread's
 * registers in struct ptimer_resume_ctx, the rseq signature, and the
 * rt_sigreturn frame the blob's end builds (restorer/arch/aarch64/entry.S).
 *
 * regs of the resume context: struct user_pt_regs (uapi asm/ptrace.h; glibc
 * calls it struct user_regs_struct in sys/user.h), what PTRACE_GETREGSET
 * NT_PRSTATUS fills: x0..x30, sp, pc, pstate.  Checked against the headers
 * in restorer/arch/aarch64/regs.h.
 */
#ifndef PTIMER_ARCH_AARCH64_ABI_H
#define PTIMER_ARCH_AARCH64_ABI_H

/* the syscall stub inside the blob's code (restorer/arch/aarch64/entry.S);
 * the host copies [STUB_OFF, STUB_CTX_OFF) and puts the context right after
 * (the two together a multiple of 16 bytes) */
#define PTIMER_STUB_OFF		16
#define PTIMER_STUB_CTX_OFF	328

#define PTIMER_CTX_X0		0	/* x<n> at 8 * n */
#define PTIMER_CTX_X19		152
#define PTIMER_CTX_X29		232
#define PTIMER_CTX_X30		240
#define PTIMER_CTX_SP_EL0	248
#define PTIMER_CTX_PC		256
#define PTIMER_CTX_PSTATE	264
#define PTIMER_CTX_REGS_SIZE	272	/* 34 registers */

/* the same places under the names the arch-independent code uses */
#define PTIMER_CTX_IP		PTIMER_CTX_PC
#define PTIMER_CTX_SP		PTIMER_CTX_SP_EL0
#define PTIMER_CTX_ARG0		PTIMER_CTX_X0	/* first argument register */

/* rseq(2) signature before an abort_ip on aarch64 (`brk #0x45e0`, an
 * instruction that traps if ever run): glibc's
 * sysdeps/unix/sysv/linux/aarch64/bits/rseq.h, the kernel's
 * tools/testing/selftests/rseq/rseq-arm64.h */
#define PTIMER_RSEQ_SIG		0xd428bc00

/*
 * The frame rt_sigreturn(2) takes at sp (arch/arm64/kernel/signal.c
 * struct rt_sigframe: siginfo, then struct ucontext of uapi
 * asm/ucontext.h with its struct sigcontext of asm/sigcontext.h), offsets
 * from the frame's start, which is 16-byte aligned.
 */
#define PTIMER_SF_SIZE		4688	/* sizeof(struct rt_sigframe) */
#define PTIMER_SF_UC		128	/* struct ucontext */
#define PTIMER_SF_UC_STACK	(PTIMER_SF_UC + 16)	/* uc_stack */
#define PTIMER_SF_UC_SIGMASK	(PTIMER_SF_UC + 40)	/* uc_sigmask */
#define PTIMER_SF_MCONTEXT	(PTIMER_SF_UC + 176)	/* uc_mcontext */
#define PTIMER_SF_REGS		(PTIMER_SF_MCONTEXT + 8)	/* regs[31], sp, pc, pstate */
#define PTIMER_SF_RESERVED	(PTIMER_SF_MCONTEXT + 288)	/* __reserved[4096] */
#define PTIMER_FPSIMD_MAGIC	0x46508001	/* struct fpsimd_context */
#define PTIMER_FPSIMD_SIZE	528

#endif
