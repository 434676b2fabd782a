// SPDX-License-Identifier: MIT
/*
 * ptimer_plugin.so's face to criu: the hooks, the run context (struct
 * run), the settings (plugin/conf.h), the log and the plugin's own time;
 * the work is in the parts plugin/plugin.h lists, and what each hook does
 * is in docs/criu-plugin.md.  Errors and warnings carry criu's own tags,
 * "Error (FILE:LINE): " and "Warn  (FILE:LINE): " (criu's pr_err/pr_warn),
 * so that what greps criu's log for them (zdtm, runtimes, people) finds
 * them.
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
#include "plugin/criu_core.h"
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

/*
 * One criu run: a dump or a restore, from init to exit.  What ptimer costs
 * it, phase by phase (CLOCK_MONOTONIC, ns): its init, its calls for the
 * tasks (CHECKPOINT_DEVICES at dump, RESUME_DEVICES_LATE at restore, each
 * timed whole) and its exit, said in one info line at exit (criu -v3 and
 * up), which test/bench.sh prints beside criu's wall times.
 */
static struct run {
	int stage;			/* CR_PLUGIN_STAGE__* */
	struct ptimer_plugin_conf conf;
	/*
	 * The image directory, reached through criu's own descriptor
	 * (criu_get_image_dir()), never by its name, which another user could
	 * swap under root: a duplicate kept for the run (the overlay takes the
	 * place of criu's), everything opened as /proc/self/fd/N/NAME.
	 */
	int dir_fd;
	char dir[64];
	char ahead[256];		/* plugins ahead of ptimer in its hook */
	unsigned int n_calls;		/* calls for a task */
	bool resumed;			/* resume_tree ran */
	struct dump_run dump;
	struct plan plan;
	struct overlay ov;
	struct {
		uint64_t init_ns, tasks_ns, task_max_ns, exit_ns;
	} cost;
} run = { .dir_fd = -1, .ov = OVERLAY_INIT };

/* fn(pid), a hook's call for a task, timed whole */
static int cost_timed(int (*fn)(int), int pid)
{
	uint64_t t0 = ptimer_now_ns(), ns;
	int ret = fn(pid);

	ns = ptimer_now_ns() - t0;
	run.n_calls++;
	run.cost.tasks_ns += ns;
	if (ns > run.cost.task_max_ns)
		run.cost.task_max_ns = ns;
	return ret;
}

static void cost_report(int stage)
{
	if (stage != CR_PLUGIN_STAGE__DUMP && stage != CR_PLUGIN_STAGE__RESTORE)
		return;
	ptimer_log(PTIMER_LOG_INFO, "time in ptimer (%s): init %.3f ms, %u task call%s %.3f ms (longest %.3f ms), "
		   "exit %.3f ms, in all %.3f ms", stage == CR_PLUGIN_STAGE__DUMP ? "dump" : "restore",
		   (double)run.cost.init_ns / 1e6, run.n_calls, run.n_calls == 1 ? "" : "s",
		   (double)run.cost.tasks_ns / 1e6, (double)run.cost.task_max_ns / 1e6,
		   (double)run.cost.exit_ns / 1e6,
		   (double)(run.cost.init_ns + run.cost.tasks_ns + run.cost.exit_ns) / 1e6);
}

/* The image directory's duplicate, and its name in the log once. */
static void image_dir_open(void)
{
	char name[4096];
	int fd = criu_get_image_dir();
	ssize_t n;

	run.dir_fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;
	ptimer_proc_fd_path(run.dir_fd >= 0 ? run.dir_fd : fd, run.dir, sizeof(run.dir));
	n = readlink(run.dir, name, sizeof(name) - 1);
	name[n > 0 ? n : 0] = 0;
	ptimer_log(PTIMER_LOG_DEBUG, "the image directory %s is read as %s", name, run.dir);
}

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

const char *criu_mode_name(enum ptimer_criu_mode m)
{
	return m == PTIMER_CRIU_NATIVE ? "native" : m == PTIMER_CRIU_AUTO ? "auto" : "takeover";
}

static int plugin_init(int stage)
{
	struct ptimer_err err;
	struct plan_env env = { .dir = run.dir, .conf = &run.conf, .ahead = run.ahead };

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
	if (ptimer_plugin_conf_load(&run.conf, NULL, &err)) {
		ptimer_log(PTIMER_LOG_ERROR, "%s", err.msg);
		return -1;
	}
	ptimer_log(PTIMER_LOG_INFO, "settings (%s, then the environment): criu-mode %s, strict %s, "
		   "restore-mode %s, rseq-slice %s",
		   run.conf.path[0] ? run.conf.path : "no settings file",
		   criu_mode_name(run.conf.criu_mode), run.conf.strict ? "yes" : "no",
		   run.conf.restore_mode == PTIMER_RESTORE_EXACT ? "exact" :
		   run.conf.restore_mode == PTIMER_RESTORE_LINEAR ? "linear" : "auto",
		   run.conf.rseq_slice == PTIMER_RSEQ_SLICE_REQUIRE ? "require" :
		   run.conf.rseq_slice == PTIMER_RSEQ_SLICE_OFF ? "off" : "auto");
	if (stage != CR_PLUGIN_STAGE__DUMP && stage != CR_PLUGIN_STAGE__RESTORE)
		return 0;
#ifndef PTIMER_HAVE_CHECKPOINT_DEVICES
	if (stage == CR_PLUGIN_STAGE__DUMP) {
		ptimer_log(PTIMER_LOG_ERROR, "built against a criu-plugin.h without the CHECKPOINT_DEVICES "
			   "hook (criu < 4.0): cannot dump timers; rebuild against criu 4.x headers");
		return -1;
	}
#else
	if (stage == CR_PLUGIN_STAGE__DUMP) {
		find_ahead(CR_PLUGIN_HOOK__CHECKPOINT_DEVICES, run.ahead, sizeof(run.ahead));
		if (run.ahead[0])
			ptimer_log(PTIMER_LOG_WARN, "loaded before ptimer and handling CHECKPOINT_DEVICES: %s; a "
				   "task one of them answers for is not ptimer's, criu saves its timers alone",
				   run.ahead);
	}
#endif
	image_dir_open();
	if (stage == CR_PLUGIN_STAGE__DUMP)
		return 0;
	find_ahead(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE, run.ahead, sizeof(run.ahead));
	if (run.ahead[0])
		ptimer_log(PTIMER_LOG_WARN, "loaded before ptimer and handling RESUME_DEVICES_LATE: %s; "
			   "criu restores the timers it saved (ptimer completes them where it is called)", run.ahead);
	/* the mark older ptimer dumps left in the inventory: we are here */
	if (check_and_remove_inventory_plugin)
		check_and_remove_inventory_plugin(PLUGIN_NAME, strlen(PLUGIN_NAME));
	return plan_restore(&run.plan, &run.ov, &env);
}

/* How many tasks criu saved (its pstree.img), 0 when it cannot be read. */
static unsigned int tasks_saved(void)
{
	struct ptimer_criu_task *tree = NULL;
	struct ptimer_err err;
	uint32_t n = 0;

	if (ptimer_criu_pstree_read(run.dir, &tree, &n, &err))
		return 0;
	ptimer_criu_pstree_free(tree, n);
	return n;
}

/*
 * What a plugin ahead of ptimer kept from it, said once the dump or restore
 * is through: never a silent change.  At dump criu saved those tasks'
 * timers alone (a restore gives them back as criu alone would); at restore
 * criu made them (the plan left the core images whole), and ptimer's
 * additions to what criu made are missing.
 */
static void report_ahead(int stage)
{
	unsigned int n;

	if (stage == CR_PLUGIN_STAGE__DUMP) {
		n = tasks_saved();
		if (n > run.n_calls)
			ptimer_log(PTIMER_LOG_WARN, "ptimer was called for %u of the %u tasks criu saved: %s answered "
				   "CHECKPOINT_DEVICES first for the others, whose timers criu saved alone",
				   run.n_calls, n, run.ahead);
		return;
	}
	for (size_t i = 0; !run.resumed && i < run.plan.n; i++)
		if (planned_work(&run.plan.task[i]))
			ptimer_log(PTIMER_LOG_WARN, "task vpid %d: %s answered RESUME_DEVICES_LATE before ptimer: its "
				   "%u timers are as criu restored them (a thread-CPU-clock timer in the leader, a "
				   "pid-namespace leader's timer aimed at the process, a pending expiry as criu queues "
				   "it, no rseq slice extension)", run.plan.task[i].vpid, run.ahead,
				   run.plan.task[i].n_timers);
}

static void plugin_exit(int stage, int ret)
{
	if (run.ahead[0] && !ret)
		report_ahead(stage);
	if (stage == CR_PLUGIN_STAGE__DUMP)
		dump_finish(&run.dump);
	if (stage == CR_PLUGIN_STAGE__RESTORE) {
		overlay_done(&run.ov);
		plan_free(&run.plan);
	}
	if (run.dir_fd >= 0)
		close(run.dir_fd);
}

#ifdef PTIMER_HAVE_CHECKPOINT_DEVICES
static int checkpoint_one(int pid)
{
	return dump_task(&run.dump, &run.conf, run.dir, pid);
}

/*
 * criu calls a hook's handlers in load order and stops at the first whose
 * answer is not -ENOTSUP (run_plugins(), criu/include/plugin.h, 4.0 to
 * criu-dev); criu/seize.c checkpoint_devices() and criu/cr-restore.c take
 * -ENOTSUP as "nothing done".  So every hook of ours answers -ENOTSUP
 * unless it fails the dump or the restore: another plugin in the directory
 * (criu's CUDA and AMD GPU plugins) is never kept from its hook.  A pid <= 0
 * (criu-dev's calls for the whole tree) is not a task of ours.
 */
static int ptimer_plugin_checkpoint(int pid)
{
	if (pid <= 0)
		return -ENOTSUP;
	return cost_timed(checkpoint_one, pid) ? -1 : -ENOTSUP;
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

/* The first call: criu's image directory back, the whole tree's work;
 * nothing of ptimer's in any task (no image, or criu makes all): not even
 * a look. */
static int resume_one(int pid)
{
	if (run.resumed || (!run.plan.n_work && !run.ov.name[0]))
		return 0;
	run.resumed = true;
	overlay_release(&run.ov);
	return run.plan.n_work ? resume_tree(&run.plan, &run.conf, pid) : 0;
}

static int ptimer_plugin_resume_late(int pid)
{
	if (pid <= 0)
		return -ENOTSUP;
	return cost_timed(resume_one, pid) ? -1 : -ENOTSUP;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE, ptimer_plugin_resume_late)

static int ptimer_plugin_init(int stage)
{
	uint64_t t0 = ptimer_now_ns();
	int ret;

	memset(&run, 0, sizeof(run));
	run.dir_fd = -1;
	run.ov = (struct overlay)OVERLAY_INIT;
	run.stage = stage;
	run.conf.criu_mode = PTIMER_CRIU_AUTO;
	ret = plugin_init(stage);
	run.cost.init_ns = ptimer_now_ns() - t0;
	return ret;
}

static void ptimer_plugin_exit(int stage, int ret)
{
	uint64_t t0 = ptimer_now_ns();

	plugin_exit(stage, ret);
	run.cost.exit_ns = ptimer_now_ns() - t0;
	cost_report(stage);
}

CR_PLUGIN_REGISTER(PLUGIN_NAME, ptimer_plugin_init, ptimer_plugin_exit)
