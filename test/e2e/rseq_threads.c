// SPDX-License-Identifier: MIT
/*
 * rseq_threads: a process of two threads, each reporting its own rseq
 * registration as glibc made it (<sys/rseq.h>: the area is at the thread
 * pointer + __rseq_offset, __rseq_size bytes; glibc 2.35+), for test/e2e.sh
 * to compare with what `ptimer dump` read through ptrace.
 *
 *   rseq_threads DIR
 * Prints "thread TID rseq 0xPTR size N" for each thread (leader first), then
 * writes DIR/rseq.ready (test/lib/tst.h) and sleeps until killed.  Exits 4
 * with the reason (a SKIP) when glibc registered no rseq area
 * (GLIBC_TUNABLES=glibc.pthread.rseq=0).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/rseq.h>
#include <unistd.h>

#include "test/lib/tst.h"

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

int main(int argc, char **argv)
{
	pthread_t th;

	if (argc != 2) {
		fprintf(stderr, "usage: rseq_threads DIR\n");
		return 2;
	}
	tst_init("rseq", argv[1], "");
	if (__rseq_size == 0)
		tst_skip_all("glibc registered no rseq area");
	report();
	if (pthread_create(&th, NULL, worker, NULL))
		return 1;
	usleep(100000);
	tst_ready();
	for (;;)
		pause();
}
