// SPDX-License-Identifier: MIT
/*
 * slice_grants ROLE DIR - rseq time-slice extensions in use, for the
 * slice-grants case (test/cases/slice-grants): threads that ask the kernel
 * for an extension around a critical section, under CPU contention, and
 * count what they are granted, before a checkpoint and after the restore.
 *
 * The threads, in this order (the roles of a fresh process map onto them
 * in the same order, test/lib/driver.sh tidmap):
 *   0 leader  glibc's own registration, left as glibc made it; coordinates
 *   1 prctl   its own struct rseq of getauxval(AT_RSEQ_FEATURE_SIZE) bytes
 *             (33 on 7.x) aligned on AT_RSEQ_ALIGN, glibc's unregistered
 *             first (the kernel grants extensions only to such "v2"
 *             registrations: kernel/rseq.c rseq_register, 7.0+), enabled
 *             by prctl(PR_RSEQ_SLICE_EXTENSION, SET, ENABLE)
 *   2 flag    the same, enabled by registering with
 *             RSEQ_FLAG_SLICE_EXT_DEFAULT_ON
 *   3 off     the same registration, extensions left disabled: it asks
 *             and must never be granted
 *   4 flag-off the same, registered with RSEQ_FLAG_SLICE_EXT_DEFAULT_ON
 *             and then disabled by prctl(PR_RSEQ_SLICE_EXTENSION, SET, 0):
 *             asks, never granted
 *   5 v1      its own 32-byte registration (the original rseq ABI, as
 *             glibc 2.35-2.39 makes): no extension can be enabled there;
 *             spins
 *   6 hog     glibc's registration, spins: with the ones above, more
 *             busy threads than CPUs, so the tick has someone to preempt
 *             for (a guest of the matrix has one vCPU)
 * and, while grants are counted only, a control: a thread like prctl,
 * made, enabled and ended for each count (it is never dumped), whose rate
 * says how the host changed between the two counts (PERIOD_NS).
 * Threads 1-4 loop over a critical section the way
 * Documentation/userspace-api/rseq.rst shows it: slice_ctrl.request = 1,
 * the section (it writes a sequence number into 8 words, spins, and reads
 * them back: a section found torn is "lost"), request = 0, and when
 * slice_ctrl.granted is set a grant is counted and rseq_slice_yield(2)
 * (syscall 471) gives the CPU back.
 *
 * Roles (test/lib/tst.h protocol):
 *   setup  threads 1 and 2 enabled; measures grants per second for
 *          PERIOD s, writes DIR/slice-state (what each thread's
 *          registration and slice state are) and its rates, then ready
 *   verify a fresh process: the same threads, every own registration of
 *          the feature size made with RSEQ_FLAG_SLICE_EXT_DEFAULT_ON (a
 *          program that enables by default: the restore must disable off
 *          and flag-off); after DIR/restored (ptimer restore of setup's
 *          image) checks each thread against DIR/slice-state and grants
 *          against setup's rates
 *   criu   setup, then, once DIR/restored appears (criu dumped and
 *          restored this process), the same checks in this process
 *          against its own state before the dump
 * Checks (tag slice-grants): slice-grants-before-dump (threads 1 and 2
 * granted, 3 and 4 never), registration-as-dumped (each thread's rseq(2) area:
 * re-registering the same pointer, length and signature answers EBUSY),
 * slice-state-as-dumped (prctl GET and the kernel-written flags bits
 * AVAILABLE/ENABLED per thread), slice-grants-after-restore (threads 1
 * and 2 granted at least half as often per second as before, each rate
 * taken relative to the control's beside it; 3 and 4 never),
 * critical-sections-lost-0, sections-run-after-restore (every section
 * thread made progress).  "#" notes give the counts and rates.
 * Exits 4 (a SKIP) before ready when the kernel cannot grant extensions,
 * with the kernel's answer.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/rseq_slice.h"
#include "test/lib/tst.h"

#define NR_rseq_slice_yield		471		/* every architecture (asm-generic table) */

/* struct rseq of uapi/linux/rseq.h, 7.0: slice_ctrl at 28, end at 33 */
struct rseq_v2 {
	uint32_t cpu_id_start;
	uint32_t cpu_id;
	uint64_t rseq_cs;
	uint32_t flags;
	uint32_t node_id;
	uint32_t mm_cid;
	volatile uint8_t request;	/* slice_ctrl: set by user space */
	volatile uint8_t granted;	/* set by the kernel only */
	uint16_t reserved;
	uint8_t end;
};

enum { LEADER, PRCTL, FLAG, OFF, FLAGOFF, V1, HOG, NT };
static const char *const role_name[NT] = { "leader", "prctl", "flag", "off", "flag-off", "v1", "hog" };
/* Grants per second are counted over PERIOD_NS, before the dump and after
 * the restore, in each thread and in a control: a thread made for the
 * measurement only, registered and enabled afresh each time, that exits
 * after it (it is never dumped).  Under TCG the rate follows the host's
 * load (a grant the host's scheduler outlasts expires unseen): fresh
 * processes read 22 to 165 grants/s on a host running a second make check,
 * 55 and 136 within one guest.  The restored threads are held to the
 * control measured beside them: a restored thread is granted at least
 * half as often, relative to the control, as it was before the dump. */
#define PERIOD_NS	3000000000L
#define WORDS		8

struct th {
	pthread_t pt;
	int role;			/* its index in T; the control: PRCTL */
	bool control;			/* the control thread (measure), always enabled */
	_Atomic int stop;		/* the control's end */
	struct rseq_v2 *rs;		/* own registration (PRCTL..V1); else glibc's area */
	uint32_t len;			/* the registered length */
	int tid;
	int start_err;			/* a failure while registering: -errno */
	const char *start_what;
	/* counters the thread writes, the leader reads */
	_Atomic unsigned long sections, grants, yields, torn;
	/* a self-report the leader asks for (ask != done) */
	_Atomic int ask, done;
	int get;			/* prctl GET: 1, 0, or -errno */
	int rereg;			/* rseq() of the same area again: -EBUSY is "the same" */
	uint32_t flags;			/* struct rseq.flags & (AVAILABLE|ENABLED) */
	uint64_t ptr;
};

static struct th T[NT];
static struct th ctl = { .role = PRCTL, .control = true };
static bool enable;		/* setup and criu: threads PRCTL and FLAG enable;
				   verify: every own v2 registration starts enabled */
static uint32_t feature_size, align_to;
static _Atomic int started;

static void report(struct th *t)
{
	void *area = t->rs ? (void *)t->rs : glibc_area();

	t->get = prctl(PR_RSEQ_SLICE_EXTENSION_, PR_RSEQ_SLICE_EXTENSION_GET_, 0, 0, 0);
	if (t->get < 0)
		t->get = -errno;
	t->rereg = t->len ? (int)rseq_sys(area, t->len, 0, RSEQ_SIG) : 0;
	t->flags = ((volatile struct rseq_v2 *)area)->flags & (SLICE_EXT_AVAILABLE | SLICE_EXT_ENABLED);
	t->ptr = (uint64_t)(uintptr_t)area;
	atomic_store(&t->done, atomic_load(&t->ask));
}

/* rseq(2) at len bytes (feature_size, or 32: the original ABI) for this
 * thread, glibc's dropped first. */
static int register_own(struct th *t, uint32_t len, int flags)
{
	uint32_t gl = glibc_len(feature_size, align_to);
	size_t sz = (len + align_to - 1) / align_to * align_to;
	long r;

	if (gl && (r = rseq_sys(glibc_area(), gl, RSEQ_FLAG_UNREGISTER_, RSEQ_SIG))) {
		t->start_what = "unregistering glibc's rseq area";
		return (int)r;
	}
	if (posix_memalign((void **)&t->rs, align_to, sz)) {
		t->start_what = "posix_memalign";
		return -ENOMEM;
	}
	memset(t->rs, 0, sz);
	t->len = len;
	r = rseq_sys(t->rs, t->len, flags, RSEQ_SIG);
	if (r)
		t->start_what = flags ? "rseq(RSEQ_FLAG_SLICE_EXT_DEFAULT_ON)" : "rseq()";
	return (int)r;
}

static void *worker(void *arg)
{
	struct th *t = arg;
	int idx = t->role, r = 0;
	bool on = enable || t->control;
	volatile unsigned long data[WORDS];
	uint8_t saw;

	t->tid = gettid();
	if (idx == HOG) {
		t->len = glibc_len(feature_size, align_to);
	} else if (idx == V1) {
		r = register_own(t, 32, 0);
	} else {
		/* setup and criu: PRCTL enables by prctl, FLAG by the flag,
		 * FLAGOFF by the flag and disables by prctl, OFF never; verify,
		 * a fresh copy: every one by the flag */
		int set = idx == PRCTL && on ? 1 : idx == FLAGOFF && !t->control && enable ? 0 : -1;
		bool flag = (!enable && !t->control) || idx == FLAG || idx == FLAGOFF;

		r = register_own(t, feature_size, flag ? RSEQ_FLAG_SLICE_EXT_DEFAULT_ON_ : 0);
		if (!r && set >= 0 &&
		    prctl(PR_RSEQ_SLICE_EXTENSION_, PR_RSEQ_SLICE_EXTENSION_SET_,
			  set ? PR_RSEQ_SLICE_EXT_ENABLE_ : 0, 0, 0)) {
			r = -errno;
			t->start_what = set ? "prctl(PR_RSEQ_SLICE_EXTENSION, SET, ENABLE)"
					    : "prctl(PR_RSEQ_SLICE_EXTENSION, SET, 0)";
		}
	}
	t->start_err = r;
	atomic_fetch_add(&started, 1);
	if (r)
		return NULL;
	for (unsigned long seq = 1; !atomic_load_explicit(&t->stop, memory_order_relaxed); seq++) {
		if (atomic_load_explicit(&t->ask, memory_order_relaxed) != atomic_load_explicit(&t->done, memory_order_relaxed))
			report(t);
		if (idx == HOG || idx == V1) {
			for (volatile int i = 0; i < 200; i++)
				;
			continue;
		}
		/* granted is looked at all through the section: the kernel sets
		 * it on its way back from the interrupt that would have
		 * preempted us, and revokes it (clears slice_ctrl) when the
		 * grant runs out first, which under TCG a host that takes the
		 * vCPU away for a while makes common */
		saw = 0;
		t->rs->request = 1;
		__asm__ __volatile__("" ::: "memory");
		for (int i = 0; i < WORDS; i++) {
			data[i] = seq;
			saw |= t->rs->granted;
		}
		for (volatile int i = 0; i < 4; i++)
			saw |= t->rs->granted;
		for (int i = 0; i < WORDS; i++) {
			saw |= t->rs->granted;
			if (data[i] != seq) {
				atomic_fetch_add_explicit(&t->torn, 1, memory_order_relaxed);
				break;
			}
		}
		__asm__ __volatile__("" ::: "memory");
		t->rs->request = 0;
		atomic_fetch_add_explicit(&t->sections, 1, memory_order_relaxed);
		if (saw | t->rs->granted)
			atomic_fetch_add_explicit(&t->grants, 1, memory_order_relaxed);
		if (t->rs->granted && syscall(NR_rseq_slice_yield) == 1)
			atomic_fetch_add_explicit(&t->yields, 1, memory_order_relaxed);
		for (volatile int i = 0; i < 2; i++)
			;
	}
	return NULL;
}

/* every thread reports itself (report()); the leader's own report here */
static void ask_all(void)
{
	for (int i = 0; i < NT; i++)
		atomic_fetch_add(&T[i].ask, 1);
	report(&T[LEADER]);
	for (int i = 1; i < NT; i++)
		while (atomic_load(&T[i].done) != atomic_load(&T[i].ask))
			usleep(1000);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the control thread: made, registered and enabled now; 0 or -errno */
static int control_start(void)
{
	int n = atomic_load(&started);

	atomic_store(&ctl.stop, 0);
	ctl.start_err = 0;
	if (pthread_create(&ctl.pt, NULL, worker, &ctl))
		return -EAGAIN;
	while (atomic_load(&started) == n)
		usleep(1000);
	if (ctl.start_err)
		pthread_join(ctl.pt, NULL);
	return ctl.start_err;
}

/* the control's end: joined, and gone from /proc/self/task (a thread's tid
 * is cleared for pthread_join before the kernel has released the task), so
 * that DIR/ROLE.tids never lists it */
static void control_stop(void)
{
	char path[64];

	atomic_store(&ctl.stop, 1);
	pthread_join(ctl.pt, NULL);
	snprintf(path, sizeof(path), "/proc/self/task/%d", ctl.tid);
	for (int i = 0; i < 1000 && access(path, F_OK) == 0; i++)
		usleep(1000);
	free(ctl.rs);
	ctl.rs = NULL;
}

/* grants per second of each thread and of the control over PERIOD_NS;
 * sections run */
static void measure(double rate[NT], unsigned long secs[NT], double *ctl_rate)
{
	unsigned long g0[NT], s0[NT], c0;
	struct timespec w = { PERIOD_NS / 1000000000L, PERIOD_NS % 1000000000L };
	double t0, t1;

	for (int i = 0; i < NT; i++) {
		g0[i] = atomic_load(&T[i].grants);
		s0[i] = atomic_load(&T[i].sections);
	}
	c0 = atomic_load(&ctl.grants);
	t0 = now_s();
	nanosleep(&w, NULL);
	t1 = now_s();
	for (int i = 0; i < NT; i++) {
		rate[i] = (atomic_load(&T[i].grants) - g0[i]) / (t1 - t0);
		secs[i] = atomic_load(&T[i].sections) - s0[i];
	}
	*ctl_rate = (atomic_load(&ctl.grants) - c0) / (t1 - t0);
}

/* measure() with the control running: started, counted, ended; counted
 * again (up to 3 times) while the control was granted nothing, which only
 * a host that starved the guest for the whole period does.  0 or -errno
 * (the control could not start). */
static int measure_controlled(double rate[NT], unsigned long secs[NT], double *ctl_rate)
{
	int r = control_start();

	if (r)
		return r;
	for (int k = 0; k < 3; k++) {
		measure(rate, secs, ctl_rate);
		if (*ctl_rate > 0)
			break;
	}
	control_stop();
	return 0;
}

struct state {
	int get[NT], rereg[NT];
	uint32_t flags[NT], len[NT];
	double rate[NT];
	double ctl_rate;	/* the control's, in the same period */
};

static void take_state(struct state *s, const double rate[NT], double ctl_rate)
{
	s->ctl_rate = ctl_rate;
	ask_all();
	for (int i = 0; i < NT; i++) {
		s->get[i] = T[i].get;
		s->rereg[i] = T[i].rereg;
		s->flags[i] = T[i].flags;
		s->len[i] = T[i].len;
		s->rate[i] = rate ? rate[i] : 0;
	}
}

static void put_state(const struct state *s)
{
	char buf[1024];
	int n = 0;

	for (int i = 0; i < NT; i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s %d %u %u %.1f\n", role_name[i], s->get[i], s->flags[i],
			      s->len[i], s->rate[i]);
	n += snprintf(buf + n, sizeof(buf) - n, "control 1 0 0 %.1f\n", s->ctl_rate);
	tst_put("slice-state", "%s", buf);
}

static bool get_state(struct state *s)
{
	char path[4096], name[32];
	FILE *f;
	bool ok = true;

	snprintf(path, sizeof(path), "%s/slice-state", tst_dir());
	f = fopen(path, "r");
	if (!f)
		return false;
	for (int i = 0; i < NT && ok; i++)
		ok = fscanf(f, "%31s %d %u %u %lf", name, &s->get[i], &s->flags[i], &s->len[i], &s->rate[i]) == 5 &&
		     !strcmp(name, role_name[i]);
	{
		int g;
		unsigned fl, len;

		ok = ok && fscanf(f, "%31s %d %u %u %lf", name, &g, &fl, &len, &s->ctl_rate) == 5 &&
		     !strcmp(name, "control");
	}
	fclose(f);
	return ok;
}

static void note_rates(const char *when, const double rate[NT], const unsigned long secs[NT], double ctl_rate)
{
	tst_note("grants per second %s: prctl %.1f, flag %.1f, off %.1f, flag-off %.1f, the control %.1f "
		 "(sections in %.1f s: %lu, %lu, %lu, %lu)", when, rate[PRCTL], rate[FLAG], rate[OFF], rate[FLAGOFF],
		 ctl_rate, PERIOD_NS / 1e9, secs[PRCTL], secs[FLAG], secs[OFF], secs[FLAGOFF]);
}

int main(int argc, char **argv)
{
	struct state before = { 0 }, after;
	double rate[NT], rate2[NT], crate = 0, crate2 = 0;
	unsigned long secs[NT], torn0[NT];
	const char *role;
	bool criu;
	char why[256];

	if (argc != 3 || (strcmp(argv[1], "setup") && strcmp(argv[1], "verify") && strcmp(argv[1], "criu"))) {
		fprintf(stderr, "usage: slice_grants setup|verify|criu DIR\n");
		return 2;
	}
	role = argv[1];
	criu = !strcmp(role, "criu");
	enable = strcmp(role, "verify") != 0;
	tst_init(role, argv[2], "slice-grants");

	/* what the kernel offers, before any thread starts */
	feature_size = (uint32_t)getauxval(AT_RSEQ_FEATURE_SIZE_);
	align_to = (uint32_t)getauxval(AT_RSEQ_ALIGN_);
	if (align_to < 32)
		align_to = 32;
	if (feature_size <= 32)
		tst_skip_all("this kernel's rseq feature size is %u (AT_RSEQ_FEATURE_SIZE): no struct rseq.slice_ctrl, "
			     "no time-slice extension", feature_size);
	if (prctl(PR_RSEQ_SLICE_EXTENSION_, PR_RSEQ_SLICE_EXTENSION_GET_, 0, 0, 0) < 0 && errno == EINVAL)
		tst_skip_all("prctl(PR_RSEQ_SLICE_EXTENSION) answers EINVAL: this kernel has no time-slice "
			     "extensions (Linux 7.0 added them)");
	if (!__rseq_size)
		tst_skip_all("glibc registered no rseq area (GLIBC_TUNABLES=glibc.pthread.rseq=0?): the leader "
			     "and the hog are to keep glibc's");

	{
		/* the grant's length (debugfs, root only): the guests set 50 us */
		FILE *f = fopen("/sys/kernel/debug/rseq/slice_ext_nsec", "r");
		unsigned ns;

		if (f && fscanf(f, "%u", &ns) == 1)
			tst_note("grants last %u ns (debugfs rseq/slice_ext_nsec)", ns);
		if (f)
			fclose(f);
	}
	for (int i = 0; i < NT; i++)
		T[i].role = i;
	T[LEADER].tid = gettid();
	T[LEADER].len = glibc_len(feature_size, align_to);
	for (int i = 1; i < NT; i++) {
		if (pthread_create(&T[i].pt, NULL, worker, &T[i])) {
			fprintf(stderr, "slice_grants: pthread_create: %s\n", strerror(errno));
			return 2;
		}
		/* one at a time: tids ascend in role order */
		while (atomic_load(&started) < i)
			usleep(1000);
	}
	for (int i = 1; i < NT; i++)
		if (T[i].start_err) {
			snprintf(why, sizeof(why), "thread %s: %s: %s", role_name[i], T[i].start_what,
				 T[i].start_err == -ENOTSUPP_ ? "ENOTSUPP (this kernel grants none: built without "
								"CONFIG_RSEQ_SLICE_EXTENSION, as Debian's are, "
								"or booted with rseq_slice_ext=0)"
							      : strerror(-T[i].start_err));
			if (T[i].start_err == -ENOTSUPP_ || T[i].start_err == -EINVAL)
				tst_skip_all("%s", why);
			fprintf(stderr, "slice_grants: %s\n", why);
			return 2;
		}

	if (enable) {
		int r = measure_controlled(rate, secs, &crate);

		if (r) {
			fprintf(stderr, "slice_grants: the control thread: %s\n", strerror(-r));
			return 2;
		}
		take_state(&before, rate, crate);
		note_rates("before the dump", rate, secs, crate);
		/* nothing to compare a restore with: not ready, so that the
		 * round fails with this line (checks before ready are not
		 * collected) */
		bool granted = rate[PRCTL] > 0 && rate[FLAG] > 0 && crate > 0 && atomic_load(&T[OFF].grants) == 0 &&
			       atomic_load(&T[FLAGOFF].grants) == 0;

		tst_check(granted, "slice-grants-before-dump", "grants per second: prctl %.1f, flag %.1f, the control "
			  "%.1f (all > 0 expected); off %lu grants, flag-off %lu (0 expected)", rate[PRCTL], rate[FLAG],
			  crate, atomic_load(&T[OFF].grants), atomic_load(&T[FLAGOFF].grants));
		if (!granted) {
			fprintf(stderr, "slice_grants: no grants to compare a restore with before the dump\n");
			return 2;
		}
		put_state(&before);
	}
	tst_ready();
	if (!criu && enable) {
		for (;;)
			pause();
	}
	if (!tst_wait_restored(NULL, 0))
		return 2;
	if (!criu && !get_state(&before)) {
		tst_check(false, "slice-state-file", "no readable %s/slice-state from the setup role", tst_dir());
		return tst_done();
	}
	for (int i = 0; i < NT; i++)
		torn0[i] = atomic_load(&T[i].torn);
	usleep(200000);	/* settle: the restore's own stops are over */
	{
		int r = measure_controlled(rate2, secs, &crate2);

		if (r) {
			tst_check(false, "control-thread", "a thread registered and enabled after the restore: %s",
				  strerror(-r));
			return tst_done();
		}
	}
	take_state(&after, rate2, crate2);
	note_rates("after the restore", rate2, secs, crate2);
	/* the grants before the dump (role criu), two checks a thread, the
	 * grants after the restore, the sections of PRCTL FLAG OFF, the torn
	 * ones */
	tst_plan((enable ? 1 : 0) + 2 * NT + 1 + (FLAGOFF - PRCTL + 1) + 1);

	for (int i = 0; i < NT; i++) {
		/* the same area, length and signature: EBUSY (a thread of criu's
		 * restore, or of the fresh verify process: its own pointer) */
		char name[64];

		snprintf(name, sizeof(name), "registration-as-dumped/%s", role_name[i]);
		tst_check(after.rereg[i] == -EBUSY && after.len[i] == before.len[i], name,
			  "thread %s (tid %d): rseq(%#llx, %u) again answers %s, length %u (before: %u)", role_name[i],
			  T[i].tid, (unsigned long long)T[i].ptr, after.len[i],
			  after.rereg[i] == -EBUSY ? "EBUSY" : strerror(-after.rereg[i]), after.len[i], before.len[i]);
		snprintf(name, sizeof(name), "slice-state-as-dumped/%s", role_name[i]);
		tst_check(after.get[i] == before.get[i] && after.flags[i] == before.flags[i], name,
			  "thread %s (tid %d): prctl GET %d (before %d), flags AVAILABLE|ENABLED %#x (before %#x)",
			  role_name[i], T[i].tid, after.get[i], before.get[i], after.flags[i], before.flags[i]);
	}
	/* after/before, each relative to the control of its period: at least
	 * half (the control's own after/before is how the host changed) */
	{
		double load = before.ctl_rate > 0 ? crate2 / before.ctl_rate : 0;
		bool ok = rate2[PRCTL] > 0 && rate2[FLAG] > 0 && rate2[OFF] == 0 && rate2[FLAGOFF] == 0 && load > 0 &&
			  rate2[PRCTL] >= before.rate[PRCTL] * load / 2 && rate2[FLAG] >= before.rate[FLAG] * load / 2;

		tst_check(ok, "slice-grants-after-restore",
			  "grants per second after/before: prctl %.1f/%.1f, flag %.1f/%.1f, off %.1f and flag-off %.1f "
			  "(0 expected); a thread enabled afresh %.1f/%.1f: at least half of before times %.2f expected",
			  rate2[PRCTL], before.rate[PRCTL], rate2[FLAG], before.rate[FLAG], rate2[OFF], rate2[FLAGOFF],
			  crate2, before.ctl_rate, load);
	}
	for (int i = PRCTL; i <= FLAGOFF; i++) {
		char name[64];

		snprintf(name, sizeof(name), "sections-run-after-restore/%s", role_name[i]);
		tst_check(secs[i] > 0, name, "thread %s ran %lu sections in %.1f s",
			  role_name[i], secs[i], PERIOD_NS / 1e9);
	}
	tst_check(!T[PRCTL].torn && !T[FLAG].torn && !T[OFF].torn && !T[FLAGOFF].torn, "critical-sections-lost-0",
		  "sections found torn: prctl %lu, flag %lu, off %lu, flag-off %lu (%lu, %lu, %lu, %lu of them after "
		  "the restore)", atomic_load(&T[PRCTL].torn), atomic_load(&T[FLAG].torn), atomic_load(&T[OFF].torn),
		  atomic_load(&T[FLAGOFF].torn), T[PRCTL].torn - torn0[PRCTL], T[FLAG].torn - torn0[FLAG],
		  T[OFF].torn - torn0[OFF], T[FLAGOFF].torn - torn0[FLAGOFF]);
	tst_note("yields that gave the CPU back within the grant: prctl %lu of %lu, flag %lu of %lu",
		 atomic_load(&T[PRCTL].yields), atomic_load(&T[PRCTL].grants), atomic_load(&T[FLAG].yields),
		 atomic_load(&T[FLAG].grants));
	return tst_done();
}
