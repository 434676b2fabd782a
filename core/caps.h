/* SPDX-License-Identifier: MIT */
/*
 * May we attach?  The kernel's ptrace access rules applied to what /proc,
 * capget(2) and yama tell about the target and ourselves.
 */
#ifndef PTIMER_CORE_CAPS_H
#define PTIMER_CORE_CAPS_H

#include <stdbool.h>
#include <sys/types.h>

#include "lib/err.h"

/* What decides whether we may attach (core/caps.c), gathered from /proc,
 * capget(2) and yama, so that the decision can be tested alone. */
struct ptimer_attach_facts {
	pid_t pid;			/* the target */
	pid_t tracer;			/* TracerPid of /proc/PID/status; 0: none */
	char tracer_comm[64];		/* its comm, for the message */
	int yama_scope;			/* /proc/sys/kernel/yama/ptrace_scope; -1: no yama */
	bool cap_sys_ptrace;		/* ours, effective */
	bool ids_known;			/* uid/gid read */
	uid_t uid[3];			/* the target's real, effective, saved uid */
	gid_t gid[3];
	uid_t my_uid;			/* ours, real (PTRACE_MODE_REALCREDS) */
	gid_t my_gid;
	bool not_dumpable;		/* /proc/PID owned by root while its euid is not */
};

/*
 * ptimer_attach_verdict - the kernel's rules (kernel/ptrace.c
 * __ptrace_may_access(), security/yama/yama_lsm.c) applied to f: another
 * tracer (-EBUSY, "already traced by process N"), yama ptrace_scope 3
 * (-EPERM), without CAP_SYS_PTRACE: another user's process (-EPERM naming
 * CAP_SYS_PTRACE), a non-dumpable one, ptrace_scope 2.  ptrace_scope 1 is
 * left to the seize (PR_SET_PTRACER exceptions are not visible).  Returns
 * 0, -EBUSY or -EPERM, with err set.
 */
int ptimer_attach_verdict(const struct ptimer_attach_facts *f, struct ptimer_err *err);

/* ptimer_may_attach - gather the facts for pid and give the verdict: asked
 * before PTRACE_SEIZE.  Anything unreadable counts as "no objection". */
int ptimer_may_attach(pid_t pid, struct ptimer_err *err);

/* ptimer_cap_effective - whether capability cap (CAP_*, uapi/linux/capability.h)
 * is in this process's effective set (capget(2), version 3: the call
 * libcap's cap_get_proc() makes, without loading libcap into criu with
 * the plugin); false when it cannot be read. */
bool ptimer_cap_effective(int cap);

/* ptimer_yama_hint - "; yama ptrace_scope is N ..." for an EPERM message
 * when yama's setting may be why, else "". */
const char *ptimer_yama_hint(void);

#endif
