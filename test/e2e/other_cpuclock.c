// SPDX-License-Identifier: MIT
/*
 * other_cpuclock DIR - a process holding a POSIX timer on another process's
 * CPU clock (clock_getcpuclockid(child)), for test/e2e.sh: dump must refuse
 * it naming that pid, since restore cannot recreate a clock of a process
 * that is not migrated along.  Forks a child that sleeps, creates the timer
 * (SIGEV_NONE, 1000 s), writes DIR/other.pid ("PID CHILD\n") and
 * DIR/other.ready, then waits to be killed (the child dies with it:
 * PR_SET_PDEATHSIG).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tst.h"

int main(int argc, char **argv)
{
	struct sigevent ev = { .sigev_notify = SIGEV_NONE };
	struct itimerspec its = { .it_value = { .tv_sec = 1000 } };
	clockid_t clk;
	timer_t tm;
	pid_t child;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	child = fork();
	if (child < 0)
		return 2;
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	if (clock_getcpuclockid(child, &clk) || timer_create(clk, &ev, &tm) || timer_settime(tm, 0, &its, NULL)) {
		perror("other_cpuclock: timer on the child's CPU clock");
		kill(child, SIGKILL);
		return 2;
	}
	/* other.pid holds the child too: written with the library, not tst_ready */
	tst_init("other", argv[1], "");
	tst_put("other.pid", "%d %d\n", getpid(), child);
	tst_put("other.ready", "ready\n");
	for (;;)
		pause();
}
