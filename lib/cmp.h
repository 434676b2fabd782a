/* SPDX-License-Identifier: MIT */
/* qsort(3)/bsearch(3) comparisons shared by every layer. */
#ifndef PTIMER_LIB_CMP_H
#define PTIMER_LIB_CMP_H

/* ptimer_cmp_int - ascending order of int (int32_t, pid_t) elements. */
int ptimer_cmp_int(const void *a, const void *b);

#endif
