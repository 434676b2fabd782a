// SPDX-License-Identifier: MIT
/*
 * The test programs' library, unit and end-to-end: see tst.h.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tst.h"

static const char *t_role = "", *t_dir = ".", *t_tag = "";
/* the check lines printed, by kind: the only counters */
static int t_pass, t_fail, t_skip, t_xfail;
/* the plans: check lines (tst_plan), tests (tst_run: planned, run to their
 * end, the one running or -1 and its name); -1: none */
static int t_planned = -1, t_tests = -1, t_ran, t_running = -1;
static const char *t_running_name;
/* the exit hook: registered, whose process, the totals printed */
static bool t_hooked, t_closed;
static pid_t t_pid;
static char t_buf[8192];
static FILE *t_out;
static void (*t_sleep)(const struct timespec *ts);

void tst_sleep_with(void (*fn)(const struct timespec *ts))
{
	t_sleep = fn;
}

void tst_thread_gone(int tid)
{
	struct timespec ts = { 0, 1000000L };

	/* tgkill(2) answers ESRCH once the thread is unhashed (detach_pid) */
	for (int i = 0; i < 10000; i++) {
		if (syscall(SYS_tgkill, getpid(), tid, 0) && errno == ESRCH)
			return;
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "tst: thread %d still there 10 s after it returned\n", tid);
	exit(2);
}

FILE *tst_out(FILE *f)
{
	FILE *prev = t_out ? t_out : stdout;

	t_out = f;
	return prev;
}

static FILE *out(void)
{
	return t_out ? t_out : stdout;
}

void tst_init(const char *role, const char *dir, const char *tag)
{
	t_role = role;
	t_dir = dir;
	t_tag = tag ? tag : "";
	setvbuf(stdout, t_buf, _IOLBF, sizeof(t_buf));
}

const char *tst_dir(void)
{
	return t_dir;
}

const char *tst_role(void)
{
	return t_role;
}

static __attribute__((noreturn)) void die(const char *what, const char *path)
{
	fprintf(stderr, "%s: %s %s: %s\n", program_invocation_short_name, what, path, strerror(errno));
	exit(2);
}

void tst_put(const char *name, const char *fmt, ...)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	va_list ap;
	FILE *f;
	int r;

	snprintf(path, sizeof(path), "%s/%s", t_dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f)
		die("cannot write", tmp);
	va_start(ap, fmt);
	r = vfprintf(f, fmt, ap);
	va_end(ap);
	if (r < 0 || fclose(f) || rename(tmp, path))
		die("cannot write", path);
}

/* the threads of this process, as the mounted /proc names them, lowest
 * (the leader) first */
static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

void tst_ready(void)
{
	char self[32] = "", tids[8192] = "", name[256];
	int v[512], n = 0;
	size_t off = 0;
	ssize_t k = readlink("/proc/self", self, sizeof(self) - 1);
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	if (k <= 0)
		die("cannot read", "/proc/self");
	self[k] = 0;
	while (d && (e = readdir(d)) && n < (int)(sizeof(v) / sizeof(v[0])))
		if (e->d_name[0] != '.')
			v[n++] = atoi(e->d_name);
	if (d)
		closedir(d);
	qsort(v, n, sizeof(v[0]), cmp_int);
	for (int i = 0; i < n; i++)
		off += snprintf(tids + off, sizeof(tids) - off, "%d\n", v[i]);
	snprintf(name, sizeof(name), "%s.pid", t_role);
	tst_put(name, "%s\n", self);
	snprintf(name, sizeof(name), "%s.tids", t_role);
	tst_put(name, "%s", n ? tids : "");
	snprintf(name, sizeof(name), "%s.ready", t_role);
	tst_put(name, "ready\n");
}

void tst_skip_all(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(4);
}

bool tst_wait(const char *name, void (*poll)(void), int timeout_s)
{
	struct timespec ts = { 0, 10 * 1000000L };
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", t_dir, name);
	for (long i = 0; !timeout_s || i < timeout_s * 100L; i++) {
		if (!access(path, F_OK))
			return true;
		if (poll)
			poll();
		if (t_sleep)
			t_sleep(&ts);
		else
			nanosleep(&ts, NULL);
	}
	return false;
}

bool tst_wait_restored(void (*poll)(void), int timeout_s)
{
	char path[PATH_MAX];

	if (!tst_wait("restored", poll, timeout_s))
		return false;
	if (strcmp(t_role, "criu"))
		return true;
	snprintf(path, sizeof(path), "%s/criu.result", t_dir);
	if (!freopen(path, "w", stdout))
		die("cannot write", path);
	setvbuf(stdout, t_buf, _IOLBF, sizeof(t_buf));
	return true;
}

enum kind { K_PASS, K_FAIL, K_SKIP, K_XFAIL };

/* The one printer of check lines, and their one count: "KIND TAG/NAME",
 * then ": WHY" when there is a format. */
static void line(enum kind k, const char *name, const char *fmt, va_list ap)
{
	static const char *const word[] = { "PASS", "FAIL", "SKIP", "XFAIL" };
	int *const count[] = { &t_pass, &t_fail, &t_skip, &t_xfail };
	FILE *f = out();

	(*count[k])++;
	fprintf(f, "%s %s%s%s", word[k], t_tag, t_tag[0] ? "/" : "", name);
	if (fmt) {
		fputs(": ", f);
		vfprintf(f, fmt, ap);
	}
	fputc('\n', f);
	fflush(f);
}

void tst_check(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line(ok ? K_PASS : K_FAIL, name, fmt, ap);
	va_end(ap);
}

/* line() with its arguments here */
static void report(enum kind k, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line(k, name, fmt, ap);
	va_end(ap);
}

void tst_pass(const char *name)
{
	report(K_PASS, name, NULL);
}

void tst_fail(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line(K_FAIL, name, fmt, ap);
	va_end(ap);
}

void tst_skip(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line(K_SKIP, name, fmt, ap);
	va_end(ap);
}

void tst_xfail(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line(K_XFAIL, name, fmt, ap);
	va_end(ap);
}

void tst_note(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", out());
	va_start(ap, fmt);
	vfprintf(out(), fmt, ap);
	va_end(ap);
	fputc('\n', out());
	fflush(out());
}

int tst_failed(void)
{
	return t_fail;
}

/* A program that exits without tst_done() once it has a plan (an exit()
 * inside a test, a return before its checks) still closes its run: the
 * plan's verdicts and the totals line, and exit status 1 on a FAIL (the
 * status exit() was given would hide it). */
static void closing(void)
{
	if (getpid() != t_pid)
		return;		/* a forked child's exit: not the program's */
	if (!t_closed && tst_done())
		_exit(1);
}

static void hook(void)
{
	if (t_hooked)
		return;
	t_hooked = true;
	t_pid = getpid();
	atexit(closing);
}

void tst_plan(int n)
{
	t_planned = n;
	hook();
}

int tst_run(const struct tst_test *t, int n)
{
	t_tests = n;
	hook();
	printf("1..%d\n", n);
	for (int i = 0; i < n; i++) {
		int failed = t_fail;

		t_running = i;
		t_running_name = t[i].name;
		fflush(stdout);
		t[i].fn();
		t_running = -1;
		t_ran++;
		printf("%sok %d %s\n", t_fail == failed ? "" : "not ", i + 1, t[i].name);
	}
	return tst_done();
}

/* The plans against what ran and what was printed: a FAIL "plan" each
 * that does not hold. */
static void plans(void)
{
	int printed = t_pass + t_fail + t_skip + t_xfail;

	if (t_tests >= 0 && t_ran != t_tests) {
		if (t_running >= 0)
			tst_fail("plan", "%d tests planned, %d ran: the program ended inside test %d (%s)", t_tests,
				 t_ran, t_running + 1, t_running_name);
		else
			tst_fail("plan", "%d tests planned, %d ran", t_tests, t_ran);
	}
	if (t_planned >= 0 && printed != t_planned)
		tst_fail("plan", "%d checks planned, %d printed", t_planned, printed);
}

int tst_done(void)
{
	if (!t_closed)
		plans();
	t_closed = true;
	if (t_xfail)
		printf("# %s: %d passed, %d failed, %d skipped, %d xfail\n", program_invocation_short_name, t_pass,
		       t_fail, t_skip, t_xfail);
	else
		printf("# %s: %d passed, %d failed, %d skipped\n", program_invocation_short_name, t_pass, t_fail,
		       t_skip);
	fflush(stdout);
	if (!strcmp(t_role, "criu"))
		tst_put("criu.done", "%s\n", t_fail ? "fail" : "pass");
	return t_fail ? 1 : 0;
}
