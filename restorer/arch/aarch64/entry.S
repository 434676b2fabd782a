/* SPDX-License-Identifier: MIT */
/*
 * Entry of the in-target blob on aarch64, at offset 0 of its code
 * (restorer/abi.h), and the syscall stub the host copies elsewhere; the
 * counterpart of restorer/arch/x86_64/entry.S.
 *
 * The host sets pc and sp and blocks every signal but the notify signal;
 * the other registers are the stopped thread's, so nothing is passed in
 * registers.  The arguments page follows the code (__blob_end, from
 * blob.lds); its first field is the top of the blob's own stack.
 *
 * The end (restorer/abi.h, "How the blob hands control back"): tgkill the
 * thread with the notify signal, which the tracing host takes as "done";
 * without a tracer (ptimer was killed) the signal is ignored and the code
 * that follows puts the thread back where it was.  aarch64 has no branch
 * through memory: every general register may be live, so none can hold the
 * address to jump to.  The end therefore builds the frame a signal handler
 * returns through, below the thread's own sp where the kernel would put a
 * signal frame, and calls rt_sigreturn(2): x0..x30, sp, pc, pstate and the
 * signal mask in one step (arch/arm64/kernel/signal.c restore_sigframe()).
 * The frame carries the FP/SIMD registers as they are (the blob, built
 * with -mgeneral-regs-only, never changes them; the kernel requires that
 * record) and the alternate signal stack as it is (rt_sigreturn sets it).
 */
#include "restorer/abi.h"

#define NR_getpid	172	/* include/uapi/asm-generic/unistd.h */
#define NR_gettid	178
#define NR_tgkill	131
#define NR_sigaltstack	132
#define NR_rt_sigreturn	139

/* the mark's magic "ptimer-restorer\0" as two little-endian words */
#define MARK_LO		0x722d72656d697470
#define MARK_HI		0x007265726f747365

/* notify the tracer, else resume the thread from the context at \ctx */
.macro	notify_then_resume ctx
	adr	x19, \ctx
	/* tgkill(getpid(), gettid(), sig): the ids as the thread's own pid
	 * namespace numbers them, which the host's need not be */
	mov	x8, #NR_getpid
	svc	#0
	mov	x20, x0
	mov	x8, #NR_gettid
	svc	#0
	mov	x1, x0
	mov	x0, x20
	ldrsw	x2, [x19, #PTIMER_CTX_SIG]
	mov	x8, #NR_tgkill
	svc	#0
	/* no tracer any more: a signal frame below the thread's sp */
	ldr	x9, [x19, #PTIMER_CTX_SP]
	mov	x10, #PTIMER_SF_SIZE
	sub	x9, x9, x10
	and	sp, x9, #-16
	/* x0..x30, sp, pc, pstate: user_pt_regs is sigcontext's layout from regs[0] on */
	add	x10, sp, #PTIMER_SF_REGS
	mov	x11, x19
	mov	x12, #(PTIMER_CTX_REGS_SIZE / 8)
1:	ldr	x13, [x11], #8
	str	x13, [x10], #8
	subs	x12, x12, #1
	b.ne	1b
	ldr	x13, [x19, #PTIMER_CTX_MASK]
	str	x13, [sp, #PTIMER_SF_UC_SIGMASK]
	mov	x0, #0				/* sigaltstack(NULL, &uc_stack) */
	add	x1, sp, #PTIMER_SF_UC_STACK
	mov	x8, #NR_sigaltstack
	svc	#0
	/* struct fpsimd_context: head, fpsr, fpcr, v0..v31; then the end record */
	add	x10, sp, #PTIMER_SF_RESERVED
	movz	w11, #(PTIMER_FPSIMD_MAGIC & 0xffff)
	movk	w11, #(PTIMER_FPSIMD_MAGIC >> 16), lsl #16
	mov	w12, #PTIMER_FPSIMD_SIZE
	stp	w11, w12, [x10]
	mrs	x11, fpsr
	mrs	x12, fpcr
	stp	w11, w12, [x10, #8]
	stp	q0, q1, [x10, #16]
	stp	q2, q3, [x10, #48]
	stp	q4, q5, [x10, #80]
	stp	q6, q7, [x10, #112]
	stp	q8, q9, [x10, #144]
	stp	q10, q11, [x10, #176]
	stp	q12, q13, [x10, #208]
	stp	q14, q15, [x10, #240]
	stp	q16, q17, [x10, #272]
	stp	q18, q19, [x10, #304]
	stp	q20, q21, [x10, #336]
	stp	q22, q23, [x10, #368]
	stp	q24, q25, [x10, #400]
	stp	q26, q27, [x10, #432]
	stp	q28, q29, [x10, #464]
	stp	q30, q31, [x10, #496]
	str	xzr, [x10, #PTIMER_FPSIMD_SIZE]
	mov	x8, #NR_rt_sigreturn
	svc	#0
.endm

	.arch	armv8-a+fp+simd
	.section .text.entry, "ax", %progbits
	.globl	_start
	.type	_start, %function
_start:
	b	blob_start

/*
 * The syscall stub (PTIMER_STUB_OFF .. PTIMER_STUB_CTX_OFF of the blob):
 * the host copies it, with a struct ptimer_resume_ctx right after it, into
 * the zero padding at the end of an executable mapping of the target, code
 * nothing ever runs, and uses it for single syscalls before and after the
 * blob is mapped: x8 and x0..x5 set, one svc, the result kept in x21 for
 * the host, then the same end as the blob.
 */
	.org	PTIMER_STUB_OFF, 0
stub:
	svc	#0
	mov	x21, x0
	/*
	 * x22 != 0 (mmap of the blob's area): mark the new mapping at once,
	 * { "ptimer-restorer", base, size = x23 } at base + x22, so that a
	 * ptimer killed right now leaves a mapping the next one recognises.
	 */
	cbz	x22, 1f
	cmn	x0, #4095			/* -4095..-1: an error */
	b.hs	1f
	add	x9, x0, x22
	movz	x10, #(MARK_LO & 0xffff)		/* "ptimer-r" */
	movk	x10, #((MARK_LO >> 16) & 0xffff), lsl #16
	movk	x10, #((MARK_LO >> 32) & 0xffff), lsl #32
	movk	x10, #((MARK_LO >> 48) & 0xffff), lsl #48
	movz	x11, #(MARK_HI & 0xffff)		/* "estorer\0" */
	movk	x11, #((MARK_HI >> 16) & 0xffff), lsl #16
	movk	x11, #((MARK_HI >> 32) & 0xffff), lsl #32
	movk	x11, #((MARK_HI >> 48) & 0xffff), lsl #48
	stp	x10, x11, [x9]
	stp	x0, x23, [x9, #16]
1:
	notify_then_resume stub_ctx
	.org	PTIMER_STUB_CTX_OFF, 0		/* fails to assemble if the stub grew past it */
stub_ctx:					/* where the context lies in the copy */

blob_start:
	adr	x0, __blob_end			/* struct ptimer_blob_args * */
	ldr	x9, [x0]			/* args->stack_top */
	and	sp, x9, #-16			/* AAPCS64: sp 16-byte aligned */
	bl	ptimer_blob_main
	notify_then_resume (__blob_end + PTIMER_RESUME_CTX_OFF)
	.size	_start, . - _start

	.section .note.GNU-stack, "", %progbits
