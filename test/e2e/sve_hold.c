// SPDX-License-Identifier: MIT
/*
 * sve_hold: a leader that holds live SVE state while ptimer works in it,
 * for the e2e case sve-state and the arm64 guests.
 *
 *   sve_hold DIR
 *
 * The leader sets z0 to 1, 2, ..., n in its n 64-bit lanes and p1 all true,
 * then spins without a syscall (a syscall would discard that state itself)
 * until SIGUSR1 reaches the second thread; then it sums z0 under p1 and
 * counts p1.  ptimer stopping the leader and running its syscalls in it
 * must leave both as they were: sum n(n+1)/2 and n active lanes, where a
 * lost SVE state leaves the low 128 bits only (sum 3) and no predicate.
 * One CLOCK_MONOTONIC SIGEV_NONE timer gives a dump something to read
 * inside the process.  Touches DIR/ready when spinning; prints one PASS or
 * FAIL line and exits 0 or 1 at the end; prints SKIP and exits 4 where the
 * CPU has no SVE (and everywhere but aarch64).
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tst.h"
#if defined(__aarch64__)
#include <sys/auxv.h>

#endif

#ifndef HWCAP_SVE
#define HWCAP_SVE	(1 << 22)	/* uapi asm/hwcap.h */
#endif

static volatile int stop;

static void *waiter(void *arg)
{
	sigset_t set;
	int sig;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigwait(&set, &sig);
	stop = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;
	sigset_t set;
	timer_t t;
	struct sigevent ev;
	uint64_t sum = 0, active = 0, n = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: sve_hold DIR\n");
		return 2;
	}
#if defined(__aarch64__)
	if (!(getauxval(AT_HWCAP) & HWCAP_SVE)) {
		printf("SKIP sve-state: this CPU has no SVE\n");
		return 4;
	}
#else
	printf("SKIP sve-state: SVE is aarch64's\n");
	return 4;
#endif
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_NONE;
	if (timer_create(CLOCK_MONOTONIC, &ev, &t) || pthread_create(&th, NULL, waiter, NULL)) {
		perror("sve_hold");
		return 1;
	}
	tst_init("", argv[1], "");
	tst_put("ready", "ready\n");
#if defined(__aarch64__)
	__asm__ __volatile__(
		".arch_extension sve\n\t"
		"index z0.d, #1, #1\n\t"
		"ptrue p1.d\n\t"
		"1:\n\t"
		"ldr w9, [%[stop]]\n\t"
		"cbz w9, 1b\n\t"
		"uaddv d2, p1, z0.d\n\t"
		"fmov %[sum], d2\n\t"
		"cntp %[active], p1, p1.d\n\t"
		"cntd %[n]\n\t"
		: [sum] "=r"(sum), [active] "=r"(active), [n] "=r"(n)
		: [stop] "r"(&stop)
		: "x9", "v0", "v2", "p1", "memory");
#endif
	pthread_join(th, NULL);
	if (sum == n * (n + 1) / 2 && active == n) {
		printf("PASS sve-state: z0 and p1 kept (%llu lanes, sum %llu)\n", (unsigned long long)n,
		       (unsigned long long)sum);
		return 0;
	}
	printf("FAIL sve-state: z0 sum %llu (want %llu), p1 %llu active lanes (want %llu)\n",
	       (unsigned long long)sum, (unsigned long long)(n * (n + 1) / 2), (unsigned long long)active,
	       (unsigned long long)n);
	return 1;
}
