/* SPDX-License-Identifier: MIT */
/*
 * criu's own images, as the plugin edits them.
 */
#ifndef PTIMER_PLUGIN_CRIU_CORE_H
#define PTIMER_PLUGIN_CRIU_CORE_H

#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

/*
 * ptimer_criu_core_strip_timers - take the POSIX timers (CoreEntry
 * tc.timers.posix, criu images/core.proto + timer.proto) out of
 * DIR/core-<vpid>.img, rewriting it atomically; every other field keeps its
 * bytes.  *removed = how many were there (0: the file is left untouched).
 * Returns 0, -EINVAL (not a criu core image, or it does not decode),
 * -ENOMEM, or the -errno of reading or rewriting the file (-ENOENT,
 * -EACCES, -ENOSPC, -EPERM of fchown, ...); err set.
 */
int ptimer_criu_core_strip_timers(const char *dir, pid_t vpid, uint32_t *removed, struct ptimer_err *err);

#endif
