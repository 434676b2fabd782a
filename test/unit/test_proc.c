// SPDX-License-Identifier: MIT
/*
 * The /proc/PID/timers parser against the formats kernels print
 * (fs/proc/base.c show_timer(): "%px", "%p" on older kernels) and
 * against malformed text,
 * then against this kernel's own file for timers of our own.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/proc_timers.h"
#include "lib/procfs.h"
#include "test/lib/tst.h"

static int parse(const char *text, struct ptimer_timer **t, uint32_t *n, struct ptimer_err *err)
{
	err->msg[0] = '\0';
	return ptimer_proc_parse_timers(text, strlen(text), "sample", t, n, err);
}

static void test_formats(void)
{
	/* 6.18: %px, newest first; glibc SIGEV_THREAD shows as signal 32 to a tid */
	const char *s618 =
		"ID: 2000000\nsignal: 32/00007f12345678ab\nnotify: signal/tid.4242\nClockID: 1\n"
		"ID: 7\nsignal: 0/0000000000000000\nnotify: none/pid.4241\nClockID: -6\n"
		"ID: 0\nsignal: 14/ffffffffffffffff\nnotify: signal/pid.4241\nClockID: -14\n"
		"ID: 3\nsignal: 10/0000000000000001\nnotify: thread/pid.4241\nClockID: -2\n";
	/* old kernels: %p of NULL is "(null)", short hex */
	const char *sold = "ID: 5\nsignal: 14/(null)\nnotify: signal/pid.1\nClockID: 0\n"
			   "ID: 6\nsignal: 10/ffff8800deadbeef\nnotify: none/pid.1\nClockID: 7\n";
	struct ptimer_timer *t = NULL;
	struct ptimer_err err;
	uint32_t n = 0;
	int r;

	r = parse(s618, &t, &n, &err);
	CHECK("proc: 6.18 sample parses", r == 0 && n == 4, "r=%d n=%u %s", r, n, err.msg);
	if (r == 0 && n == 4) {
		CHECK("proc: thread-id timer", t[0].timer_id == 2000000 && t[0].signo == 32 &&
		      t[0].sival == 0x7f12345678abull && t[0].sigev_notify == (PTIMER_SIGEV_SIGNAL | PTIMER_SIGEV_THREAD_ID) &&
		      t[0].notify_tid == 4242 && t[0].clock_id == 1,
		      "id %d signo %d sival %llx notify %d tid %d clock %d", t[0].timer_id, t[0].signo,
		      (unsigned long long)t[0].sival, t[0].sigev_notify, t[0].notify_tid, t[0].clock_id);
		CHECK("proc: none + process cpu clock -6", t[1].sigev_notify == PTIMER_SIGEV_NONE && t[1].clock_id == -6 &&
		      t[1].notify_tid == 4241, "notify %d clock %d", t[1].sigev_notify, t[1].clock_id);
		CHECK("proc: all-ones sival, pid-1 cpu clock -14", t[2].sival == UINT64_MAX && t[2].clock_id == -14 &&
		      t[2].timer_id == 0 && t[2].signo == 14, "sival %llx clock %d", (unsigned long long)t[2].sival,
		      t[2].clock_id);
		CHECK("proc: thread notify, thread cpu clock -2", t[3].sigev_notify == PTIMER_SIGEV_THREAD &&
		      t[3].clock_id == -2 && t[3].sival == 1, "notify %d clock %d", t[3].sigev_notify, t[3].clock_id);
	}
	free(t);
	t = NULL;

	r = parse(sold, &t, &n, &err);
	CHECK("proc: old %p format with (null)", r == 0 && n == 2 && t[0].sival == 0 && t[0].timer_id == 5 &&
	      t[1].sival == 0xffff8800deadbeefull && t[1].clock_id == 7, "r=%d n=%u %s", r, n, err.msg);
	free(t);
	t = NULL;

	r = parse("", &t, &n, &err);
	CHECK("proc: empty file is zero timers", r == 0 && n == 0, "r=%d n=%u", r, n);
	free(t);
}

static void test_malformed(void)
{
	static const struct { const char *name, *text, *needle; } bad[] = {
		{ "truncated entry", "ID: 1\nsignal: 14/0000000000000000\n", "ends inside" },
		{ "no final newline", "ID: 1\nsignal: 14/0\nnotify: signal/pid.1\nClockID: 0", "truncated" },
		{ "unknown notify", "ID: 1\nsignal: 14/0\nnotify: (null)/pid.1\nClockID: 0\n", "line 3" },
		{ "unknown pid kind", "ID: 1\nsignal: 14/0\nnotify: signal/pgid.1\nClockID: 0\n", "line 3" },
		{ "17 hex digits", "ID: 1\nsignal: 14/00000000000000000\nnotify: signal/pid.1\nClockID: 0\n", "line 2" },
		{ "negative id", "ID: -1\nsignal: 14/0\nnotify: signal/pid.1\nClockID: 0\n", "line 1" },
		{ "id over INT_MAX", "ID: 2147483648\nsignal: 14/0\nnotify: signal/pid.1\nClockID: 0\n", "line 1" },
		{ "trailing garbage", "ID: 1 x\nsignal: 14/0\nnotify: signal/pid.1\nClockID: 0\n", "line 1" },
		{ "lines out of order", "signal: 14/0\nID: 1\nnotify: signal/pid.1\nClockID: 0\n", "expected \"ID: ...\"" },
		{ "non-hex sival", "ID: 1\nsignal: 14/xyz\nnotify: signal/pid.1\nClockID: 0\n", "line 2" },
		{ "empty clock", "ID: 1\nsignal: 14/0\nnotify: signal/pid.1\nClockID: \n", "line 4" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ptimer_timer *t = NULL;
		struct ptimer_err err;
		uint32_t n = 0;
		char name[96];
		int r = parse(bad[i].text, &t, &n, &err);

		snprintf(name, sizeof(name), "proc: refuses %s", bad[i].name);
		CHECK(name, r == -EINVAL && strstr(err.msg, bad[i].needle) && strstr(err.msg, "sample"),
		      "r=%d msg=\"%s\" (wanted \"%s\")", r, err.msg, bad[i].needle);
		free(t);
	}
}

/* Our own timers through the real file of this kernel. */
static void test_live(void)
{
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN + 3 };
	struct ptimer_timer *t = NULL;
	struct ptimer_err err;
	timer_t a, b;
	uint32_t n = 0;
	int r;

	sev.sigev_value.sival_ptr = (void *)0x1234abcdull;
	if (timer_create(CLOCK_MONOTONIC, &sev, &a) || timer_create(CLOCK_PROCESS_CPUTIME_ID, NULL, &b)) {
		FAIL("proc: live", "timer_create: %s", strerror(errno));
		return;
	}
	r = ptimer_proc_read_timers(getpid(), &t, &n, &err);
	CHECK("proc: live read", r == 0 && n == 2, "r=%d n=%u %s", r, n, r ? err.msg : "");
	if (r == 0 && n == 2) {
		/* newest first: b, then a */
		CHECK("proc: live values", t[1].timer_id == (int)(long)a && t[1].signo == SIGRTMIN + 3 &&
		      t[1].sival == 0x1234abcdull && t[1].clock_id == CLOCK_MONOTONIC && t[1].notify_tid == getpid() &&
		      t[0].timer_id == (int)(long)b && t[0].clock_id == -6 && t[0].signo == SIGALRM,
		      "got id %d signo %d sival %llx clock %d tid %d / id %d clock %d", t[1].timer_id, t[1].signo,
		      (unsigned long long)t[1].sival, t[1].clock_id, t[1].notify_tid, t[0].timer_id, t[0].clock_id);
	}
	free(t);
	timer_delete(a);
	timer_delete(b);
	CHECK("proc: nspid of self", ptimer_proc_nspid(getpid(), getpid()) > 0, "nspid failed");
}

/* The first max bytes, and no more: a longer file is only said to be. */
static void test_within(void)
{
	struct ptimer_timer *t = (struct ptimer_timer *)&t;
	struct ptimer_err err;
	timer_t id[200];
	uint32_t n = 7;
	bool longer = false;
	int r, made = 0;

	for (; made < 200; made++)
		if (timer_create(CLOCK_MONOTONIC, NULL, &id[made]))
			break;
	r = ptimer_proc_read_timers_within(getpid(), 4096, &t, &n, &longer, &err);
	CHECK("proc: 200 timers within 4096 bytes: longer, nothing read", made == 200 && r == 0 && longer &&
	      !t && n == 0, "made %d r=%d longer %d n=%u %s", made, r, longer, n, r ? err.msg : "");
	r = ptimer_proc_read_timers_within(getpid(), 1u << 20, &t, &n, &longer, &err);
	CHECK("proc: 200 timers within 1 MiB: all read", r == 0 && !longer && n == 200, "r=%d longer %d n=%u %s", r,
	      longer, n, r ? err.msg : "");
	free(t);
	while (made > 0)
		timer_delete(id[--made]);
}

/* A thread's run time (schedstat) against the process's CPU clock. */
static void test_runtime(void)
{
	unsigned long long ns = 0;
	struct timespec ts;
	int r;

	for (volatile long i = 0; i < 3000000; i++)
		;
	/* schedstat's runtime is brought up to date at a tick or when the
	 * thread leaves the CPU (kernel/sched/fair.c update_curr), the CPU
	 * clock at every read: a loop shorter than a tick on an idle CPU
	 * reads 0.  Sleeping takes it off the CPU. */
	usleep(1000);
	r = ptimer_proc_runtime(getpid(), getpid(), &ns);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	if (r == -ENODATA) {
		SKIP("proc: runtime of self", "no CONFIG_SCHED_INFO: schedstat reads 0 0 0");
		return;
	}
	CHECK("proc: runtime of self, within the process's CPU clock", r == 0 && ns > 0 &&
	      ns <= (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec,
	      "r=%d runtime %llu ns, clock %lld.%09ld", r, ns, (long long)ts.tv_sec, ts.tv_nsec);
	r = ptimer_proc_runtime(getpid(), 999999999, &ns);
	CHECK("proc: runtime of no such thread -ENOENT", r == -ENOENT, "r=%d", r);
}

/* ptimer_proc_same_pidns of a child made in a new pid namespace, or -EPERM. */
static int in_new_pidns(void)
{
	int fd[2], st, r = -EPERM;
	pid_t mid, inner = 0;

	if (pipe(fd))
		return -errno;
	mid = fork();
	if (mid == 0) {
		pid_t c;

		close(fd[0]);
		if (unshare(CLONE_NEWPID))
			_exit(3);
		c = fork();
		if (c == 0) {
			pause();
			_exit(0);
		}
		if (write(fd[1], &c, sizeof(c)) != sizeof(c))
			_exit(2);
		waitpid(c, NULL, 0);
		_exit(0);
	}
	close(fd[1]);
	if (mid > 0 && read(fd[0], &inner, sizeof(inner)) == sizeof(inner) && inner > 0) {
		r = ptimer_proc_same_pidns(inner);
		kill(inner, SIGKILL);
	}
	close(fd[0]);
	if (mid > 0)
		waitpid(mid, &st, 0);
	return r;
}

/* The pid namespace by its inode, not by numbers. */
static void test_same_pidns(void)
{
	int r = ptimer_proc_same_pidns(getpid());

	CHECK("proc: self in the caller's pid namespace", r == 1, "r=%d", r);
	r = ptimer_proc_same_pidns(999999999);
	CHECK("proc: pid namespace of no such process -ENOENT", r == -ENOENT, "r=%d", r);
	r = in_new_pidns();
	if (r == -EPERM)
		SKIP("proc: a process in a new pid namespace", "unshare(CLONE_NEWPID) not permitted here");
	else
		CHECK("proc: a process in a new pid namespace is not in the caller's", r == 0, "r=%d", r);
}

int main(void)
{
	return CHECK_RUN(CHECK_TEST(test_formats), CHECK_TEST(test_malformed),
	                 CHECK_TEST(test_live), CHECK_TEST(test_within), CHECK_TEST(test_runtime),
	                 CHECK_TEST(test_same_pidns));
}
