// SPDX-License-Identifier: MIT
/*
 * pending_timer ROLE [many] DIR - timers whose signal is queued and not
 * delivered (blocked), for test/cases/pending-expiry.sh; with many the
 * setup and criu roles also hold 1,500 disarmed SIGEV_NONE timers, made
 * after the four (case pending-expiry-many).
 *   setup: block SIGRTMIN..SIGRTMIN+2; a one-shot timer (SIGRTMIN,
 *     1 ms), a periodic one (SIGRTMIN+1, first after 2 ms, then every
 *     100 ms) and a periodic one aimed at the main thread (SIGEV_THREAD_ID,
 *     SIGRTMIN+2, the same times: its signal waits in the thread's own
 *     queue) expire while blocked, a fourth (SIGRTMIN, 1000 s) does not;
 *     a SIGRTMIN+1 sent with sigqueue() (sival 7) waits before the
 *     periodic timer's.  Writes the IDs to DIR/ids ("ONESHOT PERIODIC
 *     LATER THREAD"), waits to be dumped.  The kernel then holds one signal
 *     of each expired timer, its own (a periodic timer's later expiries are
 *     overruns).
 *   target: the same signals blocked, no timers; after DIR/restored
 *     appears, waits 250 ms (past the periodic timer's interval), takes
 *     what is queued without waiting, then takes signals for 300 ms, and
 *     prints one line per check: the one-shot's expiry exactly once, the
 *     periodic ones' queued exactly once each as at the dump (a second
 *     would be a copy beside the timer's own) and delivered again after
 *     (its own signal rearmed it), nothing of the later one; in the criu
 *     role also the sigqueue() signal exactly once.
 *   criu: setup, then the target's checks in this same process once
 *     DIR/restored appears (criu dumps and restores it and queues the
 *     pending signals again as plain copies; the plugin puts the timers'
 *     own in their place), the lines to DIR/criu.result, then
 *     DIR/criu.done.
 * Each writes DIR/ROLE.pid, then DIR/ROLE.ready.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tst.h"

/* many: 64 KiB of /proc/PID/timers are about 900 timers */
#define MANY	1500

/* tid: 0 for a process-directed signal, else SIGEV_THREAD_ID at that thread */
static int make_timer(int signo, long ns, long interval_ns, pid_t tid, timer_t *tm)
{
	struct sigevent ev = { .sigev_notify = tid ? SIGEV_THREAD_ID : SIGEV_SIGNAL, .sigev_signo = signo };
	struct itimerspec its = { .it_value = { ns / 1000000000, ns % 1000000000 },
				  .it_interval = { 0, interval_ns } };

	ev.sigev_notify_thread_id = tid;
	return timer_create(CLOCK_MONOTONIC, &ev, tm) || timer_settime(*tm, 0, &its, NULL);
}

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * The earliest CLOCK_MONOTONIC ns at which periodic timer id can queue a
 * fresh expiry: while its own signal waits the timer is not rearmed, and
 * timer_gettime() forwards it past now on its period's grid
 * (kernel/time/posix-timers.c common_timer_get()); dequeuing the signal
 * rearms it on the same grid.  A signal of the timer taken before that
 * instant was queued before any fresh expiry: a second one is a copy.  0
 * when unknown (no such timer).  A target stalled past it (a loaded
 * machine) cannot tell a copy from a fresh expiry, and counts the later
 * ones as fresh.
 */
static long long next_expiry_ns(int id)
{
	struct itimerspec cur;
	long long t = mono_ns();

	if (timer_gettime((timer_t)(long)id, &cur))
		return 0;
	return t + cur.it_value.tv_sec * 1000000000LL + cur.it_value.tv_nsec;
}

int main(int argc, char **argv)
{
	int ids[4] = { -1, -1, -1, -1 }, once = 0, queued = 0, periodic = 0, later = 0;
	int t_queued = 0, t_periodic = 0, kept = 0;
	long long e1, e3;
	struct timespec end, now;
	char path[4096];
	sigset_t set;
	bool many = argc == 4 && !strcmp(argv[2], "many");
	const char *dir = argv[argc - 1];
	FILE *f;

	if ((argc != 3 && !many) ||
	    (strcmp(argv[1], "setup") && strcmp(argv[1], "target") && strcmp(argv[1], "criu"))) {
		fprintf(stderr, "usage: %s setup|target|criu [many] DIR\n", argv[0]);
		return 2;
	}
	tst_init(argv[1], dir, "pending-expiry");
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigaddset(&set, SIGRTMIN + 1);
	sigaddset(&set, SIGRTMIN + 2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (strcmp(argv[1], "target")) {
		timer_t a, b, c, d;

		if (sigqueue(getpid(), SIGRTMIN + 1, (union sigval){ .sival_int = 7 })) {
			perror("pending_timer: sigqueue");
			return 2;
		}
		if (make_timer(SIGRTMIN, 1000000, 0, 0, &a) ||
		    make_timer(SIGRTMIN + 1, 2000000, 100000000, 0, &b) ||
		    make_timer(SIGRTMIN, 1000000000000L, 0, 0, &c) ||
		    make_timer(SIGRTMIN + 2, 2000000, 100000000, getpid(), &d)) {
			perror("pending_timer: timer_create");
			return 2;
		}
		/* many: more timers than the plugin reads when criu's core image
		 * alone carries them; a queued expiry must still be seen */
		for (int i = 0; many && i < MANY; i++) {
			struct sigevent ev = { .sigev_notify = SIGEV_NONE };
			timer_t x;

			if (timer_create(CLOCK_MONOTONIC, &ev, &x)) {
				perror("pending_timer: timer_create");
				return 2;
			}
		}
		nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
		tst_put("ids", "%d %d %d %d\n", (int)(long)a, (int)(long)b, (int)(long)c, (int)(long)d);
		tst_ready();
		if (!strcmp(argv[1], "setup"))
			for (;;)
				pause();
	} else {
		tst_ready();
	}
	/* role criu: the lines to DIR/criu.result */
	tst_wait_restored(NULL, 0);
	snprintf(path, sizeof(path), "%s/ids", dir);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%d %d %d %d", &ids[0], &ids[1], &ids[2], &ids[3]) != 4)
		return 2;
	fclose(f);
	/* six checks; role criu a seventh, the sigqueue() signal */
	tst_plan(strcmp(argv[1], "criu") ? 6 : 7);
	/* what is queued once the periodic timer had time to expire again */
	nanosleep(&(struct timespec){ 0, 250000000 }, NULL);
	e1 = next_expiry_ns(ids[1]);
	e3 = next_expiry_ns(ids[3]);
	for (;;) {
		siginfo_t si;
		long long t;

		if (sigtimedwait(&set, &si, &(struct timespec){ 0, 0 }) < 0)
			break;
		t = mono_ns();
		kept += si.si_code == SI_QUEUE && si.si_signo == SIGRTMIN + 1 && si.si_value.sival_int == 7;
		if (si.si_code != SI_TIMER)
			continue;
		once += si.si_timerid == ids[0] && si.si_signo == SIGRTMIN;
		later += si.si_timerid == ids[2];
		/* the first is the timer's own; one after it a copy, unless it
		 * may be a fresh expiry */
		if (si.si_timerid == ids[1] && si.si_signo == SIGRTMIN + 1) {
			if (!queued || t < e1)
				queued++;
			else
				periodic++;
		}
		if (si.si_timerid == ids[3] && si.si_signo == SIGRTMIN + 2) {
			if (!t_queued || t < e3)
				t_queued++;
			else
				t_periodic++;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_nsec += 300000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	for (;;) {
		struct timespec left;
		siginfo_t si;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left.tv_sec = end.tv_sec - now.tv_sec;
		left.tv_nsec = end.tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0) {
			left.tv_sec--;
			left.tv_nsec += 1000000000;
		}
		if (left.tv_sec < 0 || sigtimedwait(&set, &si, &left) < 0)
			break;
		if (si.si_code != SI_TIMER)
			continue;
		once += si.si_timerid == ids[0] && si.si_signo == SIGRTMIN;
		periodic += si.si_timerid == ids[1] && si.si_signo == SIGRTMIN + 1;
		t_periodic += si.si_timerid == ids[3] && si.si_signo == SIGRTMIN + 2;
		later += si.si_timerid == ids[2];
	}
	tst_check(once == 1, "one-shot-delivered-once", "%d times (timer %d)", once, ids[0]);
	tst_check(queued == 1, "periodic-queued-once", "%d queued (timer %d, as at the dump: its own)", queued, ids[1]);
	tst_check(periodic >= 1, "periodic-rearmed", "%d times in 300 ms after that (timer %d)", periodic, ids[1]);
	tst_check(later == 0, "unexpired-not-delivered", "%d times (timer %d)", later, ids[2]);
	tst_check(t_queued == 1, "thread-queued-once", "%d queued (timer %d, SIGEV_THREAD_ID)", t_queued, ids[3]);
	tst_check(t_periodic >= 1, "thread-rearmed", "%d times in 300 ms after that (timer %d)", t_periodic, ids[3]);
	if (!strcmp(argv[1], "criu"))
		tst_check(kept == 1, "sigqueue-signal-kept", "%d times (SIGRTMIN+1 from sigqueue(), sival 7)", kept);
	return tst_done();
}
