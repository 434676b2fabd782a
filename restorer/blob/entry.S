/* SPDX-License-Identifier: MIT */
/*
 * Entry of the in-target blob, at offset 0 of its code (restorer/abi.h).
 *
 * The host sets only the instruction pointer: every other register is the
 * stopped thread's, so nothing is passed in registers.  The arguments page
 * follows the code (__blob_end, from blob.lds); its first field is the top of
 * the blob's own stack, so the thread's stack is never touched.  When
 * ptimer_blob_main() returns, int3 hands control back to the host (compel_run_at
 * waits for the SIGTRAP); the loop keeps a stray resume from running on.
 */
	.section .text.entry, "ax", @progbits
	.globl	_start
	.type	_start, @function
_start:
	cld					/* the thread may have DF set */
	lea	__blob_end(%rip), %rdi		/* struct ptimer_blob_args * */
	mov	(%rdi), %rsp			/* args->stack_top */
	and	$-16, %rsp			/* SysV alignment before the call */
	call	ptimer_blob_main
1:	int3
	jmp	1b
	.size	_start, . - _start

	.section .note.GNU-stack, "", @progbits
