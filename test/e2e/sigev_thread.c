// SPDX-License-Identifier: MIT
/*
 * sigev_thread: a program with glibc SIGEV_THREAD timers, for the e2e case
 * sigev-thread.
 *
 *   sigev_thread timers|none|usr2|usr2-blocked|criu DIR
 *     timers: one periodic SIGEV_THREAD timer (every 10 ms) whose callback
 *     counts; glibc runs the callback from its helper thread, which the
 *     kernel sees as SIGEV_THREAD_ID + signal 32.  none: the same program
 *     with no timers (a restore target).  usr2: a target that neither
 *     handles nor blocks SIGUSR2; usr2-blocked: one whose threads block it.
 *     criu: timers, then DIR/criu.pid and DIR/criu.ready; once DIR/restored
 *     appears (criu dumped and restored it) the callbacks must run on: at
 *     least 10 in 300 ms (one every 10 ms); the line to DIR/criu.result,
 *     then DIR/criu.done.
 * Writes DIR/ready once set up (for timers: after the callback ran), and on
 * SIGUSR1 writes DIR/count with the callbacks run so far.
 * Signals 32 and 33 (glibc's own) start at SIG_DFL, as in a program started
 * from a shell: glibc's posix_spawn (make 4.3 runs its recipes with it)
 * leaves them SIG_IGN in the child, and an ignored disposition survives
 * exec, so under `make check` they would be inherited ignored.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tst.h"

static volatile int calls;
static volatile sig_atomic_t asked;
static const char *dir;

static void callback(union sigval v)
{
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
}

static void on_usr1(int sig)
{
	asked = 1;
}

static void *idle(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	const char *mode = argc == 3 ? argv[1] : "";
	pthread_t th;

	if (strcmp(mode, "timers") && strcmp(mode, "none") && strcmp(mode, "usr2") &&
	    strcmp(mode, "usr2-blocked") && strcmp(mode, "criu")) {
		fprintf(stderr, "usage: sigev_thread timers|none|usr2|usr2-blocked|criu DIR\n");
		return 2;
	}
	dir = argv[2];
	tst_init(!strcmp(mode, "criu") ? "criu" : mode, dir, "sigev-thread");
	/* glibc's sigaction() refuses its internal signals: the raw call
	 * (struct kernel_sigaction {handler, flags, restorer, mask}) */
	for (int s = 32; s <= 33; s++) {
		unsigned long dfl[4] = { 0 };	/* SIG_DFL, no flags, no restorer, empty mask */

		syscall(SYS_rt_sigaction, s, dfl, NULL, 8);
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	if (!strcmp(mode, "usr2-blocked")) {
		sigset_t s;

		sigemptyset(&s);
		sigaddset(&s, SIGUSR2);
		pthread_sigmask(SIG_BLOCK, &s, NULL);	/* inherited by the second thread */
	}
	if (pthread_create(&th, NULL, idle, NULL)) {
		fprintf(stderr, "sigev_thread: pthread_create failed\n");
		return 1;
	}
	if (!strcmp(mode, "timers") || !strcmp(mode, "criu")) {
		struct sigevent sev = { .sigev_notify = SIGEV_THREAD, .sigev_notify_function = callback };
		struct itimerspec its = { .it_value = { 0, 10000000 }, .it_interval = { 0, 10000000 } };
		timer_t t;

		if (timer_create(CLOCK_MONOTONIC, &sev, &t) || timer_settime(t, 0, &its, NULL)) {
			fprintf(stderr, "sigev_thread: timer_create/settime: %s\n", strerror(errno));
			return 1;
		}
		while (__atomic_load_n(&calls, __ATOMIC_RELAXED) < 3)
			usleep(1000);
	}
	if (!strcmp(mode, "criu")) {
		int c1, c2;

		tst_ready();
		tst_wait_restored(NULL, 0);
		tst_plan(1);
		c1 = __atomic_load_n(&calls, __ATOMIC_RELAXED);
		usleep(300000);
		c2 = __atomic_load_n(&calls, __ATOMIC_RELAXED);
		tst_check(c2 - c1 >= 10, "callbacks-run-on", "%d callbacks in 300 ms after the restore (want >= 10)",
			  c2 - c1);
		return tst_done();
	}
	tst_put("ready", "1\n");
	for (;;) {
		pause();
		if (asked) {
			asked = 0;
			tst_put("count", "%d\n", __atomic_load_n(&calls, __ATOMIC_RELAXED));
		}
	}
}
