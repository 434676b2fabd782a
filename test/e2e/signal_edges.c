// SPDX-License-Identifier: MIT
/*
 * signal_edges ROLE DIR - timers at the two edges of the real-time signal
 * range (case signal-edges): E0 on SIGRTMAX with sival_int 0x5a5a, E1 on
 * SIGRTMIN (glibc's: the first it leaves to programs) with a sival that is
 * a pointer into this process, both periodic every 50 ms on
 * CLOCK_MONOTONIC, their signals blocked (taken with sigtimedwait).
 *
 *   setup, criu: make E0 and E1, write DIR/ids ("ID0 ID1 SIVAL1"), then
 *     ready (test/lib/tst.h);
 *   verify: a fresh process, the signals blocked, no timers, for a
 *     standalone restore of setup's image.
 * Once DIR/restored exists: each timer delivers its own signal, with its
 * si_timerid and its sival as at setup, within 2 s; what was queued before
 * the restore is drained first.  Written with the test library alone: a
 * program and its case line (test/cases/signal-edges, LIST) are all a new
 * case needs.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tst.h"

static int marker;

static int make(int signo, union sigval v, timer_t *t)
{
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = signo, .sigev_value = v };
	struct itimerspec its = { .it_value = { 0, 50000000 }, .it_interval = { 0, 50000000 } };

	return timer_create(CLOCK_MONOTONIC, &ev, t) || timer_settime(*t, 0, &its, NULL);
}

int main(int argc, char **argv)
{
	const char *role = argc == 3 ? argv[1] : "";
	int id0 = -1, id1 = -1, got0 = 0, got1 = 0, bad0 = 0, bad1 = 0;
	unsigned long long sival1 = 0;
	struct timespec t0, now;
	char path[4096];
	sigset_t set;
	FILE *f;

	if (strcmp(role, "setup") && strcmp(role, "verify") && strcmp(role, "criu")) {
		fprintf(stderr, "usage: signal_edges setup|verify|criu DIR\n");
		return 2;
	}
	tst_init(role, argv[2], "signal-edges");
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigaddset(&set, SIGRTMAX);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (strcmp(role, "verify")) {
		timer_t t0_, t1_;

		if (make(SIGRTMAX, (union sigval){ .sival_int = 0x5a5a }, &t0_) ||
		    make(SIGRTMIN, (union sigval){ .sival_ptr = &marker }, &t1_)) {
			perror("signal_edges: timer_create");
			return 2;
		}
		tst_put("ids", "%d %d %llu\n", (int)(intptr_t)t0_, (int)(intptr_t)t1_,
			(unsigned long long)(uintptr_t)&marker);
	}
	tst_ready();
	if (!strcmp(role, "setup"))
		for (;;)
			pause();
	tst_wait_restored(NULL, 0);
	snprintf(path, sizeof(path), "%s/ids", argv[2]);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%d %d %llu", &id0, &id1, &sival1) != 3) {
		tst_check(false, "ids", "cannot read %s", path);
		return tst_done();
	}
	fclose(f);
	tst_plan(2);	/* a check of each timer */
	/* what was queued before the restore, then 2 s of fresh expiries */
	while (sigtimedwait(&set, NULL, &(struct timespec){ 0, 0 }) > 0)
		;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		siginfo_t si;

		if (sigtimedwait(&set, &si, &(struct timespec){ 0, 100000000 }) < 0)
			goto next;
		if (si.si_code != SI_TIMER)
			goto next;
		if (si.si_signo == SIGRTMAX) {
			got0++;
			bad0 += si.si_timerid != id0 || si.si_value.sival_int != 0x5a5a;
		} else {
			got1++;
			bad1 += si.si_timerid != id1 || (unsigned long long)(uintptr_t)si.si_value.sival_ptr != sival1;
		}
next:
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((got0 < 3 || got1 < 3) && now.tv_sec - t0.tv_sec < 2);
	tst_check(got0 >= 3 && !bad0, "sigrtmax-own-timer",
		  "%d SIGRTMAX (%d) deliveries, %d not from timer %d with sival 0x5a5a", got0, SIGRTMAX, bad0, id0);
	tst_check(got1 >= 3 && !bad1, "sigrtmin-pointer-sival",
		  "%d SIGRTMIN (%d) deliveries, %d not from timer %d with sival %#llx", got1, SIGRTMIN, bad1, id1,
		  sival1);
	return tst_done();
}
