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

/* --rseq-slice / PTIMER_RSEQ_SLICE: what restore does with each thread's
 * rseq time-slice extension mode (enabled or disabled at dump). */
enum ptimer_rseq_slice {
	PTIMER_RSEQ_SLICE_AUTO = 0,	/* as dumped; warn and go on when the kernel cannot */
	PTIMER_RSEQ_SLICE_REQUIRE,	/* refuse, before anything changes, when it cannot */
	PTIMER_RSEQ_SLICE_OFF,		/* leave every thread's mode alone */
};

/* struct ptrace_rseq_configuration (uapi/linux/ptrace.h, Linux 5.13). */
struct ptimer_rseq_config {
	uint64_t rseq_abi_pointer;	/* struct rseq address; 0 with size 0: none */
	uint32_t rseq_abi_size;		/* rseq_len registered, bytes */
	uint32_t signature;
	uint32_t flags;
	uint32_t pad;
};

/* struct rseq.flags (u32 at offset 16): the kernel's own record of the
 * slice extension (uapi/linux/rseq.h, Linux 7.0). */
#define PTIMER_RSEQ_FLAGS_OFF			16u
#define PTIMER_RSEQ_FLAG_SLICE_EXT_AVAILABLE	(1u << 4)
#define PTIMER_RSEQ_FLAG_SLICE_EXT_ENABLED	(1u << 5)

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
 * ptimer_dump_threads - fill img->threads (n_threads = t->n_threads, tids as
 * t->vtids) for t (all threads stopped): rseq registration from
 * PTRACE_GET_RSEQ_CONFIGURATION (none when that fails, e.g. EIO before
 * Linux 5.13); for threads with a registration, slice_ctrl (when
 * rseq_abi_size >= 32, process_vm_readv) and slice_ext from a GET run in
 * the thread.  Once a thread answers EINVAL or ENOTSUPP (kernel-wide
 * answers) the other threads are not asked: "unavailable".  ops NULL: the
 * real kernel; then a kernel whose prctl answers a GET in ptimer's own
 * thread with EINVAL (no PR_RSEQ_SLICE_EXTENSION) or ENOTSUPP (built
 * without CONFIG_RSEQ_SLICE_EXTENSION), asked once, has no thread asked.
 * Returns 0, -EIO (the in-target GET could not run),
 * -ENOMEM, or the -errno of ops->mem (-EFAULT, -ESRCH, ...); err set.
 */
int ptimer_dump_threads(const struct ptimer_task *t, const struct ptimer_rseq_ops *ops,
			struct ptimer_image *img, struct ptimer_err *err);

/* One image thread whose slice extension mode restore makes as dumped. */
struct ptimer_slice_target {
	pid_t image_tid;		/* tid in the image */
	bool want_enabled;		/* the image's mode: enabled, else disabled */
	bool had_none;			/* the image's "unavailable": no extension */
	pid_t host_tid;			/* target thread, host tid; 0: none maps */
	bool owns_waits;		/* its process was seized by ptimer
					   (struct ptimer_task.owns_waits) */
	uint64_t rseq_abi_pointer;	/* the target thread's registration */
	uint32_t rseq_abi_size;
	bool was_enabled;		/* GET said enabled before we touched it */
	bool skip;			/* as dumped already; auto: cannot be set
					   (warned); or off */
	bool applied;			/* SET done: undo sets was_enabled */
};

/*
 * ptimer_slice_prepare - check every target before anything changes.  One
 * already in the image's mode is skipped, and so is one to disable that
 * the kernel cannot enable (no such thread, no rseq registration, GET
 * answering an error; with the real ops, a kernel whose prctl answers
 * ptimer's own GET with EINVAL or ENOTSUPP, asked without running code in
 * any thread), and one the image had no extension on (had_none) whose
 * area's flags lack SLICE_EXT_ENABLED, which the kernel sets with the mode
 * wherever it can grant (kernel/rseq.c): no code runs in such a thread.
 * One to enable needs the host thread, an rseq registration
 * (PTRACE_GET_RSEQ_CONFIGURATION gives rseq_abi_pointer/size) and a
 * kernel that takes the prctl there (PTIMER_SLICE_PROBE: GET, then SET of
 * the current value, which changes nothing); on such a kernel it is
 * warned or refused without running code in the thread.  On a failure: mode
 * require returns -errno (err names the thread and the kernel's answer);
 * auto logs a warning and marks the target skip; off marks all skip
 * without asking.  pid: the target, for messages.
 */
int ptimer_slice_prepare(pid_t pid, struct ptimer_slice_target *v, int n, enum ptimer_rseq_slice mode,
			 const struct ptimer_rseq_ops *ops, struct ptimer_err *err);

/*
 * ptimer_slice_apply - for each target not skipped: SET the image's mode
 * in the thread, then check it as the kernel keeps it: GET, and struct
 * rseq.flags SLICE_EXT_ENABLED where the kernel set SLICE_EXT_AVAILABLE.
 * slice_ctrl is left as it is: a grant never outlives a ptrace stop (the
 * kernel revokes it, zeroing slice_ctrl, when work other than a reschedule
 * is pending on the way to user space, include/linux/rseq_entry.h), and a
 * re-registration zeroes it too.  Failures as in prepare (require: -errno;
 * auto: warning).
 */
int ptimer_slice_apply(pid_t pid, struct ptimer_slice_target *v, int n, enum ptimer_rseq_slice mode,
		       const struct ptimer_rseq_ops *ops, struct ptimer_err *err);

/* ptimer_slice_undo - put back the mode a target had before apply set it
 * (a failed restore leaves the threads as they were). */
void ptimer_slice_undo(pid_t pid, struct ptimer_slice_target *v, int n, const struct ptimer_rseq_ops *ops);

/*
 * ptimer_slice_targets - the image's threads to make as dumped ("enabled";
 * unless enabled_only also "disabled" and "unavailable", both restored as
 * disabled: a thread that had no extension gets none) mapped into t
 * (ptimer_map_tid with map[n_map], the --tid-map entries; then the host
 * tid; 0 when it does not map).  *v malloc'ed (free it), *n its length
 * (0: nothing to do, *v NULL).
 * Returns 0 or -ENOMEM.
 */
int ptimer_slice_targets(const struct ptimer_task *t, const struct ptimer_image *img,
			 const struct ptimer_tid_map *map, int n_map, bool enabled_only,
			 struct ptimer_slice_target **v, int *n, struct ptimer_err *err);

#endif
