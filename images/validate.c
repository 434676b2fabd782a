// SPDX-License-Identifier: MIT
/*
 * Field checks for an in-memory ptimer image, shared by the image reader,
 * the JSON reader, `encode` and the writer (so the dump path too).  The rule
 * is the kernel's: a value passes when timer_create()/timer_settime() take
 * it and the kernel then holds it as it is, so that restore gives it back
 * verbatim; everything else is refused, naming the timer and the field,
 * before any target process is touched.  The kernel's checks, read in
 * kernel/time/posix-timers.c (Linux 6.18):
 *  - do_timer_create(): clockid_to_kclock() NULL -> EINVAL, no
 *    kc->timer_create -> EOPNOTSUPP; with PR_TIMER_CREATE_RESTORE_IDS the
 *    wanted ID must be 0..INT_MAX ("Valid IDs are 0..INT_MAX").
 *  - good_sigevent(): sigev_notify exactly SIGEV_SIGNAL, SIGEV_THREAD,
 *    SIGEV_SIGNAL|SIGEV_THREAD_ID or SIGEV_NONE; for all but SIGEV_NONE
 *    sigev_signo 1..SIGRTMAX; SIGEV_NONE returns before looking at the
 *    signal, and do_timer_create() stores sigev_signo and sigev_value as
 *    given (an uninitialised 65, -7 or 12345 shows in /proc/PID/timers);
 *    SIGEV_THREAD_ID needs sigev_notify_thread_id to be a live thread of
 *    the caller's group (find_vpid(), same_thread_group()): > 0 here, the
 *    thread itself is checked at restore.
 *  - posix_cpu_timer_create() (posix-cpu-timers.c pid_for_clock()): a CPU
 *    clock id is negative, CPUCLOCK_WHICH() < CPUCLOCK_MAX, and names a
 *    live thread or process (checked at restore).
 *  - do_timer_settime(): timespec64_valid() on it_value and it_interval
 *    (include/linux/time64.h: tv_sec >= 0, 0 <= tv_nsec < NSEC_PER_SEC).
 *    timespec64_to_ktime() clamps at KTIME_MAX, and a timer whose it_value
 *    is 0 keeps no it_interval (common_timer_set(); posix-cpu-timers.c
 *    alike, measured by test/unit/test_kernel_table.c): such values are
 *    taken but not held, so they are refused as states no kernel has.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>

#include "images/image.h"
#include "lib/cmp.h"

#define NSEC_MAX	999999999LL
#define SIGNO_MAX	64		/* SIGRTMAX on Linux, uapi/asm-generic/signal.h _NSIG */

/* include/linux/posix-timers.h: CPU clock ids are ~pid << 3 | perthread | which */
#define CPUCLOCK_CLOCK_MASK	3
#define CLOCKFD			3	/* dynamic (fd) clocks: no timers on them */

/*
 * Clocks with a timer_create() in the kernel's k_clock tables
 * (kernel/time/posix-timers.c posix_clocks[], alarmtimer.c, posix-cpu-timers.c).
 * MONOTONIC_RAW 4 and the COARSE clocks 5/6 can be read but carry no timers.
 */
static bool clock_can_have_timer(int32_t clock_id)
{
	if (clock_id < 0)
		return (clock_id & CPUCLOCK_CLOCK_MASK) != CLOCKFD;
	switch (clock_id) {
	case 0:		/* CLOCK_REALTIME */
	case 1:		/* CLOCK_MONOTONIC */
	case 2:		/* CLOCK_PROCESS_CPUTIME_ID */
	case 3:		/* CLOCK_THREAD_CPUTIME_ID */
	case 7:		/* CLOCK_BOOTTIME */
	case 8:		/* CLOCK_REALTIME_ALARM */
	case 9:		/* CLOCK_BOOTTIME_ALARM */
	case 11:	/* CLOCK_TAI */
		return true;
	}
	return false;
}

/* kernel/time/posix-timers.c good_sigevent() accepts exactly these. */
static bool notify_is_valid(int32_t sigev_notify)
{
	switch (sigev_notify) {
	case PTIMER_SIGEV_SIGNAL:
	case PTIMER_SIGEV_NONE:
	case PTIMER_SIGEV_THREAD:
	case PTIMER_SIGEV_SIGNAL | PTIMER_SIGEV_THREAD_ID:
		return true;
	}
	return false;
}

#define NSEC_PER_SEC	1000000000LL
#define KTIME_MAX_NS	INT64_MAX	/* include/linux/ktime.h KTIME_MAX */

/* timespec64_valid(): what timer_settime() refuses with EINVAL; then what
 * timespec64_to_ktime() would clamp (more than KTIME_MAX ns in all). */
static int check_ts(const struct ptimer_ts *ts, const char *name, const char *what,
		    uint32_t idx, int32_t id, struct ptimer_err *err)
{
	if (ts->sec < 0) {
		return ptimer_errf(err, EINVAL, "%s: timer %" PRIu32 " (id %" PRId32 "): %s.sec %" PRId64
				   " is negative", what, idx, id, name, ts->sec);
	}
	if (ts->nsec < 0 || ts->nsec > NSEC_MAX) {
		return ptimer_errf(err, EINVAL, "%s: timer %" PRIu32 " (id %" PRId32 "): %s.nsec %" PRId64
				   " out of range 0..999999999", what, idx, id, name, ts->nsec);
	}
	if (ts->sec > (KTIME_MAX_NS - ts->nsec) / NSEC_PER_SEC) {
		return ptimer_errf(err, EINVAL, "%s: timer %" PRIu32 " (id %" PRId32 "): %s %" PRId64 ".%09" PRId64
				   " s is beyond KTIME_MAX (9223372036.854775807 s), the most a kernel timer "
				   "holds: the kernel would clamp it", what, idx, id, name, ts->sec, ts->nsec);
	}
	return 0;
}

static int check_timer(const struct ptimer_timer *t, uint32_t i, const char *what,
		       struct ptimer_err *err)
{
	int32_t id = t->timer_id;
	int ret;

	if (id < 0) {
		return ptimer_errf(err, EINVAL, "%s: timer %" PRIu32 " (id %" PRId32 "): timer_id %" PRId32
				   " out of range 0..%d", what, i, id, id, PTIMER_ID_MAX);
	}
	if (!clock_can_have_timer(t->clock_id)) {
		return ptimer_errf(err, EINVAL, "%s: timer %" PRIu32 " (id %" PRId32 "): clock_id %" PRId32
				   " is not a clock the kernel can have a timer on"
				   " (0,1,2,3,7,8,9,11 or a CPU clock)", what, i, id, t->clock_id);
	}
	if (!notify_is_valid(t->sigev_notify)) {
		return ptimer_errf(err, EINVAL, "%s: timer %" PRIu32 " (id %" PRId32 "): sigev_notify %" PRId32
				   " is not SIGNAL 0, NONE 1, THREAD 2 or THREAD_ID 4",
				   what, i, id, t->sigev_notify);
	}
	/* good_sigevent(): SIGEV_NONE keeps any sigev_signo, verbatim */
	if (t->sigev_notify != PTIMER_SIGEV_NONE && (t->signo < 1 || t->signo > SIGNO_MAX)) {
		return ptimer_errf(err, EINVAL, "%s: timer %" PRIu32 " (id %" PRId32 "): signo %" PRId32
				   " out of range 1..%d for sigev_notify %s", what, i, id, t->signo,
				   SIGNO_MAX, ptimer_notify_name(t->sigev_notify));
	}
	if (t->sigev_notify & PTIMER_SIGEV_THREAD_ID) {
		if (t->notify_tid <= 0) {
			return ptimer_errf(err, EINVAL, "%s: timer %" PRIu32 " (id %" PRId32 "): notify_tid %"
					   PRId32 " must be > 0 for sigev_notify thread_id",
					   what, i, id, t->notify_tid);
		}
	} else if (t->notify_tid < 0) {
		return ptimer_errf(err, EINVAL, "%s: timer %" PRIu32 " (id %" PRId32 "): notify_tid %" PRId32
				   " is negative", what, i, id, t->notify_tid);
	}
	ret = check_ts(&t->it_value, "it_value", what, i, id, err);
	if (ret)
		return ret;
	ret = check_ts(&t->it_interval, "it_interval", what, i, id, err);
	if (ret)
		return ret;
	/* a disarmed timer keeps no interval (common_timer_set(); CPU timers
	 * alike: test/unit/test_kernel_table.c) */
	if (!t->it_value.sec && !t->it_value.nsec &&
	    (t->it_interval.sec || t->it_interval.nsec)) {
		return ptimer_errf(err, EINVAL, "%s: timer %" PRIu32 " (id %" PRId32 "): it_interval %" PRId64 ".%09" PRId64
				   " s on a disarmed timer (it_value 0): the kernel keeps no interval then "
				   "(common_timer_set()); set it_interval to 0 or arm it", what, i, id,
				   t->it_interval.sec, t->it_interval.nsec);
	}
	if (t->clock_tid < 0 || (t->clock_tid && !ptimer_thread_clock(t->clock_id))) {
		return ptimer_errf(err, EINVAL, "%s: timer %" PRIu32 " (id %" PRId32 "): clock_tid %" PRId32 " on clock %"
				   PRId32 ": only a timer on the calling thread's CPU clock (-2, or 3) "
				   "measures a thread it does not name", what, i, id, t->clock_tid, t->clock_id);
	}
	if (t->pending != 0 && t->pending != 1) {
		return ptimer_errf(err, EINVAL, "%s: timer %" PRIu32 " (id %" PRId32 "): pending %" PRId32 " is not 0 or 1 "
				   "(a timer has one signal of its own to queue)", what, i, id, t->pending);
	}
	if (t->pending && t->sigev_notify == PTIMER_SIGEV_NONE) {
		return ptimer_errf(err, EINVAL, "%s: timer %" PRIu32 " (id %" PRId32 "): pending expiry on a SIGEV_NONE "
				   "timer, which never queues a signal", what, i, id);
	}
	if (t->pending_overrun < 0) {
		return ptimer_errf(err, EINVAL, "%s: timer %" PRIu32 " (id %" PRId32 "): pending_overrun %" PRId32
				   " is negative", what, i, id, t->pending_overrun);
	}
	if (t->overrun < 0) {
		return ptimer_errf(err, EINVAL, "%s: timer %" PRIu32 " (id %" PRId32 "): overrun %" PRId32
				   " is negative", what, i, id, t->overrun);
	}
	return 0;
}

struct id_at {
	int32_t id;
	uint32_t idx;
};

int ptimer_timer_cmp_id(const void *a, const void *b)
{
	const struct ptimer_timer *x = a, *y = b;

	return (x->timer_id > y->timer_id) - (x->timer_id < y->timer_id);
}

static int cmp_id_at(const void *a, const void *b)
{
	const struct id_at *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * The kernel keeps one timer per ID in a process, so restore would fail
 * with EBUSY on the second; report both indexes so the user can find them.
 * Sorting a copy keeps this O(n log n) for PTIMER_IMG_MAX_TIMERS entries.
 */
static int check_unique_ids(const struct ptimer_image *img, const char *what,
			    struct ptimer_err *err)
{
	struct id_at *v;
	uint32_t i;
	int ret = 0;

	if (img->n_timers < 2)
		return 0;
	v = malloc(sizeof(*v) * img->n_timers);
	if (!v) {
		return ptimer_errf(err, ENOMEM, "%s: cannot check %" PRIu32 " timer IDs for duplicates: %s",
				   what, img->n_timers, "out of memory");
	}
	for (i = 0; i < img->n_timers; i++) {
		v[i].id = img->timers[i].timer_id;
		v[i].idx = i;
	}
	qsort(v, img->n_timers, sizeof(*v), cmp_id_at);
	for (i = 1; i < img->n_timers; i++) {
		if (v[i].id == v[i - 1].id) {
			ret = ptimer_errf(err, EINVAL, "%s: timer_id %" PRId32 " is there twice (timers %" PRIu32
					  " and %" PRIu32 " of the list); a process holds each ID once: dump again, or "
					  "edit the image (ptimer show --json, ptimer encode)",
					  what, v[i].id, v[i - 1].idx < v[i].idx ? v[i - 1].idx : v[i].idx,
					  v[i - 1].idx < v[i].idx ? v[i].idx : v[i - 1].idx);
			break;
		}
	}
	free(v);
	return ret;
}

/* One thread's rseq state, as the dump can have seen it (struct rseq, uapi/linux/rseq.h). */
static int check_thread(const struct ptimer_thread *t, uint32_t i, const char *what,
			struct ptimer_err *err)
{
	if (t->tid <= 0) {
		return ptimer_errf(err, EINVAL, "%s: thread %" PRIu32 ": tid %" PRId32 " must be > 0", what, i, t->tid);
	}
	if (t->rseq_abi_size == 0 && (t->rseq_abi_pointer || t->rseq_signature)) {
		return ptimer_errf(err, EINVAL, "%s: thread %" PRIu32 " (tid %" PRId32 "): rseq abi_size 0 (no "
				   "registration) but abi_pointer 0x%" PRIx64 " / signature 0x%" PRIx32,
				   what, i, t->tid, t->rseq_abi_pointer, t->rseq_signature);
	}
	if (t->rseq_abi_size &&
	    (t->rseq_abi_size < PTIMER_RSEQ_MIN_SIZE || t->rseq_abi_size > PTIMER_RSEQ_MAX_SIZE)) {
		return ptimer_errf(err, EINVAL, "%s: thread %" PRIu32 " (tid %" PRId32 "): rseq abi_size %" PRIu32
				   " must be 0 or %u..%u", what, i, t->tid, t->rseq_abi_size,
				   PTIMER_RSEQ_MIN_SIZE, PTIMER_RSEQ_MAX_SIZE);
	}
	if (t->rseq_abi_size && !t->rseq_abi_pointer) {
		return ptimer_errf(err, EINVAL, "%s: thread %" PRIu32 " (tid %" PRId32 "): rseq abi_pointer 0 with "
				   "abi_size %" PRIu32, what, i, t->tid, t->rseq_abi_size);
	}
	if (t->slice_ext > PTIMER_SLICE_EXT_ENABLED) {
		return ptimer_errf(err, EINVAL, "%s: thread %" PRIu32 " (tid %" PRId32 "): slice_ext %" PRIu32
				   " unknown (0 unavailable, 1 disabled, 2 enabled)", what, i, t->tid, t->slice_ext);
	}
	if (t->slice_ext == PTIMER_SLICE_EXT_ENABLED && !t->rseq_abi_size) {
		return ptimer_errf(err, EINVAL, "%s: thread %" PRIu32 " (tid %" PRId32 "): slice_ext enabled without "
				   "an rseq registration (the kernel answers ENXIO then)", what, i, t->tid);
	}
	if (t->slice_ctrl && t->rseq_abi_size < PTIMER_RSEQ_SLICE_CTRL_END) {
		return ptimer_errf(err, EINVAL, "%s: thread %" PRIu32 " (tid %" PRId32 "): slice_ctrl 0x%" PRIx32
				   " but rseq abi_size %" PRIu32 " does not reach offset %u", what, i, t->tid,
				   t->slice_ctrl, t->rseq_abi_size, PTIMER_RSEQ_SLICE_CTRL_OFF);
	}
	return 0;
}

static int check_threads(const struct ptimer_image *img, const char *what, struct ptimer_err *err)
{
	int32_t *tids;
	uint32_t i;
	int ret = 0;

	if (img->n_threads > PTIMER_IMG_MAX_THREADS) {
		return ptimer_errf(err, EINVAL, "%s: %" PRIu32 " threads exceed the limit %u", what, img->n_threads,
				   PTIMER_IMG_MAX_THREADS);
	}
	if (img->n_threads && !img->threads) {
		return ptimer_errf(err, EINVAL, "%s: n_threads %" PRIu32 " but no thread array", what, img->n_threads);
	}
	for (i = 0; i < img->n_threads; i++) {
		ret = check_thread(&img->threads[i], i, what, err);
		if (ret)
			return ret;
	}
	if (img->n_threads < 2)
		return 0;
	tids = malloc(sizeof(*tids) * img->n_threads);
	if (!tids) {
		return ptimer_errf(err, ENOMEM, "%s: out of memory", what);
	}
	for (i = 0; i < img->n_threads; i++)
		tids[i] = img->threads[i].tid;
	qsort(tids, img->n_threads, sizeof(*tids), ptimer_cmp_int);
	for (i = 1; i < img->n_threads && !ret; i++) {
		if (tids[i] == tids[i - 1]) {
			ret = ptimer_errf(err, EINVAL, "%s: tid %" PRId32 " appears twice in threads", what, tids[i]);
		}
	}
	free(tids);
	return ret;
}

int ptimer_image_validate(const struct ptimer_image *img, const char *what, struct ptimer_err *err)
{
	uint32_t i;
	int ret;

	if (!what)
		what = "image";
	if (img->pid <= 0) {
		return ptimer_errf(err, EINVAL, "%s: pid %" PRId32 " must be > 0", what, img->pid);
	}
	if (img->criu_mode > PTIMER_IMG_CRIU_LAST) {
		return ptimer_errf(err, EINVAL, "%s: criu_mode %" PRIu32 " unknown (0 none, 1 plugin, 2 native, "
				   "3 auto)",
				   what, img->criu_mode);
	}
	if (img->state_in_core > 1 || (img->state_in_core && img->criu_mode == PTIMER_IMG_STANDALONE)) {
		return ptimer_errf(err, EINVAL, "%s: state_in_core %" PRIu32 " %s", what, img->state_in_core,
				   img->state_in_core > 1 ? "must be 0 or 1" : "without a criu_mode: only the "
				   "CRIU plugin leaves the timers' state in criu's core image");
	}
	if (img->timers_in_core > 1 || (img->timers_in_core && (!img->state_in_core || img->n_timers))) {
		return ptimer_errf(err, EINVAL, "%s: timers_in_core %" PRIu32 " %s", what, img->timers_in_core,
				   img->timers_in_core > 1 ? "must be 0 or 1" : "needs state_in_core 1 and no timers "
				   "listed: the timers are all in criu's core image");
	}
	if (img->n_timers > PTIMER_IMG_MAX_TIMERS) {
		return ptimer_errf(err, EINVAL, "%s: n_timers %" PRIu32 " exceeds the limit %u",
				   what, img->n_timers, PTIMER_IMG_MAX_TIMERS);
	}
	if (img->n_timers && !img->timers) {
		return ptimer_errf(err, EINVAL, "%s: n_timers %" PRIu32 " but no timer array", what, img->n_timers);
	}
	for (i = 0; i < img->n_timers; i++) {
		ret = check_timer(&img->timers[i], i, what, err);
		if (ret)
			return ret;
	}
	ret = check_threads(img, what, err);
	if (ret)
		return ret;
	return check_unique_ids(img, what, err);
}
