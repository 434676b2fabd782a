/* SPDX-License-Identifier: MIT */
/*
 * aarch64 registers as the injector (restorer/host/inject.c) reads and sets
 * them, and what the syscall stub (restorer/arch/aarch64/entry.S) takes in
 * which register.  Host side only.
 *
 * arm64 has no PTRACE_GETREGS: the general registers are the NT_PRSTATUS
 * regset, struct user_pt_regs (x0..x30, sp, pc, pstate), through
 * PTRACE_GETREGSET / PTRACE_SETREGSET (Linux 3.7 on arm64).
 */
#ifndef PTIMER_ARCH_AARCH64_REGS_H
#define PTIMER_ARCH_AARCH64_REGS_H

#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/ucontext.h>
#include <sys/uio.h>
#include <sys/user.h>

#include "restorer/abi.h"

typedef struct user_regs_struct ptimer_arch_regs;	/* = struct user_pt_regs */

/* entry.S reads the context and writes the signal frame by the offsets of
 * restorer/arch/aarch64/abi.h */
_Static_assert(sizeof(struct user_regs_struct) == PTIMER_CTX_REGS_SIZE, "user_pt_regs size");
_Static_assert(offsetof(struct user_regs_struct, regs[19]) == PTIMER_CTX_X19, "x19 offset");
_Static_assert(offsetof(struct user_regs_struct, sp) == PTIMER_CTX_SP_EL0, "sp offset");
_Static_assert(offsetof(struct user_regs_struct, pc) == PTIMER_CTX_PC, "pc offset");
_Static_assert(offsetof(struct user_regs_struct, pstate) == PTIMER_CTX_PSTATE, "pstate offset");
_Static_assert(offsetof(ucontext_t, uc_stack) + PTIMER_SF_UC == PTIMER_SF_UC_STACK, "uc_stack");
_Static_assert(offsetof(ucontext_t, uc_sigmask) + PTIMER_SF_UC == PTIMER_SF_UC_SIGMASK, "uc_sigmask");
_Static_assert(offsetof(ucontext_t, uc_mcontext) + PTIMER_SF_UC == PTIMER_SF_MCONTEXT, "uc_mcontext");
_Static_assert(offsetof(mcontext_t, regs) + PTIMER_SF_MCONTEXT == PTIMER_SF_REGS, "sigcontext regs");
_Static_assert(offsetof(mcontext_t, __reserved) + PTIMER_SF_MCONTEXT == PTIMER_SF_RESERVED, "__reserved");
_Static_assert(PTIMER_SF_RESERVED + sizeof(((mcontext_t *)0)->__reserved) == PTIMER_SF_SIZE, "frame size");
_Static_assert(PTIMER_SF_SIZE % 16 == 0, "frame alignment");

/* The general registers of a ptrace-stopped thread.  0 or -errno (-ESRCH: not stopped by us). */
static inline int ptimer_arch_get_regs(pid_t tid, ptimer_arch_regs *r)
{
	struct iovec iov = { .iov_base = r, .iov_len = sizeof(*r) };

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov))
		return -errno;
	return iov.iov_len == sizeof(*r) ? 0 : -EIO;
}

/* Set them.  0 or -errno. */
static inline int ptimer_arch_set_regs(pid_t tid, const ptimer_arch_regs *r)
{
	struct iovec iov = { .iov_base = (void *)r, .iov_len = sizeof(*r) };

	return ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRSTATUS, &iov) ? -errno : 0;
}

static inline uint64_t ptimer_arch_ip(const ptimer_arch_regs *r)
{
	return r->pc;
}

static inline void ptimer_arch_set_ip(ptimer_arch_regs *r, uint64_t ip)
{
	r->pc = ip;
}

static inline void ptimer_arch_set_sp(ptimer_arch_regs *r, uint64_t sp)
{
	r->sp = sp;
}

/* The syscall instruction (`svc #0`) as the word at the IP. */
#define PTIMER_ARCH_SYSCALL_INSN	0xd4000001u
#define PTIMER_ARCH_SYSCALL_INSN_LEN	4

/* The register that holds the syscall number when the instruction runs. */
static inline uint64_t ptimer_arch_syscall_nr(const ptimer_arch_regs *r)
{
	return r->regs[8];
}

/*
 * Registers set to run our code from a stop: nothing to do.  arm64 decides
 * on a syscall restart before the stop (arch/arm64/kernel/signal.c
 * do_signal() forgets the syscall first), and after it only restarts when
 * pc is still the restart address, which our code's is not.
 */
static inline void ptimer_arch_no_restart(ptimer_arch_regs *r)
{
	(void)r;
}

/*
 * The thread's registers as it must resume: nothing to rewind.  arm64
 * rewinds an interrupted syscall before a tracer sees the stop
 * (arch/arm64/kernel/signal.c do_signal(): "so that a debugger will see
 * the already changed PC": pc back over the 4-byte svc, x0 = orig_x0), so
 * the saved registers already run the syscall again.  One difference with
 * the kernel's own path: a syscall interrupted with -ERESTART_RESTARTBLOCK
 * (nanosleep, poll with a timeout) runs again from its first arguments, as
 * after any debugger that moves pc, instead of through restart_syscall(2).
 */
static inline void ptimer_arch_rewind_syscall(ptimer_arch_regs *r)
{
	(void)r;
}

/*
 * State beyond the general registers that running our code would change:
 * live SVE registers.  A syscall discards them (everything past the low
 * 128 bits of z0..z31, the predicates and FFR: Documentation/arch/arm64/
 * sve.rst, "System call behaviour"), so a thread stopped while using SVE
 * (glibc's string functions do on SVE hardware) would resume without them
 * after the blob's syscalls.  Saved with PTRACE_GETREGSET NT_ARM_SVE when
 * the thread's SVE state is live, written back with the registers.
 * Without SVE (EINVAL) or when only the FP/SIMD view is live, nothing: the
 * blob, built with -mgeneral-regs-only, keeps v0..v31, fpsr and fpcr.
 * Not covered: SME's streaming mode and ZA (NT_ARM_SSVE, NT_ARM_ZA).
 */
struct ptimer_arch_xstate {
	void *sve;		/* the NT_ARM_SVE regset; NULL: nothing saved */
	size_t sve_len;
};

/* uapi asm/ptrace.h struct user_sve_header (that header clashes with sys/ptrace.h) */
struct ptimer_sve_header {
	uint32_t size;		/* the regset's bytes for the current state */
	uint32_t max_size;
	uint16_t vl, max_vl;
	uint16_t flags;		/* bit 0: SVE_PT_REGS_SVE (live SVE state) */
	uint16_t reserved;
};
#define PTIMER_SVE_PT_REGS_SVE	1

/* Save what the blob would change.  0 or -errno (-ENOMEM). */
static inline int ptimer_arch_save_xstate(pid_t tid, struct ptimer_arch_xstate *x)
{
	struct ptimer_sve_header h;
	struct iovec iov = { .iov_base = &h, .iov_len = sizeof(h) };

	x->sve = NULL;
	x->sve_len = 0;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_ARM_SVE, &iov) || iov.iov_len < sizeof(h) ||
	    !(h.flags & PTIMER_SVE_PT_REGS_SVE) || h.size < sizeof(h))
		return 0;
	x->sve = malloc(h.size);
	if (!x->sve)
		return -ENOMEM;
	iov.iov_base = x->sve;
	iov.iov_len = h.size;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_ARM_SVE, &iov)) {
		int e = errno;

		free(x->sve);
		x->sve = NULL;
		return -e;
	}
	x->sve_len = iov.iov_len;
	return 0;
}

/* Write it back (after the general registers).  0 or -errno. */
static inline int ptimer_arch_restore_xstate(pid_t tid, const struct ptimer_arch_xstate *x)
{
	struct iovec iov = { .iov_base = x->sve, .iov_len = x->sve_len };

	if (!x->sve)
		return 0;
	return ptrace(PTRACE_SETREGSET, tid, (void *)NT_ARM_SVE, &iov) ? -errno : 0;
}

static inline void ptimer_arch_free_xstate(struct ptimer_arch_xstate *x)
{
	free(x->sve);
	x->sve = NULL;
}

/* The stub's inputs: syscall number in x8, arguments in x0..x5. */
static inline void ptimer_arch_stub_syscall(ptimer_arch_regs *r, long nr, const unsigned long a[6])
{
	r->regs[8] = (unsigned long)nr;
	for (int i = 0; i < 6; i++)
		r->regs[i] = a[i];
}

/* The stub's mark request (entry.S): offset of the mark in x22 (0: none), size in x23. */
static inline void ptimer_arch_stub_mark(ptimer_arch_regs *r, uint64_t mark_at, uint64_t mark_size)
{
	r->regs[22] = mark_at;
	r->regs[23] = mark_size;
}

/*
 * No syscall is run at a syscall instruction of the vDSO in place of the
 * stub here (x86_64's PTIMER_ARCH_SYSCALL_AT_INSN): at a syscall-exit stop
 * arm64 puts back x7, which it reports the stop's direction in, after the
 * tracer has set it (arch/arm64/kernel/ptrace.c report_syscall()).
 */
#define PTIMER_ARCH_SYSCALL_AT_INSN	0

/* The syscall's result the stub kept for the host (x21). */
static inline long ptimer_arch_stub_result(const ptimer_arch_regs *r)
{
	return (long)r->regs[21];
}

#endif
