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
#include "core/leader.h"
#include "core/log.h"
#include "core/restore.h"
#include "core/task.h"
#include "core/timer_state.h"
#include "core/util.h"
#include "plugin/plugin.h"
#include "restorer/abi.h"

#ifdef PTIMER_HAVE_CHECKPOINT_DEVICES
/* Anything for restore to do: timers, or a slice extension. */
static bool worth_an_image(const struct ptimer_image *img)
{
	return img->n_timers || img->timers_in_core || image_has_slice(img);
}

static int write_image(const char *dir, struct ptimer_image *img, enum ptimer_criu_mode mode,
		       struct ptimer_err *err)
{
	char path[4400];

	img->criu_mode = mode;
	ptimer_image_path(path, sizeof(path), dir, img->pid);
	return ptimer_image_write_flags(path, img, PTIMER_IMG_NOSYNC, err);
}

/*
 * A task with nothing for ptimer gets no image; one an earlier dump into
 * the same directory left under its vpid would be taken for its own at
 * restore.  Removed (ENOENT: none).
 */
static void drop_old_image(const char *dir, pid_t vpid)
{
	char path[4400];

	ptimer_image_path(path, sizeof(path), dir, vpid);
	if (unlink(path) && errno != ENOENT)
		ptimer_log(PTIMER_LOG_WARN, "%s, an earlier dump's: cannot remove it: %s", path, strerror(errno));
}
#endif

#ifdef PTIMER_HAVE_CHECKPOINT_DEVICES
/*
 * Aim img's timers at t's pid-namespace leader at the process instead
 * (core/leader.h says why), with their timing; remembered in d for
 * dump_finish.  Without the exact-ID prctl they stay, with a warning:
 * criu may fail the dump, and *left says so.  Returns 0 or -errno.
 */
static int reaim_leader_timers(struct dump_run *d, struct ptimer_task *t, const struct ptimer_image *img,
			       bool *left, struct ptimer_err *err)
{
	struct ptimer_timer *orig = NULL;
	struct reaimed *v;
	uint32_t k;
	int ret;

	*left = false;
	ret = ptimer_leader_timers(t, img, &orig, err);
	if (ret <= 0)
		return ret;
	k = (uint32_t)ret;
	if (prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) < 0) {
		ptimer_log(PTIMER_LOG_WARN, "task %d: %u timers aimed at the leader of a task in a pid namespace, "
			   "which criu 4.1/4.2 may fail to dump (\"Unable to convert the notify thread id\"); this "
			   "kernel lacks exact-ID timer_create (Linux 6.15) to aim them elsewhere meanwhile", t->pid, k);
		free(orig);
		*left = true;
		return 0;
	}
	v = realloc(d->reaimed, (d->n_reaimed + 1) * sizeof(*v));
	if (!v) {
		free(orig);
		return ptimer_errf(err, ENOMEM, "out of memory");
	}
	d->reaimed = v;
	ret = ptimer_aim_timers(t, orig, k, true, err);
	if (ret) {
		free(orig);
		return ret;
	}
	d->reaimed[d->n_reaimed++] = (struct reaimed){ .pid = t->pid, .n = k, .orig = orig };
	ptimer_log(PTIMER_LOG_INFO, "task %d: %u timer%s aimed at its leader, in a pid namespace, aimed at the "
		   "process while criu saves it (criu cannot save the leader's tid there)", t->pid, k,
		   k > 1 ? "s" : "");
	return 0;
}
#endif

/*
 * exit(DUMP), the tasks still held by criu, whether they are killed or go
 * on next: every re-aimed timer is aimed at its leader again, with the
 * timing it has now.
 */
void dump_finish(struct dump_run *d)
{
	for (size_t i = 0; i < d->n_reaimed; i++) {
		struct reaimed *r = &d->reaimed[i];
		struct ptimer_task t;
		struct ptimer_err err;
		int ret = ptimer_task_adopt(&t, r->pid, &err);

		if (!ret) {
			ret = ptimer_read_timer_state(&t, r->orig, r->n, &err);
			if (!ret)
				ret = ptimer_aim_timers(&t, r->orig, r->n, false, &err);
			ptimer_task_release(&t);
		}
		if (ret)
			ptimer_log(PTIMER_LOG_ERROR, "task %d: aiming %u timers at its leader again: %s", r->pid,
				   r->n, err.msg);
		free(r->orig);
	}
	free(d->reaimed);
	d->reaimed = NULL;
	d->n_reaimed = 0;
}

#ifdef PTIMER_HAVE_CHECKPOINT_DEVICES
int dump_task(struct dump_run *d, const struct ptimer_plugin_conf *conf, const char *dir, int pid)
{
	/* native: the list criu's timers are checked against at restore */
	struct ptimer_dump_opts o = { .strict = conf->strict, .list_all = conf->criu_mode == PTIMER_CRIU_NATIVE };
	enum ptimer_criu_mode mode = conf->criu_mode;
	struct ptimer_image img = { 0 };
	struct ptimer_task t;
	struct ptimer_err err;
	bool criu_wrong = false, left = false;
	int ret;

	ret = ptimer_task_adopt(&t, pid, &err);
	if (ret)
		goto fail;
	/* native: criu restores them as it saved them, so leave the task be */
	ret = ptimer_dump_task_for_criu(&t, &o, mode != PTIMER_CRIU_NATIVE, &img, &criu_wrong, &err);
	if (!ret && mode != PTIMER_CRIU_NATIVE)
		ret = reaim_leader_timers(d, &t, &img, &left, &err);
	/* a leader's timer criu saves with a tid no restore accepts */
	if (left)
		criu_wrong = true;
	if (!ret)
		ret = ptimer_dump_threads(&t, NULL, &img, &err);
	/* only a timer criu would restore wrong is taken from it */
	if (!ret && mode == PTIMER_CRIU_AUTO && criu_wrong)
		mode = PTIMER_CRIU_TAKEOVER;
	if (!ret && !worth_an_image(&img))
		drop_old_image(dir, t.vpid);
	if (!ret && worth_an_image(&img)) {
		ret = write_image(dir, &img, mode, &err);
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
		return 0;
fail:
	ptimer_log(PTIMER_LOG_ERROR, "task %d: %s", pid, err.msg);
	return ret < 0 ? ret : -EIO;
}

#endif
