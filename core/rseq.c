// SPDX-License-Identifier: MIT
/*
 * rseq time-slice extension state, per thread: dumped next to the timers and
 * set back as dumped on restore, enabled or disabled.
 *
 * The state lives in three places (Linux 7.0+, kernel/rseq.c and
 * uapi/linux/rseq.h, uapi/linux/prctl.h):
 *  - the rseq registration, which the tracer reads with
 *    PTRACE_GET_RSEQ_CONFIGURATION (0x420f, Linux 5.13);
 *  - the per-thread "enabled" mode, which only the thread itself can read
 *    or set: prctl(PR_RSEQ_SLICE_EXTENSION, GET/SET), run by the blob
 *    (PTIMER_OP_SLICE) in that thread; the kernel mirrors it in
 *    struct rseq.flags (SLICE_EXT_ENABLED beside SLICE_EXT_AVAILABLE);
 *  - struct rseq.slice_ctrl in the process's memory (u32 at offset 28: byte
 *    request at 28, byte granted at 29), saved in the image as it was and
 *    never written: the kernel zeroes it when it revokes a grant, which it
 *    does on the way to a ptrace stop (any pending work but a reschedule,
 *    include/linux/rseq_entry.h), so a dump never holds a grant.
 * Only a kernel built with CONFIG_RSEQ_SLICE_EXTENSION grants extensions
 * (Debian's do not), and only to threads registered in "v2" mode: rseq(2)
 * with at least getauxval(AT_RSEQ_FEATURE_SIZE) bytes (33 on 7.x) aligned
 * on AT_RSEQ_ALIGN (kernel/rseq.c rseq_register); a 32-byte registration
 * (glibc 2.35-2.39) answers GET with 0 and SET with ENOTSUPP: saved as
 * "unavailable".  test/qemu/slice-kernel.sh builds such a kernel and the
 * slice-grants case runs on it; the paths no kernel takes on demand (a SET
 * that fails after a probe that passed) are test/unit/simkernel.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>

#include "core/rseq.h"
#include "core/log.h"
#include "core/task.h"
#include "lib/procfs.h"
#include "lib/vm.h"
#include "restorer/host/inject.h"

#define PTRACE_GET_RSEQ_CONFIGURATION_	0x420f	/* uapi/linux/ptrace.h, Linux 5.13 */
#define ENOTSUPP_			524	/* include/linux/errno.h */

const char *ptimer_slice_errname(int e)
{
	switch (e) {
	case 0:
		return "no error";
	case -EINVAL:
		return "EINVAL (this kernel has no rseq time-slice extension)";
	case -ENOTSUPP_:
		return "ENOTSUPP (time-slice extensions are disabled in this kernel)";
	case -ENXIO:
		return "ENXIO (no rseq area registered for the thread)";
	}
	return e < 0 && e > -4096 ? strerror(-e) : "unexpected answer";
}

int ptimer_slice_rseq_slice_parse(const char *s, enum ptimer_rseq_slice *out)
{
	if (!strcmp(s, "auto"))
		*out = PTIMER_RSEQ_SLICE_AUTO;
	else if (!strcmp(s, "require"))
		*out = PTIMER_RSEQ_SLICE_REQUIRE;
	else if (!strcmp(s, "off"))
		*out = PTIMER_RSEQ_SLICE_OFF;
	else
		return -EINVAL;
	return 0;
}

/* ---- the real kernel ------------------------------------------------------- */

static int real_get_config(void *ctx, pid_t tid, struct ptimer_rseq_config *c)
{
	long r;

	memset(c, 0, sizeof(*c));
	r = ptrace(PTRACE_GET_RSEQ_CONFIGURATION_, tid, (void *)sizeof(*c), c);
	if (r < 0)
		return -errno;
	return 0;
}

static int real_slice(void *ctx, pid_t tid, bool owns_waits, uint32_t how, uint32_t arg, int32_t *get,
		      int32_t *set, struct ptimer_err *err)
{
	struct ptimer_blob_args a = { .op = PTIMER_OP_SLICE, .slice_how = how, .slice_arg = arg };
	struct ptimer_blob *b = NULL;
	int ret, r;

	ret = ptimer_blob_open(&b, tid, 0, 0, owns_waits ? PTIMER_BLOB_OWNS_WAITS : 0, err);
	if (ret)
		return ret;
	ret = ptimer_blob_call(b, &a, err);
	r = ptimer_blob_close(b, ret ? NULL : err);
	if (!ret)
		ret = r;
	if (!ret && a.result)
		ret = ptimer_errf(err, EIO, "thread %d: the restorer failed (%lld)", tid, (long long)a.result);
	if (!ret) {
		*get = a.slice_get;
		*set = a.slice_set;
	}
	return ret;
}

static int real_mem(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len, bool write)
{
	return ptimer_vm_copy(pid, addr, buf, len, write);
}

const struct ptimer_rseq_ops ptimer_rseq_real_ops = {
	.get_config = real_get_config,
	.slice = real_slice,
	.mem = real_mem,
};

static const struct ptimer_rseq_ops *ops_or_real(const struct ptimer_rseq_ops *ops)
{
	return ops ? ops : &ptimer_rseq_real_ops;
}

/* ---- dump -------------------------------------------------------------------- */

/*
 * The kernel's answer when no thread can have extensions, asked once in
 * ptimer's own thread: -EINVAL from a kernel without the prctl (6.18 and
 * older: kernel/sys.c, prctl's default case), -ENOTSUPP from one built
 * without CONFIG_RSEQ_SLICE_EXTENSION (Debian's 7.x: the stub in
 * include/linux/rseq.h answers every call so); 0 where GET answers, which
 * on a slice kernel it does for every thread (kernel/rseq.c
 * rseq_slice_extension_prctl: GET reads the thread's state, SET alone
 * checks the registration).  No thread of any process need be asked, and
 * no code run in one, to learn it.
 */
static int kernel_slice_answer(void)
{
	static int answer = 1;	/* 1: not asked yet */

	if (answer == 1)
		answer = prctl(PTIMER_PR_RSEQ_SLICE_EXTENSION, PTIMER_PR_RSEQ_SLICE_EXTENSION_GET, 0, 0, 0) < 0 &&
			 (errno == EINVAL || errno == ENOTSUPP_) ? -errno : 0;
	return answer;
}

int ptimer_dump_threads(const struct ptimer_task *t, const struct ptimer_rseq_ops *ops,
			struct ptimer_image *img, struct ptimer_err *err)
{
	struct ptimer_thread *v;
	int kernel_answer = 0;	/* EINVAL/ENOTSUPP seen: the kernel's, not the thread's */

	ops = ops_or_real(ops);
	if (ops == &ptimer_rseq_real_ops)
		kernel_answer = kernel_slice_answer();
	v = calloc((size_t)t->n_threads + 1, sizeof(*v));
	if (!v)
		return ptimer_errf(err, ENOMEM, "out of memory for %d threads", t->n_threads);
	for (int i = 0; i < t->n_threads; i++) {
		struct ptimer_thread *th = &v[i];
		struct ptimer_rseq_config c;
		int32_t get = 0, set = 1;
		int ret;

		th->tid = t->vtids[i];
		th->slice_ext = PTIMER_SLICE_EXT_UNAVAILABLE;
		ret = ops->get_config(ops->ctx, t->tids[i], &c);
		if (ret) {
			/* EIO: kernel before 5.13; the thread's rseq is then unknown */
			ptimer_log(PTIMER_LOG_DEBUG, "process %d: thread %d: PTRACE_GET_RSEQ_CONFIGURATION: "
				   "%s; saving it without rseq state", t->pid, t->tids[i], strerror(-ret));
			continue;
		}
		if (!c.rseq_abi_size)
			continue;
		th->rseq_abi_pointer = c.rseq_abi_pointer;
		th->rseq_abi_size = c.rseq_abi_size;
		th->rseq_signature = c.signature;
		if (th->rseq_abi_size >= PTIMER_RSEQ_SLICE_CTRL_END) {
			ret = ops->mem(ops->ctx, t->tids[i], th->rseq_abi_pointer + PTIMER_RSEQ_SLICE_CTRL_OFF,
				       &th->slice_ctrl, sizeof(th->slice_ctrl), false);
			if (ret) {
				ret = ptimer_errf(err, -ret, "process %d: thread %d: reading struct rseq."
						  "slice_ctrl at 0x%llx: %s", t->pid, t->tids[i],
						  (unsigned long long)(th->rseq_abi_pointer +
								       PTIMER_RSEQ_SLICE_CTRL_OFF),
						  strerror(-ret));
				free(v);
				return ret;
			}
		}
		if (kernel_answer)
			continue;
		ret = ops->slice(ops->ctx, t->tids[i], t->owns_waits, PTIMER_SLICE_GET, 0, &get, &set, err);
		if (ret) {
			free(v);
			return ret;
		}
		if (get == PTIMER_PR_RSEQ_SLICE_EXT_ENABLE)
			th->slice_ext = PTIMER_SLICE_EXT_ENABLED;
		else if (get == 0 && th->rseq_abi_size > PTIMER_RSEQ_SLICE_CTRL_END)
			th->slice_ext = PTIMER_SLICE_EXT_DISABLED;
		/* else a 32-byte (original ABI) area: GET answers 0, SET ENABLE
		 * fails; the kernel grants only to registrations of its feature
		 * size (kernel/rseq.c): unavailable, whatever the thread asks */
		else if (get == -EINVAL || get == -ENOTSUPP_)
			kernel_answer = get;	/* the same in every thread: ask no more */
	}
	img->n_threads = (uint32_t)t->n_threads;
	img->threads = v;
	return 0;
}

/* ---- restore ------------------------------------------------------------------ */

int ptimer_slice_targets(const struct ptimer_task *t, const struct ptimer_image *img,
			 const struct ptimer_tid_map *map, int n_map, bool enabled_only,
			 struct ptimer_slice_target **v, int *n, struct ptimer_err *err)
{
	/* unavailable at the dump: the thread had no extension, so restored
	 * it has none either, whatever the target's thread started with */
	uint32_t least = enabled_only ? PTIMER_SLICE_EXT_ENABLED : PTIMER_SLICE_EXT_UNAVAILABLE;
	int k = 0;

	*v = NULL;
	*n = 0;
	for (uint32_t i = 0; i < img->n_threads; i++)
		k += img->threads[i].slice_ext >= least;
	if (!k)
		return 0;
	*v = calloc((size_t)k, sizeof(**v));
	if (!*v)
		return ptimer_errf(err, ENOMEM, "out of memory for %d threads", k);
	for (uint32_t i = 0; i < img->n_threads; i++) {
		const struct ptimer_thread *th = &img->threads[i];
		struct ptimer_slice_target *g;
		pid_t vt;

		if (th->slice_ext < least)
			continue;
		g = &(*v)[(*n)++];
		g->image_tid = th->tid;
		g->want_enabled = th->slice_ext == PTIMER_SLICE_EXT_ENABLED;
		g->had_none = th->slice_ext == PTIMER_SLICE_EXT_UNAVAILABLE;
		vt = ptimer_map_tid(t, img->pid, map, n_map, th->tid);
		g->host_tid = vt ? ptimer_task_host_tid(t, vt) : 0;
		g->owns_waits = t->owns_waits;
	}
	return 0;
}

/* auto: warn and go on (0); require: refuse (-e).  A thread of the image
 * with no counterpart in the target (host_tid 0) is named by its image tid. */
static int slice_trouble(enum ptimer_rseq_slice mode, struct ptimer_slice_target *g, pid_t pid, int e,
			 struct ptimer_err *err, const char *what)
{
	char who[64];

	if (g->host_tid)
		snprintf(who, sizeof(who), "thread %d (tid %d in the image)", g->host_tid, g->image_tid);
	else
		snprintf(who, sizeof(who), "tid %d of the image", g->image_tid);
	const char *had = g->want_enabled ? "enabled" : g->had_none ? "unavailable" : "disabled";

	if (mode == PTIMER_RSEQ_SLICE_REQUIRE)
		return ptimer_errf(err, e, "process %d: %s had the rseq time-slice extension %s, but "
				   "%s; --rseq-slice=require: nothing restored (use --rseq-slice=auto to "
				   "restore without it)", pid, who, had, what);
	ptimer_log(PTIMER_LOG_WARN, "process %d: %s had the rseq time-slice extension %s, but %s; "
		   "restoring it %s", pid, who, had, what,
		   g->want_enabled ? "without" : "with the extension enabled");
	g->skip = true;
	return 0;
}

int ptimer_slice_prepare(pid_t pid, struct ptimer_slice_target *v, int n, enum ptimer_rseq_slice mode,
			 const struct ptimer_rseq_ops *ops, struct ptimer_err *err)
{
	char what[200];
	int kernel = 0;

	ops = ops_or_real(ops);
	if (ops == &ptimer_rseq_real_ops)
		kernel = kernel_slice_answer();
	for (int i = 0; i < n; i++) {
		struct ptimer_slice_target *g = &v[i];
		struct ptimer_rseq_config c;
		int32_t get = 0, set = 1;
		int ret;

		g->skip = mode == PTIMER_RSEQ_SLICE_OFF;
		if (g->skip)
			continue;
		/* to disable: a thread that is not there, or cannot be enabled,
		 * is disabled already */
		if (!g->want_enabled && (!g->host_tid || kernel)) {
			g->skip = true;
			continue;
		}
		if (!g->host_tid || kernel) {
			if (!g->host_tid)
				snprintf(what, sizeof(what), "the target has no such thread (pass --tid-map %d=TID)",
					 g->image_tid);
			else
				snprintf(what, sizeof(what), "the kernel answers prctl(PR_RSEQ_SLICE_EXTENSION, GET) "
					 "with %s", ptimer_slice_errname(kernel));
			ret = slice_trouble(mode, g, pid, g->host_tid ? -kernel : ESRCH, err, what);
			if (ret)
				return ret;
			continue;
		}
		ret = ops->get_config(ops->ctx, g->host_tid, &c);
		if (!g->want_enabled && (ret || !c.rseq_abi_size)) {
			g->skip = true;
			continue;
		}
		/* no extension at the dump: only an enabled thread needs
		 * code run in it, and the kernel's flags say which is */
		if (g->had_none) {
			uint32_t flags = 0;

			if (c.rseq_abi_size < PTIMER_RSEQ_FLAGS_OFF + sizeof(flags) ||
			    ops->mem(ops->ctx, g->host_tid, c.rseq_abi_pointer + PTIMER_RSEQ_FLAGS_OFF, &flags,
				     sizeof(flags), false) ||
			    !(flags & PTIMER_RSEQ_FLAG_SLICE_EXT_ENABLED)) {
				g->skip = true;
				continue;
			}
		}
		if (ret || !c.rseq_abi_size) {
			snprintf(what, sizeof(what), "it has no rseq registration to attach it to (%s)",
				 ret ? strerror(-ret) : "PTRACE_GET_RSEQ_CONFIGURATION: none");
			ret = slice_trouble(mode, g, pid, ret ? -ret : ENXIO, err, what);
			if (ret)
				return ret;
			continue;
		}
		g->rseq_abi_pointer = c.rseq_abi_pointer;
		g->rseq_abi_size = c.rseq_abi_size;
		/* to disable: GET alone (SET 0 never fails where GET answers) */
		ret = ops->slice(ops->ctx, g->host_tid, g->owns_waits,
				 g->want_enabled ? PTIMER_SLICE_PROBE : PTIMER_SLICE_GET, 0, &get, &set, err);
		if (ret)
			return ret;
		g->was_enabled = get == PTIMER_PR_RSEQ_SLICE_EXT_ENABLE;
		/* as the image has it already (GET answering an error: the
		 * kernel cannot enable it, so it is disabled) */
		if (g->want_enabled == g->was_enabled || (!g->want_enabled && get < 0)) {
			g->skip = true;
			continue;
		}
		if (get < 0 || set < 0) {
			snprintf(what, sizeof(what), "the kernel answers prctl(PR_RSEQ_SLICE_EXTENSION, %s) "
				 "with %s", get < 0 ? "GET" : "SET", ptimer_slice_errname(get < 0 ? get : set));
			ret = slice_trouble(mode, g, pid, get < 0 ? -get : -set, err, what);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int ptimer_slice_apply(pid_t pid, struct ptimer_slice_target *v, int n, enum ptimer_rseq_slice mode,
		       const struct ptimer_rseq_ops *ops, struct ptimer_err *err)
{
	char what[200];

	ops = ops_or_real(ops);
	for (int i = 0; i < n; i++) {
		struct ptimer_slice_target *g = &v[i];
		uint32_t want = g->want_enabled ? PTIMER_PR_RSEQ_SLICE_EXT_ENABLE : 0, flags = 0;
		int32_t get = 0, set = 1;
		int ret;

		if (g->skip)
			continue;
		ret = ops->slice(ops->ctx, g->host_tid, g->owns_waits, PTIMER_SLICE_SET, want, &get, &set, err);
		if (ret)
			return ret;
		/* SET changed the thread: undo puts it back whatever GET says */
		g->applied = set >= 0;
		/* the kernel's own record, struct rseq.flags: ENABLED follows the
		 * mode wherever it set AVAILABLE (kernel/rseq.c) */
		if (!ret && set >= 0 && (uint32_t)get == want &&
		    !ops->mem(ops->ctx, g->host_tid, g->rseq_abi_pointer + PTIMER_RSEQ_FLAGS_OFF, &flags,
			      sizeof(flags), false) &&
		    (flags & PTIMER_RSEQ_FLAG_SLICE_EXT_AVAILABLE) &&
		    !!(flags & PTIMER_RSEQ_FLAG_SLICE_EXT_ENABLED) != g->want_enabled)
			get = -EPROTO;
		if (set < 0 || (uint32_t)get != want) {
			snprintf(what, sizeof(what), "the kernel answers prctl(PR_RSEQ_SLICE_EXTENSION, SET, %s) "
				 "with %s", want ? "ENABLE" : "0",
				 set < 0 ? ptimer_slice_errname(set)
				 : get == -EPROTO ? "success, but struct rseq.flags says otherwise"
						  : want ? "success, but GET says disabled" : "success, but GET says enabled");
			ret = slice_trouble(mode, g, pid, set < 0 ? -set : EPROTO, err, what);
			if (ret)
				return ret;
		}
	}
	return 0;
}

void ptimer_slice_undo(pid_t pid, struct ptimer_slice_target *v, int n, const struct ptimer_rseq_ops *ops)
{
	ops = ops_or_real(ops);
	for (int i = 0; i < n; i++) {
		struct ptimer_slice_target *g = &v[i];
		int32_t get = 0, set = 1;
		struct ptimer_err e;

		if (!g->applied)
			continue;
		if ((ops->slice(ops->ctx, g->host_tid, g->owns_waits, PTIMER_SLICE_SET,
				g->was_enabled ? PTIMER_PR_RSEQ_SLICE_EXT_ENABLE : 0, &get, &set, &e) || set < 0) &&
		    !ptimer_thread_exiting(pid, g->host_tid))	/* gone: nothing to undo */
			ptimer_log(PTIMER_LOG_ERROR, "process %d: thread %d: could not %s the rseq "
				   "time-slice extension again", pid, g->host_tid,
				   g->was_enabled ? "enable" : "disable");
		g->applied = false;
	}
}
