// SPDX-License-Identifier: MIT
/*
 * ptimer_plugin.so run by hand (./ptimer_plugin.so): it says what it is
 * and exits 2, as glibc's libc.so.6 says its version.  The system's
 * dynamic loader starts it (PT_INTERP below: without one the kernel would
 * jump to the entry point with nothing relocated); dlopen ignores both.
 */
/* raw system calls: libc is not started when ld.so jumps here */
#if defined(__x86_64__)
#include "restorer/arch/x86_64/sys.h"
#define PTIMER_INTERP "/lib64/ld-linux-x86-64.so.2"
#define NR_write	1
#define NR_exit_group	231
#elif defined(__aarch64__)
#include "restorer/arch/aarch64/sys.h"
#define PTIMER_INTERP "/lib/ld-linux-aarch64.so.1"
#define NR_write	64
#define NR_exit_group	94
#else
#error "PTIMER_INTERP: x86_64 and aarch64 only"
#endif
__attribute__((section(".interp"), used, visibility("hidden"))) const char ptimer_interp[] = PTIMER_INTERP;

__attribute__((visibility("hidden"), noreturn, used)) void ptimer_by_hand(void);
void ptimer_by_hand(void)
{
	static const char msg[] = "ptimer_plugin.so is a criu plugin: criu dump/restore --libdir DIR "
				  "(the directory it is in) loads it; it is no program\n";

	ptimer_syscall3(NR_write, 2, (long)msg, sizeof(msg) - 1);
	for (;;)
		ptimer_syscall3(NR_exit_group, 2, 0, 0);
}

/* The entry point ld.so jumps to (-Wl,-e in the Makefile): the stack
 * aligned as the ABI wants at a call. */
#if defined(__x86_64__)
__asm__(".text\n"
	".globl ptimer_by_hand_entry\n"
	".hidden ptimer_by_hand_entry\n"
	".type ptimer_by_hand_entry, @function\n"
	"ptimer_by_hand_entry:\n"
	"	endbr64\n"
	"	xor %ebp, %ebp\n"
	"	and $-16, %rsp\n"
	"	call ptimer_by_hand\n"
	"	hlt\n"
	".size ptimer_by_hand_entry, . - ptimer_by_hand_entry\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl ptimer_by_hand_entry\n"
	".hidden ptimer_by_hand_entry\n"
	".type ptimer_by_hand_entry, %function\n"
	"ptimer_by_hand_entry:\n"
	"	hint #34\n"			/* bti c: a jump target where ld.so maps it PROT_BTI */
	"	mov x29, #0\n"
	"	mov x30, #0\n"
	"	bl ptimer_by_hand\n"
	"	brk #0\n"
	".size ptimer_by_hand_entry, . - ptimer_by_hand_entry\n");
#endif
