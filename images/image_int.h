/* SPDX-License-Identifier: MIT */
/* Helpers shared by the images/ sources only; not part of the image API. */
#ifndef PTIMER_IMAGES_IMAGE_INT_H
#define PTIMER_IMAGES_IMAGE_INT_H

#include "image.h"

/*
 * ptimer_err_set - format one line into err->msg (truncated to fit, never
 * overflowing).  err may be NULL: then nothing is recorded.
 */
void ptimer_err_set(struct ptimer_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * ptimer_errno_hint - what a user can do about a file-system errno (positive),
 * about the path alone (no command-line option: the plugin uses it too), e.g.
 * "free space on that file system or write elsewhere" for ENOSPC.
 */
const char *ptimer_errno_hint(int errnum);

#endif
