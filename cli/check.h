/* SPDX-License-Identifier: MIT */
/*
 * ptimer check: what this kernel and caller allow.
 */
#ifndef PTIMER_CLI_CHECK_H
#define PTIMER_CLI_CHECK_H


/* ptimer_check - print one line per capability of this kernel and caller
 * to stdout; returns 0 when dump and restore can work here, else 1. */
int ptimer_check(void);

#endif
