// SPDX-License-Identifier: MIT
/* Error text (lib/err.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "lib/err.h"

static void err_vset(struct ptimer_err *err, const char *fmt, va_list ap)
{
	if (err)
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
}

int ptimer_errf(struct ptimer_err *err, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(err, fmt, ap);
	va_end(ap);
	return e > 0 ? -e : e;
}

void ptimer_err_set(struct ptimer_err *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(err, fmt, ap);
	va_end(ap);
}

const char *ptimer_errno_hint(int errnum)
{
	switch (errnum) {
	case ENOSPC:
	case EDQUOT:
		return "free space or choose another image directory (-D)";
	case EACCES:
	case EPERM:
		return "check the permissions or choose another image directory (-D)";
	case EROFS:
		return "the file system is read-only; choose another image directory (-D)";
	case ENOENT:
		return "check that the image directory (-D) exists and the pid is right";
	case ENOTDIR:
		return "a component of the path is not a directory; check -D";
	case EISDIR:
		return "the path is a directory; name the image file or pass its directory as -D";
	case ENAMETOOLONG:
		return "use a shorter image directory path";
	case EMFILE:
	case ENFILE:
		return "too many open files; raise the limit (ulimit -n) and retry";
	case ENOMEM:
		return "free memory and retry";
	case EIO:
		return "the storage reported an I/O error; check the device, then dump again";
	}
	return "check the path and retry";
}
