// SPDX-License-Identifier: MIT
/* Error text, logging and clocks shared by the CLI and the CRIU plugin. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <time.h>

#include "core/ptimer.h"

int ptimer_errf(struct ptimer_err *err, int e, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return e > 0 ? -e : e;
}

static void log_to_stderr(int level, const char *where, const char *msg)
{
	static const char *const prefix[] = { "error", "warning", "info", "debug" };

	fprintf(stderr, "ptimer: %s: %s\n", prefix[level], msg);
}

void (*ptimer_log_fn)(int level, const char *where, const char *msg) = log_to_stderr;
int ptimer_verbosity = PTIMER_LOG_WARN;

void ptimer_log_at(int level, const char *file, int line, const char *fmt, ...)
{
	char msg[1024], where[256];
	va_list ap;

	if (level > ptimer_verbosity || !ptimer_log_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(where, sizeof(where), "%s:%d", file, line);
	ptimer_log_fn(level, where, msg);
}

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
