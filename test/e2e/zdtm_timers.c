/* SPDX-License-Identifier: MIT */
/*
 * zdtm_timers - a zdtm-style end-to-end test of ptimer (in the manner of
 * CRIU's test/zdtm/static/posix_timers.c), in three roles:
 *
 *   zdtm_timers setup  SCENARIO STATEDIR
 *	create the scenario's threads and timers, write STATEDIR/setup.pid,
 *	STATEDIR/setup.tids (one tid a line, leader first) and then
 *	STATEDIR/setup.ready; then wait forever to be dumped and killed.
 *
 *   zdtm_timers verify SCENARIO STATEDIR [LABEL]
 *	create the same thread layout but no timers (some verify-only
 *	scenarios prepare the target: see below), write verify.pid, verify.tids
 *	and verify.ready; wait for STATEDIR/restored (ptimer restore has run),
 *	then check every timer the scenario defines and print one
 *	PASS/FAIL/SKIP line a check (test/lib/tst.h).  Exit 1 on any FAIL.
 *
 *   zdtm_timers criu SCENARIO STATEDIR [LABEL]
 *	for real criu (test/criu/suite.sh): the restored process is this very
 *	process.  Create the scenario's threads and timers (as setup), write
 *	criu.pid, criu.tids, criu.nstids and criu.ready, then poll for
 *	STATEDIR/restored (criu dump, criu restore, then the caller creates
 *	it).  Then learn the tids again (the /proc view changes when criu
 *	restores a pid namespace), run verify's checks on its own timers,
 *	write the PASS/FAIL/SKIP lines to STATEDIR/criu.result and then
 *	STATEDIR/criu.done, and exit (1 on any FAIL).  Timers aimed at a thread
 *	the scenario ends (exited) are expected back as SIGEV_NONE.
 *
 * Scenarios are deterministic: both roles compute the same expected list.
 * A "*.ready" file appears by rename, so its presence means the others are
 * complete.  ROLE.pid and ROLE.tids hold pids as the mounted /proc shows them
 * (the host's view when the process runs in its own pid namespace under the
 * parent's /proc), ROLE.nstids the tids in the process's own namespace.  Exit status 4 from setup: the kernel lacks something the
 * scenario needs (message on stderr); the caller reports a SKIP.
 *
 * Everything timer-related goes through raw syscalls: glibc's timer_create()
 * passes its own kernel_timer_t to the kernel, not the caller's timer_t, so
 * the ID wanted under PR_TIMER_CREATE_RESTORE_IDS would never reach it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/file.h"
#include "lib/procfs.h"
#include "test/lib/tst.h"

/* uapi/linux/prctl.h (Linux 6.15, kernel commit ec2d0c04624b) */
#define PR_TIMER_CREATE_RESTORE_IDS	77
#define PR_TIMER_CREATE_RESTORE_IDS_OFF	0
#define PR_TIMER_CREATE_RESTORE_IDS_ON	1

/* clock placeholder: clock_getcpuclockid(getpid()) of whichever role runs */
#define CLOCK_SELF_CPU	INT_MIN

#define MAX_THREADS	2
#define EXIT_UNSUPPORTED 4
#define SEC(s)		{ (s), 0 }
#define MS(ms)		{ (ms) / 1000, ((ms) % 1000) * 1000000L }

/* Bulk timers get values spaced this far apart so that a value restored on
 * the wrong timer is caught; a restore may take at most VALUE_SLACK s. */
#define BULK_SPACING	1000
#define VALUE_SLACK	300

struct xtimer {
	int32_t id;
	clockid_t clock;	/* as given to timer_create, or CLOCK_SELF_CPU */
	int notify;		/* SIGEV_SIGNAL, SIGEV_NONE or SIGEV_THREAD_ID */
	int signo;
	uint64_t sival;
	int thread;		/* SIGEV_THREAD_ID: index in the thread layout */
	struct timespec value, interval;
	bool optional;		/* the clock may be unavailable (alarm clocks) */
	bool fires;		/* periodic with a signal: check that it fires */
	const char *what;	/* for messages */
};

struct scenario {
	const char *name;
	int nthreads;
	bool exact_ids;		/* setup creates with the exact-ID prctl */
	bool verify_only;	/* no setup role (the image comes from elsewhere) */
	int verify_prepare_counter;	/* verify: create+delete this many first */
	bool verify_creates;	/* verify: holds the timers itself before ready */
	size_t (*build)(struct xtimer *t);	/* fills t (NULL: count only) */
	int exit_thread;	/* criu role: this thread exits once the timers exist (0: none) */
};

/* ---- scenarios -------------------------------------------------------- */

static size_t add(struct xtimer *t, size_t i, struct xtimer x)
{
	if (t)
		t[i] = x;
	return i + 1;
}

/*
 * mix: one timer per clock the kernel can put a timer on, every notification
 * kind, armed/periodic/disarmed.  IDs come from the process's counter, so the
 * order is the ID.  Failed timer_create()s consume an ID (measured on 6.18:
 * an alarm timer failing EOPNOTSUPP moves the counter), so the optional
 * alarm-clock timers come last.
 */
static size_t build_mix(struct xtimer *t)
{
	const uint64_t sv = 0x1122334455667788ull;
	size_t n = 0;
	int r = SIGRTMIN;

	n = add(t, n, (struct xtimer){ .id = 0, .clock = CLOCK_REALTIME, .notify = SIGEV_SIGNAL,
		.signo = r + 0, .sival = sv + 0, .value = SEC(1000), .what = "REALTIME signal one-shot" });
	n = add(t, n, (struct xtimer){ .id = 1, .clock = CLOCK_MONOTONIC, .notify = SIGEV_SIGNAL,
		.signo = r + 1, .sival = sv + 1, .value = MS(50), .interval = MS(100), .fires = true,
		.what = "MONOTONIC signal periodic" });
	n = add(t, n, (struct xtimer){ .id = 2, .clock = CLOCK_BOOTTIME, .notify = SIGEV_NONE,
		.signo = r + 2, .sival = sv + 2, .value = SEC(1000), .what = "BOOTTIME none one-shot" });
	n = add(t, n, (struct xtimer){ .id = 3, .clock = CLOCK_TAI, .notify = SIGEV_SIGNAL,
		.signo = r + 3, .sival = sv + 3, .what = "TAI signal disarmed" });
	n = add(t, n, (struct xtimer){ .id = 4, .clock = CLOCK_PROCESS_CPUTIME_ID, .notify = SIGEV_SIGNAL,
		.signo = r + 4, .sival = sv + 4, .value = SEC(1000), .what = "PROCESS_CPUTIME signal" });
	n = add(t, n, (struct xtimer){ .id = 5, .clock = CLOCK_THREAD_CPUTIME_ID, .notify = SIGEV_NONE,
		.signo = r + 5, .sival = sv + 5, .value = SEC(1000), .what = "THREAD_CPUTIME none" });
	n = add(t, n, (struct xtimer){ .id = 6, .clock = CLOCK_SELF_CPU, .notify = SIGEV_SIGNAL,
		.signo = r + 6, .sival = sv + 6, .value = SEC(1000), .interval = SEC(7),
		.what = "clock_getcpuclockid(getpid()) signal" });
	n = add(t, n, (struct xtimer){ .id = 7, .clock = CLOCK_MONOTONIC, .notify = SIGEV_THREAD_ID,
		.signo = r + 7, .sival = sv + 7, .thread = 1, .value = MS(50), .interval = MS(100),
		.fires = true, .what = "MONOTONIC thread_id->thread1 periodic" });
	n = add(t, n, (struct xtimer){ .id = 8, .clock = CLOCK_REALTIME, .notify = SIGEV_THREAD_ID,
		.signo = r + 8, .sival = sv + 8, .thread = 0, .value = SEC(1000),
		.what = "REALTIME thread_id->leader one-shot" });
	n = add(t, n, (struct xtimer){ .id = 9, .clock = CLOCK_MONOTONIC, .notify = SIGEV_SIGNAL,
		.signo = r + 9, .sival = sv + 9, .value = SEC(500), .interval = { 1, 500000000 },
		.what = "MONOTONIC signal 500 s, interval 1.5 s" });
	n = add(t, n, (struct xtimer){ .id = 10, .clock = CLOCK_MONOTONIC, .notify = SIGEV_SIGNAL,
		.signo = r + 10, .sival = sv + 10, .what = "MONOTONIC signal disarmed" });
	n = add(t, n, (struct xtimer){ .id = 11, .clock = CLOCK_REALTIME_ALARM, .notify = SIGEV_SIGNAL,
		.signo = r + 11, .sival = sv + 11, .value = SEC(1000), .optional = true,
		.what = "REALTIME_ALARM signal" });
	n = add(t, n, (struct xtimer){ .id = 12, .clock = CLOCK_BOOTTIME_ALARM, .notify = SIGEV_NONE,
		.signo = r + 12, .sival = sv + 12, .value = SEC(1000), .optional = true,
		.what = "BOOTTIME_ALARM none" });
	return n;
}

/* sparse: two timers, IDs 1,000,000 and 2,000,000 (a field case: 2,000,001
 * create/delete pairs in linear mode). */
static size_t build_sparse(struct xtimer *t)
{
	size_t n = 0;

	n = add(t, n, (struct xtimer){ .id = 1000000, .clock = CLOCK_MONOTONIC, .notify = SIGEV_SIGNAL,
		.signo = SIGRTMIN, .sival = 1000000, .value = SEC(1000), .what = "id 1,000,000" });
	n = add(t, n, (struct xtimer){ .id = 2000000, .clock = CLOCK_REALTIME, .notify = SIGEV_NONE,
		.sival = 2000000, .value = SEC(2000), .interval = SEC(5), .what = "id 2,000,000" });
	return n;
}

/* Bulk timers: SIGEV_NONE, values spaced BULK_SPACING s apart, some with an
 * interval, every 7th disarmed when `some_disarmed`. */
static struct xtimer bulk_timer(size_t i, int32_t id, bool some_disarmed)
{
	struct xtimer x = { .id = id, .clock = (i % 3) ? CLOCK_MONOTONIC : CLOCK_REALTIME,
			    .notify = SIGEV_NONE, .sival = (uint64_t)id, .what = "bulk" };

	/* A disarmed timer keeps no interval: timer_settime() with a zero
	 * it_value reads back it_interval 0 (measured on 6.18). */
	if (some_disarmed && i % 7 == 3)
		return x;
	x.value.tv_sec = 3600 + (i % 50) * BULK_SPACING;
	if (i % 5 == 0) {
		x.interval.tv_sec = 1 + i % 1000;
		x.interval.tv_nsec = (long)((i * 7919) % 1000000000);
	}
	return x;
}

static size_t build_stride(struct xtimer *t)
{
	for (size_t i = 0; t && i < 2048; i++)
		t[i] = bulk_timer(i, (int32_t)(i * 512), false);
	return 2048;
}

/* sparse100k: 100 timers with IDs 100,000 apart (0 .. 9,900,000). */
static size_t build_sparse100k(struct xtimer *t)
{
	for (size_t i = 0; t && i < 100; i++)
		t[i] = bulk_timer(i, (int32_t)(i * 100000), false);
	return 100;
}

static size_t build_dense(struct xtimer *t)
{
	for (size_t i = 0; t && i < 2048; i++)
		t[i] = bulk_timer(i, (int32_t)i, false);
	return 2048;
}

static size_t build_many(struct xtimer *t)
{
	for (size_t i = 0; t && i < 50000; i++)
		t[i] = bulk_timer(i, (int32_t)i, true);
	return 50000;
}

/* threads: a periodic SIGEV_THREAD_ID timer aimed at each thread. */
static size_t build_threads(struct xtimer *t)
{
	size_t n = 0;

	n = add(t, n, (struct xtimer){ .id = 0, .clock = CLOCK_MONOTONIC, .notify = SIGEV_THREAD_ID,
		.signo = SIGRTMIN + 1, .sival = 0xa0, .thread = 0, .value = MS(30), .interval = MS(100),
		.fires = true, .what = "thread_id->leader periodic" });
	n = add(t, n, (struct xtimer){ .id = 1, .clock = CLOCK_MONOTONIC, .notify = SIGEV_THREAD_ID,
		.signo = SIGRTMIN + 2, .sival = 0xa1, .thread = 1, .value = MS(70), .interval = MS(100),
		.fires = true, .what = "thread_id->thread1 periodic" });
	n = add(t, n, (struct xtimer){ .id = 2, .clock = CLOCK_REALTIME, .notify = SIGEV_THREAD_ID,
		.signo = SIGRTMIN + 3, .sival = 0xa2, .thread = 1, .value = SEC(1000),
		.what = "thread_id->thread1 one-shot" });
	return n;
}

/*
 * exited: a SIGEV_THREAD_ID timer aimed at a thread that exits after the
 * timer was made (the timer keeps the dead tid).  criu alone cannot restore
 * it ("Can't create posix timer - 1: -22"); ptimer dumps it as SIGEV_NONE
 * with a warning.  Only the criu role (exit_thread) ends the thread.
 */
static size_t build_exited(struct xtimer *t)
{
	size_t n = 0;

	n = add(t, n, (struct xtimer){ .id = 0, .clock = CLOCK_MONOTONIC, .notify = SIGEV_SIGNAL,
		.signo = SIGRTMIN + 1, .sival = 0xe0, .value = MS(40), .interval = MS(100),
		.fires = true, .what = "signal periodic" });
	n = add(t, n, (struct xtimer){ .id = 1, .clock = CLOCK_MONOTONIC, .notify = SIGEV_THREAD_ID,
		.signo = SIGRTMIN + 2, .sival = 0xe1, .thread = 1, .value = SEC(1000),
		.interval = SEC(3), .what = "thread_id->exited thread" });
	n = add(t, n, (struct xtimer){ .id = 2, .clock = CLOCK_REALTIME, .notify = SIGEV_THREAD_ID,
		.signo = SIGRTMIN + 3, .sival = 0xe2, .thread = 0, .value = SEC(1000),
		.what = "thread_id->leader" });
	return n;
}

/*
 * lean: one thread with more timers than the CRIU plugin reads
 * /proc/PID/timers for when criu's core image alone carries them (64 KiB
 * of it, PTIMER_DUMP_LEAN_BYTES): every clock and notification a thread of
 * its own can hold (its own CPU clock, the process's, SIGEV_THREAD_ID at
 * itself, periodic ones), then 1,500 bulk timers.  None expires while the
 * case runs: an expiry whose signal is queued when criu stops the task
 * makes the plugin read every timer (case pending-expiry-many).
 */
#define LEAN_BULK	1500
static size_t build_lean(struct xtimer *t)
{
	size_t n = 0;
	int r = SIGRTMIN;

	n = add(t, n, (struct xtimer){ .id = 0, .clock = CLOCK_MONOTONIC, .notify = SIGEV_SIGNAL,
		.signo = r + 1, .sival = 0x1ea0, .value = SEC(1000), .interval = MS(100),
		.what = "MONOTONIC signal periodic" });
	n = add(t, n, (struct xtimer){ .id = 1, .clock = CLOCK_THREAD_CPUTIME_ID, .notify = SIGEV_SIGNAL,
		.signo = r + 2, .sival = 0x1ea1, .value = SEC(1000), .what = "THREAD_CPUTIME signal" });
	n = add(t, n, (struct xtimer){ .id = 2, .clock = CLOCK_PROCESS_CPUTIME_ID, .notify = SIGEV_NONE,
		.sival = 0x1ea2, .value = SEC(1000), .interval = SEC(3), .what = "PROCESS_CPUTIME none" });
	n = add(t, n, (struct xtimer){ .id = 3, .clock = CLOCK_SELF_CPU, .notify = SIGEV_SIGNAL,
		.signo = r + 3, .sival = 0x1ea3, .value = SEC(1000), .what = "clock_getcpuclockid(getpid())" });
	n = add(t, n, (struct xtimer){ .id = 4, .clock = CLOCK_BOOTTIME, .notify = SIGEV_THREAD_ID,
		.signo = r + 4, .sival = 0x1ea4, .thread = 0, .value = SEC(1000), .interval = MS(150),
		.what = "BOOTTIME thread_id->itself periodic" });
	n = add(t, n, (struct xtimer){ .id = 5, .clock = CLOCK_REALTIME, .notify = SIGEV_THREAD_ID,
		.signo = r + 5, .sival = 0x1ea5, .thread = 0, .what = "REALTIME thread_id->itself disarmed" });
	for (size_t i = 0; i < LEAN_BULK; i++)
		n = add(t, n, bulk_timer(i, (int32_t)n, true));
	return n;
}

/*
 * lean-exited: exited's timers, one aimed at a thread that exits, and the
 * bulk of lean: a process that had another thread needs the plugin's look
 * however many timers it holds.
 */
static size_t build_lean_exited(struct xtimer *t)
{
	size_t n = build_exited(t);

	for (size_t i = 0; i < LEAN_BULK; i++)
		n = add(t, n, bulk_timer(i, (int32_t)n, true));
	return n;
}

/*
 * container: what test/containers/ runs as a container's pid 1 (built
 * static): five timers with IDs 0, 1, 100002, 100003, 100004 (the exact-ID
 * prctl) on REALTIME, MONOTONIC, BOOTTIME and PROCESS_CPUTIME, three of them
 * periodic and checked to fire after restore, and one SIGEV_THREAD_ID aimed
 * at the leader, pid 1 of the container (criu alone cannot restore that one:
 * "Can't create posix timer").  Two threads, as container programs have.
 */
static size_t build_container(struct xtimer *t)
{
	size_t n = 0;
	int r = SIGRTMIN;

	n = add(t, n, (struct xtimer){ .id = 0, .clock = CLOCK_REALTIME, .notify = SIGEV_SIGNAL,
		.signo = r + 0, .sival = 0xc0, .value = SEC(1000), .what = "REALTIME one-shot" });
	n = add(t, n, (struct xtimer){ .id = 1, .clock = CLOCK_MONOTONIC, .notify = SIGEV_SIGNAL,
		.signo = r + 1, .sival = 0xc1, .value = MS(70), .interval = MS(100), .fires = true,
		.what = "MONOTONIC periodic" });
	n = add(t, n, (struct xtimer){ .id = 100002, .clock = CLOCK_BOOTTIME, .notify = SIGEV_THREAD_ID,
		.signo = r + 2, .sival = 0xc2, .thread = 0, .value = MS(90), .interval = MS(150),
		.fires = true, .what = "BOOTTIME thread_id->pid 1" });
	n = add(t, n, (struct xtimer){ .id = 100003, .clock = CLOCK_PROCESS_CPUTIME_ID, .notify = SIGEV_NONE,
		.sival = 0xc3, .value = SEC(1000), .what = "PROCESS_CPUTIME none" });
	n = add(t, n, (struct xtimer){ .id = 100004, .clock = CLOCK_REALTIME, .notify = SIGEV_SIGNAL,
		.signo = r + 4, .sival = 0xc4, .value = MS(110), .interval = MS(200), .fires = true,
		.what = "REALTIME periodic" });
	return n;
}

/*
 * container-bench: the container set with its SIGEV_THREAD_ID timer aimed at
 * the second thread instead of pid 1, which criu alone can restore: the
 * container benchmark times criu with and without the plugin on it.
 */
static size_t build_container_bench(struct xtimer *t)
{
	size_t n = build_container(t);

	if (t)
		t[2].thread = 1;
	return n;
}

/*
 * fastperiodic: periodic SIGEV_NONE timers with intervals of 2..9 ms.  At
 * any moment each has less than its interval left, and one that expires
 * between a restore arming it and a check reloads from its interval: a
 * check must accept a value later than the dumped one (up to the interval).
 */
static size_t build_fastperiodic(struct xtimer *t)
{
	size_t n = 0;

	for (int i = 0; i < 8; i++)
		n = add(t, n, (struct xtimer){ .id = i, .clock = CLOCK_MONOTONIC, .notify = SIGEV_NONE,
			.sival = 0xf0 + i, .value = MS(2), .interval = MS(2 + i),
			.what = "SIGEV_NONE periodic, a few ms" });
	return n;
}

/*
 * offset-target: what the linear-counter case's image holds (test/e2e.sh
 * writes the same timers as JSON with image pid 4242).  The verify role
 * first creates and deletes 5 timers, so its counter stands at 5.
 */
static size_t build_offset(struct xtimer *t)
{
	size_t n = 0;

	n = add(t, n, (struct xtimer){ .id = 0, .clock = CLOCK_MONOTONIC, .notify = SIGEV_NONE,
		.signo = 0, .sival = 0, .value = SEC(1000), .what = "id 0" });
	n = add(t, n, (struct xtimer){ .id = 3, .clock = CLOCK_REALTIME, .notify = SIGEV_SIGNAL,
		.signo = SIGRTMIN + 3, .sival = 0x33, .value = SEC(1000), .what = "id 3" });
	n = add(t, n, (struct xtimer){ .id = 9, .clock = CLOCK_MONOTONIC, .notify = SIGEV_SIGNAL,
		.signo = SIGRTMIN + 9, .sival = 0x99, .value = MS(100), .interval = MS(100),
		.fires = true, .what = "id 9 periodic" });
	return n;
}

/* holder: a target that already holds ID 3 (verify creates it itself). */
static size_t build_holder(struct xtimer *t)
{
	return add(t, 0, (struct xtimer){ .id = 3, .clock = CLOCK_BOOTTIME, .notify = SIGEV_NONE,
		.signo = SIGRTMIN + 5, .sival = 0x5eed, .value = SEC(1000), .what = "held id 3" });
}

/* cpuclocks: per-thread CPU clocks of the leader and of the second thread:
 * their clock IDs encode a tid that restore has to map. */
static size_t build_cpuclocks(struct xtimer *t)
{
	size_t n = 0;

	/* clock values are filled in per role: see resolve_clock() */
	n = add(t, n, (struct xtimer){ .id = 0, .clock = CLOCK_SELF_CPU, .notify = SIGEV_SIGNAL,
		.signo = SIGRTMIN, .sival = 0xc0, .value = SEC(1000), .what = "process CPU clock of self" });
	n = add(t, n, (struct xtimer){ .id = 1, .clock = -1000 /* thread 0 */, .notify = SIGEV_NONE,
		.sival = 0xc1, .value = SEC(1000), .what = "thread CPU clock of the leader" });
	n = add(t, n, (struct xtimer){ .id = 2, .clock = -1001 /* thread 1 */, .notify = SIGEV_SIGNAL,
		.signo = SIGRTMIN + 1, .sival = 0xc2, .value = SEC(1000),
		.what = "thread CPU clock of thread1" });
	return n;
}

/* demo: sparse IDs plus a few of mix's kinds (test/demo.sh). */
static size_t build_demo(struct xtimer *t)
{
	size_t n = 0;
	int r = SIGRTMIN;

	n = add(t, n, (struct xtimer){ .id = 7, .clock = CLOCK_MONOTONIC, .notify = SIGEV_SIGNAL,
		.signo = r + 1, .sival = 7, .value = MS(500), .interval = SEC(1), .fires = true,
		.what = "periodic 1 s" });
	n = add(t, n, (struct xtimer){ .id = 42, .clock = CLOCK_BOOTTIME, .notify = SIGEV_THREAD_ID,
		.signo = r + 2, .sival = 42, .thread = 1, .value = SEC(600), .what = "to thread 1" });
	n = add(t, n, (struct xtimer){ .id = 1000000, .clock = CLOCK_REALTIME, .notify = SIGEV_SIGNAL,
		.signo = r + 3, .sival = 1000000, .value = SEC(1000), .what = "id 1,000,000" });
	n = add(t, n, (struct xtimer){ .id = 2000000, .clock = CLOCK_PROCESS_CPUTIME_ID,
		.notify = SIGEV_NONE, .sival = 2000000, .value = SEC(2000), .what = "id 2,000,000" });
	return n;
}

static size_t build_none(struct xtimer *t)
{
	return 0;
}

static const struct scenario scenarios[] = {
	{ "mix", 2, false, false, 0, false, build_mix, 0 },
	{ "sparse", 1, true, false, 0, false, build_sparse, 0 },
	{ "stride", 1, true, false, 0, false, build_stride, 0 },
	{ "dense", 1, false, false, 0, false, build_dense, 0 },
	{ "many", 1, false, false, 0, false, build_many, 0 },
	{ "threads", 2, false, false, 0, false, build_threads, 0 },
	{ "cpuclocks", 2, false, false, 0, false, build_cpuclocks, 0 },
	{ "demo", 2, true, false, 0, false, build_demo, 0 },
	{ "sparse100k", 1, true, false, 0, false, build_sparse100k, 0 },
	{ "exited", 2, false, false, 0, false, build_exited, 1 },
	{ "fastperiodic", 1, false, false, 0, false, build_fastperiodic, 0 },
	{ "lean", 1, false, false, 0, false, build_lean, 0 },
	{ "lean-exited", 2, false, false, 0, false, build_lean_exited, 1 },
	{ "container", 2, true, false, 0, false, build_container, 0 },
	{ "container-bench", 2, true, false, 0, false, build_container_bench, 0 },
	/* verify-only targets */
	{ "offset-target", 1, false, true, 5, false, build_offset, 0 },
	{ "offset-empty", 1, false, true, 5, false, build_none, 0 },
	{ "holder", 1, true, true, 0, true, build_holder, 0 },
	{ "empty", 1, false, true, 0, false, build_none, 0 },
	{ "empty2", 2, false, true, 0, false, build_none, 0 },
};

/* ---- threads and signals ------------------------------------------------ */

static pid_t tids[MAX_THREADS];
static volatile sig_atomic_t fired[_NSIG];
static volatile pid_t fired_tid[_NSIG];

static void count_signal(int signo)
{
	fired[signo]++;
	fired_tid[signo] = (pid_t)syscall(SYS_gettid);
}

static void install_handlers(void)
{
	struct sigaction sa = { .sa_handler = count_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
		sigaction(s, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
}

static volatile int thread_exit[MAX_THREADS];

static void *thread_main(void *arg)
{
	intptr_t i = (intptr_t)arg;

	tids[i] = (pid_t)syscall(SYS_gettid);
	while (!__atomic_load_n(&thread_exit[i], __ATOMIC_ACQUIRE))
		pause();
	return NULL;
}

static pthread_t threads[MAX_THREADS];

/*
 * The tids as the mounted /proc shows them.  They differ from gettid() when
 * this process is pid 1 of its own pid namespace and /proc is the parent's
 * (a field case: a timer aimed at the leader of a pid namespace, /proc read
 * from the parent's): /proc/self/timers prints pids as its
 * mount sees them.  Each /proc/self/task/T/status ends its NSpid: line with
 * the innermost tid; T is the mount's view.
 */
static pid_t proc_tids[MAX_THREADS];

static void learn_proc_tids(int n)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	for (int i = 0; i < n; i++)
		proc_tids[i] = tids[i];
	while (d && (e = readdir(d))) {
		pid_t ns;

		if (e->d_name[0] == '.')
			continue;
		ns = ptimer_proc_nspid(0, atoi(e->d_name));
		for (int i = 0; i < n; i++)
			if (ns == tids[i])
				proc_tids[i] = atoi(e->d_name);
	}
	if (d)
		closedir(d);
}

static void start_threads(int n)
{
	tids[0] = getpid();
	threads[0] = pthread_self();
	for (intptr_t i = 1; i < n; i++) {
		if (pthread_create(&threads[i], NULL, thread_main, (void *)i)) {
			fprintf(stderr, "zdtm_timers: pthread_create failed\n");
			exit(2);
		}
		while (!__atomic_load_n(&tids[i], __ATOMIC_ACQUIRE))
			usleep(1000);
	}
}

/*
 * RLIMIT_SIGPENDING is charged per user for every timer, SIGEV_NONE included
 * (measured on 6.18: with the limit at 100, the 101st SIGEV_NONE timer_create
 * fails EAGAIN just as SIGEV_SIGNAL does; the sigqueue embedded in k_itimer is
 * accounted at creation).  The check compares the user's total against the
 * creating task's own limit, so raising it here (root) lets this process hold
 * 50,000 timers whatever other root processes hold.  Restore creates the
 * timers inside the verify process: it raises its limit too.
 */
static void raise_sigpending(void)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (setrlimit(RLIMIT_SIGPENDING, &rl)) {
		rl.rlim_cur = rl.rlim_max = 1u << 22;
		setrlimit(RLIMIT_SIGPENDING, &rl);
	}
}

/* ---- timers --------------------------------------------------------------- */

static long sys_timer_create(clockid_t clock, struct sigevent *ev, int32_t *id)
{
	return syscall(SYS_timer_create, clock, ev, id);
}

static long sys_timer_settime(int32_t id, const struct itimerspec *its)
{
	return syscall(SYS_timer_settime, id, 0, its, NULL);
}

static long sys_timer_gettime(int32_t id, struct itimerspec *its)
{
	return syscall(SYS_timer_gettime, id, its);
}

/* The clock to pass to timer_create in this process. */
static clockid_t resolve_clock(clockid_t c)
{
	clockid_t r;

	if (c == CLOCK_SELF_CPU) {
		if (clock_getcpuclockid(getpid(), &r))
			return c;
		return r;
	}
	if (c == -1000 || c == -1001) {
		if (pthread_getcpuclockid(threads[-1000 - c], &r))
			return c;
		return r;
	}
	return c;
}

/* The ClockID /proc/self/timers shows for a timer created on c:
 * include/linux/posix-timers.h, PROCESS_CLOCK and THREAD_CLOCK. */
static clockid_t proc_clock(clockid_t c)
{
	c = resolve_clock(c);
	if (c == CLOCK_PROCESS_CPUTIME_ID)
		return -6;
	if (c == CLOCK_THREAD_CPUTIME_ID)
		return -2;
	return c;
}

static void fill_sigevent(struct sigevent *ev, const struct xtimer *x)
{
	memset(ev, 0, sizeof(*ev));
	ev->sigev_notify = x->notify;
	ev->sigev_signo = x->signo;
	ev->sigev_value.sival_ptr = (void *)(uintptr_t)x->sival;
	if (x->notify == SIGEV_THREAD_ID)
		ev->sigev_notify_thread_id = tids[x->thread];
}

/*
 * create_timers - create and arm t[0..n) in this process, with the exact-ID
 * prctl when exact.  Optional timers whose clock is unavailable are left out
 * (their IDs are last, see build_mix()).  Returns 0, or exits with a message.
 */
static void create_timers(const struct xtimer *t, size_t n, bool exact)
{
	if (exact && prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_ON, 0, 0, 0)) {
		fprintf(stderr, "zdtm_timers: prctl(PR_TIMER_CREATE_RESTORE_IDS, ON): %s: "
			"this kernel cannot create timers with chosen IDs (needs Linux 6.15+)\n",
			strerror(errno));
		exit(EXIT_UNSUPPORTED);
	}
	for (size_t i = 0; i < n; i++) {
		struct sigevent ev;
		int32_t id = t[i].id;

		fill_sigevent(&ev, &t[i]);
		if (sys_timer_create(resolve_clock(t[i].clock), &ev, &id)) {
			if (t[i].optional)
				continue;
			fprintf(stderr, "zdtm_timers: timer_create(id %d, %s): %s\n",
				t[i].id, t[i].what, strerror(errno));
			exit(2);
		}
		if (id != t[i].id) {
			fprintf(stderr, "zdtm_timers: timer_create(%s) gave id %d, expected %d\n",
				t[i].what, id, t[i].id);
			exit(2);
		}
		struct itimerspec its = { .it_value = t[i].value, .it_interval = t[i].interval };
		if (sys_timer_settime(id, &its)) {
			fprintf(stderr, "zdtm_timers: timer_settime(id %d): %s\n", id, strerror(errno));
			exit(2);
		}
	}
	if (exact)
		prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_OFF, 0, 0, 0);
}

/* Whether a clock can carry a timer here: tried in a child, whose own timer
 * ID counter is fresh, so this process's counter does not move. */
static int clock_probe(clockid_t c)
{
	pid_t p = fork();
	int st;

	if (p == 0) {
		struct sigevent ev = { .sigev_notify = SIGEV_NONE };
		int32_t id;
		_exit(sys_timer_create(c, &ev, &id) ? errno : 0);
	}
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return EIO;
	return WEXITSTATUS(st);
}

/* ---- state files ---------------------------------------------------------- */

static void announce(const char *dir, const char *role, int nthreads)
{
	char name[64], buf[64 * MAX_THREADS];
	size_t off = 0;

	(void)dir;
	snprintf(name, sizeof(name), "%s.pid", role);
	tst_put(name, "%d\n", proc_tids[0]);
	for (int i = 0; i < nthreads; i++)
		off += snprintf(buf + off, sizeof(buf) - off, "%d\n", proc_tids[i]);
	snprintf(name, sizeof(name), "%s.tids", role);
	tst_put(name, "%s", buf);
	off = 0;
	for (int i = 0; i < nthreads; i++)
		off += snprintf(buf + off, sizeof(buf) - off, "%d\n", tids[i]);
	snprintf(name, sizeof(name), "%s.nstids", role);
	tst_put(name, "%s", buf);
	snprintf(name, sizeof(name), "%s.ready", role);
	tst_put(name, "ready\n");
}

/* ---- /proc/self/timers ------------------------------------------------------ */

struct proc_timer {
	int32_t id;
	int signo;
	uint64_t sival;
	char kind[8];		/* signal, none, thread */
	char target[4];		/* pid, tid */
	pid_t tid;
	int32_t clock;
};

static int cmp_proc(const void *a, const void *b)
{
	const struct proc_timer *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Parse /proc/self/timers; returns the entries sorted by id, or NULL. */
static struct proc_timer *read_proc_timers(size_t *count, char *why, size_t whylen)
{
	size_t len, cap = 0, n = 0;
	char *buf = NULL, *line, *save = NULL;
	struct proc_timer *pt = NULL, *cur = NULL;
	struct ptimer_err err;
	unsigned seen = 0;

	if (ptimer_file_read("/proc/self/timers", NULL, SIZE_MAX / 2, 0, &buf, &len, &err)) {
		snprintf(why, whylen, "%.200s", err.msg);
		return NULL;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "ID: ", 4)) {
			if (n == cap) {
				cap = cap ? cap * 2 : 1024;
				pt = realloc(pt, cap * sizeof(*pt));
			}
			cur = &pt[n++];
			memset(cur, 0, sizeof(*cur));
			cur->id = atoi(line + 4);
			seen = 1;
		} else if (cur && sscanf(line, "signal: %d/%" SCNx64, &cur->signo, &cur->sival) == 2) {
			seen |= 2;
		} else if (cur && sscanf(line, "notify: %7[^/]/%3[^.].%d", cur->kind, cur->target,
					 &cur->tid) == 3) {
			seen |= 4;
		} else if (cur && sscanf(line, "ClockID: %d", &cur->clock) == 1) {
			seen |= 8;
		} else {
			snprintf(why, whylen, "unexpected line in /proc/self/timers: '%.60s'", line);
			free(buf);
			free(pt);
			return NULL;
		}
		(void)seen;
	}
	free(buf);
	if (n)
		qsort(pt, n, sizeof(*pt), cmp_proc);
	*count = n;
	return pt ? pt : calloc(1, sizeof(*pt));
}

/* ---- reporting -------------------------------------------------------------- */

enum chk { C_EXISTS, C_CLOCK, C_NOTIFY, C_SIGNO, C_SIVAL, C_TID, C_INTERVAL, C_VALUE, C_N };
static const char *const chk_name[C_N] = {
	"exists", "clock", "notify", "signo", "sival", "notify_tid", "it_interval", "it_value",
};

/* Up to 32 timers: one line per timer and check; beyond: one line per check. */
#define PER_TIMER_MAX 32

struct agg {
	unsigned long bad, total;
	char first[3][200];
};

static struct agg aggs[C_N];
static bool per_timer;
static const char *label;

static void verdict(const struct xtimer *x, enum chk c, bool ok, const char *fmt, ...)
{
	char msg[200] = "";
	va_list ap;

	if (!ok) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
	}
	if (per_timer) {
		char name[128];

		snprintf(name, sizeof(name), "%s/id%d %s", label, x->id, chk_name[c]);
		if (ok)
			PASS(name);
		else
			FAIL(name, "%s (%s)", msg, x->what);
		return;
	}
	aggs[c].total++;
	if (!ok) {
		if (aggs[c].bad < 3)
			snprintf(aggs[c].first[aggs[c].bad], sizeof(aggs[c].first[0]), "id %d: %s",
				 x->id, msg);
		aggs[c].bad++;
	}
}

static void flush_aggregates(void)
{
	char name[128];

	if (per_timer)
		return;
	for (int c = 0; c < C_N; c++) {
		snprintf(name, sizeof(name), "%s/all-%lu %s", label, aggs[c].total, chk_name[c]);
		if (!aggs[c].bad)
			PASS(name);
		else
			FAIL(name, "%lu of %lu timers differ, first: %s%s%s%s%s", aggs[c].bad,
			     aggs[c].total, aggs[c].first[0], aggs[c].bad > 1 ? "; " : "",
			     aggs[c].bad > 1 ? aggs[c].first[1] : "", aggs[c].bad > 2 ? "; " : "",
			     aggs[c].bad > 2 ? aggs[c].first[2] : "");
	}
}

static int64_t ts_ns(struct timespec t)
{
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static const char *notify_text(int notify)
{
	switch (notify) {
	case SIGEV_SIGNAL: return "signal/pid";
	case SIGEV_NONE: return "none/pid";
	case SIGEV_THREAD_ID: return "signal/tid";
	default: return "?";
	}
}

/* Check one timer against /proc (p may be NULL: no entry) and timer_gettime. */
static void check_timer(const struct xtimer *x, const struct proc_timer *p)
{
	struct itimerspec its;
	bool exists = sys_timer_gettime(x->id, &its) == 0;
	int gerr = errno;
	char got[16];
	pid_t want_tid = proc_tids[x->notify == SIGEV_THREAD_ID ? x->thread : 0];

	verdict(x, C_EXISTS, exists, "timer_gettime(%d): %s", x->id, strerror(gerr));
	if (!p) {
		for (int c = C_CLOCK; c <= C_TID; c++)
			verdict(x, c, false, "no id %d in /proc/self/timers", x->id);
	} else {
		snprintf(got, sizeof(got), "%s/%s", p->kind, p->target);
		verdict(x, C_CLOCK, p->clock == proc_clock(x->clock), "ClockID %d, want %d",
			p->clock, proc_clock(x->clock));
		verdict(x, C_NOTIFY, !strcmp(got, notify_text(x->notify)), "notify %s, want %s",
			got, notify_text(x->notify));
		verdict(x, C_SIGNO, p->signo == x->signo, "signo %d, want %d", p->signo, x->signo);
		verdict(x, C_SIVAL, p->sival == x->sival, "sival %#" PRIx64 ", want %#" PRIx64,
			p->sival, x->sival);
		verdict(x, C_TID, p->tid == want_tid, "%s.%d, want %s.%d (thread %d here)",
			p->target, p->tid, x->notify == SIGEV_THREAD_ID ? "tid" : "pid", want_tid,
			x->thread);
	}
	if (!exists) {
		verdict(x, C_INTERVAL, false, "timer does not exist");
		verdict(x, C_VALUE, false, "timer does not exist");
		return;
	}
	verdict(x, C_INTERVAL, ts_ns(its.it_interval) == ts_ns(x->interval),
		"it_interval %ld.%09ld, want %ld.%09ld", (long)its.it_interval.tv_sec,
		its.it_interval.tv_nsec, (long)x->interval.tv_sec, x->interval.tv_nsec);

	int64_t v = ts_ns(its.it_value), armed = ts_ns(x->value), iv = ts_ns(x->interval);
	int64_t hi = armed > iv ? armed : iv, lo = 1;

	/* Long one-shot values must come back near what was armed: catches a
	 * value restored onto the wrong timer.  Short/periodic ones only need to
	 * be running. */
	if (armed >= 600 * 1000000000LL)
		lo = armed - VALUE_SLACK * 1000000000LL;
	if (!armed)
		verdict(x, C_VALUE, v == 0, "it_value %ld.%09ld, want 0 (disarmed)",
			(long)its.it_value.tv_sec, its.it_value.tv_nsec);
	else
		verdict(x, C_VALUE, v >= lo && v <= hi,
			"it_value %ld.%09ld, want in [%.3f, %.3f] s", (long)its.it_value.tv_sec,
			its.it_value.tv_nsec, lo / 1e9, hi / 1e9);
}

/* A periodic signal timer delivers within 2 s, to the thread it names. */
static void check_fires(const struct xtimer *x)
{
	char name[128];
	sig_atomic_t before = fired[x->signo];
	struct timespec ts = { 0, 10 * 1000000L };
	int i;

	for (i = 0; i < 200 && fired[x->signo] == before; i++)
		nanosleep(&ts, NULL);
	snprintf(name, sizeof(name), "%s/id%d fires", label, x->id);
	CHECK(name, fired[x->signo] != before, "signal %d not delivered within 2 s (%s)",
	      x->signo, x->what);
	if (x->notify != SIGEV_THREAD_ID || fired[x->signo] == before)
		return;
	snprintf(name, sizeof(name), "%s/id%d delivered-to-thread", label, x->id);
	CHECK(name, fired_tid[x->signo] == tids[x->thread],
	      "signal %d handled by tid %d, want thread %d = tid %d (%s)", x->signo,
	      fired_tid[x->signo], x->thread, tids[x->thread], x->what);
}

/* Which optional timers this machine cannot have (SKIP lines); the probe
 * child must not run while ptimer or criu works on this process. */
static void probe_optional(const struct xtimer *t, size_t n, bool *skip)
{
	char name[128];

	for (size_t i = 0; i < n; i++) {
		int e = t[i].optional ? clock_probe(t[i].clock) : 0;

		if (e) {
			snprintf(name, sizeof(name), "%s/id%d", label, t[i].id);
			SKIP(name, "%s: timer_create on clock %d fails here: %s%s", t[i].what,
			     t[i].clock, strerror(e),
			     e == EOPNOTSUPP ? " (no RTC alarm)" : e == EPERM ?
			     " (needs CAP_WAKE_ALARM)" : "");
			skip[i] = true;
		}
	}
	fflush(stdout);
}

/* After the restore: every timer of t[0..n) but the skipped ones, and no
 * other timer.  PASS/FAIL lines on stdout. */
static void check_all(const struct xtimer *t, size_t n, const bool *skip)
{
	size_t np = 0, nexp = 0;
	char why[256], name[128];
	struct proc_timer *pt;

	per_timer = n <= PER_TIMER_MAX;
	pt = read_proc_timers(&np, why, sizeof(why));
	snprintf(name, sizeof(name), "%s/proc-timers", label);
	if (!pt) {
		FAIL(name, "%s", why);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct proc_timer key = { .id = t[i].id }, *p;

		if (skip[i])
			continue;
		nexp++;
		p = np ? bsearch(&key, pt, np, sizeof(*pt), cmp_proc) : NULL;
		check_timer(&t[i], p);
	}
	flush_aggregates();
	for (size_t i = 0; i < n; i++)
		if (!skip[i] && t[i].fires)
			check_fires(&t[i]);

	snprintf(name, sizeof(name), "%s/timer-count", label);
	if (np == nexp) {
		PASS(name);
	} else {
		char extra[128] = "";
		size_t off = 0;

		for (size_t j = 0, k = 0; j < np && k < 5; j++) {
			bool want = false;

			for (size_t i = 0; i < n && !want; i++)
				want = !skip[i] && t[i].id == pt[j].id;
			if (!want) {
				off += snprintf(extra + off, sizeof(extra) - off, " %d", pt[j].id);
				k++;
			}
		}
		FAIL(name, "/proc/self/timers has %zu timers, want %zu; unexpected ids:%s", np, nexp,
		     off ? extra : " none");
	}
	free(pt);
}

static int verify(const struct scenario *sc, const char *dir)
{
	size_t n = sc->build(NULL);
	struct xtimer *t = calloc(n ? n : 1, sizeof(*t));
	bool *skip = calloc(n ? n : 1, sizeof(bool));
	char name[128];

	sc->build(t);
	per_timer = n <= PER_TIMER_MAX;
	probe_optional(t, n, skip);
	if (sc->verify_prepare_counter) {
		for (int i = 0; i < sc->verify_prepare_counter; i++) {
			struct sigevent ev = { .sigev_notify = SIGEV_NONE };
			int32_t id;

			if (sys_timer_create(CLOCK_MONOTONIC, &ev, &id) ||
			    syscall(SYS_timer_delete, id)) {
				fprintf(stderr, "zdtm_timers: preparing the counter: %s\n",
					strerror(errno));
				return 2;
			}
		}
	}
	if (sc->verify_creates)
		create_timers(t, n, sc->exact_ids || sc->verify_prepare_counter);
	announce(dir, "verify", sc->nthreads);

	if (!tst_wait("restored", NULL, 120)) {
		snprintf(name, sizeof(name), "%s/restored", label);
		FAIL(name, "%s/restored did not appear within 120 s", dir);
		return tst_done();
	}
	check_all(t, n, skip);
	free(t);
	free(skip);
	return tst_done();
}

/*
 * criu role: this process is dumped and restored by criu itself.  The wait
 * for STATEDIR/restored is a poll (nanosleep), which criu restarts across
 * the dump and restore.
 */
static int criu_role(const struct scenario *sc, const char *dir)
{
	size_t n = sc->build(NULL);
	struct xtimer *t = calloc(n ? n : 1, sizeof(*t));
	bool *skip = calloc(n ? n : 1, sizeof(bool));
	char name[128];
	int nthreads = sc->nthreads;

	if (sc->verify_only) {
		fprintf(stderr, "zdtm_timers: scenario %s has no setup role\n", sc->name);
		return 2;
	}
	sc->build(t);
	probe_optional(t, n, skip);	/* SKIP lines go to criu.out */
	create_timers(t, n, sc->exact_ids);
	if (sc->exit_thread > 0 && sc->exit_thread < nthreads) {
		int e = sc->exit_thread;

		__atomic_store_n(&thread_exit[e], 1, __ATOMIC_RELEASE);
		pthread_kill(threads[e], SIGALRM);
		pthread_join(threads[e], NULL);
		tst_thread_gone(tids[e]);	/* not in ROLE.tids */
		/* What ptimer makes of a timer aimed at a thread that is gone. */
		for (size_t i = 0; i < n; i++)
			if (t[i].notify == SIGEV_THREAD_ID && t[i].thread == e) {
				t[i].notify = SIGEV_NONE;
				t[i].thread = 0;
				t[i].fires = false;
			}
		nthreads = e;	/* the exited thread is the last one */
	}
	announce(dir, "criu", nthreads);

	/* 30 minutes: more than any dump + restore the suite runs; then the
	 * lines go to DIR/criu.result */
	if (!tst_wait_restored(NULL, 1800)) {
		fprintf(stderr, "zdtm_timers: %s/restored did not appear\n", dir);
		return 2;
	}
	/* criu restores the tids in the process's namespace; the /proc view
	 * (pid namespace of the caller) may have changed. */
	learn_proc_tids(nthreads);
	for (size_t i = 0; i < n; i++)
		if (skip[i]) {
			snprintf(name, sizeof(name), "%s/id%d", label, t[i].id);
			SKIP(name, "%s: clock %d unavailable here", t[i].what, t[i].clock);
		}
	check_all(t, n, skip);
	free(t);
	free(skip);
	return tst_done();	/* the totals, then criu.done */
}

static int setup(const struct scenario *sc, const char *dir)
{
	size_t n = sc->build(NULL);
	struct xtimer *t = calloc(n ? n : 1, sizeof(*t));

	if (sc->verify_only) {
		fprintf(stderr, "zdtm_timers: scenario %s has no setup role\n", sc->name);
		return 2;
	}
	sc->build(t);
	create_timers(t, n, sc->exact_ids);
	free(t);
	announce(dir, "setup", sc->nthreads);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	const struct scenario *sc = NULL;

	if (argc < 4 || (strcmp(argv[1], "setup") && strcmp(argv[1], "verify") &&
			 strcmp(argv[1], "criu"))) {
		fprintf(stderr, "usage: %s setup|verify|criu SCENARIO STATEDIR [LABEL]\n",
			argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (!strcmp(argv[2], scenarios[i].name))
			sc = &scenarios[i];
	if (!sc) {
		fprintf(stderr, "zdtm_timers: unknown scenario '%s'\n", argv[2]);
		return 2;
	}
	label = argc > 4 ? argv[4] : sc->name;
	/* the library's static stdio buffer: a lazily malloc'ed one could
	 * change /proc/PID/maps while ptimer works on this process */
	tst_init(argv[1], argv[3], "");
	raise_sigpending();
	install_handlers();
	start_threads(sc->nthreads);
	learn_proc_tids(sc->nthreads);
	if (!strcmp(argv[1], "setup"))
		return setup(sc, argv[3]);
	if (!strcmp(argv[1], "criu"))
		return criu_role(sc, argv[3]);
	return verify(sc, argv[3]);
}
