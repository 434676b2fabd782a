/* SPDX-License-Identifier: MIT */
/*
 * Minimal selftest-style reporting shared by ptimer's test programs: one line
 * per check, "PASS name", "FAIL name: what differed" or "SKIP name: reason".
 * test/run.sh counts these lines across all programs.
 */
#ifndef PTIMER_TEST_CHECK_H
#define PTIMER_TEST_CHECK_H

#include <stdio.h>

static int check_failed;

#define PASS(name) printf("PASS %s\n", (name))
#define SKIP(name, ...) do { printf("SKIP %s: ", (name)); printf(__VA_ARGS__); printf("\n"); } while (0)
#define FAIL(name, ...) do { check_failed++; printf("FAIL %s: ", (name)); printf(__VA_ARGS__); printf("\n"); } while (0)

/* CHECK(name, cond, fmt, ...): PASS when cond holds, else FAIL with the message. */
#define CHECK(name, cond, ...) do { if (cond) PASS(name); else FAIL(name, __VA_ARGS__); } while (0)

/* Exit status of a test program: 1 when any check failed. */
#define CHECK_EXIT() (check_failed ? 1 : 0)

#endif
