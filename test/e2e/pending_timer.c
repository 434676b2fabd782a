// SPDX-License-Identifier: MIT
/*
 * pending_timer ROLE DIR - timers whose signal is queued and not delivered
 * (blocked), for test/e2e/cases/pending_expiry.sh.
 *   setup: block SIGRTMIN and SIGUSR1; a one-shot timer (SIGRTMIN, 1 ms)
 *     and a periodic one (SIGUSR1, every 2 ms) both expire while blocked, a
 *     third (SIGRTMIN, 1000 s) does not; writes their IDs to DIR/ids
 *     ("ONESHOT PERIODIC LATER"), waits to be dumped.
 *   target: the same signals blocked, no timers; after DIR/restored
 *     appears, takes the queued signals for 300 ms and prints one line per
 *     check: the one-shot's expiry exactly once, the periodic one's at
 *     least once, nothing of the later one.
 *   criu: setup, then the target's checks in this same process once
 *     DIR/restored appears (criu dumps and restores it; criu queues the
 *     pending signals again itself, the plugin must not add its own), the
 *     lines to DIR/criu.result, then DIR/criu.done.
 * Each writes DIR/ROLE.pid, then DIR/ROLE.ready.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int make_timer(int signo, long ns, long interval_ns, timer_t *tm)
{
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = signo };
	struct itimerspec its = { .it_value = { ns / 1000000000, ns % 1000000000 },
				  .it_interval = { 0, interval_ns } };

	return timer_create(CLOCK_MONOTONIC, &ev, tm) || timer_settime(*tm, 0, &its, NULL);
}

static void mark(const char *dir, const char *role, const char *what)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.%s", dir, role, what);
	f = fopen(path, "w");
	if (f) {
		if (!strcmp(what, "pid"))
			fprintf(f, "%d\n", getpid());
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	int ids[3] = { -1, -1, -1 }, once = 0, periodic = 0, later = 0;
	struct timespec end, now, step = { 0, 10000000 };
	char path[4096];
	sigset_t set;
	FILE *f;

	if (argc != 3 || (strcmp(argv[1], "setup") && strcmp(argv[1], "target") && strcmp(argv[1], "criu"))) {
		fprintf(stderr, "usage: %s setup|target|criu DIR\n", argv[0]);
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (strcmp(argv[1], "target")) {
		timer_t a, b, c;

		if (make_timer(SIGRTMIN, 1000000, 0, &a) || make_timer(SIGUSR1, 2000000, 2000000, &b) ||
		    make_timer(SIGRTMIN, 1000000000000L, 0, &c)) {
			perror("pending_timer: timer_create");
			return 2;
		}
		nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
		snprintf(path, sizeof(path), "%s/ids", argv[2]);
		f = fopen(path, "w");
		if (!f)
			return 2;
		fprintf(f, "%d %d %d\n", (int)(long)a, (int)(long)b, (int)(long)c);
		fclose(f);
		mark(argv[2], argv[1], "pid");
		mark(argv[2], argv[1], "ready");
		if (!strcmp(argv[1], "setup"))
			for (;;)
				pause();
	} else {
		mark(argv[2], "target", "pid");
		mark(argv[2], "target", "ready");
	}
	snprintf(path, sizeof(path), "%s/restored", argv[2]);
	while (access(path, F_OK))
		nanosleep(&step, NULL);
	snprintf(path, sizeof(path), "%s/ids", argv[2]);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%d %d %d", &ids[0], &ids[1], &ids[2]) != 3)
		return 2;
	fclose(f);
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
		periodic += si.si_timerid == ids[1] && si.si_signo == SIGUSR1;
		later += si.si_timerid == ids[2];
	}
	if (!strcmp(argv[1], "criu")) {
		snprintf(path, sizeof(path), "%s/criu.result", argv[2]);
		if (!freopen(path, "w", stdout))
			return 2;
	}
	printf("%s pending-expiry/one-shot-delivered-once: %d times (timer %d)\n", once == 1 ? "PASS" : "FAIL",
	       once, ids[0]);
	printf("%s pending-expiry/periodic-delivered: %d times (timer %d)\n", periodic >= 1 ? "PASS" : "FAIL",
	       periodic, ids[1]);
	printf("%s pending-expiry/unexpired-not-delivered: %d times (timer %d)\n", later == 0 ? "PASS" : "FAIL",
	       later, ids[2]);
	fflush(stdout);
	if (!strcmp(argv[1], "criu"))
		mark(argv[2], "criu", "done");
	return once == 1 && periodic >= 1 && !later ? 0 : 1;
}
