// SPDX-License-Identifier: MIT
/* Diagnostics of the core (core/log.h). */
#include <stdarg.h>
#include <stdio.h>

#include "core/log.h"
#include "restorer/host/inject.h"

void (*ptimer_log_fn)(int level, const char *msg);
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

static void log_blob(const char *msg)
{
	ptimer_log(PTIMER_LOG_ERROR, "%s", msg);
}

void ptimer_log_set(void (*fn)(int level, const char *msg))
{
	ptimer_log_fn = fn;
	ptimer_blob_log_fn = fn ? log_blob : NULL;
}
