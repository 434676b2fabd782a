/* SPDX-License-Identifier: MIT */
/*
 * Simulated kernel for restorer/algo.c: the sys_* calls of restorer/sys.h
 * for one process.
 *
 * It models kernel/time/posix-timers.c (do_timer_create(), posix_timer_add(),
 * good_sigevent(), do_timer_settime(), posixtimer_create_prctl()) as of the
 * 2025 rework (Linux 6.15+, commit ec2d0c04624b for the prctl) and, through
 * knobs, older kernels.  A simulation because the interesting paths cannot be
 * taken on any kernel available here: a kernel without the prctl (before
 * 6.15), a global ID space (before 3.11), a counter that does not step by
 * one, timer_create() failing with EAGAIN after exactly N timers, or a
 * counter near INT_MAX (reaching it takes 2^31 real syscalls).
 *
 * Modelled order inside timer_create(), as in do_timer_create():
 *   1. clock: unknown -EINVAL, no timers on it -EOPNOTSUPP;
 *   2. allocation of the timer and its sigqueue: -EAGAIN (the eagain_after
 *      knob stands for RLIMIT_SIGPENDING or memory) - no ID is used up;
 *   3. exact-ID mode: wanted ID read from *timer_id (NULL: -EFAULT), outside
 *      0..INT_MAX -EINVAL, taken -EBUSY; otherwise the counter: id = next,
 *      next = (id + 1) & INT_MAX, retried while id is taken, -EAGAIN when
 *      every ID is taken;
 *   4. sigevent (good_sigevent()): -EINVAL - the counter has moved already;
 *   5. the ID is written to *timer_id.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/unit/simkernel.h"

struct simk simk;

#define SIMK_SIGRTMAX	64
#define SIMK_SIGALRM	14
#define NSEC_PER_SEC	1000000000LL

void simk_reset(void)
{
	free(simk.timers);
	memset(&simk, 0, sizeof(simk));
	simk.prctl_supported = 1;
	simk.alloc = SIMK_ALLOC_COUNTER;
	simk.rand_state = 12345;
	simk.eagain_after = -1;
	simk.fail_settime_id = -1;
	simk.fail_settime_err = -PTIMER_EINVAL;
	simk.tgid = 1000;
}

/* Index of the first timer with id >= @id. */
static size_t timer_slot(int32_t id)
{
	size_t lo = 0, hi = simk.n_timers;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (simk.timers[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct simk_timer *simk_find(int32_t id)
{
	size_t i = timer_slot(id);

	if (i < simk.n_timers && simk.timers[i].id == id)
		return &simk.timers[i];
	return NULL;
}

static struct simk_timer *timer_insert(int32_t id)
{
	size_t i = timer_slot(id);

	if (simk.n_timers == simk.cap_timers) {
		size_t cap = simk.cap_timers ? simk.cap_timers * 2 : 64;
		struct simk_timer *t = realloc(simk.timers, cap * sizeof(*t));

		if (!t) {
			perror("simkernel: realloc");
			exit(2);
		}
		simk.timers = t;
		simk.cap_timers = cap;
	}
	memmove(&simk.timers[i + 1], &simk.timers[i],
		(simk.n_timers - i) * sizeof(simk.timers[0]));
	simk.n_timers++;
	if (simk.n_timers > simk.max_timers)
		simk.max_timers = simk.n_timers;
	memset(&simk.timers[i], 0, sizeof(simk.timers[i]));
	simk.timers[i].id = id;
	return &simk.timers[i];
}

static void timer_remove(struct simk_timer *t)
{
	size_t i = (size_t)(t - simk.timers);

	memmove(&simk.timers[i], &simk.timers[i + 1],
		(simk.n_timers - i - 1) * sizeof(simk.timers[0]));
	simk.n_timers--;
}

int simk_add_timer(int32_t id)
{
	struct simk_timer *t;

	if (id < 0 || simk_find(id))
		return -1;
	t = timer_insert(id);
	t->clock_id = PTIMER_CLOCK_MONOTONIC;
	t->sigev_notify = PTIMER_SIGEV_NONE;
	return 0;
}

/*
 * clockid_to_kclock() and k_clock::timer_create: REALTIME, MONOTONIC,
 * the CPU clocks (2, 3 and negative encoded ones), BOOTTIME and TAI take
 * timers; MONOTONIC_RAW and the COARSE clocks have none; the ALARM clocks
 * give -EOPNOTSUPP as on this machine (no RTC alarm); the rest is unknown.
 */
static long check_clock(int clock_id)
{
	if (clock_id < 0)
		return 0;
	switch (clock_id) {
	case 0: case 1: case 2: case 3: case 7: case 11:
		return 0;
	case 4: case 5: case 6: case 8: case 9:
		return -PTIMER_EOPNOTSUPP;
	}
	return -PTIMER_EINVAL;
}

/* good_sigevent(): 0 or -EINVAL. */
static long check_sigevent(const struct ptimer_ksigevent *sev)
{
	switch (sev->sigev_notify) {
	case PTIMER_SIGEV_SIGNAL | PTIMER_SIGEV_THREAD_ID: {
		int found = sev->_sigev_un._tid == simk.tgid;

		for (int i = 0; i < simk.n_tids; i++)
			found |= sev->_sigev_un._tid == simk.tids[i];
		if (!found)
			return -PTIMER_EINVAL;
	}
		/* fall through */
	case PTIMER_SIGEV_SIGNAL:
	case PTIMER_SIGEV_THREAD:
		if (sev->sigev_signo <= 0 || sev->sigev_signo > SIMK_SIGRTMAX)
			return -PTIMER_EINVAL;
		/* fall through */
	case PTIMER_SIGEV_NONE:
		return 0;
	}
	return -PTIMER_EINVAL;
}

static uint32_t others_step(void)
{
	if (!simk.others_random)
		return simk.others;
	simk.rand_state = simk.rand_state * 1103515245u + 12345u;
	return (simk.rand_state >> 16) % (simk.others + 1);
}

/* posix_timer_add() without a wanted ID: the ID the counter gives, or -EAGAIN. */
static long alloc_from_counter(void)
{
	if (simk.alloc == SIMK_ALLOC_LOWEST_FREE) {
		int32_t id = 0;

		for (size_t i = 0; i < simk.n_timers && simk.timers[i].id == id; i++)
			id++;
		return id;
	}
	/* At most n_timers IDs are taken: n_timers + 1 tries find a free one,
	 * where the kernel's loop would stop after INT_MAX + 1. */
	for (uint64_t cnt = 0; cnt <= (uint64_t)simk.n_timers && cnt <= PTIMER_ID_MAX; cnt++) {
		int32_t id = simk.next_id;

		simk.next_id = (int32_t)(((uint32_t)id + 1u) & PTIMER_ID_MAX);
		if (simk.alloc == SIMK_ALLOC_SHARED_COUNTER)
			simk.next_id = (int32_t)(((uint32_t)simk.next_id + others_step()) &
						 PTIMER_ID_MAX);
		if (!simk_find(id))
			return id;
	}
	return -PTIMER_EAGAIN;
}

long sys_timer_create(int clock_id, struct ptimer_ksigevent *sev, int32_t *timer_id)
{
	struct ptimer_ksigevent def;
	struct simk_timer *t;
	long ret, id;

	simk.calls.timer_create++;
	ret = check_clock(clock_id);
	if (ret < 0)
		return ret;
	if (simk.eagain_after >= 0 && simk.calls.timer_create_ok >= simk.eagain_after)
		return -PTIMER_EAGAIN;

	if (simk.restore_ids && !simk.prctl_ignored) {
		int32_t req;

		if (!timer_id)
			return -PTIMER_EFAULT;
		req = *timer_id;
		if ((uint32_t)req > PTIMER_ID_MAX)
			return -PTIMER_EINVAL;
		if (simk_find(req))
			return -PTIMER_EBUSY;
		id = req;
	} else {
		id = alloc_from_counter();
		if (id < 0)
			return id;
	}

	if (!sev) {
		/* No sigevent: SIGALRM to the process, sival = the ID. */
		memset(&def, 0, sizeof(def));
		def.sigev_notify = PTIMER_SIGEV_SIGNAL;
		def.sigev_signo = SIMK_SIGALRM;
		def.sigev_value = (uint64_t)id;
		sev = &def;
	}
	ret = check_sigevent(sev);
	if (ret < 0)
		return ret;
	if (!timer_id)
		return -PTIMER_EFAULT;

	t = timer_insert((int32_t)id);
	t->clock_id = clock_id;
	t->sigev_notify = sev->sigev_notify;
	t->signo = sev->sigev_signo;
	t->sival = sev->sigev_value;
	if (sev->sigev_notify & PTIMER_SIGEV_THREAD_ID)
		t->notify_tid = sev->_sigev_un._tid;
	*timer_id = (int32_t)id;
	simk.calls.timer_create_ok++;
	return 0;
}

/* timespec64_valid(): seconds >= 0, nanoseconds 0..999,999,999. */
static int ts_valid(const struct ptimer_ts *ts)
{
	return ts->sec >= 0 && ts->nsec >= 0 && ts->nsec < NSEC_PER_SEC;
}

long sys_timer_settime(int32_t timer_id, int flags,
		       const struct ptimer_kitimerspec *new_value,
		       struct ptimer_kitimerspec *old_value)
{
	struct simk_timer *t;

	simk.calls.timer_settime++;
	if (!new_value)
		return -PTIMER_EINVAL;
	if (!ts_valid(&new_value->it_value) || !ts_valid(&new_value->it_interval))
		return -PTIMER_EINVAL;
	t = simk_find(timer_id);
	if (!t)
		return -PTIMER_EINVAL;
	if (timer_id == simk.fail_settime_id)
		return simk.fail_settime_err;
	if (old_value)
		*old_value = t->its;
	t->its = *new_value;
	t->settime_flags = flags;
	t->settime_calls++;
	return 0;
}

long sys_timer_gettime(int32_t timer_id, struct ptimer_kitimerspec *cur)
{
	struct simk_timer *t;

	simk.calls.timer_gettime++;
	t = simk_find(timer_id);
	if (!t)
		return -PTIMER_EINVAL;
	if (!cur)
		return -PTIMER_EFAULT;
	*cur = t->its;
	return 0;
}

long sys_timer_getoverrun(int32_t timer_id)
{
	struct simk_timer *t;

	simk.calls.timer_getoverrun++;
	t = simk_find(timer_id);
	if (!t)
		return -PTIMER_EINVAL;
	return t->overrun;
}

/* No signal is ever queued here: nothing to take. */
long sys_rt_sigtimedwait(const uint64_t *set, void *info, const struct ptimer_ts *ts)
{
	(void)set;
	(void)info;
	(void)ts;
	simk.calls.sigtimedwait++;
	return -PTIMER_EAGAIN;
}

/* A clock that stands still: the simulated timers never expire. */
long sys_clock_gettime(int clock_id, struct ptimer_ts *ts)
{
	(void)clock_id;
	ts->sec = 0;
	ts->nsec = 0;
	return 0;
}

long sys_timer_delete(int32_t timer_id)
{
	struct simk_timer *t;

	simk.calls.timer_delete++;
	t = simk_find(timer_id);
	if (!t)
		return -PTIMER_EINVAL;
	timer_remove(t);
	return 0;
}

/* Only PR_TIMER_CREATE_RESTORE_IDS (kernel/sys.c, posixtimer_create_prctl()). */
struct simk_thread *simk_thread(int32_t tid)
{
	for (int i = 0; i < simk.n_threads; i++)
		if (simk.threads[i].tid == tid)
			return &simk.threads[i];
	if (simk.n_threads == 8)
		return NULL;
	simk.threads[simk.n_threads].tid = tid;
	return &simk.threads[simk.n_threads++];
}

/*
 * PR_RSEQ_SLICE_EXTENSION in thread cur_tid, after kernel/rseq.c
 * rseq_slice_extension_prctl() (Linux 7.0): unknown option -EINVAL; arg4/5
 * and unknown arg3 bits -EINVAL; SET needs the feature (-ENOTSUPP) and a
 * registered rseq area (-ENXIO).  GET only reads the state; with
 * slice_get_checks it fails like SET does (how a kernel that checks on GET
 * too would answer).
 */
static long slice_prctl(unsigned long how, unsigned long arg3, unsigned long arg4,
			unsigned long arg5)
{
	struct simk_thread *t = simk_thread(simk.cur_tid);

	if (simk.slice == SIMK_SLICE_ABSENT || arg4 || arg5 || !t)
		return -PTIMER_EINVAL;
	if (how == PTIMER_PR_RSEQ_SLICE_EXTENSION_GET) {
		if (arg3)
			return -PTIMER_EINVAL;
		if (simk.slice_get_checks && simk.slice != SIMK_SLICE_ON)
			return -PTIMER_ENOTSUPP;
		if (simk.slice_get_checks && !t->rseq)
			return -PTIMER_ENXIO;
		return t->slice_enabled ? PTIMER_PR_RSEQ_SLICE_EXT_ENABLE : 0;
	}
	if (how != PTIMER_PR_RSEQ_SLICE_EXTENSION_SET || (arg3 & ~(unsigned long)PTIMER_PR_RSEQ_SLICE_EXT_ENABLE))
		return -PTIMER_EINVAL;
	t->slice_set_calls++;
	if (simk.slice != SIMK_SLICE_ON)
		return -PTIMER_ENOTSUPP;
	if (!t->rseq)
		return -PTIMER_ENXIO;
	/* a 32-byte (original ABI) registration gets none: the kernel set no
	 * SLICE_EXT_AVAILABLE in its flags */
	if (arg3 && t->rseq_len <= 32)
		return -PTIMER_ENOTSUPP;
	t->slice_enabled = !!arg3;
	/* the kernel's mirror in struct rseq.flags (offset 16), unless a test
	 * makes it lag */
	if (t->rseq_len > 32 && !t->flags_stuck) {
		uint32_t *flags = (uint32_t *)(uintptr_t)(t->rseq + 16);

		*flags = (*flags & ~(1u << 5)) | (1u << 4) | (t->slice_enabled ? 1u << 5 : 0);
	}
	return 0;
}

long sys_prctl(int option, unsigned long arg2, unsigned long arg3,
	       unsigned long arg4, unsigned long arg5)
{
	simk.calls.prctl++;
	if (option == PTIMER_PR_RSEQ_SLICE_EXTENSION)
		return slice_prctl(arg2, arg3, arg4, arg5);
	if (option != PTIMER_PR_TIMER_CREATE_RESTORE_IDS || !simk.prctl_supported)
		return -PTIMER_EINVAL;
	if (arg3 || arg4 || arg5)
		return -PTIMER_EINVAL;
	switch (arg2) {
	case PTIMER_PR_TIMER_CREATE_RESTORE_IDS_OFF:
		simk.restore_ids = 0;
		return 0;
	case PTIMER_PR_TIMER_CREATE_RESTORE_IDS_ON:
		simk.restore_ids = 1;
		return 0;
	case PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET:
		return simk.restore_ids;
	}
	return -PTIMER_EINVAL;
}
