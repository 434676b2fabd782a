/* SPDX-License-Identifier: MIT */
/*
 * criu's own images, as the plugin edits them.
 */
#ifndef PTIMER_PLUGIN_CRIU_CORE_H
#define PTIMER_PLUGIN_CRIU_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "lib/timer.h"

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
 * ptimer_criu_core_strip - take tc.timers.posix out of the decoded entry
 * (written by the next ptimer_criu_core_write).
 * ptimer_criu_core_pdeath - set the leader thread's parent-death signal
 * (thread_core.pdeath_sig, criu images/core.proto; criu's restorer sets it
 * with PR_SET_PDEATHSIG in its RESTORE_CREDS stage, criu/pie/restorer.c
 * restore_pdeath_sig()) to sig in the decoded entry; *orig: the dumped
 * one (0: none).  Written by the next write.  Returns 0, or -EINVAL when
 * the entry has no thread_core.
 * ptimer_criu_core_write - the entry as edited written as dest (a
 * temporary file beside it, renamed over it: a dest that is a hard link
 * of criu's file is replaced, criu's file left as it was; no fsync: criu
 * syncs none of its images), with the owner, group and mode of criu's
 * file; nothing edited: nothing written.  Returns 0 or the -errno of the
 * write (-ENOSPC, -EACCES, -EROFS, -EPERM of fchown, ...); on failure
 * dest is as it was.
 * ptimer_criu_core_close - free; NULL is fine.
 */
struct ptimer_criu_core;
int ptimer_criu_core_open(const char *dir, pid_t vpid, struct ptimer_criu_core **out, struct ptimer_err *err);
uint32_t ptimer_criu_core_n_timers(const struct ptimer_criu_core *c);
/* ptimer_criu_core_runs - does criu restore the task as one that runs
 * (tc.task_state TASK_ALIVE or TASK_STOPPED, criu/include/pid.h), not a
 * zombie or a helper that exits during the restore? */
bool ptimer_criu_core_runs(const struct ptimer_criu_core *c);
int ptimer_criu_core_timers(const struct ptimer_criu_core *c, struct ptimer_timer **out, uint32_t *n,
			    struct ptimer_err *err);
void ptimer_criu_core_strip(struct ptimer_criu_core *c);
int ptimer_criu_core_pdeath(struct ptimer_criu_core *c, uint32_t sig, uint32_t *orig, struct ptimer_err *err);
int ptimer_criu_core_write(struct ptimer_criu_core *c, const char *dest, struct ptimer_err *err);
void ptimer_criu_core_close(struct ptimer_criu_core *c);

/*
 * ptimer_criu_pstree_read - the tasks criu saved, from DIR/pstree.img
 * (IMG_COMMON_MAGIC, PSTREE_MAGIC, then length-prefixed pstree_entry
 * messages: criu/include/magic.h, images/pstree.proto): each task's pid and
 * threads as its own pid namespace sees them, *tasks (malloc'd, sorted by
 * vpid; ptimer_criu_pstree_free) and *n.  Returns 0, -ENOENT (no
 * pstree.img), -EINVAL (not a pstree image), -ENOMEM or the -errno of
 * reading; err set.
 * ptimer_criu_pstree_task - the task vpid of tasks[n], or NULL.
 * ptimer_criu_thread_rseq - the rseq area criu saved for thread tid
 * (core-<tid>.img: core_entry.thread_core.rseq_entry.rseq_abi_pointer,
 * criu 3.17+), 0 when it saved none.  Returns 0 or -errno (err set).
 */
struct ptimer_criu_task {
	pid_t vpid;
	pid_t ppid;		/* its parent in the tree, 0: the root */
	uint32_t n_threads;
	pid_t *threads;
};
int ptimer_criu_pstree_read(const char *dir, struct ptimer_criu_task **tasks, uint32_t *n, struct ptimer_err *err);
const struct ptimer_criu_task *ptimer_criu_pstree_task(const struct ptimer_criu_task *tasks, uint32_t n, pid_t vpid);
void ptimer_criu_pstree_free(struct ptimer_criu_task *tasks, uint32_t n);
int ptimer_criu_thread_rseq(const char *dir, pid_t tid, uint64_t *ptr, struct ptimer_err *err);

#endif
