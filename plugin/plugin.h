/* SPDX-License-Identifier: MIT */
/*
 * ptimer_plugin.so's parts and the one run context they share.
 *
 *   hooks.c    criu's calls: owns the run context (struct run), the
 *              settings, the log, the plugin's own time
 *   ahead.c    the plugins criu loaded before ptimer
 *   criu_self.c  whether the criu running the plugin makes exact IDs
 *   dump.c     CHECKPOINT_DEVICES and exit(DUMP)
 *   decide.c   who restores a task's timers: the decision table, pure
 *   plan.c     init(RESTORE): each task's decision, and what it needs
 *              prepared before criu reads a core image
 *   overlay.c  the directory criu reads where ptimer restores the timers
 *   resume.c   RESUME_DEVICES_LATE: the plan carried out in the tree
 *   criu_core.c  criu's core and pstree images
 *
 * Calls go down only: hooks.c calls the others, plan.c calls decide.c,
 * overlay.c and criu_core.c; nothing calls back up.  The parts take what
 * they need as arguments; only hooks.c keeps state between hooks.
 *
 * Nothing here is seen by criu: the .so exports CR_PLUGIN_DESC only.
 */
#ifndef PTIMER_PLUGIN_PLUGIN_H
#define PTIMER_PLUGIN_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "images/image.h"
#include "lib/err.h"
#include "plugin/conf.h"
#include "plugin/decide.h"

#pragma GCC visibility push(hidden)

#define PLUGIN_NAME "ptimer"

/* criu-mode's name as the settings file spells it. */
const char *criu_mode_name(enum ptimer_criu_mode m);

/* --- ahead.c ------------------------------------------------------------- */

/*
 * find_ahead - the plugins criu loaded before ptimer that have a handler for
 * hook (CR_PLUGIN_HOOK__*) and are not disabled, as "NAME (PATH), ..." into
 * buf[len] ("" when none).  criu runs each plugin's init as it loads it
 * (criu/plugin.c cr_lib_load()), so at ptimer's init those loaded are the
 * ones ahead of it in every hook's chain.
 */
void find_ahead(int hook, char *buf, size_t len);

/* --- criu_self.c --------------------------------------------------------- */

/*
 * criu_makes_exact_ids - does the criu running us make exact timer IDs
 * itself on this kernel (criu 4.2+, feature timer_cr_ids, and the
 * prctl)?  why[len]: what decided it, in a phrase.
 */
bool criu_makes_exact_ids(char *why, size_t len);

/* --- dump.c -------------------------------------------------------------- */

/* A pid-namespace leader's timers aimed at the process while criu saves
 * them (dump_task), aimed at the leader again by dump_finish. */
struct reaimed {
	pid_t pid;			/* host pid */
	uint32_t n;
	struct ptimer_timer *orig;	/* as the image keeps them */
};

struct dump_run {
	struct reaimed *reaimed;
	size_t n_reaimed;
};

/*
 * dump_task - CHECKPOINT_DEVICES for host pid: ptimers-<vpid>.img in dir
 * (criu's image directory, as a path), what criu cannot save changed in
 * the task first.  Returns 0, or -errno with the error logged.
 */
int dump_task(struct dump_run *d, const struct ptimer_plugin_conf *conf, const char *dir, int pid);

/* exit(DUMP): every timer dump_task aimed at the process aimed at its
 * leader again, whatever criu does with the tasks next; d emptied. */
void dump_finish(struct dump_run *d);

/* --- overlay.c ----------------------------------------------------------- */

/* The overlay's name: this and six random letters. */
#define OVERLAY_PREFIX ".ptimer-restore-"

struct overlay {
	char name[64];		/* in the image directory, "" when none */
	int fd;			/* the overlay, -1 when none */
	int lock;		/* its .lock, locked while this restore runs */
	int criu_dir;		/* criu's image directory while the overlay has its place */
	int mkdir_err;		/* -errno: none can be made in this restore */
	char mkdir_msg[sizeof(((struct ptimer_err *)0)->msg)];
};
#define OVERLAY_INIT { .fd = -1, .lock = -1, .criu_dir = -1 }

/*
 * dir_each - fn(fd, entry, d_type, arg) for each entry of dirfd/name ("."
 * : dirfd itself) but "." and "..", through a description of its own, until
 * fn returns nonzero; fd is the listed directory's.  Returns fn's value, 0
 * at the end, or -errno (the directory cannot be opened or listed).
 */
int dir_each(int dirfd, const char *name, int (*fn)(int fd, const char *name, unsigned type, void *arg),
	     void *arg);

/*
 * overlay_make - the overlay of dir (once a restore): a directory locked
 * for this restore, holding a link of every entry of dir; path[len] its
 * path.  Returns 0 or -errno (err set; nothing left; the same error again
 * for the rest of the restore).
 */
int overlay_make(struct overlay *ov, const char *dir, char *path, size_t len, struct ptimer_err *err);

/* The overlay in the place of criu's image directory fd (end of init).
 * Returns 0 or -errno (err set). */
int overlay_switch(struct overlay *ov, struct ptimer_err *err);

/*
 * overlay_release - criu's directory back in its place once criu has read
 * every image (the first RESUME_DEVICES_LATE: criu/cr-restore.c calls it
 * after the restore is complete, reads no image after, and writes
 * stats-restore); the overlay is removed by overlay_done.
 */
void overlay_release(struct overlay *ov);

/* criu's directory back, the overlay removed (exit, a failed init). */
void overlay_done(struct overlay *ov);

/*
 * clean_leftover - one entry of dir (listing fd dfd) that a restore which
 * did not finish left: an overlay whose restore is over is removed.
 * Returns 0, or -EINVAL (err set) for what the plugin no longer restores
 * from (a core image ptimer 0.1 stripped in place).
 */
int clean_leftover(const char *dir, int dfd, const char *name, struct ptimer_err *err);

/* --- plan.c -------------------------------------------------------------- */

/*
 * A task of the restore, decided at init and only read after.  A task
 * with an image has decide()'s decision; one without is there because
 * it is held (an ancestor or a sibling of a task ptimer makes the timers
 * of, see plan.c).
 */
struct planned {
	pid_t vpid;
	bool has_image;
	bool whole;		/* img holds the timers, not its head only */
	struct decision d;	/* has_image: decide()'s */
	bool held;		/* restored with pdeath_sig SIGKILL, so that it
				   dies with a killed criu until ptimer put
				   pdeath_orig back */
	uint32_t pdeath_orig;
	uint32_t n_timers;	/* in the image's head */
	struct ptimer_image img;
};

struct plan {
	struct planned *task;	/* sorted by vpid */
	size_t n;
	size_t n_work;		/* tasks RESUME_DEVICES_LATE has work in */
	size_t n_ptimer;	/* tasks whose timers ptimer makes */
};

/* What a restore's plan is made from: learnt once at init. */
struct plan_env {
	const char *dir;	/* criu's image directory, through its fd */
	const struct ptimer_plugin_conf *conf;
	const char *ahead;	/* plugins ahead handling RESUME_DEVICES_LATE */
};

/*
 * plan_restore - init(RESTORE): every ptimers image of the directory read,
 * each task decided (decide()), and what the decisions need prepared:
 * criu's core images without timers and with pdeath_sig SIGKILL in the
 * overlay ov, switched in for criu.  Returns 0, or -1 with an error
 * line logged (nothing left behind).
 */
int plan_restore(struct plan *plan, struct overlay *ov, const struct plan_env *env);

/* A thread of img whose rseq slice extension the restore enables again. */
bool image_has_slice(const struct ptimer_image *img);

/* Does RESUME_DEVICES_LATE have anything to do in p? */
bool planned_work(const struct planned *p);

/* The task vpid of plan, NULL when it has nothing planned. */
struct planned *plan_find(const struct plan *plan, pid_t vpid);

void plan_free(struct plan *plan);

/* --- resume.c ------------------------------------------------------------ */

/*
 * resume_tree - the first RESUME_DEVICES_LATE (pid: the task it is
 * for), every task of the tree stopped by criu: the plan carried out in
 * every task at once.  Returns 0, or -errno when a task could not be
 * given what it was dumped with (that task killed, so criu fails the
 * restore; the error logged).
 */
int resume_tree(const struct plan *plan, const struct ptimer_plugin_conf *conf, int pid);

#pragma GCC visibility pop

#endif
