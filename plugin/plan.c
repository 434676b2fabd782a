// SPDX-License-Identifier: MIT
/*
 * The restore plan: at init(RESTORE), before criu reads any core image
 * (criu/cr-restore.c cr_restore_tasks()), every ptimers image of the
 * directory is read, each task decided once (decide.c), and what the
 * decisions need is prepared: the timing of the timers ptimer makes or
 * checks, from criu's core images, and where ptimer makes them, the
 * overlay criu reads instead of the image directory (overlay.c), holding
 * those core images without the timers and with the parent-death signal
 * SIGKILL.  The hooks after it only read the plan.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <criu/criu-plugin.h>
/* weak: the plugin is also loaded without criu (test/unit/test_plugin_hooks.c) */
#pragma weak criu_get_image_dir

#include "core/dump.h"
#include "core/fault.h"
#include "core/log.h"
#include "core/pending.h"
#include "plugin/criu_core.h"
#include "plugin/plugin.h"
#include "restorer/abi.h"

/* What every task's plan is made from, and the plan made. */
struct planning {
	const struct plan_env *env;
	struct plan *plan;
	struct overlay *ov;
	bool exact, prctl;
	char exact_why[160];	/* what decided exact */
	struct ptimer_criu_task *tree;	/* criu's pstree.img, NULL: not read */
	uint32_t n_tree;
	bool tree_read;		/* at the first image: tree, exact */
	size_t cap, n_entries;
	bool failed;		/* list_one failed: err says why */
	unsigned int n_loop_left, n_loop_taken;
	struct ptimer_err *err;
};

static int cmp_vpid(const void *a, const void *b)
{
	const struct planned *x = a, *y = b;

	return (x->vpid > y->vpid) - (x->vpid < y->vpid);
}

struct planned *plan_find(const struct plan *plan, pid_t vpid)
{
	struct planned key = { .vpid = vpid };

	return plan->n ? bsearch(&key, plan->task, plan->n, sizeof(*plan->task), cmp_vpid) : NULL;
}

bool planned_work(const struct planned *p)
{
	return p->held || (p->has_image && (p->d.outcome != DECIDE_CRIU || p->d.todo));
}

void plan_free(struct plan *plan)
{
	for (size_t i = 0; i < plan->n; i++)
		ptimer_image_free(&plan->task[i].img);
	free(plan->task);
	memset(plan, 0, sizeof(*plan));
}

bool image_has_slice(const struct ptimer_image *img)
{
	for (uint32_t i = 0; i < img->n_threads; i++)
		if (img->threads[i].slice_ext == PTIMER_SLICE_EXT_ENABLED)
			return true;
	return false;
}

static struct planned *plan_add(struct planning *c, pid_t vpid)
{
	struct plan *plan = c->plan;

	if (plan->n == c->cap) {
		struct planned *v = realloc(plan->task, (c->cap = c->cap ? 2 * c->cap : 16) * sizeof(*v));

		if (!v)
			return NULL;
		plan->task = v;
	}
	plan->task[plan->n] = (struct planned){ .vpid = vpid };
	return &plan->task[plan->n++];
}

/*
 * The facts decide() needs from p's image: its head, or its timers once
 * read whole.
 */
static void facts(const struct planned *p, struct decide_in *in)
{
	const struct ptimer_image *img = &p->img;

	in->img_mode = img->criu_mode;
	in->state_in_core = img->state_in_core;
	in->timers_in_core = img->timers_in_core;
	in->whole = p->whole;
	in->counts_known = img->counts_known;
	in->n_timers = p->whole ? img->n_timers : p->n_timers;
	in->slice = image_has_slice(img);
	in->n_leader_aimed = img->n_leader_aimed;
	if (!p->whole) {
		in->n_pending = img->n_pending;
		in->n_clock_tid = img->n_clock_tid;
		return;
	}
	in->n_pending = ptimer_image_pending(img);
	in->n_clock_tid = 0;
	for (uint32_t i = 0; i < img->n_timers; i++)
		in->n_clock_tid += ptimer_thread_clock(img->timers[i].clock_id) && img->timers[i].clock_tid;
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
 * before any task is restored, where a failure is clean: every thread the
 * image names (its threads, a SIGEV_THREAD_ID target, the thread a
 * thread-CPU-clock timer measures) is one of that task's threads there,
 * and the first thread with an rseq area has it where criu's
 * core-<tid>.img says (ASLR moves it from one run of a program to the
 * next).  Returns 0 or -EINVAL (err set).
 */
static int check_of_checkpoint(const struct planning *c, const struct planned *p)
{
	const struct ptimer_criu_task *task = ptimer_criu_pstree_task(c->tree, c->n_tree, p->vpid);
	const struct ptimer_image *img = &p->img;
	const char *dir = c->env->dir;
	bool rseq_checked = false;

	if (!task)
		return 0;
	for (uint32_t i = 0; i < img->n_threads; i++) {
		const struct ptimer_thread *th = &img->threads[i];
		struct ptimer_err rerr;
		uint64_t at;

		if (!has_thread(task, th->tid))
			return ptimer_errf(c->err, EINVAL, "%s/ptimers-%d.img is not of this checkpoint: it names "
					   "thread %d, which criu did not save for task %d (pstree.img)", dir, p->vpid,
					   th->tid, p->vpid);
		if (rseq_checked || !th->rseq_abi_size || ptimer_criu_thread_rseq(dir, th->tid, &at, &rerr) || !at)
			continue;
		rseq_checked = true;
		if (at != th->rseq_abi_pointer)
			return ptimer_errf(c->err, EINVAL, "%s/ptimers-%d.img is not of this checkpoint: it was "
					   "written by another dump of task %d (its thread %d's memory is laid out "
					   "otherwise than in core-%d.img: rseq area at %#llx, not %#llx); put back the "
					   "ptimers-%d.img dumped with these images, or remove it to restore as criu "
					   "alone would", dir, p->vpid, p->vpid, th->tid, th->tid,
					   (unsigned long long)th->rseq_abi_pointer, (unsigned long long)at, p->vpid);
	}
	for (uint32_t i = 0; i < img->n_timers; i++) {
		const struct ptimer_timer *tm = &img->timers[i];
		pid_t tid = tm->sigev_notify & PTIMER_SIGEV_THREAD_ID ? tm->notify_tid : 0;

		if (tid && !has_thread(task, tid))
			return ptimer_errf(c->err, EINVAL, "%s/ptimers-%d.img: timer %d is aimed at thread %d, which "
					   "criu did not save for task %d (pstree.img): the image is not of this "
					   "checkpoint or was edited", dir, p->vpid, tm->timer_id, tid, p->vpid);
		if (tm->clock_tid && !has_thread(task, tm->clock_tid))
			return ptimer_errf(c->err, EINVAL, "%s/ptimers-%d.img: timer %d measures thread %d, which "
					   "criu did not save for task %d (pstree.img): the image is not of this "
					   "checkpoint or was edited", dir, p->vpid, tm->timer_id, tm->clock_tid, p->vpid);
	}
	return 0;
}

/* criu's timers of task vpid, sorted by ID (*out malloc'd, NULL: none). */
static int core_timers(struct ptimer_criu_core *core, struct ptimer_timer **out, uint32_t *n,
		       struct ptimer_err *err)
{
	int ret = ptimer_criu_core_timers(core, out, n, err);

	if (!ret && *n)
		qsort(*out, *n, sizeof(**out), ptimer_timer_cmp_id);
	return ret;
}

/*
 * The create/delete pairs criu's loop needs for the task's timers (their
 * largest ID + 1 - how many), from the image or, where it lists none,
 * criu's core image.
 */
static int loop_pairs(const struct planning *c, const struct planned *p, uint64_t *pairs)
{
	const struct ptimer_image *img = &p->img;
	struct ptimer_criu_core *core = NULL;
	struct ptimer_timer *ct = NULL;
	uint32_t n = img->n_timers;
	int64_t max = -1;
	int ret = 0;

	if (img->timers_in_core) {
		ret = ptimer_criu_core_open(c->env->dir, p->vpid, &core, c->err);
		if (!ret)
			ret = ptimer_criu_core_timers(core, &ct, &n, c->err);
		for (uint32_t i = 0; !ret && i < n; i++)
			max = ct[i].timer_id > max ? ct[i].timer_id : max;
		free(ct);
		ptimer_criu_core_close(core);
	} else {
		for (uint32_t i = 0; i < n; i++)
			max = img->timers[i].timer_id > max ? img->timers[i].timer_id : max;
	}
	*pairs = ret ? 0 : (uint64_t)(max + 1) - n;
	return ret;
}

/* The log line of a decision of criu-mode auto under criu's loop, which
 * the tests and users read for the pairs. */
static void log_loop(struct planning *c, const struct planned *p, const struct decide_in *in)
{
	if (p->d.outcome == DECIDE_CRIU) {
		c->n_loop_left++;
		ptimer_log(PTIMER_LOG_DEBUG, "task vpid %d: criu's create/delete loop makes its timer IDs in %llu "
			   "pairs (at most %d): left to criu", p->vpid, (unsigned long long)in->pairs,
			   CRIU_LOOP_PAIRS_MAX);
		return;
	}
	c->n_loop_taken++;
	if (in->pairs_known && in->pairs > CRIU_LOOP_PAIRS_MAX)
		ptimer_log(PTIMER_LOG_DEBUG, "task vpid %d: ptimer restores its timers: criu's loop would need %llu "
			   "create/delete pairs (more than %d)", p->vpid, (unsigned long long)in->pairs,
			   CRIU_LOOP_PAIRS_MAX);
	else
		ptimer_log(PTIMER_LOG_DEBUG, "task vpid %d: ptimer restores its timers: %s", p->vpid, p->d.why);
}

/*
 * decide() until it has an answer, reading what it asks for: the whole
 * image (checked against criu's images then), criu's loop pairs.
 * Images in a format no release writes are refused with one line.
 */
static int decide_task(struct planning *c, struct planned *p, const char *raw, size_t raw_len)
{
	const struct plan_env *env = c->env;
	struct decide_in in = { .takeover = env->conf->criu_mode == PTIMER_CRIU_TAKEOVER, .criu_exact = c->exact,
				.prctl = c->prctl, .ahead = env->ahead[0] != 0 };
	char path[4400];
	int ret;

	snprintf(path, sizeof(path), "%s/ptimers-%d.img", env->dir, p->vpid);
	for (;;) {
		facts(p, &in);
		p->d = decide(&in);
		switch (p->d.outcome) {
		case DECIDE_REFUSE:
			return ptimer_errf(c->err, EINVAL, "%s %s", path, p->d.why);
		case DECIDE_READ_IMAGE:
			ptimer_image_free(&p->img);
			ret = ptimer_image_parse(path, raw, raw_len, &p->img, NULL, c->err);
			if (ret)
				return ret;
			p->whole = true;
			ret = check_of_checkpoint(c, p);
			if (ret)
				return ret;
			continue;
		case DECIDE_COUNT_PAIRS:
			ret = loop_pairs(c, p, &in.pairs);
			if (ret)
				return ret;
			in.pairs_known = true;
			continue;
		default:
			break;
		}
		break;
	}
	if (!p->whole && (p->d.todo & DO_SLICE))	/* its threads' slice state, in the head */
		return check_of_checkpoint(c, p);
	if (p->img.criu_mode == PTIMER_CRIU_AUTO && !in.takeover && !c->exact)
		log_loop(c, p, &in);
	if (p->d.outcome == DECIDE_CRIU && !p->d.todo && p->img.timers_in_core)
		ptimer_log(PTIMER_LOG_DEBUG, "task vpid %d: criu restores its POSIX timers, all of them from its core "
			   "image (criu-mode auto); nothing of ptimer's after it", p->vpid);
	else if (p->d.outcome == DECIDE_CRIU && !p->d.todo)
		ptimer_log(PTIMER_LOG_DEBUG, "task vpid %d: criu restores its %u POSIX timers (criu-mode auto); "
			   "nothing of ptimer's after it%s", p->vpid, p->n_timers,
			   p->whole ? "" : ", so its image is read no further than its head");
	return 0;
}

/* One entry of the image directory: a ptimers image's head into the plan
 * and decided; what restores that did not finish left, cleaned. */
static int list_one(int fd, const char *name, unsigned type, void *arg)
{
	struct planning *c = arg;
	char path[4400], *raw = NULL;
	size_t raw_len = 0;
	struct planned *p;
	int vpid, end = 0, ret = 0;

	(void)type;
	c->n_entries++;
	if (name[0] == '.' || !strncmp(name, "core-", 5))
		ret = clean_leftover(c->env->dir, fd, name, c->err);
	if (ret || strncmp(name, "ptimers-", 8) || sscanf(name, "ptimers-%d.img%n", &vpid, &end) != 1 || name[end])
		return (c->failed = ret != 0), ret;
	if (!c->tree_read) {
		struct ptimer_err terr;

		/* at the first image: a restore without any costs neither */
		c->exact = criu_makes_exact_ids(c->exact_why, sizeof(c->exact_why));
		/* criu fails a restore without it itself */
		c->tree_read = true;
		if (ptimer_criu_pstree_read(c->env->dir, &c->tree, &c->n_tree, &terr))
			ptimer_log(PTIMER_LOG_DEBUG, "%s; the ptimers images are not checked against it", terr.msg);
	}
	if (c->tree && !ptimer_criu_pstree_task(c->tree, c->n_tree, vpid)) {
		ptimer_log(PTIMER_LOG_WARN, "%s/%s: criu saved no task %d in this checkpoint (pstree.img); ignored",
			   c->env->dir, name, vpid);
		return 0;
	}
	p = plan_add(c, vpid);
	c->failed = true;
	if (!p)
		return ptimer_errf(c->err, ENOMEM, "out of memory");
	p->has_image = true;
	snprintf(path, sizeof(path), "%s/%s", c->env->dir, name);
	/* the head first: it may be all the restore needs */
	ret = ptimer_image_file(path, &raw, &raw_len, c->err);
	if (!ret)
		ret = ptimer_image_parse(path, raw, raw_len, &p->img, &p->n_timers, c->err);
	if (!ret)
		ret = decide_task(c, p, raw, raw_len);
	free(raw);
	c->failed = ret != 0;
	return ret;
}

/*
 * The timers' timing where ptimer makes, checks or completes them, from
 * criu's core image: the same timers (the plugin saved its image while
 * criu held the task stopped, before criu saved it).  A timer whose clock
 * the image changed (the CPU clock of a thread gone: CLOCK_MONOTONIC,
 * disarmed) keeps none.  Where the image lists none (timers_in_core),
 * criu's are taken whole, as ptimer's dump gives them: a notification
 * that is no SIGEV_THREAD_ID one names the process.
 */
static int take_timing(const struct planning *c, struct planned *p, struct ptimer_criu_core *core)
{
	struct ptimer_image *img = &p->img;
	struct ptimer_timer *ct = NULL;
	uint32_t nc = 0;
	int ret = core_timers(core, &ct, &nc, c->err);

	if (ret)
		return ret;
	if (p->d.needs & NEED_CORE_TIMERS) {
		for (uint32_t i = 0; i < nc; i++)
			if (!(ct[i].sigev_notify & PTIMER_SIGEV_THREAD_ID))
				ct[i].notify_tid = p->vpid;
		img->timers = ct;
		img->n_timers = nc;
		return 0;
	}
	if (nc != img->n_timers)
		ret = ptimer_errf(c->err, EINVAL, "core-%d.img holds %u POSIX timers, ptimers-%d.img %u: they are not "
				  "of the same dump; dump again", p->vpid, nc, p->vpid, img->n_timers);
	for (uint32_t i = 0; !ret && i < img->n_timers; i++) {
		struct ptimer_timer *tm = &img->timers[i];
		const struct ptimer_timer *f = bsearch(tm, ct, nc, sizeof(*ct), ptimer_timer_cmp_id);

		if (!f) {
			ret = ptimer_errf(c->err, EINVAL, "core-%d.img has no timer %d, which ptimers-%d.img holds: "
					  "they are not of the same dump; dump again", p->vpid, tm->timer_id, p->vpid);
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
 * What p's decision needs of criu's core image: its timing (take_timing),
 * and into the overlay, where ptimer makes its timers, the core image
 * without them; where the tree is held, with pdeath_sig SIGKILL (the
 * dumped one kept for RESUME_DEVICES_LATE).  A core image that cannot be
 * written into the overlay (ov_path NULL: there is none) leaves the
 * timers to criu, checked.
 */
static int prepare_task(struct planning *c, struct planned *p, bool hold, const char *ov_path)
{
	bool strip = p->has_image && p->d.outcome == DECIDE_PTIMER;
	struct ptimer_criu_core *core = NULL;
	char dest[4400];
	int ret;

	if (!hold && !strip && !(p->d.needs & (NEED_TIMING | NEED_CORE_TIMERS)))
		return 0;
	ret = ptimer_criu_core_open(c->env->dir, p->vpid, &core, c->err);
	if (!ret && (p->d.needs & (NEED_TIMING | NEED_CORE_TIMERS)))
		ret = take_timing(c, p, core);
	/* a zombie or a helper criu makes exit: nothing to hold */
	if (ret || (!strip && (!hold || !ptimer_criu_core_runs(core)))) {
		ptimer_criu_core_close(core);
		return ret;
	}
	if (strip)
		ptimer_criu_core_strip(core);
	ret = ov_path ? ptimer_criu_core_pdeath(core, SIGKILL, &p->pdeath_orig, c->err) :
			ptimer_errf(c->err, -c->ov->mkdir_err, "%s", c->ov->mkdir_msg);
	if (!ret) {
		snprintf(dest, sizeof(dest), "%s/core-%d.img", ov_path, p->vpid);
		ret = ptimer_criu_core_write(core, dest, c->err);
	}
	ptimer_criu_core_close(core);
	p->held = !ret;
	if (!ret)
		return 0;
	ptimer_log(PTIMER_LOG_WARN, "task vpid %d: %s; criu restores %s", p->vpid, c->err->msg,
		   strip ? "its timers as it saved them and ptimer checks them" :
			   "it without the parent-death signal that ends it with a killed criu");
	if (strip) {
		struct decide_in in = { .takeover = c->env->conf->criu_mode == PTIMER_CRIU_TAKEOVER,
					.criu_exact = c->exact, .prctl = c->prctl, .ahead = c->env->ahead[0] != 0,
					.no_overlay = true, .pairs_known = true, .pairs = UINT64_MAX };

		facts(p, &in);
		p->d = decide(&in);
	}
	return 0;
}

/*
 * Every task ptimer makes the timers of has none from criu's
 * __restore_switch_stage(CR_STATE_COMPLETE), when criu lets the tasks run
 * to the end of their rt_sigreturn, to ptimer's first RESUME_DEVICES_LATE
 * call; criu calls no plugin between (criu/cr-restore.c
 * restore_root_task()).  So where there is such a task, every task of
 * the tree is restored with the parent-death signal SIGKILL (criu's
 * restorer sets thread_core.pdeath_sig in its RESTORE_CREDS stage,
 * criu/pie/restorer.c): the root is criu's child, each child its
 * parent's, so a criu killed before ptimer's call takes the whole tree
 * with it, as if the restore had failed, never a part of it (a task
 * without timers left orphaned).  ptimer puts the dumped signals back
 * once every task has its timers (resume.c).
 */
static int prepare(struct planning *c)
{
	char ov_path[4200];
	struct ptimer_err oerr;
	bool hold, have_ov;
	int ret = 0;

	for (size_t i = 0; i < c->plan->n; i++)
		c->plan->n_ptimer += c->plan->task[i].d.outcome == DECIDE_PTIMER;
	have_ov = c->plan->n_ptimer && !overlay_make(c->ov, c->env->dir, ov_path, sizeof(ov_path), &oerr);
	hold = have_ov;
	/* every task of the tree, the ones without an image too */
	for (uint32_t i = 0; hold && c->tree && i < c->n_tree; i++) {
		if (plan_find(c->plan, c->tree[i].vpid))
			continue;
		if (!plan_add(c, c->tree[i].vpid))
			return ptimer_errf(c->err, ENOMEM, "out of memory");
		qsort(c->plan->task, c->plan->n, sizeof(*c->plan->task), cmp_vpid);
	}
	c->plan->n_ptimer = 0;
	for (size_t i = 0; !ret && i < c->plan->n; i++) {
		struct planned *p = &c->plan->task[i];

		ret = prepare_task(c, p, hold, have_ov ? ov_path : NULL);
		c->plan->n_ptimer += p->has_image && p->d.outcome == DECIDE_PTIMER;
		c->plan->n_work += planned_work(p);
	}
	return ret;
}

int plan_restore(struct plan *plan, struct overlay *ov, const struct plan_env *env)
{
	struct ptimer_err err;
	struct planning c = { .env = env, .plan = plan, .ov = ov, .err = &err };
	int ret = 0, n_native = 0, n_auto = 0;
	bool takeover = env->conf->criu_mode == PTIMER_CRIU_TAKEOVER;

	c.prctl = prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) >= 0;
	ret = dir_each(criu_get_image_dir(), ".", list_one, &c);
	/* no directory to open: criu fails such a restore itself; a listing
	 * that fails otherwise (ENOMEM, EMFILE) may hide a ptimers image */
	if (ret < 0 && !c.failed && !c.n_entries && (ret == -EBADF || ret == -ENOENT || ret == -ENOTDIR))
		ret = 0;
	else if (ret < 0 && !c.failed)
		ret = ptimer_errf(&err, -ret, "cannot list the image directory %s: %s", env->dir, strerror(-ret));
	if (plan->n)
		qsort(plan->task, plan->n, sizeof(*plan->task), cmp_vpid);
	for (size_t i = 0; i < plan->n; i++) {
		n_native += plan->task[i].img.criu_mode == PTIMER_CRIU_NATIVE;
		n_auto += plan->task[i].img.criu_mode == PTIMER_CRIU_AUTO;
	}
	if (!ret && n_native)
		ptimer_log(PTIMER_LOG_INFO, "criu-mode native (the dump's) for %d task%s: criu restores their timers, "
			   "ptimer checks them against their ptimers images (ID, clock, notification, signal, thread; "
			   "the timing is criu's)", n_native, n_native == 1 ? "" : "s");
	if (!ret && n_auto)
		ptimer_log(PTIMER_LOG_INFO, "criu-mode auto: %s: %s", c.exact_why,
			   c.exact && !takeover ? "criu restores the timers it saved right, ptimer the rest" :
			   c.exact ? "but criu-mode takeover in the restore's settings: ptimer restores every task's "
				     "timers" :
			   takeover ? "criu-mode takeover in the restore's settings: ptimer restores every task's "
				      "timers" :
			   "ptimer restores the timers of the tasks whose IDs that loop would reach slowly");
	if (!ret)
		ret = prepare(&c);
	ptimer_criu_pstree_free(c.tree, c.n_tree);
	if (!ret && c.n_loop_left + c.n_loop_taken)
		ptimer_log(PTIMER_LOG_INFO, "criu-mode auto: %u task%s left to criu's create/delete loop (at most %d "
			   "pairs each), %u restored by ptimer", c.n_loop_left, c.n_loop_left == 1 ? "" : "s",
			   CRIU_LOOP_PAIRS_MAX, c.n_loop_taken);
	if (!ret)
		ret = overlay_switch(ov, &err);
	if (!ret && ptimer_fault("restore-init"))
		ret = ptimer_errf(&err, EIO, "injected failure at the end of init(RESTORE)");
	if (ret) {
		ptimer_log(PTIMER_LOG_ERROR, "%s", err.msg);
		overlay_done(ov);
		plan_free(plan);
		return -1;
	}
	return 0;
}
