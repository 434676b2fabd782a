// SPDX-License-Identifier: MIT
/*
 * tid_reuse: timers aimed at (or measuring) a thread that has exited while
 * a new thread of the process was given its number, for the case
 * tid-reuse.
 *
 *   tid_reuse dump|criu [kill] DIR
 *
 * Thread A gets four timers: A_PERIODIC (CLOCK_MONOTONIC, SIGEV_THREAD_ID
 * at A, SIGRTMIN+1 every 10 ms), A_ONESHOT (the same, SIGRTMIN+2, once in
 * 1000 s), A_DISARMED (SIGRTMIN+3, disarmed), A_CLOCK (on A's thread CPU
 * clock, SIGEV_SIGNAL SIGRTMIN+5, disarmed); thread B, which lives on, the
 * controls B_PERIODIC (SIGEV_THREAD_ID at B, SIGRTMIN+4 every 20 ms),
 * B_CLOCK (B's thread CPU clock, disarmed) and B_ONESHOT (at B, once in
 * 1000 s), armed in step with L_ONESHOT (at the leader, never looked at).  A exits; thread C is then
 * given A's number (ns_last_pid, Linux 3.3; retried while another process
 * takes it first).  The kernel keeps A's timers on A (a struct pid, not a
 * number): C receives nothing, and timer_settime() of A_CLOCK answers
 * ESRCH.  kill: also A_KILL (SIGEV_THREAD_ID at A, SIGRTMIN+7, which no
 * thread handles or blocks: its default action ends the process, every
 * 20 ms).  Then DIR/ROLE.pid, .tids, .ready.
 *
 * Once DIR/restored exists (dump: `ptimer dump` has run; criu: criu dumped
 * and restored the process) the process checks that it still is so: C
 * gets no signal of A's timers in 500 ms, B gets its own (>= 5), A_ONESHOT
 * keeps its remaining time, A_CLOCK never fires (ESRCH, or a timer that
 * does not fire), A_DISARMED armed again (every 10 ms) reaches no thread,
 * every timer ID is there; role dump also that B_ONESHOT is as far from
 * L_ONESHOT as before (the look gives a timer back its time) and that
 * /proc/self/timers reads as before.  Exit 4 before ready: ns_last_pid
 * cannot be written here.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tst.h"

enum { A_PERIODIC, A_ONESHOT, A_DISARMED, A_CLOCK, B_PERIODIC, B_CLOCK, B_ONESHOT, L_ONESHOT, A_KILL, N_TIMERS };

static int ids[N_TIMERS];
static volatile pid_t tid_a, tid_b, tid_c;
static volatile int got_c, got_b, got_b_elsewhere, got_clock;
static volatile int quit_c, quit_b, spin_c;

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void on_signal(int sig)
{
	pid_t me = gettid_();

	if (sig == SIGRTMIN + 4) {
		if (me == tid_b)
			__atomic_add_fetch(&got_b, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&got_b_elsewhere, 1, __ATOMIC_RELAXED);
	} else if (sig == SIGRTMIN + 5) {
		__atomic_add_fetch(&got_clock, 1, __ATOMIC_RELAXED);
	} else if (sig <= SIGRTMIN + 3 && me == tid_c) {
		__atomic_add_fetch(&got_c, 1, __ATOMIC_RELAXED);
	}
}

/* timer_create(2) itself: the kernel's timer ID back */
static int make(clockid_t clock, int notify, int signo, pid_t tid)
{
	struct sigevent sev = { .sigev_notify = notify, .sigev_signo = signo };
	int id = -1;

	sev.sigev_value.sival_int = signo;
	sev._sigev_un._tid = tid;
	if (syscall(SYS_timer_create, clock, &sev, &id))
		return -1;
	return id;
}

static long arm(int id, long value_ns, long interval_ns)
{
	struct itimerspec its = {
		.it_value = { value_ns / 1000000000L, value_ns % 1000000000L },
		.it_interval = { interval_ns / 1000000000L, interval_ns % 1000000000L },
	};

	return syscall(SYS_timer_settime, id, 0, &its, NULL) ? -errno : 0;
}

static clockid_t thread_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned int)tid << 3) | 6);	/* CPUCLOCK_SCHED | PERTHREAD */
}

static void *thread_a(void *arg)
{
	tid_a = gettid_();
	while (!__atomic_load_n((volatile int *)arg, __ATOMIC_ACQUIRE))
		usleep(1000);
	return NULL;
}

static void *idle(void *arg)
{
	volatile pid_t *me = arg;
	volatile int *quit = me == &tid_c ? &quit_c : &quit_b;

	*me = gettid_();
	while (!__atomic_load_n(quit, __ATOMIC_ACQUIRE))
		if (!(me == &tid_c && __atomic_load_n(&spin_c, __ATOMIC_ACQUIRE)))
			usleep(2000);	/* C spins on demand: its CPU clock moves */
	return NULL;
}

/* how much longer B_ONESHOT has left than L_ONESHOT, ns */
static long skew(void)
{
	struct itimerspec b, l;

	syscall(SYS_timer_gettime, ids[L_ONESHOT], &l);
	syscall(SYS_timer_gettime, ids[B_ONESHOT], &b);
	return (long)(b.it_value.tv_sec - l.it_value.tv_sec) * 1000000000L + (b.it_value.tv_nsec - l.it_value.tv_nsec);
}

/* /proc/self/timers into buf[len] (NUL-terminated) */
static char *read_timers(char *buf, size_t len)
{
	int fd = open("/proc/self/timers", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

/* thread C created with A's number: 0, or 1 when another process took it */
static int reuse(int fd, pthread_t *th)
{
	char s[32];
	int len = snprintf(s, sizeof(s), "%d", tid_a - 1);

	if (pwrite(fd, s, (size_t)len, 0) != len)
		tst_skip_all("cannot write /proc/sys/kernel/ns_last_pid: %s", strerror(errno));
	tid_c = 0;
	quit_c = 0;
	if (pthread_create(th, NULL, idle, (void *)&tid_c))
		tst_skip_all("pthread_create failed");
	while (!tid_c)
		usleep(100);
	if (tid_c == tid_a)
		return 0;
	__atomic_store_n(&quit_c, 1, __ATOMIC_RELEASE);
	pthread_join(*th, NULL);
	tst_thread_gone(tid_c);
	return 1;
}

int main(int argc, char **argv)
{
	const char *role = argc >= 3 ? argv[1] : "";
	int with_kill = argc == 4 && !strcmp(argv[2], "kill"), n_timers = with_kill ? N_TIMERS : A_KILL;
	struct sigaction sa = { .sa_handler = on_signal };
	struct itimerspec its;
	pthread_t ta, tb, tc;
	int go = 0, fd, tries = 0, c0, b0, e0, k0;
	static char before[8192], after[8192];
	struct timespec t0, t1;
	double dt, rate_b;
	long skew0;
	long r;

	if ((strcmp(role, "dump") && strcmp(role, "criu")) || argc > 4 || (argc == 4 && !with_kill)) {
		fprintf(stderr, "usage: tid_reuse dump|criu [kill] DIR\n");
		return 2;
	}
	tst_init(role, argv[argc - 1], "tid-reuse");
	sigemptyset(&sa.sa_mask);
	for (int s = SIGRTMIN + 1; s <= SIGRTMIN + 5; s++)
		sigaction(s, &sa, NULL);
	fd = open("/proc/sys/kernel/ns_last_pid", O_RDWR);
	if (fd < 0)
		tst_skip_all("/proc/sys/kernel/ns_last_pid: %s", strerror(errno));
	if (pthread_create(&tb, NULL, idle, (void *)&tid_b) || pthread_create(&ta, NULL, thread_a, &go))
		tst_skip_all("pthread_create failed");
	while (!tid_a || !tid_b)
		usleep(100);
	ids[A_PERIODIC] = make(CLOCK_MONOTONIC, SIGEV_THREAD_ID, SIGRTMIN + 1, tid_a);
	ids[A_ONESHOT] = make(CLOCK_MONOTONIC, SIGEV_THREAD_ID, SIGRTMIN + 2, tid_a);
	ids[A_DISARMED] = make(CLOCK_REALTIME, SIGEV_THREAD_ID, SIGRTMIN + 3, tid_a);
	ids[A_CLOCK] = make(thread_clock(tid_a), SIGEV_SIGNAL, SIGRTMIN + 5, 0);
	ids[B_PERIODIC] = make(CLOCK_MONOTONIC, SIGEV_THREAD_ID, SIGRTMIN + 4, tid_b);
	ids[B_CLOCK] = make(thread_clock(tid_b), SIGEV_SIGNAL, SIGRTMIN + 5, 0);
	ids[B_ONESHOT] = make(CLOCK_MONOTONIC, SIGEV_THREAD_ID, SIGRTMIN + 4, tid_b);
	ids[L_ONESHOT] = make(CLOCK_MONOTONIC, SIGEV_THREAD_ID, SIGRTMIN + 4, getpid());
	if (with_kill)
		ids[A_KILL] = make(CLOCK_MONOTONIC, SIGEV_THREAD_ID, SIGRTMIN + 7, tid_a);
	for (int i = 0; i < n_timers; i++)
		if (ids[i] < 0)
			tst_skip_all("timer_create %d: %s", i, strerror(errno));
	if (arm(ids[A_PERIODIC], 10000000, 10000000) || arm(ids[A_ONESHOT], 1000000000000L, 0) ||
	    arm(ids[B_PERIODIC], 20000000, 20000000) || arm(ids[L_ONESHOT], 1000000000000L, 0) ||
	    arm(ids[B_ONESHOT], 1000000000000L, 0) || (with_kill && arm(ids[A_KILL], 20000000, 20000000)))
		tst_skip_all("timer_settime failed");
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	pthread_join(ta, NULL);
	tst_thread_gone(tid_a);
	while (reuse(fd, &tc))
		if (++tries == 200)
			tst_skip_all("thread %d's number went to other processes 200 times", tid_a);
	close(fd);
	/* the kernel's own view: nothing reaches C, A's clock is gone */
	usleep(100000);
	if (got_c)
		tst_skip_all("this kernel signals a thread with an exited thread's number");
	r = arm(ids[A_CLOCK], 1000000000000L, 0);
	if (r != -ESRCH)
		tst_skip_all("timer_settime on the exited thread's clock answered %ld, not -ESRCH", r);
	/* signals a second per thread before the checkpoint: B's own, none to C */
	b0 = got_b;
	usleep(300000);
	rate_b = (got_b - b0) / 0.3;
	read_timers(before, sizeof(before));
	tst_put("ids", "%d %d %d %d %d %d %d %d %d\n", ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], ids[6],
		ids[7], with_kill ? ids[A_KILL] : -1);
	skew0 = skew();
	tst_put("threads", "%d %d\n", tid_a, tid_b);
	tst_ready();
	tst_wait_restored(NULL, 0);
	tst_plan(!strcmp(role, "dump") ? 9 : 7);

	c0 = got_c, b0 = got_b, e0 = got_b_elsewhere;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	usleep(500000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	tst_check(got_c == c0, "new-thread-no-signal", "thread %d (the exited thread's number) got %.0f signals a "
		  "second of the exited thread's timers (0 before; want 0)", tid_c, (got_c - c0) / dt);
	tst_check((got_b - b0) / dt >= rate_b / 4 && got_b - b0 >= 5 && got_b_elsewhere == e0, "live-target-fires",
		  "thread %d got %.0f of its 20 ms timer's signals a second (%.0f before; want a quarter of that or more), "
		  "other threads %d (want 0)", tid_b, (got_b - b0) / dt, rate_b, got_b_elsewhere - e0);
	r = syscall(SYS_timer_gettime, ids[A_ONESHOT], &its) ? -errno : 0;
	tst_check(!r && its.it_value.tv_sec > 900 && its.it_value.tv_sec <= 1000 && !its.it_interval.tv_sec,
		  "one-shot-kept", "timer %d: %ld, %ld s left, interval %ld s (want about 1000 s, once)",
		  ids[A_ONESHOT], r, (long)its.it_value.tv_sec, (long)its.it_interval.tv_sec);
	r = syscall(SYS_timer_gettime, ids[A_DISARMED], &its) ? -errno : 0;
	tst_check(!r && !its.it_value.tv_sec && !its.it_value.tv_nsec, "disarmed-kept",
		  "timer %d: %ld, %ld.%09ld s left (want disarmed)", ids[A_DISARMED], r, (long)its.it_value.tv_sec,
		  (long)its.it_value.tv_nsec);
	/* A's clock: armed for 1 ms of a thread's CPU time, C spinning meanwhile */
	k0 = got_clock;
	r = arm(ids[A_CLOCK], 1000000, 0);
	__atomic_store_n(&spin_c, 1, __ATOMIC_RELEASE);
	usleep(200000);
	__atomic_store_n(&spin_c, 0, __ATOMIC_RELEASE);
	if (!r)
		arm(ids[A_CLOCK], 0, 0);
	tst_check(r == -ESRCH || (!r && got_clock == k0), "dead-clock-never-fires", "timer %d (the exited thread's "
		  "CPU clock): timer_settime %ld, %d signals (want -ESRCH, or 0 and none while thread %d ran 200 ms)", ids[A_CLOCK], r,
		  got_clock - k0, tid_c);
	/* A_DISARMED armed again by the program: still the exited thread's */
	c0 = got_c;
	r = arm(ids[A_DISARMED], 10000000, 10000000);
	usleep(300000);
	if (!r)
		arm(ids[A_DISARMED], 0, 0);
	tst_check(got_c == c0, "rearmed-no-signal", "timer %d armed again every 10 ms (%ld): thread %d got %d of "
		  "its signals in 0.3 s (want 0)", ids[A_DISARMED], r, tid_c, got_c - c0);
	r = 0;
	for (int i = 0; i < n_timers && !r; i++)
		r = syscall(SYS_timer_gettime, ids[i], &its) ? ids[i] : 0;
	if (r)
		tst_fail("ids-kept", "timer %ld is missing", r);
	else
		tst_check(1, "ids-kept", "all %d timers are there", n_timers);
	if (!strcmp(role, "dump")) {
		read_timers(after, sizeof(after));
		tst_check(labs(skew() - skew0) < 1000000, "live-timer-time-kept", "timer %d (at thread %d, looked "
			  "at) minus timer %d (at the leader): %ld ns left, %ld ns before the dump (want within 1 ms)",
			  ids[B_ONESHOT], tid_b, ids[L_ONESHOT], skew(), skew0);
		if (strcmp(before, after))
			tst_fail("proc-timers-unchanged", "/proc/self/timers was: %s; and is: %s", before, after);
		else
			tst_check(1, "proc-timers-unchanged", "/proc/self/timers reads as before the dump");
	}
	return tst_done();
}
