/*
 * Do x86 hardware breakpoints set through ptrace fire on this machine?
 *
 * criu (compel) stops a task coming back from its parasite, and a restored
 * task at the end of its restorer, with a debug-register breakpoint
 * (PTRACE_POKEUSER of DR0/DR7). Under some hypervisors the breakpoint never
 * fires: criu dump then waits forever in wait4(). criu's fault injection
 * CRIU_FAULT=130 (FI_NO_BREAKPOINTS) makes it trace syscalls instead.
 *
 * Prints "hwbp: works" and exits 0, or "hwbp: broken (...)" and exits 1.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline, used)) void probe_target(void)
{
	__asm__ volatile("nop");
}

int main(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		return 2;
	}
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(3);
		raise(SIGSTOP);
		probe_target();
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		fprintf(stderr, "hwbp: child did not stop\n");
		return 2;
	}
	if (ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, u_debugreg[0]), (void *)probe_target) ||
	    ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, u_debugreg[7]), (void *)1UL)) {
		perror("hwbp: PTRACE_POKEUSER");
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		printf("hwbp: broken (cannot set debug registers)\n");
		return 1;
	}
	if (ptrace(PTRACE_CONT, pid, NULL, NULL)) {
		perror("PTRACE_CONT");
		return 2;
	}
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 2;
	}
	if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		printf("hwbp: works\n");
		return 0;
	}
	if (WIFSTOPPED(status)) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	printf("hwbp: broken (the breakpoint did not fire)\n");
	return 1;
}
