/* SPDX-License-Identifier: MIT */
/*
 * Selftest-style reporting shared by ptimer's test programs, in the format
 * of test/lib/harness.sh: one line per check, "PASS name", "FAIL name: what
 * differed" or "SKIP name: reason", and at the end (CHECK_EXIT) the totals
 * line "# PROGRAM: N passed, N failed, N skipped", as kselftest's
 * ksft_print_cnts() closes a run.  test/run.sh counts the verdict lines and
 * checks the totals line against them: a program that stops before its end
 * prints none.
 */
#ifndef PTIMER_TEST_CHECK_H
#define PTIMER_TEST_CHECK_H

#include <errno.h>
#include <stdio.h>

static int check_failed, check_passed, check_skipped;

#define PASS(name) do { check_passed++; printf("PASS %s\n", (name)); } while (0)
#define SKIP(name, ...) do { check_skipped++; printf("SKIP %s: ", (name)); printf(__VA_ARGS__); printf("\n"); } while (0)
#define FAIL(name, ...) do { check_failed++; printf("FAIL %s: ", (name)); printf(__VA_ARGS__); printf("\n"); } while (0)

/* CHECK(name, cond, fmt, ...): PASS when cond holds, else FAIL with the message. */
#define CHECK(name, cond, ...) do { if (cond) PASS(name); else FAIL(name, __VA_ARGS__); } while (0)

/* The totals line; the exit status of a test program: 1 when any check failed. */
static inline int check_exit(void)
{
	printf("# %s: %d passed, %d failed, %d skipped\n", program_invocation_short_name, check_passed,
	       check_failed, check_skipped);
	fflush(stdout);
	return check_failed ? 1 : 0;
}
#define CHECK_EXIT() check_exit()

#endif
