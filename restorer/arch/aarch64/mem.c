/* SPDX-License-Identifier: MIT */
/*
 * memset/memcpy for the freestanding blob on aarch64 (GCC may emit calls to
 * them for struct initialisation and copies even with -ffreestanding; GCC
 * manual, "Standards").  Plain byte loops: the Makefile builds the aarch64
 * blob with -fno-tree-loop-distribute-patterns, so that GCC cannot turn
 * them back into calls to themselves; and -mgeneral-regs-only keeps them
 * off the SIMD registers, which the blob never saves.
 */
#include <stddef.h>

void *memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;

	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

void *memcpy(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	while (n--)
		*d++ = *s++;
	return dst;
}
