// SPDX-License-Identifier: MIT
/*
 * The attach check (core/caps.c): ptimer_attach_verdict on made-up facts
 * for every yama ptrace_scope, another tracer, another user's process, a
 * non-dumpable one (this machine may have no yama at all); then
 * ptimer_may_attach on real children: a free one passes, one we trace is
 * "already traced" by us.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/caps.h"
#include "test/lib/tst.h"

static struct ptimer_attach_facts same_user(int scope, bool cap)
{
	struct ptimer_attach_facts f = { .pid = 4242, .yama_scope = scope, .cap_sys_ptrace = cap,
					 .ids_known = true, .my_uid = 1000, .my_gid = 1000 };

	for (int i = 0; i < 3; i++) {
		f.uid[i] = 1000;
		f.gid[i] = 1000;
	}
	return f;
}

/* verdict NAME F WANT WORDS...: the return value, and each word in the message */
static void verdict(const char *name, const struct ptimer_attach_facts *f, int want, const char *w1, const char *w2)
{
	struct ptimer_err err = { .msg = "" };
	int r = ptimer_attach_verdict(f, &err);

	if (r != want) {
		FAIL(name, "returned %d, want %d: %s", r, want, err.msg);
		return;
	}
	if ((w1 && !strstr(err.msg, w1)) || (w2 && !strstr(err.msg, w2))) {
		FAIL(name, "message lacks '%s' or '%s': %s", w1 ? w1 : "", w2 ? w2 : "", err.msg);
		return;
	}
	PASS(name);
}

static void test_attach(void)
{
	struct ptimer_attach_facts f;
	struct ptimer_err err;
	pid_t child;
	int status, r;
	char want[64];

	for (int scope = -1; scope <= 1; scope++) {
		char name[64];

		snprintf(name, sizeof(name), "caps/same-user-scope%d-ok", scope);
		f = same_user(scope, false);
		verdict(name, &f, 0, NULL, NULL);
	}
	f = same_user(2, false);
	verdict("caps/scope2-no-cap", &f, -EPERM, "ptrace_scope is 2", "CAP_SYS_PTRACE");
	f = same_user(2, true);
	verdict("caps/scope2-with-cap-ok", &f, 0, NULL, NULL);
	f = same_user(3, true);
	verdict("caps/scope3-even-with-cap", &f, -EPERM, "ptrace_scope is 3", NULL);
	f = same_user(-1, false);
	f.uid[1] = 0;
	verdict("caps/other-user-euid", &f, -EPERM, "CAP_SYS_PTRACE", "uid 0");
	f = same_user(-1, false);
	f.gid[2] = 5;
	verdict("caps/other-saved-gid", &f, -EPERM, "CAP_SYS_PTRACE", NULL);
	f = same_user(-1, true);
	f.uid[0] = f.uid[1] = f.uid[2] = 0;
	verdict("caps/other-user-with-cap-ok", &f, 0, NULL, NULL);
	f = same_user(-1, false);
	f.not_dumpable = true;
	verdict("caps/not-dumpable", &f, -EPERM, "not dumpable", "CAP_SYS_PTRACE");
	f = same_user(0, true);
	f.tracer = 77;
	strcpy(f.tracer_comm, "gdb");
	verdict("caps/already-traced", &f, -EBUSY, "already traced by process 77 (gdb)", NULL);
	f = same_user(-1, false);
	f.ids_known = false;
	verdict("caps/unreadable-no-objection", &f, 0, NULL, NULL);

	/* real children */
	child = fork();
	if (child < 0) {
		FAIL("caps/fork", "%s", strerror(errno));
		return;
	}
	if (child == 0) {
		for (;;)
			pause();
	}
	r = ptimer_may_attach(child, &err);
	CHECK("caps/own-child-ok", r == 0, "returned %d: %s", r, err.msg);
	if (ptrace(PTRACE_SEIZE, child, NULL, NULL)) {
		SKIP("caps/traced-child", "PTRACE_SEIZE: %s", strerror(errno));
	} else {
		r = ptimer_may_attach(child, &err);
		snprintf(want, sizeof(want), "already traced by process %d", getpid());
		CHECK("caps/traced-child-refused", r == -EBUSY && strstr(err.msg, want), "returned %d: %s", r,
		      r ? err.msg : "");
	}
	kill(child, SIGKILL);
	waitpid(child, &status, __WALL);
	return;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	return CHECK_RUN(CHECK_TEST(test_attach));
}
