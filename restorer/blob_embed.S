/* SPDX-License-Identifier: MIT */
/*
 * A file built by the Makefile embedded in the host program as bytes,
 * EMBED_START .. EMBED_END (EMBED_BIN its path; all three passed by the
 * Makefile): the in-target blob (build/restorer/blob.bin, from
 * restorer/algo.c and restorer/arch/ARCH/: ptimer_blob_start, its length a
 * multiple of 4096, struct ptimer_blob_args right after it).
 */
	.section .rodata
	.balign	16
	.globl	EMBED_START
	.type	EMBED_START, @object
EMBED_START:
	.incbin	EMBED_BIN
	.globl	EMBED_END
	.type	EMBED_END, @object
EMBED_END:
	.size	EMBED_START, EMBED_END - EMBED_START

	.section .note.GNU-stack, "", @progbits
