// SPDX-License-Identifier: MIT
/*
 * The plugin at dump: CHECKPOINT_DEVICES(pid), per task, the tree frozen
 * by criu, before criu saves the task (criu/seize.c checkpoint_devices()).
 * What criu does not save (ptimer_dump_task_for_criu: the thread a
 * thread-CPU-clock timer measures, pending expiries, the threads' rseq
 * state) goes to ptimers-<vpid>.img at once; the timers' timing is criu's,
 * in the core-<vpid>.img criu writes next and which the plugin never
 * changes.  A timer criu cannot save (aimed at a thread that has exited) is
 * made SIGEV_NONE in the task first, as ptimer dump keeps it, and a pid
 * namespace leader's timers are aimed at the process while criu saves
 * them (struct reaimed), aimed back at exit(DUMP).
 *
 * So the checkpoint is complete when criu hands it on (the post-dump
 * action script and the lazy page transfer run before the plugins'
 * exit(DUMP): criu/cr-dump.c cr_dump_finish()), and a criu without ptimer
 * restores it as it would have without ptimer.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#include <criu/criu-plugin.h>

#include "core/dump.h"
#include "core/log.h"
#include "core/restore.h"
#include "core/task.h"
#include "core/timer_state.h"
#include "core/util.h"
#include "plugin/plugin.h"
#include "restorer/abi.h"

#ifdef PTIMER_HAVE_CHECKPOINT_DEVICES
/* The image directory of this dump, as image_dir() names it at the first
 * task: one look per dump, not one per task (dump_image_dir). */
static char dump_dir[4096];
#endif

/*
 * Timers of a task in a pid namespace aimed at its leader
 * (SIGEV_THREAD_ID): criu 4.1/4.2 save the leader's tid there before they
 * know it (criu/seize.c collect_threads() leaves item->threads[0].ns[0].virt
 * unset until criu/cr-dump.c dump_task_threads(), after the timers): the
 * dump fails "Unable to convert the notify thread id" when that memory
 * happens to be 0, and saves a tid no restore can aim at otherwise.  The
 * plugin aims them at the process (SIGEV_SIGNAL, which the kernel gives the
 * leader first: complete_signal()) from CHECKPOINT_DEVICES to exit(DUMP),
 * where it aims them at the leader again; its image keeps them as they are.
 */
struct reaimed {
	pid_t pid;			/* host pid */
	uint32_t n;
	struct ptimer_timer *orig;	/* as the image keeps them */
};
static struct reaimed *reaimed;
static size_t n_reaimed;
#ifdef PTIMER_HAVE_CHECKPOINT_DEVICES
/* Anything for restore to do: timers, or a slice extension. */
static bool worth_an_image(const struct ptimer_image *img)
{
	return img->n_timers || img->timers_in_core || slice_to_restore(img);
}

static const char *dump_image_dir(void)
{
	if (!dump_dir[0])
		image_dir(dump_dir, sizeof(dump_dir));
	return dump_dir;
}

static int write_image(struct ptimer_image *img, enum ptimer_criu_mode mode, struct ptimer_err *err)
{
	char path[4400];

	img->criu_mode = mode;
	ptimer_image_path(path, sizeof(path), dump_image_dir(), img->pid);
	return ptimer_image_write_flags(path, img, PTIMER_IMG_NOSYNC, err);
}

/*
 * A task with nothing for ptimer gets no image; one an earlier dump into
 * the same directory left under its vpid would be taken for its own at
 * restore.  Removed (ENOENT: none).
 */
static void drop_old_image(pid_t vpid)
{
	char path[4400];

	ptimer_image_path(path, sizeof(path), dump_image_dir(), vpid);
	if (unlink(path) && errno != ENOENT)
		ptimer_log(PTIMER_LOG_WARN, "%s, an earlier dump's: cannot remove it: %s", path, strerror(errno));
}
#endif

/* Is the timer aimed at the leader of a task in a pid namespace? */
static bool at_ns_leader(const struct ptimer_task *t, const struct ptimer_timer *tm)
{
	return (tm->sigev_notify & PTIMER_SIGEV_THREAD_ID) && tm->notify_tid == t->vpid && t->other_pidns;
}

/* How many of img's timers are aimed at t's pid-namespace leader. */
static uint32_t n_at_ns_leader(const struct ptimer_task *t, const struct ptimer_image *img)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < img->n_timers; i++)
		k += at_ns_leader(t, &img->timers[i]);
	return k;
}

/*
 * img's timers aimed at t's pid-namespace leader (at_ns_leader), with the
 * timing they have in t now (ptimer_read_timer_state), into *out (malloc'd;
 * NULL when none).  Returns how many, or -errno (err set).
 */
int leader_timers(struct ptimer_task *t, const struct ptimer_image *img, struct ptimer_timer **out,
		  struct ptimer_err *err)
{
	uint32_t k = n_at_ns_leader(t, img);
	int ret;

	*out = NULL;
	if (!k)
		return 0;
	*out = calloc(k, sizeof(**out));
	if (!*out)
		return ptimer_errf(err, ENOMEM, "out of memory");
	k = 0;
	for (uint32_t i = 0; i < img->n_timers; i++)
		if (at_ns_leader(t, &img->timers[i]))
			(*out)[k++] = img->timers[i];
	ret = ptimer_read_timer_state(t, *out, k, err);
	if (ret) {
		free(*out);
		*out = NULL;
		return ret;
	}
	return (int)k;
}

#ifdef PTIMER_HAVE_CHECKPOINT_DEVICES
/*
 * Aim img's timers at the ns leader (see struct reaimed) at the process
 * instead, in t, with their timing; remembered for aim_back_all().  Without
 * the exact-ID prctl they stay, with a warning: criu may fail the dump.
 * Returns 0 or -errno (err set).
 */
static int reaim_leader_timers(struct ptimer_task *t, const struct ptimer_image *img, struct ptimer_err *err)
{
	struct ptimer_timer *orig = NULL, *with = NULL;
	struct reaimed *v;
	uint32_t k = n_at_ns_leader(t, img);
	int ret;

	if (!k)
		return 0;
	if (prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) < 0) {
		ptimer_log(PTIMER_LOG_WARN, "task %d: %u timers aimed at the leader of a task in a pid namespace, "
			   "which criu 4.1/4.2 may fail to dump (\"Unable to convert the notify thread id\"); this "
			   "kernel lacks exact-ID timer_create (Linux 6.15) to aim them elsewhere meanwhile", t->pid, k);
		return 0;
	}
	ret = leader_timers(t, img, &orig, err);
	if (ret <= 0)
		return ret;
	k = (uint32_t)ret;
	with = calloc(k, sizeof(*with));
	v = realloc(reaimed, (n_reaimed + 1) * sizeof(*v));
	if (!with || !v) {
		free(orig);
		free(with);
		if (v)
			reaimed = v;
		return ptimer_errf(err, ENOMEM, "out of memory");
	}
	reaimed = v;
	for (uint32_t i = 0; i < k; i++) {
		with[i] = orig[i];
		with[i].sigev_notify = PTIMER_SIGEV_SIGNAL;
		with[i].pending = 0;
		with[i].pending_overrun = 0;
	}
	ret = ptimer_replace_timers(t, with, k, err);
	free(with);
	if (ret) {
		free(orig);
		return ret;
	}
	reaimed[n_reaimed++] = (struct reaimed){ .pid = t->pid, .n = k, .orig = orig };
	ptimer_log(PTIMER_LOG_INFO, "task %d: %u timer%s aimed at its leader, in a pid namespace, aimed at the "
		   "process while criu saves it (criu cannot save the leader's tid there)", t->pid, k,
		   k > 1 ? "s" : "");
	return 0;
}

/*
 * Are timers of img aimed at t's pid-namespace leader that
 * reaim_leader_timers could not aim at the process (a kernel without the
 * exact-ID prctl)?  criu then saves them wrong, and only ptimer's restore
 * gives them back.
 */
static bool leader_aimed_left(const struct ptimer_task *t, const struct ptimer_image *img)
{
	for (size_t i = 0; i < n_reaimed; i++)
		if (reaimed[i].pid == t->pid)
			return false;
	return n_at_ns_leader(t, img) > 0;
}
#endif

/*
 * exit(DUMP), the tasks still held by criu, whether they are killed or go
 * on next: every re-aimed timer is aimed at its leader again, with the
 * timing it has now.
 */
void aim_back_all(void)
{
	for (size_t i = 0; i < n_reaimed; i++) {
		struct reaimed *r = &reaimed[i];
		struct ptimer_task t;
		struct ptimer_err err;
		int ret = ptimer_task_adopt(&t, r->pid, &err);

		if (!ret) {
			ret = ptimer_read_timer_state(&t, r->orig, r->n, &err);
			for (uint32_t j = 0; !ret && j < r->n; j++)
				r->orig[j].overrun = 0;
			if (!ret)
				ret = ptimer_replace_timers(&t, r->orig, r->n, &err);
			ptimer_task_release(&t);
		}
		if (ret)
			ptimer_log(PTIMER_LOG_ERROR, "task %d: aiming %u timers at its leader again: %s", r->pid,
				   r->n, err.msg);
		free(r->orig);
	}
	free(reaimed);
	reaimed = NULL;
	n_reaimed = 0;
}

#ifdef PTIMER_HAVE_CHECKPOINT_DEVICES
/*
 * criu calls a hook's handlers in load order and stops at the first whose
 * answer is not -ENOTSUP (run_plugins(), criu/include/plugin.h, 4.0 to
 * criu-dev); criu/seize.c checkpoint_devices() and criu/cr-restore.c take
 * -ENOTSUP as "nothing done".  So every hook of ours answers -ENOTSUP
 * unless it fails the dump or the restore: another plugin in the directory
 * (criu's CUDA and AMD GPU plugins) is never kept from its hook.  A pid <= 0
 * (criu-dev's calls for the whole tree) is not a task of ours.
 */
int plugin_checkpoint(int pid)
{
	/* native: the list criu's timers are checked against at restore */
	struct ptimer_dump_opts o = { .strict = conf.strict, .list_all = conf.criu_mode == PTIMER_CRIU_NATIVE };
	enum ptimer_criu_mode mode = conf.criu_mode;
	struct ptimer_image img = { 0 };
	struct ptimer_task t;
	struct ptimer_err err;
	bool criu_wrong = false;
	int ret;

	if (pid <= 0)
		return -ENOTSUP;
	/* the first task of this dump (find_ahead zeroed n_seen at init) */
	if (n_seen++ == 0)
		dump_dir[0] = 0;
	ret = ptimer_task_adopt(&t, pid, &err);
	if (ret)
		goto fail;
	/* native: criu restores them as it saved them, so leave the task be */
	ret = ptimer_dump_task_for_criu(&t, &o, mode != PTIMER_CRIU_NATIVE, &img, &criu_wrong, &err);
	if (!ret && mode != PTIMER_CRIU_NATIVE)
		ret = reaim_leader_timers(&t, &img, &err);
	/* a leader's timer criu saves with a tid no restore accepts */
	if (!ret && mode != PTIMER_CRIU_NATIVE && leader_aimed_left(&t, &img))
		criu_wrong = true;
	if (!ret)
		ret = ptimer_dump_threads(&t, NULL, &img, &err);
	/* only a timer criu would restore wrong is taken from it */
	if (!ret && mode == PTIMER_CRIU_AUTO && criu_wrong)
		mode = PTIMER_CRIU_TAKEOVER;
	if (!ret && !worth_an_image(&img))
		drop_old_image(t.vpid);
	if (!ret && worth_an_image(&img)) {
		ret = write_image(&img, mode, &err);
		if (!ret && img.timers_in_core)
			ptimer_log(PTIMER_LOG_INFO, "task %d (vpid %d): its POSIX timers are all criu's: one thread, "
				   "which never had another, nothing queued; ptimers-%d.img says so and lists none "
				   "(%s)", t.pid, t.vpid, t.vpid, mode == PTIMER_CRIU_NATIVE ? "criu restores them, "
				   "ptimer verifies" : mode == PTIMER_CRIU_AUTO ? "criu-mode auto: criu restores them "
				   "where it makes exact IDs itself, else ptimer, from criu's core image" :
				   "ptimer restores them, from criu's core image");
		else if (!ret)
			ptimer_log(PTIMER_LOG_INFO, "task %d (vpid %d): %u POSIX timers saved to ptimers-%d.img (%s)",
				   t.pid, t.vpid, img.n_timers, t.vpid,
				   mode == PTIMER_CRIU_NATIVE ? "criu restores them, ptimer verifies" :
				   mode == PTIMER_CRIU_AUTO ? "criu-mode auto: criu restores them where it makes exact "
							      "IDs itself, else ptimer" :
				   criu_wrong ? "ptimer restores them: criu would save a timer that can never fire "
						"as it is, and this kernel cannot change it first" :
						"ptimer restores them");
	}
	ptimer_image_free(&img);
	ptimer_task_release(&t);
	if (!ret)
		return -ENOTSUP;
fail:
	ptimer_log(PTIMER_LOG_ERROR, "task %d: %s", pid, err.msg);
	return ret < 0 && ret != -ENOTSUP ? ret : -1;
}

#endif
