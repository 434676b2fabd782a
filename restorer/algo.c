/* SPDX-License-Identifier: MIT */
/*
 * The in-target restorer: probes, reads and recreates POSIX timers with
 * their IDs from inside the target process (restorer/abi.h is the contract).
 *
 * Built twice from this one file: freestanding into the blob (no libc, raw
 * syscalls from restorer/sys.h, no writable globals, no jump tables: the blob
 * must be position independent without relocations), and hosted with
 * -DPTIMER_SIMKERNEL against test/unit/simkernel.c for the unit tests.
 *
 * Two ways to get a timer with a given ID (kernel/time/posix-timers.c):
 *  - exact: with prctl(PR_TIMER_CREATE_RESTORE_IDS, ON) timer_create() takes
 *    the wanted ID from *timer_id (Linux 6.15, commit ec2d0c04624b);
 *  - linear: without it the kernel hands out IDs from a per-process counter
 *    (posix_timer_add(): id = next; next = (id + 1) & INT_MAX; IDs already
 *    in use are skipped), so the restorer creates and deletes throw-away
 *    timers until the counter reaches each wanted ID, as CRIU did before the
 *    prctl existed (criu/pie/restorer.c, create_posix_timers()).
 *
 * Every loop is bounded by the array sizes or by INT_MAX + 1 counter steps,
 * whatever the kernel answers.
 */
#include <stddef.h>
#include <stdint.h>

#include "restorer/abi.h"
#include "restorer/algo.h"
#include "restorer/sys.h"

/* blob-private progress marker, ptimer_blob_args.phase */
enum restore_phase {
	PHASE_IDLE = 0,		/* nothing created; a RESTORE starts here */
	PHASE_CREATING = 1,	/* linear: plan checked, timers being created */
	PHASE_DONE = 2,		/* every timer created and armed */
};

/* Counter steps one ID space has: 0..INT_MAX. */
#define ID_SPACE	((uint64_t)PTIMER_ID_MAX + 1)

static struct ptimer_timer *args_timers(const struct ptimer_blob_args *a)
{
	return (struct ptimer_timer *)(uintptr_t)a->timers;
}

static const int32_t *args_occupied(const struct ptimer_blob_args *a)
{
	return (const int32_t *)(uintptr_t)a->occupied;
}

static long fail_at(struct ptimer_blob_args *a, long err, uint32_t index)
{
	a->fail_index = index;
	return err;
}

/* The kernel's next ID after @id: (id + 1) & INT_MAX. */
static int32_t next_id(int32_t id)
{
	return (int32_t)(((uint32_t)id + 1u) & PTIMER_ID_MAX);
}

/* Counter steps from @from to @to, going up and wrapping at INT_MAX. */
static uint32_t id_distance(int32_t from, int32_t to)
{
	return ((uint32_t)to - (uint32_t)from) & PTIMER_ID_MAX;
}

/* The struct sigevent timer_create() gets for @t; the tid only for THREAD_ID. */
static void make_sigevent(const struct ptimer_timer *t, struct ptimer_ksigevent *sev)
{
	for (int i = 0; i < 12; i++)
		sev->_sigev_un._pad[i] = 0;
	sev->sigev_value = t->sival;
	sev->sigev_signo = t->signo;
	sev->sigev_notify = t->sigev_notify;
	if (t->sigev_notify & PTIMER_SIGEV_THREAD_ID)
		sev->_sigev_un._tid = t->notify_tid;
}

/*
 * Create the timer @t describes.  *id is the wanted ID on entry (read by the
 * kernel in exact mode) and the ID the kernel gave on success.  0 or -errno.
 */
static long create_timer(const struct ptimer_timer *t, int32_t *id)
{
	struct ptimer_ksigevent sev;

	make_sigevent(t, &sev);
	*id = t->timer_id;
	return sys_timer_create(t->clock_id, &sev, id);
}

/*
 * Create a throw-away timer (CLOCK_MONOTONIC, SIGEV_NONE: it never fires and
 * queues no signal) to learn or move the kernel's ID counter.  *id gets its
 * ID.  0 or -errno.
 */
static long create_scratch_timer(int32_t *id)
{
	struct ptimer_ksigevent sev;

	for (int i = 0; i < 12; i++)
		sev._sigev_un._pad[i] = 0;
	sev.sigev_value = 0;
	sev.sigev_signo = 0;
	sev.sigev_notify = PTIMER_SIGEV_NONE;
	*id = -1;
	return sys_timer_create(PTIMER_CLOCK_MONOTONIC, &sev, id);
}

static int ts_is_zero(const struct ptimer_ts *ts)
{
	return ts->sec == 0 && ts->nsec == 0;
}

/*
 * Arm timers[n_armed..n_timers) with their relative it_value/it_interval
 * (timer_settime flags 0).  A zero it_value is a disarmed timer, and a new
 * timer is disarmed: no call.  0 or -errno with fail_index.
 */
static long arm_timers(struct ptimer_blob_args *a)
{
	struct ptimer_timer *t = args_timers(a);

	while (a->n_armed < a->n_created) {
		const struct ptimer_timer *tm = &t[a->n_armed];

		if (!ts_is_zero(&tm->it_value) || tm->pending) {
			struct ptimer_kitimerspec its;
			long ret;

			its.it_interval = tm->it_interval;
			its.it_value = tm->it_value;
			/*
			 * Its signal was queued at dump: expire at once, so the
			 * kernel queues the timer's own signal again (delivered
			 * once, rearmed on delivery like the original,
			 * kernel/time/posix-timers.c posixtimer_deliver_signal()).
			 */
			if (tm->pending) {
				its.it_value.sec = 0;
				its.it_value.nsec = 1;
			}
			ret = sys_timer_settime(tm->timer_id, 0, &its, NULL);
			if (ret < 0)
				return fail_at(a, ret, a->n_armed);
		}
		a->n_armed++;
	}
	return 0;
}

/*
 * FLUSH, after a rollback: dequeue the signals of flush_mask from this
 * thread's and the process's queues.  Linux 6.13+ leaves a deleted
 * timer's queued signal in place and drops it only when it is dequeued
 * (kernel/signal.c dequeue_signal() goes on past it,
 * posixtimer_deliver_signal()): until then the signal shows as pending.
 * The host asks only for signals whose every queued entry it saw to be a
 * deleted timer's (PTRACE_PEEKSIGINFO), which the kernel drops here
 * without returning them.  Before 6.13 timer_delete removed them itself.
 */
static long op_flush(struct ptimer_blob_args *a)
{
	const struct ptimer_ts now = { 0, 0 };

	/* one call a signal: it drains every stale entry, and returns only
	 * a signal someone sent since the host looked */
	for (int s = 1; s <= 64; s++) {
		uint64_t set = 1ull << (s - 1);

		if (a->flush_mask & set)
			sys_rt_sigtimedwait(&set, 0, &now);
	}
	return 0;
}

/*
 * FIRE, the dump's look at a timer's thread (core/aim_probe.c): phase 0
 * arms each of timers[] to expire in 1 ns (n_armed: how many were, for the
 * host to arm them back after a failure), phase 1 only waits.  Then each is
 * read until it reads disarmed: a one-shot timer whose expiry has run
 * (common_timer_get(), kernel/time/posix-timers.c).  A few passes: 1 ns
 * timers have expired by the time the last is armed.  PTIMER_AGAIN when
 * some have not: the host runs phase 1 again until its deadline.
 */
static int64_t mono_ns(long *err)
{
	struct ptimer_ts ts;

	*err = sys_clock_gettime(PTIMER_CLOCK_MONOTONIC, &ts);
	return ts.sec * 1000000000LL + ts.nsec;
}

static long op_fire(struct ptimer_blob_args *a)
{
	const struct ptimer_kitimerspec now = { { 0, 0 }, { 0, 1 } };
	struct ptimer_timer *t = args_timers(a);
	long ret;

	if (a->phase == 0) {
		/* what each has, and when: ARM gives it back less the time since */
		a->n_armed = 0;
		for (uint32_t i = 0; i < a->n_timers; i++) {
			struct ptimer_kitimerspec its;

			ret = sys_timer_gettime(t[i].timer_id, &its);
			if (ret < 0)
				return fail_at(a, ret, i);
			t[i].it_value = its.it_value;
			t[i].it_interval = its.it_interval;
		}
		a->look_ns = mono_ns(&ret);
		if (ret < 0)
			return ret;
		for (; a->n_armed < a->n_timers; a->n_armed++) {
			long ret = sys_timer_settime(t[a->n_armed].timer_id, 0, &now, 0);

			if (ret < 0)
				return fail_at(a, ret, a->n_armed);
		}
		a->phase = 1;
	}
	for (int pass = 0; pass < 64; pass++) {
		uint32_t left = 0;

		for (uint32_t i = 0; i < a->n_timers; i++) {
			struct ptimer_kitimerspec its;
			long ret = sys_timer_gettime(t[i].timer_id, &its);

			if (ret < 0)
				return fail_at(a, ret, i);
			left += !ts_is_zero(&its.it_value);
		}
		if (!left)
			return 0;
	}
	return PTIMER_AGAIN;
}

/*
 * ARM: each of timers[] set to its it_interval and its it_value less the
 * time since look_ns (relative; 1 ns when that is all of it: it expires at
 * once, as it would have; look_ns 0: as it is), past failures.
 */
static long op_arm(struct ptimer_blob_args *a)
{
	struct ptimer_timer *t = args_timers(a);
	long first = 0, ret = 0;
	int64_t since = a->look_ns ? mono_ns(&ret) - a->look_ns : 0;

	if (ret < 0)
		return ret;
	for (uint32_t i = 0; i < a->n_timers; i++) {
		struct ptimer_kitimerspec its;
		int64_t left = t[i].it_value.sec * 1000000000LL + t[i].it_value.nsec;

		if (left) {
			left -= since;
			left = left < 1 ? 1 : left;
		}
		its.it_value.sec = left / 1000000000LL;
		its.it_value.nsec = left % 1000000000LL;
		its.it_interval = t[i].it_interval;
		ret = sys_timer_settime(t[i].timer_id, 0, &its, 0);
		if (ret < 0 && !first)
			first = fail_at(a, ret, i);
	}
	return first;
}

/*
 * TAKE: the signal of each of timers[] with pending set out of this
 * thread's own queue (rt_sigtimedwait, no wait: a thread's own queue is
 * searched before its process's, kernel/signal.c dequeue_signal()), its
 * pending cleared, whichever of them each siginfo names (SI_TIMER,
 * si_timerid).  A signal none of them is (another sender's, queued since
 * the host looked) is handed back to the host: PTIMER_E_FOREIGN, its
 * siginfo in taken_info, for the host to queue again.
 */
static long op_take(struct ptimer_blob_args *a)
{
	struct ptimer_timer *t = args_timers(a);
	const struct ptimer_ts zero = { 0, 0 };

	for (uint32_t i = 0; i < a->n_timers; i++) {
		uint64_t set = 1ull << (t[i].signo - 1);
		int32_t *si = (int32_t *)(void *)a->taken_info;
		uint32_t j;
		long ret;

		if (!t[i].pending)
			continue;
		ret = sys_rt_sigtimedwait(&set, a->taken_info, &zero);
		if (ret < 0)
			return fail_at(a, ret, i);
		/* siginfo: si_signo, si_errno, si_code, then at byte 16 (SI_TIMER) si_tid */
		for (j = 0; j < a->n_timers; j++)
			if (t[j].pending && si[2] == -2 && si[4] == t[j].timer_id && si[0] == t[j].signo)
				break;
		if (j == a->n_timers)
			return fail_at(a, PTIMER_E_FOREIGN, i);
		t[j].pending = 0;
		if (j != i)
			i--;	/* another of ours came first: i is still queued */
	}
	return 0;
}

/*
 * Delete timers[0..n_created), newest first; n_created = n_armed = 0 and the
 * restore starts over from PHASE_IDLE.  Goes on past failures so that as much
 * as possible is gone; returns 0 or the first -errno.
 */
static long delete_created(struct ptimer_blob_args *a)
{
	struct ptimer_timer *t = args_timers(a);
	long first = 0;

	while (a->n_created > 0) {
		long ret = sys_timer_delete(t[a->n_created - 1].timer_id);

		if (ret < 0 && first == 0)
			first = ret;
		a->n_created--;
	}
	a->n_armed = 0;
	a->phase = PHASE_IDLE;
	return first;
}

/*
 * PROBE: prctl_get = prctl(PR_TIMER_CREATE_RESTORE_IDS, GET) (0 off, 1 on, or
 * -EINVAL on kernels before 6.15).  When GET fails, or the host asks for
 * linear mode, the counter is probed: probe_id = the ID the kernel hands the
 * next timer, so the counter then stands at probe_id + 1.
 *
 * The probe timer is timers[0] itself (the lowest wanted ID, created with
 * its real clock and sigevent, never armed), not a scratch timer: when the
 * counter is exactly at timers[0]'s ID the probe keeps it (n_created = 1)
 * instead of burning the very ID it wants.  Otherwise it is deleted again.
 * With no timers a SIGEV_NONE scratch timer is used.  Otherwise probe_id =
 * -1 and nothing is created.  Result 0 or the timer_create error
 * (fail_index 0 when timers[0] was refused: its own fault, e.g. a thread
 * that does not exist).
 */
static long op_probe(struct ptimer_blob_args *a)
{
	const struct ptimer_timer *t = args_timers(a);
	long ret;
	int32_t id;

	a->probe_id = -1;
	a->prctl_get = (int32_t)sys_prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS,
					  PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0);
	if (a->prctl_get >= 0 && a->mode != PTIMER_MODE_LINEAR)
		return 0;

	a->n_created = 0;
	a->n_armed = 0;
	a->phase = PHASE_IDLE;
	if (a->n_timers == 0) {
		ret = create_scratch_timer(&id);
		if (ret < 0)
			return fail_at(a, ret, PTIMER_NO_INDEX);
	} else {
		ret = create_timer(&t[0], &id);
		if (ret < 0)
			return fail_at(a, ret, 0);
	}
	a->probe_id = id;
	if (a->n_timers != 0 && id == t[0].timer_id) {
		a->n_created = 1;
		a->counter = next_id(id);
		return 0;
	}
	ret = sys_timer_delete(id);
	if (ret < 0)
		return fail_at(a, ret, PTIMER_NO_INDEX);
	return 0;
}

/*
 * GETTIME: for each timers[i] fill it_value (remaining, relative),
 * it_interval and overrun from timer_gettime()/timer_getoverrun().
 * 0, or -errno with fail_index = i (-EINVAL: no timer with that ID).
 */
static long op_gettime(struct ptimer_blob_args *a)
{
	struct ptimer_timer *t = args_timers(a);

	for (uint32_t i = 0; i < a->n_timers; i++) {
		struct ptimer_kitimerspec its;
		long ret;

		ret = sys_timer_gettime(t[i].timer_id, &its);
		if (ret < 0)
			return fail_at(a, ret, i);
		/*
		 * Its one error is EINVAL (no such timer), which timer_gettime
		 * just ruled out.  A timer on the CPU clock of a thread that has
		 * exited can answer -1 (timer_overrun_to_int() of an
		 * it_overrun_last the kernel left at -1), which the raw syscall
		 * shows as -EPERM: a count, not an error.  Kept as 0.
		 */
		ret = sys_timer_getoverrun(t[i].timer_id);
		if (ret == -PTIMER_EINVAL)
			return fail_at(a, ret, i);
		if (ret < 0)
			ret = 0;
		t[i].it_value = its.it_value;
		t[i].it_interval = its.it_interval;
		t[i].overrun = (int32_t)ret;
	}
	return 0;
}

static long set_restore_ids(unsigned long ctrl)
{
	return sys_prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, ctrl, 0, 0, 0);
}

/*
 * Exact mode, one run: prctl ON, create timers[] in array order asking each
 * for its timer_id and arm it at once, prctl OFF (always, result in
 * prctl_off).  timer_settime() does not depend on the mode, so arming inside
 * the ON window changes nothing but speed.
 * A timer the kernel gives another ID than asked is deleted again and is
 * PTIMER_E_GOTID with got_id.  On any failure every created timer is deleted.
 */
static long restore_exact(struct ptimer_blob_args *a)
{
	struct ptimer_timer *t = args_timers(a);
	long err = 0, ret;

	ret = set_restore_ids(PTIMER_PR_TIMER_CREATE_RESTORE_IDS_ON);
	if (ret < 0) {
		/* The mode is unchanged; OFF states that for the host. */
		a->prctl_off = (int32_t)set_restore_ids(PTIMER_PR_TIMER_CREATE_RESTORE_IDS_OFF);
		return fail_at(a, ret, PTIMER_NO_INDEX);
	}

	while (a->n_created < a->n_timers) {
		uint32_t i = a->n_created;
		int32_t id;

		ret = create_timer(&t[i], &id);
		if (ret < 0) {
			err = fail_at(a, ret, i);
			break;
		}
		if (id != t[i].timer_id) {
			/* Only a kernel ignoring the prctl does this. */
			sys_timer_delete(id);
			a->got_id = id;
			err = fail_at(a, PTIMER_E_GOTID, i);
			break;
		}
		a->n_created++;
		/* Arm it while it is cache-hot: a later pass would look every
		 * timer up again in the kernel's hash (about 1.5x slower at
		 * 50,000 timers, test/bench.sh). */
		err = arm_timers(a);
		if (err < 0)
			break;
	}

	/* Leave the process as its own timer_create() callers expect it. */
	ret = set_restore_ids(PTIMER_PR_TIMER_CREATE_RESTORE_IDS_OFF);
	a->prctl_off = (int32_t)ret;
	if (ret < 0 && err == 0)
		err = fail_at(a, ret, PTIMER_NO_INDEX);

	if (err == 0)
		err = arm_timers(a);
	if (err < 0) {
		delete_created(a);
		return err;
	}
	a->phase = PHASE_DONE;
	return 0;
}

/* Binary search of the sorted occupied[] for @id. */
static int id_is_occupied(const int32_t *occ, uint32_t n, int32_t id)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (occ[mid] == id)
			return 1;
		if (occ[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/*
 * The ID the kernel hands the next timer when its counter is at @counter:
 * the first ID from there, wrapping at INT_MAX, that the target does not
 * hold (posix_timer_add() skips IDs in use).  At most n + 1 steps.
 */
static int32_t next_free_id(const int32_t *occ, uint32_t n, int32_t counter)
{
	int32_t id = counter;

	for (uint32_t i = 0; i <= n && id_is_occupied(occ, n, id); i++)
		id = next_id(id);
	return id;
}

/*
 * Check a linear plan before anything more is created (timers[0] may exist
 * already, kept by the probe), so that a plan that cannot work leaves the
 * process as it was (the caller deletes what exists):
 *  - occupied[] strictly ascending IDs 0..INT_MAX, else -EINVAL;
 *  - no wanted ID is negative (-EINVAL) or occupied (-EBUSY, as exact mode's
 *    kernel answers);
 *  - without allow_wrap no wanted ID lies below the counter: PTIMER_E_PASSED
 *    naming the first such timer in array order;
 *  - the wanted IDs come in the order the counter reaches them, each
 *    further from the counter than the one before (never twice round the
 *    ID space): else PTIMER_E_ORDER.
 */
static long check_linear_plan(struct ptimer_blob_args *a)
{
	const struct ptimer_timer *t = args_timers(a);
	const int32_t *occ = args_occupied(a);
	uint32_t prev = 0;

	if (a->counter < 0)
		return fail_at(a, -PTIMER_EINVAL, PTIMER_NO_INDEX);
	for (uint32_t i = 0; i < a->n_occupied; i++) {
		if (occ[i] < 0 || (i > 0 && occ[i] <= occ[i - 1]))
			return fail_at(a, -PTIMER_EINVAL, PTIMER_NO_INDEX);
	}
	for (uint32_t i = a->n_created; i < a->n_timers; i++) {
		if (t[i].timer_id < 0)
			return fail_at(a, -PTIMER_EINVAL, i);
		if (id_is_occupied(occ, a->n_occupied, t[i].timer_id))
			return fail_at(a, -PTIMER_EBUSY, i);
	}
	if (!a->allow_wrap) {
		for (uint32_t i = a->n_created; i < a->n_timers; i++) {
			if (t[i].timer_id < a->counter)
				return fail_at(a, PTIMER_E_PASSED, i);
		}
	}
	for (uint32_t i = a->n_created; i < a->n_timers; i++) {
		uint32_t d = id_distance(a->counter, t[i].timer_id);

		if (i > a->n_created && d <= prev)
			return fail_at(a, PTIMER_E_ORDER, i);
		prev = d;
	}
	return 0;
}

/*
 * Move the counter one ID on by creating and deleting a scratch timer, which
 * must get exactly @expect.  A kernel giving another ID does not count per
 * process by one (IDs global before Linux 3.11, or another allocator):
 * PTIMER_E_COUNTER with got_id.  0 or an error; the scratch timer is gone
 * either way, unless its deletion itself failed.
 */
static long step_counter(struct ptimer_blob_args *a, int32_t expect)
{
	int32_t id;
	long ret;

	ret = create_scratch_timer(&id);
	if (ret < 0)
		return ret;
	ret = sys_timer_delete(id);
	if (id != expect) {
		a->got_id = id;
		return PTIMER_E_COUNTER;
	}
	if (ret < 0)
		return ret;
	a->counter = next_id(id);
	a->pairs_done++;
	return 0;
}

/*
 * Create timers[n_created] when the counter hands out its ID next; it must
 * get exactly that ID (else it is deleted: PTIMER_E_COUNTER with got_id).
 */
static long create_at_counter(struct ptimer_blob_args *a)
{
	const struct ptimer_timer *tm = &args_timers(a)[a->n_created];
	int32_t id;
	long ret;

	ret = create_timer(tm, &id);
	if (ret < 0)
		return ret;
	if (id != tm->timer_id) {
		sys_timer_delete(id);
		a->got_id = id;
		return PTIMER_E_COUNTER;
	}
	a->counter = next_id(id);
	a->n_created++;
	return 0;
}

/*
 * Linear mode, resumable: a->counter is the ID the kernel hands out next
 * (the host sets probe_id + 1 before the first run).  For each wanted ID W in
 * array order: scratch create/delete pairs move the counter up to W, skipping
 * occupied IDs as the kernel does, then the real timer is created and must get
 * W.  After a->budget pairs in one run (0: no limit) the result is
 * PTIMER_AGAIN with all progress kept in *a (counter, n_created, pairs_done;
 * fail_index = the timer being worked towards).  When every timer exists they
 * are armed.  On failure every created timer is deleted; a->counter and
 * pairs_done keep what was last seen of the kernel's counter.
 */
static long restore_linear(struct ptimer_blob_args *a)
{
	const struct ptimer_timer *t = args_timers(a);
	const int32_t *occ = args_occupied(a);
	uint64_t pairs_this_run = 0;
	long err = 0;

	if (a->phase == PHASE_IDLE) {
		err = check_linear_plan(a);
		if (err < 0) {
			delete_created(a);
			return err;
		}
		a->phase = PHASE_CREATING;
	}

	while (a->n_created < a->n_timers) {
		uint32_t i = a->n_created;
		int32_t want = t[i].timer_id;
		int32_t next;

		if (!a->allow_wrap && want < a->counter) {
			err = fail_at(a, PTIMER_E_PASSED, i);
			break;
		}
		next = next_free_id(occ, a->n_occupied, a->counter);
		if (next == want) {
			err = create_at_counter(a);
			if (err < 0) {
				fail_at(a, err, i);
				break;
			}
			continue;
		}
		if (id_distance(a->counter, next) > id_distance(a->counter, want) ||
		    (!a->allow_wrap && next < a->counter)) {
			/* The counter would jump over want: only if it is held. */
			err = fail_at(a, -PTIMER_EBUSY, i);
			break;
		}
		if (a->pairs_done >= ID_SPACE) {
			/* More steps than IDs exist: the counter is not ours. */
			a->got_id = a->counter;
			err = fail_at(a, PTIMER_E_COUNTER, i);
			break;
		}
		if (a->budget != 0 && pairs_this_run >= a->budget) {
			a->fail_index = i;
			return PTIMER_AGAIN;
		}
		err = step_counter(a, next);
		if (err < 0) {
			fail_at(a, err, i);
			break;
		}
		pairs_this_run++;
	}

	if (err == 0)
		err = arm_timers(a);
	if (err < 0) {
		delete_created(a);
		return err;
	}
	a->phase = PHASE_DONE;
	return 0;
}

/*
 * RESTORE: create timers[] with their timer_id and arm them, in a->mode.
 * Running it again after it finished returns 0 and changes nothing.
 */
static long op_restore(struct ptimer_blob_args *a)
{
	if (a->phase == PHASE_DONE)
		return 0;
	switch (a->mode) {
	case PTIMER_MODE_EXACT:
		return restore_exact(a);
	case PTIMER_MODE_LINEAR:
		return restore_linear(a);
	}
	return fail_at(a, -PTIMER_EINVAL, PTIMER_NO_INDEX);
}

/*
 * PROBE_RESTORE: PROBE, then RESTORE in exact mode when the kernel has the
 * prctl, switched off, and exact mode is asked for.  The host learns which
 * from prctl_get (and phase).  Otherwise as PROBE.  A RESTORE done sets the
 * thread's parent-death signal too when asked (pdeath_want).
 */
static long op_probe_restore(struct ptimer_blob_args *a)
{
	long ret = op_probe(a);

	a->pdeath_res = 1;
	if (ret < 0 || a->prctl_get != 0 || a->mode != PTIMER_MODE_EXACT)
		return ret;
	ret = op_restore(a);
	if (!ret && a->pdeath_want)
		a->pdeath_res = (int32_t)sys_prctl(PTIMER_PR_SET_PDEATHSIG, (unsigned long)a->pdeath_sig, 0, 0, 0);
	return ret;
}

/* ROLLBACK: delete timers[0..n_created).  0 or the first delete's -errno. */
static long op_rollback(struct ptimer_blob_args *a)
{
	long ret = delete_created(a);

	if (ret < 0)
		return fail_at(a, ret, PTIMER_NO_INDEX);
	return 0;
}

static long slice_prctl(unsigned long how, unsigned long arg)
{
	return sys_prctl(PTIMER_PR_RSEQ_SLICE_EXTENSION, how, arg, 0, 0);
}

/*
 * SLICE: prctl(PR_RSEQ_SLICE_EXTENSION) in the calling thread, which is the
 * only way to read or set it (per thread, no pid argument).  The kernel's
 * answers land in slice_get/slice_set; the op itself always succeeds.
 */
static long op_slice(struct ptimer_blob_args *a)
{
	a->slice_set = 1;
	if (a->slice_how == PTIMER_SLICE_SET) {
		a->slice_set = (int32_t)slice_prctl(PTIMER_PR_RSEQ_SLICE_EXTENSION_SET, a->slice_arg);
		a->slice_get = (int32_t)slice_prctl(PTIMER_PR_RSEQ_SLICE_EXTENSION_GET, 0);
		return 0;
	}
	a->slice_get = (int32_t)slice_prctl(PTIMER_PR_RSEQ_SLICE_EXTENSION_GET, 0);
	if (a->slice_how == PTIMER_SLICE_PROBE && a->slice_get >= 0)
		a->slice_set = (int32_t)slice_prctl(PTIMER_PR_RSEQ_SLICE_EXTENSION_SET,
						    (unsigned long)a->slice_get);
	return 0;
}

long ptimer_blob_main(struct ptimer_blob_args *a)
{
	long ret;

	a->fail_index = PTIMER_NO_INDEX;
	a->got_id = -1;
	if (a->abi_version != PTIMER_ABI_VERSION) {
		ret = PTIMER_E_ABI;
		goto out;
	}
	/* if/else, not switch: no jump table may end up in the blob. */
	if (a->op == PTIMER_OP_PROBE)
		ret = op_probe(a);
	else if (a->op == PTIMER_OP_GETTIME)
		ret = op_gettime(a);
	else if (a->op == PTIMER_OP_RESTORE)
		ret = op_restore(a);
	else if (a->op == PTIMER_OP_ROLLBACK)
		ret = op_rollback(a);
	else if (a->op == PTIMER_OP_SLICE)
		ret = op_slice(a);
	else if (a->op == PTIMER_OP_PROBE_RESTORE)
		ret = op_probe_restore(a);
	else if (a->op == PTIMER_OP_FLUSH)
		ret = op_flush(a);
	else if (a->op == PTIMER_OP_FIRE)
		ret = op_fire(a);
	else if (a->op == PTIMER_OP_ARM)
		ret = op_arm(a);
	else if (a->op == PTIMER_OP_TAKE)
		ret = op_take(a);
	else
		ret = -PTIMER_EINVAL;
out:
	a->result = ret;
	return ret;
}
