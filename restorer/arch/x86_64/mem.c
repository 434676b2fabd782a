/* SPDX-License-Identifier: MIT */
/*
 * memset/memcpy for the freestanding blob.  GCC may emit calls to them for
 * struct initialisation and copies even with -ffreestanding (GCC manual,
 * "Standards": the freestanding environment must provide memcpy, memmove,
 * memset and memcmp).  Written with rep stosb/movsb so the compiler cannot
 * turn them back into calls to themselves.
 */
#include <stddef.h>

void *memset(void *dst, int c, size_t n)
{
	void *d = dst;

	__asm__ __volatile__ ("rep stosb"
		: "+D"(d), "+c"(n)
		: "a"(c)
		: "memory");
	return dst;
}

void *memcpy(void *dst, const void *src, size_t n)
{
	void *d = dst;

	__asm__ __volatile__ ("rep movsb"
		: "+D"(d), "+S"(src), "+c"(n)
		:
		: "memory");
	return dst;
}
