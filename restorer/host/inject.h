/* SPDX-License-Identifier: MIT */
/*
 * Host side of the in-target restorer: map the blob and its arguments into a
 * ptrace-stopped thread, run it, read results, unmap; the thread survives
 * ptimer's death at any point (restorer/abi.h, "How the blob hands control
 * back").
 */
#ifndef PTIMER_RESTORER_INJECT_H
#define PTIMER_RESTORER_INJECT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "restorer/abi.h"

struct ptimer_blob;

/*
 * Where the loader's messages go that no caller can be given (a failed
 * cleanup after another error, what a killed ptimer left behind): level one
 * of PTIMER_BLOB_LOG_* (the numbers of core/log.h's levels), one line, no
 * newline.  NULL (default): dropped.  The core points it at its log
 * (core/log.c ptimer_log_set()).
 */
enum { PTIMER_BLOB_LOG_ERROR, PTIMER_BLOB_LOG_WARN, PTIMER_BLOB_LOG_INFO, PTIMER_BLOB_LOG_DEBUG };
extern void (*ptimer_blob_log_fn)(int level, const char *msg);

/*
 * ptimer_blob_open - map room for the blob, its args, n_timers timers and
 * n_occupied IDs, plus a stack, into the thread tid (which must be in a
 * ptrace stop: ptimer_task_seize, or criu's own seize), and copy the blob
 * in (all RWX in one mmap; where W+X is refused, -EACCES or -EPERM, RW and
 * the code pages R-X after).  The thread's registers (a syscall it
 * was blocked in rewound to restart) and signal mask are saved first; inside
 * an rseq critical section it is moved to abort_ip (ptimer_rseq_cs_save).
 * The syscalls run through a stub in the zero padding of an executable
 * mapping (but see PTIMER_BLOB_DIES_WITH_TRACER).  Returns 0 or -errno
 * with err set (-ENOSPC: no padding for the stub); on failure nothing
 * stays mapped.
 * flags:
 * PTIMER_BLOB_OWNS_WAITS: the caller seized tid's process itself (core's
 *   ptimer_task_seize) and owns its tracees' wait events, so threads that
 *   exit while the blob runs are reaped here; without it another tracer
 *   holds them (criu, for the plugin), whose wait events stay its own.
 * PTIMER_BLOB_DIES_WITH_TRACER: every thread of the process has
 *   PTRACE_O_EXITKILL and PTRACE_O_TRACESYSGOOD, so that it is killed,
 *   never detached alive, if its tracer dies (the plugin's held tasks,
 *   plugin/resume.c).  Then no stub is written: each syscall
 *   of ptimer's own runs at a syscall instruction of the vDSO, stopped at
 *   its entry and exit (PTRACE_SYSCALL, PTRACE_GET_SYSCALL_INFO, Linux
 *   5.3), where a tracer that dies leaves nothing running.  Writing the
 *   stub breaks copy-on-write on a page the process has mapped, and the
 *   TLB flush that takes makes the thread's next run several times slower
 *   where the hypervisor keeps shadow page tables (x86_64 only; else, or
 *   with no vDSO, the stub).
 */
enum {
	PTIMER_BLOB_OWNS_WAITS = 1,
	PTIMER_BLOB_DIES_WITH_TRACER = 2,
};
int ptimer_blob_open(struct ptimer_blob **out, pid_t tid, uint32_t n_timers, uint32_t n_occupied,
		     unsigned int flags, struct ptimer_err *err);

/*
 * ptimer_blob_load - copy timers[n_timers] and occupied[n_occupied] (may be
 * NULL when 0) into the target.  Returns 0, -EINVAL (more than open made
 * room for), -ESRCH (gone), or -EFAULT/-EPERM of process_vm_writev.
 */
int ptimer_blob_load(struct ptimer_blob *b, const struct ptimer_timer *timers,
		     const int32_t *occupied, struct ptimer_err *err);

/*
 * ptimer_blob_call - write a (its stack_top, timers, occupied and
 * abi_version are filled in here), run the blob to its notify signal and
 * read a back.  The thread's registers and signal mask are put back
 * afterwards.  Returns 0 when the blob ran (its own
 * verdict is a->result), -errno when it could not be run (err set).
 */
int ptimer_blob_call(struct ptimer_blob *b, struct ptimer_blob_args *a, struct ptimer_err *err);

/*
 * ptimer_blob_sweep - in the ptrace-stopped thread tid, undo what a ptimer
 * that was killed left behind (each with a warning): a thread still running
 * ptimer's code is let finish it; ptimer's marked mapping and its syscall
 * stub are removed.  Nothing to do: nothing runs in the thread.  Returns 0
 * or -errno.
 */
int ptimer_blob_sweep(pid_t tid, struct ptimer_err *err);

/*
 * ptimer_blob_args_read - the arguments as the blob's last run left them
 * in the target (struct ptimer_blob_args, restorer/abi.h), into *a: after
 * a ptimer_blob_call that failed (the thread faulted or was stopped on the
 * way), they hold how far that run got (n_created), which the host's copy
 * does not.  0, -ESRCH (gone) or the -errno of process_vm_readv.
 */
int ptimer_blob_args_read(struct ptimer_blob *b, struct ptimer_blob_args *a, struct ptimer_err *err);

/*
 * ptimer_blob_data - the target address of the blob's timers area, free
 * for a caller's data between runs: *len bytes (open's n_timers *
 * sizeof(struct ptimer_timer), page-rounded).  ptimer_blob_data_rw copies
 * buf[len] to (write) or from the area at byte off: 0, -E2BIG (past its
 * end), -ESRCH (gone) or the -errno of process_vm_readv/writev.
 */
uint64_t ptimer_blob_data(const struct ptimer_blob *b, size_t *len);
int ptimer_blob_data_rw(struct ptimer_blob *b, size_t off, void *buf, size_t len, bool write,
			struct ptimer_err *err);

/*
 * ptimer_blob_syscall - one system call nr(args[0..5]) in the blob's
 * thread, through the syscall stub (or at the vDSO's instruction, see
 * ptimer_blob_open); pointers in args may point into
 * ptimer_blob_data.  The thread's registers and signal mask are put back
 * afterwards.  *ret: the kernel's answer (a -errno there is the syscall's
 * own).  Returns 0, or -errno when it could not be run (err set).
 */
int ptimer_blob_syscall(struct ptimer_blob *b, int nr, const unsigned long args[6], long *ret,
			struct ptimer_err *err);

/* ptimer_blob_fetch - read timers[n_timers] back from the target. */
int ptimer_blob_fetch(struct ptimer_blob *b, struct ptimer_timer *timers, struct ptimer_err *err);

/*
 * ptimer_blob_close - unmap everything ptimer_blob_open mapped and cure
 * the syscall stub; the thread is left as it was before open.
 * Returns 0 or -errno (the mapping could not be removed: err says where).
 */
int ptimer_blob_close(struct ptimer_blob *b, struct ptimer_err *err);

/* What ptimer_rseq_cs_save found in a stopped thread. */
struct ptimer_rseq_cs_save {
	uint64_t ip;		/* the thread's instruction pointer at the stop */
	uint64_t resume_ip;	/* where it must resume: abort_ip or ip */
	uint64_t rseq_cs_addr;	/* &struct rseq.rseq_cs of its registration */
	uint64_t rseq_cs;	/* its value before any code ran */
	bool saved;		/* rseq_cs_addr/rseq_cs valid */
	bool in_section;	/* ip was inside the section rseq_cs describes */
};

/*
 * ptimer_rseq_cs_save - before code runs in the ptrace-stopped thread tid
 * whose saved instruction pointer is ip: read its rseq registration
 * (PTRACE_GET_RSEQ_CONFIGURATION, Linux 5.13), struct rseq.rseq_cs and the
 * descriptor it points to.  When ip is inside [start_ip, start_ip +
 * post_commit_offset) and no RSEQ_CS_FLAG_NO_RESTART_* flag is set,
 * resume_ip = abort_ip (what the kernel's rseq_ip_fixup() does when a
 * preempted thread resumes there); else resume_ip = ip.  No registration,
 * or a kernel before 5.13: nothing saved, 0.  Returns 0, or -EFAULT,
 * -ESRCH, -EPERM when the rseq area cannot be read (process_vm_readv).
 */
int ptimer_rseq_cs_save(pid_t tid, uint64_t ip, struct ptimer_rseq_cs_save *s);

/*
 * ptimer_rseq_cs_put_back - after the code ran and the registers are back
 * (IP at resume_ip): when the thread was not moved to abort_ip, write the
 * saved rseq_cs word back if the kernel cleared it meanwhile, so that the
 * next resume decides as it would have without us.  Returns 0, or -EFAULT,
 * -ESRCH, -EPERM of process_vm_readv/writev.
 */
int ptimer_rseq_cs_put_back(pid_t tid, const struct ptimer_rseq_cs_save *s);

#endif
