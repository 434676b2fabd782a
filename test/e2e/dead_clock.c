// SPDX-License-Identifier: MIT
/*
 * dead_clock ROLE [beyond] [child] DIR - timers whose clock's thread has
 * exited, a timer on the leader's own clock, and (with "child") one on a
 * child process's CPU clock: what criu alone dumps and restores, and ptimer
 * must too (cases dead-clock, dead-clock-beyond and child-clock).
 *
 *   setup, criu: a thread makes timers on its own CPU clock
 *     (CLOCK_THREAD_CPUTIME_ID) and exits: A SIGEV_NONE disarmed, B
 *     SIGEV_SIGNAL armed 100 s, C SIGEV_SIGNAL disarmed; with "beyond" also
 *     two that criu alone cannot dump and restore: G SIGEV_THREAD_ID at
 *     itself, periodic 10 ms (Go's profiler's, kept when a locked thread
 *     ends; criu alone: "Can't create posix timer"), and E SIGEV_SIGNAL
 *     periodic 1 ms whose signal (blocked) is queued before the thread exits
 *     and delivered after (timer_getoverrun() then answers -1 on 6.18; criu
 *     alone: "sys_timer_getoverrun failed").  The
 *     leader holds L, made first (the lowest ID), disarmed on its own CPU
 *     clock (set with a 7 s interval).
 *     With "child": a child process burns a little CPU and the leader holds
 *     K on the child's CPU clock (clock_getcpuclockid), armed 1000 s.
 *     Writes DIR/ids (the IDs, -1 for none, then L's timer_gettime()),
 *     DIR/ROLE.pid, DIR/ROLE.tids, DIR/ROLE.ready.
 *     While it waits, DIR/probe makes it compare each timer's
 *     timer_gettime() and the leader's signal mask with what they were when
 *     it got ready (a dump that failed must leave both), into
 *     DIR/probe.result, the probe file removed when done.
 *   verify: a fresh process of one thread and no timers, for a standalone
 *     restore of setup's image (the IDs from DIR/ids).
 * Once DIR/restored exists: every ID is there; the timers of the dead
 * thread are disarmed and never fire while the leader burns CPU; L is as
 * it was and, armed, fires on the leader's CPU time; K is armed (at most
 * 1000 s) and, armed again at 50 ms, fires on the child's.  PASS/FAIL/SKIP
 * lines tagged dead-clock/: on stdout (verify), or to DIR/criu.result then
 * DIR/criu.done (criu).  Exit 0 when all passed.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

enum { T_A, T_B, T_C, T_G, T_E, T_L, T_K, N_T };
static const char *const tname[N_T] = { "A", "B", "C", "G", "E", "L", "K" };
#define SIG_DEAD	(SIGRTMIN + 2)	/* B, C */
#define SIG_G		(SIGRTMIN + 3)
#define SIG_E		(SIGRTMIN + 4)
#define SIG_K		(SIGRTMIN + 5)
#define SIG_L		(SIGRTMIN + 6)

static timer_t ids[N_T];
static bool have[N_T];
static struct itimerspec before[N_T];
static volatile sig_atomic_t got[_NSIG];
static int overrun_e = 0;
static bool beyond;
static pid_t child;
static FILE *out;
static int bad;

static void on_sig(int s)
{
	got[s]++;
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[4096], tmp[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path)) {
		fprintf(stderr, "dead_clock: cannot write %s: %s\n", path, strerror(errno));
		exit(2);
	}
}

static void line(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	bad += !ok;
	fprintf(out, "%s dead-clock/%s: ", ok ? "PASS" : "FAIL", name);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
	fflush(out);
}

static void make(int k, clockid_t c, int notify, int signo, long vsec, long vns, long isec, long ins)
{
	struct sigevent ev = { .sigev_notify = notify, .sigev_signo = signo };
	struct itimerspec its = { .it_value = { vsec, vns }, .it_interval = { isec, ins } };

	ev.sigev_value.sival_int = k;
	if (notify == SIGEV_THREAD_ID)
		ev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	if (timer_create(c, &ev, &ids[k]) || timer_settime(ids[k], 0, &its, NULL)) {
		fprintf(stderr, "dead_clock: timer %s: %s\n", tname[k], strerror(errno));
		exit(2);
	}
	have[k] = true;
}

static void burn_cpu(double sec)
{
	struct timespec t0, t;
	volatile unsigned long x = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x++;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < sec);
}

/* The thread that makes A B C G E and exits, E's signal queued. */
static void *doomed(void *arg)
{
	sigset_t pend;

	(void)arg;
	make(T_A, CLOCK_THREAD_CPUTIME_ID, SIGEV_NONE, 0, 0, 0, 0, 0);
	make(T_B, CLOCK_THREAD_CPUTIME_ID, SIGEV_SIGNAL, SIG_DEAD, 100, 0, 0, 0);
	make(T_C, CLOCK_THREAD_CPUTIME_ID, SIGEV_SIGNAL, SIG_DEAD, 0, 0, 0, 0);
	if (!beyond)
		return NULL;
	make(T_G, CLOCK_THREAD_CPUTIME_ID, SIGEV_THREAD_ID, SIG_G, 0, 10000000, 0, 10000000);
	make(T_E, CLOCK_THREAD_CPUTIME_ID, SIGEV_SIGNAL, SIG_E, 0, 1000000, 0, 1000000);
	for (int i = 0; i < 2000; i++) {
		burn_cpu(0.002);
		sigpending(&pend);
		if (sigismember(&pend, SIG_E))
			break;
	}
	/* G must not fire: its signal stays blocked here too */
	return NULL;
}

/* A child that burns about a third of a CPU, for K. */
static void child_main(void)
{
	for (;;) {
		burn_cpu(0.001);
		usleep(2000);
	}
}

static bool its_eq(const struct itimerspec *a, const struct itimerspec *b)
{
	return a->it_value.tv_sec == b->it_value.tv_sec && a->it_value.tv_nsec == b->it_value.tv_nsec &&
	       a->it_interval.tv_sec == b->it_interval.tv_sec && a->it_interval.tv_nsec == b->it_interval.tv_nsec;
}

static bool armed(const struct itimerspec *a)
{
	return a->it_value.tv_sec || a->it_value.tv_nsec;
}

static void sigblk(char *buf, size_t len)
{
	char l[256];
	FILE *f = fopen("/proc/self/status", "r");

	snprintf(buf, len, "?");
	while (f && fgets(l, sizeof(l), f))
		if (!strncmp(l, "SigBlk:", 7))
			snprintf(buf, len, "%.20s", l + 8);
	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

static char blk0[64];

/* DIR/probe: everything as when ready?  The running timers (B's dead
 * clock is frozen; K's child clock moves) are compared disarmed/armed. */
static void probe(const char *dir)
{
	char path[4096], blk[64];
	FILE *save = out;

	snprintf(path, sizeof(path), "%s/probe.result", dir);
	out = fopen(path, "w");
	if (!out) {
		out = save;
		return;
	}
	for (int k = 0; k < N_T; k++) {
		struct itimerspec now;

		if (!have[k])
			continue;
		if (timer_gettime(ids[k], &now)) {
			line(false, "probe-gettime", "timer %s: %s", tname[k], strerror(errno));
			continue;
		}
		if (k == T_K)
			line(armed(&now) && now.it_interval.tv_sec == before[k].it_interval.tv_sec, "probe-K-as-before",
			     "it_value %ld.%09ld", (long)now.it_value.tv_sec, now.it_value.tv_nsec);
		else
			line(its_eq(&now, &before[k]), "probe-timer-as-before",
			     "timer %s (%d): it_value %ld.%09ld it_interval %ld.%09ld, before %ld.%09ld %ld.%09ld",
			     tname[k], (int)(long)ids[k], (long)now.it_value.tv_sec, now.it_value.tv_nsec,
			     (long)now.it_interval.tv_sec, now.it_interval.tv_nsec, (long)before[k].it_value.tv_sec,
			     before[k].it_value.tv_nsec, (long)before[k].it_interval.tv_sec, before[k].it_interval.tv_nsec);
	}
	sigblk(blk, sizeof(blk));
	line(!strcmp(blk, blk0), "probe-sigmask-as-before", "SigBlk %s, before %s", blk, blk0);
	fclose(out);
	out = save;
	snprintf(path, sizeof(path), "%s/probe", dir);
	unlink(path);
}

static void check(bool with_child)
{
	char text[8192] = "", *p = text;
	struct itimerspec its, arm = { .it_value = { 0, 20000000 } };
	FILE *f = fopen("/proc/self/timers", "r");
	char l[256];
	int seen[N_T] = { 0 };

	while (f && fgets(l, sizeof(l), f)) {
		int id;

		if (sscanf(l, "ID: %d", &id) == 1)
			for (int k = 0; k < N_T; k++)
				seen[k] |= have[k] && (int)(long)ids[k] == id;
	}
	if (f)
		fclose(f);
	for (int k = 0; k < N_T; k++) {
		if (!have[k])
			continue;
		p += snprintf(p, text + sizeof(text) - p, " %s=%d%s", tname[k], (int)(long)ids[k], seen[k] ? "" : "(missing)");
		if (!seen[k])
			bad++;
	}
	line(!strstr(text, "missing"), "ids-kept", "%s", text);
	for (int k = T_A; k <= T_E; k++) {
		if (!have[k])
			continue;
		if (timer_gettime(ids[k], &its))
			line(false, "dead-disarmed", "timer %s: timer_gettime: %s", tname[k], strerror(errno));
		else
			line(!armed(&its), "dead-disarmed", "timer %s: it_value %ld.%09ld", tname[k],
			     (long)its.it_value.tv_sec, its.it_value.tv_nsec);
	}
	if (timer_gettime(ids[T_L], &its))
		line(false, "leader-clock-as-before", "timer_gettime: %s", strerror(errno));
	else
		line(its_eq(&its, &before[T_L]), "leader-clock-as-before", "it_value %ld.%09ld it_interval %ld.%09ld",
		     (long)its.it_value.tv_sec, its.it_value.tv_nsec, (long)its.it_interval.tv_sec,
		     its.it_interval.tv_nsec);
	got[SIG_DEAD] = got[SIG_G] = got[SIG_E] = got[SIG_L] = 0;
	arm.it_interval = before[T_L].it_interval;
	timer_settime(ids[T_L], 0, &arm, NULL);
	for (int i = 0; i < 400 && !got[SIG_L]; i++)
		burn_cpu(0.005);
	line(got[SIG_L] > 0, "leader-clock-fires", "signal %d %d times over the leader's CPU time", SIG_L,
	     (int)got[SIG_L]);
	line(!got[SIG_DEAD] && !got[SIG_G] && !got[SIG_E], "dead-never-fire",
	     "signals of the dead thread's timers after the restore: %d %d %d", (int)got[SIG_DEAD], (int)got[SIG_G],
	     (int)got[SIG_E]);
	if (overrun_e == -1)
		fprintf(out, "# dead-clock: timer E answered timer_getoverrun() -1 at setup (the kernel's quirk)\n");
	if (!with_child)
		return;
	if (timer_gettime(ids[T_K], &its))
		line(false, "child-clock-kept", "timer_gettime: %s", strerror(errno));
	else
		line(armed(&its) && its.it_value.tv_sec < 1000, "child-clock-kept", "it_value %ld.%09ld (armed at 1000 s)",
		     (long)its.it_value.tv_sec, its.it_value.tv_nsec);
	got[SIG_K] = 0;
	arm.it_value.tv_nsec = 50000000;
	arm.it_interval.tv_sec = 0;
	timer_settime(ids[T_K], 0, &arm, NULL);
	for (int i = 0; i < 1000 && !got[SIG_K]; i++)
		usleep(10000);
	line(got[SIG_K] > 0, "child-clock-fires", "signal %d after 50 ms of the child's CPU time: %d", SIG_K,
	     (int)got[SIG_K]);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_sig, .sa_flags = SA_RESTART };
	const char *role = argc >= 3 ? argv[1] : "", *dir = argv[argc - 1];
	bool with_child = false, make_timers, usage = argc < 3;
	char buf[512], path[4096];
	sigset_t blk;

	for (int i = 2; i < argc - 1; i++) {
		if (!strcmp(argv[i], "child"))
			with_child = true;
		else if (!strcmp(argv[i], "beyond"))
			beyond = true;
		else
			usage = true;
	}
	if (usage || (strcmp(role, "setup") && strcmp(role, "verify") && strcmp(role, "criu"))) {
		fprintf(stderr, "usage: dead_clock setup|verify|criu [beyond] [child] DIR\n");
		return 2;
	}
	make_timers = strcmp(role, "verify") != 0;
	sigemptyset(&sa.sa_mask);
	for (int s = SIGRTMIN + 2; s <= SIGRTMIN + 6; s++)
		sigaction(s, &sa, NULL);
	if (make_timers) {
		pthread_t th;

		/* L first: the look at the clocks arms it before it meets the dead ones */
		make(T_L, CLOCK_THREAD_CPUTIME_ID, SIGEV_SIGNAL, SIG_L, 0, 0, 7, 0);
		/* E's and G's signals blocked in the doomed thread (inherited) */
		sigemptyset(&blk);
		sigaddset(&blk, SIG_E);
		sigaddset(&blk, SIG_G);
		pthread_sigmask(SIG_BLOCK, &blk, NULL);
		if (pthread_create(&th, NULL, doomed, NULL) || pthread_join(th, NULL)) {
			fprintf(stderr, "dead_clock: pthread_create failed\n");
			return 2;
		}
		/* E's queued signal delivered now, after its thread exited */
		pthread_sigmask(SIG_UNBLOCK, &blk, NULL);
		if (beyond)
			overrun_e = timer_getoverrun(ids[T_E]);
		if (with_child) {
			clockid_t cc;

			child = fork();
			if (child == 0)
				child_main();
			if (child < 0 || clock_getcpuclockid(child, &cc)) {
				fprintf(stderr, "dead_clock: child clock: %s\n", strerror(errno));
				return 2;
			}
			make(T_K, cc, SIGEV_SIGNAL, SIG_K, 1000, 0, 0, 0);
		}
		for (int k = 0; k < N_T; k++)
			if (have[k])
				timer_gettime(ids[k], &before[k]);
		buf[0] = 0;
		for (int k = 0; k < N_T; k++)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%d ", have[k] ? (int)(long)ids[k] : -1);
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%ld %ld %ld %ld\n",
			 (long)before[T_L].it_value.tv_sec, before[T_L].it_value.tv_nsec,
			 (long)before[T_L].it_interval.tv_sec, before[T_L].it_interval.tv_nsec);
		put(dir, "ids", buf);
		sigblk(blk0, sizeof(blk0));
	} else {
		FILE *f;

		snprintf(path, sizeof(path), "%s/ids", dir);
		f = fopen(path, "r");
		for (int k = 0; f && k < N_T; k++) {
			int id;

			if (fscanf(f, "%d", &id) == 1 && id >= 0) {
				ids[k] = (timer_t)(long)id;
				have[k] = true;
			}
		}
		/* L as the setup role saw it when it got ready */
		if (!f || fscanf(f, "%ld %ld %ld %ld", &before[T_L].it_value.tv_sec, &before[T_L].it_value.tv_nsec,
				 &before[T_L].it_interval.tv_sec, &before[T_L].it_interval.tv_nsec) != 4) {
			fprintf(stderr, "dead_clock: cannot read %s\n", path);
			return 2;
		}
		fclose(f);
	}
	/* the pid as the /proc mount sees it (a pid namespace's pid 1 runs
	 * under the parent's /proc in the pidns flavours) */
	{
		char self[32] = "";
		ssize_t k = readlink("/proc/self", self, sizeof(self) - 1);

		snprintf(buf, sizeof(buf), "%s\n", k > 0 ? (self[k] = 0, self) : "0");
	}
	snprintf(path, sizeof(path), "%s.tids", role);
	put(dir, path, buf);
	snprintf(path, sizeof(path), "%s.pid", role);
	put(dir, path, buf);
	snprintf(path, sizeof(path), "%s.ready", role);
	put(dir, path, "1\n");
	out = stdout;
	snprintf(path, sizeof(path), "%s/restored", dir);
	for (;;) {
		char pr[4096];

		if (!access(path, F_OK))
			break;
		snprintf(pr, sizeof(pr), "%s/probe", dir);
		if (make_timers && !access(pr, F_OK))
			probe(dir);
		usleep(10000);
	}
	if (!strcmp(role, "criu")) {
		snprintf(path, sizeof(path), "%s/criu.result", dir);
		out = fopen(path, "w");
		if (!out)
			return 2;
	}
	check(with_child);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (!strcmp(role, "criu")) {
		fclose(out);
		put(dir, "criu.done", "1\n");
	}
	return bad ? 1 : 0;
}
