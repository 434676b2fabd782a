// SPDX-License-Identifier: MIT
/*
 * idle_timers: a two-thread process that sleeps, for the e2e cases
 * exited-leader and stopped-process.
 *
 *   idle_timers leader|exited DIR [timers|none|N]
 *     leader: both threads sleep; exited: the leader calls pthread_exit()
 *     and the second thread sleeps on (the process lives, its leader is a
 *     zombie).  timers (default): a CLOCK_MONOTONIC SIGEV_NONE timer armed
 *     1000 s with a 5 s interval and a disarmed CLOCK_REALTIME one; none:
 *     no timers (a restore target); N: N disarmed SIGEV_NONE timers on
 *     CLOCK_MONOTONIC after those two (IDs 2..N+1).
 * Touches DIR/ready when set up.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tst.h"

static void *sleeper(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };
	struct itimerspec its = { .it_value = { 1000, 0 }, .it_interval = { 5, 0 } };
	pthread_t th;
	timer_t t1, t2;

	if (argc < 3 || (strcmp(argv[1], "leader") && strcmp(argv[1], "exited"))) {
		fprintf(stderr, "usage: idle_timers leader|exited DIR [timers|none]\n");
		return 2;
	}
	if ((argc < 4 || strcmp(argv[3], "none")) &&
	    (timer_create(CLOCK_MONOTONIC, &sev, &t1) || timer_create(CLOCK_REALTIME, &sev, &t2) ||
	     timer_settime(t1, 0, &its, NULL))) {
		perror("timer_create");
		return 1;
	}
	if (argc >= 4 && atoi(argv[3]) > 0) {
		for (int i = atoi(argv[3]); i > 0; i--)
			if (timer_create(CLOCK_MONOTONIC, &sev, &t2)) {
				perror("timer_create");
				return 1;
			}
	}
	if (pthread_create(&th, NULL, sleeper, NULL))
		return 1;
	tst_init(argv[1], argv[2], "");
	tst_put("ready", "ready\n");
	if (!strcmp(argv[1], "exited"))
		pthread_exit(NULL);
	sleeper(NULL);
	return 0;
}
