// SPDX-License-Identifier: MIT
/*
 * ptimer_plugin.so: CRIU plugin that takes POSIX timer restore over from
 * criu, with exact IDs on every criu version (the linear loop on kernels
 * before 6.15), and checks the result.
 *
 * Hooks (criu/include/criu-plugin.h, criu/plugin.c):
 *   CHECKPOINT_DEVICES(pid)   per task, tree frozen by criu, before criu
 *                             saves the task (criu/seize.c
 *                             checkpoint_devices()): what criu does not save
 *                             (ptimer_dump_task_for_criu: the thread a
 *                             thread-CPU-clock timer measures, pending
 *                             expiries, the threads' rseq state) goes to
 *                             ptimers-<vpid>.img at once; the timers' timing
 *                             is criu's, in the core-<vpid>.img criu writes
 *                             next and which the plugin never changes at
 *                             dump.  A timer criu cannot save (aimed at a
 *                             thread that has exited) is made SIGEV_NONE in
 *                             the task first, as ptimer dump keeps it.
 *   init(RESTORE)             before criu reads any core image
 *                             (criu/cr-restore.c cr_restore_tasks()): every
 *                             ptimers image is read and its task's restore
 *                             planned (prepare_restore); where ptimer, not
 *                             criu, restores the timers, their timing is
 *                             taken from core-<vpid>.img and criu is given
 *                             that core image without them, in a directory
 *                             of its own (the overlay): criu's images are
 *                             never changed
 *   RESUME_DEVICES_LATE(pid)  per task after restore, tasks stopped by criu
 *                             at the exit of rt_sigreturn (criu/cr-restore.c):
 *                             recreate the timers inside the task, or check
 *                             and complete what criu made
 *   exit(RESTORE)             criu's image directory given back to it, the
 *                             overlay removed
 * So the checkpoint is complete when criu hands it on (the post-dump action
 * script and the lazy page transfer run before the plugins' exit(DUMP):
 * criu/cr-dump.c cr_dump_finish()), and a criu without ptimer restores it
 * as it would have without ptimer.
 *
 * strict (PTIMER_STRICT=yes, or strict in the settings file) dumps as ptimer
 * dump --strict does: a timer aimed at a thread that is gone fails the dump.
 *
 * Settings come from /etc/criu/ptimer.conf and criu's environment
 * (plugin/conf.h).  criu-mode auto (the default) leaves to criu the timers
 * it saved right when the restoring criu is 4.2+ on a kernel with the
 * exact-ID prctl (its restorer then makes exact IDs itself, at no cost a
 * task) and takes the others over.  criu-mode takeover always takes them
 * over; native (PTIMER_CRIU_MODE=native) always leaves them to criu and at
 * restore verifies what criu made.
 *
 * Its errors and warnings carry criu's own tags, "Error (FILE:LINE): " and
 * "Warn  (FILE:LINE): " (criu's pr_err/pr_warn), so that what greps criu's
 * log for them (zdtm, runtimes, people) finds them.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <criu/criu-plugin.h>

#include "core/dump.h"
#include "core/fault.h"
#include "core/log.h"
#include "core/pending.h"
#include "core/proc_timers.h"
#include "core/restore.h"
#include "core/rseq.h"
#include "core/task.h"
#include "core/util.h"
#include "core/timer_state.h"
#include "lib/procfs.h"
#include "plugin/conf.h"
#include "plugin/criu_core.h"
#include "restorer/abi.h"
#include "restorer/host/inject.h"

#define PLUGIN_NAME "ptimer"

/* Exported by the criu binary (criu/log.c, criu/image.c). */
extern void print_on_level(unsigned int loglevel, const char *format, ...)
	__attribute__((format(printf, 2, 3)));
extern bool check_and_remove_inventory_plugin(const char *name, size_t n) __attribute__((weak));

/* criu/include/log.h levels */
enum { CRIU_LOG_ERROR = 1, CRIU_LOG_WARN = 2, CRIU_LOG_INFO = 3, CRIU_LOG_DEBUG = 4 };

static struct ptimer_plugin_conf conf = { .criu_mode = PTIMER_CRIU_AUTO };

#ifdef PTIMER_HAVE_CHECKPOINT_DEVICES
/* The image directory of this dump, as image_dir() names it at the first
 * task: one look per dump, not one per task (dump_image_dir). */
static char dump_dir[4096];
#endif

/*
 * A task's restore, planned at init (prepare_restore) for
 * RESUME_DEVICES_LATE: its image (with the timing from criu's core image
 * where the plan needs it) and who restores its timers.
 */
enum how {
	HOW_CRIU,	/* criu makes them (exact IDs itself); ptimer completes */
	HOW_VERIFY,	/* criu makes them; ptimer checks, then completes */
	HOW_PTIMER,	/* ptimer makes them; criu's core image has none */
};
struct planned {
	pid_t vpid;
	enum how how;
	bool seen;		/* RESUME_DEVICES_LATE came for it */
	bool work;		/* RESUME_DEVICES_LATE has work for ptimer */
	pid_t held;		/* its host pid while it dies with criu (hold) */
	uint32_t n_timers;	/* in the image (img holds none when criu
				   restores them and nothing else needs them) */
	struct ptimer_image img;
};
static struct planned *plan;
static size_t n_plan, n_work;	/* tasks planned, those with work for ptimer */
static bool held_all;		/* the first RESUME_DEVICES_LATE held them (hold_all) */

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

/*
 * The plugins criu loaded before this one that handle a hook ptimer needs.
 * criu loads the plugin directory's *.so in readdir order and runs each
 * one's init as it loads it (criu/plugin.c cr_lib_load()), chaining each
 * hook's handlers in that order; run_plugins() stops at the first answer
 * that is not -ENOTSUP.  So at our init the plugins already loaded are the
 * ones ahead of us, and one of them (criu's CUDA plugin, enabled, answers 0
 * for every task) can keep us from a hook.  Their names, for the messages;
 * n_seen counts the tasks each hook of ours was called for.
 */
static char ahead[256];
static unsigned int n_seen;

struct ahead_walk {
	int hook;
	char *buf;
	size_t len;
};

static int ahead_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ahead_walk *w = arg;
	cr_plugin_desc_t *d;
	const bool *off;
	void *h;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	d = dlsym(h, "CR_PLUGIN_DESC");
	/*
	 * criu's GPU plugins keep what their init decided in a global
	 * (plugins/cuda/cuda_plugin.c and plugins/amdgpu/amdgpu_plugin.c,
	 * criu 4.1, 4.2: bool plugin_disabled): no GPU or no cuda-checkpoint
	 * at dump, a checkpoint whose inventory does not name them at restore.
	 * Disabled, every hook of theirs answers -ENOTSUP: not in our way.
	 */
	off = dlsym(h, "plugin_disabled");
	if (d && d != &CR_PLUGIN_DESC && (unsigned int)w->hook < d->max_hooks && d->hooks[w->hook] &&
	    !(off && *off)) {
		size_t used = strlen(w->buf);

		snprintf(w->buf + used, w->len - used, "%s%s (%s)", used ? ", " : "", d->name ? d->name : "?",
			 info->dlpi_name);
	}
	dlclose(h);
	return 0;
}

/* The plugins loaded before ptimer with a handler for hook, into ahead. */
static void find_ahead(int hook)
{
	struct ahead_walk w = { .hook = hook, .buf = ahead, .len = sizeof(ahead) };

	ahead[0] = 0;
	n_seen = 0;
	dl_iterate_phdr(ahead_one, &w);
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
 * criu_get_image_dir() is an fd; our file API wants a path, and messages
 * should name the directory the user gave criu (-D), not /proc/self/fd/N.
 * The fd's target is used when it is still that directory (same device
 * and inode), else the fd's path.
 */
static void image_dir(char *buf, size_t len)
{
	int fd = criu_get_image_dir();
	char link[64];
	struct stat a, b;
	ssize_t n;

	ptimer_proc_fd_path(fd, link, sizeof(link));
	n = readlink(link, buf, len - 1);
	if (n > 0 && (size_t)n < len - 1) {
		buf[n] = 0;
		if (buf[0] == '/' && !stat(buf, &a) && !fstat(fd, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return;
	}
	snprintf(buf, len, "%s", link);
}

/*
 * Does the criu running us restore exact timer IDs by itself, on this
 * kernel?  criu 4.2 switches PR_TIMER_CREATE_RESTORE_IDS on in its restorer
 * (criu/pie/restorer.c create_posix_timers(), when criu/kerndat.c found the
 * prctl); criu 4.1 and older, or any criu on a kernel before 6.15 (no prctl
 * 77: kernel commit ec2d0c04624b), make each ID by the create/delete loop,
 * slow for sparse IDs and failing when the counter has passed one.
 * -1 until asked; why says what decided it.
 */
static int criu_exact = -1;
static char criu_exact_why[160];

struct criu_knows {
	const char *what;
	int found;
};

static int criu_knows_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct criu_knows *k = data;
	size_t n = strlen(k->what) + 1;

	(void)size;
	/*
	 * The read-only segments without code first: the string constants
	 * are there where the linker separates code (-z separate-code, x86_64
	 * Debian: half of what it maps); then those with code, where they
	 * share one (arm64 Debian's criu has a single R E segment).
	 */
	for (int pass = 0; pass < 2 && !k->found; pass++)
		for (int i = 0; i < info->dlpi_phnum; i++) {
			const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

			if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R) || (ph->p_flags & PF_W) ||
			    !(ph->p_flags & PF_X) != !pass)
				continue;
			if (memmem((const void *)(info->dlpi_addr + ph->p_vaddr), ph->p_filesz, k->what, n)) {
				k->found = 1;
				break;
			}
		}
	return 1;	/* the first object is the executable: criu itself */
}

/*
 * criu_knows_timer_cr_ids - does the criu executable this plugin is loaded
 * into know exact-ID timer restore?  criu 4.2 added it together with the
 * feature "timer_cr_ids" of `criu check --feature` (criu/cr-check.c, its
 * feature table; the restorer uses it when criu/kerndat.c
 * kerndat_has_timer_cr_ids() found the prctl), so the name, a string
 * constant, is in criu's read-only segments from 4.2 on and in none
 * before.  Looked up in criu's own mapped segments (dl_iterate_phdr's
 * first object is the executable): no file read, no process started.
 * Replaces running `criu --version`, which cost a restore 10-50 ms (a
 * second criu loading all of criu's libraries).  A criu that renamed the
 * feature reads as one without: ptimer then restores the timers itself,
 * which is right, only slower.  Returns 1 or 0.
 */
static int criu_knows_timer_cr_ids(void)
{
	struct criu_knows k = { "timer_cr_ids", 0 };

	dl_iterate_phdr(criu_knows_one, &k);
	return k.found;
}

static bool can_criu_restore_exact(void)
{
	bool prctl_ok;

	if (criu_exact >= 0)
		return criu_exact;
	prctl_ok = prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) >= 0;
	if (!criu_knows_timer_cr_ids()) {
		criu_exact = 0;
		snprintf(criu_exact_why, sizeof(criu_exact_why), "this criu makes timer IDs by its create/delete "
			 "loop (it has no feature timer_cr_ids: exact IDs from criu 4.2)");
	} else if (!prctl_ok) {
		criu_exact = 0;
		snprintf(criu_exact_why, sizeof(criu_exact_why), "this kernel has no exact-ID timer_create "
			 "(PR_TIMER_CREATE_RESTORE_IDS, Linux 6.15)");
	} else {
		criu_exact = 1;
		snprintf(criu_exact_why, sizeof(criu_exact_why), "this criu (feature timer_cr_ids) on a kernel with "
			 "PR_TIMER_CREATE_RESTORE_IDS restores exact timer IDs itself");
	}
	return criu_exact;
}

static const char *criu_mode_name(enum ptimer_criu_mode m)
{
	return m == PTIMER_CRIU_NATIVE ? "native" : m == PTIMER_CRIU_AUTO ? "auto" : "takeover";
}

static int prepare_restore(void);

static int plugin_init(int stage)
{
	struct ptimer_err err;

	ptimer_log_set(criu_log);
	ptimer_verbosity = PTIMER_LOG_DEBUG;
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
		dump_dir[0] = 0;
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
		return prepare_restore();
	return 0;
}

/* A thread whose slice extension restore must enable again
 * (ptimer_slice_targets). */
static bool slice_to_restore(const struct ptimer_image *img)
{
	for (uint32_t i = 0; i < img->n_threads; i++)
		if (img->threads[i].slice_ext == PTIMER_SLICE_EXT_ENABLED)
			return true;
	return false;
}

/* Timers on a thread's own CPU clock whose thread the dump found out. */
static bool clock_timers(const struct ptimer_image *img)
{
	for (uint32_t i = 0; i < img->n_timers; i++)
		if (ptimer_thread_clock(img->timers[i].clock_id) && img->timers[i].clock_tid)
			return true;
	return false;
}

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

/*
 * img's timers aimed at t's pid-namespace leader (at_ns_leader), with the
 * timing they have in t now (ptimer_read_timer_state), into *out (malloc'd;
 * NULL when none).  Returns how many, or -errno (err set).
 */
static int leader_timers(struct ptimer_task *t, const struct ptimer_image *img, struct ptimer_timer **out,
			 struct ptimer_err *err)
{
	uint32_t k = 0;
	int ret;

	*out = NULL;
	for (uint32_t i = 0; i < img->n_timers; i++)
		k += at_ns_leader(t, &img->timers[i]);
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
	uint32_t k = 0;
	int ret;

	for (uint32_t i = 0; i < img->n_timers; i++)
		k += at_ns_leader(t, &img->timers[i]);
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
	for (uint32_t i = 0; i < img->n_timers; i++)
		if (at_ns_leader(t, &img->timers[i]))
			return true;
	return false;
}
#endif

/*
 * exit(DUMP), the tasks still held by criu, whether they are killed or go
 * on next: every re-aimed timer is aimed at its leader again, with the
 * timing it has now.
 */
static void aim_back_all(void)
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
static int plugin_checkpoint(int pid)
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
	n_seen++;
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

/*
 * Where ptimer restores the timers itself, criu must read core images
 * without them, and the image directory must stay the user's checkpoint
 * whatever happens: a restore that fails, a criu that is killed, another
 * restore of it at the same time, criu alone after.  So criu's images are
 * never changed: criu is given a directory of its own to read, the overlay
 * DIR/.ptimer-restore-XXXXXX, which holds a hard link of each of its
 * files (a symbolic link where the file system has none) and, in place of
 * the core images ptimer restores, those images without the timers.  The
 * overlay takes the place of criu's image directory descriptor
 * (criu_get_image_dir(), which criu and its restored tasks open every image
 * through) from the end of init(RESTORE) to exit(RESTORE), when criu's own
 * is put back and the overlay removed.  If criu dies before that, the
 * guard removes it; what a guard could not remove, the next restore does.
 */
#define OVERLAY_PREFIX	".ptimer-restore-"

static char ov_name[64];	/* the overlay's name in the image directory, "" when none */
static int ov_fd = -1;		/* the overlay */
static int img_fd_saved = -1;	/* criu's image directory while the overlay takes its place */

/* Remove DIR/name, a directory of files only (an overlay). */
static void remove_overlay(int dirfd, const char *name)
{
	struct dirent *de;
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(fd, de->d_name, 0);
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	unlinkat(dirfd, name, AT_REMOVEDIR);
}

/*
 * The guard: a process of its own that makes the overlay's directory and
 * removes the overlay when criu dies before exit(RESTORE) does it (criu
 * SIGKILLed by timeout -k, the OOM killer, a runtime that gives up).  It
 * makes the directory itself, so that no instant has an overlay without a
 * guard: killed before the guard made it, criu leaves nothing; after, the
 * guard sees it die.  It is forked twice and leaves criu's session (criu's
 * restore takes the exit of any child of its own for a failure), is named
 * ptimer-guard (what kills criu by name must not kill it), keeps only the
 * image directory and its pipes, sends the directory's name back, and
 * waits for criu's exit (pidfd_open, Linux 5.3; else a look every 20 ms)
 * or for the byte guard_done() sends once exit(RESTORE) has removed the
 * overlay itself.
 */
static int guard_fd = -1;	/* the write end of the guard's pipe, in criu */

/* A fresh overlay directory in dirfd, OVERLAY_PREFIX and six random
 * letters (unique across pid namespaces and hosts sharing the directory),
 * mode 0700 until overlay_make gives it the directory's; into name.
 * Returns 0 or -errno. */
static int overlay_mkdir(int dirfd, char *name, size_t len)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

	for (int tries = 0; tries < 100; tries++) {
		unsigned char r[6];
		size_t at = (size_t)snprintf(name, len, OVERLAY_PREFIX);

		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
			uint64_t x = ptimer_now_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)tries * 2654435761u;

			memcpy(r, &x, sizeof(r));
		}
		for (size_t i = 0; i < sizeof(r) && at + 1 < len; i++)
			name[at++] = abc[r[i] % (sizeof(abc) - 1)];
		name[at] = 0;
		if (!mkdirat(dirfd, name, 0700))
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static void guard_run(pid_t criu, int rd, int wr, int dirfd)
{
	int pfd = (int)syscall(SYS_pidfd_open, criu, 0);
	struct pollfd pf[2] = { { .fd = rd, .events = POLLIN }, { .fd = pfd, .events = POLLIN } };
	char c;

	/* the overlay: made here, its name to criu (none: criu reads EOF) */
	if (overlay_mkdir(dirfd, ov_name, sizeof(ov_name)))
		_exit(0);
	if (write(wr, ov_name, strlen(ov_name) + 1) < 0) {
		/* criu is gone already: the poll below sees it */
	}
	close(wr);

	for (;;) {
		int n = poll(pf, pfd >= 0 ? 2 : 1, pfd >= 0 ? -1 : 20);

		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0 && (pf[0].revents & (POLLIN | POLLHUP))) {
			if (read(rd, &c, 1) == 1)
				_exit(0);	/* exit(RESTORE) removed it */
			break;			/* every write end closed: criu is gone */
		}
		if (pfd >= 0 ? n > 0 && (pf[1].revents & POLLIN) : kill(criu, 0) && errno == ESRCH)
			break;
	}
	remove_overlay(dirfd, ov_name);
	_exit(0);
}

/* Close every descriptor but the n of keep (criu's service fds sit near
 * its RLIMIT_NOFILE): close_range(2), Linux 5.9, else one by one up to the
 * limit. */
static void close_all_but(const int *keep, int n)
{
	unsigned int lo = 0;

	for (;;) {
		unsigned int next = ~0u;

		/* the lowest kept descriptor at or above lo */
		for (int i = 0; i < n; i++)
			if (keep[i] >= 0 && (unsigned int)keep[i] >= lo && (unsigned int)keep[i] < next)
				next = (unsigned int)keep[i];
		if (next > lo && syscall(SYS_close_range, lo, next - 1, 0) < 0) {
			long max = sysconf(_SC_OPEN_MAX);

			for (long fd = lo; fd < (long)next && fd < max; fd++)
				close((int)fd);
		}
		if (next == ~0u)
			break;
		lo = next + 1;
	}
}

/*
 * The guard started, and the overlay's directory made by it in dirfd, its
 * name in ov_name.  Returns 0; -ECHILD when no guard could be started
 * (said in a warning), -EIO when the guard could not make the directory:
 * criu then makes it itself (overlay_make), with no guard.
 */
static int guard_start(int dirfd)
{
	pid_t criu = getpid(), child;
	int p[2], q[2], st;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC))
		goto no_guard;
	if (pipe2(q, O_CLOEXEC)) {
		close(p[0]);
		close(p[1]);
		goto no_guard;
	}
	child = fork();
	if (child == 0) {
		const int keep[3] = { p[0], q[1], dirfd };
		sigset_t all;

		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		setsid();
		prctl(PR_SET_NAME, "ptimer-guard", 0, 0, 0);
		if (fork())
			_exit(0);
		close_all_but(keep, 3);
		guard_run(criu, p[0], q[1], dirfd);
	}
	close(p[0]);
	close(q[1]);
	if (child < 0) {
		close(p[1]);
		close(q[0]);
		goto no_guard;
	}
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	do
		n = read(q[0], ov_name, sizeof(ov_name));
	while (n < 0 && errno == EINTR);
	close(q[0]);
	if (n <= 1 || ov_name[n - 1] || strncmp(ov_name, OVERLAY_PREFIX, strlen(OVERLAY_PREFIX))) {
		/* the guard made none, and is gone once p closes */
		ov_name[0] = 0;
		close(p[1]);
		return -EIO;
	}
	guard_fd = p[1];
	return 0;
no_guard:
	ptimer_log(PTIMER_LOG_WARN, "cannot start the process that removes ptimer's overlay if criu is killed: %s; "
		   "a later restore removes one left", strerror(errno));
	return -ECHILD;
}

static void guard_done(void)
{
	if (guard_fd < 0)
		return;
	if (write(guard_fd, "", 1) != 1)
		ptimer_log(PTIMER_LOG_DEBUG, "the guard of %s is gone already", ov_name);
	close(guard_fd);
	guard_fd = -1;
}

/*
 * Is the overlay DIR/name another restore's that is over?  A restore holds
 * an open file description lock (F_OFD_SETLK) on the overlay's .lock from
 * its making to its removal, so the lock is free once that criu and
 * everything it forked are gone, in whatever pid namespace or host (a
 * shared image directory).  An overlay without .lock is being made: stale
 * only after a minute.
 */
static bool overlay_stale(int dirfd, const char *name)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char lock[300];
	struct stat st;
	bool stale;
	int fd;

	snprintf(lock, sizeof(lock), "%s/.lock", name);
	fd = openat(dirfd, lock, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode) &&
		       st.st_mtime + 60 < time(NULL);
	stale = !fcntl(fd, F_OFD_SETLK, &fl);
	close(fd);
	return stale;
}

/*
 * What restores that did not finish left in dir, one entry (name) of its
 * listing d: an overlay of a criu that no longer runs, and (ptimer 0.1
 * stripped core images in place) a core-<vpid>.img.with-timers, put back
 * as core-<vpid>.img.  Called from prepare_restore's one pass over the
 * directory; prefix tests first, so that most names cost a compare.
 */
static void clean_leftover(const char *dir, DIR *d, const char *name)
{
	static const char wt[] = ".img.with-timers";
	size_t len = strlen(name);
	struct ptimer_err err;
	int vpid, end = 0;

	if (!strncmp(name, OVERLAY_PREFIX, strlen(OVERLAY_PREFIX)) && overlay_stale(dirfd(d), name)) {
		remove_overlay(dirfd(d), name);
		ptimer_log(PTIMER_LOG_INFO, "%s/%s: left by a restore that did not finish; removed", dir, name);
	}
	if (strncmp(name, "core-", 5) || len < sizeof(wt) || strcmp(name + len - (sizeof(wt) - 1), wt))
		return;
	if (sscanf(name, "core-%d.img.with-timers%n", &vpid, &end) == 1 && !name[end]) {
		if (ptimer_criu_core_put_back(dir, vpid, &err))
			ptimer_log(PTIMER_LOG_WARN, "%s", err.msg);
		else
			ptimer_log(PTIMER_LOG_WARN, "%s/core-%d.img.with-timers: left by a restore that did not "
				   "finish; put back as core-%d.img", dir, vpid, vpid);
	}
}

/*
 * Make the overlay of dir (once): every entry of dir but overlays in it, a
 * regular file as a hard link, anything else (the parent link of an
 * incremental dump, a symbolic link, a directory) or a file on a file
 * system without hard links as a symbolic link "../NAME", which resolves
 * as criu would have resolved NAME.  Its name is unique across pid
 * namespaces and hosts sharing the directory (overlay_mkdir), and it holds
 * .lock, locked (F_OFD_SETLK) while this restore runs (overlay_stale).
 * Its owner and mode are dir's (in a user namespace the restored init,
 * an unprivileged host uid, opens its children's core images).  *path:
 * the overlay's path.  Returns 0 or -errno (err set; nothing left).
 */
static int ov_lock = -1;	/* the overlay's .lock, locked */

static int overlay_make(const char *dir, char *path, size_t len, struct ptimer_err *err)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct dirent *de;
	struct stat st;
	int dfd, ret = 0, dd;
	DIR *d = NULL;

	if (ov_fd >= 0) {
		snprintf(path, len, "%s/%s", dir, ov_name);
		return 0;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st))
		return ptimer_errf(err, errno, "cannot open the image directory %s: %s", dir, strerror(errno));
	/* made by the guard (no instant without it), else here */
	if (guard_start(dfd)) {
		ret = overlay_mkdir(dfd, ov_name, sizeof(ov_name));
		if (ret) {
			ret = ptimer_errf(err, -ret, "cannot make a directory for criu to read in %s: %s", dir,
					  strerror(-ret));
			ov_name[0] = 0;
			close(dfd);
			return ret;
		}
	}
	snprintf(path, len, "%s/%s", dir, ov_name);
	ov_fd = openat(dfd, ov_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/*
	 * .lock appears locked: made and locked under another name, then
	 * renamed.  Made as .lock and locked after, another restore's
	 * overlay_stale could take the free lock in between and remove this
	 * live overlay; before the rename it sees an overlay being made.
	 */
	if (ov_fd >= 0)
		ov_lock = openat(ov_fd, ".lock.new", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (ov_fd < 0 || ov_lock < 0 || fcntl(ov_lock, F_OFD_SETLK, &fl) ||
	    renameat(ov_fd, ".lock.new", ov_fd, ".lock") ||
	    fchown(ov_fd, st.st_uid, st.st_gid) || fchmod(ov_fd, st.st_mode & 07777))
		ret = ptimer_errf(err, errno, "cannot make %s/%s for criu to read: %s", dir, ov_name, strerror(errno));
	dd = ret ? -1 : dup(dfd);
	if (!ret && (dd < 0 || !(d = fdopendir(dd)))) {
		ret = ptimer_errf(err, errno, "cannot list the image directory %s: %s", dir, strerror(errno));
		if (dd >= 0)
			close(dd);
	}
	while (!ret) {
		char target[300];

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				ret = ptimer_errf(err, errno, "cannot list the image directory %s: %s", dir,
						  strerror(errno));
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strncmp(de->d_name, OVERLAY_PREFIX, strlen(OVERLAY_PREFIX)))
			continue;
		if (!fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
		    !linkat(dfd, de->d_name, ov_fd, de->d_name, 0))
			continue;
		snprintf(target, sizeof(target), "../%s", de->d_name);
		if (symlinkat(target, ov_fd, de->d_name))
			ret = ptimer_errf(err, errno, "cannot link %s/%s into %s: %s", dir, de->d_name, ov_name,
					  strerror(errno));
	}
	if (d)
		closedir(d);
	if (ret) {
		if (ov_fd >= 0)
			close(ov_fd);
		if (ov_lock >= 0)
			close(ov_lock);
		ov_fd = ov_lock = -1;
		remove_overlay(dfd, ov_name);
		guard_done();
		ov_name[0] = 0;
	}
	close(dfd);
	return ret;
}

/* The overlay takes the place of criu's image directory (end of init). */
static int overlay_switch(struct ptimer_err *err)
{
	int img = criu_get_image_dir();

	if (ov_fd < 0 || img_fd_saved >= 0)
		return 0;
	img_fd_saved = fcntl(img, F_DUPFD_CLOEXEC, 3);
	if (img_fd_saved < 0 || dup2(ov_fd, img) < 0)
		return ptimer_errf(err, errno, "cannot give criu %s to read: %s", ov_name, strerror(errno));
	ptimer_log(PTIMER_LOG_DEBUG, "criu reads its images through %s", ov_name);
	return 0;
}

/*
 * criu's image directory back in its place, the overlay removed (exit, a
 * failed init).  By exit(RESTORE) criu may have closed its descriptor
 * (criu_get_image_dir() then answers -1): the overlay is removed through
 * the one kept.
 */
static void overlay_done(void)
{
	int img = criu_get_image_dir(), dfd = img_fd_saved >= 0 ? img_fd_saved : img;

	if (img_fd_saved >= 0 && img >= 0 && dup2(img_fd_saved, img) < 0)
		ptimer_log(PTIMER_LOG_ERROR, "cannot give criu its image directory back: %s", strerror(errno));
	if (ov_fd >= 0) {
		close(ov_fd);
		ov_fd = -1;
		if (dfd >= 0)
			remove_overlay(dfd, ov_name);
		guard_done();
	}
	if (ov_lock >= 0) {
		close(ov_lock);
		ov_lock = -1;
	}
	if (img_fd_saved >= 0) {
		close(img_fd_saved);
		img_fd_saved = -1;
	}
	ov_name[0] = 0;
}

static void free_plan(void)
{
	for (size_t i = 0; i < n_plan; i++)
		ptimer_image_free(&plan[i].img);
	free(plan);
	plan = NULL;
	n_plan = n_work = 0;
}

static int cmp_vpid(const void *a, const void *b)
{
	const struct planned *x = a, *y = b;

	return (x->vpid > y->vpid) - (x->vpid < y->vpid);
}

static struct planned *planned_of(pid_t vpid)
{
	struct planned key = { .vpid = vpid };

	return n_plan ? bsearch(&key, plan, n_plan, sizeof(*plan), cmp_vpid) : NULL;
}

/* criu's timers of core image c, sorted by ID (*out malloc'd, NULL: none). */
static int core_timers_by_id(const struct ptimer_criu_core *c, struct ptimer_timer **out, uint32_t *n,
			     struct ptimer_err *err)
{
	int ret = ptimer_criu_core_timers(c, out, n, err);

	if (!ret && *n)
		qsort(*out, *n, sizeof(**out), ptimer_timer_cmp_id);
	return ret;
}

/*
 * The timing of img's timers from criu's core image c (by ID: the same
 * timers, the plugin saved its image while criu held the task stopped,
 * before criu saved it).  A timer whose clock the image changed (the CPU
 * clock of a thread gone: CLOCK_MONOTONIC, disarmed) keeps none.  Then
 * the pending marks are checked against it (ptimer_pending_drop_stale).
 */
static int fill_state(struct ptimer_image *img, const struct ptimer_criu_core *c, pid_t vpid,
		      struct ptimer_err *err)
{
	struct ptimer_timer *ct = NULL;
	uint32_t nc = 0;
	int ret = core_timers_by_id(c, &ct, &nc, err);

	if (ret)
		return ret;
	if (nc != img->n_timers)
		ret = ptimer_errf(err, EINVAL, "core-%d.img holds %u POSIX timers, ptimers-%d.img %u: they are not "
				  "of the same dump; dump again", vpid, nc, vpid, img->n_timers);
	for (uint32_t i = 0; !ret && i < img->n_timers; i++) {
		struct ptimer_timer *tm = &img->timers[i];
		const struct ptimer_timer *f = bsearch(tm, ct, nc, sizeof(*ct), ptimer_timer_cmp_id);

		if (!f) {
			ret = ptimer_errf(err, EINVAL, "core-%d.img has no timer %d, which ptimers-%d.img holds: they "
					  "are not of the same dump; dump again", vpid, tm->timer_id, vpid);
			break;
		}
		if (f->clock_id == tm->clock_id) {
			tm->it_value = f->it_value;
			tm->it_interval = f->it_interval;
			tm->overrun = f->overrun;
		}
		ptimer_pending_drop_stale(tm);
	}
	free(ct);
	return ret;
}

/*
 * The timers of an image that lists none (img->timers_in_core: the dump
 * found them all criu's, ptimer_timers_all_criu) from criu's core image c,
 * whole, sorted by ID, as ptimer's dump gives them: a notification that is
 * no SIGEV_THREAD_ID one names the process (vpid).  The image must not be
 * read again from file after: ptimer_image_free frees them.
 */
static int take_core_timers(struct ptimer_image *img, const struct ptimer_criu_core *c, pid_t vpid,
			    struct ptimer_err *err)
{
	struct ptimer_timer *ct = NULL;
	uint32_t nc = 0;
	int ret = core_timers_by_id(c, &ct, &nc, err);

	if (ret)
		return ret;
	for (uint32_t i = 0; i < nc; i++)
		if (!(ct[i].sigev_notify & PTIMER_SIGEV_THREAD_ID))
			ct[i].notify_tid = vpid;
	img->timers = ct;
	img->n_timers = nc;
	return 0;
}

/*
 * criu without exact IDs (4.1, or any criu on a kernel before 6.15) makes
 * a task's timers in ascending ID order, each by timer_create until the
 * kernel's per-process counter, 0 in the new process, gives its ID,
 * deleting the others (criu/pie/restorer.c create_posix_timers()): right
 * for any set, and as fast as ptimer's own linear mode, but one
 * create/delete pair per ID skipped.  ptimer's restore of a task costs
 * about as much as 256 such pairs (0.3-0.4 ms against 1.4 us a pair:
 * test/bench.sh (d) and (h)), so up to that many criu is left to do it.
 */
#define CRIU_LOOP_PAIRS_MAX	256

/*
 * The create/delete pairs criu's loop needs for the task's timers (their
 * largest ID + 1 - how many), from the image or, where it lists none,
 * criu's core image; into *pairs.  Returns 0 or -errno (err set).
 */
static int criu_loop_pairs(const struct planned *p, const char *dir, uint64_t *pairs, struct ptimer_err *err)
{
	const struct ptimer_image *img = &p->img;
	struct ptimer_timer *ct = NULL;
	const struct ptimer_timer *tm = img->timers;
	uint32_t n = img->n_timers;
	int64_t max = -1;
	int ret = 0;

	if (img->timers_in_core) {
		struct ptimer_criu_core *c = NULL;

		ret = ptimer_criu_core_open(dir, p->vpid, &c, err);
		if (!ret)
			ret = ptimer_criu_core_timers(c, &ct, &n, err);
		ptimer_criu_core_close(c);
		tm = ct;
	}
	for (uint32_t i = 0; !ret && i < n; i++)
		if (tm[i].timer_id > max)
			max = tm[i].timer_id;
	*pairs = (uint64_t)(max + 1) - n;
	free(ct);
	return ret;
}

/*
 * Does criu, making IDs by its loop, restore this task as ptimer would?
 * When the set is cheap for the loop (CRIU_LOOP_PAIRS_MAX, *pairs) and what
 * criu does not make (a pending expiry, a timer on another thread's CPU
 * clock, one aimed at a pid-namespace leader) ptimer can complete after
 * it, as it does after criu 4.2: those completions need the exact-ID prctl
 * here (prctl).  Older images, which do not count those, are ptimer's.
 * why: the reason when not.
 */
static bool criu_loop_cheap(const struct planned *p, const char *dir, bool prctl, uint64_t *pairs,
			    char *why, size_t len)
{
	const struct ptimer_image *img = &p->img;
	struct ptimer_err err;

	*pairs = 0;
	if (!img->counts_known) {
		snprintf(why, len, "its image (an older ptimer's) does not count what criu would not make");
		return false;
	}
	if (!prctl && (img->n_pending || img->n_clock_tid || img->n_leader_aimed)) {
		snprintf(why, len, "completing what criu makes (a pending expiry, a thread CPU clock, a pid-namespace "
			 "leader's timer) needs the exact-ID prctl, which this kernel lacks");
		return false;
	}
	if (criu_loop_pairs(p, dir, pairs, &err)) {
		snprintf(why, len, "%s", err.msg);
		return false;
	}
	if (*pairs > CRIU_LOOP_PAIRS_MAX) {
		snprintf(why, len, "criu's loop would need %llu create/delete pairs (more than %d)",
			 (unsigned long long)*pairs, CRIU_LOOP_PAIRS_MAX);
		return false;
	}
	return true;
}

static unsigned int n_loop_left, n_loop_taken;	/* criu_loop_cheap's answers, for the log */

/*
 * One task's plan: who restores its timers, and what that needs of criu's
 * core image (read for the timing, stripped for ptimer to restore).
 */
static int plan_task(struct planned *p, const char *dir, bool exact, bool prctl, struct ptimer_err *err)
{
	struct ptimer_image *img = &p->img;
	struct ptimer_criu_core *c = NULL;
	bool need_state, strip, take;
	bool auto_ = img->criu_mode == PTIMER_CRIU_AUTO && conf.criu_mode != PTIMER_CRIU_TAKEOVER;
	uint64_t pairs = 0;
	char why[640] = "";
	int ret;

	if (img->criu_mode == PTIMER_CRIU_NATIVE)
		p->how = HOW_VERIFY;
	else if (auto_ && exact)
		p->how = HOW_CRIU;
	else if (auto_ && criu_loop_cheap(p, dir, prctl, &pairs, why, sizeof(why)))
		p->how = HOW_CRIU;
	else
		p->how = HOW_PTIMER;
	if (auto_ && !exact) {
		if (p->how == HOW_CRIU)
			n_loop_left++;
		else
			n_loop_taken++;
		if (p->how == HOW_CRIU)
			ptimer_log(PTIMER_LOG_DEBUG, "task vpid %d: criu's create/delete loop makes its timer IDs in "
				   "%llu pairs (at most %d): left to criu", p->vpid, (unsigned long long)pairs,
				   CRIU_LOOP_PAIRS_MAX);
		else
			ptimer_log(PTIMER_LOG_DEBUG, "task vpid %d: ptimer restores its timers: %s", p->vpid, why);
	}
	/*
	 * A plugin ahead may keep RESUME_DEVICES_LATE from us: criu must then
	 * restore the timers itself, so its core image is left whole.
	 */
	if (p->how == HOW_PTIMER && ahead[0]) {
		if (!img->state_in_core && img->n_timers)
			return ptimer_errf(err, EXDEV, "task vpid %d: its timers are in ptimers-%d.img only (written by "
					   "an older ptimer), and %s, loaded before ptimer, may keep ptimer from "
					   "restoring them; restore with a plugin directory without it",
					   p->vpid, p->vpid, ahead);
		p->how = HOW_VERIFY;
	}
	/* older ptimer's takeover images: the timing is here, the core has none */
	need_state = img->state_in_core && img->n_timers &&
		     (p->how != HOW_CRIU || ptimer_image_pending(img) || clock_timers(img));
	strip = p->how == HOW_PTIMER && (img->state_in_core || img->criu_mode == PTIMER_CRIU_AUTO);
	/* every timer criu's: ptimer restores or verifies them from there */
	take = img->timers_in_core && p->how != HOW_CRIU;
	if (!need_state && !strip && !take)
		return 0;
	ret = ptimer_criu_core_open(dir, p->vpid, &c, err);
	if (!ret && take)
		ret = take_core_timers(img, c, p->vpid, err);
	if (!ret && need_state)
		ret = fill_state(img, c, p->vpid, err);
	if (!ret && strip && ptimer_criu_core_n_timers(c)) {
		char ov[4200], dest[4300];

		/* criu reads the core image without the timers from the overlay */
		ret = overlay_make(dir, ov, sizeof(ov), err);
		snprintf(dest, sizeof(dest), "%s/core-%d.img", ov, p->vpid);
		if (!ret)
			ret = ptimer_criu_core_strip(c, dest, err);
		if (ret && img->state_in_core) {
			/* a read-only directory: criu makes them, as it saved them */
			ptimer_log(PTIMER_LOG_WARN, "task vpid %d: %s; criu restores its timers as it saved them "
				   "and ptimer checks them", p->vpid, err->msg);
			p->how = HOW_VERIFY;
			ret = 0;
		}
	}
	ptimer_criu_core_close(c);
	return ret;
}

static bool has_thread(const struct ptimer_criu_task *task, pid_t tid)
{
	for (uint32_t i = 0; i < task->n_threads; i++)
		if (task->threads[i] == tid)
			return true;
	return false;
}

/*
 * Is p's image of this checkpoint?  Checked against criu's own images
 * before any task is restored, where a failure is clean (an image of a
 * task criu did not save is dropped before, with a warning): every thread
 * the image names (its threads, a
 * SIGEV_THREAD_ID target, the thread a thread-CPU-clock timer measures) is
 * one of that task's threads there, and the first thread with an rseq
 * area has it where criu's core-<tid>.img says (the address differs from
 * one run of a program to the next: ASLR).  tree NULL: no pstree.img to
 * check against.  Returns 0 or -EINVAL (err set).
 */
static int check_of_checkpoint(const char *dir, const struct planned *p, const struct ptimer_criu_task *tree,
			       uint32_t n_tree, struct ptimer_err *err)
{
	const struct ptimer_criu_task *task = ptimer_criu_pstree_task(tree, n_tree, p->vpid);
	const struct ptimer_image *img = &p->img;
	bool rseq_checked = false;

	if (!tree || !task)
		return 0;
	for (uint32_t i = 0; i < img->n_threads; i++) {
		const struct ptimer_thread *th = &img->threads[i];
		struct ptimer_err rerr;
		uint64_t at;

		if (!has_thread(task, th->tid))
			return ptimer_errf(err, EINVAL, "%s/ptimers-%d.img is not of this checkpoint: it names thread "
					   "%d, which criu did not save for task %d (pstree.img)", dir, p->vpid, th->tid,
					   p->vpid);
		if (rseq_checked || !th->rseq_abi_size || ptimer_criu_thread_rseq(dir, th->tid, &at, &rerr) || !at)
			continue;
		rseq_checked = true;
		if (at != th->rseq_abi_pointer)
			return ptimer_errf(err, EINVAL, "%s/ptimers-%d.img is not of this checkpoint: it was written "
					   "by another dump of task %d (its thread %d's memory is laid out otherwise "
					   "than in core-%d.img: rseq area at %#llx, not %#llx); put back the "
					   "ptimers-%d.img dumped with these images, or remove it to restore as criu "
					   "alone would", dir, p->vpid, p->vpid, th->tid, th->tid,
					   (unsigned long long)th->rseq_abi_pointer, (unsigned long long)at, p->vpid);
	}
	for (uint32_t i = 0; i < img->n_timers; i++) {
		const struct ptimer_timer *tm = &img->timers[i];
		pid_t tid = tm->sigev_notify & PTIMER_SIGEV_THREAD_ID ? tm->notify_tid : 0;

		if (tid && !has_thread(task, tid))
			return ptimer_errf(err, EINVAL, "%s/ptimers-%d.img: timer %d is aimed at thread %d, which criu "
					   "did not save for task %d (pstree.img): the image is not of this checkpoint "
					   "or was edited", dir, p->vpid, tm->timer_id, tid, p->vpid);
		if (tm->clock_tid && !has_thread(task, tm->clock_tid))
			return ptimer_errf(err, EINVAL, "%s/ptimers-%d.img: timer %d measures thread %d, which criu "
					   "did not save for task %d (pstree.img): the image is not of this checkpoint "
					   "or was edited", dir, p->vpid, tm->timer_id, tm->clock_tid, p->vpid);
	}
	return 0;
}

/*
 * Restore init: read every ptimers image of the directory and plan each
 * task's restore before criu reads any core image.  criu-mode auto images
 * leave the timers to a criu that makes exact IDs itself (a look into
 * criu's own read-only data, one prctl): of such an image only the head is unpacked when
 * it says no timer has a pending expiry or a thread clock to move; the
 * others are read whole.  Where ptimer restores the timers, criu reads a
 * core image without them.  Returns 0, or -1 with an error line: criu then
 * fails the restore at once, the directory as it was.
 */
static int prepare_restore(void)
{
	struct ptimer_err err;
	char dir[4096], path[4400];
	size_t cap = 0;
	struct dirent *de;
	bool exact, has_prctl;
	struct ptimer_criu_task *tree = NULL;
	uint32_t n_tree = 0;
	int ret = 0, auto_seen = 0, n_native = 0;
	DIR *d;

	n_loop_left = n_loop_taken = 0;
	held_all = false;
	image_dir(dir, sizeof(dir));
	d = opendir(dir);
	if (!d)
		return 0;
	/* one pass: what earlier restores left, and the ptimers images */
	while (!ret && (de = readdir(d))) {
		int vpid, end = 0;

		if (de->d_name[0] == '.' || !strncmp(de->d_name, "core-", 5))
			clean_leftover(dir, d, de->d_name);
		if (strncmp(de->d_name, "ptimers-", 8) ||
		    sscanf(de->d_name, "ptimers-%d.img%n", &vpid, &end) != 1 || de->d_name[end])
			continue;
		if (n_plan == cap) {
			struct planned *v = realloc(plan, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!v) {
				ret = ptimer_errf(&err, ENOMEM, "out of memory");
				break;
			}
			plan = v;
		}
		memset(&plan[n_plan], 0, sizeof(*plan));
		plan[n_plan].vpid = vpid;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		/* the head first: it may be all the restore needs */
		ret = ptimer_image_read_head(path, &plan[n_plan].img, &plan[n_plan].n_timers, &err);
		if (!ret) {
			auto_seen |= plan[n_plan].img.criu_mode == PTIMER_CRIU_AUTO;
			n_native += plan[n_plan].img.criu_mode == PTIMER_CRIU_NATIVE;
			n_plan++;
		}
	}
	closedir(d);
	if (n_plan)
		qsort(plan, n_plan, sizeof(*plan), cmp_vpid);
	exact = (auto_seen || (n_plan && conf.criu_mode == PTIMER_CRIU_AUTO)) && can_criu_restore_exact();
	has_prctl = prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) >= 0;
	/* the mode in force is the dump's, image by image */
	if (!ret && n_native)
		ptimer_log(PTIMER_LOG_INFO, "criu-mode native (the dump's) for %d task%s: criu restores their timers, "
			   "ptimer checks them against their ptimers images (ID, clock, notification, signal, thread; "
			   "the timing is criu's)", n_native, n_native == 1 ? "" : "s");
	if (!ret && auto_seen)
		ptimer_log(PTIMER_LOG_INFO, "criu-mode auto: %s: %s", criu_exact_why,
			   exact && conf.criu_mode != PTIMER_CRIU_TAKEOVER ?
			   "criu restores the timers it saved right, ptimer the rest" :
			   exact ? "but criu-mode takeover in the restore's settings: ptimer restores every task's timers" :
			   conf.criu_mode == PTIMER_CRIU_TAKEOVER ?
			   "criu-mode takeover in the restore's settings: ptimer restores every task's timers" :
			   "ptimer restores the timers of the tasks whose IDs that loop would reach slowly");
	if (!ret && n_plan && ptimer_criu_pstree_read(dir, &tree, &n_tree, &err)) {
		/* criu fails such a restore itself */
		ptimer_log(PTIMER_LOG_DEBUG, "%s; the ptimers images are not checked against it", err.msg);
		tree = NULL;
		n_tree = 0;
	}
	/* an image of a task criu did not save: an earlier dump's, left in the directory */
	for (size_t i = 0, k = 0; tree && !ret && i < n_plan; i++) {
		if (!ptimer_criu_pstree_task(tree, n_tree, plan[i].vpid)) {
			ptimer_log(PTIMER_LOG_WARN, "%s/ptimers-%d.img: criu saved no task %d in this checkpoint "
				   "(pstree.img); ignored", dir, plan[i].vpid, plan[i].vpid);
			ptimer_image_free(&plan[i].img);
		} else {
			plan[k++] = plan[i];
		}
		if (i + 1 == n_plan)
			n_plan = k;
	}
	for (size_t i = 0; !ret && i < n_plan; i++) {
		struct planned *p = &plan[i];

		/* criu restores them, and nothing else of ptimer's needs them */
		if (p->img.criu_mode == PTIMER_CRIU_AUTO && exact && conf.criu_mode != PTIMER_CRIU_TAKEOVER &&
		    p->img.counts_known && !p->img.n_pending && !p->img.n_clock_tid && !p->img.n_leader_aimed) {
			p->how = HOW_CRIU;
			/* its threads' slice state (in the head) is all ptimer uses */
			if (slice_to_restore(&p->img))
				ret = check_of_checkpoint(dir, p, tree, n_tree, &err);
			continue;
		}
		ptimer_image_free(&p->img);
		snprintf(path, sizeof(path), "%s/ptimers-%d.img", dir, p->vpid);
		ret = ptimer_image_read(path, &p->img, &err);
		if (!ret)
			ret = check_of_checkpoint(dir, p, tree, n_tree, &err);
		if (!ret)
			ret = plan_task(p, dir, exact, has_prctl, &err);
	}
	ptimer_criu_pstree_free(tree, n_tree);
	for (size_t i = 0; !ret && i < n_plan; i++) {
		struct planned *p = &plan[i];

		p->work = p->how != HOW_CRIU || slice_to_restore(&p->img) || ptimer_image_pending(&p->img) ||
			  clock_timers(&p->img) || p->img.n_leader_aimed;
		n_work += p->work;
		/* criu makes them with exact IDs (it checks each ID it gets:
		 * criu/pie/restorer.c); nothing after it is ptimer's */
		if (!p->work && p->img.timers_in_core)
			ptimer_log(PTIMER_LOG_DEBUG, "task vpid %d: criu restores its POSIX timers, all of them from "
				   "its core image (criu-mode auto); nothing of ptimer's after it", p->vpid);
		else if (!p->work)
			ptimer_log(PTIMER_LOG_DEBUG, "task vpid %d: criu restores its %u POSIX timers (criu-mode auto); "
				   "nothing of ptimer's after it", p->vpid, p->n_timers);
	}
	if (!ret && n_loop_left + n_loop_taken)
		ptimer_log(PTIMER_LOG_INFO, "criu-mode auto: %u task%s left to criu's create/delete loop (at most %d "
			   "pairs each), %u restored by ptimer", n_loop_left, n_loop_left == 1 ? "" : "s",
			   CRIU_LOOP_PAIRS_MAX, n_loop_taken);
	if (!ret)
		ret = overlay_switch(&err);
	if (!ret && ptimer_fault("restore-init"))
		ret = ptimer_errf(&err, EIO, "injected failure at the end of init(RESTORE)");
	if (ret) {
		ptimer_log(PTIMER_LOG_ERROR, "%s", err.msg);
		overlay_done();
		free_plan();
		return -1;
	}
	return 0;
}

/* How many tasks criu saved (its pstree.img), 0 when it cannot be read. */
static unsigned int tasks_saved(void)
{
	struct ptimer_criu_task *tree = NULL;
	struct ptimer_err err;
	uint32_t n = 0;
	char dir[4096];

	image_dir(dir, sizeof(dir));
	if (ptimer_criu_pstree_read(dir, &tree, &n, &err))
		return 0;
	ptimer_criu_pstree_free(tree, n);
	return n;
}

/*
 * What a plugin ahead of ptimer kept from it (find_ahead), said once the
 * dump or restore is through: never a silent change.  At dump criu saved
 * those tasks' timers alone (a restore gives them back as criu alone
 * would); at restore criu made them (plan_task left the core images
 * whole), and ptimer's additions to what criu made are missing.
 */
static void report_ahead(int stage, int ret)
{
	unsigned int n;

	if (!ahead[0] || ret)
		return;
	if (stage == CR_PLUGIN_STAGE__DUMP) {
		n = tasks_saved();
		if (n > n_seen)
			ptimer_log(PTIMER_LOG_WARN, "ptimer was called for %u of the %u tasks criu saved: %s answered "
				   "CHECKPOINT_DEVICES first for the others, whose timers criu saved alone", n_seen, n,
				   ahead);
		return;
	}
	for (size_t i = 0; i < n_plan; i++)
		if (plan[i].work && !plan[i].seen)
			ptimer_log(PTIMER_LOG_WARN, "task vpid %d: %s answered RESUME_DEVICES_LATE before ptimer: its "
				   "%u timers are as criu restored them (a thread-CPU-clock timer in the leader, a "
				   "pid-namespace leader's timer aimed at the process, a pending expiry as criu queues "
				   "it, no rseq slice extension)", plan[i].vpid, ahead, plan[i].n_timers);
}

static void plugin_exit(int stage, int ret)
{
	report_ahead(stage, ret);
	if (stage == CR_PLUGIN_STAGE__DUMP)
		aim_back_all();
	if (stage == CR_PLUGIN_STAGE__RESTORE) {
		overlay_done();
		free_plan();
	}
	ahead[0] = 0;
}

/*
 * After criu made the timers as it saved them (criu 4.2+ in criu-mode auto,
 * criu-mode native, a read-only directory): the ones the dump aimed at the
 * process while criu saved them (struct
 * reaimed) are aimed at the leader again, as the image has them, with the
 * timing criu gave them.  Needs the exact-ID prctl.  Returns 0 or -errno.
 */
static int reaim_restored(struct ptimer_task *t, const struct ptimer_image *img, struct ptimer_err *err)
{
	struct ptimer_timer *with;
	uint32_t k;
	int ret;

	if (prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) < 0)
		return 0;
	ret = leader_timers(t, img, &with, err);
	if (ret <= 0)
		return ret;
	k = (uint32_t)ret;
	for (uint32_t i = 0; i < k; i++) {
		with[i].overrun = 0;
		with[i].pending = 0;
		with[i].pending_overrun = 0;
	}
	ret = ptimer_replace_timers(t, with, k, err);
	if (!ret)
		ptimer_log(PTIMER_LOG_INFO, "task %d: %u timer%s criu made aimed at the process aimed at its leader "
			   "again, as the image has %s", t->pid, k, k > 1 ? "s" : "", k > 1 ? "them" : "it");
	free(with);
	return ret;
}

/*
 * A task whose timers ptimer restores must not run without them.  Between
 * criu's RESUME_DEVICES_LATE calls for two tasks, or while ptimer works in
 * one, a criu that is killed (an orchestrator's timeout, the OOM killer)
 * leaves its tracees detached, and a task whose call had not come ran on
 * with no timer where criu's core image had them stripped.  So at the
 * first call, when criu holds every task stopped (criu/cr-restore.c: after
 * compel_stop_on_syscall() and finalize_restore()), each task whose timers
 * ptimer restores is set PTRACE_O_EXITKILL (Linux 3.8): the kernel kills it if
 * its tracer, criu, dies; when ptimer has done its work the option goes
 * again and the task is criu's as before.  criu set PTRACE_O_TRACESYSGOOD
 * and, for a task under seccomp, PTRACE_O_SUSPEND_SECCOMP
 * (criu/cr-restore.c attach_to_tasks()); both are kept (the second is set
 * where the kernel lets criu, as it does for every task then: without a
 * filter there is nothing to suspend).  Tasks are found by their pid where
 * criu restored them in its own pid namespace (their pids are the
 * image's), else among the descendants of the first task called (the
 * tree's root: criu calls it first).
 */
static unsigned long held_opts = PTRACE_O_TRACESYSGOOD | PTRACE_O_SUSPEND_SECCOMP;

static int hold_opts(pid_t pid, bool exitkill)
{
	unsigned long o = held_opts | (exitkill ? PTRACE_O_EXITKILL : 0);

	if (!ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)o))
		return 0;
	if (errno == EINVAL || errno == EPERM) {
		/* no seccomp suspension here: criu could not set it either */
		held_opts &= ~(unsigned long)PTRACE_O_SUSPEND_SECCOMP;
		o &= ~(unsigned long)PTRACE_O_SUSPEND_SECCOMP;
		if (!ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)o))
			return 0;
	}
	return -errno;
}

static void hold(struct planned *p, pid_t pid)
{
	/* only a task criu gave no timer (ptimer's): the others have criu's */
	if (p->held || p->how != HOW_PTIMER || hold_opts(pid, true))
		return;
	p->held = pid;
}

/* root's descendants (the children of each of its threads), breadth first */
static void hold_tree(pid_t root)
{
	size_t n = 0, cap = 64, at = 0;
	pid_t *q = malloc(cap * sizeof(*q));

	if (!q)
		return;
	q[n++] = root;
	while (at < n) {
		pid_t x = q[at++], *tids = NULL, v = ptimer_proc_nspid(x, x);
		struct planned *p = v > 0 ? planned_of(v) : NULL;
		int nt;

		if (p)
			hold(p, x);
		nt = ptimer_proc_threads(x, &tids);
		for (int i = 0; i < nt; i++) {
			char path[64];
			long c;
			FILE *f;

			snprintf(path, sizeof(path), "/proc/%d/task/%d/children", x, tids[i]);
			f = fopen(path, "re");
			while (f && fscanf(f, "%ld", &c) == 1) {
				if (n == cap) {
					pid_t *v2 = realloc(q, (cap * 2) * sizeof(*q));

					if (!v2)
						break;
					q = v2;
					cap *= 2;
				}
				q[n++] = (pid_t)c;
			}
			if (f)
				fclose(f);
		}
		if (nt > 0)
			free(tids);
	}
	free(q);
}

/* At the first call (pid: its task, vpid: that task's pid in the tree). */
static void hold_all(pid_t pid, pid_t vpid)
{
	held_all = true;
	if (pid == vpid) {
		/* criu's own pid namespace: each task has its image's pid */
		for (size_t i = 0; i < n_plan; i++)
			hold(&plan[i], plan[i].vpid);
	} else {
		hold_tree(pid);
	}
}

/* Done with p: the task is criu's as before. */
static void release_hold(struct planned *p)
{
	if (p->held && !hold_opts(p->held, false))
		p->held = 0;
}

/*
 * Kill a task criu holds (RESUME_DEVICES_LATE: every thread ptrace-stopped
 * by criu, whose process this code runs in) and reap its threads other
 * than the leader.  A traced thread that dies stays a zombie until its
 * tracer waits for it with __WALL; criu's detach loop stops at the dead
 * leader ("Unable to detach") and its wait for the root task has no
 * __WALL (criu/cr-restore.c, 4.2 and criu-dev), so a multi-threaded root
 * (pid 1 of a pid namespace) never finished exiting and criu waited for
 * ever.  With the other threads reaped here, the leader exits and criu
 * fails the restore at once.
 */
static void kill_task(pid_t pid)
{
	pid_t *tids = NULL;
	int n;

	n = ptimer_proc_threads(pid, &tids);
	kill(pid, SIGKILL);
	for (int i = 0; i < n; i++) {
		int st;

		if (tids[i] != pid)
			while (waitpid(tids[i], &st, __WALL) < 0 && errno == EINTR)
				;
	}
	free(tids);
}

static int plugin_resume_late(int pid)
{
	struct ptimer_restore_opts o = { .mode = conf.restore_mode, .rseq_slice = conf.rseq_slice };
	struct ptimer_restore_stats st;
	struct ptimer_task t;
	struct ptimer_err err;
	struct planned *p;
	pid_t vpid;
	int ret;

	/* nothing of ptimer's in any task (no image, or criu makes all): not even a look */
	if (pid <= 0 || !n_work)
		return -ENOTSUP;
	vpid = ptimer_proc_nspid(pid, pid);
	if (vpid == -EINVAL)
		vpid = pid;
	if (vpid <= 0) {
		ptimer_log(PTIMER_LOG_ERROR, "task %d: cannot read its pid namespace view (NSpid)", pid);
		return -1;
	}
	/* planned at init: a task with nothing to restore has no image */
	p = planned_of(vpid);
	if (p)
		p->seen = true;
	if (!held_all)
		hold_all(pid, vpid);
	if (!p) {
		ptimer_log(PTIMER_LOG_DEBUG, "task %d (vpid %d): no ptimers-%d.img, nothing to do", pid, vpid, vpid);
		return -ENOTSUP;
	}
	if (!p->work)		/* said at init */
		return -ENOTSUP;
	if (ptimer_fault("resume-late")) {
		ret = ptimer_errf(&err, EIO, "injected failure in RESUME_DEVICES_LATE");
		goto fail;
	}
	ret = ptimer_task_adopt(&t, pid, &err);
	if (ret)
		goto fail;
	if (p->how == HOW_PTIMER) {
		ret = ptimer_restore_task(&t, &p->img, &o, &st, &err);
		if (!ret)
			ret = ptimer_criu_pending(&t, &p->img, &err);
		if (!ret)
			ptimer_log(PTIMER_LOG_INFO, "task %d (vpid %d): %u POSIX timers restored, %s mode, %.3f ms",
				   pid, vpid, p->img.n_timers, st.mode == PTIMER_RESTORE_LINEAR ? "linear" : "exact-ID",
				   (double)st.ns_total / 1e6);
	} else {
		ret = reaim_restored(&t, &p->img, &err);
		if (!ret && p->how == HOW_VERIFY)
			ret = ptimer_verify_task(&t, &p->img, &o, &err);
		if (!ret)
			ret = ptimer_restore_slice_task(&t, &p->img, &o, &err);
		if (!ret)
			ret = ptimer_rebind_clock_timers(&t, &p->img, &o, &err);
		if (!ret)
			ret = ptimer_criu_pending(&t, &p->img, &err);
		if (!ret && p->how == HOW_VERIFY)
			ptimer_log(PTIMER_LOG_INFO, "task %d (vpid %d): the %u timers criu restored match the image",
				   pid, vpid, p->img.n_timers);
		else if (!ret)
			ptimer_log(PTIMER_LOG_DEBUG, "task %d (vpid %d): criu restored its %u POSIX timers "
				   "(criu-mode auto)", pid, vpid, p->img.n_timers);
	}
	ptimer_task_release(&t);
	if (!ret) {
		release_hold(p);
		return -ENOTSUP;
	}
fail:
	/*
	 * criu only logs a failed RESUME_DEVICES_LATE (criu/cr-restore.c).  A
	 * task without its timers, or with timers that differ, must not run:
	 * killing it makes criu's detach fail, and criu then fails the whole
	 * restore and kills the tree.
	 */
	ptimer_log(PTIMER_LOG_ERROR, "task %d (vpid %d): %s; killing the task so that the restore fails "
		   "rather than run without its timers", pid, vpid, err.msg);
	kill_task(pid);
	return ret < 0 && ret != -ENOTSUP ? ret : -1;
}

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
