/* SPDX-License-Identifier: MIT */
/*
 * The real blob (build/restorer/blob.bin, embedded by restorer/blob_embed.S)
 * on the running kernel, inside this process: the region is laid out as
 * restorer/abi.h says, the blob is entered at offset 0 with nothing in
 * registers, and its final notify signal (tgkill, restorer/abi.h) comes back
 * here through a SIGUSR2 handler (siglongjmp) instead of through ptrace as in
 * the target.  Then the end a target runs when ptimer has died: with the
 * notify signal ignored, the blob must land at the resume context's IP with
 * its registers and signal mask, and the syscall stub's mark and end
 * (`test_blob_local ends`: those alone).
 *
 * Checks probe, exact-ID restore (IDs, values, a timer that fires with its
 * signal and sival, prctl left off), gettime, EBUSY rollback, linear restore
 * with a budget, and rollback.  Exact-ID checks are SKIPped on kernels
 * without PR_TIMER_CREATE_RESTORE_IDS (before 6.15).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "restorer/abi.h"
#include "restorer/algo.h"
#include "restorer/blob.h"
#include "test/lib/tst.h"

#define MAXT		8
#define PAGE		4096u

struct region {
	uint8_t *base;
	size_t len;
	struct ptimer_blob_args *args;
	struct ptimer_timer *timers;
	int32_t *occupied;
};

static sigjmp_buf blob_return;

static void on_notify(int sig)
{
	(void)sig;
	siglongjmp(blob_return, 1);
}

static size_t blob_len(void)
{
	return (size_t)(ptimer_blob_end - ptimer_blob_start);
}

/* Map blob, args page, timers[MAXT], occupied[MAXT] and the stack. */
static int region_map(struct region *r)
{
	size_t code = blob_len();
	size_t tsz = (MAXT * sizeof(struct ptimer_timer) + 15) & ~(size_t)15;
	size_t osz = (MAXT * sizeof(int32_t) + 15) & ~(size_t)15;

	r->len = code + PAGE + tsz + osz + PTIMER_BLOB_STACK;
	r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->base == MAP_FAILED)
		return -1;
	memcpy(r->base, ptimer_blob_start, code);
	if (mprotect(r->base, code, PROT_READ | PROT_EXEC))
		return -1;
	r->args = (struct ptimer_blob_args *)(r->base + code);
	r->timers = (struct ptimer_timer *)(r->base + code + PAGE);
	r->occupied = (int32_t *)(r->base + code + PAGE + tsz);
	return 0;
}

static struct ptimer_resume_ctx *ctx_of(struct region *r)
{
	return (struct ptimer_resume_ctx *)((uint8_t *)r->args + PTIMER_RESUME_CTX_OFF);
}

static void args_init(struct region *r, uint32_t op, uint32_t mode, uint32_t n)
{
	struct ptimer_blob_args *a = r->args;

	memset(a, 0, sizeof(*a));
	a->stack_top = (uint64_t)(uintptr_t)(r->base + r->len);
	a->abi_version = PTIMER_ABI_VERSION;
	a->op = op;
	a->mode = mode;
	a->n_timers = n;
	a->timers = (uint64_t)(uintptr_t)r->timers;
	a->occupied = (uint64_t)(uintptr_t)r->occupied;
	ctx_of(r)->tgid = getpid();
	ctx_of(r)->tid = (int32_t)syscall(SYS_gettid);
	ctx_of(r)->sig = SIGUSR2;
}

/* Enter the blob at offset 0 and come back on its notify signal. */
static long blob_run(struct region *r)
{
	void (*entry)(void) = (void (*)(void))(uintptr_t)r->base;

	if (sigsetjmp(blob_return, 1) == 0)
		entry();
	return (long)r->args->result;
}

static struct ptimer_timer make_timer(int32_t id, int64_t sec, int64_t nsec)
{
	struct ptimer_timer t;

	memset(&t, 0, sizeof(t));
	t.timer_id = id;
	t.clock_id = CLOCK_MONOTONIC;
	t.sigev_notify = SIGEV_SIGNAL;
	t.signo = SIGUSR1;
	t.sival = 0x5eed0000u + (uint32_t)id;
	t.it_value.sec = sec;
	t.it_value.nsec = nsec;
	return t;
}

static int kernel_gettime(int32_t id, struct itimerspec *its)
{
	return (int)syscall(SYS_timer_gettime, id, its);
}

static int timer_exists(int32_t id)
{
	struct itimerspec its;

	return kernel_gettime(id, &its) == 0;
}

static long restore_ids_mode(void)
{
	long ret = prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET,
			 0, 0, 0);

	return ret < 0 ? -errno : ret;
}

static void test_probe(struct region *r, int *have_prctl, int32_t *probe_id)
{
	long ret;

	args_init(r, PTIMER_OP_PROBE, PTIMER_MODE_EXACT, 0);
	ret = blob_run(r);
	*have_prctl = r->args->prctl_get >= 0;
	CHECK("blob probe: returns, prctl_get 0 or -EINVAL",
	      ret == 0 && (r->args->prctl_get == 0 || r->args->prctl_get == -EINVAL),
	      "ret %ld prctl_get %d", ret, r->args->prctl_get);

	args_init(r, PTIMER_OP_PROBE, PTIMER_MODE_LINEAR, 0);
	ret = blob_run(r);
	*probe_id = r->args->probe_id;
	CHECK("blob probe linear: probe_id >= 0, probe timer deleted",
	      ret == 0 && r->args->probe_id >= 0 && !timer_exists(r->args->probe_id),
	      "ret %ld probe_id %d", ret, r->args->probe_id);
}

static void test_exact(struct region *r)
{
	static const int32_t ids[] = { 1000000, 2000000, 7 };
	struct timespec ts = { 2, 0 };
	struct itimerspec its;
	siginfo_t si;
	sigset_t set;
	long ret;
	int ok = 1;

	args_init(r, PTIMER_OP_RESTORE, PTIMER_MODE_EXACT, 3);
	r->timers[0] = make_timer(ids[0], 100, 0);
	r->timers[0].it_interval.sec = 5;
	r->timers[1] = make_timer(ids[1], 0, 20000000);	/* fires in 20 ms */
	r->timers[2] = make_timer(ids[2], 0, 0);		/* disarmed */
	r->timers[2].sigev_notify = SIGEV_NONE;
	ret = blob_run(r);
	CHECK("blob exact: IDs 1000000, 2000000, 7 restored",
	      ret == 0 && r->args->n_created == 3 && timer_exists(ids[0]) &&
	      timer_exists(ids[1]) && timer_exists(ids[2]),
	      "ret %ld n_created %u fail_index %u", ret, r->args->n_created, r->args->fail_index);
	CHECK("blob exact: prctl left OFF", restore_ids_mode() == 0 && r->args->prctl_off == 0,
	      "mode %ld prctl_off %d", restore_ids_mode(), r->args->prctl_off);

	if (kernel_gettime(ids[0], &its) || its.it_value.tv_sec > 100 || its.it_value.tv_sec < 98 ||
	    its.it_interval.tv_sec != 5)
		ok = 0;
	if (kernel_gettime(ids[2], &its) || its.it_value.tv_sec || its.it_value.tv_nsec)
		ok = 0;
	CHECK("blob exact: armed 100 s / 5 s period, disarmed stays disarmed", ok,
	      "it_value %ld.%09ld", (long)its.it_value.tv_sec, its.it_value.tv_nsec);

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	ret = sigtimedwait(&set, &si, &ts);
	CHECK("blob exact: timer 2000000 fires SIGUSR1 with its ID and sival",
	      ret == SIGUSR1 && si.si_code == SI_TIMER && si.si_timerid == ids[1] &&
	      (uint32_t)(uintptr_t)si.si_value.sival_ptr == 0x5eed0000u + (uint32_t)ids[1],
	      "ret %ld code %d timerid %d", ret, si.si_code, si.si_timerid);

	args_init(r, PTIMER_OP_GETTIME, 0, 3);
	ret = blob_run(r);
	CHECK("blob gettime: period 5 s read back, value <= 100 s",
	      ret == 0 && r->timers[0].it_interval.sec == 5 && r->timers[0].it_value.sec <= 100 &&
	      r->timers[0].it_value.sec >= 98 && r->timers[1].overrun == 0,
	      "ret %ld value %lld", ret, (long long)r->timers[0].it_value.sec);

	/* 7 is taken now: a second restore of {8, 7} fails and removes 8. */
	args_init(r, PTIMER_OP_RESTORE, PTIMER_MODE_EXACT, 2);
	r->timers[0] = make_timer(8, 100, 0);
	r->timers[1] = make_timer(7, 100, 0);
	ret = blob_run(r);
	CHECK("blob exact: taken ID 7 -> -EBUSY fail_index 1, timer 8 removed, prctl OFF",
	      ret == -EBUSY && r->args->fail_index == 1 && !timer_exists(8) &&
	      restore_ids_mode() == 0,
	      "ret %ld fail_index %u", ret, r->args->fail_index);

	args_init(r, PTIMER_OP_ROLLBACK, 0, 3);
	for (int i = 0; i < 3; i++)
		r->timers[i].timer_id = ids[i];
	r->args->n_created = 3;
	ret = blob_run(r);
	CHECK("blob rollback: the three timers are gone",
	      ret == 0 && !timer_exists(ids[0]) && !timer_exists(ids[1]) && !timer_exists(ids[2]),
	      "ret %ld", ret);
}

/* The linear path works on this kernel too (its counter still counts). */
static void test_linear(struct region *r)
{
	int32_t start, ids[2];
	long ret;
	int runs = 0;

	args_init(r, PTIMER_OP_PROBE, PTIMER_MODE_LINEAR, 0);
	blob_run(r);
	start = r->args->probe_id + 1;
	ids[0] = start + 10;
	ids[1] = start + 5000;

	args_init(r, PTIMER_OP_RESTORE, PTIMER_MODE_LINEAR, 2);
	r->args->counter = start;
	r->args->budget = 1000;
	r->timers[0] = make_timer(ids[0], 50, 0);
	r->timers[1] = make_timer(ids[1], 60, 0);
	do {
		ret = blob_run(r);
		runs++;
	} while (ret == PTIMER_AGAIN && runs < 100);
	CHECK("blob linear: two IDs reached through 4999 pairs in 5 budgeted runs",
	      ret == 0 && runs == 5 && r->args->pairs_done == 4999 &&
	      timer_exists(ids[0]) && timer_exists(ids[1]),
	      "ret %ld runs %d pairs %llu got_id %d fail_index %u", ret, runs,
	      (unsigned long long)r->args->pairs_done, r->args->got_id, r->args->fail_index);

	r->args->op = PTIMER_OP_ROLLBACK;
	ret = blob_run(r);
	CHECK("blob linear: rollback", ret == 0 && !timer_exists(ids[0]) && !timer_exists(ids[1]),
	      "ret %ld", ret);
}

/*
 * The end of the blob without a tracer: the notify signal (SIGURG, ignored
 * by default) vanishes and the blob returns into the resume context: here a
 * landing function on a stack of its own, with the first argument register,
 * two callee-saved registers and a signal mask (SIGTERM blocked) to check.
 * x86_64: rdi, rbx, r15 (the end reloads them and jumps through memory);
 * aarch64: x0, x19, x28 (the end goes through rt_sigreturn).
 */
static volatile uint64_t landed_arg0, landed_r1, landed_r2;
static volatile int landed_term_blocked;
static sigjmp_buf resume_return;

static void __attribute__((used)) landed_c(uint64_t arg0)
{
	sigset_t now;

	landed_arg0 = arg0;
	sigprocmask(SIG_SETMASK, NULL, &now);
	landed_term_blocked = sigismember(&now, SIGTERM);
	siglongjmp(resume_return, 1);
}

/* the two registers as the blob left them, then C with the stack aligned */
#if defined(__x86_64__)
#define CTX_R1		PTIMER_CTX_RBX
#define CTX_R2		PTIMER_CTX_R15
#define CTX_FLAGS	PTIMER_CTX_EFLAGS
#define FLAGS		0x202		/* IF, and the always-one bit */
#define REG_NAMES	"rdi/rbx/r15"
__asm__(".text\n"
	"landed:\n\t"
	"mov %rbx, landed_r1(%rip)\n\t"
	"mov %r15, landed_r2(%rip)\n\t"
	"and $-16, %rsp\n\t"
	"call landed_c\n\t"
	"ud2\n");
#elif defined(__aarch64__)
#define CTX_R1		(19 * 8)
#define CTX_R2		(28 * 8)
#define CTX_FLAGS	PTIMER_CTX_PSTATE
#define FLAGS		0		/* EL0t, flags clear */
#define REG_NAMES	"x0/x19/x28"
__asm__(".text\n"
	"landed:\n\t"
	"adrp x9, landed_r1\n\t"
	"str x19, [x9, :lo12:landed_r1]\n\t"
	"adrp x9, landed_r2\n\t"
	"str x28, [x9, :lo12:landed_r2]\n\t"
	"mov x9, sp\n\t"
	"and sp, x9, #-16\n\t"
	"bl landed_c\n\t"
	"udf #0\n");
#endif
extern char landed[];

/* A resume context that lands in landed() with known registers and SIGTERM blocked. */
static void landing_ctx(struct ptimer_resume_ctx *c)
{
	static uint8_t stack[16384] __attribute__((aligned(16)));
	uint64_t *regs = c->regs;
	sigset_t mask;

	memset(regs, 0, sizeof(c->regs));
	regs[PTIMER_CTX_IP / 8] = (uint64_t)(uintptr_t)landed;
	regs[PTIMER_CTX_SP / 8] = (uint64_t)(uintptr_t)(stack + sizeof(stack) - 512);
	regs[PTIMER_CTX_ARG0 / 8] = 0x1122334455667788ull;
	regs[CTX_R1 / 8] = 0xb0b0b0b0b0b0b0b0ull;
	regs[CTX_R2 / 8] = 0xf15f15f15f15f15full;
	regs[CTX_FLAGS / 8] = FLAGS;
	sigprocmask(SIG_SETMASK, NULL, &mask);
	sigaddset(&mask, SIGTERM);
	memcpy(&c->sigmask, &mask, sizeof(c->sigmask));
	c->sig = SIGURG;
	landed_arg0 = landed_r1 = landed_r2 = 0;
	landed_term_blocked = 0;
}

static bool landed_ok(void)
{
	return landed_arg0 == 0x1122334455667788ull && landed_r1 == 0xb0b0b0b0b0b0b0b0ull &&
	       landed_r2 == 0xf15f15f15f15f15full && landed_term_blocked == 1;
}

#define LANDED_FMT	"arg0 %#llx r1 %#llx r2 %#llx SIGTERM blocked %d"
#define LANDED_ARGS	(unsigned long long)landed_arg0, (unsigned long long)landed_r1, \
			(unsigned long long)landed_r2, landed_term_blocked

static void test_resume(struct region *r)
{
	args_init(r, PTIMER_OP_PROBE, PTIMER_MODE_EXACT, 0);
	landing_ctx(ctx_of(r));
	if (sigsetjmp(resume_return, 1) == 0)
		((void (*)(void))(uintptr_t)r->base)();
	CHECK("blob end without a tracer: lands at the resume IP with " REG_NAMES " and the mask",
	      landed_ok(), LANDED_FMT, LANDED_ARGS);
}

/*
 * The syscall stub as the host places it (restorer/abi.h: [STUB_OFF,
 * STUB_CTX_OFF) of the blob, the resume context right after), entered with
 * getpid as its syscall and a mark request: it must write the mark the host
 * looks for ("ptimer-restorer", base = the syscall's result, size) at
 * result + mark_at, then end like the blob.  stub_enter(stub, nr, mark_at,
 * mark_size) loads the stub's registers (restorer/arch/ARCH/regs.h) and
 * jumps; it never returns (landed() does, through siglongjmp).
 */
#if defined(__x86_64__)
__asm__(".text\n"
	"stub_enter:\n\t"
	"mov %rsi, %rax\n\t"
	"mov %rdx, %r13\n\t"
	"mov %rcx, %r14\n\t"
	"jmp *%rdi\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	"stub_enter:\n\t"
	"mov x8, x1\n\t"
	"mov x22, x2\n\t"
	"mov x23, x3\n\t"
	"br x0\n");
#endif
void stub_enter(void *stub, long nr, uint64_t mark_at, uint64_t mark_size);

static void test_stub(void)
{
	static struct { char magic[16]; uint64_t base, size; } mark;
	size_t len = PTIMER_STUB_CTX_OFF - PTIMER_STUB_OFF;
	struct ptimer_resume_ctx *c;
	uint8_t *area;
	pid_t pid = getpid();

	area = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		FAIL("stub: map", "%s", strerror(errno));
		return;
	}
	memcpy(area, ptimer_blob_start + PTIMER_STUB_OFF, len);
	c = (struct ptimer_resume_ctx *)(area + len);
	memset(c, 0, sizeof(*c));
	landing_ctx(c);
	memset(&mark, 0, sizeof(mark));
	if (mprotect(area, PAGE, PROT_READ | PROT_EXEC)) {
		FAIL("stub: mprotect", "%s", strerror(errno));
		return;
	}
	__builtin___clear_cache((char *)area, (char *)area + len);
	if (sigsetjmp(resume_return, 1) == 0)
		stub_enter(area, SYS_getpid, (uint64_t)(uintptr_t)&mark - (uint64_t)pid, 0x13000);
	CHECK("stub: writes the mark at result + mark_at (\"ptimer-restorer\", base, size)",
	      !memcmp(mark.magic, "ptimer-restorer", 16) && mark.base == (uint64_t)pid && mark.size == 0x13000,
	      "magic '%.15s' base %#llx (pid %d) size %#llx", mark.magic, (unsigned long long)mark.base, pid,
	      (unsigned long long)mark.size);
	CHECK("stub end without a tracer: lands at the resume IP with " REG_NAMES " and the mask",
	      landed_ok(), LANDED_FMT, LANDED_ARGS);
	munmap(area, PAGE);
}

/* argv[1] "ends": only the stub and the ends without a tracer, which need
 * nothing of the kernel's timers (test/cross.sh runs them under qemu-user) */
/* the region the blob runs in, and what the probe found: the tests' state */
static struct region the_region;
static int have_prctl;
static int32_t probe_id;

static void test_map(void)
{
	if (region_map(&the_region)) {
		FAIL("blob: map region", "%s", strerror(errno));
		exit(tst_done());
	}
	CHECK("blob: size is a multiple of 4096 and entry is offset 0",
	      blob_len() % PAGE == 0 && blob_len() > 0, "%zu bytes", blob_len());
}

static void test_probe_all(void) { test_probe(&the_region, &have_prctl, &probe_id); }

static void test_exact_ids(void)
{
	if (have_prctl)
		test_exact(&the_region);
	else
		SKIP("blob exact", "PR_TIMER_CREATE_RESTORE_IDS not supported (kernel before 6.15)");
}

static void test_linear_all(void) { test_linear(&the_region); }
static void test_resume_all(void) { test_resume(&the_region); }

int main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t set;

	printf("# blob of %zu bytes on the running kernel\n", blob_len());
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_notify;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);

	/* "ends": the parts a foreign architecture runs under qemu-user (test/cross.sh) */
	if (argc > 1 && !strcmp(argv[1], "ends"))
		return CHECK_RUN(CHECK_TEST(test_map), CHECK_TEST(test_stub), CHECK_TEST(test_resume_all));
	return CHECK_RUN(CHECK_TEST(test_map), CHECK_TEST(test_probe_all), CHECK_TEST(test_exact_ids),
			 CHECK_TEST(test_linear_all), CHECK_TEST(test_stub), CHECK_TEST(test_resume_all));
}
