/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics of the core.  The core does not print: it hands each message
 * to the function its caller installs (the CLI: stderr; the CRIU plugin:
 * criu's log; a test: a capture buffer).
 */
#ifndef PTIMER_CORE_LOG_H
#define PTIMER_CORE_LOG_H

enum { PTIMER_LOG_ERROR, PTIMER_LOG_WARN, PTIMER_LOG_INFO, PTIMER_LOG_DEBUG };

/*
 * The installed function (NULL: messages are dropped): one line, no
 * newline.  @where is "FILE:LINE" of the ptimer_log() call, which the
 * plugin puts into criu's "Error (FILE:LINE): " / "Warn  (FILE:LINE): " tags
 * (criu's pr_err/pr_warn in include/common/log.h or criu/include/log.h).
 */
extern void (*ptimer_log_fn)(int level, const char *where, const char *msg);
extern int ptimer_verbosity;	/* messages above this level are dropped */

/*
 * ptimer_log_set - install fn for the core's messages and the host loader's
 * (restorer/host/inject.h ptimer_blob_log_fn, logged as errors).
 */
void ptimer_log_set(void (*fn)(int level, const char *where, const char *msg));

/* ptimer_log - format and hand one message to ptimer_log_fn, with the
 * caller's file and line. */
void ptimer_log_at(int level, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define ptimer_log(level, ...) ptimer_log_at(level, __FILE__, __LINE__, __VA_ARGS__)

#endif
