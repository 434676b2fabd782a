// SPDX-License-Identifier: MIT
/*
 * thread_churn DIR - a process whose extra threads come and go in a tight
 * loop, for test/e2e.sh: a dump racing with thread exits must either write
 * a consistent image or fail naming a thread, never silently miss an exit.
 * The leader holds one timer aimed at itself (SIGEV_SIGNAL, SIGRTMIN,
 * 1000 s) so every image has something to check; each short-lived thread
 * creates and deletes nothing (its exit is the event).  Writes
 * DIR/churn.pid and DIR/churn.ready, then loops until killed.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tst.h"

static void *brief(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN };
	struct itimerspec its = { .it_value = { .tv_sec = 1000 } };
	timer_t tm;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	signal(SIGRTMIN, SIG_IGN);
	if (timer_create(CLOCK_MONOTONIC, &ev, &tm) || timer_settime(tm, 0, &its, NULL)) {
		perror("thread_churn: timer_create");
		return 2;
	}
	tst_init("churn", argv[1], "");
	tst_ready();
	for (;;) {
		pthread_t th[4];

		for (int i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, brief, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
	}
}
