// SPDX-License-Identifier: MIT
/*
 * thread_cpu ROLE DIR - a CPU profiler's timers, for the e2e case
 * thread-clock and the criu suite: as Go's runtime/pprof does, every
 * burner thread creates a timer on its own CPU clock
 * (CLOCK_THREAD_CPUTIME_ID, which glibc passes as -2) that sends SIGPROF to
 * itself (SIGEV_THREAD_ID) every 10 ms of that thread's CPU time.
 *   setup: the main thread sleeps; BURNERS (3) threads burn CPU, each with
 *     its timer armed (10 ms, interval 10 ms); burner 0 also holds a
 *     disarmed one.  Writes DIR/tids ("MAIN B0 B1 B2"), DIR/ids (burner i's
 *     timer IDs: "ID0 ID1 ID2 DISARMED"), and waits.
 *   target: the same threads, no timers (a standalone restore's target);
 *     DIR/target.tids; then as criu.
 *   criu: setup, then once DIR/restored appears (criu dumped and restored
 *     it, or ptimer restored the timers into the target) measures until
 *     every burner has used 0.2 s of CPU (at most 10 s: a busy machine
 *     gives each less than a core): each must take SIGPROF at least at half
 *     the profiler's rate over the CPU time it used (>= 50 per CPU second,
 *     less the first period, which the restore may have begun), and the
 *     disarmed timer must still be disarmed.  One PASS/FAIL line each to
 *     DIR/ROLE.result, then DIR/ROLE.done.
 * Each writes DIR/ROLE.pid, then DIR/ROLE.ready, once set up.
 */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tst.h"

#define BURNERS 3

static pid_t tids[BURNERS + 1];
static volatile int ready_threads;
static volatile long samples[BURNERS];
static timer_t ids[BURNERS + 1];
static int make_timers;

static int burner_of(pid_t tid)
{
	for (int i = 0; i < BURNERS; i++)
		if (tids[i + 1] == tid)
			return i;
	return -1;
}

static void on_prof(int sig)
{
	int i = burner_of((pid_t)syscall(SYS_gettid));

	if (i >= 0)
		__atomic_add_fetch(&samples[i], 1, __ATOMIC_RELAXED);
}

static int thread_timer(timer_t *t, long ns)
{
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGPROF };
	struct itimerspec its = { .it_value = { 0, ns }, .it_interval = { 0, ns } };

	ev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, t))
		return -1;
	return ns ? timer_settime(*t, 0, &its, NULL) : 0;
}

static void *burn(void *arg)
{
	long i = (long)arg;
	volatile unsigned long x = 0;

	tids[i + 1] = (pid_t)syscall(SYS_gettid);
	if (make_timers && (thread_timer(&ids[i], 10000000) || (i == 0 && thread_timer(&ids[BURNERS], 0)))) {
		perror("thread_cpu: timer_create");
		exit(2);
	}
	__atomic_add_fetch(&ready_threads, 1, __ATOMIC_SEQ_CST);
	for (;;)
		x++;
	return NULL;
}

static double cpu_of(pid_t tid)
{
	char path[64];
	unsigned long long ns = 0;
	FILE *f;

	/* field 1 of schedstat: time on the CPU, ns */
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	if (f)
		fclose(f);
	return ns / 1e9;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_prof, .sa_flags = SA_RESTART };
	const char *role = argc == 3 ? argv[1] : "", *dir = argv[2];
	char buf[256], path[4096];
	double c0[BURNERS], c1[BURNERS];
	long s0[BURNERS];
	struct itimerspec its;
	FILE *out;
	int bad = 0;

	if (strcmp(role, "setup") && strcmp(role, "target") && strcmp(role, "criu")) {
		fprintf(stderr, "usage: thread_cpu setup|target|criu DIR\n");
		return 2;
	}
	tst_init(role, dir, "thread-clock");
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	make_timers = strcmp(role, "target") != 0;
	tids[0] = getpid();
	for (long i = 0; i < BURNERS; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, burn, (void *)i)) {
			fprintf(stderr, "thread_cpu: pthread_create failed\n");
			return 2;
		}
	}
	while (__atomic_load_n(&ready_threads, __ATOMIC_SEQ_CST) < BURNERS)
		usleep(1000);
	snprintf(buf, sizeof(buf), "%d %d %d %d\n", tids[0], tids[1], tids[2], tids[3]);
	tst_put(strcmp(role, "target") ? "tids" : "target.tids", "%s", buf);
	if (make_timers) {
		snprintf(buf, sizeof(buf), "%d %d %d %d\n", (int)(long)ids[0], (int)(long)ids[1], (int)(long)ids[2],
			 (int)(long)ids[3]);
		tst_put("ids", "%s", buf);
	}
	snprintf(path, sizeof(path), "%s.pid", role);
	snprintf(buf, sizeof(buf), "%d\n", getpid());
	tst_put(path, "%s", buf);
	snprintf(path, sizeof(path), "%s.ready", role);
	tst_put(path, "%s", "1\n");
	if (!strcmp(role, "setup"))
		for (;;)
			pause();
	snprintf(path, sizeof(path), "%s/restored", dir);
	while (access(path, F_OK))
		usleep(10000);
	/* the timers of a standalone restore's target are the image's IDs */
	if (!make_timers) {
		snprintf(path, sizeof(path), "%s/ids", dir);
		out = fopen(path, "r");
		int a, b, c, d;

		if (!out || fscanf(out, "%d %d %d %d", &a, &b, &c, &d) != 4)
			return 2;
		fclose(out);
		ids[BURNERS] = (timer_t)(long)d;
	}
	for (int i = 0; i < BURNERS; i++) {
		c0[i] = cpu_of(tids[i + 1]);
		s0[i] = __atomic_load_n(&samples[i], __ATOMIC_RELAXED);
	}
	for (int waited = 0; waited < 100; waited++) {
		bool enough = true;

		usleep(100000);
		for (int i = 0; i < BURNERS; i++)
			enough = enough && cpu_of(tids[i + 1]) - c0[i] >= 0.2;
		if (enough)
			break;
	}
	snprintf(path, sizeof(path), "%s/%s.result", dir, role);
	out = fopen(path, "w");
	if (!out)
		return 2;
	for (int i = 0; i < BURNERS; i++) {
		long got = __atomic_load_n(&samples[i], __ATOMIC_RELAXED) - s0[i];
		double cpu;

		c1[i] = cpu_of(tids[i + 1]);
		cpu = c1[i] - c0[i];
		bool ok = cpu >= 0.2 && got >= cpu * 50 - 1;

		bad += !ok;
		fprintf(out, "%s thread-clock/burner%d-profiled: %ld SIGPROF for %.3f s of its CPU time (want >= %.0f%s)\n",
			ok ? "PASS" : "FAIL", i, got, cpu, cpu * 50 - 1, cpu >= 0.2 ? "" : "; starved: under 0.2 s in 10 s");
	}
	if (timer_gettime(ids[BURNERS], &its) == 0) {
		bool off = !its.it_value.tv_sec && !its.it_value.tv_nsec;

		bad += !off;
		fprintf(out, "%s thread-clock/disarmed-stays-disarmed: it_value %ld.%09ld\n", off ? "PASS" : "FAIL",
			(long)its.it_value.tv_sec, its.it_value.tv_nsec);
	} else {
		bad++;
		fprintf(out, "FAIL thread-clock/disarmed-stays-disarmed: timer_gettime: %s\n", strerror(errno));
	}
	fclose(out);
	snprintf(buf, sizeof(buf), "%s.done", role);
	tst_put(buf, "%s", "1\n");
	return bad ? 1 : 0;
}
