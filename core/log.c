// SPDX-License-Identifier: MIT
/* Diagnostics of the core (core/log.h). */
#include <stdarg.h>
#include <stdio.h>

#include "core/log.h"
#include "restorer/host/inject.h"

void (*ptimer_log_fn)(int level, const char *where, const char *msg);
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

/* The host loader's messages name no place of the core. */
static void log_blob(int level, const char *msg)
{
	if (level <= ptimer_verbosity && ptimer_log_fn)
		ptimer_log_fn(level, "restorer/host/inject.c", msg);
}

void ptimer_log_set(void (*fn)(int level, const char *where, const char *msg))
{
	ptimer_log_fn = fn;
	ptimer_blob_log_fn = fn ? log_blob : NULL;
}
