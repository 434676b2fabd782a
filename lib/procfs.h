/* SPDX-License-Identifier: MIT */
/*
 * Small readers of /proc files (proc(5)), below everything that needs them:
 * the host loader (restorer/host/) and the core.
 */
#ifndef PTIMER_LIB_PROCFS_H
#define PTIMER_LIB_PROCFS_H

#include <sys/types.h>

/* ptimer_proc_tgid - the process (Tgid: of /proc/<tid>/status) that host
 * thread tid belongs to; -ENOENT when it is gone. */
pid_t ptimer_proc_tgid(pid_t tid);

#endif
