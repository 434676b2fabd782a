/* SPDX-License-Identifier: MIT */
/*
 * Entry of the in-target blob on x86_64, at offset 0 of its code
 * (restorer/abi.h), and the syscall stub the host copies elsewhere.
 *
 * The host sets the instruction pointer and blocks every signal but the
 * notify signal; the other registers are the stopped thread's, so nothing
 * is passed in registers.  The arguments page follows the code (__blob_end,
 * from blob.lds); its first field is the top of the blob's own stack, so the
 * thread's stack is never touched while the blob works.
 *
 * The end (restorer/abi.h, "How the blob hands control back"): tgkill the
 * thread with the notify signal, which the tracing host takes as "done";
 * without a tracer (ptimer was killed) the signal is ignored and the code
 * that follows puts the thread back where it was: signal mask, flags,
 * registers, instruction pointer, from a struct ptimer_resume_ctx the host
 * wrote.  The mask is restored on the thread's own stack, below its 128-byte
 * red zone, where the kernel would deliver a pending signal too.
 */
#include "restorer/abi.h"

/* notify the tracer, else resume the thread from the context at \ctx */
.macro	notify_then_resume ctx
	/* tgkill(getpid(), gettid(), sig): the ids as the thread's own pid
	 * namespace numbers them, which the host's need not be */
	mov	$39, %eax			/* getpid */
	syscall
	mov	%rax, %rbx
	mov	$186, %eax			/* gettid */
	syscall
	mov	%rax, %rsi
	mov	%rbx, %rdi
	mov	$234, %eax			/* tgkill */
	movslq	(\ctx + PTIMER_CTX_SIG)(%rip), %rdx
	syscall
	/* no tracer any more: back to the thread's own context */
	mov	(\ctx + PTIMER_CTX_RSP)(%rip), %rsp
	sub	$256, %rsp			/* below the red zone */
	and	$-16, %rsp
	mov	$14, %eax			/* rt_sigprocmask(SIG_SETMASK, &mask, NULL, 8) */
	mov	$2, %edi
	lea	(\ctx + PTIMER_CTX_MASK)(%rip), %rsi
	xor	%edx, %edx
	mov	$8, %r10d
	syscall
	pushq	(\ctx + PTIMER_CTX_EFLAGS)(%rip)
	popfq
	mov	(\ctx + PTIMER_CTX_RSP)(%rip), %rsp	/* mov leaves the flags alone */
	mov	(\ctx + PTIMER_CTX_R15)(%rip), %r15
	mov	(\ctx + PTIMER_CTX_R14)(%rip), %r14
	mov	(\ctx + PTIMER_CTX_R13)(%rip), %r13
	mov	(\ctx + PTIMER_CTX_R12)(%rip), %r12
	mov	(\ctx + PTIMER_CTX_RBP)(%rip), %rbp
	mov	(\ctx + PTIMER_CTX_RBX)(%rip), %rbx
	mov	(\ctx + PTIMER_CTX_R11)(%rip), %r11
	mov	(\ctx + PTIMER_CTX_R10)(%rip), %r10
	mov	(\ctx + PTIMER_CTX_R9)(%rip), %r9
	mov	(\ctx + PTIMER_CTX_R8)(%rip), %r8
	mov	(\ctx + PTIMER_CTX_RAX)(%rip), %rax
	mov	(\ctx + PTIMER_CTX_RCX)(%rip), %rcx
	mov	(\ctx + PTIMER_CTX_RDX)(%rip), %rdx
	mov	(\ctx + PTIMER_CTX_RSI)(%rip), %rsi
	mov	(\ctx + PTIMER_CTX_RDI)(%rip), %rdi
	jmp	*(\ctx + PTIMER_CTX_RIP)(%rip)
.endm

	.section .text.entry, "ax", @progbits
	.globl	_start
	.type	_start, @function
_start:
	jmp	blob_start

/*
 * The syscall stub (PTIMER_STUB_OFF .. PTIMER_STUB_CTX_OFF of the blob):
 * the host copies it, with a struct ptimer_resume_ctx right after it, into
 * the zero padding at the end of an executable mapping of the target, code
 * nothing ever runs, and uses it for single syscalls before and after the
 * blob is mapped: rax and the argument registers set, one syscall, the
 * result kept in r12 for the host, then the same end as the blob.
 */
	.org	PTIMER_STUB_OFF, 0xcc
stub:
	syscall
	mov	%rax, %r12
	/*
	 * r13 != 0 (mmap of the blob's area): mark the new mapping at once,
	 * { "ptimer-restorer", base, size = r14 } at base + r13, so that a
	 * ptimer killed right now leaves a mapping the next one recognises.
	 */
	test	%r13, %r13
	jz	1f
	cmp	$-4096, %rax
	ja	1f
	lea	(%rax,%r13), %rdi
	movabs	$0x722d72656d697470, %rsi	/* "ptimer-r" */
	mov	%rsi, (%rdi)
	movabs	$0x007265726f747365, %rsi	/* "estorer\0" */
	mov	%rsi, 8(%rdi)
	mov	%rax, 16(%rdi)
	mov	%r14, 24(%rdi)
1:
	notify_then_resume stub_ctx
	.org	PTIMER_STUB_CTX_OFF, 0xcc	/* fails to assemble if the stub grew past it */
stub_ctx:					/* where the context lies in the copy */

blob_start:
	cld					/* the thread may have DF set */
	lea	__blob_end(%rip), %rdi		/* struct ptimer_blob_args * */
	mov	(%rdi), %rsp			/* args->stack_top */
	and	$-16, %rsp			/* SysV alignment before the call */
	call	ptimer_blob_main
	notify_then_resume (__blob_end + PTIMER_RESUME_CTX_OFF)
	.size	_start, . - _start

	.section .note.GNU-stack, "", @progbits
