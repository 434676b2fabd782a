/* SPDX-License-Identifier: MIT */
/*
 * test/lib/tst.h - the one library of ptimer's test programs (test/e2e/),
 * in the spirit of CRIU's zdtmtst: the role protocol test/lib/driver.sh and
 * the host scripts speak with every program, and the check lines of
 * test/lib/harness.sh ("PASS NAME", "FAIL NAME: WHY", "SKIP NAME: WHY",
 * "XFAIL NAME: WHY"; test/run.sh prints them as TAP 13).
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
 *   tst_check(OK, NAME, FMT, ...)   PASS TAG/NAME, or FAIL TAG/NAME: ...
 *   tst_skip, tst_xfail(NAME, FMT, ...), tst_note(FMT, ...) ("# ...")
 *   tst_done()                 the totals line; role criu: DIR/criu.done;
 *                              returns the exit status (1: a FAIL)
 * Errors of the protocol itself (a file that cannot be written) end the
 * program with status 2 and the reason on stderr.
 */
#ifndef PTIMER_TEST_TST_H
#define PTIMER_TEST_TST_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

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
void tst_skip(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tst_xfail(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tst_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tst_done(void);
/* how many FAIL lines so far */
int tst_failed(void);
/* the run's directory and role, as given to tst_init */
const char *tst_dir(void);
const char *tst_role(void);

#endif
