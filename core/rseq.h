/* SPDX-License-Identifier: MIT */
/*
 * rseq time-slice extension state of a process's threads: read at dump,
 * enabled again at restore (prctl PR_RSEQ_SLICE_EXTENSION, uapi/linux/rseq.h).
 */
#ifndef PTIMER_CORE_RSEQ_H
#define PTIMER_CORE_RSEQ_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/task.h"
#include "images/image.h"

/* --rseq-slice / PTIMER_RSEQ_SLICE: what restore does with threads whose
 * rseq time-slice extension was enabled at dump. */
enum ptimer_rseq_slice {
	PTIMER_RSEQ_SLICE_AUTO = 0,	/* enable it; warn and go on when the kernel cannot */
	PTIMER_RSEQ_SLICE_REQUIRE,	/* refuse, before anything changes, when it cannot */
	PTIMER_RSEQ_SLICE_OFF,		/* leave it (and slice_ctrl) alone */
};

/* struct ptrace_rseq_configuration (uapi/linux/ptrace.h, Linux 5.13). */
struct ptimer_rseq_config {
	uint64_t rseq_abi_pointer;	/* struct rseq address; 0 with size 0: none */
	uint32_t rseq_abi_size;		/* rseq_len registered, bytes */
	uint32_t signature;
	uint32_t flags;
	uint32_t pad;
};

/* slice_ctrl bytes (uapi/linux/rseq.h struct rseq_slice_ctrl, little end). */
#define PTIMER_SLICE_CTRL_REQUEST	0	/* set by user space */
#define PTIMER_SLICE_CTRL_GRANTED	1	/* set by the kernel only */

/*
 * How the host reaches a thread's rseq state; ptimer_rseq_real_ops uses the
 * kernel (ptrace, the blob through restorer/host/inject.c, process_vm_readv/writev), the unit
 * tests a simulated one.  Every function returns 0 or -errno.
 *  get_config: PTRACE_GET_RSEQ_CONFIGURATION of host tid (stopped).
 *  slice: run PTIMER_OP_SLICE (how: enum ptimer_slice_how, arg: SET's
 *    arg3) in host tid; get and set get the kernel's answers (0/1, or -errno;
 *    set is 1 when SET was not run).
 *  mem: read (write false) or write len bytes at addr in the process of
 *    host tid pid (a live thread: a zombie leader has no memory to read).
 */
struct ptimer_rseq_ops {
	int (*get_config)(void *ctx, pid_t tid, struct ptimer_rseq_config *c);
	int (*slice)(void *ctx, pid_t tid, bool owns_waits, uint32_t how, uint32_t arg, int32_t *get,
		     int32_t *set, struct ptimer_err *err);
	int (*mem)(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len, bool write);
	void *ctx;
};
extern const struct ptimer_rseq_ops ptimer_rseq_real_ops;

/* ptimer_slice_errname - the kernel's answer to prctl(PR_RSEQ_SLICE_EXTENSION)
 * in words: "EINVAL (this kernel has no ...)", "ENOTSUPP (...)", "ENXIO (...)". */
const char *ptimer_slice_errname(int e);

/* ptimer_slice_rseq_slice_parse - "auto", "require", "off" into *out;
 * 0 or -EINVAL. */
int ptimer_slice_rseq_slice_parse(const char *s, enum ptimer_rseq_slice *out);

/*
 * ptimer_slice_ctrl_clear_granted - the restore's edit of struct
 * rseq.slice_ctrl (4 bytes as in memory, offset 28 of struct rseq): clear
 * byte 1 (granted), keep byte 0 (request) and the rest.  A grant is only
 * valid while the kernel holds it (kernel/rseq.c terminates a thread with
 * an inconsistent slice_ctrl).  Returns true when granted was set.
 */
bool ptimer_slice_ctrl_clear_granted(uint8_t slice_ctrl[4]);

/*
 * ptimer_dump_threads - fill img->threads (n_threads = t->n_threads, tids as
 * t->vtids) for t (all threads stopped): rseq registration from
 * PTRACE_GET_RSEQ_CONFIGURATION (none when that fails, e.g. EIO before
 * Linux 5.13); for threads with a registration, slice_ctrl (when
 * rseq_abi_size >= 32, process_vm_readv) and slice_ext from a GET run in
 * the thread.  Once a thread answers EINVAL or ENOTSUPP (kernel-wide
 * answers) the other threads are not asked: "unavailable".  ops NULL: the
 * real kernel; then a kernel without PR_RSEQ_SLICE_EXTENSION (EINVAL to a
 * GET in ptimer's own thread, asked once) has no thread asked at all.
 * Returns 0, -EIO (the in-target GET could not run),
 * -ENOMEM, or the -errno of ops->mem (-EFAULT, -ESRCH, ...); err set.
 */
int ptimer_dump_threads(const struct ptimer_task *t, const struct ptimer_rseq_ops *ops,
			struct ptimer_image *img, struct ptimer_err *err);

/* One image thread whose slice extension restore must enable. */
struct ptimer_slice_target {
	pid_t image_tid;		/* tid in the image */
	pid_t host_tid;			/* target thread, host tid; 0: none maps */
	bool owns_waits;		/* its process was seized by ptimer
					   (struct ptimer_task.owns_waits) */
	uint64_t rseq_abi_pointer;	/* the target thread's registration */
	uint32_t rseq_abi_size;
	bool was_enabled;		/* GET said enabled before we touched it */
	bool skip;			/* auto: cannot be enabled (warned), or off */
	bool applied;			/* SET ENABLE done */
};

/*
 * ptimer_slice_prepare - check every target before anything changes:
 * host thread exists, has an rseq registration (PTRACE_GET_RSEQ_CONFIGURATION
 * gives rseq_abi_pointer/size), and the kernel takes the prctl there
 * (PTIMER_SLICE_PROBE: GET, then SET of the current value, which changes
 * nothing).  On a failure: mode require returns -errno (err names the
 * thread and the kernel's answer); auto logs a warning and marks the target
 * skip; off marks all skip without asking.  pid: the target, for messages.
 */
int ptimer_slice_prepare(pid_t pid, struct ptimer_slice_target *v, int n, enum ptimer_rseq_slice mode,
			 const struct ptimer_rseq_ops *ops, struct ptimer_err *err);

/*
 * ptimer_slice_apply - for each target not skipped: SET ENABLE in the thread
 * (then GET must say enabled), and when rseq_abi_size >= 32 clear
 * slice_ctrl.granted in the process's memory, keeping request.  Failures as
 * in prepare (require: -errno; auto: warning); a memory access failure is
 * always -errno.
 */
int ptimer_slice_apply(pid_t pid, struct ptimer_slice_target *v, int n, enum ptimer_rseq_slice mode,
		       const struct ptimer_rseq_ops *ops, struct ptimer_err *err);

/* ptimer_slice_undo - disable again where apply enabled it and it was not
 * enabled before (a failed restore leaves the threads as they were). */
void ptimer_slice_undo(pid_t pid, struct ptimer_slice_target *v, int n, const struct ptimer_rseq_ops *ops);

/*
 * ptimer_slice_targets - the image's "enabled" threads mapped into t
 * (ptimer_map_tid with map[n_map], the --tid-map entries; then the host
 * tid; 0 when it does not map).  *v malloc'ed (free it), *n its length
 * (0: nothing to do, *v NULL).
 * Returns 0 or -ENOMEM.
 */
int ptimer_slice_targets(const struct ptimer_task *t, const struct ptimer_image *img,
			 const struct ptimer_tid_map *map, int n_map, struct ptimer_slice_target **v, int *n,
			 struct ptimer_err *err);

#endif
