// SPDX-License-Identifier: MIT
/* qsort(3)/bsearch(3) comparisons (lib/cmp.h). */
#include "lib/cmp.h"

int ptimer_cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}
