// SPDX-License-Identifier: MIT
/*
 * May this caller attach to a process?  Asked before PTRACE_SEIZE so the
 * answer names what is missing (a capability, a yama setting, another
 * tracer) instead of a bare EPERM.  The rules are the kernel's
 * (kernel/ptrace.c __ptrace_may_access(), security/yama/yama_lsm.c
 * yama_ptrace_access_check()):
 *   - a process of another user (any of real/effective/saved uid, or gid,
 *     differs from ours) needs CAP_SYS_PTRACE;
 *   - yama ptrace_scope 1 allows descendants only, unless CAP_SYS_PTRACE;
 *     2 needs CAP_SYS_PTRACE for everything; 3 forbids attaching at all;
 *   - a process that already has a tracer cannot get a second one.
 * CAP_CHECKPOINT_RESTORE is not needed by ptimer: the exact-ID prctl
 * (PR_TIMER_CREATE_RESTORE_IDS) is per process and asks for no capability.
 * When anything cannot be read the check says nothing: the seize then
 * reports what the kernel says.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sys/capability.h>

#include "plugin/ptimer.h"

/* Effective capability of this process (libcap cap_get_proc()). */
static bool cap_effective(cap_value_t cap)
{
	cap_flag_value_t v = CAP_CLEAR;
	cap_t caps = cap_get_proc();

	if (!caps)
		return false;
	if (cap_get_flag(caps, cap, CAP_EFFECTIVE, &v))
		v = CAP_CLEAR;
	cap_free(caps);
	return v == CAP_SET;
}

/* Up to 4 numbers after "Key:" in /proc/<pid>/status; returns how many, 0 when absent. */
static int status_ids(pid_t pid, const char *key, long v[4])
{
	char path[64], line[256];
	size_t klen = strlen(key);
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			n = sscanf(line + klen + 1, "%ld %ld %ld %ld", &v[0], &v[1], &v[2], &v[3]);
			break;
		}
	fclose(f);
	return n < 0 ? 0 : n;
}

int ptimer_yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int s = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &s) != 1)
		s = -1;
	fclose(f);
	return s;
}

/* Is pid a descendant of this process (PPid: chain in /proc)? */
static bool is_descendant(pid_t pid)
{
	pid_t me = getpid();
	long pp[4];

	for (int depth = 0; pid > 1 && depth < 4096; depth++) {
		if (status_ids(pid, "PPid", pp) < 1)
			return false;
		if (pp[0] == me)
			return true;
		pid = (pid_t)pp[0];
	}
	return false;
}

/* The comm of pid, or "?". */
static void comm_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	snprintf(buf, len, "?");
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

int ptimer_may_attach(pid_t pid, struct ptimer_err *err)
{
	bool ptrace_cap = cap_effective(CAP_SYS_PTRACE);
	long tracer[4], uid[4], gid[4];
	int scope = ptimer_yama_scope();
	char comm[64];

	if (status_ids(pid, "TracerPid", tracer) == 1 && tracer[0] != 0) {
		comm_of((pid_t)tracer[0], comm, sizeof(comm));
		return ptimer_errf(err, EBUSY, "process %d is already traced by process %ld (%s): a process has "
				   "one tracer at a time; wait until that debugger, criu or ptimer is done, then "
				   "try again", pid, tracer[0], comm);
	}
	if (scope == 3)
		return ptimer_errf(err, EPERM, "cannot attach to process %d: yama ptrace_scope is 3 "
				   "(/proc/sys/kernel/yama/ptrace_scope: no process may be traced, until reboot); "
				   "ptimer needs ptrace to stop the process", pid);
	if (ptrace_cap)
		return 0;
	if (status_ids(pid, "Uid", uid) == 4 && status_ids(pid, "Gid", gid) == 4) {
		uid_t ruid = getuid();
		gid_t rgid = getgid();
		bool same = true;

		/* __ptrace_may_access() with PTRACE_MODE_REALCREDS (PTRACE_SEIZE):
		 * our real uid/gid against the target's real, effective and saved ones */
		for (int i = 0; i < 3; i++)
			same = same && (uid_t)uid[i] == ruid && (gid_t)gid[i] == rgid;
		if (!same)
			return ptimer_errf(err, EPERM, "cannot attach to process %d (uid %ld): ptimer (uid %d) lacks "
					   "CAP_SYS_PTRACE, which stopping another user's process needs; run ptimer "
					   "as root or as uid %ld, or give it CAP_SYS_PTRACE", pid, uid[1],
					   (int)ruid, uid[1]);
	}
	if (scope == 2)
		return ptimer_errf(err, EPERM, "cannot attach to process %d: yama ptrace_scope is 2 "
				   "(/proc/sys/kernel/yama/ptrace_scope: only CAP_SYS_PTRACE may trace) and "
				   "ptimer lacks CAP_SYS_PTRACE; run it as root", pid);
	if (scope == 1 && !is_descendant(pid))
		return ptimer_errf(err, EPERM, "cannot attach to process %d: yama ptrace_scope is 1 "
				   "(/proc/sys/kernel/yama/ptrace_scope: only descendants may be traced without "
				   "CAP_SYS_PTRACE); run ptimer as root, give it CAP_SYS_PTRACE, or set "
				   "ptrace_scope to 0", pid);
	return 0;
}
