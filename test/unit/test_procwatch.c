// SPDX-License-Identifier: MIT
/*
 * The proc connector watch (core/procwatch.c) against the real kernel:
 * subscribe for a child, let it exec /bin/true, and see PROC_EVENT_EXEC
 * then PROC_EVENT_EXIT for it, in that order; ptimer_procwatch_check then
 * refuses naming the process.  A watch on another pid sees none of it.
 * SKIP when the subscription is refused (no CAP_NET_ADMIN, no
 * CONFIG_PROC_EVENTS).
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/procwatch.h"
#include "core/util.h"
#include "test/lib/tst.h"

static void test_watch(void)
{
	struct ptimer_procwatch *w = NULL, *other = NULL;
	const struct ptimer_proc_event *ev;
	struct ptimer_err err;
	struct ptimer_procwatch_window released;
	uint64_t before_exec;
	int go[2], status, r;
	size_t n = 0;
	pid_t child;
	char c = 'x';

	if (pipe(go)) {
		FAIL("procwatch/pipe", "%s", strerror(errno));
		return;
	}
	child = fork();
	if (child < 0) {
		FAIL("procwatch/fork", "%s", strerror(errno));
		return;
	}
	if (child == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		execl("/bin/true", "true", (char *)NULL);
		_exit(4);
	}
	close(go[0]);
	r = ptimer_procwatch_start(&w, child, &err);
	if (r) {
		SKIP("procwatch", "%s", err.msg);
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		return;
	}
	PASS("procwatch/subscribe");
	/* a watch on a pid that is not the child's */
	CHECK("procwatch/subscribe-other", ptimer_procwatch_start(&other, getpid(), &err) == 0, "%s", err.msg);
	CHECK("procwatch/check-before-anything", ptimer_procwatch_check(w, &child, 1, NULL, &err) == 0,
	      "check refused before the child did anything: %s", err.msg);
	before_exec = ptimer_now_ns();
	if (write(go[1], &c, 1) != 1) {
		FAIL("procwatch/go", "%s", strerror(errno));
		return;
	}
	waitpid(child, &status, 0);
	CHECK("procwatch/child-ran-true", WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	/* events may trail the wait a little: poll until the exit shows up */
	for (int i = 0; i < 500; i++) {
		bool exited = false;

		r = ptimer_procwatch_poll(w, &ev, &n);
		for (size_t k = 0; k < n; k++)
			exited = exited || ev[k].what == PTIMER_PROC_EXIT;
		if (exited || r)
			break;
		usleep(10000);
	}
	CHECK("procwatch/no-events-lost", r == 0, "poll: %s", strerror(-r));
	CHECK("procwatch/two-events", n == 2, "%zu events for pid %d, want EXEC and EXIT", n, child);
	if (n >= 2) {
		CHECK("procwatch/exec-first", ev[0].what == PTIMER_PROC_EXEC && ev[0].tid == child,
		      "first event %u for %d, want EXEC (%d) for %d", ev[0].what, ev[0].tid, PTIMER_PROC_EXEC, child);
		CHECK("procwatch/exit-second", ev[1].what == PTIMER_PROC_EXIT && ev[1].tid == child,
		      "second event %u for %d, want EXIT (%d) for %d", ev[1].what, ev[1].tid, PTIMER_PROC_EXIT, child);
	}
	/* released before it exec'ed and exited: neither event counts */
	released = (struct ptimer_procwatch_window){ .exit_from_ns = 0, .until_ns = before_exec };
	r = ptimer_procwatch_check(w, &child, 1, &released, &err);
	CHECK("procwatch/window-ignores-events-after-release", r == 0, "check returned %d: %s", r, r ? err.msg : "");
	r = ptimer_procwatch_check(w, &child, 1, NULL, &err);
	CHECK("procwatch/check-refuses-exec", r == -ESTALE && strstr(err.msg, "exec"),
	      "check returned %d: %s", r, r ? err.msg : "");
	{
		char want[32];

		snprintf(want, sizeof(want), "process %d", child);
		CHECK("procwatch/check-names-process", r && strstr(err.msg, want), "message: %s", err.msg);
	}
	if (other) {
		r = ptimer_procwatch_poll(other, &ev, &n);
		CHECK("procwatch/other-pid-sees-nothing", r == 0 && n == 0, "%zu events, poll %d", n, r);
	}
	ptimer_procwatch_stop(other);
	ptimer_procwatch_stop(w);
	ptimer_procwatch_stop(NULL);
	PASS("procwatch/stop");
	return;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	return CHECK_RUN(CHECK_TEST(test_watch));
}
