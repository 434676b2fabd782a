/* SPDX-License-Identifier: MIT */
/*
 * Selftest-style reporting shared by ptimer's test programs, in the format
 * of test/lib/harness.sh: one line per check, "PASS name", "FAIL name: what
 * differed" or "SKIP name: reason", and at the end (CHECK_EXIT) the totals
 * line "# PROGRAM: N passed, N failed, N skipped", as kselftest's
 * ksft_print_cnts() closes a run.  The unit programs run their tests with
 * CHECK_RUN: a plan line "1..N" first, "ok K NAME" after each test, and a
 * FAIL "plan" when fewer ran than were planned (kselftest's "Planned tests
 * != run tests").  test/run.sh counts the verdict lines and checks the
 * totals line against them: a program that stops before its end prints
 * none.  Programs whose lines are part of a case's output (zdtm_timers'
 * roles) print no plan: one stream has one plan.
 */
#ifndef PTIMER_TEST_CHECK_H
#define PTIMER_TEST_CHECK_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int check_failed, check_passed, check_skipped;

#define PASS(name) do { check_passed++; printf("PASS %s\n", (name)); } while (0)
#define SKIP(name, ...) do { check_skipped++; printf("SKIP %s: ", (name)); printf(__VA_ARGS__); printf("\n"); } while (0)
#define FAIL(name, ...) do { check_failed++; printf("FAIL %s: ", (name)); printf(__VA_ARGS__); printf("\n"); } while (0)

/* CHECK(name, cond, fmt, ...): PASS when cond holds, else FAIL with the message. */
#define CHECK(name, cond, ...) do { if (cond) PASS(name); else FAIL(name, __VA_ARGS__); } while (0)

/* The plan (CHECK_RUN): tests planned, tests that ran to their end, the one
 * running (its index, or -1), whether the totals line was printed. */
static int check_planned = -1, check_ran, check_running = -1, check_closed;
static pid_t check_pid;
static const char *check_running_name;

/* The totals line; the exit status of a test program: 1 when any check failed.
 * With a plan, first a FAIL "plan" when fewer tests ran than were planned. */
static inline int check_exit(void)
{
	if (check_planned >= 0 && check_ran != check_planned) {
		if (check_running >= 0)
			FAIL("plan", "%d tests planned, %d ran: the program ended inside test %d (%s)", check_planned,
			     check_ran, check_running + 1, check_running_name);
		else
			FAIL("plan", "%d tests planned, %d ran", check_planned, check_ran);
	}
	check_closed = 1;
	printf("# %s: %d passed, %d failed, %d skipped\n", program_invocation_short_name, check_passed,
	       check_failed, check_skipped);
	fflush(stdout);
	return check_failed ? 1 : 0;
}
#define CHECK_EXIT() check_exit()

/* A program that exits without CHECK_EXIT() (an exit() inside a test) still
 * closes its run: the plan check and the totals line, and exit status 1. */
static inline void check_atexit(void)
{
	if (getpid() != check_pid)
		return;		/* a forked child's exit: not the program's */
	if (!check_closed && check_exit())
		_exit(1);	/* the status exit() was given would hide the FAIL */
}

/* A test of a program run by CHECK_RUN: a name and a function of its checks. */
struct check_test {
	const char *name;
	void (*fn)(void);
};
#define CHECK_TEST(fn) { #fn, fn }

/*
 * CHECK_RUN(CHECK_TEST(a), CHECK_TEST(b), ...): as kselftest runs a
 * program's tests, the plan "1..N" first, then each test's PASS/FAIL/SKIP
 * lines followed by "ok K NAME" or "not ok K NAME" (a FAIL in it), then the
 * totals (check_exit: a FAIL "plan" when fewer ran than planned, an exit()
 * inside a test included).  Its value is the program's exit status.
 */
static inline int check_run(const struct check_test *t, int n)
{
	check_planned = n;
	check_pid = getpid();
	atexit(check_atexit);
	printf("1..%d\n", n);
	for (int i = 0; i < n; i++) {
		int failed = check_failed;

		check_running = i;
		check_running_name = t[i].name;
		fflush(stdout);
		t[i].fn();
		check_running = -1;
		check_ran++;
		printf("%sok %d %s\n", check_failed == failed ? "" : "not ", i + 1, t[i].name);
	}
	return check_exit();
}
#define CHECK_RUN(...) check_run((const struct check_test[]){ __VA_ARGS__ }, \
	(int)(sizeof((const struct check_test[]){ __VA_ARGS__ }) / sizeof(struct check_test)))

#endif
