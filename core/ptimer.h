/* SPDX-License-Identifier: MIT */
/*
 * ptimer's core, shared by the CLI (cli/cli.c) and the CRIU plugin:
 * reading /proc/PID/timers, stopping a process's threads, dumping and
 * restoring its POSIX timers.
 */
#ifndef PTIMER_PLUGIN_PTIMER_H
#define PTIMER_PLUGIN_PTIMER_H

#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "images/image.h"
#include "restorer/abi.h"

/* ptimer_errf - format a one-line message into err (may be NULL); returns -e. */
int ptimer_errf(struct ptimer_err *err, int e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Diagnostics to stderr (CLI) or criu's log (plugin): ptimer_log_fn is set
 * by the caller.  @where is "FILE:LINE" of the ptimer_log() call, which the
 * plugin puts into criu's "Error (FILE:LINE): " / "Warn  (FILE:LINE): " tags
 * (criu's pr_err/pr_warn in include/common/log.h or criu/include/log.h).
 */
extern void (*ptimer_log_fn)(int level, const char *where, const char *msg);
enum { PTIMER_LOG_ERROR, PTIMER_LOG_WARN, PTIMER_LOG_INFO, PTIMER_LOG_DEBUG };
extern int ptimer_verbosity;	/* messages above this level are dropped */
void ptimer_log_at(int level, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define ptimer_log(level, ...) ptimer_log_at(level, __FILE__, __LINE__, __VA_ARGS__)

/* ---- /proc/PID/timers (core/proc_timers.c) ---------------------------- */

/*
 * ptimer_proc_parse_timers - parse the text of /proc/PID/timers.
 * buf/len: the whole file.  Each timer is four lines
 * (fs/proc/base.c show_timer()):
 *   "ID: %d", "signal: %d/%px" (16 hex digits; kernels before the switch
 *   to %px printed %p: hex, or "(null)" for NULL),
 *   "notify: signal|none|thread/pid|tid.%d", "ClockID: %d".
 * Fills timer_id, signo, sival, sigev_notify (THREAD_ID for "tid"),
 * notify_tid (as the /proc mount's pid namespace sees it) and clock_id;
 * the timing fields are left 0.  Anything else is an error, not a guess.
 * @what names the source in messages.  *out is malloc'ed (free it), in file
 * order (newest first).  Returns 0, -EINVAL (malformed: err names the line),
 * -ENOMEM.
 */
int ptimer_proc_parse_timers(const char *buf, size_t len, const char *what,
			     struct ptimer_timer **out, uint32_t *n, struct ptimer_err *err);

/*
 * ptimer_proc_read_timers - read and parse /proc/<pid>/timers.  Reads with
 * plain read() into one growing buffer: the kernel returns at most a page per
 * read() and rewalks the list for each, so extra layers only cost (FACTS).
 * Returns 0, -ENOENT (no such process or no CONFIG_CHECKPOINT_RESTORE),
 * -EACCES, -EINVAL, -ENOMEM; err set.
 */
int ptimer_proc_read_timers(pid_t pid, struct ptimer_timer **out, uint32_t *n,
			    struct ptimer_err *err);

/*
 * ptimer_proc_nspid - the innermost pid of host tid (NSpid: last field of
 * /proc/<pid>/task/<tid>/status; Linux 4.1+).  Returns that pid (> 0), or
 * -ENOENT (gone), -EINVAL (no NSpid line: then the caller's namespace is the
 * only one and tid itself is returned instead).
 */
pid_t ptimer_proc_nspid(pid_t pid, pid_t tid);

/* ptimer_proc_tgid - the process (Tgid: of /proc/<tid>/status) that host
 * thread tid belongs to; -ENOENT when it is gone. */
pid_t ptimer_proc_tgid(pid_t tid);

/*
 * ptimer_proc_threads - the host tids of pid's threads (/proc/<pid>/task),
 * leader first.  *tids malloc'ed.  Returns the count (>= 1) or -errno.
 */
int ptimer_proc_threads(pid_t pid, pid_t **tids);

/* ---- stopping a process (core/task.c) ---------------------------------- */

struct ptimer_task {
	pid_t pid;		/* host pid (tgid) */
	pid_t vpid;		/* pid in its own pid namespace */
	int n_threads;
	pid_t *tids;		/* host tids, leader first */
	pid_t *vtids;		/* the same, in the process's own namespace */
	bool *seized;		/* tids[i] is attached by us */
	int runner;		/* index of the thread code runs in: the first
				   live one (the leader may have exited) */
	bool stopped;		/* the process was in a group-stop (SIGSTOP,
				   SIGTSTP, ...) when seized: it stays stopped */
};

/*
 * ptimer_task_runner - the host tid of t's thread that ptimer runs code in:
 * the leader, or when the leader has exited (pthread_exit() while other
 * threads live: a zombie that holds the process's pid) the first live
 * thread.  Timers belong to the process (kernel/time/posix-timers.c keeps
 * them in signal_struct), so any of its threads can read and create them.
 */
pid_t ptimer_task_runner(const struct ptimer_task *t);

/*
 * ptimer_task_seize - PTRACE_SEIZE + PTRACE_INTERRUPT every thread of pid
 * and wait until each is in a ptrace stop, listing /proc/PID/task again
 * until no new thread shows up (bounded).  Pending signals met on the way
 * are re-injected, so nothing is lost.  Source: ptrace(2) "PTRACE_SEIZE",
 * CRIU compel/src/lib/infect.c compel_stop_task().  A leader that has
 * exited while other threads live is listed but not attached (a zombie
 * cannot be traced); a process in a group-stop is seized stopped
 * (t->stopped) and goes back to its stop on release (ptrace(2) "group-stop";
 * PTRACE_DETACH re-enters it).  On failure every thread
 * seized so far is released.  Returns 0 or -errno (EPERM: no ptrace
 * permission, ESRCH: gone), err set.
 */
int ptimer_task_seize(struct ptimer_task *t, pid_t pid, struct ptimer_err *err);

/* What decides whether we may attach (core/caps.c), gathered from /proc,
 * libcap and yama, so that the decision can be tested alone. */
struct ptimer_attach_facts {
	pid_t pid;			/* the target */
	pid_t tracer;			/* TracerPid of /proc/PID/status; 0: none */
	char tracer_comm[64];		/* its comm, for the message */
	int yama_scope;			/* /proc/sys/kernel/yama/ptrace_scope; -1: no yama */
	bool cap_sys_ptrace;		/* ours, effective */
	bool ids_known;			/* uid/gid read */
	uid_t uid[3];			/* the target's real, effective, saved uid */
	gid_t gid[3];
	uid_t my_uid;			/* ours, real (PTRACE_MODE_REALCREDS) */
	gid_t my_gid;
	bool not_dumpable;		/* /proc/PID owned by root while its euid is not */
};

/*
 * ptimer_attach_verdict - the kernel's rules (kernel/ptrace.c
 * __ptrace_may_access(), security/yama/yama_lsm.c) applied to f: another
 * tracer (-EBUSY, "already traced by process N"), yama ptrace_scope 3
 * (-EPERM), without CAP_SYS_PTRACE: another user's process (-EPERM naming
 * CAP_SYS_PTRACE), a non-dumpable one, ptrace_scope 2.  ptrace_scope 1 is
 * left to the seize (PR_SET_PTRACER exceptions are not visible).  Returns
 * 0 or -errno with err set.
 */
int ptimer_attach_verdict(const struct ptimer_attach_facts *f, struct ptimer_err *err);

/* ptimer_may_attach - gather the facts for pid and give the verdict: asked
 * before PTRACE_SEIZE.  Anything unreadable counts as "no objection". */
int ptimer_may_attach(pid_t pid, struct ptimer_err *err);

/* ptimer_yama_hint - "; yama ptrace_scope is N ..." for an EPERM message
 * when yama's setting may be why, else "". */
const char *ptimer_yama_hint(void);

/* ptimer_yama_scope - /proc/sys/kernel/yama/ptrace_scope (0..3), or -1 when
 * absent (no yama in this kernel) or unreadable. */
int ptimer_yama_scope(void);

/*
 * ptimer_task_adopt - describe a process someone else (criu) already holds
 * stopped: fills tids/vtids, attaches nothing, releases nothing.
 */
int ptimer_task_adopt(struct ptimer_task *t, pid_t pid, struct ptimer_err *err);

/* ptimer_task_release - detach every thread we seized (the process runs on,
 * or stays stopped if it was); frees t's arrays.  Safe to call twice.
 * Returns how many seized threads had left their ptrace stop (PTRACE_DETACH
 * ESRCH: killed while stopped), 0 normally. */
int ptimer_task_release(struct ptimer_task *t);

/* ptimer_task_vtid - the process's own-namespace id of host tid, or 0. */
pid_t ptimer_task_vtid(const struct ptimer_task *t, pid_t host_tid);
/* ptimer_task_host_tid - the host tid of own-namespace vtid, or 0. */
pid_t ptimer_task_host_tid(const struct ptimer_task *t, pid_t vtid);

/* ---- exits and exec during a dump (core/procwatch.c) -------------------- */

/* One event of the watched process (uapi/linux/cn_proc.h PROC_EVENT_*). */
enum { PTIMER_PROC_EXEC = 1, PTIMER_PROC_EXIT = 2 };
struct ptimer_proc_event {
	uint32_t what;		/* PTIMER_PROC_EXEC or PTIMER_PROC_EXIT */
	pid_t tid;		/* the thread (host pid, initial pid namespace) */
	uint64_t ns;		/* proc_event.timestamp_ns: CLOCK_MONOTONIC, ns */
};

/* Which events count (CLOCK_MONOTONIC ns, as ptimer_now_ns()). */
struct ptimer_procwatch_window {
	uint64_t exit_from_ns;	/* exits of the given tids from here on (0: since start) */
	uint64_t until_ns;	/* exits and exec up to here (0: up to now) */
};

struct ptimer_procwatch;

/*
 * ptimer_procwatch_start - subscribe to the proc connector (libnl-3
 * NETLINK_CONNECTOR socket, group CN_IDX_PROC, PROC_CN_MCAST_LISTEN;
 * uapi/linux/connector.h, uapi/linux/cn_proc.h) and keep the EXEC and EXIT
 * events of process pid (tgid) from now on.  Needs CAP_NET_ADMIN and
 * CONFIG_PROC_EVENTS; events reach listeners in the initial user and pid
 * namespaces only.  *w set on success.  Returns 0 or -errno (err names the
 * reason; callers go on without the watch, with a warning).
 */
int ptimer_procwatch_start(struct ptimer_procwatch **w, pid_t pid, struct ptimer_err *err);

/*
 * ptimer_procwatch_poll - take what the kernel has queued (non-blocking)
 * and return every event of the process since start (*ev owned by w, valid
 * until the next poll or stop).  Returns 0, or -ENOBUFS when events were
 * lost (socket overflow): then anything may have happened.
 */
int ptimer_procwatch_poll(struct ptimer_procwatch *w, const struct ptimer_proc_event **ev, size_t *n);

/*
 * ptimer_procwatch_check - poll, then: -ESTALE if the process exec'ed since
 * start, or one of tids[n_tids] (host tids: the threads that were dumped)
 * exited since win->exit_from_ns; events stamped after win->until_ns are
 * ignored (win NULL: every event since start).  -ENOBUFS if events were
 * lost; else 0.  err names the process and the thread.
 */
int ptimer_procwatch_check(struct ptimer_procwatch *w, const pid_t *tids, int n_tids,
			   const struct ptimer_procwatch_window *win, struct ptimer_err *err);

/* ptimer_procwatch_stop - PROC_CN_MCAST_IGNORE, close, free.  NULL is fine. */
void ptimer_procwatch_stop(struct ptimer_procwatch *w);

/* ---- dump and restore (core/dump.c, core/restore.c) ------------------- */

struct ptimer_dump_opts {
	bool strict;		/* refuse timers aimed at a thread that is gone */
};

/*
 * ptimer_dump_task - read the timers of t (all threads stopped, by us or by
 * criu) into img: /proc/PID/timers for IDs, clocks and notification, and
 * one run of the in-target blob for it_value/it_interval/overrun.
 * notify_tid is translated to the process's own pid namespace.  img->timers
 * is sorted by timer_id.  Returns 0 or -errno, err set.
 */
int ptimer_dump_task(struct ptimer_task *t, const struct ptimer_dump_opts *o,
		     struct ptimer_image *img, struct ptimer_err *err);

/*
 * ptimer_read_timer_state - fill it_value/it_interval/overrun of
 * timers[n] (timer_id set) with timer_gettime()/timer_getoverrun() run
 * inside t (stopped) by the blob, one run for all.  Returns 0 or -errno
 * (-EINVAL: no such timer), err set.
 */
int ptimer_read_timer_state(const struct ptimer_task *t, struct ptimer_timer *timers, uint32_t n,
			    struct ptimer_err *err);

/*
 * ptimer_dump_task_given - ptimer_dump_task for timers someone else already
 * read while t was stopped (criu: its core image, see
 * ptimer_criu_core_timers): timers[n] complete, it_value/it_interval/
 * overrun included, notify_tid in the process's own pid namespace (0 when
 * not SIGEV_THREAD_ID).  Nothing runs inside t; /proc/PID/timers is read
 * only when a SIGEV_THREAD_ID timer's tid is not one of t's threads (a
 * thread gone, or the -1 criu 4.1 and 4.2 write for the leader of a task in a pid
 * namespace), once, for the tids of those timers.  Then the same
 * corrections ptimer_dump_task makes (sorted by
 * timer_id; a target or CPU clock thread that is not a thread of t becomes a
 * disarmed SIGEV_NONE timer with a warning, or -ESRCH with o->strict; the
 * CPU clock of another live process: -EXDEV).  Takes timers over (freed on
 * failure); img->timers and n_timers set, threads untouched.  Returns 0 or
 * -errno, err set.
 */
int ptimer_dump_task_given(struct ptimer_task *t, const struct ptimer_dump_opts *o, struct ptimer_timer *timers,
			   uint32_t n, struct ptimer_image *img, struct ptimer_err *err);

/*
 * ptimer_dump - the CLI's whole dump: seize pid, ptimer_dump_task, release,
 * write DIR/ptimers-<vpid>.img atomically.  The process is released before
 * the image is written.  The image is consistent when nothing changed while
 * the process was stopped: an exec from before the seize to the release, or
 * an exit of a dumped thread from the moment all were stopped to the
 * release (proc connector, ptimer_procwatch_*, events by timestamp), or a
 * dumped thread that left its stop (PTRACE_DETACH ESRCH) fails the dump
 * (-ESTALE, no image left); what it does after the release does not count.
 * Without the watch (no CAP_NET_ADMIN) a warning.  A stop signal held and
 * pending (ptimer_pending_stop_signal) before the write gives -EINTR with
 * nothing written.  Returns 0, -ENOTDIR (dir is not a directory), -EINTR,
 * -ESTALE, or another -errno of the seize, the dump or the write; err set.
 */
int ptimer_dump(pid_t pid, const char *dir, const struct ptimer_dump_opts *o,
		struct ptimer_err *err);

struct ptimer_tid_map {
	pid_t from;		/* tid in the image (dumped process's namespace) */
	pid_t to;		/* host tid in the target */
};

/* --rseq-slice / PTIMER_RSEQ_SLICE: what restore does with threads whose
 * rseq time-slice extension was enabled at dump. */
enum ptimer_rseq_slice {
	PTIMER_RSEQ_SLICE_AUTO = 0,	/* enable it; warn and go on when the kernel cannot */
	PTIMER_RSEQ_SLICE_REQUIRE,	/* refuse, before anything changes, when it cannot */
	PTIMER_RSEQ_SLICE_OFF,		/* leave it (and slice_ctrl) alone */
};

enum ptimer_restore_mode {
	PTIMER_RESTORE_AUTO = 0,	/* exact if the kernel has the prctl, else linear */
	PTIMER_RESTORE_EXACT,
	PTIMER_RESTORE_LINEAR,
};

struct ptimer_restore_opts {
	enum ptimer_restore_mode mode;
	bool allow_wrap;		/* linear: go through INT_MAX to reach passed IDs */
	int n_tid_map;
	const struct ptimer_tid_map *tid_map;
	bool progress;			/* report linear progress on stderr */
	bool verify;			/* re-read /proc/PID/timers afterwards and
					   compare (costs O(n^2) in the kernel) */
	enum ptimer_rseq_slice rseq_slice;
};

struct ptimer_restore_stats {
	int mode;			/* PTIMER_MODE_EXACT or _LINEAR, as used */
	uint64_t pairs;			/* linear create/delete pairs */
	uint64_t ns_total;		/* restore wall time, ns */
	uint64_t ns_inject;		/* of which in the target, ns */
};

/*
 * ptimer_restore_task - recreate img's timers in t (all threads stopped)
 * with their IDs and arm them, all or nothing.  Checks before touching
 * anything: the target holds none of the IDs, every notify tid and CPU-clock
 * pid maps to a thread of t.  Then in the target: exact-ID prctl ON, create,
 * OFF (always), arm; or the linear create/delete loop when the kernel lacks
 * the prctl (kernel commit ec2d0c04624b, Linux 6.15).  Returns 0 or -errno,
 * err set; on failure the target holds none of img's timers.
 */
int ptimer_restore_task(struct ptimer_task *t, const struct ptimer_image *img,
			const struct ptimer_restore_opts *o, struct ptimer_restore_stats *st,
			struct ptimer_err *err);

/*
 * ptimer_verify_task - check that t (stopped) holds img's timers as restore
 * would have made them (someone else restored them: criu 4.2+ "native"):
 * same IDs, clock, notification, signal, sival and thread in
 * /proc/PID/timers, the same it_interval, and an it_value not larger than
 * the image's (read inside the process).  Returns 0, or -EPROTO naming the
 * first timer that differs, or -errno; err set.
 */
int ptimer_verify_task(struct ptimer_task *t, const struct ptimer_image *img,
		       const struct ptimer_restore_opts *o, struct ptimer_err *err);

/* ptimer_restore - the CLI's whole restore: read image_path, seize pid,
 * ptimer_restore_task, release.  Returns 0 or -errno, err set. */
int ptimer_restore(pid_t pid, const char *image_path, const struct ptimer_restore_opts *o,
		   struct ptimer_restore_stats *st, struct ptimer_err *err);

/*
 * ptimer_map_tid - an image tid (the dumped process's own namespace) as the
 * target's own-namespace tid: the image pid is the target's pid; a
 * --tid-map OLD=NEW entry names a host tid; otherwise the same number must
 * be a thread of t (criu restores tids as they were).  Returns it, or 0.
 */
pid_t ptimer_map_tid(const struct ptimer_task *t, const struct ptimer_image *img,
		     const struct ptimer_restore_opts *o, pid_t tid);

/*
 * ptimer_restore_slice_task - the rseq part of a restore alone (criu
 * "native" mode, where criu made the timers): prepare and apply below for
 * img's "enabled" threads in t (stopped).  Returns 0 or -errno, err set.
 */
int ptimer_restore_slice_task(struct ptimer_task *t, const struct ptimer_image *img,
			      const struct ptimer_restore_opts *o, struct ptimer_err *err);

/* ---- rseq time-slice extension (core/rseq.c) ------------------------------ */

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
 * kernel (ptrace, the blob via compel, process_vm_readv/writev), the unit
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
	int (*slice)(void *ctx, pid_t tid, uint32_t how, uint32_t arg, int32_t *get, int32_t *set,
		     struct ptimer_err *err);
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
 * GET in ptimer's own thread, asked once) has no thread asked at all.  Returns 0 or -errno, err set.
 */
int ptimer_dump_threads(const struct ptimer_task *t, const struct ptimer_rseq_ops *ops,
			struct ptimer_image *img, struct ptimer_err *err);

/* One image thread whose slice extension restore must enable. */
struct ptimer_slice_target {
	pid_t image_tid;		/* tid in the image */
	pid_t host_tid;			/* target thread, host tid; 0: none maps */
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
 * (ptimer_map_tid, then the host tid; 0 when it does not map).  *v
 * malloc'ed (free it), *n its length (0: nothing to do, *v NULL).
 * Returns 0 or -ENOMEM.
 */
int ptimer_slice_targets(const struct ptimer_task *t, const struct ptimer_image *img,
			 const struct ptimer_restore_opts *o, struct ptimer_slice_target **v, int *n,
			 struct ptimer_err *err);

/* ---- criu's images (plugin/criu_core.c) ----------------------------------- */

/*
 * ptimer_criu_core_strip_timers - take the POSIX timers (CoreEntry
 * tc.timers.posix, criu images/core.proto + timer.proto) out of
 * DIR/core-<vpid>.img, rewriting it atomically; every other field keeps its
 * bytes.  *removed = how many were there (0: the file is left untouched).
 * Returns 0 or -errno (err set).
 */
int ptimer_criu_core_strip_timers(const char *dir, pid_t vpid, uint32_t *removed, struct ptimer_err *err);

/* ptimer_criu_core_count_timers - how many POSIX timers DIR/core-<vpid>.img
 * holds.  Returns 0 or -errno. */
int ptimer_criu_core_count_timers(const char *dir, pid_t vpid, uint32_t *count, struct ptimer_err *err);

/*
 * One core-<vpid>.img read once, decoded, edited and written back:
 * ptimer_criu_core_open - read and decode DIR/core-<vpid>.img (-ENOENT,
 * -EACCES..., -EINVAL: not a core image; err set).
 * ptimer_criu_core_n_timers - how many POSIX timers it holds.
 * ptimer_criu_core_timers - those timers as criu collected them at dump
 * (criu/proc_parse.c parse_posix_timers() for ID, clock, signal, sival and
 * notification; its parasite's timer_gettime()/timer_getoverrun() for
 * it_value, it_interval, overrun; criu/timer.c encode_notify_thread_id()
 * for notify_tid: the tid as the dumped process's pid namespace sees it, 0
 * when not SIGEV_THREAD_ID).  *out malloc'ed (NULL when none).  Returns 0,
 * -EINVAL (an entry lacks a required field or is out of range), -ENOMEM.
 * ptimer_criu_core_strip - take tc.timers.posix out and write the file back
 * (temporary file + rename, no fsync: criu syncs none of its images); no
 * timers: the file is left alone.  Returns 0 or -errno.
 * ptimer_criu_core_close - free; NULL is fine.
 */
struct ptimer_criu_core;
int ptimer_criu_core_open(const char *dir, pid_t vpid, struct ptimer_criu_core **out, struct ptimer_err *err);
uint32_t ptimer_criu_core_n_timers(const struct ptimer_criu_core *c);
int ptimer_criu_core_timers(const struct ptimer_criu_core *c, struct ptimer_timer **out, uint32_t *n,
			    struct ptimer_err *err);
int ptimer_criu_core_strip(struct ptimer_criu_core *c, struct ptimer_err *err);
void ptimer_criu_core_close(struct ptimer_criu_core *c);

/* ptimer_check - print one line per capability of this kernel and caller
 * to stdout; returns 0 when dump and restore can work here, else 1. */
int ptimer_check(void);

/*
 * ptimer_block_stop_signals - block SIGINT, SIGTERM, SIGHUP and SIGQUIT (old
 * mask into *old): they wait until the target is released, so that an
 * interrupted restore can still remove what it made (a killed ptimer leaves
 * the target running, restorer/abi.h, but cannot clean up).  ptimer_pending_stop_signal - one of them if it is
 * blocked and pending, else 0: long restores check it between chunks and
 * roll back.
 */
void ptimer_block_stop_signals(sigset_t *old);
int ptimer_pending_stop_signal(void);

/* ptimer_now_ns - CLOCK_MONOTONIC in ns. */
uint64_t ptimer_now_ns(void);

#endif
