/* SPDX-License-Identifier: MIT */
/*
 * Error text: the bottom layer, used by images/, restorer/host/, core/,
 * cli/ and plugin/ alike.  A failing function returns -errno and leaves one
 * line in a struct ptimer_err naming what failed, where, and what to do.
 */
#ifndef PTIMER_LIB_ERR_H
#define PTIMER_LIB_ERR_H

/* One line of error text. */
struct ptimer_err {
	char msg[512];
};

/*
 * ptimer_errf - format one line into err->msg (truncated to fit, never
 * overflowing; err may be NULL: nothing recorded).  Returns -e for e > 0,
 * else e: "return ptimer_errf(err, ENOENT, ...)" gives -ENOENT.
 */
int ptimer_errf(struct ptimer_err *err, int e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * ptimer_errno_hint - what a user can do about a file-system errno (positive),
 * about the path alone (no command-line option: the plugin uses it too), e.g.
 * "free space on that file system or write elsewhere" for ENOSPC.
 */
const char *ptimer_errno_hint(int errnum);

#endif
