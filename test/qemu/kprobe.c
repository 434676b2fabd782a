/* SPDX-License-Identifier: MIT */
/*
 * kprobe - what the running kernel offers ptimer, for the kernel matrix
 * (test/qemu/matrix.sh).  Runs inside each guest, as root.
 *
 *   kprobe now       CLOCK_MONOTONIC as "SEC.NSEC" (busybox date has no %N)
 *   kprobe features  one "FEATURE KEY VALUE" line each:
 *	prctl77       prctl(PR_TIMER_CREATE_RESTORE_IDS, _GET): the mode
 *		      (0/1), or the errno name (EINVAL: the kernel lacks it)
 *	timers_line   the "signal:" line of /proc/self/timers for a
 *		      SIGEV_SIGNAL timer whose sival is 0x1122334455667788
 *	timers_format px16 (16 hex digits, %px), p (%p: hashed or short),
 *		      or other
 *	rseq          the size glibc registered (__rseq_size; 0: none), or
 *		      "own" when this program registered it itself
 *	slice_get     prctl(PR_RSEQ_SLICE_EXTENSION, _GET): its value, or
 *		      EINVAL / ENOTSUPP(524) / ENXIO / the errno number
 *	pair_rate     timer_create + timer_delete pairs per second (the
 *		      cost of linear mode), measured in a child over PAIRS
 *
 * Raw syscalls for timers: glibc's timer_create() wraps the kernel's IDs.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* uapi/linux/prctl.h */
#define PR_TIMER_CREATE_RESTORE_IDS	77
#define PR_TIMER_CREATE_RESTORE_IDS_GET	2
#define PR_RSEQ_SLICE_EXTENSION		79
#define PR_RSEQ_SLICE_EXTENSION_GET	1
#define ENOTSUPP			524	/* kernel-internal, leaks to user space */
#define RSEQ_SIG			0x53053053

/* glibc 2.35+: the size of the area it registered, 0 when it did not */
extern const unsigned int __rseq_size __attribute__((weak));

static const char *errname(int e)
{
	static char buf[32];

	switch (e) {
	case EINVAL: return "EINVAL";
	case ENXIO: return "ENXIO";
	case EPERM: return "EPERM";
	case ENOTSUPP: return "ENOTSUPP(524)";
	}
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void timers_line(void)
{
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN };
	char line[256], sig[256] = "";
	const char *fmt = "other";
	int32_t id;
	FILE *f;

	ev.sigev_value.sival_ptr = (void *)(uintptr_t)0x1122334455667788ull;
	if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &id)) {
		printf("FEATURE timers_line timer_create: %s\n", errname(errno));
		return;
	}
	f = fopen("/proc/self/timers", "r");
	if (!f) {
		printf("FEATURE timers_line none (%s)\n", errname(errno));
		printf("FEATURE timers_format absent\n");
		syscall(SYS_timer_delete, id);
		return;
	}
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "signal:", 7)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(sig, sizeof(sig), "%s", line);
		}
	fclose(f);
	syscall(SYS_timer_delete, id);
	/* "signal: 34/1122334455667788": %px prints all 16 digits */
	const char *slash = strchr(sig, '/');
	if (slash) {
		size_t n = strspn(slash + 1, "0123456789abcdef");
		if (n == 16 && !slash[17])
			fmt = strncmp(slash + 1, "1122334455667788", 16) ? "p16-hashed" : "px16";
		else
			fmt = "p";
	}
	printf("FEATURE timers_line %s\n", sig[0] ? sig : "(no signal: line)");
	printf("FEATURE timers_format %s\n", fmt);
}

/* A thread with no rseq area of its own: register one (32 bytes, aligned). */
static struct { uint32_t cpu_id_start, cpu_id; uint64_t cs; uint32_t flags; uint32_t pad[3]; }
	own_rseq __attribute__((aligned(32)));

static void rseq_slice(void)
{
	unsigned int size = &__rseq_size ? __rseq_size : 0;
	long r;

	if (size)
		printf("FEATURE rseq %u\n", size);
	else if (syscall(SYS_rseq, &own_rseq, sizeof(own_rseq), 0, RSEQ_SIG) == 0)
		printf("FEATURE rseq own\n");
	else
		printf("FEATURE rseq none(%s)\n", errname(errno));
	r = prctl(PR_RSEQ_SLICE_EXTENSION, PR_RSEQ_SLICE_EXTENSION_GET, 0, 0, 0);
	if (r < 0)
		printf("FEATURE slice_get %s\n", errname(errno));
	else
		printf("FEATURE slice_get %ld\n", r);
}

static void pair_rate(long pairs)
{
	int fd[2], st;
	pid_t p;
	double rate = 0;

	if (pipe(fd))
		return;
	p = fork();
	if (p == 0) {
		struct sigevent ev = { .sigev_notify = SIGEV_NONE };
		double t0 = now(), dt;
		int32_t id;

		for (long i = 0; i < pairs; i++)
			if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &id) ||
			    syscall(SYS_timer_delete, id))
				_exit(1);
		dt = now() - t0;
		rate = dt > 0 ? pairs / dt : 0;
		if (write(fd[1], &rate, sizeof(rate)) != sizeof(rate))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	if (p < 0 || read(fd[0], &rate, sizeof(rate)) != sizeof(rate))
		rate = 0;
	close(fd[0]);
	if (p > 0)
		waitpid(p, &st, 0);
	printf("FEATURE pair_rate %.0f\n", rate);
}

int main(int argc, char **argv)
{
	long r;

	if (argc > 1 && !strcmp(argv[1], "now")) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		printf("%lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
		return 0;
	}
	if (argc < 2 || strcmp(argv[1], "features")) {
		fprintf(stderr, "usage: %s now | features [PAIRS]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	r = prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0);
	if (r < 0)
		printf("FEATURE prctl77 %s\n", errname(errno));
	else
		printf("FEATURE prctl77 %ld\n", r);
	timers_line();
	rseq_slice();
	pair_rate(argc > 2 ? atol(argv[2]) : 200000);
	return 0;
}
