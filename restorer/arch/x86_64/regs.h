/* SPDX-License-Identifier: MIT */
/*
 * x86_64 registers as the injector (restorer/host/inject.c) reads and sets
 * them: struct user_regs_struct (sys/user.h) through PTRACE_GETREGS and
 * PTRACE_SETREGS, and what the syscall stub (restorer/arch/x86_64/entry.S)
 * takes in which register.  Host side only.
 */
#ifndef PTIMER_ARCH_X86_64_REGS_H
#define PTIMER_ARCH_X86_64_REGS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>

#include "restorer/abi.h"

typedef struct user_regs_struct ptimer_arch_regs;

/* entry.S reads struct ptimer_resume_ctx by the offsets of restorer/arch/x86_64/abi.h */
_Static_assert(sizeof(struct user_regs_struct) == PTIMER_CTX_REGS_SIZE, "user_regs_struct size");
_Static_assert(offsetof(struct user_regs_struct, rip) == PTIMER_CTX_RIP, "rip offset");
_Static_assert(offsetof(struct user_regs_struct, rsp) == PTIMER_CTX_RSP, "rsp offset");
_Static_assert(offsetof(struct user_regs_struct, eflags) == PTIMER_CTX_EFLAGS, "eflags offset");
_Static_assert(offsetof(struct user_regs_struct, rdi) == PTIMER_CTX_RDI, "rdi offset");

/* The general registers of a ptrace-stopped thread.  0 or -errno (-ESRCH: not stopped by us). */
static inline int ptimer_arch_get_regs(pid_t tid, ptimer_arch_regs *r)
{
	return ptrace(PTRACE_GETREGS, tid, NULL, r) ? -errno : 0;
}

/* Set them.  0 or -errno. */
static inline int ptimer_arch_set_regs(pid_t tid, const ptimer_arch_regs *r)
{
	return ptrace(PTRACE_SETREGS, tid, NULL, r) ? -errno : 0;
}

static inline uint64_t ptimer_arch_ip(const ptimer_arch_regs *r)
{
	return r->rip;
}

static inline void ptimer_arch_set_ip(ptimer_arch_regs *r, uint64_t ip)
{
	r->rip = ip;
}

static inline void ptimer_arch_set_sp(ptimer_arch_regs *r, uint64_t sp)
{
	r->rsp = sp;
}

/* The syscall instruction (`syscall`, 0f 05) as the bytes at the IP read as a little-endian word. */
#define PTIMER_ARCH_SYSCALL_INSN	0x050fu
#define PTIMER_ARCH_SYSCALL_INSN_LEN	2

/* The register that holds the syscall number when the instruction runs. */
static inline uint64_t ptimer_arch_syscall_nr(const ptimer_arch_regs *r)
{
	return r->rax;
}

/*
 * Registers set to run our code from a stop: no syscall restart on the way
 * in (arch/x86/kernel/signal.c restarts after the stop when orig_rax >= 0).
 */
static inline void ptimer_arch_no_restart(ptimer_arch_regs *r)
{
	r->orig_rax = (unsigned long long)-1;
}

/*
 * The thread's registers as it must resume: a syscall interrupted with a
 * restart code is rewound to run again, as arch/x86/kernel/signal.c would
 * do on the way out of the stop (after ptrace has seen -ERESTART* in rax):
 * rax = orig_rax and rip back over the 2-byte syscall instruction;
 * -ERESTART_RESTARTBLOCK returns -EINTR instead, as compel does
 * (compel/arch/x86/src/lib/infect.c get_task_regs()).
 */
static inline void ptimer_arch_rewind_syscall(ptimer_arch_regs *r)
{
	if ((long)(int)r->orig_rax < 0)
		return;
	switch ((long)(int)r->rax) {
	case -512:	/* ERESTARTSYS */
	case -513:	/* ERESTARTNOINTR */
	case -514:	/* ERESTARTNOHAND */
		r->rax = r->orig_rax;
		r->rip -= 2;	/* the syscall instruction again */
		break;
	case -516:	/* ERESTART_RESTARTBLOCK: as compel, the caller sees EINTR */
		r->rax = (unsigned long long)-EINTR;
		break;
	}
}

/*
 * State beyond the general registers that running our code would change:
 * none.  x86_64 syscalls keep the extended (x87/SSE/AVX) registers and the
 * blob, built with -mgeneral-regs-only, never touches them.
 */
struct ptimer_arch_xstate {
	char none;
};

static inline int ptimer_arch_save_xstate(pid_t tid, struct ptimer_arch_xstate *x)
{
	(void)tid;
	(void)x;
	return 0;
}

static inline int ptimer_arch_restore_xstate(pid_t tid, const struct ptimer_arch_xstate *x)
{
	(void)tid;
	(void)x;
	return 0;
}

static inline void ptimer_arch_free_xstate(struct ptimer_arch_xstate *x)
{
	(void)x;
}

/* The stub's inputs: syscall number and arguments (rax; rdi, rsi, rdx, r10, r8, r9). */
static inline void ptimer_arch_stub_syscall(ptimer_arch_regs *r, long nr, const unsigned long a[6])
{
	r->rax = (unsigned long)nr;
	r->rdi = a[0];
	r->rsi = a[1];
	r->rdx = a[2];
	r->r10 = a[3];
	r->r8 = a[4];
	r->r9 = a[5];
}

/* The stub's mark request (entry.S): offset of the mark in r13 (0: none), size in r14. */
static inline void ptimer_arch_stub_mark(ptimer_arch_regs *r, uint64_t mark_at, uint64_t mark_size)
{
	r->r13 = mark_at;
	r->r14 = mark_size;
}

/* inject.c may run a syscall at a PTIMER_ARCH_SYSCALL_INSN of the vDSO
 * instead of writing its stub into the process. */
#define PTIMER_ARCH_SYSCALL_AT_INSN	1

/* The syscall's result the stub kept for the host (r12). */
static inline long ptimer_arch_stub_result(const ptimer_arch_regs *r)
{
	return (long)r->r12;
}

#endif
