// SPDX-License-Identifier: MIT
/*
 * wx_refused: a process whose seccomp filter refuses a mapping both
 * writable and executable (mmap with PROT_WRITE|PROT_EXEC fails with
 * EPERM), as W^X policies do (SELinux execmem, systemd's
 * MemoryDenyWriteExecute=, a JIT's own sandbox).  ptimer maps its
 * restorer RWX where it may and RW, then R-X, where it may not
 * (restorer/host/inject.c ptimer_blob_open): the case wx-refused dumps and
 * restores such a process.
 *
 *   wx_refused DIR timers|none
 *     timers: CLOCK_MONOTONIC SIGEV_NONE timers with IDs 0..3, 0 and 2
 *     armed (1000 s, 5 s interval), then 1 and 3 deleted, so the IDs are
 *     0 and 2; none: no timers (a restore target).
 * Says "wx: refused (EPERM)" in its output once it has seen its own filter
 * refuse such a mapping, then touches DIR/ready and sleeps.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tst.h"

#if defined(__x86_64__)
#define WX_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define WX_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

static int refuse_wx(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, WX_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* prot, the low word of args[2] (little-endian) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, PROT_WRITE | PROT_EXEC),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PROT_WRITE | PROT_EXEC, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };
	struct itimerspec its = { .it_value = { 1000, 0 }, .it_interval = { 5, 0 } };
	timer_t t[4];
	void *m;
	int ret;

	if (argc < 3 || (strcmp(argv[2], "timers") && strcmp(argv[2], "none"))) {
		fprintf(stderr, "usage: wx_refused DIR timers|none\n");
		return 2;
	}
	ret = refuse_wx();
	if (ret) {
		fprintf(stderr, "wx_refused: seccomp: %s\n", strerror(-ret));
		return 1;
	}
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED || errno != EPERM) {
		fprintf(stderr, "wx_refused: the filter let a W+X mapping through (%s)\n",
			m == MAP_FAILED ? strerror(errno) : "mapped");
		return 1;
	}
	printf("wx: refused (EPERM)\n");
	fflush(stdout);
	if (!strcmp(argv[2], "timers")) {
		for (int i = 0; i < 4; i++)
			if (timer_create(CLOCK_MONOTONIC, &sev, &t[i])) {
				perror("timer_create");
				return 1;
			}
		if (timer_settime(t[0], 0, &its, NULL) || timer_settime(t[2], 0, &its, NULL) ||
		    timer_delete(t[1]) || timer_delete(t[3])) {
			perror("timer_settime");
			return 1;
		}
	}
	tst_init("wx_refused", argv[1], "");
	tst_put("ready", "ready\n");
	for (;;)
		pause();
}
