/* SPDX-License-Identifier: MIT */
/*
 * ptimer_plugin.so's parts, one file each, and what they share:
 *
 *   hooks.c    criu's calls: the hook table, the settings, the log, the
 *              plugin's own time per phase
 *   ahead.c    the plugins criu loaded before ptimer, which can keep it
 *              from a hook
 *   criu_self.c  what the criu running the plugin can do
 *   dump.c     CHECKPOINT_DEVICES: what criu does not save, into
 *              ptimers-<vpid>.img
 *   plan.c     init(RESTORE): who restores each task's timers, and how,
 *              decided once into the restore plan (struct planned)
 *   overlay.c  the directory criu reads where ptimer takes timers out of
 *              criu's core images
 *   pdeath.c   the tasks the plan holds with the parent-death signal, so
 *              that they die with a killed criu
 *   resume.c   RESUME_DEVICES_LATE: the plan carried out in each task
 *
 * Nothing here is seen by criu: the .so exports CR_PLUGIN_DESC and what
 * libptimer.a gives (the names below are hidden, so that no symbol of the
 * criu executable can stand in for them).
 */
#ifndef PTIMER_PLUGIN_PLUGIN_H
#define PTIMER_PLUGIN_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/task.h"
#include "images/image.h"
#include "lib/err.h"
#include "plugin/conf.h"

#pragma GCC visibility push(hidden)

#define PLUGIN_NAME "ptimer"

/* The settings of this run (hooks.c: read at init). */
extern struct ptimer_plugin_conf conf;

/* criu-mode's name as the settings file spells it. */
const char *criu_mode_name(enum ptimer_criu_mode m);

/*
 * image_dir - the image directory criu was given (-D), as a path into
 * buf[len] that reaches it through criu's own descriptor:
 * /proc/self/fd/N of a duplicate the plugin holds for the stage.  The
 * plugin's messages show the directory's name in its place (hooks.c).
 */
void image_dir(char *buf, size_t len);

/* --- criu_self.c --------------------------------------------------------- */

/*
 * can_criu_restore_exact - does the criu running us make exact timer IDs
 * itself on this kernel (criu 4.2+, feature timer_cr_ids, and the prctl)?
 * Asked once; criu_exact_why then says what decided it, in a phrase.
 */
bool can_criu_restore_exact(void);
extern char criu_exact_why[160];

/* --- ahead.c ------------------------------------------------------------- */

/* The names of the plugins ahead of ptimer for the hook find_ahead last
 * looked at ("" when none), and how many tasks our hook was called for. */
extern char ahead[256];
extern unsigned int n_seen;

/* The plugins loaded before ptimer with a handler for hook
 * (CR_PLUGIN_HOOK__*), into ahead. */
void find_ahead(int hook);

/* What a plugin ahead kept from ptimer, said at exit (stage: criu's). */
void report_ahead(int stage, int ret);

/* --- dump.c -------------------------------------------------------------- */

/* The CHECKPOINT_DEVICES hook: -ENOTSUP when done, else the dump fails. */
int plugin_checkpoint(int pid);

/* exit(DUMP): the leader's timers aimed at the process meanwhile aimed at
 * the leader again (struct reaimed in dump.c). */
void aim_back_all(void);

/*
 * leader_timers - img's timers aimed at t's pid-namespace leader
 * (SIGEV_THREAD_ID, notify_tid the leader's vpid, t in a pid namespace of
 * its own), with the timing they have in t now, into *out (malloc'd; NULL
 * when none).  Returns how many, or -errno (err set).
 */
int leader_timers(struct ptimer_task *t, const struct ptimer_image *img, struct ptimer_timer **out,
		  struct ptimer_err *err);

/* --- plan.c -------------------------------------------------------------- */

/*
 * Who makes a task's timers at restore.  criu makes them from its core
 * image (exact IDs itself, or by its create/delete loop where that is
 * cheap); ptimer makes them where criu would not get them right or fast,
 * criu then reading a core image without them (overlay.c).
 */
enum maker {
	MAKER_CRIU,
	MAKER_PTIMER,
};

/*
 * A task's restore, decided at init (plan_restore) and only read after:
 * who makes its timers, whether ptimer checks what criu made, and
 * whether RESUME_DEVICES_LATE has anything of ptimer's in it (a check,
 * a completion of what criu made, rseq slice state, ptimer's own restore).
 * img: its image, whole where any of that needs the timers, with the
 * timing from criu's core image where ptimer makes them.
 */
struct planned {
	pid_t vpid;
	enum maker maker;
	bool verify;		/* check criu's timers against the image */
	bool work;		/* RESUME_DEVICES_LATE has work for ptimer */
	bool pdeath;		/* criu restores it with pdeath_sig SIGKILL, which
				   RESUME_DEVICES_LATE puts back to pdeath_orig:
				   a task ptimer makes the timers of, and its
				   ancestors, die with a killed criu (plan.c) */
	uint32_t pdeath_orig;
	uint32_t n_timers;	/* in the image */
	struct ptimer_image img;
	char *raw;		/* the image file as read for its head, kept
				   for plan_task when small; NULL: read again */
	size_t raw_len;
	/* what the run did with it (resume.c), not the plan */
	struct {
		bool seen;	/* RESUME_DEVICES_LATE came for it */
		pid_t held;	/* its host pid while it dies with criu */
	} run;
};

/* The plan of this restore: its tasks, sorted by vpid. */
extern struct planned *plan;
extern size_t n_plan, n_work;	/* tasks planned, those with work for ptimer */

/*
 * plan_restore - init(RESTORE): every ptimers image of the directory read
 * and each task's restore decided, before criu reads any core image.
 * Returns 0, or -1 with an error line (nothing left behind).
 */
int plan_restore(void);

/* The task of vpid in the plan, NULL when it has no image. */
struct planned *planned_of(pid_t vpid);

/* The plan sorted by vpid again (for planned_of) after tasks were added. */
void sort_plan(void);

/* The plan freed (exit, a failed init). */
void free_plan(void);

/* A thread whose slice extension restore must enable again. */
bool slice_to_restore(const struct ptimer_image *img);

/* --- overlay.c ----------------------------------------------------------- */

/* The overlay's name: this and six random letters. */
#define OVERLAY_PREFIX ".ptimer-restore-"

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
int overlay_make(const char *dir, char *path, size_t len, struct ptimer_err *err);

/* The overlay in the place of criu's image directory fd (end of init).
 * Returns 0 or -errno (err set). */
int overlay_switch(struct ptimer_err *err);

/*
 * overlay_release - criu's directory back in its place once criu has read
 * every image (the first RESUME_DEVICES_LATE: criu/cr-restore.c calls it
 * after the restore is complete, reads no image after, and writes
 * stats-restore); the overlay is removed by overlay_done.
 */
void overlay_release(void);

/* criu's directory back, the overlay removed (exit, a failed init). */
void overlay_done(void);

/*
 * clean_leftover - one entry of dir (listing d) that a restore which did
 * not finish left: a stale overlay is removed.  Returns 0, or -EINVAL
 * (err set) for what the plugin no longer restores from (a core image
 * ptimer 0.1 stripped in place).
 */
int clean_leftover(const char *dir, int dfd, const char *name, struct ptimer_err *err);

/* --- pdeath.c ----------------------------------------------------------- */

struct ptimer_criu_task;

/*
 * hold_by_pdeath - every task of the plan whose timers ptimer makes, and
 * each of its ancestors in tree[n_tree] (criu's pstree.img), restored
 * with pdeath_sig SIGKILL: their core images rewritten into the overlay of
 * dir.  Returns 0 or -errno (err set).
 */
int hold_by_pdeath(const char *dir, const struct ptimer_criu_task *tree, uint32_t n_tree,
		   struct ptimer_err *err);

/* --- resume.c ------------------------------------------------------------ */

/* The RESUME_DEVICES_LATE hook: -ENOTSUP when done, else the task is
 * killed and the restore fails. */
int plugin_resume_late(int pid);

/* A new restore: no task held yet. */
void resume_reset(void);

#pragma GCC visibility pop

#endif
