// SPDX-License-Identifier: MIT
/*
 * ptimer_plugin.so: CRIU plugin that takes POSIX timer restore over from
 * criu, with exact IDs on every criu version (the linear loop on kernels
 * before 6.15), and checks the result.
 *
 * Hooks (criu/include/criu-plugin.h, criu/plugin.c):
 *   CHECKPOINT_DEVICES(pid)   per task, tree frozen by criu (criu/seize.c
 *                             checkpoint_devices()): note the task's threads
 *                             (host and own-namespace tids) and their rseq
 *                             state
 *   exit(DUMP, 0)             after the core images are written, before the
 *                             tasks are resumed or killed: take the timers
 *                             criu saved in core-<vpid>.img, correct them
 *                             (ptimer_dump_task_given), write
 *                             ptimers-<vpid>.img, and take them out of the
 *                             core image
 *   RESUME_DEVICES_LATE(pid)  per task after restore, tasks stopped by criu
 *                             at the exit of rt_sigreturn (criu/cr-restore.c):
 *                             recreate the timers inside the task
 * criu already read /proc/PID/timers and each timer's state (its parasite)
 * for every task: the plugin reads neither again and runs no code in a
 * task at dump.  A task with no timers and no rseq slice extension to
 * restore gets no image; its restore is one failed open.
 *
 * strict (PTIMER_STRICT=yes, or strict in the settings file) dumps as ptimer dump --strict
 * does, at CHECKPOINT_DEVICES (/proc/PID/timers plus a run of the blob in
 * the task): a timer aimed at a thread that is gone then fails the dump,
 * which exit(DUMP) cannot do (criu/cr-dump.c cr_dump_finish() ignores it).
 * Without it, a task whose timers cannot be taken over at exit(DUMP) (an
 * unreadable core image, the CPU clock of another process) keeps them in
 * its core image for criu to restore as it would alone, with an error in
 * criu's log.
 * Like CRIU's cuda plugin, it records itself in the inventory when it
 * dumped, so that a restore without it fails ("Missing required plugin")
 * instead of silently dropping timers.
 *
 * Settings come from /etc/criu/ptimer.conf and criu's environment
 * (plugin/conf.h).  criu-mode native (PTIMER_CRIU_MODE=native) leaves timers
 * to criu (4.2+ restores exact IDs itself): the plugin then only writes its
 * image and, at restore, verifies what criu made.
 *
 * Its errors and warnings carry criu's own tags, "Error (FILE:LINE): " and
 * "Warn  (FILE:LINE): " (criu's pr_err/pr_warn), so that what greps criu's
 * log for them (zdtm, runtimes, people) finds them.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criu/criu-plugin.h>

#include "core/dump.h"
#include "core/log.h"
#include "core/proc_timers.h"
#include "core/restore.h"
#include "core/rseq.h"
#include "core/task.h"
#include "plugin/conf.h"
#include "plugin/criu_core.h"
#include "restorer/host/inject.h"

#define PLUGIN_NAME "ptimer"

/* Exported by the criu binary (criu/log.c, criu/image.c). */
extern void print_on_level(unsigned int loglevel, const char *format, ...)
	__attribute__((format(printf, 2, 3)));
extern int add_inventory_plugin(const char *name) __attribute__((weak));
extern bool check_and_remove_inventory_plugin(const char *name, size_t n) __attribute__((weak));

/* criu/include/log.h levels */
enum { CRIU_LOG_ERROR = 1, CRIU_LOG_WARN = 2, CRIU_LOG_INFO = 3, CRIU_LOG_DEBUG = 4 };

static struct ptimer_plugin_conf conf = { .criu_mode = PTIMER_CRIU_TAKEOVER };
static bool in_inventory __attribute__((unused));

/* A task seen at CHECKPOINT_DEVICES, finished at exit(DUMP). */
struct dumped_task {
	struct ptimer_task t;		/* adopted: criu holds it stopped */
	struct ptimer_image img;	/* threads (rseq) now, timers at exit */
	bool written;			/* strict: image written already */
};
static struct dumped_task *dumped;
static size_t n_dumped;

static void criu_log(int level, const char *where, const char *msg)
{
	switch (level) {
	case PTIMER_LOG_ERROR:
		print_on_level(CRIU_LOG_ERROR, "Error (%s): " PLUGIN_NAME ": %s\n", where, msg);
		break;
	case PTIMER_LOG_WARN:
		print_on_level(CRIU_LOG_WARN, "Warn  (%s): " PLUGIN_NAME ": %s\n", where, msg);
		break;
	case PTIMER_LOG_INFO:
		print_on_level(CRIU_LOG_INFO, PLUGIN_NAME ": %s\n", msg);
		break;
	default:
		print_on_level(CRIU_LOG_DEBUG, PLUGIN_NAME ": %s\n", msg);
		break;
	}
}

/* criu_get_image_dir() is an fd; our file API wants a path. */
static void image_dir(char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", criu_get_image_dir());
}

static int ptimer_plugin_init(int stage)
{
	struct ptimer_err err;

	ptimer_log_set(criu_log);
	ptimer_verbosity = PTIMER_LOG_DEBUG;
	ptimer_compel_log_owned = false;	/* criu's compel log stays criu's */
	if (ptimer_plugin_conf_load(&conf, NULL, &err)) {
		ptimer_log(PTIMER_LOG_ERROR, "%s", err.msg);
		return -1;
	}
	ptimer_log(PTIMER_LOG_INFO, "settings (%s, then the environment): criu-mode %s, strict %s, "
		   "restore-mode %s, rseq-slice %s",
		   conf.path[0] ? conf.path : "no settings file",
		   conf.criu_mode == PTIMER_CRIU_NATIVE ? "native" : "takeover", conf.strict ? "yes" : "no",
		   conf.restore_mode == PTIMER_RESTORE_EXACT ? "exact" :
		   conf.restore_mode == PTIMER_RESTORE_LINEAR ? "linear" : "auto",
		   conf.rseq_slice == PTIMER_RSEQ_SLICE_REQUIRE ? "require" :
		   conf.rseq_slice == PTIMER_RSEQ_SLICE_OFF ? "off" : "auto");
#ifndef PTIMER_HAVE_CHECKPOINT_DEVICES
	if (stage == CR_PLUGIN_STAGE__DUMP) {
		ptimer_log(PTIMER_LOG_ERROR, "built against a criu-plugin.h without the CHECKPOINT_DEVICES "
			   "hook (criu < 4.0): cannot dump timers; rebuild against criu 4.x headers");
		return -1;
	}
#endif
	/* Our inventory mark: we are here, so the restore may go on. */
	if (stage == CR_PLUGIN_STAGE__RESTORE && check_and_remove_inventory_plugin)
		check_and_remove_inventory_plugin(PLUGIN_NAME, strlen(PLUGIN_NAME));
	return 0;
}

static __attribute__((unused)) struct dumped_task *new_dumped(void)
{
	struct dumped_task *v = realloc(dumped, (n_dumped + 1) * sizeof(*v));

	if (!v)
		return NULL;
	dumped = v;
	memset(&dumped[n_dumped], 0, sizeof(*dumped));
	return &dumped[n_dumped++];
}

static void free_dumped(void)
{
	for (size_t i = 0; i < n_dumped; i++) {
		ptimer_task_release(&dumped[i].t);
		ptimer_image_free(&dumped[i].img);
	}
	free(dumped);
	dumped = NULL;
	n_dumped = 0;
}

/* Anything for restore to do: timers, or a thread whose slice extension it
 * must enable again (ptimer_slice_targets). */
static bool worth_an_image(const struct ptimer_image *img)
{
	if (img->n_timers)
		return true;
	for (uint32_t i = 0; i < img->n_threads; i++)
		if (img->threads[i].slice_ext == PTIMER_SLICE_EXT_ENABLED)
			return true;
	return false;
}

static int write_image(struct ptimer_image *img, struct ptimer_err *err)
{
	char dir[64], path[4096];

	img->criu_mode = conf.criu_mode;
	image_dir(dir, sizeof(dir));
	ptimer_image_path(path, sizeof(path), dir, img->pid);
	return ptimer_image_write_flags(path, img, PTIMER_IMG_NOSYNC, err);
}

#ifdef PTIMER_HAVE_CHECKPOINT_DEVICES
static int ptimer_plugin_checkpoint(int pid)
{
	struct ptimer_dump_opts o = { .strict = conf.strict };
	struct dumped_task *d = new_dumped();
	struct ptimer_err err;
	int ret;

	if (!d) {
		ptimer_log(PTIMER_LOG_ERROR, "task %d: out of memory", pid);
		return -1;
	}
	ret = ptimer_task_adopt(&d->t, pid, &err);
	if (ret)
		goto fail;
	if (o.strict) {
		/* all of it now, so that a refusal still fails the dump */
		ret = ptimer_dump_task(&d->t, &o, &d->img, &err);
		if (!ret && worth_an_image(&d->img)) {
			ret = write_image(&d->img, &err);
			d->written = !ret;
		}
	} else {
		ret = ptimer_dump_threads(&d->t, NULL, &d->img, &err);
		d->img.pid = d->t.vpid;
	}
	if (ret)
		goto fail;
	if (conf.criu_mode == PTIMER_CRIU_TAKEOVER && !in_inventory) {
		if (!add_inventory_plugin || add_inventory_plugin(PLUGIN_NAME)) {
			ptimer_log(PTIMER_LOG_ERROR, "cannot record the plugin in criu's inventory (this criu "
				   "has no add_inventory_plugin: use criu 4.0 or later, or criu-mode native)");
			return -1;
		}
		in_inventory = true;
	}
	return 0;
fail:
	ptimer_log(PTIMER_LOG_ERROR, "task %d: %s", pid, err.msg);
	return ret < 0 ? ret : -1;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__CHECKPOINT_DEVICES, ptimer_plugin_checkpoint)

/*
 * Ask for no more hooks than we use, so that a plugin built against a newer
 * criu-plugin.h (4.2: 15 hooks) still loads into criu 4.0/4.1 (12 hooks):
 * criu/plugin.c refuses descriptors with more hooks than it knows.
 */
static void __attribute__((constructor)) ptimer_plugin_trim_hooks(void)
{
	CR_PLUGIN_DESC.max_hooks = CR_PLUGIN_HOOK__CHECKPOINT_DEVICES + 1;
}
#endif

/*
 * One task after criu wrote its core image: the timers criu saved, corrected
 * and written to ptimers-<vpid>.img; in takeover mode then taken out of the
 * core image, so that criu does not restore them itself.  The core image is
 * edited only once our image is written: a failure leaves criu's timers for
 * criu to restore as it would alone.
 */
static int finish_task(struct dumped_task *d, const char *dir, struct ptimer_err *err)
{
	struct ptimer_dump_opts o = { 0 };
	struct ptimer_criu_core *c = NULL;
	struct ptimer_timer *timers;
	uint32_t n;
	int ret;

	ret = ptimer_criu_core_open(dir, d->t.vpid, &c, err);
	if (ret)
		return ret;
	if (d->written) {
		/* strict: ours is written; criu's copy only goes */
		n = d->img.n_timers;
		goto strip;
	}
	ret = ptimer_criu_core_timers(c, &timers, &n, err);
	if (!ret)
		ret = ptimer_dump_task_given(&d->t, &o, timers, n, &d->img, err);
	if (ret || !worth_an_image(&d->img))
		goto out;
	ret = write_image(&d->img, err);
	if (ret)
		goto out;
	ptimer_log(PTIMER_LOG_INFO, "task %d (vpid %d): %u POSIX timers saved to ptimers-%d.img (%s)",
		   d->t.pid, d->t.vpid, n, d->t.vpid,
		   conf.criu_mode == PTIMER_CRIU_NATIVE ? "criu restores them, ptimer verifies" : "ptimer restores them");
strip:
	if (conf.criu_mode == PTIMER_CRIU_TAKEOVER && ptimer_criu_core_n_timers(c)) {
		ret = ptimer_criu_core_strip(c, err);
		if (ret) {
			/* criu's timers stay; ours must not be restored on top of them */
			char path[4096];

			ptimer_image_path(path, sizeof(path), dir, d->t.vpid);
			unlink(path);
		} else {
			ptimer_log(PTIMER_LOG_DEBUG, "core-%d.img: %u POSIX timers handed to ptimer", d->t.vpid, n);
		}
	}
out:
	ptimer_criu_core_close(c);
	return ret;
}

static void ptimer_plugin_exit(int stage, int ret)
{
	struct ptimer_err err;
	char dir[64];

	if (stage == CR_PLUGIN_STAGE__DUMP && ret == 0) {
		image_dir(dir, sizeof(dir));
		for (size_t i = 0; i < n_dumped; i++)
			if (finish_task(&dumped[i], dir, &err))
				ptimer_log(PTIMER_LOG_ERROR, "task %d (vpid %d): %s; its timers stay in "
					   "core-%d.img for criu to restore as it would without ptimer",
					   dumped[i].t.pid, dumped[i].t.vpid, err.msg, dumped[i].t.vpid);
	}
	free_dumped();
}

static int ptimer_plugin_resume_late(int pid)
{
	struct ptimer_restore_opts o = { .mode = conf.restore_mode, .rseq_slice = conf.rseq_slice };
	struct ptimer_restore_stats st;
	struct ptimer_image img;
	struct ptimer_task t;
	struct ptimer_err err;
	char dir[64], path[4096];
	pid_t vpid = ptimer_proc_nspid(pid, pid);
	int ret;

	if (vpid == -EINVAL)
		vpid = pid;
	if (vpid <= 0) {
		ptimer_log(PTIMER_LOG_ERROR, "task %d: cannot read its pid namespace view (NSpid)", pid);
		return -1;
	}
	image_dir(dir, sizeof(dir));
	ptimer_image_path(path, sizeof(path), dir, vpid);
	/* one open: a task with nothing to restore has no image */
	ret = ptimer_image_read(path, &img, &err);
	if (ret == -ENOENT) {
		ptimer_log(PTIMER_LOG_DEBUG, "task %d (vpid %d): no ptimers-%d.img, nothing to do", pid, vpid, vpid);
		return 0;
	}
	if (ret)
		goto fail;
	ret = ptimer_task_adopt(&t, pid, &err);
	if (!ret) {
		if (img.criu_mode == PTIMER_CRIU_NATIVE) {
			ret = ptimer_verify_task(&t, &img, &o, &err);
			if (!ret)
				ret = ptimer_restore_slice_task(&t, &img, &o, &err);
			if (!ret)
				ptimer_log(PTIMER_LOG_INFO, "task %d (vpid %d): the %u timers criu restored match "
					   "the image", pid, vpid, img.n_timers);
		} else {
			ret = ptimer_restore_task(&t, &img, &o, &st, &err);
			if (!ret)
				ptimer_log(PTIMER_LOG_INFO, "task %d (vpid %d): %u POSIX timers restored, %s "
					   "mode, %.3f ms", pid, vpid, img.n_timers,
					   st.mode == PTIMER_MODE_LINEAR ? "linear" : "exact-ID",
					   (double)st.ns_total / 1e6);
		}
		ptimer_task_release(&t);
	}
	ptimer_image_free(&img);
	if (!ret)
		return 0;
fail:
	/*
	 * criu only logs a failed RESUME_DEVICES_LATE (criu/cr-restore.c).  A
	 * task without its timers, or with timers that differ, must not run:
	 * killing it makes criu's detach fail, and criu then fails the whole
	 * restore and kills the tree.
	 */
	ptimer_log(PTIMER_LOG_ERROR, "task %d (vpid %d): %s; killing the task so that the restore fails "
		   "rather than run without its timers", pid, vpid, err.msg);
	kill(pid, SIGKILL);
	return ret < 0 ? ret : -1;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE, ptimer_plugin_resume_late)

CR_PLUGIN_REGISTER(PLUGIN_NAME, ptimer_plugin_init, ptimer_plugin_exit)
