// SPDX-License-Identifier: MIT
/*
 * ptimer_task_kill (core/task.c) against real processes: a traced
 * multi-threaded process killed and its threads reaped, as the plugin does
 * to a task it could not complete while criu holds it.  The case that
 * matters is a pid namespace's init: its last thread to exit waits in
 * zap_pid_ns_processes() until every other pid is freed, the tracer's
 * zombies included, so a wait for the threads in tid order hangs whenever
 * that last thread is not the last tid.  With the leader exited first
 * (pthread_exit() while threads live) a non-leader is always that thread,
 * and a wait in order hung 4 of 6 times on 6.18.  Each shape is run
 * several times, each time with a fresh process; an alarm turns a hang
 * into a failure.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/task.h"
#include "core/util.h"
#include "lib/procfs.h"
#include "test/lib/tst.h"

#define THREADS 4	/* besides the leader */
#define ROUNDS 6

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* the target: THREADS sleeping threads; the leader exits first if asked */
static int target(void *arg)
{
	bool leader_exits = *(bool *)arg;
	pthread_t th;

	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&th, NULL, sleeper, NULL))
			_exit(1);
	if (leader_exits)
		syscall(SYS_exit, 0);
	sleeper(NULL);
	return 0;
}

/* every live thread of pid seized and in its ptrace stop, as criu holds a
 * task; the count seized, or -1 */
static int seize_all(pid_t pid, bool leader_exits)
{
	uint64_t end = ptimer_now_ns() + 5000000000ull;
	pid_t *tids = NULL;
	int n, seized = 0;

	/* the threads made and, if asked, the leader gone */
	for (;;) {
		char st[16] = "";

		n = ptimer_proc_threads(pid, &tids);
		if (n == THREADS + 1 &&
		    (!leader_exits || (!ptimer_proc_status(pid, pid, "State", st, sizeof(st)) && st[0] == 'Z')))
			break;
		if (n > 0)
			free(tids);
		if (ptimer_now_ns() > end)
			return -1;
		usleep(1000);
	}
	for (int i = 0; i < n; i++) {
		int st;

		if (leader_exits && tids[i] == pid)
			continue;
		if (ptrace(PTRACE_SEIZE, tids[i], NULL, NULL) || ptrace(PTRACE_INTERRUPT, tids[i], NULL, NULL) ||
		    waitpid(tids[i], &st, __WALL) != tids[i])
			break;
		seized++;
	}
	free(tids);
	return seized;
}

/* one round: NAME's target started (in a new pid namespace if pidns),
 * seized, killed; ptimer_task_kill must reap every thread, after which the
 * leader is its parent's to wait for, killed by SIGKILL */
static bool one(const char *name, bool pidns, bool leader_exits, double *ms)
{
	static char stack[1 << 16] __attribute__((aligned(16)));
	int flags = SIGCHLD | (pidns ? CLONE_NEWPID : 0), want = leader_exits ? THREADS : THREADS + 1;
	int n, left, st = 0;
	uint64_t t0, end;
	pid_t pid, r = 0;

	pid = clone(target, stack + sizeof(stack), flags, &leader_exits);
	if (pid < 0) {
		if (errno == EPERM) {
			SKIP(name, "clone(CLONE_NEWPID) not permitted here");
			return false;
		}
		FAIL(name, "clone: %s", strerror(errno));
		return false;
	}
	n = seize_all(pid, leader_exits);
	if (n != want) {
		FAIL(name, "seized %d threads, want %d", n, want);
		kill(pid, SIGKILL);
		waitpid(pid, &st, __WALL);
		return false;
	}
	t0 = ptimer_now_ns();
	left = ptimer_task_kill(pid, 5000);
	end = ptimer_now_ns() + 5000000000ull;
	while ((r = waitpid(pid, &st, WNOHANG)) == 0 && ptimer_now_ns() < end)
		usleep(1000);
	if (left || r != pid || !WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
		FAIL(name, "%d threads not reaped; then the leader's wait %d, status 0x%x (want killed by SIGKILL)",
		     left, (int)r, st);
		return false;
	}
	*ms = (double)(ptimer_now_ns() - t0) / 1e6;
	return true;
}

static void shapes(const char *what, bool pidns, bool leader_exits)
{
	char name[160];
	double ms = 0, most = 0;
	int ok = 0;

	snprintf(name, sizeof(name), "task-kill: %s, %d threads traced, killed and reaped, %d times", what,
		 leader_exits ? THREADS : THREADS + 1, ROUNDS);
	for (int i = 0; i < ROUNDS; i++) {
		if (!one(name, pidns, leader_exits, &ms))
			return;
		most = ms > most ? ms : most;
		ok++;
	}
	tst_note("%s: at most %.1f ms from the kill to the last thread reaped", what, most);
	CHECK(name, ok == ROUNDS, "%d of %d", ok, ROUNDS);
}

static void test_kill(void)
{
	alarm(60);	/* a hang is a failure, not a stuck suite */
	shapes("a process", false, false);
	shapes("a process whose leader exited", false, true);
	shapes("a pid namespace's init", true, false);
	shapes("a pid namespace's init whose leader exited", true, true);
}

int main(void)
{
	return CHECK_RUN(CHECK_TEST(test_kill));
}
