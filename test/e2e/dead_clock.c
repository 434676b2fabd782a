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
 *     timer_gettime(), the leader's signal mask and its registers
 *     (regs_sleep) with what they were when it got ready (a dump that
 *     failed, or one that succeeded, must leave them), into
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

#include "test/lib/tst.h"

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
/* how many times probe() printed its lines */
static int probes;

static void on_sig(int s)
{
	got[s]++;
}

#define line tst_check

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

	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
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

/*
 * The leader waits in regs_sleep(): a nanosleep made by hand, with every
 * register the kernel keeps across a syscall set to a known value first
 * and compared after (x86_64: all but rax, rcx, r11; aarch64: all but x0).
 * ptimer stops the leader there and runs its code in it; a register it
 * does not give back as it found it shows here.  regs_bad: how many
 * sleeps came back with one changed; regs_sleeps: how many were checked.
 */
static volatile int regs_bad, regs_sleeps;

#if defined(__x86_64__)
#define REGS_CHECKED "rbx rdx rsi rdi r8 r9 r10 r12 r13 r14 r15"
static void regs_sleep(const struct timespec *ts)
{
	const struct timespec *arg = ts;
	long ok, expect = (long)ts;

	__asm__ volatile(
		"xor %%esi, %%esi\n\t"
		"movabs $0x0b0b0b0b0b0b0b0b, %%rbx\n\t"
		"movabs $0x1d1d1d1d1d1d1d1d, %%rdx\n\t"
		"movabs $0x0808080808080808, %%r8\n\t"
		"movabs $0x0909090909090909, %%r9\n\t"
		"movabs $0x1010101010101010, %%r10\n\t"
		"movabs $0x1212121212121212, %%r12\n\t"
		"movabs $0x1313131313131313, %%r13\n\t"
		"movabs $0x1414141414141414, %%r14\n\t"
		"movabs $0x1515151515151515, %%r15\n\t"
		"mov $35, %%eax\n\t"		/* __NR_nanosleep */
		"syscall\n\t"
		"xor %%eax, %%eax\n\t"
		"cmp %2, %%rdi\n\t jne 1f\n\t"
		"test %%rsi, %%rsi\n\t jne 1f\n\t"
		"movabs $0x0b0b0b0b0b0b0b0b, %%rcx\n\t cmp %%rcx, %%rbx\n\t jne 1f\n\t"
		"movabs $0x1d1d1d1d1d1d1d1d, %%rcx\n\t cmp %%rcx, %%rdx\n\t jne 1f\n\t"
		"movabs $0x0808080808080808, %%rcx\n\t cmp %%rcx, %%r8\n\t jne 1f\n\t"
		"movabs $0x0909090909090909, %%rcx\n\t cmp %%rcx, %%r9\n\t jne 1f\n\t"
		"movabs $0x1010101010101010, %%rcx\n\t cmp %%rcx, %%r10\n\t jne 1f\n\t"
		"movabs $0x1212121212121212, %%rcx\n\t cmp %%rcx, %%r12\n\t jne 1f\n\t"
		"movabs $0x1313131313131313, %%rcx\n\t cmp %%rcx, %%r13\n\t jne 1f\n\t"
		"movabs $0x1414141414141414, %%rcx\n\t cmp %%rcx, %%r14\n\t jne 1f\n\t"
		"movabs $0x1515151515151515, %%rcx\n\t cmp %%rcx, %%r15\n\t jne 1f\n\t"
		"mov $1, %%eax\n"
		"1:"
		: "=&a"(ok), "+D"(arg)
		: "m"(expect)
		: "rbx", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "memory", "cc");
	regs_sleeps++;
	if (!ok)
		regs_bad++;
}
#elif defined(__aarch64__)
#define REGS_CHECKED "x1-x28 (x29, x30)"
#define MOV64(r, v) "movz " r ", #" v "\n\t movk " r ", #" v ", lsl #16\n\t movk " r ", #" v ", lsl #32\n\t movk " r ", #" v ", lsl #48\n\t"
#define CMP64(r, v) MOV64("x0", v) "cmp " r ", x0\n\t b.ne 1f\n\t"
static void regs_sleep(const struct timespec *ts)
{
	register long x0 __asm__("x0") = (long)ts;
	long ok, expect = (long)ts;

	__asm__ volatile(
		"mov x9, x0\n\t"
		"mov x1, xzr\n\t"
		MOV64("x2", "0x0202") MOV64("x3", "0x0303") MOV64("x4", "0x0404") MOV64("x5", "0x0505")
		MOV64("x6", "0x0606") MOV64("x7", "0x0707") MOV64("x10", "0x1010") MOV64("x11", "0x1111")
		MOV64("x12", "0x1212") MOV64("x13", "0x1313") MOV64("x14", "0x1414") MOV64("x15", "0x1515")
		MOV64("x16", "0x1616") MOV64("x17", "0x1717") MOV64("x19", "0x1919") MOV64("x20", "0x2020")
		MOV64("x21", "0x2121") MOV64("x22", "0x2222") MOV64("x23", "0x2323") MOV64("x24", "0x2424")
		MOV64("x25", "0x2525") MOV64("x26", "0x2626") MOV64("x27", "0x2727") MOV64("x28", "0x2828")
		"mov x8, #101\n\t"		/* __NR_nanosleep */
		"svc #0\n\t"
		"cbnz x1, 1f\n\t"
		CMP64("x2", "0x0202") CMP64("x3", "0x0303") CMP64("x4", "0x0404") CMP64("x5", "0x0505")
		CMP64("x6", "0x0606") CMP64("x7", "0x0707") CMP64("x10", "0x1010") CMP64("x11", "0x1111")
		CMP64("x12", "0x1212") CMP64("x13", "0x1313") CMP64("x14", "0x1414") CMP64("x15", "0x1515")
		CMP64("x16", "0x1616") CMP64("x17", "0x1717") CMP64("x19", "0x1919") CMP64("x20", "0x2020")
		CMP64("x21", "0x2121") CMP64("x22", "0x2222") CMP64("x23", "0x2323") CMP64("x24", "0x2424")
		CMP64("x25", "0x2525") CMP64("x26", "0x2626") CMP64("x27", "0x2727") CMP64("x28", "0x2828")
		"ldr x0, %2\n\t cmp x9, x0\n\t b.ne 1f\n\t"
		"mov %0, #1\n\t b 2f\n"
		"1:\n\t mov %0, #0\n"
		"2:"
		: "=&r"(ok), "+r"(x0)
		: "m"(expect)
		: "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",
		  "x16", "x17", "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "memory", "cc");
	regs_sleeps++;
	if (!ok)
		regs_bad++;
}
#else
#define REGS_CHECKED ""
static void regs_sleep(const struct timespec *ts)
{
	nanosleep(ts, NULL);
}
#endif

/* DIR/probe: everything as when ready?  The running timers (B's dead
 * clock is frozen; K's child clock moves) are compared disarmed/armed. */
static void probe(const char *dir)
{
	char path[4096], blk[64];
	FILE *f, *save;

	snprintf(path, sizeof(path), "%s/probe.result", dir);
	f = fopen(path, "w");
	if (!f)
		return;
	save = tst_out(f);
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
	if (REGS_CHECKED[0])
		line(!regs_bad && regs_sleeps > 0, "probe-registers-as-before",
		     "%d of %d waits came back with %s changed", (int)regs_bad, (int)regs_sleeps, REGS_CHECKED);
	tst_out(save);
	fclose(f);
	probes++;
	snprintf(path, sizeof(path), "%s/probe", dir);
	unlink(path);
}

/* the timers of have[from..to] */
static int held(int from, int to)
{
	int n = 0;

	for (int k = from; k <= to; k++)
		n += have[k];
	return n;
}

/* the check lines this process prints, tst_plan's count: probe()'s each
 * time (a line a timer, the signal mask, the registers), then check()'s
 * (the IDs, each dead timer disarmed, the leader's clock as before and
 * firing, the dead never firing, the child's clock kept and firing) */
static int checks(bool with_child)
{
	return probes * (held(0, N_T - 1) + 1 + (REGS_CHECKED[0] != 0)) + 1 + held(T_A, T_E) + 3 +
	       (with_child ? 2 : 0);
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
		tst_note("dead-clock: timer E answered timer_getoverrun() -1 at setup (the kernel's quirk)");
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

/* DIR/probe asked for: the comparison (tst_wait's poll) */
static void poll_probe(void)
{
	char pr[4096];

	snprintf(pr, sizeof(pr), "%s/probe", tst_dir());
	if (!access(pr, F_OK))
		probe(tst_dir());
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
	tst_init(role, dir, "dead-clock");
	make_timers = strcmp(role, "verify") != 0;
	sigemptyset(&sa.sa_mask);
	for (int s = SIGRTMIN + 2; s <= SIGRTMIN + 6; s++)
		sigaction(s, &sa, NULL);
	if (make_timers) {
		pthread_t th;
		pid_t doomed_tid = 0;

		/* L first: the look at the clocks arms it before it meets the dead ones */
		make(T_L, CLOCK_THREAD_CPUTIME_ID, SIGEV_SIGNAL, SIG_L, 0, 0, 7, 0);
		/* E's and G's signals blocked in the doomed thread (inherited) */
		sigemptyset(&blk);
		sigaddset(&blk, SIG_E);
		sigaddset(&blk, SIG_G);
		pthread_sigmask(SIG_BLOCK, &blk, NULL);
		if (pthread_create(&th, NULL, doomed, &doomed_tid) || pthread_join(th, NULL)) {
			fprintf(stderr, "dead_clock: pthread_create failed\n");
			return 2;
		}
		/* the timers' "before" below must be the dead clock's */
		tst_thread_gone(doomed_tid);
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
		tst_put("ids", "%s", buf);
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
	tst_ready();
	tst_sleep_with(regs_sleep);
	tst_wait_restored(make_timers ? poll_probe : NULL, 0);
	tst_plan(checks(with_child));
	check(with_child);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	return tst_done();
}
