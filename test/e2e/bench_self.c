/* SPDX-License-Identifier: MIT */
/*
 * bench_self - the baseline for test/bench.sh: a process that creates its
 * own timers, the way a program would if it could choose their IDs.
 *
 *   bench_self create N STRIDE DIR
 *	with prctl(PR_TIMER_CREATE_RESTORE_IDS, ON), create N SIGEV_NONE
 *	CLOCK_MONOTONIC timers with IDs 0, STRIDE, 2*STRIDE... and arm each
 *	(1000 s one-shot); write the wall time of that, in seconds, to
 *	DIR/self.time; then time one timer_gettime of every timer, three
 *	times, and write the median in seconds to DIR/gettime.time (the
 *	kernel's own cost of reading the timers' state, which any dumper pays
 *	once: ptimer's blob and criu's parasite call it for each timer); then
 *	DIR/pid and DIR/ready, and wait to be dumped.
 *   bench_self target DIR
 *	an empty process to restore into: DIR/pid, DIR/ready, wait.
 *   bench_self aimed N thread|leader DIR
 *	N SIGEV_THREAD_ID CLOCK_MONOTONIC timers (1000 s one-shot, SIGRTMIN+1,
 *	handled) aimed at a second thread, which `ptimer dump` looks at
 *	(core/aim_probe.c), or at the leader, which it does not; DIR/pid,
 *	DIR/ready, wait.
 *
 * Both raise RLIMIT_SIGPENDING first: every timer is charged to it, SIGEV_NONE
 * included (see test/e2e/zdtm_timers.c).  Exit 4: no exact-ID prctl here.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tst.h"

#define PR_TIMER_CREATE_RESTORE_IDS	77

static void ignore(int sig)
{
}

static void *idle(void *arg)
{
	*(volatile pid_t *)arg = (pid_t)syscall(SYS_gettid);
	for (;;)
		pause();
	return NULL;
}

static void ready_and_wait(const char *dir);

/* bench_self aimed N thread|leader DIR */
static int aimed(long n, int at_thread, const char *dir)
{
	struct sigaction sa = { .sa_handler = ignore };
	volatile pid_t tid = 0;
	pthread_t th;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN + 1, &sa, NULL);
	if (pthread_create(&th, NULL, idle, (void *)&tid))
		return 2;
	while (!tid)
		usleep(100);
	for (long i = 0; i < n; i++) {
		struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGRTMIN + 1 };
		struct itimerspec its = { .it_value = { 1000, 0 } };
		int32_t id;

		ev._sigev_un._tid = at_thread ? tid : getpid();
		if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &id) ||
		    syscall(SYS_timer_settime, id, 0, &its, NULL)) {
			fprintf(stderr, "bench_self: timer %ld: %s\n", i, strerror(errno));
			return 2;
		}
	}
	ready_and_wait(dir);
	return 0;
}

static void ready_and_wait(const char *dir)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d\n", getpid());
	tst_init("", dir, "");
	tst_put("pid", "%s", buf);
	tst_put("ready", "ready\n");
	for (;;)
		pause();
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	setrlimit(RLIMIT_SIGPENDING, &rl);
	if (argc == 3 && !strcmp(argv[1], "target"))
		ready_and_wait(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "aimed"))
		return aimed(atol(argv[2]), !strcmp(argv[3], "thread"), argv[4]);
	if (argc != 5 || strcmp(argv[1], "create")) {
		fprintf(stderr, "usage: bench_self create N STRIDE DIR | bench_self target DIR | bench_self aimed N thread|leader DIR\n");
		return 2;
	}

	long n = atol(argv[2]), stride = atol(argv[3]);
	struct sigevent ev = { .sigev_notify = SIGEV_NONE };
	struct itimerspec its = { .it_value = { 1000, 0 } };
	char buf[64];
	double t0 = now();

	if (prctl(PR_TIMER_CREATE_RESTORE_IDS, 1, 0, 0, 0)) {
		fprintf(stderr, "bench_self: prctl(PR_TIMER_CREATE_RESTORE_IDS): %s\n", strerror(errno));
		return 4;
	}
	for (long i = 0; i < n; i++) {
		int32_t id = (int32_t)(i * stride);

		if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &id) ||
		    syscall(SYS_timer_settime, id, 0, &its, NULL)) {
			fprintf(stderr, "bench_self: timer %ld (id %ld): %s\n", i, i * stride,
				strerror(errno));
			return 2;
		}
	}
	prctl(PR_TIMER_CREATE_RESTORE_IDS, 0, 0, 0, 0);
	snprintf(buf, sizeof(buf), "%.6f\n", now() - t0);
	tst_init("", argv[4], "");
	tst_put("self.time", "%s", buf);

	double g[3];

	for (int r = 0; r < 3; r++) {
		struct itimerspec cur;

		t0 = now();
		for (long i = 0; i < n; i++)
			if (syscall(SYS_timer_gettime, (int32_t)(i * stride), &cur)) {
				fprintf(stderr, "bench_self: timer_gettime(%ld): %s\n", i * stride, strerror(errno));
				return 2;
			}
		g[r] = now() - t0;
	}
	/* median of three */
	double med = g[0] > g[1] ? (g[1] > g[2] ? g[1] : (g[0] > g[2] ? g[2] : g[0]))
				 : (g[0] > g[2] ? g[0] : (g[1] > g[2] ? g[2] : g[1]));
	snprintf(buf, sizeof(buf), "%.6f\n", med);
	tst_put("gettime.time", "%s", buf);
	ready_and_wait(argv[4]);
}
