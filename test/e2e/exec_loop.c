// SPDX-License-Identifier: MIT
/*
 * exec_loop DIR [N] - a process that execs itself again and again, for
 * test/e2e.sh: a dump racing with exec must either write a consistent image
 * (the one timer each program creates, SIGEV_SIGNAL SIGRTMIN, aimed
 * at the process; its ID grows: the counter survives exec) or fail in one
 * line, leaving nothing.  The first program
 * writes DIR/exec.pid and DIR/exec.ready; each then creates its timer,
 * spins about 2 ms and execs /proc/self/exe with N + 1.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tst.h"

int main(int argc, char **argv)
{
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN };
	struct itimerspec its = { .it_value = { .tv_sec = 1000 } };
	struct timespec t0, t;
	char next[32];
	long n = argc > 2 ? atol(argv[2]) : 0;
	timer_t tm;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR [N]\n", argv[0]);
		return 2;
	}
	signal(SIGRTMIN, SIG_IGN);
	if (timer_create(CLOCK_MONOTONIC, &ev, &tm) || timer_settime(tm, 0, &its, NULL)) {
		perror("exec_loop: timer_create");
		return 2;
	}
	if (n == 0) {
		tst_init("exec", argv[1], "");
		tst_ready();
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 2000000L);
	snprintf(next, sizeof(next), "%ld", n + 1);
	execl("/proc/self/exe", argv[0], argv[1], next, (char *)NULL);
	perror("exec_loop: exec");
	return 2;
}
