// SPDX-License-Identifier: MIT
/*
 * slice_move ROLE DIR - a process whose threads hold rseq time-slice
 * extension state and whose timers are exact, for the slice-move case
 * (test/lib/slice-move.sh): dumped on one kernel, restored on another
 * (the slice kernel, Debian's stock 7.2, 6.12).  Unlike slice_grants it
 * runs on every kernel: what the kernel refuses is recorded, not skipped.
 *
 * The threads, in this order (tids ascend in it; the shell maps them by
 * rank):
 *   0 leader  glibc's registration, left as glibc made it
 *   1 prctl   its own area of getauxval(AT_RSEQ_FEATURE_SIZE) bytes (at
 *             least 32) aligned on AT_RSEQ_ALIGN, glibc's unregistered
 *             first; setup enables it by prctl(PR_RSEQ_SLICE_EXTENSION,
 *             SET, ENABLE) where the kernel lets it
 *   2 flag    the same area, registered with RSEQ_FLAG_SLICE_EXT_DEFAULT_ON
 *             (with no flag where the kernel refuses it: EINVAL)
 *   3 off     the same area, no flag, never enabled
 *   4 v1      a 32-byte area (the original ABI): no extension possible
 * Role fresh registers every own area but v1's with the flag (a program
 * that enables by default: a restore must disable what was disabled).
 * Role setup also makes five timers and deletes two (IDs 0, 2, 4 left):
 *   0 CLOCK_MONOTONIC, SIGEV_SIGNAL SIGRTMIN (counted), every 100 ms
 *   2 CLOCK_MONOTONIC, SIGEV_THREAD_ID at thread prctl, SIGRTMIN+1
 *     (counted), every 200 ms
 *   4 CLOCK_REALTIME, SIGEV_NONE, 1000 s from now, one shot
 * Protocol (test/lib/tst.h): DIR/ROLE.pid, .tids, .ready; then, each time
 * DIR/ask holds a number K it has not answered, DIR/state.K: a line a
 * thread, "ROLE TID GET FLAGS" (GET: prctl GET's answer, 1, 0 or -errno;
 * FLAGS: struct rseq.flags & (AVAILABLE|ENABLED) in hex), then "signals
 * N0 N2" (signals of timers 0 and 2 so far).  No file stays open but
 * DIR/ask while it is read, and stderr as the shell gives it: the shell
 * removes DIR/ask and gives /dev/null before a checkpoint that is restored
 * on another machine.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/rseq_slice.h"
#include "test/lib/tst.h"

#define STACK_SIZE			(256 * 1024)
#define SLICE_EXT_BITS			(SLICE_EXT_AVAILABLE | SLICE_EXT_ENABLED)

enum { LEADER, PRCTL, FLAG, OFF, V1, NT };
static const char *const role_name[NT] = { "leader", "prctl", "flag", "off", "v1" };

struct th {
	pthread_t pt;
	int tid;
	void *area;			/* the registered area (glibc's for the leader) */
	_Atomic int ask, done;		/* a report asked for, made */
	int get;
	uint32_t flags;
	const char *fail;		/* what failed while starting */
	int err;
};

static struct th T[NT];
static bool fresh;
static uint32_t feature_size, align_to;
static _Atomic int started;
static _Atomic unsigned long sigs[2];

static void report(struct th *t)
{
	t->get = prctl(PR_RSEQ_SLICE_EXTENSION_, PR_RSEQ_SLICE_EXTENSION_GET_, 0, 0, 0);
	if (t->get < 0)
		t->get = -errno;
	t->flags = t->area ? ((volatile uint32_t *)t->area)[4] & SLICE_EXT_BITS : 0;	/* flags: offset 16 */
	atomic_store(&t->done, atomic_load(&t->ask));
}

/* this thread's own area of len bytes, glibc's dropped first; flags as
 * asked, or none where the kernel does not know them */
static int own_area(struct th *t, uint32_t len, int flags)
{
	size_t sz = (len + align_to - 1) / align_to * align_to;
	uint32_t gl = glibc_len(feature_size, align_to);
	long r;

	if (gl && (r = rseq_sys(glibc_area(), gl, RSEQ_FLAG_UNREGISTER_, RSEQ_SIG))) {
		t->fail = "unregistering glibc's rseq area";
		return (int)r;
	}
	if (posix_memalign(&t->area, align_to, sz)) {
		t->fail = "posix_memalign";
		return -ENOMEM;
	}
	memset(t->area, 0, sz);
	r = rseq_sys(t->area, len, flags, RSEQ_SIG);
	if (r == -EINVAL && flags)
		r = rseq_sys(t->area, len, 0, RSEQ_SIG);
	if (r)
		t->fail = "rseq()";
	return (int)r;
}

static void *worker(void *arg)
{
	struct th *t = arg;
	int idx = (int)(t - T);
	uint32_t len = feature_size > 32 ? feature_size : 32;

	t->tid = gettid();
	if (idx == V1)
		t->err = own_area(t, 32, 0);
	else
		t->err = own_area(t, len, fresh || idx == FLAG ? RSEQ_FLAG_SLICE_EXT_DEFAULT_ON_ : 0);
	/* refused where the kernel has no extensions: recorded by GET */
	if (!t->err && !fresh && idx == PRCTL)
		prctl(PR_RSEQ_SLICE_EXTENSION_, PR_RSEQ_SLICE_EXTENSION_SET_, PR_RSEQ_SLICE_EXT_ENABLE_, 0, 0);
	atomic_fetch_add(&started, 1);
	while (!t->err) {
		if (atomic_load(&t->ask) != atomic_load(&t->done))
			report(t);
		usleep(2000);
	}
	return NULL;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	atomic_fetch_add(&sigs[sig == SIGRTMIN ? 0 : 1], 1);
}

static timer_t make_timer(clockid_t clock, int notify, int sig, int tid, long first_ms, long every_ms)
{
	struct sigevent sev = { .sigev_notify = notify, .sigev_signo = sig };
	struct itimerspec its = {
		.it_value = { first_ms / 1000, first_ms % 1000 * 1000000 },
		.it_interval = { every_ms / 1000, every_ms % 1000 * 1000000 },
	};
	timer_t id;

	sev.sigev_notify_thread_id = tid;
	if (timer_create(clock, &sev, &id) || (first_ms && timer_settime(id, 0, &its, NULL))) {
		fprintf(stderr, "slice_move: timer_create/settime: %s\n", strerror(errno));
		exit(2);
	}
	return id;
}

static void answer(int k)
{
	char name[32], buf[512];
	int n = 0;

	for (int i = 0; i < NT; i++)
		atomic_fetch_add(&T[i].ask, 1);
	report(&T[LEADER]);
	for (int i = 1; i < NT; i++)
		while (atomic_load(&T[i].done) != atomic_load(&T[i].ask))
			usleep(1000);
	for (int i = 0; i < NT; i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s %d %d %#x\n", role_name[i], T[i].tid, T[i].get, T[i].flags);
	snprintf(buf + n, sizeof(buf) - n, "signals %lu %lu\n", atomic_load(&sigs[0]), atomic_load(&sigs[1]));
	snprintf(name, sizeof(name), "state.%d", k);
	tst_put(name, "%s", buf);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_RESTART };

	if (argc != 3 || (strcmp(argv[1], "setup") && strcmp(argv[1], "fresh"))) {
		fprintf(stderr, "usage: slice_move setup|fresh DIR\n");
		return 2;
	}
	fresh = !strcmp(argv[1], "fresh");
	tst_init(argv[1], argv[2], "slice-move");
	feature_size = (uint32_t)getauxval(AT_RSEQ_FEATURE_SIZE_);
	align_to = (uint32_t)getauxval(AT_RSEQ_ALIGN_);
	if (align_to < 32)
		align_to = 32;
	if (!__rseq_size)
		tst_skip_all("glibc registered no rseq area (GLIBC_TUNABLES=glibc.pthread.rseq=0?)");
	sigaction(SIGRTMIN, &sa, NULL);
	sigaction(SIGRTMIN + 1, &sa, NULL);
	T[LEADER].tid = gettid();
	T[LEADER].area = glibc_area();
	for (int i = 1; i < NT; i++) {
		/* Stacks of its own, plain anonymous memory: glibc's would be
		 * MAP_STACK (VM_NOHUGEPAGE on a kernel with THP, 6.7+) with a
		 * guard region (MADV_GUARD_INSTALL, 6.13+), which criu restores
		 * as they are and a kernel without them refuses: what this
		 * case moves is the threads' slice state, not glibc's stacks
		 * (README: moves between kernels). */
		pthread_attr_t a;
		void *stk = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (stk == MAP_FAILED || pthread_attr_init(&a) || pthread_attr_setstack(&a, stk, STACK_SIZE) ||
		    pthread_create(&T[i].pt, &a, worker, &T[i])) {
			fprintf(stderr, "slice_move: pthread_create failed\n");
			return 2;
		}
		while (atomic_load(&started) < i)
			usleep(1000);
		if (T[i].err) {
			fprintf(stderr, "slice_move: thread %s: %s: %s\n", role_name[i], T[i].fail, strerror(-T[i].err));
			return 2;
		}
	}
	if (!fresh) {
		timer_t id[5];

		id[0] = make_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGRTMIN, 0, 100, 100);
		id[1] = make_timer(CLOCK_MONOTONIC, SIGEV_NONE, 0, 0, 0, 0);
		id[2] = make_timer(CLOCK_MONOTONIC, SIGEV_THREAD_ID, SIGRTMIN + 1, T[PRCTL].tid, 200, 200);
		id[3] = make_timer(CLOCK_MONOTONIC, SIGEV_NONE, 0, 0, 0, 0);
		id[4] = make_timer(CLOCK_REALTIME, SIGEV_NONE, 0, 0, 1000000, 0);
		timer_delete(id[1]);
		timer_delete(id[3]);
	}
	tst_ready();
	for (int last = 0;;) {
		char path[4096];
		FILE *f;
		int k = 0;

		snprintf(path, sizeof(path), "%s/ask", tst_dir());
		f = fopen(path, "re");
		if (f) {
			if (fscanf(f, "%d", &k) != 1)
				k = 0;
			fclose(f);
		}
		if (k > 0 && k != last)
			answer(last = k);
		else
			usleep(10000);
	}
}
