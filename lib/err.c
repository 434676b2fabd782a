// SPDX-License-Identifier: MIT
/* Error text (lib/err.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "lib/err.h"

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

const char *ptimer_errno_hint(int errnum)
{
	/* About the path only: these reach users of show, encode, restore and the plugin alike. */
	switch (errnum) {
	case ENOSPC:
	case EDQUOT:
		return "free space on that file system or write elsewhere";
	case EACCES:
	case EPERM:
		return "check the permissions of the file and its directory";
	case EROFS:
		return "the file system is read-only; write elsewhere";
	case ENOENT:
		return "check that the path exists";
	case ENOTDIR:
		return "a component of the path is not a directory; check the path";
	case EISDIR:
		return "the path is a directory; name the image file";
	case ENAMETOOLONG:
		return "use a shorter path";
	case EMFILE:
	case ENFILE:
		return "too many open files; raise the limit (ulimit -n) and retry";
	case ENOMEM:
		return "free memory and retry";
	case EIO:
		return "the storage reported an I/O error; check the device";
	}
	return "check the path and retry";
}
