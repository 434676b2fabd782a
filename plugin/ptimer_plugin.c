// SPDX-License-Identifier: MIT
/*
 * ptimer_plugin.so: CRIU plugin that takes POSIX timer restore over from
 * criu, with exact IDs on every criu version (the linear loop on kernels
 * before 6.15), and checks the result.
 *
 * Hooks (criu/include/criu-plugin.h, criu/plugin.c):
 *   CHECKPOINT_DEVICES(pid)   per task, tree frozen by criu (criu/seize.c
 *                             checkpoint_devices()): write ptimers-<vpid>.img
 *   exit(DUMP, 0)             after the core images are written, before the
 *                             tasks are resumed or killed: take the timers out
 *                             of core-<vpid>.img
 *   RESUME_DEVICES_LATE(pid)  per task after restore, tasks stopped by criu
 *                             at the exit of rt_sigreturn (criu/cr-restore.c):
 *                             recreate the timers inside the task
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

#include "core/ptimer.h"
#include "plugin/conf.h"
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
static pid_t *dumped_vpids;
static size_t n_dumped;
static bool in_inventory __attribute__((unused));

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

	ptimer_log_fn = criu_log;
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

static int __attribute__((unused)) remember_vpid(pid_t vpid)
{
	pid_t *v = realloc(dumped_vpids, (n_dumped + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	dumped_vpids = v;
	dumped_vpids[n_dumped++] = vpid;
	return 0;
}

#ifdef PTIMER_HAVE_CHECKPOINT_DEVICES
static int ptimer_plugin_checkpoint(int pid)
{
	struct ptimer_dump_opts o = { .strict = conf.strict };
	struct ptimer_image img;
	struct ptimer_task t;
	struct ptimer_err err;
	char dir[64], path[4096];
	int ret;

	ret = ptimer_task_adopt(&t, pid, &err);
	if (ret)
		goto fail;
	ret = ptimer_dump_task(&t, &o, &img, &err);
	ptimer_task_release(&t);
	if (ret)
		goto fail;
	img.criu_mode = conf.criu_mode;
	image_dir(dir, sizeof(dir));
	ptimer_image_path(path, sizeof(path), dir, img.pid);
	ret = ptimer_image_write(path, &img, &err);
	if (!ret)
		ret = remember_vpid(img.pid) ? ptimer_errf(&err, ENOMEM, "out of memory") : 0;
	if (!ret)
		ptimer_log(PTIMER_LOG_INFO, "task %d (vpid %d): %u POSIX timers saved to ptimers-%d.img (%s)",
			   pid, img.pid, img.n_timers, img.pid,
			   conf.criu_mode == PTIMER_CRIU_NATIVE ? "criu restores them, ptimer verifies"
							   : "ptimer restores them");
	ptimer_image_free(&img);
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

/* After a successful dump: criu must not restore the timers itself. */
static void strip_core_images(void)
{
	struct ptimer_err err;
	char dir[64];

	image_dir(dir, sizeof(dir));
	for (size_t i = 0; i < n_dumped; i++) {
		uint32_t removed;

		if (ptimer_criu_core_strip_timers(dir, dumped_vpids[i], &removed, &err))
			ptimer_log(PTIMER_LOG_ERROR, "%s; restoring this dump will fail with timer ID "
				   "clashes: dump again", err.msg);
		else
			ptimer_log(PTIMER_LOG_DEBUG, "core-%d.img: %u POSIX timers handed to ptimer",
				   dumped_vpids[i], removed);
	}
}

static void ptimer_plugin_exit(int stage, int ret)
{
	if (stage == CR_PLUGIN_STAGE__DUMP && ret == 0 && conf.criu_mode == PTIMER_CRIU_TAKEOVER)
		strip_core_images();
	free(dumped_vpids);
	dumped_vpids = NULL;
	n_dumped = 0;
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
	if (access(path, F_OK)) {
		ptimer_log(PTIMER_LOG_DEBUG, "task %d (vpid %d): no ptimers-%d.img, nothing to do", pid, vpid, vpid);
		return 0;
	}
	ret = ptimer_image_read(path, &img, &err);
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
