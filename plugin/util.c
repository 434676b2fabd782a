// SPDX-License-Identifier: MIT
/* Error text, logging and clocks shared by the CLI and the CRIU plugin. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "plugin/ptimer.h"

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

static void log_to_stderr(int level, const char *msg)
{
	static const char *const prefix[] = { "error", "warning", "info", "debug" };

	fprintf(stderr, "ptimer: %s: %s\n", prefix[level], msg);
}

void (*ptimer_log_fn)(int level, const char *msg) = log_to_stderr;
int ptimer_verbosity = PTIMER_LOG_WARN;

void ptimer_log(int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (level > ptimer_verbosity || !ptimer_log_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ptimer_log_fn(level, msg);
}

uint64_t ptimer_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
