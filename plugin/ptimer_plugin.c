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
 * (plugin/conf.h).  criu-mode auto (the default) leaves to criu the timers
 * it saved right when criu is 4.2+ on a kernel with the exact-ID prctl (its
 * restorer then makes exact IDs itself, at no cost a task) and takes the
 * others over; a restore by a criu that cannot make exact IDs takes them all
 * over at init (take_over_auto_images).  criu-mode takeover always takes
 * them over; native (PTIMER_CRIU_MODE=native) always leaves them to criu and
 * at restore verifies what criu made.
 *
 * Its errors and warnings carry criu's own tags, "Error (FILE:LINE): " and
 * "Warn  (FILE:LINE): " (criu's pr_err/pr_warn), so that what greps criu's
 * log for them (zdtm, runtimes, people) finds them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <criu/criu-plugin.h>

#include "core/dump.h"
#include "core/log.h"
#include "core/pending.h"
#include "core/proc_timers.h"
#include "core/restore.h"
#include "core/rseq.h"
#include "core/task.h"
#include "plugin/conf.h"
#include "plugin/criu_core.h"
#include "restorer/abi.h"
#include "restorer/host/inject.h"

#define PLUGIN_NAME "ptimer"

/* Exported by the criu binary (criu/log.c, criu/image.c). */
extern void print_on_level(unsigned int loglevel, const char *format, ...)
	__attribute__((format(printf, 2, 3)));
extern int add_inventory_plugin(const char *name) __attribute__((weak));
extern bool check_and_remove_inventory_plugin(const char *name, size_t n) __attribute__((weak));

/* criu/include/log.h levels */
enum { CRIU_LOG_ERROR = 1, CRIU_LOG_WARN = 2, CRIU_LOG_INFO = 3, CRIU_LOG_DEBUG = 4 };

static struct ptimer_plugin_conf conf = { .criu_mode = PTIMER_CRIU_AUTO };
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

/*
 * Does the criu running us restore exact timer IDs by itself, on this
 * kernel?  criu 4.2 switches PR_TIMER_CREATE_RESTORE_IDS on in its restorer
 * (criu/pie/restorer.c create_posix_timers(), when criu/kerndat.c found the
 * prctl); criu 4.1 and older, or any criu on a kernel before 6.15 (no prctl
 * 77: kernel commit ec2d0c04624b), make each ID by the create/delete loop,
 * slow for sparse IDs and failing when the counter has passed one.
 * The version is what `criu --version` prints ("Version: 4.2.1"): the
 * binary we run in (/proc/self/exe) is asked once, from the plugin's init,
 * before criu installs a SIGCHLD handler (criu/cr-restore.c
 * restore_root_task()).  -1 until asked; why says what decided it.
 */
static int criu_exact = -1;
static char criu_exact_why[160];

static int criu_version(int *major, int *minor)
{
	char exe[4096], out[256];
	char *argv[] = { (char *)"criu", (char *)"--version", NULL };
	posix_spawn_file_actions_t fa;
	size_t len = 0;
	ssize_t r, n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int p[2], status = 0, ret = -1;
	pid_t pid;
	const char *v;

	if (n <= 0 || pipe2(p, O_CLOEXEC))
		return -1;
	exe[n] = '\0';
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	r = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (r) {
		close(p[0]);
		return -1;
	}
	while (len < sizeof(out) - 1 && (r = read(p[0], out + len, sizeof(out) - 1 - len)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		len += (size_t)r;
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out[len] = '\0';
	v = strstr(out, "Version: ");
	if (v && sscanf(v, "Version: %d.%d", major, minor) == 2)
		ret = 0;
	return ret;
}

static bool can_criu_restore_exact(void)
{
	int major = 0, minor = 0;
	bool prctl_ok;

	if (criu_exact >= 0)
		return criu_exact;
	prctl_ok = prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) >= 0;
	if (criu_version(&major, &minor)) {
		criu_exact = 0;
		snprintf(criu_exact_why, sizeof(criu_exact_why), "criu's version is unknown ('criu --version' "
			 "did not answer)");
	} else if (major < 4 || (major == 4 && minor < 2)) {
		criu_exact = 0;
		snprintf(criu_exact_why, sizeof(criu_exact_why), "criu %d.%d makes timer IDs by its create/delete "
			 "loop (exact IDs from criu 4.2)", major, minor);
	} else if (!prctl_ok) {
		criu_exact = 0;
		snprintf(criu_exact_why, sizeof(criu_exact_why), "this kernel has no exact-ID timer_create "
			 "(PR_TIMER_CREATE_RESTORE_IDS, Linux 6.15)");
	} else {
		criu_exact = 1;
		snprintf(criu_exact_why, sizeof(criu_exact_why), "criu %d.%d on a kernel with "
			 "PR_TIMER_CREATE_RESTORE_IDS restores exact timer IDs itself", major, minor);
	}
	return criu_exact;
}

static const char *criu_mode_name(enum ptimer_criu_mode m)
{
	return m == PTIMER_CRIU_NATIVE ? "native" : m == PTIMER_CRIU_AUTO ? "auto" : "takeover";
}

static void take_over_auto_images(void);

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
	/* Our inventory mark: we are here, so the restore may go on. */
	if (stage == CR_PLUGIN_STAGE__RESTORE && check_and_remove_inventory_plugin)
		check_and_remove_inventory_plugin(PLUGIN_NAME, strlen(PLUGIN_NAME));
	if (stage == CR_PLUGIN_STAGE__DUMP && conf.criu_mode == PTIMER_CRIU_AUTO && !conf.strict) {
		can_criu_restore_exact();
		ptimer_log(PTIMER_LOG_INFO, "criu-mode auto: %s: %s", criu_exact_why,
			   criu_exact ? "criu keeps the timers it saved right, ptimer takes over the rest"
				      : "ptimer takes every task's timers over");
	}
	if (stage == CR_PLUGIN_STAGE__RESTORE)
		take_over_auto_images();
	return 0;
}

/*
 * Restore init: images written in auto mode left the timers in criu's core
 * images for a criu that makes exact IDs itself.  When this criu, on this
 * kernel, does not, take each such task's timers over before criu reads its
 * core image (criu/cr-restore.c reads them after the plugins' init): the
 * ptimers image is rewritten as takeover first, then the timers leave the
 * core image, so that a crash between the two leaves the restore failing
 * ("already has timer IDs") rather than timers lost.  criu-mode takeover
 * in the restore's settings asks for the same whatever criu can do.  Nothing
 * is read when criu can do it: the fast path costs one `criu --version`.
 */
static void take_over_auto_images(void)
{
	struct ptimer_err err;
	char dir[64], path[4096];
	const char *why = criu_exact_why;
	struct dirent *de;
	unsigned int n = 0;
	DIR *d;

	if (can_criu_restore_exact()) {
		if (conf.criu_mode != PTIMER_CRIU_TAKEOVER)
			return;
		why = "criu-mode takeover in the restore's settings";
	}
	image_dir(dir, sizeof(dir));
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct ptimer_image img;
		uint32_t removed = 0;
		int vpid, end = 0;

		if (sscanf(de->d_name, "ptimers-%d.img%n", &vpid, &end) != 1 || de->d_name[end])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (ptimer_image_read(path, &img, &err))
			continue;	/* RESUME_DEVICES_LATE reports it */
		if (img.criu_mode != PTIMER_CRIU_AUTO) {
			ptimer_image_free(&img);
			continue;
		}
		img.criu_mode = PTIMER_CRIU_TAKEOVER;
		if (ptimer_image_write_flags(path, &img, PTIMER_IMG_NOSYNC, &err) ||
		    ptimer_criu_core_strip_timers(dir, vpid, &removed, &err))
			ptimer_log(PTIMER_LOG_WARN, "task vpid %d: %s: %s; criu restores its timers as it would "
				   "without ptimer", vpid, why, err.msg);
		else
			n++;
		ptimer_image_free(&img);
	}
	closedir(d);
	if (n)
		ptimer_log(PTIMER_LOG_INFO, "%s: ptimer restores the timers of %u task%s itself (images "
			   "written in criu-mode auto, now takeover)", why, n, n > 1 ? "s" : "");
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

/* A thread whose slice extension restore must enable again
 * (ptimer_slice_targets). */
static bool slice_to_restore(const struct ptimer_image *img)
{
	for (uint32_t i = 0; i < img->n_threads; i++)
		if (img->threads[i].slice_ext == PTIMER_SLICE_EXT_ENABLED)
			return true;
	return false;
}

/* Anything for restore to do: timers, or a slice extension. */
/* Timers on a thread's own CPU clock whose thread the dump found out. */
static bool clock_timers(const struct ptimer_image *img)
{
	for (uint32_t i = 0; i < img->n_timers; i++)
		if (ptimer_thread_clock(img->timers[i].clock_id) && img->timers[i].clock_tid)
			return true;
	return false;
}

static bool worth_an_image(const struct ptimer_image *img)
{
	return img->n_timers || slice_to_restore(img);
}

static int write_image(struct ptimer_image *img, enum ptimer_criu_mode mode, struct ptimer_err *err)
{
	char dir[64], path[4096];

	img->criu_mode = mode;
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
			/* strict reads the timers itself: ptimer restores them */
			ret = write_image(&d->img, conf.criu_mode == PTIMER_CRIU_NATIVE ? PTIMER_CRIU_NATIVE :
					  PTIMER_CRIU_TAKEOVER, &err);
			d->written = !ret;
		}
	} else {
		ret = ptimer_dump_threads(&d->t, NULL, &d->img, &err);
		d->img.pid = d->t.vpid;
	}
	if (ret)
		goto fail;
	if (conf.criu_mode != PTIMER_CRIU_NATIVE && !in_inventory) {
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
/*
 * Did criu save the timers so that it restores them right by itself?  Not
 * when a timer aims at a thread criu did not write as one of the task's
 * (criu 4.1/4.2 write -1 for a pid-namespace leader: see
 * ptimer_dump_task_given), or counts the CPU time of one thread (its tid
 * is in clock_id, and criu does not map it to the restored tid).
 */
static bool criu_saved_right(const struct ptimer_task *t, const struct ptimer_timer *timers, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if ((timers[i].sigev_notify & PTIMER_SIGEV_THREAD_ID) &&
		    (timers[i].notify_tid <= 0 || !ptimer_task_host_tid(t, timers[i].notify_tid)))
			return false;
		if (timers[i].clock_id < 0 && ~(timers[i].clock_id >> 3))
			return false;
	}
	return true;
}

static int finish_task(struct dumped_task *d, const char *dir, struct ptimer_err *err)
{
	struct ptimer_dump_opts o = { 0 };
	struct ptimer_criu_core *c = NULL;
	/* strict read the timers itself at CHECKPOINT_DEVICES: ptimer's */
	enum ptimer_criu_mode mode = conf.strict && conf.criu_mode == PTIMER_CRIU_AUTO ? PTIMER_CRIU_TAKEOVER :
				     conf.criu_mode;
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
	if (!ret && mode == PTIMER_CRIU_AUTO && !(criu_exact > 0 && criu_saved_right(&d->t, timers, n)))
		mode = PTIMER_CRIU_TAKEOVER;
	if (!ret)
		ret = ptimer_dump_task_given(&d->t, &o, timers, n, &d->img, err);
	if (ret || !worth_an_image(&d->img))
		goto out;
	ret = write_image(&d->img, mode, err);
	if (ret)
		goto out;
	ptimer_log(PTIMER_LOG_INFO, "task %d (vpid %d): %u POSIX timers saved to ptimers-%d.img (%s)",
		   d->t.pid, d->t.vpid, n, d->t.vpid,
		   mode == PTIMER_CRIU_NATIVE ? "criu restores them, ptimer verifies" :
		   mode == PTIMER_CRIU_AUTO ? "criu-mode auto: criu restores them where it makes exact IDs itself, "
					      "else ptimer" : "ptimer restores them");
strip:
	if (mode == PTIMER_CRIU_TAKEOVER && ptimer_criu_core_n_timers(c)) {
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
	if (img.criu_mode == PTIMER_CRIU_AUTO) {
		/*
		 * Still auto at this point: take_over_auto_images() found that
		 * this criu makes exact IDs itself, and it has made them (it
		 * checks each ID it gets: criu/pie/restorer.c).  Only the rseq
		 * slice extension is ptimer's to restore.
		 */
		ret = 0;
		if (slice_to_restore(&img) || ptimer_image_pending(&img) || clock_timers(&img)) {
			ret = ptimer_task_adopt(&t, pid, &err);
			if (!ret) {
				ret = ptimer_restore_slice_task(&t, &img, &o, &err);
				if (!ret)
					ret = ptimer_rebind_clock_timers(&t, &img, &o, &err);
				if (!ret)
					ret = ptimer_criu_pending(&t, &img, &err);
				ptimer_task_release(&t);
			}
		}
		if (!ret)
			ptimer_log(PTIMER_LOG_DEBUG, "task %d (vpid %d): criu restored its %u POSIX timers "
				   "(criu-mode auto)", pid, vpid, img.n_timers);
		ptimer_image_free(&img);
		if (!ret)
			return 0;
		goto fail;
	}
	ret = ptimer_task_adopt(&t, pid, &err);
	if (!ret) {
		if (img.criu_mode == PTIMER_CRIU_NATIVE) {
			ret = ptimer_verify_task(&t, &img, &o, &err);
			if (!ret)
				ret = ptimer_restore_slice_task(&t, &img, &o, &err);
			if (!ret)
				ret = ptimer_rebind_clock_timers(&t, &img, &o, &err);
			if (!ret)
				ret = ptimer_criu_pending(&t, &img, &err);
			if (!ret)
				ptimer_log(PTIMER_LOG_INFO, "task %d (vpid %d): the %u timers criu restored match "
					   "the image", pid, vpid, img.n_timers);
		} else {
			ret = ptimer_restore_task(&t, &img, &o, &st, &err);
			if (!ret)
				ret = ptimer_criu_pending(&t, &img, &err);
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
