// SPDX-License-Identifier: MIT
/*
 * still_target: a process whose every thread sits blocked in a syscall and
 * whose signal state stays as it is while nobody touches it, yet holds
 * what `ptimer dump` looks at, for fail-nth's dump campaign
 * (test/cases/fail-nth.sh): after each failed dump the process must be
 * exactly as it was, and here "as it was" does not move by itself.
 *
 *   still_target setup DIR
 *
 * Three threads: the leader (pause()), the checker (read() on DIR/ask) and
 * the idle one (pause()).  Every thread blocks SIGUSR1, SIGUSR2 and
 * SIGRTMIN..SIGRTMIN+7 (set before the threads start, inherited).  Timers,
 * none of which expires during a campaign but the pending one:
 *   T_AIMED   CLOCK_MONOTONIC, SIGEV_THREAD_ID at the checker, SIGRTMIN+1,
 *             1000 s one-shot: the dump's aim probe (core/aim_probe.c)
 *             makes it expire for 1 ns and takes its signal back inside
 *             the checker
 *   T_LEADER  CLOCK_REALTIME, SIGEV_THREAD_ID at the leader, SIGRTMIN+2,
 *             1000 s, interval 7 s
 *   T_CPU     the idle thread's CPU clock (pthread_getcpuclockid), process
 *             signal SIGRTMIN+3, 1000 s: that thread never runs again
 *   T_PENDING CLOCK_MONOTONIC, process signal SIGRTMIN+4 (blocked),
 *             interval 1 ms: expired before ready, its signal pending for
 *             good (the kernel re-arms a periodic timer only once its
 *             signal is taken, kernel/time/posix-timers.c since 6.13; the
 *             expiries in between count as overruns)
 * Signals queued before ready, which must stay queued, in order:
 *   Q_SHARED  SIGRTMIN+5, sigqueue() to the process, values 1, 2, 3
 *   Q_PRIVATE SIGRTMIN+6, pthread_sigqueue() to the checker, values 11, 12
 *   SIGUSR1   kill() to the process (a standard signal, a mask bit only)
 * Writes DIR/setup.pid, DIR/setup.tids and DIR/setup.ready (test/lib/tst.h),
 * prints "# thread TID rseq 0xADDR" for each thread (leader first).  Exit
 * 4 (a SKIP) when a timer cannot be made.
 *
 * The check on request: each byte written to the FIFO DIR/ask makes the
 * checker look at what cannot be seen from outside and write one line to
 * the FIFO DIR/answer, then block in the same read() again (its
 * /proc/PID/task/TID/syscall line as before):
 *   "ok rseq=R/T exact_ids=off|n/a queue=Q/5"   or
 *   "changed: WHAT[; WHAT...]"
 * where R of T threads have an rseq area registered with the kernel (glibc
 * registers one per thread, <sys/rseq.h>: at the thread pointer +
 * __rseq_offset; the kernel keeps its cpu_id >= 0 while registered and
 * sets it to RSEQ_CPU_ID_UNINITIALIZED, -1, when unregistered) and with
 * rseq_cs 0 (no critical section of the thread's own is going on);
 * rseq=0/T, not a change, when glibc registered none (__rseq_size 0).
 * exact_ids: prctl(PR_TIMER_CREATE_RESTORE_IDS, ..._GET) (lib/timer.h,
 * Linux 6.15+), 0 (off) wanted; n/a when the kernel answers EINVAL (it
 * has no such prctl).  queue: the Q_PRIVATE and Q_SHARED signals taken
 * with sigtimedwait() and queued again as they were (rt_tgsigqueueinfo()
 * to the checker, rt_sigqueueinfo() to the process: from the process
 * itself the kernel takes any siginfo), each compared with what was
 * queued: signo, si_code SI_QUEUE, si_pid, si_uid and value, in the
 * kernel's order (the thread's own queue first, then the process's; lower
 * signal first; FIFO within one: dequeue_signal(), kernel/signal.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/timer.h"
#include "test/lib/tst.h"

enum { TH_LEADER, TH_CHECKER, TH_IDLE, NTH };
#define NQUEUED 5

/*
 * The kernel's struct rseq as the ABI fixes it (include/uapi/linux/rseq.h):
 * cpu_id_start, cpu_id (u32 each), then rseq_cs (u64), whatever the
 * headers at hand call the fields.
 */
struct rseq_view {
	uint32_t cpu_id_start;
	uint32_t cpu_id;
	uint64_t rseq_cs;
};

static volatile struct rseq_view *rseq_of[NTH];	/* NULL: glibc registered none */
static pid_t tid_of[NTH];
static int started;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ask_fd, answer_fd;
static siginfo_t queued[NQUEUED];	/* what was queued, in dequeue order */

/* This thread's tid and struct rseq, published for the checker. */
static void publish(int i)
{
	tid_of[i] = gettid();
	rseq_of[i] = __rseq_size ? (volatile struct rseq_view *)((char *)__builtin_thread_pointer() + __rseq_offset)
				 : NULL;
	pthread_mutex_lock(&mu);
	started++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void *idle_main(void *arg)
{
	publish(TH_IDLE);
	for (;;)
		pause();
	return arg;
}

/* why: append "; " and the formatted reason to buf (len bytes) */
static void why(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 3 >= len)
		return;
	if (n) {
		strcpy(buf + n, "; ");
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/*
 * The queued signals taken (this thread's own queue first, then the
 * process's: sigtimedwait() with no wait) and put back as they were;
 * each compared with queued[].  Returns how many matched in place; the
 * differences appended to bad.
 */
static int queue_check(char *bad, size_t len)
{
	siginfo_t got[NQUEUED + 8];
	struct timespec zero = { 0, 0 };
	sigset_t set;
	int n = 0, same = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 5);
	sigaddset(&set, SIGRTMIN + 6);
	while (n < (int)(sizeof(got) / sizeof(got[0])) && sigtimedwait(&set, &got[n], &zero) > 0)
		n++;
	/* back where they were, in the order taken: the checker's own first */
	for (int i = 0; i < n; i++) {
		long r = got[i].si_signo == SIGRTMIN + 6 ?
			syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), got[i].si_signo, &got[i]) :
			syscall(SYS_rt_sigqueueinfo, getpid(), got[i].si_signo, &got[i]);

		if (r)
			why(bad, len, "queueing signal %d (value %d) again: %s", got[i].si_signo,
			    got[i].si_value.sival_int, strerror(errno));
	}
	for (int i = 0; i < n && i < NQUEUED; i++) {
		const siginfo_t *w = &queued[i], *g = &got[i];

		if (g->si_signo == w->si_signo && g->si_code == w->si_code && g->si_pid == w->si_pid &&
		    g->si_uid == w->si_uid && g->si_value.sival_int == w->si_value.sival_int)
			same++;
		else
			why(bad, len, "queued signal %d: signo %d code %d pid %d value %d, was signo %d code %d "
			    "pid %d value %d", i + 1, g->si_signo, g->si_code, g->si_pid, g->si_value.sival_int,
			    w->si_signo, w->si_code, w->si_pid, w->si_value.sival_int);
	}
	if (n != NQUEUED)
		why(bad, len, "%d signals of %d and %d queued, was %d", n, SIGRTMIN + 5, SIGRTMIN + 6, NQUEUED);
	return same;
}

/* One answer: what the kernel keeps of this process that /proc does not show. */
static void answer(void)
{
	char bad[1024] = "", line[1200];
	int reg = 0, q;
	const char *ids = "off";
	int r;

	for (int i = 0; i < NTH; i++) {
		volatile struct rseq_view *rs = rseq_of[i];
		int32_t cpu;
		uint64_t cs;

		if (!rs)
			continue;
		cpu = (int32_t)rs->cpu_id;
		cs = rs->rseq_cs;
		if (cpu >= 0)
			reg++;
		else
			why(bad, sizeof(bad), "thread %d: rseq cpu_id %d (not registered)", tid_of[i], cpu);
		if (cs)
			why(bad, sizeof(bad), "thread %d: rseq_cs 0x%llx, not 0", tid_of[i], (unsigned long long)cs);
	}
	r = prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0);
	if (r < 0 && errno == EINVAL)
		ids = "n/a";
	else if (r < 0)
		why(bad, sizeof(bad), "prctl(PR_TIMER_CREATE_RESTORE_IDS, GET): %s", strerror(errno));
	else if (r != PTIMER_PR_TIMER_CREATE_RESTORE_IDS_OFF)
		why(bad, sizeof(bad), "exact-ID mode is %d, not off", r);
	q = queue_check(bad, sizeof(bad));
	if (bad[0])
		snprintf(line, sizeof(line), "changed: %s\n", bad);
	else
		snprintf(line, sizeof(line), "ok rseq=%d/%d exact_ids=%s queue=%d/%d\n", reg,
			 rseq_of[0] ? NTH : 0, ids, q, NQUEUED);
	if (write(answer_fd, line, strlen(line)) < 0)
		_exit(2);
}

static void *checker_main(void *arg)
{
	char c;

	publish(TH_CHECKER);
	/*
	 * One call site, one stack depth and all six argument registers
	 * set (syscall() loads each; read() would leave what the answer
	 * left in the unused ones): the same /proc syscall line each time.
	 */
	while (syscall(SYS_read, ask_fd, &c, 1L, 0L, 0L, 0L) == 1)
		answer();
	_exit(2);
	return arg;
}

static int32_t make_timer(clockid_t clock, int notify, int signo, pid_t tid, long value_s, long ivl_ns)
{
	struct sigevent ev;
	struct itimerspec its = { .it_value = { value_s, value_s ? 0 : 1 },
				  .it_interval = { ivl_ns / 1000000000L, ivl_ns % 1000000000L } };
	int32_t id = -1;

	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = notify;
	ev.sigev_signo = signo;
	ev.sigev_value.sival_int = signo;
	ev.sigev_notify_thread_id = tid;
	if (syscall(SYS_timer_create, clock, &ev, &id) || syscall(SYS_timer_settime, id, 0, &its, NULL))
		tst_skip_all("timer_create/settime on clock %d, signal %d: %s", (int)clock, signo, strerror(errno));
	return id;
}

/* FIFO DIR/name, opened read-write (it never sees an end, never blocks) */
static int fifo(const char *dir, const char *name)
{
	char p[4096];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	unlink(p);
	if (mkfifo(p, 0600) || (fd = open(p, O_RDWR | O_CLOEXEC)) < 0) {
		fprintf(stderr, "still_target: %s: %s\n", p, strerror(errno));
		_exit(2);
	}
	return fd;
}

int main(int argc, char **argv)
{
	pthread_t checker, idle;
	clockid_t idle_clock;
	sigset_t block, pend;
	union sigval v;

	if (argc != 3 || strcmp(argv[1], "setup")) {
		fprintf(stderr, "usage: still_target setup DIR\n");
		return 2;
	}
	tst_init("setup", argv[2], "");
	ask_fd = fifo(argv[2], "ask");
	answer_fd = fifo(argv[2], "answer");
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	for (int s = SIGRTMIN; s <= SIGRTMIN + 7; s++)
		sigaddset(&block, s);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	publish(TH_LEADER);
	if (pthread_create(&checker, NULL, checker_main, NULL) || pthread_create(&idle, NULL, idle_main, NULL))
		return 2;
	pthread_mutex_lock(&mu);
	while (started < NTH)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	if (pthread_getcpuclockid(idle, &idle_clock))
		return 2;

	make_timer(CLOCK_MONOTONIC, SIGEV_THREAD_ID, SIGRTMIN + 1, tid_of[TH_CHECKER], 1000, 0);
	make_timer(CLOCK_REALTIME, SIGEV_THREAD_ID, SIGRTMIN + 2, tid_of[TH_LEADER], 1000, 7000000000L);
	make_timer(idle_clock, SIGEV_SIGNAL, SIGRTMIN + 3, 0, 1000, 0);
	make_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGRTMIN + 4, 0, 0, 1000000L);

	/* in the order the checker's sigtimedwait() takes them */
	for (int i = 0; i < NQUEUED; i++) {
		siginfo_t *w = &queued[i];

		w->si_signo = i < 2 ? SIGRTMIN + 6 : SIGRTMIN + 5;
		w->si_code = SI_QUEUE;
		w->si_pid = getpid();
		w->si_uid = getuid();
		w->si_value.sival_int = i < 2 ? 11 + i : i - 1;
	}
	for (int i = 0; i < NQUEUED; i++) {
		v.sival_int = queued[i].si_value.sival_int;
		if (i < 2 ? pthread_sigqueue(checker, SIGRTMIN + 6, v) : sigqueue(getpid(), SIGRTMIN + 5, v)) {
			fprintf(stderr, "still_target: queueing signal: %s\n", strerror(errno));
			return 2;
		}
	}
	kill(getpid(), SIGUSR1);
	/* the pending timer's first expiry, 1 ms away */
	for (int i = 0; i < 1000; i++) {
		sigpending(&pend);
		if (sigismember(&pend, SIGRTMIN + 4))
			break;
		usleep(1000);
	}
	if (!sigismember(&pend, SIGRTMIN + 4)) {
		fprintf(stderr, "still_target: the 1 ms timer's signal %d is not pending after 1 s\n", SIGRTMIN + 4);
		return 2;
	}
	for (int i = 0; i < NTH; i++)
		printf("# thread %d rseq %p\n", tid_of[i], (void *)rseq_of[i]);
	fflush(stdout);
	tst_ready();
	for (;;)
		pause();
}
