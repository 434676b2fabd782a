/* SPDX-License-Identifier: MIT */
/*
 * The in-target blob (build/restorer/blob.bin, from restorer/algo.c and
 * restorer/arch/ARCH/) embedded in the host program as bytes:
 * ptimer_blob_start .. ptimer_blob_end.  Its length is a multiple of 4096;
 * struct ptimer_blob_args goes right after it.
 * BLOB_BIN is the path of blob.bin, passed by the Makefile.
 */
	.section .rodata
	.globl	ptimer_blob_start
	.type	ptimer_blob_start, @object
ptimer_blob_start:
	.incbin	BLOB_BIN
	.globl	ptimer_blob_end
	.type	ptimer_blob_end, @object
ptimer_blob_end:
	.size	ptimer_blob_start, ptimer_blob_end - ptimer_blob_start

	.section .note.GNU-stack, "", @progbits
