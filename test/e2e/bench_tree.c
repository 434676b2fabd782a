/* SPDX-License-Identifier: MIT */
/*
 * bench_tree - a process tree for the criu benchmarks (test/criu/suite.sh
 * bench): what a container looks like to criu, many processes, most of them
 * with few timers or none.
 *
 *   bench_tree NPROC NTIMERS DIR [NBARE]
 *	the first process forks NPROC - 1 children; every one of the NPROC
 *	but the last NBARE children (0 by default) creates NTIMERS
 *	SIGEV_SIGNAL (SIGUSR1, ignored) CLOCK_MONOTONIC timers armed 1000 s
 *	ahead with a 1000 s interval, so none fires while it is dumped and
 *	restored.  When all are ready the first writes DIR/pid and
 *	DIR/ready; then every process waits in pause().
 *
 * RLIMIT_SIGPENDING is raised first: every timer is charged to it (see
 * test/e2e/zdtm_timers.c).  The tree is killed from outside (its process
 * group: the caller starts it with setsid).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tst.h"

static int make_timers(long n)
{
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1 };
	struct itimerspec its = { .it_value = { 1000, 0 }, .it_interval = { 1000, 0 } };

	for (long i = 0; i < n; i++) {
		timer_t id;

		ev.sigev_value.sival_int = (int)i;
		if (timer_create(CLOCK_MONOTONIC, &ev, &id) || timer_settime(id, 0, &its, NULL)) {
			fprintf(stderr, "bench_tree: timer %ld of process %d: %s\n", i, getpid(), strerror(errno));
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	long nproc, ntimers, nbare = 0;
	int pfd[2];
	char buf[32];

	if ((argc != 4 && argc != 5) || (nproc = atol(argv[1])) < 1 || (ntimers = atol(argv[2])) < 0 ||
	    (argc == 5 && ((nbare = atol(argv[4])) < 0 || nbare >= nproc))) {
		fprintf(stderr, "usage: bench_tree NPROC NTIMERS DIR [NBARE]\n");
		return 2;
	}
	setrlimit(RLIMIT_SIGPENDING, &rl);
	signal(SIGUSR1, SIG_IGN);
	if (pipe(pfd))
		return 2;
	for (long i = 1; i < nproc; i++) {
		pid_t p = fork();

		if (p < 0) {
			fprintf(stderr, "bench_tree: fork %ld: %s\n", i, strerror(errno));
			return 2;
		}
		if (p == 0) {
			char ok = make_timers(i < nproc - nbare ? ntimers : 0) ? 'x' : 'y';

			close(pfd[0]);
			if (write(pfd[1], &ok, 1) != 1)
				_exit(2);
			close(pfd[1]);
			for (;;)
				pause();
		}
	}
	close(pfd[1]);
	if (make_timers(ntimers))
		return 3;
	for (long i = 1; i < nproc; i++) {
		char ok;

		if (read(pfd[0], &ok, 1) != 1 || ok != 'y') {
			fprintf(stderr, "bench_tree: a child failed to create its timers\n");
			return 3;
		}
	}
	close(pfd[0]);
	snprintf(buf, sizeof(buf), "%d\n", getpid());
	tst_init("", argv[3], "");
	tst_put("pid", "%s", buf);
	tst_put("ready", "ready\n");
	for (;;)
		pause();
}
