// SPDX-License-Identifier: MIT
/* Clocks and stop signals (core/util.h). */
#include <signal.h>
#include <time.h>

#include "core/util.h"

uint64_t ptimer_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

void ptimer_block_stop_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		sigaddset(&set, stop_signals[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

int ptimer_pending_stop_signal(void)
{
	sigset_t pending, blocked;

	if (sigpending(&pending) || sigprocmask(SIG_BLOCK, NULL, &blocked))
		return 0;
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		if (sigismember(&pending, stop_signals[i]) && sigismember(&blocked, stop_signals[i]))
			return stop_signals[i];
	return 0;
}

#ifdef PTIMER_FAULT_INJECT
#include <stdlib.h>
#include <string.h>

#include "core/fault.h"

bool ptimer_fault(const char *point)
{
	const char *want = getenv("PTIMER_FAULT");
	size_t n = strlen(point);

	/* a list: "a,b" */
	for (const char *at = want; at && *at; at = strchr(at, ',') ? strchr(at, ',') + 1 : NULL)
		if (!strncmp(at, point, n) && (at[n] == ',' || !at[n]))
			return true;
	return false;
}
#endif
