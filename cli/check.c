// SPDX-License-Identifier: MIT
/*
 * `ptimer check`: what this kernel and this caller support, one line each.
 * Probes change nothing: the prctl is asked with its GET (kernel commit
 * ec2d0c04624b), ptrace is tried on a child of our own.  The verdict (the
 * exit status) is whether the caller can dump and restore its own
 * processes: /proc/PID/timers and ptrace.  The exact-ID prctl only makes
 * restore fast (linear mode works without it) and CAP_SYS_PTRACE only adds
 * other users' processes, so their "no" lines inform without failing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/capability.h>

#include "cli/check.h"
#include "core/caps.h"
#include "core/proc_timers.h"
#include "lib/procfs.h"

#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40	/* uapi/linux/capability.h, Linux 5.9 */
#endif

static int line(const char *what, bool ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int line(const char *what, bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%-28s %-4s ", what, ok ? "yes" : "no");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return ok ? 0 : 1;
}

/* Can we seize a child of ours and stop it? */
static int try_ptrace(char *why, size_t len)
{
	pid_t child = fork();
	int status, ret = 0;

	if (child < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		return -1;
	}
	if (child == 0) {
		pause();
		_exit(0);
	}
	if (ptrace(PTRACE_SEIZE, child, NULL, NULL)) {
		snprintf(why, len, "PTRACE_SEIZE: %s", strerror(errno));
		ret = -1;
	} else if (ptrace(PTRACE_INTERRUPT, child, NULL, NULL) || waitpid(child, &status, __WALL) != child) {
		snprintf(why, len, "PTRACE_INTERRUPT: %s", strerror(errno));
		ret = -1;
	}
	kill(child, SIGKILL);
	waitpid(child, &status, __WALL);
	return ret;
}

int ptimer_check(void)
{
	struct ptimer_timer *t = NULL;
	struct ptimer_err err;
	uint32_t n;
	char why[160] = "", scope[16] = "absent";
	int bad = 0, r;

	r = ptimer_proc_read_timers(getpid(), &t, &n, &err);
	bad |= line("/proc/PID/timers", r == 0, "%s", r == 0 ? "readable (CONFIG_CHECKPOINT_RESTORE)" : err.msg);
	free(t);

	r = prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0);
	line("exact timer IDs (prctl 77)", r >= 0, "%s", r >= 0
	     ? "PR_TIMER_CREATE_RESTORE_IDS: restore creates each ID directly"
	     : "kernel lacks PR_TIMER_CREATE_RESTORE_IDS (Linux < 6.15): restore uses the linear create/delete loop");

	if (ptimer_yama_scope() >= 0)
		snprintf(scope, sizeof(scope), "%d", ptimer_yama_scope());
	r = try_ptrace(why, sizeof(why));
	bad |= line("ptrace", r == 0, "%s (yama ptrace_scope: %s%s)", r == 0 ? "can seize and interrupt a process" : why,
		    scope, !strcmp(scope, "1") ? ": descendants only without CAP_SYS_PTRACE"
		    : !strcmp(scope, "2") ? ": CAP_SYS_PTRACE needed" : !strcmp(scope, "3") ? ": no attaching at all"
		    : !strcmp(scope, "absent") ? ", no yama in this kernel" : "");

	/* Not needed for the caller's own processes: a "no" here is not a failure. */
	line("CAP_SYS_PTRACE", ptimer_cap_effective(CAP_SYS_PTRACE), "%s", ptimer_cap_effective(CAP_SYS_PTRACE)
		    ? "effective: may stop processes of other users"
		    : "missing: only your own processes can be dumped or restored");
	line("CAP_CHECKPOINT_RESTORE", ptimer_cap_effective(CAP_CHECKPOINT_RESTORE), "%s",
	     ptimer_cap_effective(CAP_CHECKPOINT_RESTORE)
	     ? "effective; ptimer itself does not need it (the exact-ID prctl is per process and asks for no "
	       "capability), criu does"
	     : "missing: ptimer does not need it (the exact-ID prctl is per process and asks for no "
	       "capability); criu does");
	return bad ? 1 : 0;
}
