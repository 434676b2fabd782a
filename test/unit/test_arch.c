/* SPDX-License-Identifier: MIT */
/*
 * The per-architecture register layer of the injector
 * (restorer/arch/ARCH/regs.h), on this machine's architecture:
 *
 * - x86_64: ptimer_arch_rewind_syscall() on hand-made registers, the way
 *   arch/x86/kernel/signal.c restarts a syscall after a stop (-ERESTARTSYS,
 *   -ERESTARTNOINTR, -ERESTARTNOHAND: rax = orig_rax, rip back 2;
 *   -ERESTART_RESTARTBLOCK: -EINTR; no syscall or another result: as is);
 *   aarch64: a no-op, the kernel has rewound before the stop;
 * - the stub's registers: ptimer_arch_stub_syscall() puts the number and
 *   six arguments where the syscall instruction takes them;
 * - against the running kernel: a child blocked in ppoll(2), seized and
 *   interrupted as ptimer does it (PTRACE_SEIZE, PTRACE_INTERRUPT), read
 *   with ptimer_arch_get_regs() and rewound must point at a syscall
 *   instruction with the ppoll number in the number register, so that the
 *   saved registers run the call again; written back with
 *   ptimer_arch_set_regs() and let go, the child sleeps on in ppoll.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include "restorer/arch/x86_64/regs.h"
#elif defined(__aarch64__)
#include "restorer/arch/aarch64/regs.h"
#endif
#include "test/lib/tst.h"

#if defined(__x86_64__)
static void test_rewind_cases(void)
{
	static const struct {
		long rax, orig_rax;
		long want_rax;
		int back;	/* bytes rip moves back */
	} c[] = {
		{ -512, SYS_ppoll, SYS_ppoll, 2 },	/* ERESTARTSYS */
		{ -513, SYS_ppoll, SYS_ppoll, 2 },	/* ERESTARTNOINTR */
		{ -514, SYS_ppoll, SYS_ppoll, 2 },	/* ERESTARTNOHAND */
		{ -516, SYS_clock_nanosleep, -EINTR, 0 },	/* ERESTART_RESTARTBLOCK */
		{ -EINTR, SYS_ppoll, -EINTR, 0 },	/* a finished call */
		{ 3, SYS_ppoll, 3, 0 },
		{ -514, -1, -514, 0 },			/* not in a syscall */
	};
	int bad = 0;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ptimer_arch_regs r;

		memset(&r, 0, sizeof(r));
		r.rax = (unsigned long long)c[i].rax;
		r.orig_rax = (unsigned long long)c[i].orig_rax;
		r.rip = 0x401000;
		ptimer_arch_rewind_syscall(&r);
		if ((long)r.rax != c[i].want_rax || r.rip != 0x401000u - c[i].back) {
			FAIL("arch: rewind", "rax %ld orig_rax %ld -> rax %ld rip -%llu, want rax %ld rip -%d",
			     c[i].rax, c[i].orig_rax, (long)r.rax, 0x401000ull - r.rip, c[i].want_rax, c[i].back);
			bad = 1;
		}
	}
	if (!bad)
		PASS("arch: rewind: -ERESTART{SYS,NOINTR,NOHAND} run again, RESTARTBLOCK -> EINTR, others as is");
}
#else
static void test_rewind_cases(void)
{
	ptimer_arch_regs r, same;

	memset(&r, 0x5a, sizeof(r));
	same = r;
	ptimer_arch_rewind_syscall(&r);
	CHECK("arch: rewind: nothing to do (the kernel rewinds before the stop)", !memcmp(&r, &same, sizeof(r)),
	      "registers changed");
}
#endif

static void test_stub_regs(void)
{
	static const unsigned long a[6] = { 11, 22, 33, 44, 55, 66 };
	ptimer_arch_regs r;
	int ok;

	memset(&r, 0, sizeof(r));
	ptimer_arch_stub_syscall(&r, 222, a);
#if defined(__x86_64__)
	ok = r.rax == 222 && r.rdi == 11 && r.rsi == 22 && r.rdx == 33 && r.r10 == 44 && r.r8 == 55 && r.r9 == 66;
#else
	ok = r.regs[8] == 222 && r.regs[0] == 11 && r.regs[1] == 22 && r.regs[2] == 33 && r.regs[3] == 44 &&
	     r.regs[4] == 55 && r.regs[5] == 66;
#endif
	CHECK("arch: the stub's syscall number and arguments in the kernel's syscall registers",
	      ok && ptimer_arch_syscall_nr(&r) == 222, "registers not where the syscall ABI wants them");
}

static char proc_state(pid_t pid)
{
	char path[64], line[256], st = '?';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return st;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "State: %c", &st) == 1)
			break;
	fclose(f);
	return st;
}

/* wait up to 5 s for the child to sleep in the kernel (state S) */
static int wait_sleeping(pid_t pid)
{
	for (int i = 0; i < 500; i++) {
		if (proc_state(pid) == 'S')
			return 0;
		usleep(10000);
	}
	return -1;
}

static void test_live(void)
{
	ptimer_arch_regs r;
	int status, r1, r2;
	unsigned long word;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		FAIL("arch: live", "fork: %s", strerror(errno));
		return;
	}
	if (!pid) {
		for (;;)
			syscall(SYS_ppoll, NULL, 0, NULL, NULL, 0);
	}
	if (wait_sleeping(pid)) {
		FAIL("arch: live", "child %d never slept in ppoll (state %c)", pid, proc_state(pid));
		goto out;
	}
	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL)) {
		SKIP("arch: live", "PTRACE_SEIZE: %s", strerror(errno));
		goto out;
	}
	if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) || waitpid(pid, &status, __WALL) != pid) {
		FAIL("arch: live", "PTRACE_INTERRUPT: %s", strerror(errno));
		goto out;
	}
	r1 = ptimer_arch_get_regs(pid, &r);
	ptimer_arch_rewind_syscall(&r);
	errno = 0;
	word = (unsigned long)ptrace(PTRACE_PEEKTEXT, pid, (void *)(uintptr_t)ptimer_arch_ip(&r), NULL);
	if (PTIMER_ARCH_SYSCALL_INSN_LEN == 2)
		word &= 0xffff;
	else
		word &= 0xffffffff;
	CHECK("arch: a child interrupted in ppoll: registers read, rewound to the syscall instruction with "
	      "the ppoll number",
	      !r1 && !errno && word == PTIMER_ARCH_SYSCALL_INSN && ptimer_arch_syscall_nr(&r) == SYS_ppoll,
	      "get_regs %d, word at ip %#lx (want %#x), number register %llu (want %d)", r1, word,
	      PTIMER_ARCH_SYSCALL_INSN, (unsigned long long)ptimer_arch_syscall_nr(&r), SYS_ppoll);
	r2 = ptimer_arch_set_regs(pid, &r);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	CHECK("arch: registers written back, the child sleeps on in ppoll",
	      !r2 && !wait_sleeping(pid), "set_regs %d, state %c", r2, proc_state(pid));
out:
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

int main(void)
{
	return CHECK_RUN(CHECK_TEST(test_rewind_cases), CHECK_TEST(test_stub_regs),
	                 CHECK_TEST(test_live));
}
