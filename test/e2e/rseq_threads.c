// SPDX-License-Identifier: MIT
/*
 * rseq_threads: a process of two threads, each reporting its own rseq
 * registration as glibc made it (<sys/rseq.h>: the area is at the thread
 * pointer + __rseq_offset, __rseq_size bytes; glibc 2.35+), for test/e2e.sh
 * to compare with what `ptimer dump` read through ptrace.
 *
 * Prints "thread TID rseq 0xPTR size N" for each thread (leader first), then
 * "ready", then sleeps until killed.  Prints "SKIP ..." and exits 0 when
 * glibc registered no rseq area (GLIBC_TUNABLES=glibc.pthread.rseq=0).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/rseq.h>
#include <unistd.h>

static void report(void)
{
	uintptr_t tp = (uintptr_t)__builtin_thread_pointer();

	printf("thread %d rseq 0x%lx size %u\n", gettid(), (unsigned long)(tp + __rseq_offset),
	       __rseq_size);
	fflush(stdout);
}

static void *worker(void *arg)
{
	report();
	for (;;)
		pause();
	return arg;
}

int main(void)
{
	pthread_t th;

	if (__rseq_size == 0) {
		printf("SKIP rseq: glibc registered no rseq area\n");
		return 0;
	}
	report();
	if (pthread_create(&th, NULL, worker, NULL))
		return 1;
	usleep(100000);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
