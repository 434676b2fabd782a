// SPDX-License-Identifier: MIT
/*
 * Image validation (images/validate.c) against the running kernel, field by
 * field and per sigev_notify kind.  Each row is one timer: the kernel is
 * asked to create and arm it in this very process (raw timer_create with the
 * exact-ID prctl, timer_settime relative), then /proc/self/timers (the
 * project's parser) and timer_gettime say what the kernel holds.
 *  - "takes" rows: the kernel creates it and holds every field as given
 *    (signal, notification, sival, clock, interval exact; remaining time
 *    not above what was set), and ptimer_image_validate() accepts it.
 *  - "refuses" rows: timer_create or timer_settime fail (EINVAL,
 *    EOPNOTSUPP), or the kernel takes the call but holds something else
 *    (clamped at KTIME_MAX, interval dropped), and ptimer_image_validate()
 *    refuses it naming the field.
 * Rows whose field is not a kernel input (overrun) are checked against the
 * validator only.  Every signal is blocked and every timer is armed for
 * hours, so nothing is ever delivered.
 */
#pragma GCC diagnostic ignored "-Woverride-init"	/* rows override BASE() fields */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <stdbool.h>

#include "core/proc_timers.h"
#include "images/image.h"
#include "test/lib/tst.h"

enum row_kind { TAKES, REFUSES, IMAGE_ONLY_GOOD, IMAGE_ONLY_BAD };

struct row {
	const char *name;		/* field / kind / value */
	enum row_kind kind;
	struct ptimer_timer t;		/* the whole timer */
	const char *field;		/* what a refusal must name */
};

#define BASE(notify, sig) .timer_id = 4242, .clock_id = CLOCK_MONOTONIC, .sigev_notify = (notify), \
	.signo = (sig), .it_value = { 3600, 0 }

static struct row rows[] = {
	/* timer_id: do_timer_create(), "Valid IDs are 0..INT_MAX" */
	{ "timer_id/signal/INT_MAX", TAKES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1), .timer_id = INT_MAX }, NULL },
	{ "timer_id/signal/0", TAKES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1), .timer_id = 0 }, NULL },
	{ "timer_id/signal/-1", REFUSES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1), .timer_id = -1 }, "timer_id -1" },
	/* clock_id: clockid_to_kclock(), kc->timer_create */
	{ "clock_id/signal/BOOTTIME 7", TAKES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1), .clock_id = 7 }, NULL },
	{ "clock_id/signal/TAI 11", TAKES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1), .clock_id = 11 }, NULL },
	{ "clock_id/none/own process CPU clock -6", TAKES, { BASE(PTIMER_SIGEV_NONE, 0), .clock_id = -6 }, NULL },
	{ "clock_id/signal/MONOTONIC_RAW 4", REFUSES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1), .clock_id = 4 },
	  "clock_id 4" },
	{ "clock_id/signal/12", REFUSES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1), .clock_id = 12 }, "clock_id 12" },
	{ "clock_id/signal/CLOCKFD -1", REFUSES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1), .clock_id = -1 },
	  "clock_id -1" },
	/* sigev_notify: good_sigevent() */
	{ "sigev_notify/thread/2", TAKES, { BASE(PTIMER_SIGEV_THREAD, SIGUSR2) }, NULL },
	{ "sigev_notify/3", REFUSES, { BASE(3, SIGUSR1) }, "sigev_notify 3" },
	{ "sigev_notify/THREAD|THREAD_ID 6", REFUSES, { BASE(PTIMER_SIGEV_THREAD | PTIMER_SIGEV_THREAD_ID, SIGUSR1),
	  .notify_tid = 1 }, "sigev_notify 6" },
	/* signo: 1..SIGRTMAX unless SIGEV_NONE, which keeps anything */
	{ "signo/signal/64", TAKES, { BASE(PTIMER_SIGEV_SIGNAL, 64) }, NULL },
	{ "signo/signal/65", REFUSES, { BASE(PTIMER_SIGEV_SIGNAL, 65) }, "signo 65" },
	{ "signo/signal/0", REFUSES, { BASE(PTIMER_SIGEV_SIGNAL, 0) }, "signo 0" },
	{ "signo/thread/-7", REFUSES, { BASE(PTIMER_SIGEV_THREAD, -7) }, "signo -7" },
	{ "signo/thread_id/1", TAKES, { BASE(PTIMER_SIGEV_SIGNAL | PTIMER_SIGEV_THREAD_ID, 1) }, NULL },
	{ "signo/thread_id/65", REFUSES, { BASE(PTIMER_SIGEV_SIGNAL | PTIMER_SIGEV_THREAD_ID, 65) }, "signo 65" },
	{ "signo/none/65", TAKES, { BASE(PTIMER_SIGEV_NONE, 65) }, NULL },
	{ "signo/none/-7", TAKES, { BASE(PTIMER_SIGEV_NONE, -7) }, NULL },
	{ "signo/none/12345", TAKES, { BASE(PTIMER_SIGEV_NONE, 12345) }, NULL },
	{ "signo/none/INT_MIN", TAKES, { BASE(PTIMER_SIGEV_NONE, INT_MIN) }, NULL },
	/* sival: stored as given, whatever the kind; the kernel refuses no value */
	{ "sival/signal/all ones", TAKES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1), .sival = UINT64_MAX }, NULL },
	{ "sival/none/1<<63", TAKES, { BASE(PTIMER_SIGEV_NONE, 12345), .sival = 1ull << 63 }, NULL },
	/* notify_tid: a thread of the group for THREAD_ID (find_vpid(), same_thread_group()) */
	{ "notify_tid/thread_id/0", REFUSES, { BASE(PTIMER_SIGEV_SIGNAL | PTIMER_SIGEV_THREAD_ID, SIGUSR1),
	  .notify_tid = 0 }, "notify_tid 0" },
	{ "notify_tid/thread_id/-1", REFUSES, { BASE(PTIMER_SIGEV_SIGNAL | PTIMER_SIGEV_THREAD_ID, SIGUSR1),
	  .notify_tid = -1 }, "notify_tid -1" },
	/* it_value: timespec64_valid(); relative expiry clamps at KTIME_MAX */
	{ "it_value/signal/0.999999999", TAKES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1), .it_value = { 0, 999999999 },
	  .it_interval = { 7200, 0 } }, NULL },
	{ "it_value/signal/100000000.5", TAKES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1),
	  .it_value = { 100000000, 5 } }, NULL },
	{ "it_value/none/0 (disarmed)", TAKES, { BASE(PTIMER_SIGEV_NONE, 0), .it_value = { 0, 0 } }, NULL },
	{ "it_value/signal/nsec 1000000000", REFUSES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1),
	  .it_value = { 1, 1000000000 } }, "it_value.nsec 1000000000" },
	{ "it_value/signal/sec -1", REFUSES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1), .it_value = { -1, 0 } },
	  "it_value.sec -1" },
	/* timespec64_to_ktime() folds it into KTIME_MAX, and the relative expiry
	 * clamps (ktime_add_safe()): timer_gettime cannot tell, so image only */
	{ "it_value/signal/KTIME_MAX+1ns", IMAGE_ONLY_BAD, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1),
	  .it_value = { 9223372036, 854775808 } }, "it_value 9223372036.854775808" },
	/* it_interval: timespec64_valid(); kept as ktime (KTIME_MAX at most) */
	{ "it_interval/signal/2.999999999", TAKES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1),
	  .it_interval = { 2, 999999999 } }, NULL },
	{ "it_interval/signal/KTIME_MAX", TAKES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1),
	  .it_interval = { 9223372036, 854775807 } }, NULL },
	{ "it_interval/none/1ns", TAKES, { BASE(PTIMER_SIGEV_NONE, 65), .it_interval = { 0, 1 } }, NULL },
	{ "it_interval/none/CPU clock 5 s", TAKES, { BASE(PTIMER_SIGEV_NONE, 0), .clock_id = -6,
	  .it_interval = { 5, 0 } }, NULL },
	{ "it_interval/none/CPU clock, disarmed, 5 s", REFUSES, { BASE(PTIMER_SIGEV_NONE, 0), .clock_id = -6,
	  .it_value = { 0, 0 }, .it_interval = { 5, 0 } }, "it_interval 5.000000000 s on a disarmed timer" },
	{ "it_interval/signal/nsec -1", REFUSES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1), .it_interval = { 1, -1 } },
	  "it_interval.nsec -1" },
	{ "it_interval/signal/KTIME_MAX+1ns", REFUSES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1),
	  .it_interval = { 9223372036, 854775808 } }, "it_interval 9223372036.854775808" },
	{ "it_interval/signal/disarmed hrtimer clock", REFUSES, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1),
	  .it_value = { 0, 0 }, .it_interval = { 5, 0 } }, "it_interval 5.000000000 s on a disarmed timer" },
	/* overrun: timer_getoverrun() output (clamped to 0..INT_MAX), never a kernel input */
	{ "overrun/INT_MAX", IMAGE_ONLY_GOOD, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1), .overrun = INT_MAX }, NULL },
	{ "overrun/-1", IMAGE_ONLY_BAD, { BASE(PTIMER_SIGEV_SIGNAL, SIGUSR1), .overrun = -1 }, "overrun -1" },
};

static bool have_exact_ids;

/* What the kernel made of a timer: -errno of create/settime, or what it holds. */
struct held {
	int create_err, settime_err;
	bool found;
	struct ptimer_timer proc;	/* from /proc/self/timers */
	struct ptimer_ts value, interval;	/* from timer_gettime */
};

static void kernel_try(const struct ptimer_timer *t, struct held *h)
{
	struct sigevent sev;
	struct itimerspec its = { { t->it_interval.sec, t->it_interval.nsec }, { t->it_value.sec, t->it_value.nsec } };
	struct itimerspec got;
	struct ptimer_timer *all = NULL;
	struct ptimer_err err;
	int id = t->timer_id;
	uint32_t n = 0;

	memset(h, 0, sizeof(*h));
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = t->sigev_notify;
	sev.sigev_signo = t->signo;
	sev.sigev_value.sival_ptr = (void *)(uintptr_t)t->sival;
	sev._sigev_un._tid = t->notify_tid;	/* sigev_notify_thread_id */
	/* raw syscall: glibc would start a helper thread for SIGEV_THREAD */
	prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_ON, 0, 0, 0);
	if (syscall(SYS_timer_create, t->clock_id, &sev, &id))
		h->create_err = -errno;
	prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_OFF, 0, 0, 0);
	if (h->create_err)
		return;
	if (syscall(SYS_timer_settime, id, 0, &its, NULL))
		h->settime_err = -errno;
	if (!h->settime_err && !syscall(SYS_timer_gettime, id, &got)) {
		h->value = (struct ptimer_ts){ got.it_value.tv_sec, got.it_value.tv_nsec };
		h->interval = (struct ptimer_ts){ got.it_interval.tv_sec, got.it_interval.tv_nsec };
	}
	if (!ptimer_proc_read_timers(getpid(), &all, &n, &err))
		for (uint32_t i = 0; i < n; i++)
			if (all[i].timer_id == id) {
				h->found = true;
				h->proc = all[i];
			}
	free(all);
	syscall(SYS_timer_delete, id);
}

static bool ts_eq(struct ptimer_ts a, struct ptimer_ts b)
{
	return a.sec == b.sec && a.nsec == b.nsec;
}

static bool ts_le(struct ptimer_ts a, struct ptimer_ts b)
{
	return a.sec < b.sec || (a.sec == b.sec && a.nsec <= b.nsec);
}

/* Does the kernel hold t as given?  why: what differs. */
static bool held_verbatim(const struct ptimer_timer *t, const struct held *h, char *why, size_t len)
{
	bool armed = t->it_value.sec || t->it_value.nsec;

	if (h->create_err || h->settime_err) {
		snprintf(why, len, "%s %s", h->create_err ? "timer_create" : "timer_settime",
			 strerror(-(h->create_err ? h->create_err : h->settime_err)));
		return false;
	}
	if (!h->found) {
		snprintf(why, len, "id %d not in /proc/self/timers", t->timer_id);
		return false;
	}
	if (h->proc.signo != t->signo || h->proc.sigev_notify != t->sigev_notify || h->proc.sival != t->sival ||
	    h->proc.clock_id != t->clock_id) {
		snprintf(why, len, "/proc shows signo %d notify %d sival %#" PRIx64 " clock %d", h->proc.signo,
			 h->proc.sigev_notify, h->proc.sival, h->proc.clock_id);
		return false;
	}
	if (!ts_eq(h->interval, t->it_interval) || (armed && !ts_le(h->value, t->it_value)) ||
	    (armed != (h->value.sec || h->value.nsec))) {
		snprintf(why, len, "timer_gettime: value %" PRId64 ".%09" PRId64 " interval %" PRId64 ".%09" PRId64,
			 h->value.sec, h->value.nsec, h->interval.sec, h->interval.nsec);
		return false;
	}
	return true;
}

static void run_row(struct row *r)
{
	struct ptimer_image img = { .version = PTIMER_IMG_VERSION, .pid = getpid(), .n_timers = 1, .timers = &r->t };
	struct ptimer_err err = { "" };
	char name[160], why[256];
	struct held h;
	int v;

	if (r->t.sigev_notify & PTIMER_SIGEV_THREAD_ID && r->t.notify_tid == 0 && !r->field)
		r->t.notify_tid = getpid();
	if (!(r->t.sigev_notify & PTIMER_SIGEV_THREAD_ID) && !r->t.notify_tid)
		r->t.notify_tid = getpid();
	if (r->t.sigev_notify == (PTIMER_SIGEV_SIGNAL | PTIMER_SIGEV_THREAD_ID) && r->kind == TAKES)
		r->t.notify_tid = getpid();
	v = ptimer_image_validate(&img, "table", &err);
	snprintf(name, sizeof(name), "table/%s/validate", r->name);
	if (r->kind == TAKES || r->kind == IMAGE_ONLY_GOOD)
		CHECK(name, v == 0, "refused: %s", err.msg);
	else
		CHECK(name, v == -EINVAL && strstr(err.msg, r->field), "ret %d, message \"%s\" (want \"%s\")", v,
		      err.msg, r->field);
	if (r->kind == IMAGE_ONLY_GOOD || r->kind == IMAGE_ONLY_BAD)
		return;
	snprintf(name, sizeof(name), "table/%s/kernel", r->name);
	if (!have_exact_ids) {
		SKIP(name, "no PR_TIMER_CREATE_RESTORE_IDS in this kernel: cannot create timer %d by ID",
		     r->t.timer_id);
		return;
	}
	if (r->t.clock_id == 11 || r->t.clock_id == 7) {
		struct timespec ts;

		if (clock_gettime(r->t.clock_id, &ts)) {
			SKIP(name, "clock %d unknown here", r->t.clock_id);
			return;
		}
	}
	kernel_try(&r->t, &h);
	if (r->kind == TAKES)
		CHECK(name, held_verbatim(&r->t, &h, why, sizeof(why)), "the kernel does not hold it: %s", why);
	else
		CHECK(name, !held_verbatim(&r->t, &h, why, sizeof(why)),
		      "the kernel holds it verbatim, yet validation refuses it");
	if (r->kind == REFUSES)
		printf("# %s: %s\n", r->name, h.create_err || h.settime_err ? why : "taken, but not held as given");
}

/* every row of the table, against the kernel and the image validator */
static void test_rows(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		run_row(&rows[i]);
}

int main(void)
{
	sigset_t all;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	have_exact_ids = prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) >= 0;
	return CHECK_RUN(CHECK_TEST(test_rows));
}
