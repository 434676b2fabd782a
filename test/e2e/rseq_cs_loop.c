// SPDX-License-Identifier: MIT
/*
 * rseq_cs_loop: threads that spend their time inside an rseq critical
 * section, for the e2e case rseq-critical-section.
 *
 * Each looping thread uses glibc's own registration (<sys/rseq.h>: the
 * area is at the thread pointer + __rseq_offset; glibc 2.35+), sets
 * struct rseq.rseq_cs to a descriptor of its loop and then re-reads rseq_cs
 * on every iteration.  The kernel either sends the thread to abort_ip
 * (preemption, migration, signal: counted as "aborts") or leaves rseq_cs
 * alone; finding it cleared while still inside the section ("lost") means
 * something moved the thread's instruction pointer out of the section and
 * back without the abort the kernel owes it (kernel/rseq.c rseq_ip_fixup()).
 *
 *   rseq_cs_loop MODE DIR [timers|none]
 *     MODE main:   the leader loops; a second thread idles
 *     MODE exited: a second thread loops; the leader calls pthread_exit()
 *   timers (default): two SIGEV_NONE timers first (one armed), so a dump has
 *   something to read inside the process; none: no timers (a restore target).
 *
 * Writes DIR/counts ("aborts A lost L iters I", every 20 ms, by a reporter
 * thread) and DIR/ready once looping.  The reporter also sends the looping
 * thread a signal each round (an empty SIGUSR2 handler): delivering it inside
 * the section aborts it, so aborts grow at a known rate while the thread runs
 * with its rseq area registered, not only when the machine is busy enough to
 * preempt it.  Prints "SKIP ..." and exits 0 when
 * glibc registered no rseq area.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tst.h"

#include "restorer/abi.h"

struct counts {
	volatile uint64_t aborts;	/* offset 0 */
	volatile uint64_t lost;		/* offset 8 */
	volatile uint64_t iters;	/* offset 16 */
};

static struct counts c;
static const char *dir;
static volatile int looping;
static volatile pid_t looper_tid;

static struct rseq *my_rseq(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
}

#define STR_(x) #x
#define STR(x) STR_(x)

/*
 * The section is [1, 2): bump iters, re-read rseq_cs, go round while it is
 * set.  abort_ip (4) is preceded by the architecture's rseq signature
 * (PTIMER_RSEQ_SIG of restorer/arch/ARCH/abi.h, glibc's RSEQ_SIG), which the
 * kernel checks before it sends the thread there.
 */
static void __attribute__((noreturn)) loop_in_section(void)
{
	struct rseq *rs = my_rseq();

	looper_tid = gettid();
	looping = 1;
#if defined(__x86_64__)
	__asm__ __volatile__(
		".pushsection .data.rseq_cs_loop, \"aw\"\n\t"
		".balign 32\n\t"
		"3:\n\t"
		".long 0, 0\n\t"
		".quad 1f, 2f - 1f, 4f\n\t"
		".popsection\n\t"
		"0:\n\t"
		"leaq 3b(%%rip), %%rax\n\t"
		"movq %%rax, 8(%[rs])\n\t"
		"1:\n\t"
		"incq 16(%[c])\n\t"
		"cmpq $0, 8(%[rs])\n\t"
		"jne 1b\n\t"
		"incq 8(%[c])\n\t"
		"jmp 0b\n\t"
		"2:\n\t"
		".long " STR(PTIMER_RSEQ_SIG) "\n\t"
		"4:\n\t"
		"incq 0(%[c])\n\t"
		"jmp 0b\n\t"
		:
		: [rs] "r"(rs), [c] "r"(&c)
		: "rax", "memory", "cc");
#elif defined(__aarch64__)
	__asm__ __volatile__(
		".pushsection .data.rseq_cs_loop, \"aw\"\n\t"
		".balign 32\n\t"
		"rseq_cs_loop_desc:\n\t"
		".long 0, 0\n\t"
		".quad 1f, 2f - 1f, 4f\n\t"
		".popsection\n\t"
		"0:\n\t"
		"adrp x9, rseq_cs_loop_desc\n\t"
		"add x9, x9, :lo12:rseq_cs_loop_desc\n\t"
		"str x9, [%[rs], #8]\n\t"
		"1:\n\t"
		"ldr x10, [%[c], #16]\n\t"
		"add x10, x10, #1\n\t"
		"str x10, [%[c], #16]\n\t"
		"ldr x10, [%[rs], #8]\n\t"
		"cbnz x10, 1b\n\t"
		"ldr x10, [%[c], #8]\n\t"
		"add x10, x10, #1\n\t"
		"str x10, [%[c], #8]\n\t"
		"b 0b\n\t"
		"2:\n\t"
		".inst " STR(PTIMER_RSEQ_SIG) "\n\t"
		"4:\n\t"
		"ldr x10, [%[c], #0]\n\t"
		"add x10, x10, #1\n\t"
		"str x10, [%[c], #0]\n\t"
		"b 0b\n\t"
		:
		: [rs] "r"(rs), [c] "r"(&c)
		: "x9", "x10", "memory", "cc");
#else
#error "rseq_cs_loop: x86_64 or aarch64"
#endif
	__builtin_unreachable();
}

static void *reporter(void *arg)
{
	char path[4096], buf[128];
	int fd;

	snprintf(path, sizeof(path), "%s/counts", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	while (!looping)
		usleep(1000);
	tst_put("ready", "ready\n");
	for (;;) {
		/* fixed width, one pwrite: a reader never sees a partial line */
		int n = snprintf(buf, sizeof(buf), "aborts %20llu lost %20llu iters %20llu\n",
				 (unsigned long long)c.aborts, (unsigned long long)c.lost,
				 (unsigned long long)c.iters);

		if (pwrite(fd, buf, (size_t)n, 0) != n) {
			perror("counts");
			exit(1);
		}
		/* a failure here shows as aborts that do not grow */
		tgkill(getpid(), looper_tid, SIGUSR2);
		usleep(20000);
	}
	return NULL;
}

static void *looper(void *arg)
{
	loop_in_section();
}

static void make_timers(void)
{
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };
	struct itimerspec its = { .it_value = { 1000, 0 }, .it_interval = { 5, 0 } };
	timer_t t1, t2;

	if (timer_create(CLOCK_MONOTONIC, &sev, &t1) || timer_create(CLOCK_REALTIME, &sev, &t2) ||
	    timer_settime(t1, 0, &its, NULL)) {
		perror("timer_create");
		exit(1);
	}
}

static void on_usr2(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr2, .sa_flags = SA_RESTART };
	pthread_t th;

	if (argc < 3 || (strcmp(argv[1], "main") && strcmp(argv[1], "exited"))) {
		fprintf(stderr, "usage: rseq_cs_loop main|exited DIR [timers|none]\n");
		return 2;
	}
	dir = argv[2];
	tst_init(argv[1], dir, "");
	if (!__rseq_size || my_rseq()->cpu_id == (uint32_t)RSEQ_CPU_ID_REGISTRATION_FAILED) {
		printf("SKIP glibc registered no rseq area\n");
		return 0;
	}
	if (sigaction(SIGUSR2, &sa, NULL)) {
		perror("sigaction");
		return 1;
	}
	if (argc < 4 || strcmp(argv[3], "none"))
		make_timers();
	if (pthread_create(&th, NULL, reporter, NULL))
		return 1;
	if (!strcmp(argv[1], "main"))
		loop_in_section();
	if (pthread_create(&th, NULL, looper, NULL))
		return 1;
	pthread_exit(NULL);
}
