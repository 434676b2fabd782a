/* SPDX-License-Identifier: MIT */
/*
 * The in-target restore algorithm (restorer/algo.c) against the simulated
 * kernel (test/unit/simkernel.c): exact-ID and linear restore, the
 * linear-counter, sparse-million and global-ids cases (test/cases/
 * linear-counter.sh and test/qemu/guest-suite.sh run the first two on real
 * kernels), probing,
 * reading timers, failures and rollback.  Every check prints PASS/FAIL.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "restorer/abi.h"
#include "restorer/algo.h"
#include "restorer/sys.h"
#include "test/lib/tst.h"
#include "test/unit/simkernel.h"

#define MAXT 16

struct run {
	struct ptimer_blob_args a;
	struct ptimer_timer t[MAXT];
	int32_t occ[MAXT];
};

/* A SIGEV_SIGNAL timer with values derived from its ID; every third one
 * disarmed, every second one periodic. */
static struct ptimer_timer make_timer(int32_t id)
{
	struct ptimer_timer t;

	memset(&t, 0, sizeof(t));
	t.timer_id = id;
	t.clock_id = PTIMER_CLOCK_MONOTONIC;
	t.sigev_notify = PTIMER_SIGEV_SIGNAL;
	t.signo = 34 + (int32_t)((uint32_t)id % 20);
	t.sival = 0xabcd000000000000ull | (uint32_t)id;
	t.notify_tid = simk.tgid;
	if ((uint32_t)id % 3 != 0) {
		t.it_value.sec = (uint32_t)id % 1000 + 1;
		t.it_value.nsec = 123456789;
	}
	if ((uint32_t)id % 2 == 0)
		t.it_interval.nsec = 500000000;
	return t;
}

static void setup(struct run *r, uint32_t op, uint32_t mode, const int32_t *ids, uint32_t n)
{
	memset(r, 0, sizeof(*r));
	r->a.abi_version = PTIMER_ABI_VERSION;
	r->a.op = op;
	r->a.mode = mode;
	r->a.n_timers = n;
	r->a.timers = (uint64_t)(uintptr_t)r->t;
	r->a.occupied = (uint64_t)(uintptr_t)r->occ;
	for (uint32_t i = 0; i < n; i++)
		r->t[i] = make_timer(ids[i]);
}

static void set_occupied(struct run *r, const int32_t *ids, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		r->occ[i] = ids[i];
	r->a.n_occupied = n;
}

/* Linear runs start where a probe would leave the counter. */
static void set_counter(struct run *r, int32_t counter)
{
	r->a.counter = counter;
}

/* Every timer of r exists in the kernel with its fields and arm state. */
static int timers_restored(const struct run *r, char *why, size_t len)
{
	for (uint32_t i = 0; i < r->a.n_timers; i++) {
		const struct ptimer_timer *w = &r->t[i];
		const struct simk_timer *k = simk_find(w->timer_id);
		int armed = w->it_value.sec || w->it_value.nsec;

		if (!k) {
			snprintf(why, len, "timer %d missing", w->timer_id);
			return 0;
		}
		if (k->clock_id != w->clock_id || k->sigev_notify != w->sigev_notify ||
		    k->signo != w->signo || k->sival != w->sival) {
			snprintf(why, len, "timer %d: clock %d notify %d signo %d sival %llx",
				 w->timer_id, k->clock_id, k->sigev_notify, k->signo,
				 (unsigned long long)k->sival);
			return 0;
		}
		if ((w->sigev_notify & PTIMER_SIGEV_THREAD_ID) && k->notify_tid != w->notify_tid) {
			snprintf(why, len, "timer %d: tid %d", w->timer_id, k->notify_tid);
			return 0;
		}
		if (k->settime_calls != armed ||
		    (armed && (k->settime_flags != 0 ||
			       memcmp(&k->its.it_value, &w->it_value, sizeof(w->it_value)) ||
			       memcmp(&k->its.it_interval, &w->it_interval, sizeof(w->it_interval))))) {
			snprintf(why, len, "timer %d: settime calls %d flags %d value %lld.%09lld",
				 w->timer_id, k->settime_calls, k->settime_flags,
				 (long long)k->its.it_value.sec, (long long)k->its.it_value.nsec);
			return 0;
		}
	}
	return 1;
}

static void check_restored(const char *name, const struct run *r)
{
	char why[200] = "";
	int ok = timers_restored(r, why, sizeof(why));

	CHECK(name, ok && simk.n_timers == r->a.n_timers,
	      "%s; %zu timers in kernel, %u wanted", why, simk.n_timers, r->a.n_timers);
}

static void test_abi_and_op(void)
{
	struct run r;
	long ret;

	simk_reset();
	setup(&r, PTIMER_OP_PROBE, 0, NULL, 0);
	r.a.abi_version = 99;
	ret = ptimer_blob_main(&r.a);
	CHECK("abi: version mismatch -> PTIMER_E_ABI, no syscall",
	      ret == PTIMER_E_ABI && r.a.result == PTIMER_E_ABI && simk.calls.prctl == 0,
	      "ret %ld result %lld prctl calls %ld", ret, (long long)r.a.result, simk.calls.prctl);

	setup(&r, 42, 0, NULL, 0);
	ret = ptimer_blob_main(&r.a);
	CHECK("abi: unknown op -> -EINVAL", ret == -PTIMER_EINVAL, "ret %ld", ret);

	setup(&r, PTIMER_OP_RESTORE, 7, NULL, 0);
	ret = ptimer_blob_main(&r.a);
	CHECK("abi: unknown mode -> -EINVAL", ret == -PTIMER_EINVAL, "ret %ld", ret);
}

static void test_probe(void)
{
	struct run r;
	long ret;

	/* 6.18: GET works, nothing created. */
	simk_reset();
	simk.next_id = 17;
	setup(&r, PTIMER_OP_PROBE, PTIMER_MODE_EXACT, NULL, 0);
	ret = ptimer_blob_main(&r.a);
	CHECK("probe: prctl kernel: GET 0, no timer created",
	      ret == 0 && r.a.prctl_get == 0 && r.a.probe_id == -1 &&
	      simk.calls.timer_create == 0 && simk.next_id == 17,
	      "ret %ld get %d probe_id %d creates %ld", ret, r.a.prctl_get, r.a.probe_id,
	      simk.calls.timer_create);

	/* 6.18, but the host wants the linear path measured. */
	simk_reset();
	simk.next_id = 17;
	setup(&r, PTIMER_OP_PROBE, PTIMER_MODE_LINEAR, NULL, 0);
	ret = ptimer_blob_main(&r.a);
	CHECK("probe: prctl kernel, linear asked: probe_id = counter",
	      ret == 0 && r.a.prctl_get == 0 && r.a.probe_id == 17 && simk.n_timers == 0 &&
	      simk.next_id == 18,
	      "ret %ld get %d probe_id %d timers %zu", ret, r.a.prctl_get, r.a.probe_id,
	      simk.n_timers);

	/* Before 6.15: GET is -EINVAL, the counter is probed. */
	simk_reset();
	simk.prctl_supported = 0;
	simk.next_id = 5;
	setup(&r, PTIMER_OP_PROBE, 0, NULL, 0);
	ret = ptimer_blob_main(&r.a);
	CHECK("probe: old kernel: GET -EINVAL, probe_id 5, timer deleted",
	      ret == 0 && r.a.prctl_get == -PTIMER_EINVAL && r.a.probe_id == 5 &&
	      simk.n_timers == 0 && simk.calls.timer_create == 1 && simk.calls.timer_delete == 1 &&
	      simk.next_id == 6,
	      "ret %ld get %d probe_id %d timers %zu", ret, r.a.prctl_get, r.a.probe_id,
	      simk.n_timers);

	/* The probe timer itself cannot be created. */
	simk_reset();
	simk.prctl_supported = 0;
	simk.eagain_after = 0;
	setup(&r, PTIMER_OP_PROBE, 0, NULL, 0);
	ret = ptimer_blob_main(&r.a);
	CHECK("probe: old kernel, EAGAIN -> -EAGAIN, probe_id -1",
	      ret == -PTIMER_EAGAIN && r.a.probe_id == -1 && simk.n_timers == 0,
	      "ret %ld probe_id %d", ret, r.a.probe_id);
}

/* PROBE_RESTORE: one run that probes and, where it can, restores. */
static void test_probe_restore(void)
{
	static const int32_t ids[] = { 4, 900000, 12 };
	struct run r;
	long ret;

	/* 6.15+, prctl off: probed and restored in the same run */
	simk_reset();
	simk.next_id = 9;
	setup(&r, PTIMER_OP_PROBE_RESTORE, PTIMER_MODE_EXACT, ids, 3);
	ret = ptimer_blob_main(&r.a);
	CHECK("probe-restore: prctl kernel: GET 0, 3 timers made and armed, prctl left off",
	      ret == 0 && r.a.result == 0 && r.a.prctl_get == 0 && r.a.n_created == 3 && r.a.n_armed == 3 &&
	      simk.restore_ids == 0 && simk.next_id == 9,
	      "ret %ld get %d created %u armed %u mode %d next %d", ret, r.a.prctl_get, r.a.n_created,
	      r.a.n_armed, simk.restore_ids, simk.next_id);
	check_restored("probe-restore: IDs, sigevents, clocks and values as asked", &r);

	/* exact-ID mode already on (another restore): nothing made */
	simk_reset();
	simk.restore_ids = 1;
	setup(&r, PTIMER_OP_PROBE_RESTORE, PTIMER_MODE_EXACT, ids, 3);
	ret = ptimer_blob_main(&r.a);
	CHECK("probe-restore: mode already on: GET 1, no timer made, mode left as found",
	      ret == 0 && r.a.prctl_get == 1 && simk.n_timers == 0 && simk.calls.timer_create == 0 &&
	      simk.restore_ids == 1,
	      "ret %ld get %d timers %zu creates %ld", ret, r.a.prctl_get, simk.n_timers,
	      simk.calls.timer_create);

	/* before 6.15: the probe of PTIMER_OP_PROBE, nothing more */
	simk_reset();
	simk.prctl_supported = 0;
	simk.next_id = 4;
	setup(&r, PTIMER_OP_PROBE_RESTORE, PTIMER_MODE_EXACT, ids, 3);
	ret = ptimer_blob_main(&r.a);
	CHECK("probe-restore: old kernel: as PROBE (timers[0] kept when the counter gives its ID)",
	      ret == 0 && r.a.prctl_get == -PTIMER_EINVAL && r.a.probe_id == 4 && r.a.n_created == 1 &&
	      simk.n_timers == 1 && simk_find(4) && r.a.phase != 2,
	      "ret %ld get %d probe_id %d created %u timers %zu", ret, r.a.prctl_get, r.a.probe_id,
	      r.a.n_created, simk.n_timers);

	/* linear asked on a prctl kernel: probed only */
	simk_reset();
	simk.next_id = 30;
	setup(&r, PTIMER_OP_PROBE_RESTORE, PTIMER_MODE_LINEAR, ids, 3);
	ret = ptimer_blob_main(&r.a);
	CHECK("probe-restore: linear asked: probe only, no exact-ID create",
	      ret == 0 && r.a.prctl_get == 0 && r.a.probe_id == 30 && simk.restore_ids == 0 &&
	      simk.n_timers == 0,
	      "ret %ld get %d probe_id %d timers %zu", ret, r.a.prctl_get, r.a.probe_id, simk.n_timers);

	/* a create fails half-way: what was made is deleted, prctl off */
	simk_reset();
	simk.eagain_after = 1;
	setup(&r, PTIMER_OP_PROBE_RESTORE, PTIMER_MODE_EXACT, ids, 3);
	ret = ptimer_blob_main(&r.a);
	CHECK("probe-restore: create fails at timer 1: -EAGAIN, nothing left, prctl off",
	      ret == -PTIMER_EAGAIN && r.a.result == -PTIMER_EAGAIN && r.a.fail_index == 1 &&
	      simk.n_timers == 0 && simk.restore_ids == 0,
	      "ret %ld fail_index %u timers %zu mode %d", ret, r.a.fail_index, simk.n_timers, simk.restore_ids);
}

static void test_gettime(void)
{
	static const int32_t ids[] = { 3, 70000, 2000000000 };
	struct ptimer_kitimerspec its = { { 0, 250000000 }, { 42, 7 } };
	struct run r;
	long ret;

	simk_reset();
	for (int i = 0; i < 3; i++)
		simk_add_timer(ids[i]);
	sys_timer_settime(70000, 0, &its, NULL);
	simk_find(70000)->overrun = 9;
	setup(&r, PTIMER_OP_GETTIME, 0, ids, 3);
	for (int i = 0; i < 3; i++) {
		memset(&r.t[i].it_value, 0x55, sizeof(r.t[i].it_value));
		r.t[i].overrun = -5;
	}
	ret = ptimer_blob_main(&r.a);
	CHECK("gettime: values, interval and overrun read",
	      ret == 0 && r.t[1].it_value.sec == 42 && r.t[1].it_value.nsec == 7 &&
	      r.t[1].it_interval.sec == 0 && r.t[1].it_interval.nsec == 250000000 &&
	      r.t[1].overrun == 9 && r.t[0].it_value.sec == 0 && r.t[0].it_value.nsec == 0 &&
	      r.t[0].overrun == 0 && r.t[2].overrun == 0 && simk.calls.timer_gettime == 3,
	      "ret %ld t1 %lld.%lld/%lld ovr %d", ret, (long long)r.t[1].it_value.sec,
	      (long long)r.t[1].it_value.nsec, (long long)r.t[1].it_interval.nsec, r.t[1].overrun);

	sys_timer_delete(70000);
	ret = ptimer_blob_main(&r.a);
	CHECK("gettime: missing timer -> -EINVAL, fail_index 1",
	      ret == -PTIMER_EINVAL && r.a.fail_index == 1, "ret %ld fail_index %u", ret,
	      r.a.fail_index);
}

static void test_exact(void)
{
	static const int32_t ids[] = { 5, 2000000, 1000000, 3, PTIMER_ID_MAX };
	struct run r;
	long ret;

	simk_reset();
	simk.next_id = 77;
	simk.tids[simk.n_tids++] = 1001;
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_EXACT, ids, 5);
	r.t[1].sigev_notify = PTIMER_SIGEV_THREAD_ID;
	r.t[1].notify_tid = 1001;
	r.t[2].sigev_notify = PTIMER_SIGEV_NONE;
	r.t[3].clock_id = -6;	/* process CPU clock */
	ret = ptimer_blob_main(&r.a);
	CHECK("exact: 5 timers restored, result 0",
	      ret == 0 && r.a.result == 0 && r.a.n_created == 5 && r.a.n_armed == 5,
	      "ret %ld n_created %u fail_index %u", ret, r.a.n_created, r.a.fail_index);
	check_restored("exact: IDs, sigevents, clocks and armed values as asked", &r);
	CHECK("exact: THREAD_ID timer aimed at thread 1001",
	      simk_find(2000000) && simk_find(2000000)->notify_tid == 1001,
	      "tid %d", simk_find(2000000) ? simk_find(2000000)->notify_tid : -1);
	CHECK("exact: prctl left OFF, prctl_off 0",
	      simk.restore_ids == 0 && r.a.prctl_off == 0, "mode %d prctl_off %d",
	      simk.restore_ids, r.a.prctl_off);
	CHECK("exact: 5 creates, counter untouched, no deletes",
	      simk.calls.timer_create == 5 && simk.next_id == 77 && simk.calls.timer_delete == 0,
	      "creates %ld next_id %d deletes %ld", simk.calls.timer_create, simk.next_id,
	      simk.calls.timer_delete);

	long calls = simk.calls.timer_create + simk.calls.prctl + simk.calls.timer_settime;
	ret = ptimer_blob_main(&r.a);
	CHECK("exact: running again after success changes nothing",
	      ret == 0 && simk.calls.timer_create + simk.calls.prctl + simk.calls.timer_settime == calls,
	      "ret %ld", ret);

	/* EBUSY on a taken ID: all or nothing. */
	static const int32_t busy[] = { 1, 7, 9 };
	simk_reset();
	simk_add_timer(7);
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_EXACT, busy, 3);
	ret = ptimer_blob_main(&r.a);
	CHECK("exact: taken ID -> -EBUSY, fail_index 1",
	      ret == -PTIMER_EBUSY && r.a.fail_index == 1, "ret %ld fail_index %u", ret,
	      r.a.fail_index);
	CHECK("exact: after EBUSY only the target's own timer 7 is left, prctl OFF",
	      simk.n_timers == 1 && simk_find(7) && simk.restore_ids == 0 && r.a.prctl_off == 0 &&
	      r.a.n_created == 0 && simk.calls.timer_delete == 1,
	      "timers %zu mode %d n_created %u deletes %ld", simk.n_timers, simk.restore_ids,
	      r.a.n_created, simk.calls.timer_delete);

	/* Kernel without the prctl. */
	simk_reset();
	simk.prctl_supported = 0;
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_EXACT, busy, 3);
	ret = ptimer_blob_main(&r.a);
	CHECK("exact: no prctl -> -EINVAL, nothing created",
	      ret == -PTIMER_EINVAL && simk.calls.timer_create == 0 && simk.n_timers == 0 &&
	      r.a.fail_index == PTIMER_NO_INDEX,
	      "ret %ld creates %ld", ret, simk.calls.timer_create);

	/* A kernel that takes the prctl but ignores it. */
	simk_reset();
	simk.prctl_ignored = 1;
	simk.next_id = 40;
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_EXACT, busy, 3);
	ret = ptimer_blob_main(&r.a);
	CHECK("exact: kernel ignoring the prctl -> PTIMER_E_GOTID got_id 40, nothing left",
	      ret == PTIMER_E_GOTID && r.a.got_id == 40 && r.a.fail_index == 0 &&
	      simk.n_timers == 0 && simk.restore_ids == 0,
	      "ret %ld got_id %d timers %zu", ret, r.a.got_id, simk.n_timers);

	/* Thread gone: good_sigevent() says EINVAL. */
	simk_reset();
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_EXACT, busy, 3);
	r.t[2].sigev_notify = PTIMER_SIGEV_THREAD_ID;
	r.t[2].notify_tid = 4242;
	ret = ptimer_blob_main(&r.a);
	CHECK("exact: missing thread -> -EINVAL fail_index 2, nothing left",
	      ret == -PTIMER_EINVAL && r.a.fail_index == 2 && simk.n_timers == 0 &&
	      simk.restore_ids == 0,
	      "ret %ld fail_index %u timers %zu", ret, r.a.fail_index, simk.n_timers);

	/* RLIMIT_SIGPENDING: EAGAIN at the third create. */
	simk_reset();
	simk.eagain_after = 2;
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_EXACT, busy, 3);
	ret = ptimer_blob_main(&r.a);
	CHECK("exact: EAGAIN after 2 creates -> -EAGAIN fail_index 2, nothing left",
	      ret == -PTIMER_EAGAIN && r.a.fail_index == 2 && simk.n_timers == 0 &&
	      simk.restore_ids == 0 && simk.calls.timer_delete == 2,
	      "ret %ld fail_index %u timers %zu", ret, r.a.fail_index, simk.n_timers);

	/* timer_settime fails on the second timer. */
	simk_reset();
	simk.fail_settime_id = 7;
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_EXACT, busy, 3);
	ret = ptimer_blob_main(&r.a);
	CHECK("exact: settime failure on id 7 -> -EINVAL fail_index 1, all deleted",
	      ret == -PTIMER_EINVAL && r.a.fail_index == 1 && simk.n_timers == 0 &&
	      r.a.n_created == 0 && r.a.n_armed == 0 && simk.restore_ids == 0,
	      "ret %ld fail_index %u timers %zu", ret, r.a.fail_index, simk.n_timers);
}

static void test_linear_basic(void)
{
	static const int32_t ids[] = { 0, 1, 5, 9 };
	struct run r;
	long ret;

	simk_reset();
	simk.prctl_supported = 0;
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, ids, 4);
	set_counter(&r, 0);
	ret = ptimer_blob_main(&r.a);
	CHECK("linear: from 0, IDs {0,1,5,9}: result 0",
	      ret == 0 && r.a.n_created == 4 && r.a.n_armed == 4, "ret %ld fail_index %u got_id %d",
	      ret, r.a.fail_index, r.a.got_id);
	check_restored("linear: from 0: timers and armed values as asked", &r);
	CHECK("linear: from 0: 6 pairs, 10 creates, 6 deletes, counter 10",
	      r.a.pairs_done == 6 && simk.calls.timer_create == 10 && simk.calls.timer_delete == 6 &&
	      r.a.counter == 10 && simk.next_id == 10 && simk.max_timers == 4,
	      "pairs %llu creates %ld deletes %ld counter %d/%d max %zu",
	      (unsigned long long)r.a.pairs_done, simk.calls.timer_create,
	      simk.calls.timer_delete, r.a.counter, simk.next_id, simk.max_timers);
	CHECK("linear: prctl never called", simk.calls.prctl == 0, "prctl %ld", simk.calls.prctl);
}

/* cases/linear-counter: counter at 5, image IDs 0, 3, 9. */
static void test_linear_counter_case(void)
{
	static const int32_t ids[] = { 0, 3, 9 };
	static const int32_t only9[] = { 9 };
	struct run probe, r;
	long ret;

	simk_reset();
	simk.prctl_supported = 0;
	/* The target created and deleted 5 timers. */
	for (int i = 0; i < 5; i++) {
		int32_t id;
		sys_timer_create(PTIMER_CLOCK_MONOTONIC, NULL, &id);
		sys_timer_delete(id);
	}
	setup(&probe, PTIMER_OP_PROBE, 0, NULL, 0);
	ptimer_blob_main(&probe.a);
	CHECK("linear-counter: probe sees counter at 5", probe.a.probe_id == 5,
	      "probe_id %d", probe.a.probe_id);

	memset(&simk.calls, 0, sizeof(simk.calls));
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, ids, 3);
	set_counter(&r, probe.a.probe_id + 1);
	ret = ptimer_blob_main(&r.a);
	CHECK("linear-counter: IDs 0,3,9 -> PTIMER_E_PASSED naming timer 0 (id 0)",
	      ret == PTIMER_E_PASSED && r.a.fail_index == 0 && r.t[r.a.fail_index].timer_id == 0,
	      "ret %ld fail_index %u", ret, r.a.fail_index);
	CHECK("linear-counter: nothing created, process untouched",
	      simk.calls.timer_create == 0 && simk.n_timers == 0 && r.a.n_created == 0,
	      "creates %ld timers %zu", simk.calls.timer_create, simk.n_timers);

	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, only9, 1);
	set_counter(&r, probe.a.probe_id + 1);
	ret = ptimer_blob_main(&r.a);
	CHECK("linear-counter: ID 9 alone restored with 3 pairs (6,7,8)",
	      ret == 0 && r.a.pairs_done == 3 && simk_find(9) && simk.n_timers == 1,
	      "ret %ld pairs %llu", ret, (unsigned long long)r.a.pairs_done);
}

static void test_linear_wrap(void)
{
	static const int32_t ids[] = { PTIMER_ID_MAX - 1, 2 };
	static const int32_t wrong[] = { 2, PTIMER_ID_MAX - 1 };
	struct run r;
	long ret;

	simk_reset();
	simk.prctl_supported = 0;
	simk.next_id = PTIMER_ID_MAX - 3;
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, ids, 2);
	set_counter(&r, PTIMER_ID_MAX - 3);
	ret = ptimer_blob_main(&r.a);
	CHECK("wrap: without allow_wrap ID 2 -> PTIMER_E_PASSED fail_index 1, nothing created",
	      ret == PTIMER_E_PASSED && r.a.fail_index == 1 && simk.calls.timer_create == 0,
	      "ret %ld fail_index %u creates %ld", ret, r.a.fail_index, simk.calls.timer_create);

	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, ids, 2);
	set_counter(&r, PTIMER_ID_MAX - 3);
	r.a.allow_wrap = 1;
	ret = ptimer_blob_main(&r.a);
	CHECK("wrap: allow_wrap, INT_MAX-3 -> {INT_MAX-1, 2}: result 0, 5 pairs",
	      ret == 0 && r.a.pairs_done == 5 && r.a.counter == 3 && simk.next_id == 3,
	      "ret %ld pairs %llu counter %d got_id %d", ret, (unsigned long long)r.a.pairs_done,
	      r.a.counter, r.a.got_id);
	check_restored("wrap: both timers restored", &r);

	simk_reset();
	simk.prctl_supported = 0;
	simk.next_id = PTIMER_ID_MAX - 3;
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, wrong, 2);
	set_counter(&r, PTIMER_ID_MAX - 3);
	r.a.allow_wrap = 1;
	ret = ptimer_blob_main(&r.a);
	CHECK("wrap: list not rotated -> PTIMER_E_ORDER fail_index 1, nothing created",
	      ret == PTIMER_E_ORDER && r.a.fail_index == 1 && simk.calls.timer_create == 0,
	      "ret %ld fail_index %u", ret, r.a.fail_index);

	static const int32_t dup[] = { 4, 4 };
	simk_reset();
	simk.prctl_supported = 0;
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, dup, 2);
	ret = ptimer_blob_main(&r.a);
	CHECK("linear: duplicate ID -> PTIMER_E_ORDER fail_index 1",
	      ret == PTIMER_E_ORDER && r.a.fail_index == 1 && simk.calls.timer_create == 0,
	      "ret %ld fail_index %u", ret, r.a.fail_index);
}

static void test_linear_occupied(void)
{
	static const int32_t held[] = { 3, 4, 7 };
	static const int32_t ids[] = { 5, 8 };
	static const int32_t clash[] = { 5, 7 };
	struct run r;
	long ret;

	simk_reset();
	simk.prctl_supported = 0;
	for (int i = 0; i < 3; i++)
		simk_add_timer(held[i]);
	simk.next_id = 2;
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, ids, 2);
	set_occupied(&r, held, 3);
	set_counter(&r, 2);
	ret = ptimer_blob_main(&r.a);
	CHECK("occupied: {3,4,7} held, counter 2 -> {5,8}: result 0, 2 pairs (2, 6)",
	      ret == 0 && r.a.pairs_done == 2 && simk.n_timers == 5 && simk_find(5) &&
	      simk_find(8) && simk.next_id == 9 && r.a.counter == 9,
	      "ret %ld pairs %llu timers %zu got_id %d", ret, (unsigned long long)r.a.pairs_done,
	      simk.n_timers, r.a.got_id);

	simk_reset();
	simk.prctl_supported = 0;
	for (int i = 0; i < 3; i++)
		simk_add_timer(held[i]);
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, clash, 2);
	set_occupied(&r, held, 3);
	ret = ptimer_blob_main(&r.a);
	CHECK("occupied: wanted ID 7 held -> -EBUSY fail_index 1, nothing created",
	      ret == -PTIMER_EBUSY && r.a.fail_index == 1 && simk.calls.timer_create == 0,
	      "ret %ld fail_index %u", ret, r.a.fail_index);

	/* The host did not know of timer 6: the kernel skips it, the blob
	 * expected 6 and notices. */
	simk_reset();
	simk.prctl_supported = 0;
	for (int i = 0; i < 3; i++)
		simk_add_timer(held[i]);
	simk_add_timer(6);
	simk.next_id = 6;
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, ids + 1, 1);
	set_occupied(&r, held, 3);
	set_counter(&r, 6);
	ret = ptimer_blob_main(&r.a);
	CHECK("occupied: unlisted held ID -> PTIMER_E_COUNTER got_id 8, nothing of ours left",
	      ret == PTIMER_E_COUNTER && r.a.got_id == 8 && simk.n_timers == 4 && !simk_find(8),
	      "ret %ld got_id %d timers %zu", ret, r.a.got_id, simk.n_timers);

	static const int32_t unsorted[] = { 7, 3 };
	simk_reset();
	simk.prctl_supported = 0;
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, ids, 2);
	set_occupied(&r, unsorted, 2);
	ret = ptimer_blob_main(&r.a);
	CHECK("occupied: unsorted list -> -EINVAL, nothing created",
	      ret == -PTIMER_EINVAL && simk.calls.timer_create == 0, "ret %ld", ret);
}

/* cases/global-ids */
static void test_global_ids(void)
{
	static const int32_t ids[] = { 10, 20 };
	static const struct { const char *name; enum simk_alloc alloc; uint32_t others; int rnd; } k[] = {
		{ "global-ids: counter +3 per create", SIMK_ALLOC_SHARED_COUNTER, 3, 0 },
		{ "global-ids: counter random step", SIMK_ALLOC_SHARED_COUNTER, 5, 1 },
		{ "global-ids: pre-3.11 lowest free ID", SIMK_ALLOC_LOWEST_FREE, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct run probe, r;
		char name[160];
		long ret;

		simk_reset();
		simk.prctl_supported = 0;
		simk.alloc = k[i].alloc;
		simk.others = k[i].others;
		simk.others_random = k[i].rnd;
		simk.rand_state = 7;
		setup(&probe, PTIMER_OP_PROBE, 0, NULL, 0);
		ptimer_blob_main(&probe.a);
		memset(&simk.calls, 0, sizeof(simk.calls));
		setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, ids, 2);
		set_counter(&r, probe.a.probe_id + 1);
		ret = ptimer_blob_main(&r.a);
		snprintf(name, sizeof(name), "%s -> PTIMER_E_COUNTER within 4 creates, nothing left",
			 k[i].name);
		CHECK(name, ret == PTIMER_E_COUNTER && simk.calls.timer_create <= 4 &&
		      simk.n_timers == 0 && r.a.n_created == 0 && r.a.fail_index == 0 &&
		      r.a.got_id != r.a.counter,
		      "ret %ld creates %ld timers %zu got_id %d counter %d", ret,
		      simk.calls.timer_create, simk.n_timers, r.a.got_id, r.a.counter);
	}
}

static void test_linear_failures(void)
{
	static const int32_t ids[] = { 2, 4, 8 };
	struct run r;
	long ret;

	simk_reset();
	simk.prctl_supported = 0;
	simk.eagain_after = 5;
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, ids, 3);
	ret = ptimer_blob_main(&r.a);
	CHECK("linear: EAGAIN after 5 creates -> -EAGAIN fail_index 2, nothing left",
	      ret == -PTIMER_EAGAIN && r.a.fail_index == 2 && simk.n_timers == 0 &&
	      r.a.n_created == 0 && simk.calls.timer_create == 6,
	      "ret %ld fail_index %u timers %zu creates %ld", ret, r.a.fail_index, simk.n_timers,
	      simk.calls.timer_create);

	simk_reset();
	simk.prctl_supported = 0;
	simk.fail_settime_id = 8;
	simk.fail_settime_err = -PTIMER_EPERM;
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, ids, 3);
	ret = ptimer_blob_main(&r.a);
	CHECK("linear: settime failure on id 8 -> -EPERM fail_index 2, all deleted",
	      ret == -PTIMER_EPERM && r.a.fail_index == 2 && simk.n_timers == 0 &&
	      r.a.n_created == 0 && r.a.n_armed == 0,
	      "ret %ld fail_index %u timers %zu", ret, r.a.fail_index, simk.n_timers);

	/* The real timer is refused after the counter moved (bad thread). */
	simk_reset();
	simk.prctl_supported = 0;
	setup(&r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, ids, 3);
	r.t[1].sigev_notify = PTIMER_SIGEV_THREAD_ID;
	r.t[1].notify_tid = 999999;
	ret = ptimer_blob_main(&r.a);
	CHECK("linear: missing thread -> -EINVAL fail_index 1, nothing left",
	      ret == -PTIMER_EINVAL && r.a.fail_index == 1 && simk.n_timers == 0,
	      "ret %ld fail_index %u timers %zu", ret, r.a.fail_index, simk.n_timers);
}

/* An old kernel whose counter is at 0; the probe takes ID 0 and the run
 * starts at 1, as the host sets it up. */
static void start_after_probe(struct run *r, const int32_t *ids, uint32_t n)
{
	struct run probe;

	simk_reset();
	simk.prctl_supported = 0;
	setup(&probe, PTIMER_OP_PROBE, 0, NULL, 0);
	ptimer_blob_main(&probe.a);
	memset(&simk.calls, 0, sizeof(simk.calls));
	setup(r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, ids, n);
	set_counter(r, probe.a.probe_id + 1);
}

/* cases/sparse-million: budgeted runs give what one run gives.  From
 * counter 1: 999,999 pairs (1..999,999) then 999,999 (1,000,001..1,999,999). */
static void test_budget(void)
{
	static const int32_t ids[] = { 1000000, 2000000 };
	struct run one, r;
	struct simk_counts calls_one;
	long ret;
	int runs = 0, again_ok = 1;

	start_after_probe(&one, ids, 2);
	ret = ptimer_blob_main(&one.a);
	calls_one = simk.calls;
	CHECK("sparse-million: one run: result 0, 1999998 pairs",
	      ret == 0 && one.a.pairs_done == 1999998 && simk.n_timers == 2 &&
	      simk.calls.timer_create == 2000000 && simk.calls.timer_delete == 1999998 &&
	      one.a.counter == 2000001 && simk.next_id == 2000001,
	      "ret %ld pairs %llu creates %ld", ret, (unsigned long long)one.a.pairs_done,
	      simk.calls.timer_create);
	check_restored("sparse-million: one run: timers restored", &one);

	start_after_probe(&r, ids, 2);
	r.a.budget = 300000;
	do {
		uint64_t before = r.a.pairs_done;

		ret = ptimer_blob_main(&r.a);
		runs++;
		if (ret == PTIMER_AGAIN && r.a.pairs_done - before != 300000)
			again_ok = 0;
	} while (ret == PTIMER_AGAIN && runs < 100);
	CHECK("sparse-million: budget 300000: 7 runs, each AGAIN after exactly 300000 pairs",
	      runs == 7 && again_ok, "runs %d", runs);
	CHECK("sparse-million: budgeted result equals one run",
	      ret == 0 && r.a.pairs_done == one.a.pairs_done && r.a.counter == one.a.counter &&
	      simk.calls.timer_create == calls_one.timer_create &&
	      simk.calls.timer_delete == calls_one.timer_delete &&
	      simk.calls.timer_settime == calls_one.timer_settime,
	      "ret %ld pairs %llu counter %d creates %ld", ret, (unsigned long long)r.a.pairs_done,
	      r.a.counter, simk.calls.timer_create);
	check_restored("sparse-million: budgeted: timers restored", &r);

	/* Stop half way, then roll back. */
	start_after_probe(&r, ids, 2);
	r.a.budget = 1200000;
	ret = ptimer_blob_main(&r.a);
	CHECK("budget: AGAIN with timer 1000000 created, 1200000 pairs",
	      ret == PTIMER_AGAIN && r.a.n_created == 1 && r.a.pairs_done == 1200000 &&
	      simk_find(1000000) && simk.n_timers == 1 && r.a.n_armed == 0,
	      "ret %ld n_created %u pairs %llu", ret, r.a.n_created,
	      (unsigned long long)r.a.pairs_done);
	r.a.op = PTIMER_OP_ROLLBACK;
	ret = ptimer_blob_main(&r.a);
	CHECK("rollback: timer deleted, n_created 0",
	      ret == 0 && r.a.n_created == 0 && simk.n_timers == 0, "ret %ld timers %zu", ret,
	      simk.n_timers);
	ret = ptimer_blob_main(&r.a);
	CHECK("rollback: again is a no-op", ret == 0 && simk.n_timers == 0, "ret %ld", ret);

	/* Rollback reports a timer that vanished but still clears the rest. */
	simk_reset();
	simk_add_timer(1);
	setup(&r, PTIMER_OP_ROLLBACK, 0, ids, 2);
	r.a.n_created = 2;
	r.t[0].timer_id = 1;
	ret = ptimer_blob_main(&r.a);
	CHECK("rollback: missing timer -> -EINVAL, others deleted",
	      ret == -PTIMER_EINVAL && simk.n_timers == 0 && r.a.n_created == 0,
	      "ret %ld timers %zu", ret, simk.n_timers);
}

/*
 * A probe with timers uses timers[0] itself: a counter standing exactly at
 * the lowest wanted ID must not be burnt by the probe (a fresh process has
 * its counter at 0, and ID 0 is the most common ID of all).
 */
static void test_probe_keeps_first(void)
{
	static const int32_t ids[] = { 0, 4 };
	static const int32_t ids2[] = { 3, 9 };
	struct run r;
	long ret;

	simk_reset();
	simk.prctl_supported = 0;
	setup(&r, PTIMER_OP_PROBE, PTIMER_MODE_LINEAR, ids, 2);
	ret = ptimer_blob_main(&r.a);
	CHECK("probe-first: counter at 0, wanted 0: kept, n_created 1, counter 1",
	      ret == 0 && r.a.probe_id == 0 && r.a.n_created == 1 && r.a.counter == 1 &&
	      simk_find(0) && simk.n_timers == 1,
	      "ret %ld probe_id %d n_created %u counter %d timers %zu", ret, r.a.probe_id,
	      r.a.n_created, r.a.counter, simk.n_timers);
	r.a.op = PTIMER_OP_RESTORE;
	ret = ptimer_blob_main(&r.a);
	check_restored("probe-first: restore goes on from it: 0 and 4, 3 pairs", &r);
	CHECK("probe-first: pairs 3", ret == 0 && r.a.pairs_done == 3, "ret %ld pairs %llu", ret,
	      (unsigned long long)r.a.pairs_done);

	/* counter at 1, lowest wanted 3: the probe timer is deleted again */
	simk_reset();
	simk.prctl_supported = 0;
	{
		int32_t id;

		sys_timer_create(PTIMER_CLOCK_MONOTONIC, NULL, &id);
		sys_timer_delete(id);
	}
	setup(&r, PTIMER_OP_PROBE, PTIMER_MODE_LINEAR, ids2, 2);
	ret = ptimer_blob_main(&r.a);
	CHECK("probe-first: counter 1 below wanted 3: probe_id 1, nothing kept",
	      ret == 0 && r.a.probe_id == 1 && r.a.n_created == 0 && simk.n_timers == 0,
	      "ret %ld probe_id %d n_created %u timers %zu", ret, r.a.probe_id, r.a.n_created,
	      simk.n_timers);

	/* counter past the lowest wanted: deleted; a restore then refuses and
	 * leaves nothing */
	setup(&r, PTIMER_OP_PROBE, PTIMER_MODE_LINEAR, ids2, 2);
	for (int i = 0; i < 3; i++) {
		int32_t id;

		sys_timer_create(PTIMER_CLOCK_MONOTONIC, NULL, &id);
		sys_timer_delete(id);
	}
	ret = ptimer_blob_main(&r.a);
	CHECK("probe-first: counter 5 past wanted 3: probe_id 5, nothing kept",
	      ret == 0 && r.a.probe_id == 5 && r.a.n_created == 0 && simk.n_timers == 0,
	      "ret %ld probe_id %d n_created %u", ret, r.a.probe_id, r.a.n_created);
	r.a.op = PTIMER_OP_RESTORE;
	r.a.counter = r.a.probe_id + 1;
	ret = ptimer_blob_main(&r.a);
	CHECK("probe-first: then restore -> PTIMER_E_PASSED on id 3, nothing left",
	      ret == PTIMER_E_PASSED && r.a.fail_index == 0 && simk.n_timers == 0,
	      "ret %ld fail_index %u timers %zu", ret, r.a.fail_index, simk.n_timers);

	/* kept timer, then a plan that fails: the kept one is removed too */
	simk_reset();
	simk.prctl_supported = 0;
	{
		static const int32_t bad[] = { 0, 7 };
		static const int32_t occ[] = { 7 };

		setup(&r, PTIMER_OP_PROBE, PTIMER_MODE_LINEAR, bad, 2);
		ret = ptimer_blob_main(&r.a);
		set_occupied(&r, occ, 1);
		r.a.op = PTIMER_OP_RESTORE;
		ret = ptimer_blob_main(&r.a);
		CHECK("probe-first: kept timer removed when the plan is refused (-EBUSY)",
		      ret == -PTIMER_EBUSY && simk.n_timers == 0 && r.a.n_created == 0,
		      "ret %ld timers %zu n_created %u", ret, simk.n_timers, r.a.n_created);
	}
}

int main(void)
{
	int rc;

	rc = CHECK_RUN(CHECK_TEST(test_abi_and_op), CHECK_TEST(test_probe), CHECK_TEST(test_probe_restore),
	               CHECK_TEST(test_probe_keeps_first), CHECK_TEST(test_gettime),
	               CHECK_TEST(test_exact), CHECK_TEST(test_linear_basic),
	               CHECK_TEST(test_linear_counter_case), CHECK_TEST(test_linear_wrap),
	               CHECK_TEST(test_linear_occupied), CHECK_TEST(test_global_ids),
	               CHECK_TEST(test_linear_failures), CHECK_TEST(test_budget));
	simk_reset();
	return rc;
}
