// SPDX-License-Identifier: MIT
/*
 * sigev_garbage ROLE DIR - SIGEV_NONE timers whose sigev_signo was left
 * uninitialised, for test/cases/garbage-signo.sh.
 *   setup: create three SIGEV_NONE timers with sigev_signo 65, -7 and 12345
 *     and a garbage sival each (the kernel keeps both verbatim,
 *     kernel/time/posix-timers.c good_sigevent()), arm the middle one for
 *     1000 s, then wait to be dumped.
 *   target: no timers; waits for ptimer restore.
 * Both write DIR/ROLE.pid, then DIR/ROLE.ready, and sleep until killed.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tst.h"

static const int signos[] = { 65, -7, 12345 };

int main(int argc, char **argv)
{

	if (argc != 3 || (strcmp(argv[1], "setup") && strcmp(argv[1], "target"))) {
		fprintf(stderr, "usage: %s setup|target DIR\n", argv[0]);
		return 2;
	}
	for (int i = 0; !strcmp(argv[1], "setup") && i < 3; i++) {
		struct sigevent ev;
		struct itimerspec its = { .it_value = { .tv_sec = 1000 } };
		timer_t tm;

		memset(&ev, 0xa5, sizeof(ev));	/* what an uninitialised stack holds */
		ev.sigev_notify = SIGEV_NONE;
		ev.sigev_signo = signos[i];
		if (timer_create(CLOCK_MONOTONIC, &ev, &tm)) {
			perror("sigev_garbage: timer_create");
			return 2;
		}
		if (i == 1 && timer_settime(tm, 0, &its, NULL)) {
			perror("sigev_garbage: timer_settime");
			return 2;
		}
	}
	tst_init(argv[1], argv[2], "");
	tst_ready();
	for (;;)
		pause();
}
