// SPDX-License-Identifier: MIT
/*
 * May this caller attach to a process?  Asked before PTRACE_SEIZE so the
 * answer names what is missing (a capability, a yama setting, another
 * tracer) instead of a bare EPERM.  The rules are the kernel's
 * (kernel/ptrace.c __ptrace_may_access(), security/yama/yama_lsm.c
 * yama_ptrace_access_check()):
 *   - a process of another user (any of real/effective/saved uid, or gid,
 *     differs from ours) needs CAP_SYS_PTRACE;
 *   - so does a process that is not dumpable (setuid, PR_SET_DUMPABLE 0);
 *   - yama ptrace_scope 2 needs CAP_SYS_PTRACE for everything; 3 forbids
 *     attaching at all; 1 allows descendants and processes that named us
 *     with PR_SET_PTRACER (not visible in /proc: left to the seize, whose
 *     EPERM message then names the scope, ptimer_yama_hint());
 *   - a process that already has a tracer cannot get a second one.
 * CAP_CHECKPOINT_RESTORE is not needed by ptimer: the exact-ID prctl
 * (PR_TIMER_CREATE_RESTORE_IDS) is per process and asks for no capability.
 * When anything cannot be read the check says nothing: the seize then
 * reports what the kernel says.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/capability.h>
#include <sys/syscall.h>

#include "core/caps.h"
#include "lib/procfs.h"

bool ptimer_cap_effective(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	if (cap < 0 || cap >= 32 * _LINUX_CAPABILITY_U32S_3 || syscall(SYS_capget, &h, d))
		return false;
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* Up to 4 numbers after "Key:" in /proc/<pid>/status; returns how many, 0 when absent. */
static int status_ids(pid_t pid, const char *key, long v[4])
{
	int n = ptimer_proc_status_longs(pid, 0, key, v, 4);

	return n < 0 ? 0 : n > 4 ? 4 : n;
}

int ptimer_attach_verdict(const struct ptimer_attach_facts *f, struct ptimer_err *err)
{
	pid_t pid = f->pid;

	if (f->tracer > 0)
		return ptimer_errf(err, EBUSY, "process %d is already traced by process %d (%s): a process has "
				   "one tracer at a time; wait until that debugger, criu or ptimer is done, then "
				   "try again", pid, f->tracer, f->tracer_comm[0] ? f->tracer_comm : "?");
	if (f->yama_scope == 3)
		return ptimer_errf(err, EPERM, "cannot attach to process %d: yama ptrace_scope is 3 "
				   "(/proc/sys/kernel/yama/ptrace_scope: no process may be traced, until reboot); "
				   "ptimer needs ptrace to stop the process", pid);
	if (f->cap_sys_ptrace)
		return 0;
	if (f->ids_known) {
		bool same = true;

		/* __ptrace_may_access() with PTRACE_MODE_REALCREDS (PTRACE_SEIZE):
		 * our real uid/gid against the target's real, effective and saved ones */
		for (int i = 0; i < 3; i++)
			same = same && f->uid[i] == f->my_uid && f->gid[i] == f->my_gid;
		if (!same)
			return ptimer_errf(err, EPERM, "cannot attach to process %d (uid %u): ptimer (uid %u) lacks "
					   "CAP_SYS_PTRACE, which stopping another user's process needs; run ptimer "
					   "as root or as uid %u, or give it CAP_SYS_PTRACE", pid, f->uid[1],
					   f->my_uid, f->uid[1]);
		if (f->not_dumpable)
			return ptimer_errf(err, EPERM, "cannot attach to process %d: it is not dumpable (setuid "
					   "program or PR_SET_DUMPABLE 0), and attaching to it needs CAP_SYS_PTRACE, "
					   "which ptimer lacks; run ptimer as root", pid);
	}
	if (f->yama_scope == 2)
		return ptimer_errf(err, EPERM, "cannot attach to process %d: yama ptrace_scope is 2 "
				   "(/proc/sys/kernel/yama/ptrace_scope: only CAP_SYS_PTRACE may trace) and "
				   "ptimer lacks CAP_SYS_PTRACE; run it as root", pid);
	/* scope 1: a process may name us with PR_SET_PTRACER, which /proc does
	 * not show: the seize decides, and its EPERM names the scope */
	return 0;
}

int ptimer_may_attach(pid_t pid, struct ptimer_err *err)
{
	struct ptimer_attach_facts f = { .pid = pid };
	long v[4], g[4];
	uid_t owner;

	if (status_ids(pid, "TracerPid", v) == 1 && v[0] > 0) {
		f.tracer = (pid_t)v[0];
		ptimer_proc_comm(f.tracer, f.tracer_comm, sizeof(f.tracer_comm));
	}
	f.yama_scope = ptimer_yama_scope();
	f.cap_sys_ptrace = ptimer_cap_effective(CAP_SYS_PTRACE);
	f.my_uid = getuid();
	f.my_gid = getgid();
	if (status_ids(pid, "Uid", v) == 4 && status_ids(pid, "Gid", g) == 4) {
		f.ids_known = true;
		for (int i = 0; i < 3; i++) {
			f.uid[i] = (uid_t)v[i];
			f.gid[i] = (gid_t)g[i];
		}
		/* a non-dumpable process's /proc/PID belongs to root (proc(5)) */
		f.not_dumpable = !ptimer_proc_owner(pid, &owner) && owner == 0 && f.uid[1] != 0;
	}
	return ptimer_attach_verdict(&f, err);
}

const char *ptimer_yama_hint(void)
{
	switch (ptimer_yama_scope()) {
	case 1:
		return "; yama ptrace_scope is 1 (/proc/sys/kernel/yama/ptrace_scope: only descendants, or a "
		       "process that named ptimer with PR_SET_PTRACER, may be traced without CAP_SYS_PTRACE): "
		       "run ptimer as root or set ptrace_scope to 0";
	case 2:
		return "; yama ptrace_scope is 2: only CAP_SYS_PTRACE may trace";
	case 3:
		return "; yama ptrace_scope is 3: nobody may trace";
	default:
		return "";
	}
}
