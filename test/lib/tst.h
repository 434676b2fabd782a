/* SPDX-License-Identifier: MIT */
/*
 * test/lib/tst.h - the one library of ptimer's test programs, the unit
 * programs (test/unit/) and the end-to-end ones (test/e2e/), in the spirit
 * of CRIU's zdtmtst and kselftest: the role protocol test/lib/driver.sh and
 * the host scripts speak with every end-to-end program, and the check lines
 * of test/lib/harness.sh ("PASS NAME", "FAIL NAME: WHY", "SKIP NAME: WHY",
 * "XFAIL NAME: WHY"; test/run.sh prints them as TAP 13), counted once and
 * closed by the totals line "# PROGRAM: N passed, N failed, N skipped[, N
 * xfail]" (kselftest's ksft_print_cnts()).  test/run.sh checks the totals
 * line against the check lines: a program that stops before its end prints
 * none.
 *
 *   tst_init(ROLE, DIR, TAG)   this run's role (setup, verify, criu, ...),
 *                              directory and check-name prefix ("" none)
 *   tst_put(NAME, FMT, ...)    DIR/NAME written whole: a temporary file,
 *                              renamed (a reader never sees half of it)
 *   tst_ready()                DIR/ROLE.pid (this process as the mounted
 *                              /proc sees it: a pid namespace's pid 1 may
 *                              run under its parent's /proc), DIR/ROLE.tids
 *                              (its threads, the same view), DIR/ROLE.ready
 *   tst_skip_all(FMT, ...)     before ready: this case cannot run here
 *                              (the kernel lacks something); the reason on
 *                              stderr, exit 4, which the driver takes for
 *                              a SKIP
 *   tst_wait(NAME, POLL, S)    until DIR/NAME exists (S seconds, 0: no
 *                              limit), POLL() every 10 ms (NULL: none)
 *   tst_wait_restored(POLL, S) tst_wait("restored", POLL, S); then, role
 *                              criu, the check lines go to DIR/criu.result;
 *                              false when it did not appear in time
 *   tst_thread_gone(TID)       after pthread_join(): until the kernel has
 *                              released thread TID (gettid() of it), up
 *                              to 10 s; pthread_join returns at the
 *                              thread's CLONE_CHILD_CLEARTID wake, before
 *                              release_task() unhashes it, and until then
 *                              /proc lists it and its CPU clock's timers
 *                              still read as armed (exit 2 on timeout)
 *   tst_sleep_with(FN)         the 10 ms sleeps of tst_wait made by FN
 *                              (a program that checks its registers
 *                              across the wait: dead_clock.c)
 *   tst_out(F)                 the check lines go to F (stdout at first;
 *                              a probe's own file); returns the previous
 *
 * The check lines, each counted (one set of counters, one printer):
 *   tst_check(OK, NAME, FMT, ...)   PASS TAG/NAME: ..., or FAIL TAG/NAME: ...
 *   tst_pass(NAME)             PASS TAG/NAME (no reason)
 *   tst_fail, tst_skip, tst_xfail(NAME, FMT, ...)   FAIL, SKIP, XFAIL
 *                              TAG/NAME: ...
 *   tst_note(FMT, ...)         "# ...", not a check
 *   tst_plan(N)                this program prints N check lines (PASS,
 *                              FAIL, SKIP, XFAIL; every one it prints,
 *                              tst_out's files' included, tst_done's own
 *                              not): tst_done() adds FAIL TAG/plan ("N
 *                              checks planned, M printed") when it printed
 *                              another number, so that a program which
 *                              silently leaves checks out (or repeats them)
 *                              fails.  Call it once the number is known
 *                              (it may depend on the role and the
 *                              arguments, not on what the checks find),
 *                              before the checks; a later call replaces
 *                              the number.  From then on the program's
 *                              exit (exit() or a return from main) without
 *                              tst_done() runs it, as after tst_run: the
 *                              plan's FAIL, the totals, status 1.
 *   tst_done()                 the plan's verdicts (tst_plan, tst_run),
 *                              then the totals line on stdout; role criu:
 *                              DIR/criu.done ("pass" or "fail"); returns
 *                              the exit status (1: a FAIL)
 *   tst_failed()               how many FAIL lines so far
 *
 * The unit programs' tests, as kselftest runs a program's tests:
 *   tst_run(T, N)              the plan "1..N" on stdout, then each test
 *                              T[i].fn() (its check lines) followed by "ok
 *                              K NAME" or "not ok K NAME" (a FAIL in it),
 *                              then tst_done(), whose value it returns: a
 *                              FAIL "plan" first when fewer tests ran than
 *                              were planned ("N tests planned, M ran",
 *                              kselftest's "Planned tests != run tests"),
 *                              an exit() inside a test included: from
 *                              tst_run on, an exit without tst_done() runs
 *                              it (the plan's FAIL and the totals, then
 *                              _exit(1) when anything failed; a forked
 *                              child's exit does not)
 * and their short forms (the macros below): PASS(NAME), FAIL(NAME, FMT,
 * ...), SKIP(NAME, FMT, ...), CHECK(NAME, COND, FMT, ...) (PASS when COND
 * holds, else FAIL with the message, its arguments evaluated only then),
 * CHECK_RUN(CHECK_TEST(a), CHECK_TEST(b), ...) (tst_run of the functions
 * a, b, ... named after themselves) and CHECK_EXIT() (tst_done()).
 * Programs whose lines are part of a case's output (zdtm_timers' roles)
 * print no "1..N" plan: one stream has one plan.
 *
 * Errors of the protocol itself (a file that cannot be written) end the
 * program with status 2 and the reason on stderr.
 */
#ifndef PTIMER_TEST_TST_H
#define PTIMER_TEST_TST_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

/* struct sigevent's thread field (glibc before 2.35 names it only
 * _sigev_un._tid) and SIGEV_THREAD_ID (uapi asm-generic/siginfo.h), for
 * the programs that aim timers at threads */
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif
#ifndef SIGEV_THREAD_ID
#define SIGEV_THREAD_ID 4
#endif

void tst_init(const char *role, const char *dir, const char *tag);
void tst_put(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tst_ready(void);
void tst_skip_all(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
bool tst_wait(const char *name, void (*poll)(void), int timeout_s);
void tst_sleep_with(void (*fn)(const struct timespec *ts));
void tst_thread_gone(int tid);
FILE *tst_out(FILE *f);
bool tst_wait_restored(void (*poll)(void), int timeout_s);
void tst_check(bool ok, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void tst_pass(const char *name);
void tst_fail(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tst_skip(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tst_xfail(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tst_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tst_plan(int n);
int tst_done(void);
/* how many FAIL lines so far */
int tst_failed(void);
/* the run's directory and role, as given to tst_init */
const char *tst_dir(void);
const char *tst_role(void);

/* A test of a program run by tst_run: a name and a function of its checks. */
struct tst_test {
	const char *name;
	void (*fn)(void);
};
int tst_run(const struct tst_test *t, int n);

/* The unit programs' short forms (see above). */
#define PASS(name) tst_pass(name)
#define FAIL(name, ...) tst_fail((name), __VA_ARGS__)
#define SKIP(name, ...) tst_skip((name), __VA_ARGS__)
#define CHECK(name, cond, ...) do { if (cond) tst_pass(name); else tst_fail((name), __VA_ARGS__); } while (0)
#define CHECK_TEST(fn) { #fn, fn }
#define CHECK_RUN(...) tst_run((const struct tst_test[]){ __VA_ARGS__ }, \
	(int)(sizeof((const struct tst_test[]){ __VA_ARGS__ }) / sizeof(struct tst_test)))
#define CHECK_EXIT() tst_done()

#endif
