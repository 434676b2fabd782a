// SPDX-License-Identifier: MIT
/*
 * ptimer_plugin.so: CRIU plugin that takes POSIX timer restore over from
 * criu where criu would not restore them right or fast (exact IDs on
 * every criu version, the linear loop on kernels before 6.15), and checks
 * what criu restored.  This file is its face to criu: the hooks, the
 * settings, the log and the plugin's own time; the work is in the parts
 * plugin/plugin.h lists.
 *
 * Hooks (criu/include/criu-plugin.h, criu/plugin.c):
 *   CHECKPOINT_DEVICES(pid)   per task, tree frozen by criu, before criu
 *                             saves the task: ptimers-<vpid>.img (dump.c)
 *   init(RESTORE)             before criu reads any core image: the
 *                             restore plan (plan.c), and where ptimer makes
 *                             the timers criu reads core images without
 *                             them from the overlay (overlay.c)
 *   RESUME_DEVICES_LATE(pid)  per task after restore, tasks stopped by
 *                             criu: the plan carried out (resume.c)
 *   exit(DUMP)                the leader's timers aimed back (dump.c)
 *   exit(RESTORE)             criu's image directory given back to it, the
 *                             overlay removed
 *
 * criu calls a hook's handlers in load order and stops at the first whose
 * answer is not -ENOTSUP (run_plugins(), criu/include/plugin.h, 4.0 to
 * criu-dev); criu/seize.c checkpoint_devices() and criu/cr-restore.c take
 * -ENOTSUP as "nothing done".  So every hook of ours answers -ENOTSUP
 * unless it fails the dump or the restore: another plugin in the directory
 * (criu's CUDA and AMD GPU plugins) is never kept from its hook.  A pid <= 0
 * (criu-dev's calls for the whole tree) is not a task of ours.
 *
 * Settings come from /etc/criu/ptimer.conf and criu's environment
 * (plugin/conf.h).  strict (PTIMER_STRICT=yes) dumps as ptimer dump
 * --strict does: a timer aimed at a thread that is gone fails the dump.
 *
 * Its errors and warnings carry criu's own tags, "Error (FILE:LINE): " and
 * "Warn  (FILE:LINE): " (criu's pr_err/pr_warn), so that what greps criu's
 * log for them (zdtm, runtimes, people) finds them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <criu/criu-plugin.h>
/* weak: the plugin is also loaded without criu (test/unit/test_plugin_hooks.c) */
#pragma weak criu_get_image_dir

#include "core/log.h"
#include "core/util.h"
#include "lib/procfs.h"
#include "plugin/plugin.h"

/* Exported by the criu binary (criu/log.c, criu/image.c); weak, as
 * criu_get_image_dir, for the plugin loaded without criu (the unit tests)
 * and for criu versions without one of them. */
extern void print_on_level(unsigned int loglevel, const char *format, ...)
	__attribute__((format(printf, 2, 3), weak));
extern bool check_and_remove_inventory_plugin(const char *name, size_t n) __attribute__((weak));
extern unsigned int log_get_loglevel(void) __attribute__((weak));

/* criu/include/log.h levels */
enum { CRIU_LOG_ERROR = 1, CRIU_LOG_WARN = 2, CRIU_LOG_INFO = 3, CRIU_LOG_DEBUG = 4 };

struct ptimer_plugin_conf conf = { .criu_mode = PTIMER_CRIU_AUTO };

/*
 * What ptimer costs criu's run, phase by phase (CLOCK_MONOTONIC, ns): its
 * init, its calls for the tasks (CHECKPOINT_DEVICES at dump,
 * RESUME_DEVICES_LATE at restore, each timed whole) and its exit.  The
 * exit says it in one info line (criu -v3 and up), which test/bench.sh
 * prints beside criu's wall times.
 */
static struct {
	uint64_t init_ns, tasks_ns, task_max_ns, exit_ns;
	unsigned int n_tasks;
} cost;

static void cost_task(uint64_t ns)
{
	cost.n_tasks++;
	cost.tasks_ns += ns;
	if (ns > cost.task_max_ns)
		cost.task_max_ns = ns;
}

/* fn(pid), a hook's call for a task, timed whole (pid <= 0: not a task) */
static int cost_timed(int (*fn)(int), int pid)
{
	uint64_t t0 = ptimer_now_ns();
	int ret = fn(pid);

	if (pid > 0)
		cost_task(ptimer_now_ns() - t0);
	return ret;
}

static void cost_report(int stage)
{
	if (stage != CR_PLUGIN_STAGE__DUMP && stage != CR_PLUGIN_STAGE__RESTORE)
		return;
	ptimer_log(PTIMER_LOG_INFO, "time in ptimer (%s): init %.3f ms, %u task call%s %.3f ms (longest %.3f ms), "
		   "exit %.3f ms, in all %.3f ms", stage == CR_PLUGIN_STAGE__DUMP ? "dump" : "restore",
		   (double)cost.init_ns / 1e6, cost.n_tasks, cost.n_tasks == 1 ? "" : "s",
		   (double)cost.tasks_ns / 1e6, (double)cost.task_max_ns / 1e6, (double)cost.exit_ns / 1e6,
		   (double)(cost.init_ns + cost.tasks_ns + cost.exit_ns) / 1e6);
}

/*
 * The image directory is reached through criu's own descriptor
 * (criu_get_image_dir()), never by its name: a name another user can
 * swap under root between two opens.  The plugin keeps a duplicate of it
 * for the stage (dir_fd: the overlay later takes the place of criu's) and
 * opens everything as /proc/self/fd/<dir_fd>/NAME; messages name the
 * directory the user gave criu (-D) instead (dir_name, rewritten in
 * criu_log), when that name still is the same directory.  That name is
 * looked up at the first message that needs it (dir_name_find): most
 * runs have none, and need not pay for a readlink and two stats.
 */
static int dir_fd = -1, dir_name_fd = -1;
static char dir_fdpath[64], dir_name[4096];
static void dir_name_find(void);

void image_dir(char *buf, size_t len)
{
	int fd = criu_get_image_dir();

	if (dir_fd < 0) {
		dir_fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;
		dir_name_fd = dir_fd >= 0 ? dir_fd : fd;
		ptimer_proc_fd_path(dir_name_fd, dir_fdpath, sizeof(dir_fdpath));
		dir_name[0] = 0;
		/* criu's own descriptor (no duplicate: descriptors exhausted)
		 * becomes the overlay's later: the name now */
		if (dir_fd < 0)
			dir_name_find();
	}
	snprintf(buf, len, "%s", dir_fdpath);
}

/* dir_name: the name of dir_fd's directory, where that name is still it,
 * else dir_fdpath */
static void dir_name_find(void)
{
	struct stat a, b;
	ssize_t n;

	if (dir_name[0] || !dir_fdpath[0])
		return;
	n = readlink(dir_fdpath, dir_name, sizeof(dir_name) - 1);
	dir_name[n > 0 ? n : 0] = 0;
	if (dir_name[0] != '/' || stat(dir_name, &a) || fstat(dir_name_fd, &b) || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino)
		snprintf(dir_name, sizeof(dir_name), "%s", dir_fdpath);
}

/* The stage is over: the duplicate closed. */
static void image_dir_done(void)
{
	if (dir_fd >= 0)
		close(dir_fd);
	dir_fd = dir_name_fd = -1;
	dir_fdpath[0] = dir_name[0] = 0;
}

/* msg with each dir_fdpath (followed by '/' or its end) as dir_name, into out */
static const char *with_dir_name(const char *msg, char *out, size_t len)
{
	size_t fl = strlen(dir_fdpath), at = 0;
	const char *p = msg, *q;

	if (!fl || !strstr(msg, dir_fdpath))
		return msg;
	dir_name_find();
	if (!strcmp(dir_fdpath, dir_name))
		return msg;
	while ((q = strstr(p, dir_fdpath)) && at < len) {
		bool whole = q[fl] == '/' || q[fl] == 0 || q[fl] == ' ' || q[fl] == ':' || q[fl] == ')';

		at += (size_t)snprintf(out + at, len - at, "%.*s%s", (int)(q - p), p, whole ? dir_name : dir_fdpath);
		p = q + fl;
	}
	if (at < len)
		snprintf(out + at, len - at, "%s", p);
	return out;
}

static void criu_log(int level, const char *where, const char *msg)
{
	char named[8192];

	msg = with_dir_name(msg, named, sizeof(named));
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

const char *criu_mode_name(enum ptimer_criu_mode m)
{
	return m == PTIMER_CRIU_NATIVE ? "native" : m == PTIMER_CRIU_AUTO ? "auto" : "takeover";
}

static int plugin_init(int stage)
{
	struct ptimer_err err;

	ptimer_log_set(criu_log);
	/*
	 * No line criu's level drops is written (-v3, the default -v2 keep
	 * no debug line; log_get_loglevel(), criu/log.c, is exported from
	 * 4.0 to criu-dev): at -v3, a tree's per-task lines cost a format
	 * each for nothing.
	 */
	ptimer_verbosity = PTIMER_LOG_DEBUG;
	if (log_get_loglevel) {
		unsigned int lvl = log_get_loglevel();

		/* -v0 (LOG_MSG, which drops even errors): errors only */
		ptimer_verbosity = lvl >= CRIU_LOG_DEBUG ? PTIMER_LOG_DEBUG : lvl ? (int)lvl - 1 : PTIMER_LOG_ERROR;
	}
	if (ptimer_plugin_conf_load(&conf, NULL, &err)) {
		ptimer_log(PTIMER_LOG_ERROR, "%s", err.msg);
		return -1;
	}
	ptimer_log(PTIMER_LOG_INFO, "settings (%s, then the environment): criu-mode %s, strict %s, "
		   "restore-mode %s, rseq-slice %s",
		   conf.path[0] ? conf.path : "no settings file",
		   criu_mode_name(conf.criu_mode), conf.strict ? "yes" : "no",
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
#ifdef PTIMER_HAVE_CHECKPOINT_DEVICES
	if (stage == CR_PLUGIN_STAGE__DUMP) {
		find_ahead(CR_PLUGIN_HOOK__CHECKPOINT_DEVICES);
		if (ahead[0])
			ptimer_log(PTIMER_LOG_WARN, "loaded before ptimer and handling CHECKPOINT_DEVICES: %s; a "
				   "task one of them answers for is not ptimer's, criu saves its timers alone", ahead);
	}
#endif
	if (stage == CR_PLUGIN_STAGE__RESTORE) {
		find_ahead(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE);
		if (ahead[0])
			ptimer_log(PTIMER_LOG_WARN, "loaded before ptimer and handling RESUME_DEVICES_LATE: %s; "
				   "criu restores the timers it saved (ptimer completes them where it is called)",
				   ahead);
	}
	/* the mark older ptimer dumps left in the inventory: we are here */
	if (stage == CR_PLUGIN_STAGE__RESTORE && check_and_remove_inventory_plugin)
		check_and_remove_inventory_plugin(PLUGIN_NAME, strlen(PLUGIN_NAME));
	if (stage == CR_PLUGIN_STAGE__RESTORE)
		return plan_restore();
	return 0;
}


static void plugin_exit(int stage, int ret)
{
	report_ahead(stage, ret);
	if (stage == CR_PLUGIN_STAGE__DUMP)
		aim_back_all();
	if (stage == CR_PLUGIN_STAGE__RESTORE) {
		overlay_done();
		free_plan();
		resume_reset();
	}
	ahead[0] = 0;
	image_dir_done();
}

#ifdef PTIMER_HAVE_CHECKPOINT_DEVICES
static int ptimer_plugin_checkpoint(int pid)
{
	return cost_timed(plugin_checkpoint, pid);
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__CHECKPOINT_DEVICES, ptimer_plugin_checkpoint)

/*
 * Ask for no more hooks than we use, so that a plugin built against a newer
 * criu-plugin.h (4.2: 13 hooks, criu-dev: 15) still loads into criu 4.0/4.1 (12 hooks):
 * criu/plugin.c refuses descriptors with more hooks than it knows.
 */
static void __attribute__((constructor)) ptimer_plugin_trim_hooks(void)
{
	CR_PLUGIN_DESC.max_hooks = CR_PLUGIN_HOOK__CHECKPOINT_DEVICES + 1;
}
#endif

static int ptimer_plugin_resume_late(int pid)
{
	return cost_timed(plugin_resume_late, pid);
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE, ptimer_plugin_resume_late)

static int ptimer_plugin_init(int stage)
{
	uint64_t t0 = ptimer_now_ns();
	int ret;

	memset(&cost, 0, sizeof(cost));
	ret = plugin_init(stage);
	cost.init_ns = ptimer_now_ns() - t0;
	return ret;
}

static void ptimer_plugin_exit(int stage, int ret)
{
	uint64_t t0 = ptimer_now_ns();

	plugin_exit(stage, ret);
	cost.exit_ns = ptimer_now_ns() - t0;
	cost_report(stage);
}

CR_PLUGIN_REGISTER(PLUGIN_NAME, ptimer_plugin_init, ptimer_plugin_exit)
