// SPDX-License-Identifier: MIT
/*
 * A linear restore's progress reports (core/restore.c run_restore) in a
 * real child: a loop that ends in its first run (299 create/delete pairs,
 * under LINEAR_BUDGET) but lasts the caller's interval still reports once,
 * with last set, and says how long its loop ran (stats ns_loop); with an
 * interval it never reaches it reports nothing.  The CLI's "linear mode: N
 * create/delete pairs in X ms" and the suites' shows-progress checks
 * (test/lib/driver.sh progress_shown) stand on this rule.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/restore.h"
#include "core/task.h"
#include "restorer/sys.h"
#include "test/lib/tst.h"

#define FAR_ID 300
/* IDs 0..FAR_ID-1 made and deleted before FAR_ID is made (a fresh
 * process's counter starts at 0): ID 0's creation is the first pair's */
#define PAIRS (FAR_ID - 1)

struct seen {
	int calls;
	int lasts;
	uint64_t pairs_done, ns_elapsed;
};

static void on_progress(const struct ptimer_progress *p, void *ctx)
{
	struct seen *s = ctx;

	s->calls++;
	s->lasts += p->last;
	s->pairs_done = p->pairs_done;
	s->ns_elapsed = p->ns_elapsed;
}

/* Does /proc/PID/timers list ID id? */
static bool has_timer(pid_t pid, int id)
{
	char path[64], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/timers", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		int got;

		found = sscanf(line, "ID: %d", &got) == 1 && got == id;
	}
	fclose(f);
	return found;
}

/* One linear restore of a timer at FAR_ID into a fresh child, progress
 * every every_ns; the reports into *s, the stats into *st. */
static int restore_once(const char *tag, uint64_t every_ns, struct seen *s, struct ptimer_restore_stats *st,
			bool *made)
{
	struct ptimer_timer tm = {
		.timer_id = FAR_ID,
		.clock_id = PTIMER_CLOCK_MONOTONIC,
		.sigev_notify = PTIMER_SIGEV_NONE,
	};
	struct ptimer_image img = { .version = PTIMER_IMG_VERSION, .n_timers = 1, .timers = &tm };
	struct ptimer_restore_opts o = {
		.mode = PTIMER_RESTORE_LINEAR,
		.progress = on_progress,
		.progress_ctx = s,
		.progress_every_ns = every_ns,
	};
	struct ptimer_task t;
	struct ptimer_err err;
	char name[96];
	pid_t child;
	int ret, status;

	memset(s, 0, sizeof(*s));
	*made = false;
	child = fork();
	if (child < 0) {
		snprintf(name, sizeof(name), "%s/fork", tag);
		FAIL(name, "%s", strerror(errno));
		return -1;
	}
	if (child == 0) {
		for (;;)
			pause();
	}
	img.pid = child;
	ret = ptimer_task_seize(&t, child, &err);
	if (!ret) {
		ret = ptimer_restore_task(&t, &img, &o, st, &err);
		ptimer_task_release(&t);
	}
	if (ret) {
		snprintf(name, sizeof(name), "%s/restore", tag);
		FAIL(name, "%s", err.msg);
	} else {
		*made = has_timer(child, FAR_ID);
	}
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	return ret;
}

static void test_interval_reached(void)
{
	struct ptimer_restore_stats st;
	struct seen s;
	bool made;

	/* 1 ns: any loop lasts it, and ends within its one run */
	if (restore_once("progress/reached", 1, &s, &st, &made))
		return;
	CHECK("progress/reached/timer-made", made, "no ID %d in the child's /proc/PID/timers", FAR_ID);
	CHECK("progress/reached/linear", st.mode == PTIMER_RESTORE_LINEAR && st.pairs == PAIRS,
	      "mode %d, %llu pairs (want linear, %d)", (int)st.mode, (unsigned long long)st.pairs, PAIRS);
	CHECK("progress/reached/one-closing-report", s.calls == 1 && s.lasts == 1,
	      "%d reports, %d with last set (want 1, 1)", s.calls, s.lasts);
	CHECK("progress/reached/report-complete", s.pairs_done == PAIRS && s.ns_elapsed > 0,
	      "report: %llu pairs done, %llu ns elapsed", (unsigned long long)s.pairs_done,
	      (unsigned long long)s.ns_elapsed);
	CHECK("progress/reached/ns-loop", st.ns_loop > 0 && st.ns_loop <= st.ns_inject,
	      "ns_loop %llu, ns_inject %llu", (unsigned long long)st.ns_loop, (unsigned long long)st.ns_inject);
}

static void test_interval_not_reached(void)
{
	struct ptimer_restore_stats st;
	struct seen s;
	bool made;

	/* an hour: a 299-pair loop never lasts it */
	if (restore_once("progress/unreached", 3600ull * 1000000000ull, &s, &st, &made))
		return;
	CHECK("progress/unreached/timer-made", made, "no ID %d in the child's /proc/PID/timers", FAR_ID);
	CHECK("progress/unreached/no-report", s.calls == 0, "%d reports (want none)", s.calls);
	CHECK("progress/unreached/ns-loop", st.ns_loop > 0 && st.ns_loop < 3600ull * 1000000000ull,
	      "ns_loop %llu", (unsigned long long)st.ns_loop);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	return CHECK_RUN(CHECK_TEST(test_interval_reached), CHECK_TEST(test_interval_not_reached));
}
