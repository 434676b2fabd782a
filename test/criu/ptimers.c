/*
 * A process holding POSIX timers, for the criu smoke test.
 *
 *   ptimers DIR mixed               a few timers of different kinds, with an
 *                                   ID gap (one deleted in the middle), one
 *                                   of them SIGEV_THREAD_ID aimed at itself
 *   ptimers DIR mixed-notid         the same without the SIGEV_THREAD_ID one
 *   ptimers DIR sparse N STRIDE     N timers with IDs 0, STRIDE, 2*STRIDE...
 *                                   created with PR_TIMER_CREATE_RESTORE_IDS
 *                                   (raw syscall: the ID is read from *timerid)
 *
 * Once its timers exist it writes its pid (as it sees it) to DIR/ready and
 * waits. On SIGUSR1 it writes DIR/report: one line per timer it made,
 * "ID INTERVAL_NS ARMED" from timer_gettime(), then "end". Timers are far in
 * the future and their signals are blocked, so nothing fires during a test.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_TIMER_CREATE_RESTORE_IDS
#define PR_TIMER_CREATE_RESTORE_IDS 77
#define PR_TIMER_CREATE_RESTORE_IDS_OFF 0
#define PR_TIMER_CREATE_RESTORE_IDS_ON 1
#endif

static const char *dir;
static timer_t *timers;
static int ntimers;
static volatile sig_atomic_t want_report;

static void die(const char *what)
{
	fprintf(stderr, "ptimers: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void on_usr1(int sig) { (void)sig; want_report = 1; }

static void add(timer_t t)
{
	timers = realloc(timers, sizeof(*timers) * (ntimers + 1));
	if (!timers)
		die("realloc");
	timers[ntimers++] = t;
}

static timer_t make(clockid_t clk, int notify, int signo, long value, long first_s, long interval_s)
{
	struct sigevent sev;
	struct itimerspec its = { .it_value = { first_s, 0 }, .it_interval = { interval_s, 0 } };
	timer_t t;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = notify;
	sev.sigev_signo = signo;
	sev.sigev_value.sival_ptr = (void *)value;
	if (notify == SIGEV_THREAD_ID)
		sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(clk, &sev, &t))
		die("timer_create");
	if (first_s && timer_settime(t, 0, &its, NULL))
		die("timer_settime");
	return t;
}

static void write_file(const char *name, void (*body)(FILE *))
{
	char tmp[4096], path[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(tmp, "w");
	if (!f)
		die(tmp);
	body(f);
	if (fclose(f))
		die(tmp);
	if (rename(tmp, path))
		die(path);
}

static void body_ready(FILE *f) { fprintf(f, "%d\n", getpid()); }

static void body_report(FILE *f)
{
	for (int i = 0; i < ntimers; i++) {
		struct itimerspec its;

		if (timer_gettime(timers[i], &its))
			die("timer_gettime");
		fprintf(f, "%ld %lld %d\n", (long)(intptr_t)timers[i],
			(long long)its.it_interval.tv_sec * 1000000000LL + its.it_interval.tv_nsec,
			its.it_value.tv_sec || its.it_value.tv_nsec);
	}
	fprintf(f, "end\n");
}

int main(int argc, char **argv)
{
	sigset_t block, wait_mask;
	struct sigaction sa;

	if (argc < 3) {
		fprintf(stderr, "usage: ptimers DIR mixed|mixed-notid | ptimers DIR sparse N STRIDE\n");
		return 2;
	}
	dir = argv[1];

	/* Block every signal a timer may send; SIGUSR1 only inside sigsuspend. */
	sigfillset(&block);
	if (sigprocmask(SIG_BLOCK, &block, NULL))
		die("sigprocmask");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	if (sigaction(SIGUSR1, &sa, NULL))
		die("sigaction");
	sigfillset(&wait_mask);
	sigdelset(&wait_mask, SIGUSR1);
	sigdelset(&wait_mask, SIGTERM);
	sigdelset(&wait_mask, SIGINT);

	if (!strcmp(argv[2], "mixed") || !strcmp(argv[2], "mixed-notid")) {
		timer_t gap;

		add(make(CLOCK_REALTIME, SIGEV_SIGNAL, SIGRTMIN, 0x1234, 3600, 1000));
		add(make(CLOCK_MONOTONIC, SIGEV_NONE, 0, 0, 7200, 0));
		gap = make(CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGRTMIN, 7, 0, 0);
		add(make(CLOCK_BOOTTIME, SIGEV_SIGNAL, SIGUSR2, 42, 0, 0));
		add(make(CLOCK_PROCESS_CPUTIME_ID, SIGEV_SIGNAL, SIGRTMIN + 1, 0xdeadbeef, 1000, 0));
		if (!strcmp(argv[2], "mixed"))
			add(make(CLOCK_MONOTONIC, SIGEV_THREAD_ID, SIGRTMIN + 2, 0x77, 3600, 5));
		add(make(CLOCK_THREAD_CPUTIME_ID, SIGEV_NONE, 0, 0, 0, 0));
		if (timer_delete(gap))
			die("timer_delete");
	} else if (!strcmp(argv[2], "sparse") && argc == 5) {
		long n = atol(argv[3]), stride = atol(argv[4]);
		struct sigevent sev;

		if (n <= 0 || stride <= 0 || (n - 1) * stride > 0x7fffffffL) {
			fprintf(stderr, "ptimers: bad N or STRIDE\n");
			return 2;
		}
		if (prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_ON, 0, 0, 0))
			die("prctl(PR_TIMER_CREATE_RESTORE_IDS, ON)");
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_SIGNAL;
		sev.sigev_signo = SIGRTMIN;
		for (long i = 0; i < n; i++) {
			/* glibc's timer_create() hands the kernel a timer_t of its
			 * own: the wanted ID must go through the raw syscall. For
			 * SIGEV_SIGNAL timers glibc's timer_t is the kernel ID. */
			int kid = (int)(i * stride);
			timer_t t;
			struct itimerspec its = { .it_value = { 3600 + i, 0 }, .it_interval = { i % 3, 0 } };

			sev.sigev_value.sival_ptr = (void *)i;
			if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &kid))
				die("timer_create (sparse)");
			if (kid != i * stride) {
				fprintf(stderr, "ptimers: asked for ID %ld, got %d\n", i * stride, kid);
				return 1;
			}
			t = (timer_t)(intptr_t)kid;
			if (i % 2 == 0 && timer_settime(t, 0, &its, NULL))
				die("timer_settime (sparse)");
			add(t);
		}
		if (prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_OFF, 0, 0, 0))
			die("prctl(PR_TIMER_CREATE_RESTORE_IDS, OFF)");
	} else {
		fprintf(stderr, "ptimers: unknown mode '%s'\n", argv[2]);
		return 2;
	}

	write_file("ready", body_ready);
	for (;;) {
		sigsuspend(&wait_mask);
		if (want_report) {
			want_report = 0;
			write_file("report", body_report);
		}
	}
}
