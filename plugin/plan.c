// SPDX-License-Identifier: MIT
/*
 * The restore plan: at init(RESTORE), before criu reads any core image
 * (criu/cr-restore.c cr_restore_tasks()), every ptimers image of the
 * directory is read and each task's restore decided once (plan_task),
 * from the image, the restoring criu and kernel, the settings and the
 * plugins ahead of ptimer.  The hooks after it only read the plan.
 *
 * criu-mode auto (the default) leaves to criu the timers it saved right
 * when the restoring criu is 4.2+ on a kernel with the exact-ID prctl (its
 * restorer then makes exact IDs itself, at no cost a task), or when
 * criu's create/delete loop reaches the task's IDs cheaply, and takes the
 * others over.  criu-mode takeover always takes them over; native
 * (PTIMER_CRIU_MODE=native) always leaves them to criu and checks what
 * criu made.  Where ptimer makes the timers, criu reads a core image
 * without them from the overlay (overlay.c): criu's images are never
 * changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#include <criu/criu-plugin.h>
/* weak: the plugin is also loaded without criu (test/unit/test_plugin_hooks.c) */
#pragma weak criu_get_image_dir

#include "core/dump.h"
#include "core/fault.h"
#include "core/log.h"
#include "core/pending.h"
#include "core/util.h"
#include "plugin/criu_core.h"
#include "plugin/plugin.h"
#include "restorer/abi.h"

struct planned *plan;
size_t n_plan, n_work;

/*
 * What this restore's criu and kernel can do, and criu's view of the
 * tree: the same for every task, learnt once at init.
 */
struct restore_env {
	const char *dir;	/* criu's image directory, through its fd (image_dir) */
	bool exact;		/* criu makes exact IDs itself (can_criu_restore_exact) */
	bool prctl;		/* this kernel has the exact-ID prctl */
	bool takeover;		/* criu-mode takeover in the restore's settings */
	struct ptimer_criu_task *tree;	/* criu's pstree.img, NULL: not read */
	uint32_t n_tree;
};

/* A thread whose slice extension restore must enable again
 * (ptimer_slice_targets). */
bool slice_to_restore(const struct ptimer_image *img)
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


/*
 * What ptimer adds after criu made a task's timers (a pending expiry
 * queued again, a timer on another thread's CPU clock moved to it, a
 * pid-namespace leader's timer aimed back at the leader): from the
 * image's counts while only its head is read, else from its timers
 * (fill_state may have dropped a stale pending mark).
 */
static bool completions(const struct ptimer_image *img)
{
	if (!img->timers)
		return img->n_pending || img->n_clock_tid || img->n_leader_aimed;
	return ptimer_image_pending(img) || clock_timers(img) || img->n_leader_aimed;
}

/* the head's file bytes, for the whole image (64 KiB: a few hundred timers) */
#define PLAN_RAW_KEEP	(64u * 1024u)

static void drop_raw(struct planned *p)
{
	free(p->raw);
	p->raw = NULL;
	p->raw_len = 0;
}

void free_plan(void)
{
	for (size_t i = 0; i < n_plan; i++) {
		ptimer_image_free(&plan[i].img);
		drop_raw(&plan[i]);
	}
	free(plan);
	plan = NULL;
	n_plan = n_work = 0;
}

static int cmp_vpid(const void *a, const void *b)
{
	const struct planned *x = a, *y = b;

	return (x->vpid > y->vpid) - (x->vpid < y->vpid);
}

void sort_plan(void)
{
	qsort(plan, n_plan, sizeof(*plan), cmp_vpid);
}

struct planned *planned_of(pid_t vpid)
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
 * The timing of img's timers from criu's, ct[nc] sorted by ID (the same
 * timers, the plugin saved its image while criu held the task stopped,
 * before criu saved it).  A timer whose clock the image changed (the CPU
 * clock of a thread gone: CLOCK_MONOTONIC, disarmed) keeps none.  Then
 * the pending marks are checked against it (ptimer_pending_drop_stale).
 */
static int fill_state(struct ptimer_image *img, const struct ptimer_timer *ct, uint32_t nc, pid_t vpid,
		      struct ptimer_err *err)
{
	int ret = 0;

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
	return ret;
}

/*
 * The timers of an image that lists none (img->timers_in_core: the dump
 * found them all criu's, ptimer_timers_all_criu): criu's ct[nc] from its
 * core image, sorted by ID, taken whole (img owns ct after), as ptimer's
 * dump gives them: a notification that is no SIGEV_THREAD_ID one names
 * the process (vpid).  The image must not be read again from file after:
 * ptimer_image_free frees them.
 */
static void take_core_timers(struct ptimer_image *img, struct ptimer_timer *ct, uint32_t nc, pid_t vpid)
{
	for (uint32_t i = 0; i < nc; i++)
		if (!(ct[i].sigev_notify & PTIMER_SIGEV_THREAD_ID))
			ct[i].notify_tid = vpid;
	img->timers = ct;
	img->n_timers = nc;
}

/*
 * criu without exact IDs (4.1, or any criu on a kernel before 6.15) makes
 * a task's timers in ascending ID order, each by timer_create until the
 * kernel's per-process counter, 0 in the new process, gives its ID,
 * deleting the others (criu/pie/restorer.c create_posix_timers()): right
 * for any set, and as fast as ptimer's own linear mode, but one
 * create/delete pair per ID skipped.  ptimer's restore of a task costs
 * about as much as 256 such pairs, so up to that many criu is left to do
 * it: on a 2-CPU VM, criu 4.1.1 at -v4, one process with 7 timers, IDs
 * from P, leaving it to criu / ptimer taking over measured by hand 0.998
 * at P = 300 and 1.05 at 700 (~3.4 us a pair there; a pair's cost as in
 * test/bench.sh (d), a task's taken over as in (h), takeover).
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
	const struct ptimer_timer *tm = img->timers;
	uint32_t n = img->n_timers;
	int64_t max = -1;
	int ret = 0;

	if (img->timers_in_core)	/* IDs only: no decode of every timer */
		ret = ptimer_criu_core_id_span(dir, p->vpid, &n, &max, err);
	else
		for (uint32_t i = 0; i < n; i++)
			if (tm[i].timer_id > max)
				max = tm[i].timer_id;
	*pairs = ret ? 0 : (uint64_t)(max + 1) - n;
	return ret;
}

/*
 * Does criu, making IDs by its loop, restore this task as ptimer would?
 * When the set is cheap for the loop (CRIU_LOOP_PAIRS_MAX, *pairs) and what
 * criu does not make (completions) ptimer can complete after it, as it
 * does after criu 4.2: those completions need the exact-ID prctl here.
 * The image is read whole.  why: the reason when not.
 */
static bool criu_loop_cheap(const struct planned *p, const struct restore_env *env, uint64_t *pairs, char *why,
			    size_t len)
{
	struct ptimer_err err;

	*pairs = 0;
	if (!env->prctl && completions(&p->img)) {
		snprintf(why, len, "completing what criu makes (a pending expiry, a thread CPU clock, a pid-namespace "
			 "leader's timer) needs the exact-ID prctl, which this kernel lacks");
		return false;
	}
	if (criu_loop_pairs(p, env->dir, pairs, &err)) {
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
 * one run of a program to the next: ASLR).  No pstree.img (env->tree
 * NULL): nothing to check against.  Returns 0 or -EINVAL (err set).
 */
static int check_of_checkpoint(const struct restore_env *env, const struct planned *p, struct ptimer_err *err)
{
	const struct ptimer_criu_task *task = ptimer_criu_pstree_task(env->tree, env->n_tree, p->vpid);
	const char *dir = env->dir;
	const struct ptimer_image *img = &p->img;
	bool rseq_checked = false;

	if (!env->tree || !task)
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


static unsigned int n_loop_left, n_loop_taken;	/* criu_loop_cheap's answers, for the log */

/*
 * Who makes the timers of an image read whole, and whether ptimer checks
 * what criu made:
 *   native image                     criu, checked
 *   auto image, criu makes exact IDs criu
 *   auto image, criu's loop cheap    criu (criu_loop_cheap)
 *   anything else                    ptimer
 * and a plugin ahead of ptimer, which may keep RESUME_DEVICES_LATE from
 * it, turns ptimer into criu, checked where ptimer is called.
 */
static void decide_maker(struct planned *p, const struct restore_env *env)
{
	const struct ptimer_image *img = &p->img;
	bool auto_ = img->criu_mode == PTIMER_CRIU_AUTO && !env->takeover;
	uint64_t pairs = 0;
	char why[640] = "";

	p->verify = img->criu_mode == PTIMER_CRIU_NATIVE;
	if (p->verify || (auto_ && env->exact))
		p->maker = MAKER_CRIU;
	else if (auto_ && criu_loop_cheap(p, env, &pairs, why, sizeof(why)))
		p->maker = MAKER_CRIU;
	else
		p->maker = MAKER_PTIMER;
	if (auto_ && !env->exact) {
		if (p->maker == MAKER_CRIU) {
			n_loop_left++;
			ptimer_log(PTIMER_LOG_DEBUG, "task vpid %d: criu's create/delete loop makes its timer IDs in "
				   "%llu pairs (at most %d): left to criu", p->vpid, (unsigned long long)pairs,
				   CRIU_LOOP_PAIRS_MAX);
		} else {
			n_loop_taken++;
			ptimer_log(PTIMER_LOG_DEBUG, "task vpid %d: ptimer restores its timers: %s", p->vpid, why);
		}
	}
	if (p->maker == MAKER_PTIMER && ahead[0]) {
		p->maker = MAKER_CRIU;
		p->verify = true;
	}
}

/*
 * What the maker needs of criu's core image: the timers' timing where
 * ptimer makes, checks or completes them; the timers themselves where the
 * image lists none (timers_in_core) and ptimer makes or checks them; and,
 * where ptimer makes them, the core image without them in the overlay.  A
 * directory the overlay cannot be made in (read-only) leaves them to
 * criu, checked.
 */
static int take_from_core(struct planned *p, const struct restore_env *env, struct ptimer_err *err)
{
	struct ptimer_image *img = &p->img;
	struct ptimer_criu_core *c = NULL;
	bool own = p->maker == MAKER_PTIMER || p->verify;
	bool need_state = img->n_timers && (own || ptimer_image_pending(img) || clock_timers(img));
	bool take = img->timers_in_core && own, own_ct = true;
	struct ptimer_timer *ct = NULL;	/* criu's timers, sorted by ID */
	uint32_t nc = 0;
	int ret;

	if (!need_state && !take && p->maker != MAKER_PTIMER)
		return 0;
	ret = ptimer_criu_core_open(env->dir, p->vpid, &c, err);
	if (!ret && (take || need_state))
		ret = core_timers_by_id(c, &ct, &nc, err);
	if (!ret && take) {
		take_core_timers(img, ct, nc, p->vpid);
		own_ct = false;
	}
	if (!ret && need_state)
		ret = fill_state(img, ct, nc, p->vpid, err);
	if (own_ct)
		free(ct);
	if (!ret && p->maker == MAKER_PTIMER && ptimer_criu_core_n_timers(c)) {
		char ov[4200], dest[4300];

		/* criu reads the core image without the timers from the overlay,
		 * and restores the task to die with it (hold_by_pdeath) */
		ret = overlay_make(env->dir, ov, sizeof(ov), err);
		snprintf(dest, sizeof(dest), "%s/core-%d.img", ov, p->vpid);
		if (!ret)
			ret = ptimer_criu_core_pdeath(c, SIGKILL, &p->pdeath_orig, err);
		if (!ret)
			ret = ptimer_criu_core_strip(c, dest, err);
		p->pdeath = !ret;
		if (ret) {
			/* a read-only directory: criu makes them, as it saved them */
			ptimer_log(PTIMER_LOG_WARN, "task vpid %d: %s; criu restores its timers as it saved them "
				   "and ptimer checks them", p->vpid, err->msg);
			p->maker = MAKER_CRIU;
			p->verify = true;
			ret = 0;
		}
	}
	ptimer_criu_core_close(c);
	return ret;
}

/*
 * plan_task - the one decision for a task, whose image's head is read:
 * who makes its timers (decide_maker), what that takes from criu's core
 * image (take_from_core), and whether RESUME_DEVICES_LATE has work in it.
 * Where criu makes exact IDs itself and nothing of ptimer's follows but
 * rseq slice state, the head is all the restore reads.  Images in a
 * format no release of the plugin writes are refused with one line.
 * Returns 0 or -errno (err set).
 */
static int plan_task(struct planned *p, const struct restore_env *env, struct ptimer_err *err)
{
	struct ptimer_image *img = &p->img;
	char path[4400];
	int ret;

	if (img->criu_mode == PTIMER_IMG_STANDALONE)
		return ptimer_errf(err, EINVAL, "%s/ptimers-%d.img was written by `ptimer dump`, not by the CRIU "
				   "plugin: restore it with `ptimer restore`, or remove it to restore as criu alone "
				   "would", env->dir, p->vpid);
	if (!img->state_in_core && p->n_timers)
		return ptimer_errf(err, EINVAL, "%s/ptimers-%d.img keeps task %d's timer timing itself, a format "
				   "of a development ptimer that no release restores: dump again", env->dir, p->vpid,
				   p->vpid);
	if (img->criu_mode == PTIMER_CRIU_AUTO && !env->takeover && env->exact && img->counts_known &&
	    !completions(img)) {
		p->maker = MAKER_CRIU;
		p->work = slice_to_restore(img);
		if (p->work)	/* its threads' slice state (in the head) */
			return check_of_checkpoint(env, p, err);
		/* criu makes them with exact IDs and checks each ID it gets
		 * (criu/pie/restorer.c): nothing after it is ptimer's */
		ptimer_log(PTIMER_LOG_DEBUG, "task vpid %d: criu restores its %u POSIX timers (criu-mode auto); "
			   "nothing of ptimer's after it, so its image is read no further than its head",
			   p->vpid, p->n_timers);
		return 0;
	}
	ptimer_image_free(img);
	snprintf(path, sizeof(path), "%s/ptimers-%d.img", env->dir, p->vpid);
	/* the file as list_images read it, where it kept it */
	ret = p->raw ? ptimer_image_parse(path, p->raw, p->raw_len, img, NULL, err) : ptimer_image_read(path, img, err);
	if (!ret)
		ret = check_of_checkpoint(env, p, err);
	if (ret)
		return ret;
	decide_maker(p, env);
	ret = take_from_core(p, env, err);
	if (ret)
		return ret;
	p->work = p->maker == MAKER_PTIMER || p->verify || completions(img) || slice_to_restore(img);
	if (!p->work && img->timers_in_core)
		ptimer_log(PTIMER_LOG_DEBUG, "task vpid %d: criu restores its POSIX timers, all of them from its core "
			   "image (criu-mode auto); nothing of ptimer's after it", p->vpid);
	else if (!p->work)
		ptimer_log(PTIMER_LOG_DEBUG, "task vpid %d: criu restores its %u POSIX timers (criu-mode auto); "
			   "nothing of ptimer's after it", p->vpid, p->n_timers);
	return 0;
}

/*
 * The ptimers images in criu's image directory (through criu's own fd: the
 * directory criu reads), each one's head into the plan, sorted by vpid;
 * what restores that did not finish left there cleaned on the way
 * (clean_leftover).  *auto_seen, *n_native: images of those modes.
 * Returns 0 or -errno (err set).
 */
struct list_ctx {
	const char *dir;
	int *auto_seen, *n_native;
	size_t cap, n_entries;
	struct ptimer_err *err;
	int ret;		/* a failure of list_one: -errno, err set */
};

static int list_entry(int fd, const char *name, struct list_ctx *l);

/* One entry of the image directory (list_images, by dir_each): 0, or 1
 * to stop with l->ret set. */
static int list_one(int fd, const char *name, unsigned type, void *arg)
{
	struct list_ctx *l = arg;

	(void)type;
	l->n_entries++;
	l->ret = list_entry(fd, name, l);
	return l->ret ? 1 : 0;
}

static int list_entry(int fd, const char *name, struct list_ctx *l)
{
	char path[4400];
	struct planned *p;
	int vpid, end = 0, ret = 0;

	if (name[0] == '.' || !strncmp(name, "core-", 5))
		ret = clean_leftover(l->dir, fd, name, l->err);
	if (ret || strncmp(name, "ptimers-", 8) || sscanf(name, "ptimers-%d.img%n", &vpid, &end) != 1 || name[end])
		return ret;
	if (n_plan == l->cap) {
		struct planned *v = realloc(plan, (l->cap = l->cap ? 2 * l->cap : 16) * sizeof(*v));

		if (!v)
			return ptimer_errf(l->err, ENOMEM, "out of memory");
		plan = v;
	}
	p = memset(&plan[n_plan], 0, sizeof(*plan));
	p->vpid = vpid;
	snprintf(path, sizeof(path), "%s/%s", l->dir, name);
	/* the head first: it may be all the restore needs */
	ret = ptimer_image_file(path, &p->raw, &p->raw_len, l->err);
	if (!ret)
		ret = ptimer_image_parse(path, p->raw, p->raw_len, &p->img, &p->n_timers, l->err);
	if (ret || p->raw_len > PLAN_RAW_KEEP)
		drop_raw(p);
	if (ret)
		return ret;
	*l->auto_seen |= p->img.criu_mode == PTIMER_CRIU_AUTO;
	*l->n_native += p->img.criu_mode == PTIMER_CRIU_NATIVE;
	n_plan++;
	return 0;
}

/*
 * The ptimers images in criu's image directory (through criu's own fd: the
 * directory criu reads), each one's head into the plan, sorted by vpid;
 * what restores that did not finish left there cleaned on the way
 * (clean_leftover).  *auto_seen, *n_native: images of those modes.
 * Returns 0 or -errno (err set).
 */
static int list_images(const char *dir, int *auto_seen, int *n_native, struct ptimer_err *err)
{
	struct list_ctx l = { dir, auto_seen, n_native, 0, 0, err, 0 };
	int ret = dir_each(criu_get_image_dir(), ".", list_one, &l);

	if (l.ret)
		ret = l.ret;
	else if (ret < 0 && !l.n_entries)
		return 0;	/* not opened: criu fails such a restore itself */
	else if (ret < 0)
		ret = ptimer_errf(err, -ret, "cannot list the image directory %s: %s", dir, strerror(-ret));
	if (n_plan)
		qsort(plan, n_plan, sizeof(*plan), cmp_vpid);
	return ret;
}

/* Images of tasks criu did not save (an earlier dump's, left in the
 * directory) dropped from the plan, with a warning. */
static void drop_foreign(const struct restore_env *env)
{
	size_t k = 0;

	for (size_t i = 0; i < n_plan; i++) {
		if (ptimer_criu_pstree_task(env->tree, env->n_tree, plan[i].vpid)) {
			plan[k++] = plan[i];
			continue;
		}
		ptimer_log(PTIMER_LOG_WARN, "%s/ptimers-%d.img: criu saved no task %d in this checkpoint "
			   "(pstree.img); ignored", env->dir, plan[i].vpid, plan[i].vpid);
		ptimer_image_free(&plan[i].img);
		drop_raw(&plan[i]);
	}
	n_plan = k;
}

int plan_restore(void)
{
	struct restore_env env = { .takeover = conf.criu_mode == PTIMER_CRIU_TAKEOVER };
	struct ptimer_err err;
	char dir[4096];
	int ret, auto_seen = 0, n_native = 0;

	n_loop_left = n_loop_taken = 0;
	image_dir(dir, sizeof(dir));
	env.dir = dir;
	ret = list_images(dir, &auto_seen, &n_native, &err);
	env.exact = (auto_seen || (n_plan && conf.criu_mode == PTIMER_CRIU_AUTO)) && can_criu_restore_exact();
	env.prctl = prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) >= 0;
	/* the mode in force is the dump's, image by image */
	if (!ret && n_native)
		ptimer_log(PTIMER_LOG_INFO, "criu-mode native (the dump's) for %d task%s: criu restores their timers, "
			   "ptimer checks them against their ptimers images (ID, clock, notification, signal, thread; "
			   "the timing is criu's)", n_native, n_native == 1 ? "" : "s");
	if (!ret && auto_seen)
		ptimer_log(PTIMER_LOG_INFO, "criu-mode auto: %s: %s", criu_exact_why,
			   env.exact && !env.takeover ? "criu restores the timers it saved right, ptimer the rest" :
			   env.exact ? "but criu-mode takeover in the restore's settings: ptimer restores every task's "
				       "timers" :
			   env.takeover ? "criu-mode takeover in the restore's settings: ptimer restores every task's "
					  "timers" :
			   "ptimer restores the timers of the tasks whose IDs that loop would reach slowly");
	if (!ret && n_plan && ptimer_criu_pstree_read(dir, &env.tree, &env.n_tree, &err)) {
		/* criu fails such a restore itself */
		ptimer_log(PTIMER_LOG_DEBUG, "%s; the ptimers images are not checked against it", err.msg);
		env.tree = NULL;
		env.n_tree = 0;
	}
	if (!ret && env.tree)
		drop_foreign(&env);
	for (size_t i = 0; !ret && i < n_plan; i++) {
		ret = plan_task(&plan[i], &env, &err);
		drop_raw(&plan[i]);
		n_work += plan[i].work;
	}
	if (!ret)
		ret = hold_by_pdeath(dir, env.tree, env.n_tree, &err);
	ptimer_criu_pstree_free(env.tree, env.n_tree);
	ptimer_criu_core_forget();
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
