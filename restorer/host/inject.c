// SPDX-License-Identifier: MIT
/*
 * Running the in-target blob (restorer/algo.c, restorer/arch/ARCH/) inside
 * a stopped thread, so that the thread survives ptimer's death at any moment.
 *
 * The thread's registers (a restartable syscall rewound where the kernel
 * leaves that to the tracer: ptimer_arch_rewind_syscall() of
 * restorer/arch/ARCH/regs.h, which holds all this file knows about
 * registers) and signal mask are saved first; a thread inside an rseq
 * critical section is moved to its abort_ip (rseq_cs.c).  Single syscalls
 * (mmap, mprotect, munmap) run through a stub copied into the zero padding
 * at the end of an executable mapping, where no code of the process ever
 * runs; the blob runs in its own mapping.  Both end the same way
 * (restorer/abi.h): a notify signal the host takes as "done", and, when
 * there is no tracer any more, a return into the thread's own context.
 * In a process that dies with its tracer the single syscalls run instead
 * at the vDSO's syscall instruction, stopped at their entry and exit
 * (insn_syscall: no stub written, no page of the process copied).
 * Nothing ever stops on a breakpoint trap (int3, brk): an untraced one kills
 * the process (criu's compel_run_at() and compel_syscall() do, which is why
 * ptimer does not use them).  Memory is copied with process_vm_writev/readv
 * (Linux 3.2); the stub goes to its read-only page with one pwrite to
 * /proc/TID/mem, which writes through page protections as ptrace does
 * (PTRACE_POKEDATA word by word where /proc/TID/mem refuses).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


#include "restorer/blob.h"
#include "restorer/host/inject.h"
#if defined(__x86_64__)
#include "restorer/arch/x86_64/regs.h"
#elif defined(__aarch64__)
#include "restorer/arch/aarch64/regs.h"
#endif
#include "lib/err.h"
#include "lib/fault_nth.h"
#include "lib/procfs.h"
#include "lib/vm.h"

#define PAGE 4096ul
#define PAGE_ALIGN(x) (((x) + PAGE - 1) & ~(PAGE - 1))

#define STUB_LEN	(PTIMER_STUB_CTX_OFF - PTIMER_STUB_OFF)
#define STUB_AREA	(STUB_LEN + sizeof(struct ptimer_resume_ctx))	/* a multiple of 16 */

struct ptimer_blob {
	pid_t tid;
	pid_t tgid;
	uint64_t base;		/* remote mapping */
	uint64_t size;
	uint64_t code_size;	/* page aligned; args page follows */
	uint64_t timers;	/* remote addresses */
	uint64_t occupied;
	uint64_t stack_top;
	uint32_t n_timers, n_occupied;
	struct ptimer_rseq_cs_save rseq;
	ptimer_arch_regs regs;		/* the thread's own, IP at resume_ip */
	struct ptimer_arch_xstate xstate;	/* beyond regs, what our code would lose */
	uint64_t sigmask;		/* the thread's own signal mask */
	int notify_sig;			/* the blob's "done" signal */
	uint64_t stub;			/* the syscall stub's address; 0: not placed */
	uint64_t insn;			/* a syscall instruction of the vDSO that
					   syscalls run at instead (blob_open's
					   PTIMER_BLOB_DIES_WITH_TRACER); 0: none */
	uint64_t mapped;		/* base is mapped (also before the code is in) */
	bool owns_waits;		/* ptimer seized the process: reap its threads */
	int seccomp;			/* Seccomp: of its status (2: a filter) */
	int mem_fd;			/* /proc/TID/mem + 1 (poke); 0: not open */
	bool ours;			/* registers and mask are those of the
					   last run's end, not the thread's own
					   (settle() puts those back) */
	char *maps;			/* /proc/TID/maps as read once for the
					   looks at the process's mappings that
					   setting up shares; NULL: read it anew */
};

void (*ptimer_blob_log_fn)(int level, const char *msg);

/* What has no caller to return it to goes to the hook, if any. */
static void __attribute__((format(printf, 2, 3))) blob_log(int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!ptimer_blob_log_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ptimer_blob_log_fn(level, msg);
}

static bool is_leftover(struct ptimer_blob *b, const struct ptimer_proc_map *m, uint64_t *size);

/*
 * fn over the process's mappings: the snapshot b->maps when there is one
 * (setting up looks three times: a leftover run, the stub's place,
 * leftover code), else /proc/TID/maps as it is now.
 */
static int maps_each(struct ptimer_blob *b, int (*fn)(const struct ptimer_proc_map *m, void *ctx), void *ctx)
{
	if (b->maps)
		return ptimer_proc_maps_walk(b->maps, fn, ctx);
	return ptimer_proc_maps_each(b->tid, fn, ctx);
}

static void maps_forget(struct ptimer_blob *b)
{
	free(b->maps);
	b->maps = NULL;
}

/*
 * While we wait for the one thread running our code, the process may be
 * killed.  Its other threads, traced by us, then stay zombies until we reap
 * them, and the thread we wait for (the leader) is not reported until they
 * are gone: waitpid() would block for ever.  A reaper thread collects exits
 * of the other threads while our code runs.
 * Only when ptimer seized the process (owns_waits): inside criu, criu owns
 * its tracees' wait events.
 */
struct reaper {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;	/* signalled by reaper_stop */
	pid_t tgid, busy_tid;
	bool stop;
	bool running;
};

/* Reap exited threads other than busy_tid, every 20 ms until stopped.  The
 * first look comes after 20 ms: a run is usually done by then. */
static void *reaper_main(void *arg)
{
	struct reaper *r = arg;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		struct timespec until;
		pid_t *tids;
		int n;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 20000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		while (!r->stop && pthread_cond_timedwait(&r->wake, &r->lock, &until) != ETIMEDOUT)
			;
		if (r->stop)
			break;
		pthread_mutex_unlock(&r->lock);
		n = ptimer_proc_threads(r->tgid, &tids);
		for (int i = 0; i < n; i++) {
			int status;

			if (tids[i] != r->busy_tid)
				waitpid(tids[i], &status, __WALL | WNOHANG);
		}
		if (n > 0)
			free(tids);
		pthread_mutex_lock(&r->lock);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

static void reaper_start(struct reaper *r, const struct ptimer_blob *b)
{
	r->tgid = b->tgid;
	r->busy_tid = b->tid;
	r->stop = false;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->wake, NULL);
	r->running = b->owns_waits && b->tgid > 0 &&
		     pthread_create(&r->thread, NULL, reaper_main, r) == 0;
}

static void reaper_stop(struct reaper *r)
{
	if (r->running) {
		pthread_mutex_lock(&r->lock);
		r->stop = true;
		pthread_cond_signal(&r->wake);
		pthread_mutex_unlock(&r->lock);
		pthread_join(r->thread, NULL);
	}
	pthread_cond_destroy(&r->wake);
	pthread_mutex_destroy(&r->lock);
}

/*
 * After a failed run: is the process gone, or being killed (a SIGKILL takes
 * a traced thread out of its stop before it exits)?  Then say so.
 */
static int explain_failure(const struct ptimer_blob *b, const char *what, struct ptimer_err *err)
{
	if (ptimer_thread_exiting(b->tid, 0))	/* /proc/TID: the thread itself */
		return ptimer_errf(err, ESRCH, "process %d exited while ptimer was %s in it", b->tgid, what);
	return ptimer_errf(err, EIO, "%s in thread %d failed", what, b->tid);
}


/* Copy len bytes to (write) or from addr in the target; err names the thread. */
static int vm_copy(struct ptimer_blob *b, uint64_t addr, void *buf, size_t len, bool write,
		   struct ptimer_err *err)
{
	int r = ptimer_vm_copy(b->tid, addr, buf, len, write);

	if (r == -ESRCH || (r && ptimer_thread_exiting(b->tid, 0)))
		return ptimer_errf(err, ESRCH, "process %d exited while ptimer was working in it", b->tgid);
	if (r)
		return ptimer_errf(err, r, "cannot %s %zu bytes %s thread %d at %#lx: %s", write ? "write" : "read",
				   len, write ? "into" : "from", b->tid, (unsigned long)addr, strerror(-r));
	return 0;
}

static int vm_write(struct ptimer_blob *b, uint64_t addr, const void *src, size_t len,
		    struct ptimer_err *err)
{
	return vm_copy(b, addr, (void *)src, len, true, err);
}

static int vm_read(struct ptimer_blob *b, uint64_t addr, void *dst, size_t len, struct ptimer_err *err)
{
	return vm_copy(b, addr, dst, len, false, err);
}

/*
 * The blob's "done" signal: one the process ignores, so that it vanishes
 * when no tracer is there to take it (kernel/signal.c sig_ignored(): a
 * traced thread gets even ignored signals reported).  SIG_DFL of SIGURG,
 * SIGWINCH or SIGCHLD ignores; else any signal set to SIG_IGN; else SIGURG,
 * which a process that catches it only sees if ptimer dies at that moment.
 */
static int pick_notify_sig(struct ptimer_blob *b)
{
	static const int dfl_ignored[] = { SIGURG, SIGWINCH, SIGCHLD };
	uint64_t caught = ~0ull, ignored = 0;
	pid_t tgid = 0;
	int ret = ptimer_proc_sigmasks(b->tid, &tgid, &caught, &ignored, &b->seccomp);

	b->tgid = ret ? (ret == -ENOENT ? -ENOENT : ptimer_proc_tgid(b->tid)) : tgid;
	if (ret)
		return SIGURG;
	for (size_t i = 0; i < sizeof(dfl_ignored) / sizeof(dfl_ignored[0]); i++)
		if (!(caught & (1ull << (dfl_ignored[i] - 1))))
			return dfl_ignored[i];
	for (int sig = 1; sig <= 64; sig++)
		if ((ignored & (1ull << (sig - 1))) && sig != SIGKILL && sig != SIGSTOP && sig != SIGCONT)
			return sig;
	blob_log(PTIMER_BLOB_LOG_DEBUG, "process %d catches SIGURG, SIGWINCH and SIGCHLD and ignores nothing: "
		   "if ptimer is killed while its code runs, the process may see one SIGURG", b->tgid);
	return SIGURG;
}

static int set_regs_mask(pid_t tid, ptimer_arch_regs *regs, uint64_t mask)
{
	int r = ptimer_arch_set_regs(tid, regs);

	if (r)
		return r;
	if (ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(mask), &mask))
		return -errno;
	return 0;
}

/*
 * Put the thread's own state back: mask first, then registers.  Should
 * ptimer die in between, the thread runs the blob's end, which restores
 * both itself.
 */
static int put_back(struct ptimer_blob *b)
{
	int r;

	if (ptrace(PTRACE_SETSIGMASK, b->tid, (void *)sizeof(b->sigmask), &b->sigmask))
		return -errno;
	r = ptimer_arch_set_regs(b->tid, &b->regs);
	return r ? r : ptimer_arch_restore_xstate(b->tid, &b->xstate);
}

_Static_assert(STUB_AREA % 16 == 0, "stub area alignment");
/* entry.S reads struct ptimer_resume_ctx by the offsets of restorer/abi.h */
_Static_assert(sizeof(ptimer_arch_regs) == PTIMER_CTX_REGS_SIZE, "registers fill the context's regs");
_Static_assert(offsetof(struct ptimer_resume_ctx, sigmask) == PTIMER_CTX_MASK, "sigmask offset");
_Static_assert(offsetof(struct ptimer_resume_ctx, sig) == PTIMER_CTX_SIG, "sig offset");
_Static_assert(sizeof(struct ptimer_blob_args) <= PTIMER_RESUME_CTX_OFF, "args overlap the resume context");
/* ptimer_blob_call writes both at once, never over the leftover mark */
_Static_assert(PTIMER_RESUME_CTX_OFF + sizeof(struct ptimer_resume_ctx) <= PTIMER_LEFTOVER_MARK_OFF,
	       "the resume context overlaps the leftover mark");

/* waitpid(tid, __WALL), again when a signal cut it short: true when tid
 * reported */
static bool wait_tid(pid_t tid, int *status)
{
	pid_t w;

	while ((w = waitpid(tid, status, __WALL)) < 0 && errno == EINTR)
		;
	return w == tid;
}

static bool stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/*
 * Run the thread from regs (IP in our code) to our notify signal, sent from
 * [lo, hi).  Registers first, then the mask (all blocked but the notify
 * signal): ptimer dying between the two leaves the thread in our code, which
 * ends in the thread's own context.  A stop signal that arrives meanwhile is
 * passed on (the group stops; PTRACE_CONT takes this thread on, the detach
 * puts it back into the stop).  *out: the registers at the notify stop.
 * The thread stays there, its registers and mask ours (b->ours), for the
 * next run: settle() puts its own back once, before the stub goes (close,
 * or a failed open).  ptimer dying meanwhile leaves it at the end of our
 * code, which puts them back itself, as after any run.  What the end of
 * our code cannot put back (aarch64's SVE state, which a syscall
 * discards) goes back after every run.  A fault puts everything back at
 * once.
 */
static int run_at(struct ptimer_blob *b, ptimer_arch_regs *regs, uint64_t lo, uint64_t hi,
		  ptimer_arch_regs *out, const char *what, struct ptimer_err *err)
{
	uint64_t block = ~0ull & ~(1ull << (b->notify_sig - 1));
	struct reaper rp;
	int status, r, sig = 0;
	bool was_ours;

	ptimer_arch_no_restart(regs);	/* no syscall restart on the way in */
	/* after a run the mask is the blocking one already */
	was_ours = b->ours;
	b->ours = true;
	r = was_ours ? ptimer_arch_set_regs(b->tid, regs) : set_regs_mask(b->tid, regs, block);
	if (r)
		return r == -ESRCH ? explain_failure(b, what, err)
				   : ptimer_errf(err, -r, "cannot set thread %d up for %s: %s", b->tid, what,
						 strerror(-r));
	reaper_start(&rp, b);
	for (;;) {
		if (ptrace(PTRACE_CONT, b->tid, NULL, (void *)(long)sig)) {
			r = -errno;
			break;
		}
		sig = 0;
		/* the thread runs our code: a wait cut short is waited again */
		if (!wait_tid(b->tid, &status)) {
			r = -errno;
			break;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			r = -ESRCH;
			break;
		}
		if (!WIFSTOPPED(status) || status >> 16)	/* PTRACE_EVENT_STOP: a group-stop; run on */
			continue;
		if (WSTOPSIG(status) == b->notify_sig) {
			/* ours comes from the tgkill at the end, never at the entry */
			if (!ptimer_arch_get_regs(b->tid, out) && ptimer_arch_ip(out) > lo &&
			    ptimer_arch_ip(out) < hi)
				break;
			continue;	/* the process's own, queued before: ignored, as it would be */
		}
		if (stop_signal(WSTOPSIG(status))) {
			sig = WSTOPSIG(status);
			continue;
		}
		/* a fault in our code: SIGSEGV, SIGBUS, SIGILL, ... */
		reaper_stop(&rp);
		r = put_back(b);
		b->ours = r != 0;
		return ptimer_errf(err, EIO, "%s in thread %d: ptimer's code faulted (signal %d)%s", what, b->tid,
				   WSTOPSIG(status), r ? "; its registers could not be put back" : "");
	}
	reaper_stop(&rp);
	if (!r)
		r = ptimer_arch_restore_xstate(b->tid, &b->xstate);
	if (r == -ESRCH)
		return explain_failure(b, what, err);
	if (r)
		return ptimer_errf(err, -r, "%s in thread %d: %s", what, b->tid, strerror(-r));
	return 0;
}

/* The thread's own registers and mask back after runs (b->ours). */
static int settle(struct ptimer_blob *b)
{
	int r;

	if (!b->ours)
		return 0;
	r = put_back(b);
	if (!r)
		b->ours = false;
	return r;
}

/* The thread's own context, as the stub and the blob return to it. */
static void resume_ctx(const struct ptimer_blob *b, struct ptimer_resume_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	memcpy(ctx->regs, &b->regs, sizeof(ctx->regs));
	ctx->sigmask = b->sigmask;
	ctx->tgid = b->tgid > 0 ? b->tgid : b->tid;
	ctx->tid = b->tid;
	ctx->sig = b->notify_sig;
}

/*
 * Write len bytes (a multiple of the word size) at addr of tid, read-only
 * pages too: one pwrite to /proc/TID/mem (the kernel writes through
 * FOLL_FORCE for a ptracer, fs/proc/base.c mem_rw(); Linux 6.12's
 * proc_mem.force_override=never forbids it), else PTRACE_POKEDATA word by
 * word.  The stub (STUB_AREA bytes) is placed and removed in every task a
 * restore touches: word by word that was 2 x 58 ptrace calls a task, most
 * of what the injection cost (perf trace of a 300-task takeover restore).
 * Returns 0 or -errno.
 */
static int poke(struct ptimer_blob *b, uint64_t addr, const void *src, size_t len)
{
	pid_t tid = b->tid;

	/* opened once, for placing and removing the stub; +1: 0 is "not yet" */
	if (!b->mem_fd) {
		char path[48];

		snprintf(path, sizeof(path), "/proc/%d/mem", (int)tid);
		b->mem_fd = open(path, O_RDWR | O_CLOEXEC) + 1;
	}
	if (b->mem_fd > 0 && pwrite(b->mem_fd - 1, src, len, (off_t)addr) == (ssize_t)len)
		return 0;
	for (size_t off = 0; off < len; off += sizeof(long)) {
		long word;

		memcpy(&word, (const char *)src + off, sizeof(word));
		if (ptrace(PTRACE_POKEDATA, tid, (void *)(uintptr_t)(addr + off), (void *)word))
			return -errno;
	}
	return 0;
}

/*
 * Where the stub goes: the last STUB_AREA bytes of the first executable
 * mapping whose last page ends in at least that many zero bytes (the
 * padding after the last function of a segment, which nothing executes).
 * Left there if ptimer dies, it is never run.  Returns the address or 0.
 */
struct stub_scan {
	struct ptimer_blob *b;
	bool *left;
	uint64_t at;
};

static int stub_area_one(const struct ptimer_proc_map *m, void *ctx)
{
	struct stub_scan *sc = ctx;
	struct ptimer_blob *b = sc->b;
	unsigned char tail[STUB_AREA + 64];
	uint64_t size;
	size_t i;

	/* never ptimer's own code (a leftover's padding): removing it would remove the stub */
	if (m->perms[2] != 'x' || m->end - m->start < sizeof(tail) || !strcmp(m->name, "[vsyscall]") ||
	    is_leftover(b, m, &size))
		return 0;
	if (vm_read(b, m->end - sizeof(tail), tail, sizeof(tail), NULL))
		return 0;
	for (i = 0; i < sizeof(tail) && !tail[i]; i++)
		;
	if (i == sizeof(tail)) {
		sc->at = m->end - STUB_AREA;
	} else if (i == sizeof(tail) - STUB_AREA &&
		   !memcmp(tail + i, ptimer_blob_start + PTIMER_STUB_OFF, STUB_LEN)) {
		/* our stub, left by a ptimer that was killed: ours again, zeros at the end */
		sc->at = m->end - STUB_AREA;
		*sc->left = true;
		if (b->notify_sig)	/* placing it: say so */
			blob_log(PTIMER_BLOB_LOG_WARN, "process %d held ptimer's syscall stub at %#llx, left by a "
				 "ptimer that was killed: reused and removed", b->tgid, (unsigned long long)sc->at);
	}
	return sc->at != 0;
}

static uint64_t stub_area_scan(struct ptimer_blob *b, bool *left)
{
	struct stub_scan sc = { .b = b, .left = left };

	maps_each(b, stub_area_one, &sc);
	return sc.at;
}

static uint64_t stub_area(struct ptimer_blob *b)
{
	bool left = false;

	return stub_area_scan(b, &left);
}

/* Is a stub of a killed ptimer in the process? */
static bool stub_left(struct ptimer_blob *b)
{
	bool left = false;
	int sig = b->notify_sig;

	b->notify_sig = 0;	/* quiet */
	stub_area_scan(b, &left);
	b->notify_sig = sig;
	return left;
}

static int place_stub(struct ptimer_blob *b, struct ptimer_err *err)
{
	unsigned char area[STUB_AREA];
	struct ptimer_resume_ctx ctx;
	int r;

	b->stub = stub_area(b);
	if (!b->stub)
		return ptimer_errf(err, ENOSPC, "thread %d: no executable mapping of the process ends in %zu "
				   "bytes of padding for ptimer's syscall stub", b->tid, sizeof(area));
	memcpy(area, ptimer_blob_start + PTIMER_STUB_OFF, STUB_LEN);
	resume_ctx(b, &ctx);
	memcpy(area + STUB_LEN, &ctx, sizeof(ctx));
	r = poke(b, b->stub, area, sizeof(area));
	if (r) {
		b->stub = 0;
		return ptimer_errf(err, -r, "thread %d: cannot place ptimer's syscall stub: %s", b->tid,
				   strerror(-r));
	}
	return 0;
}

/* Zeros back where the stub was. */
static int remove_stub(struct ptimer_blob *b)
{
	static const unsigned char zero[STUB_AREA];
	int r = 0;

	if (b->stub)
		r = poke(b, b->stub, zero, sizeof(zero));
	if (!r)
		b->stub = 0;
	return r;
}

/*
 * PTRACE_GET_SYSCALL_INFO's answer (struct ptrace_syscall_info,
 * include/uapi/linux/ptrace.h, Linux 5.3): what it is stopped at.
 */
#define GET_SYSCALL_INFO	0x420e
#define SYSCALL_INFO_ENTRY	1
#define SYSCALL_INFO_EXIT	2
struct syscall_info {
	uint8_t op;
	uint8_t pad[3];
	uint32_t arch;
	uint64_t instruction_pointer;
	uint64_t stack_pointer;
	union {
		struct {
			uint64_t nr;
			uint64_t args[6];
		} entry;
		struct {
			int64_t rval;
			uint8_t is_error;
		} exit;
		char room[64];
	};
};

static int syscall_info(pid_t tid, struct syscall_info *si)
{
	memset(si, 0, sizeof(*si));
	return ptrace((enum __ptrace_request)GET_SYSCALL_INFO, tid, (void *)sizeof(*si), si) < 0 ? -errno : 0;
}

static int find_insn_one(const struct ptimer_proc_map *m, void *ctx)
{
	uint64_t *at = ctx;
#if PTIMER_ARCH_SYSCALL_AT_INSN
	const uint32_t insn = PTIMER_ARCH_SYSCALL_INSN;	/* little-endian */
	struct ptimer_blob *b = (void *)at[1];
	size_t len = m->end - m->start;
	unsigned char *code;

	if (strcmp(m->name, "[vdso]") || len > 64 * 1024 || !(code = malloc(len)))
		return 0;
	if (!vm_read(b, m->start, code, len, NULL))
		for (size_t i = 0; i + PTIMER_ARCH_SYSCALL_INSN_LEN <= len && !at[0]; i++)
			if (!memcmp(code + i, &insn, PTIMER_ARCH_SYSCALL_INSN_LEN))
				at[0] = m->start + i;
	free(code);
#else
	(void)m;
	(void)at;
#endif
	return 1;
}

/* The first syscall instruction in the process's vDSO, when the kernel
 * can say where a thread is stopped (syscall_info); else 0. */
static uint64_t find_syscall_insn(struct ptimer_blob *b)
{
	uint64_t at[2] = { 0, (uint64_t)(uintptr_t)b };
	struct syscall_info si;

	if (!PTIMER_ARCH_SYSCALL_AT_INSN || syscall_info(b->tid, &si))
		return 0;
	maps_each(b, find_insn_one, at);
	return at[0];
}

/*
 * One syscall in the thread at b->insn: from the stop the thread is in, to
 * the entry of that syscall at that instruction, then to its exit, where
 * *ret is read (PTRACE_SYSCALL; PTRACE_O_TRACESYSGOOD marks those stops,
 * syscall_info says which).  A stop signal that arrives meanwhile is
 * passed on, as run_at does; any other stop is a fault, the thread's own
 * context put back.  The thread stays at the exit stop, its registers ours
 * (b->ours).
 */
static int insn_syscall(struct ptimer_blob *b, int nr, long *ret, const unsigned long args[6],
			struct ptimer_err *err)
{
	uint64_t block = ~0ull & ~(1ull << (b->notify_sig - 1));
	ptimer_arch_regs regs = b->regs;
	bool entered = false;
	int status, r, sig = 0;

	ptimer_arch_stub_syscall(&regs, nr, args);
	ptimer_arch_set_ip(&regs, b->insn);
	ptimer_arch_no_restart(&regs);
	r = b->ours ? ptimer_arch_set_regs(b->tid, &regs) : set_regs_mask(b->tid, &regs, block);
	b->ours = true;
	for (; !r;) {
		struct syscall_info si;

		if (ptrace(PTRACE_SYSCALL, b->tid, NULL, (void *)(long)sig) || !wait_tid(b->tid, &status)) {
			r = -errno;
			break;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			r = -ESRCH;
			break;
		}
		sig = 0;
		if (!WIFSTOPPED(status) || status >> 16)
			continue;	/* a group-stop: run on */
		if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
			r = syscall_info(b->tid, &si);
			/* the exit of a syscall it was stopped in: run on */
			if (!r && si.op == SYSCALL_INFO_EXIT && !entered)
				continue;
			if (!r && si.op == SYSCALL_INFO_EXIT) {
				*ret = (long)si.exit.rval;
				return 0;
			}
			if (!r && si.op == SYSCALL_INFO_ENTRY && !entered && si.entry.nr == (uint64_t)nr &&
			    si.instruction_pointer == b->insn + PTIMER_ARCH_SYSCALL_INSN_LEN) {
				entered = true;
				continue;
			}
		} else if (WSTOPSIG(status) == b->notify_sig) {
			continue;	/* the process's own, queued before: ignored, as in run_at */
		} else if (stop_signal(WSTOPSIG(status))) {
			sig = WSTOPSIG(status);
			continue;
		}
		if (r)
			break;
		/* anything else (a fault, another syscall, a SIGTRAP of its own) */
		r = put_back(b);
		b->ours = r != 0;
		return ptimer_errf(err, EIO, "running a syscall in thread %d: it stopped with signal %d%s", b->tid,
				   WSTOPSIG(status) & 0x7f, r ? "; its registers could not be put back" : "");
	}
	if (r == -ESRCH)
		return explain_failure(b, "running a syscall", err);
	return ptimer_errf(err, -r, "running a syscall in thread %d: %s", b->tid, strerror(-r));
}

/*
 * One syscall in the thread through the stub; *ret the kernel's answer.
 * mark_at != 0: the syscall is the mmap of the blob's area, and the stub
 * writes struct leftover_mark (size mark_size) at the new base + mark_at.
 */
static int stub_syscall(struct ptimer_blob *b, int nr, long *ret, unsigned long a1, unsigned long a2,
			unsigned long a3, unsigned long a4, unsigned long a5, unsigned long a6,
			uint64_t mark_at, uint64_t mark_size, struct ptimer_err *err)
{
	const unsigned long args[6] = { a1, a2, a3, a4, a5, a6 };
	ptimer_arch_regs regs = b->regs, out;
	int r;

	/*
	 * The fault build: the syscall fails in the target, before it runs.
	 * Not the munmap of ptimer's whole mapping, which fails only when
	 * the thread is gone (no split, nothing to allocate).
	 */
	if (nr != __NR_munmap &&
	    ptimer_fail_nth("remote-syscall", nr == __NR_mmap || nr == __NR_mprotect ? ENOMEM : EINVAL)) {
		*ret = -errno;
		return 0;
	}
	if (b->insn)
		return insn_syscall(b, nr, ret, args, err);
	ptimer_arch_stub_mark(&regs, mark_at, mark_size);
	ptimer_arch_set_ip(&regs, b->stub);
	ptimer_arch_stub_syscall(&regs, nr, args);
	r = run_at(b, &regs, b->stub, b->stub + STUB_LEN, &out, "running a syscall", err);
	if (!r)
		*ret = ptimer_arch_stub_result(&out);
	return r;
}

static int remote_syscall(struct ptimer_blob *b, int nr, long *ret, unsigned long a1, unsigned long a2,
			  unsigned long a3, unsigned long a4, unsigned long a5, unsigned long a6,
			  struct ptimer_err *err)
{
	return stub_syscall(b, nr, ret, a1, a2, a3, a4, a5, a6, 0, 0, err);
}

/*
 * Is ip inside code a killed ptimer left (a marked blob mapping, or our
 * stub in the padding of an executable mapping)?  Then [lo, hi) is that
 * code and *ctx where its resume context lies.
 */
struct leftover_at {
	struct ptimer_blob *b;
	uint64_t ip, lo, hi, ctx;
};

/* The mapping that holds ip decides: 1 when it is a leftover, else -1. */
static int in_leftover_one(const struct ptimer_proc_map *m, void *arg)
{
	struct leftover_at *w = arg;
	struct ptimer_blob *b = w->b;
	unsigned char code[STUB_LEN];
	uint64_t size;

	if (w->ip < m->start || w->ip >= m->end)
		return 0;
	if (is_leftover(b, m, &size) && w->ip < m->start + b->code_size) {
		w->lo = m->start;
		w->hi = m->start + b->code_size;
		w->ctx = m->start + b->code_size + PTIMER_RESUME_CTX_OFF;
		return 1;
	}
	if (w->ip >= m->end - STUB_AREA && w->ip < m->end - STUB_AREA + STUB_LEN &&
	    !vm_read(b, m->end - STUB_AREA, code, sizeof(code), NULL) &&
	    !memcmp(code, ptimer_blob_start + PTIMER_STUB_OFF, STUB_LEN)) {
		w->lo = m->end - STUB_AREA;
		w->hi = w->lo + STUB_LEN;
		w->ctx = w->hi;
		return 1;
	}
	return -1;
}

static bool in_leftover(struct ptimer_blob *b, uint64_t ip, uint64_t *lo, uint64_t *hi, uint64_t *ctx)
{
	struct leftover_at w = { .b = b, .ip = ip };

	if (maps_each(b, in_leftover_one, &w) != 1)
		return false;
	*lo = w.lo;
	*hi = w.hi;
	*ctx = w.ctx;
	return true;
}

/*
 * A ptimer killed while its code ran leaves the thread to finish that code
 * on its own; a ptimer that comes next may catch it before the end.  Let it
 * run to its notify signal (its work, e.g. the exact-ID mode switched off
 * again, gets done) and put it where that code would have returned it.
 * Caught after its tgkill, the thread never stops on that signal (it was
 * sent untraced, to a handler-less ignored signal, and is gone): it puts its
 * own context back and leaves the code by itself.  So the wait is bounded:
 * a thread that has not stopped within LEFTOVER_POLL_US is interrupted
 * (PTRACE_INTERRUPT) and looked at; once outside the code, its registers
 * are its own and nothing is left to do.
 */
#define LEFTOVER_POLL_US	2000

/* waitpid of tid, interrupting it once when it has not stopped in time */
static pid_t wait_or_interrupt(pid_t tid, int *status)
{
	pid_t w;

	for (int us = 0; (w = waitpid(tid, status, __WALL | WNOHANG)) == 0; us += 100) {
		if (us == LEFTOVER_POLL_US && ptrace(PTRACE_INTERRUPT, tid, NULL, NULL))
			return -1;
		usleep(100);
	}
	return w;
}

/* 1: nothing left running, *now the thread's registers; 0: read them anew */
static int finish_leftover_run(struct ptimer_blob *b, ptimer_arch_regs *now, struct ptimer_err *err)
{
	ptimer_arch_regs regs;
	struct ptimer_resume_ctx ctx;
	uint64_t lo, hi, at;
	int status, sig = 0, r;

	if (ptimer_arch_get_regs(b->tid, &regs))
		return 0;
	if (!in_leftover(b, ptimer_arch_ip(&regs), &lo, &hi, &at)) {
		*now = regs;
		return 1;
	}
	if (vm_read(b, at, &ctx, sizeof(ctx), err))
		return -EIO;
	blob_log(PTIMER_BLOB_LOG_WARN, "thread %d is still running ptimer's code left by a ptimer that was "
		   "killed: letting it finish first", b->tid);
	/* what it runs may map or unmap (the stub): the snapshot is stale */
	maps_forget(b);
	for (;;) {
		if (ptrace(PTRACE_CONT, b->tid, NULL, (void *)(long)sig) ||
		    wait_or_interrupt(b->tid, &status) != b->tid)
			return ptimer_errf(err, errno, "thread %d: %s", b->tid, strerror(errno));
		sig = 0;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return ptimer_errf(err, ESRCH, "process %d exited", b->tgid);
		if (WIFSTOPPED(status) && !ptimer_arch_get_regs(b->tid, &regs) &&
		    !(ptimer_arch_ip(&regs) >= lo && ptimer_arch_ip(&regs) < hi)) {
			/* out of the code on its own: its context is back */
			if (status >> 16 == PTRACE_EVENT_STOP)
				return 0;
			if (!(status >> 16))
				sig = WSTOPSIG(status);	/* its own signal: deliver, stop it again */
			continue;
		}
		if (!WIFSTOPPED(status) || status >> 16)
			continue;
		if (WSTOPSIG(status) == ctx.sig && !ptimer_arch_get_regs(b->tid, &regs) &&
		    ptimer_arch_ip(&regs) > lo && ptimer_arch_ip(&regs) < hi)
			break;
		if (stop_signal(WSTOPSIG(status)))
			sig = WSTOPSIG(status);
		else if (WSTOPSIG(status) != ctx.sig)
			return ptimer_errf(err, EIO, "thread %d: the code a killed ptimer left faulted (signal %d)",
					   b->tid, WSTOPSIG(status));
	}
	memcpy(&regs, ctx.regs, sizeof(regs));
	r = ptrace(PTRACE_SETSIGMASK, b->tid, (void *)sizeof(ctx.sigmask), &ctx.sigmask) ? -errno : 0;
	if (!r)
		r = ptimer_arch_set_regs(b->tid, &regs);
	if (r)
		return ptimer_errf(err, -r, "thread %d: %s", b->tid, strerror(-r));
	return 0;
}

/*
 * The thread's own state, saved before anything runs: registers with a
 * restartable syscall rewound as the kernel would on the way out of the stop
 * (ptimer_arch_rewind_syscall()), the IP moved to abort_ip inside an rseq
 * critical section, and the signal mask.
 */
static int save_thread(struct ptimer_blob *b, struct ptimer_err *err)
{
	int r = finish_leftover_run(b, &b->regs, err);

	if (r < 0)
		return r;
	r = r ? 0 : ptimer_arch_get_regs(b->tid, &b->regs);
	if (!r && ptrace(PTRACE_GETSIGMASK, b->tid, (void *)sizeof(b->sigmask), &b->sigmask))
		r = -errno;
	if (!r)
		r = ptimer_arch_save_xstate(b->tid, &b->xstate);
	if (r == -ESRCH && ptimer_thread_exiting(b->tid, 0))
		return explain_failure(b, "working", err);
	if (r)
		return ptimer_errf(err, -r, "cannot read thread %d's registers: %s (is it stopped by "
				   "ptimer or criu?)", b->tid, strerror(-r));
	ptimer_arch_rewind_syscall(&b->regs);
	r = ptimer_rseq_cs_save(b->tid, ptimer_arch_ip(&b->regs), &b->rseq);
	if (r)
		return ptimer_errf(err, -r, "thread %d: cannot read its rseq area: %s", b->tid, strerror(-r));
	ptimer_arch_set_ip(&b->regs, b->rseq.resume_ip);
	return 0;
}

/*
 * A mapping left by a ptimer that was killed is told by the mark in its
 * arguments page, written by the stub right after the mmap (entry.S), or
 * by the host where the syscall ran at the vDSO's instruction: a
 * magic, its own address and the size of the whole mapping.
 */
#define LEFTOVER_MAGIC		"ptimer-restorer"
struct leftover_mark {
	char magic[16];
	uint64_t base;
	uint64_t size;
};
_Static_assert(sizeof(struct leftover_mark) == 32, "entry.S writes the mark as 4 quadwords");

static bool is_leftover(struct ptimer_blob *b, const struct ptimer_proc_map *map, uint64_t *size)
{
	uint64_t start = map->start;
	struct leftover_mark m;

	/* anonymous, the code and its arguments page at least, or the code
	 * alone where it is R-X (the W+X-refused way: the arguments page a
	 * mapping of its own after it): no file's mapping is read (the text
	 * the thread stopped in, a library's), nor a small one */
	if (map->inode || map->end - map->start < b->code_size ||
	    (strcmp(map->perms, "r-xp") && map->end - map->start < b->code_size + PAGE))
		return false;
	/* most mappings are not: no explanation of a read that fails */
	if (ptimer_vm_copy(b->tid, start + b->code_size + PTIMER_LEFTOVER_MARK_OFF, &m, sizeof(m), false) ||
	    memcmp(m.magic, LEFTOVER_MAGIC, sizeof(m.magic)) || m.base != start || m.size <= b->code_size ||
	    m.size > (1ull << 40))
		return false;
	*size = m.size;
	return true;
}

/*
 * A killed ptimer's mapping still holds the arguments of its last run
 * (struct ptimer_blob_args at start + code_size) and the timers it was
 * restoring (args.timers).  A RESTORE that did not finish (result not 0:
 * PTIMER_AGAIN between the runs of a linear restore, or a failure nobody
 * rolled back), a PROBE_RESTORE that failed or only probed (no prctl, or
 * linear mode: restorer/algo.c op_probe_restore), or a linear PROBE that
 * kept timers[0] (restorer/algo.c op_probe) with no RESTORE run after it,
 * leaves timers[0..n_created) in
 * the process with the image's IDs, unarmed or partly armed: delete them,
 * one timer_delete each through
 * the stub, and say so.  A RESTORE, or an exact-ID PROBE_RESTORE, that
 * finished (result 0) made every timer and armed it: kept.  A mapping of another ABI is not read.
 * Returns how many timers were deleted.
 */
static uint32_t undo_half_restore(struct ptimer_blob *b, uint64_t start, uint64_t size)
{
	struct ptimer_blob_args a;
	struct ptimer_timer tm;
	uint32_t gone = 0, failed = 0;
	int32_t lo = INT32_MAX, hi = -1;
	uint64_t end = start + size;

	if (vm_read(b, start + b->code_size, &a, sizeof(a), NULL) || a.abi_version != PTIMER_ABI_VERSION ||
	    !((a.op == PTIMER_OP_RESTORE && a.result) || a.op == PTIMER_OP_PROBE ||
	      (a.op == PTIMER_OP_PROBE_RESTORE &&
	       (a.result || a.prctl_get != 0 || a.mode != PTIMER_MODE_EXACT))) ||
	    !a.n_created || a.n_created > a.n_timers ||
	    a.timers < start + b->code_size || a.timers > end ||
	    (end - a.timers) / sizeof(tm) < a.n_timers)
		return 0;
	for (uint32_t i = a.n_created; i-- > 0;) {
		long ret = 0;

		if (vm_read(b, a.timers + (uint64_t)i * sizeof(tm), &tm, sizeof(tm), NULL) ||
		    remote_syscall(b, __NR_timer_delete, &ret, (unsigned long)tm.timer_id, 0, 0, 0, 0, 0, NULL) ||
		    (ret && ret != -EINVAL)) {
			failed++;
			continue;
		}
		if (ret)	/* -EINVAL: the process deleted it itself */
			continue;
		gone++;
		lo = tm.timer_id < lo ? tm.timer_id : lo;
		hi = tm.timer_id > hi ? tm.timer_id : hi;
	}
	if (gone)
		blob_log(PTIMER_BLOB_LOG_WARN, "process %d held %u timer%s (IDs %d..%d) from a %s restore that a "
			 "killed ptimer left unfinished%s: removed; the kernel's timer ID counter stays where "
			 "that restore left it", b->tgid, gone, gone > 1 ? "s" : "", lo, hi,
			 a.mode == PTIMER_MODE_LINEAR ? "linear" : "exact-ID",
			 a.op == PTIMER_OP_PROBE ||
			 (a.op == PTIMER_OP_PROBE_RESTORE && !a.result) ? " after its probe" :
			 a.mode == PTIMER_MODE_LINEAR && a.result == PTIMER_AGAIN ? " between its runs" : "");
	if (failed)
		blob_log(PTIMER_BLOB_LOG_WARN, "process %d: %u of the %u timers a killed ptimer's unfinished "
			 "restore made could not be removed; it may still hold some of them", b->tgid, failed,
			 a.n_created);
	return gone;
}

/*
 * Remove what a killed ptimer left mapped, saying so.  No ptimer is using
 * it: a second tracer could not have attached.
 */
/* A mapping that may be what a killed ptimer left: anonymous, no name,
 * all RWX, or the code part R-X (or not yet: all RW), as large as the code
 * at least, and marked as ptimer's (is_leftover: then *size is its whole
 * size). */
static bool leftover_map(struct ptimer_blob *b, const struct ptimer_proc_map *m, uint64_t *size)
{
	return !m->inode && (!strcmp(m->perms, "rwxp") || !strcmp(m->perms, "r-xp") || !strcmp(m->perms, "rw-p")) &&
	       !strchr(m->name, '[') &&
	       is_leftover(b, m, size);
}

struct leftovers {
	struct ptimer_blob *b;
	int removed;
};

static int remove_leftover_one(const struct ptimer_proc_map *m, void *arg)
{
	struct leftovers *l = arg;
	struct ptimer_blob *b = l->b;
	struct ptimer_err why = { "" };
	uint64_t size;
	long ret = 0;

	if (!leftover_map(b, m, &size))
		return 0;
	undo_half_restore(b, m->start, size);
	if (remote_syscall(b, __NR_munmap, &ret, m->start, size, 0, 0, 0, 0, &why) || ret) {
		blob_log(PTIMER_BLOB_LOG_WARN, "process %d holds ptimer's code at %#llx (%llu bytes), left by a "
			 "ptimer that was killed; removing it failed (%s)", b->tgid, (unsigned long long)m->start,
			 (unsigned long long)size, why.msg[0] ? why.msg : strerror((int)-ret));
	} else {
		blob_log(PTIMER_BLOB_LOG_WARN, "process %d held ptimer's code at %#llx (%llu bytes), left by a "
			 "ptimer that was killed: removed", b->tgid, (unsigned long long)m->start,
			 (unsigned long long)size);
		l->removed++;
	}
	return 0;
}

static int remove_leftovers_pass(struct ptimer_blob *b)
{
	struct leftovers l = { .b = b };

	maps_each(b, remove_leftover_one, &l);
	if (l.removed)
		maps_forget(b);	/* changed: the next pass reads them anew */
	return l.removed;
}

/* Several leftovers side by side merge into one RW area: look again. */
static void remove_leftovers(struct ptimer_blob *b)
{
	for (int pass = 0; pass < 64 && remove_leftovers_pass(b); pass++)
		;
}

int ptimer_blob_open(struct ptimer_blob **out, pid_t tid, uint32_t n_timers, uint32_t n_occupied,
		     unsigned int flags, struct ptimer_err *err)
{
	size_t blob_len = (size_t)(ptimer_blob_end - ptimer_blob_start);
	struct ptimer_blob *b;
	bool wx = true;
	long ret;
	int r;

	b = calloc(1, sizeof(*b));
	if (!b)
		return ptimer_errf(err, ENOMEM, "out of memory");
	b->tid = tid;
	b->notify_sig = pick_notify_sig(b);	/* and b->tgid, from the same read */
	b->owns_waits = flags & PTIMER_BLOB_OWNS_WAITS;
	b->n_timers = n_timers;
	b->n_occupied = n_occupied;
	b->code_size = PAGE_ALIGN(blob_len);
	b->timers = b->code_size + PAGE;
	b->occupied = b->timers + PAGE_ALIGN((uint64_t)n_timers * sizeof(struct ptimer_timer));
	b->stack_top = b->occupied + PAGE_ALIGN((uint64_t)n_occupied * sizeof(int32_t)) + PTIMER_BLOB_STACK;
	b->size = b->stack_top;

	ptimer_proc_maps_text(tid, &b->maps);	/* none: each look reads the file */
	r = save_thread(b, err);
	if (r)
		goto fail;
	/* a stub a killed ptimer left is zeroed by the stub's own way */
	if ((flags & PTIMER_BLOB_DIES_WITH_TRACER) && !b->owns_waits && !stub_left(b))
		b->insn = find_syscall_insn(b);
	if (b->insn)
		blob_log(PTIMER_BLOB_LOG_DEBUG, "thread %d: no stub, ptimer's syscalls run at the vDSO's syscall "
			 "instruction at %#llx (the process dies with its tracer)", tid, (unsigned long long)b->insn);
	r = b->insn ? 0 : place_stub(b, err);
	if (r)
		goto fail;
	remove_leftovers(b);
	/*
	 * One run of the thread less: code and data mapped RWX at once, as
	 * criu maps its own restorer.  Where W+X is refused (SELinux execmem:
	 * -EACCES or -EPERM), RW now and R-X for the code after it is copied
	 * in; so at once under a seccomp filter ptimer did not suspend (its
	 * own seize: criu suspends the filters of the tasks it restores),
	 * which may kill or trap on a W+X mmap rather than refuse it.
	 */
	if (b->owns_waits && b->seccomp == 2) {
		blob_log(PTIMER_BLOB_LOG_DEBUG, "thread %d: under a seccomp filter: code mapped RW, then R-X", tid);
		wx = false;
		r = 0;
	} else {
		r = stub_syscall(b, __NR_mmap, &ret, 0, b->size, PROT_READ | PROT_WRITE | PROT_EXEC,
				 MAP_PRIVATE | MAP_ANONYMOUS, (unsigned long)-1, 0,
				 b->code_size + PTIMER_LEFTOVER_MARK_OFF, b->size, err);
		if (!r && (ret == -EACCES || ret == -EPERM)) {
			blob_log(PTIMER_BLOB_LOG_DEBUG, "thread %d: a W+X mapping is refused (%s): code mapped RW, "
				 "then R-X", tid, strerror((int)-ret));
			wx = false;
		}
	}
	if (!r && !wx) {
		r = stub_syscall(b, __NR_mmap, &ret, 0, b->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				 (unsigned long)-1, 0, b->code_size + PTIMER_LEFTOVER_MARK_OFF, b->size, err);
	}
	if (r)
		goto fail;
	if (ret < 0 && ret > -4096) {
		r = ptimer_errf(err, -ret, "cannot map %lu bytes into process of thread %d: %s",
				(unsigned long)b->size, tid, strerror((int)-ret));
		goto fail;
	}
	b->base = (uint64_t)ret;
	b->mapped = 1;
	b->timers += b->base;
	b->occupied += b->base;
	b->stack_top += b->base;
	if (b->insn) {
		/* the stub writes it itself (entry.S) */
		struct leftover_mark m = { LEFTOVER_MAGIC, b->base, b->size };

		r = vm_write(b, b->base + b->code_size + PTIMER_LEFTOVER_MARK_OFF, &m, sizeof(m), err);
		if (r)
			goto fail;
	}

	maps_forget(b);
	r = vm_write(b, b->base, ptimer_blob_start, blob_len, err);
	if (r)
		goto fail;
	if (!wx)
		r = remote_syscall(b, __NR_mprotect, &ret, b->base, b->code_size, PROT_READ | PROT_EXEC, 0, 0, 0, err);
	if (!r && !wx && ret)
		r = ptimer_errf(err, -ret, "cannot make the restorer executable in thread %d: %s", tid,
				strerror((int)-ret));
	if (r)
		goto fail;
	*out = b;
	return 0;

fail:
	if (b->mapped)
		remote_syscall(b, __NR_munmap, &ret, b->base, b->size, 0, 0, 0, 0, NULL);
	settle(b);
	/* a thread that is gone or being killed keeps nothing of ours */
	if (remove_stub(b) && !ptimer_thread_exiting(tid, 0))
		blob_log(PTIMER_BLOB_LOG_ERROR, "thread %d: cannot remove ptimer's syscall stub at %#llx", tid,
			 (unsigned long long)b->stub);
	ptimer_rseq_cs_put_back(tid, &b->rseq);
	ptimer_arch_free_xstate(&b->xstate);
	maps_forget(b);
	if (b->mem_fd > 0)
		close(b->mem_fd - 1);
	free(b);
	return r;
}

static int any_leftover(const struct ptimer_proc_map *m, void *b)
{
	uint64_t size;

	return leftover_map(b, m, &size);
}

int ptimer_blob_sweep(pid_t tid, struct ptimer_err *err)
{
	struct ptimer_blob *b = calloc(1, sizeof(*b));
	bool any;
	int r;

	if (!b)
		return ptimer_errf(err, ENOMEM, "out of memory");
	b->tid = tid;
	b->notify_sig = pick_notify_sig(b);
	b->code_size = PAGE_ALIGN((size_t)(ptimer_blob_end - ptimer_blob_start));
	ptimer_proc_maps_text(tid, &b->maps);
	r = save_thread(b, err);	/* also lets a leftover run finish */
	if (r)
		goto out;
	any = maps_each(b, any_leftover, b) == 1;
	/* a leftover stub alone is found, and zeroed, by place_stub/remove_stub */
	if (!any && !stub_left(b))
		goto out;
	r = place_stub(b, err);
	if (r)
		goto out;
	remove_leftovers(b);
	settle(b);
	if (remove_stub(b))
		r = ptimer_errf(err, EIO, "thread %d: cannot remove ptimer's syscall stub at %#llx", tid,
				(unsigned long long)b->stub);
out:
	ptimer_arch_free_xstate(&b->xstate);
	maps_forget(b);
	if (b->mem_fd > 0)
		close(b->mem_fd - 1);
	free(b);
	return r;
}

int ptimer_blob_load(struct ptimer_blob *b, const struct ptimer_timer *timers, const int32_t *occupied,
		     struct ptimer_err *err)
{
	int r = vm_write(b, b->timers, timers, (size_t)b->n_timers * sizeof(*timers), err);

	if (!r)
		r = vm_write(b, b->occupied, occupied, (size_t)b->n_occupied * sizeof(*occupied), err);
	return r;
}

int ptimer_blob_call(struct ptimer_blob *b, struct ptimer_blob_args *a, struct ptimer_err *err)
{
	uint64_t args = b->base + b->code_size;
	ptimer_arch_regs regs = b->regs, out;
	struct ptimer_resume_ctx ctx;
	unsigned char page[PTIMER_RESUME_CTX_OFF + sizeof(ctx)];
	int r;

	a->stack_top = b->stack_top;
	a->abi_version = PTIMER_ABI_VERSION;
	a->timers = b->timers;
	a->occupied = b->occupied;
	a->fail_at = ptimer_fail_nth_blob_at();
	a->fail_calls = 0;
	a->fail_nr = a->fail_err = 0;
	if (a->n_timers > b->n_timers || a->n_occupied > b->n_occupied)
		return ptimer_errf(err, EINVAL, "internal: %u timers / %u ids do not fit the %u / %u mapped",
				   a->n_timers, a->n_occupied, b->n_timers, b->n_occupied);
	/* the arguments and the resume context in one write */
	resume_ctx(b, &ctx);
	memset(page, 0, sizeof(page));
	memcpy(page, a, sizeof(*a));
	memcpy(page + PTIMER_RESUME_CTX_OFF, &ctx, sizeof(ctx));
	r = vm_write(b, args, page, sizeof(page), err);
	if (r)
		return r;
	ptimer_arch_set_ip(&regs, b->base);
	ptimer_arch_set_sp(&regs, b->stack_top);
	ptimer_fail_nth_hold(a->fail_at > 0);
	r = run_at(b, &regs, b->base, b->base + b->code_size, &out, "running its code", err);
	if (!r)
		r = vm_read(b, args, a, sizeof(*a), err);
	ptimer_fail_nth_hold(false);
	if (!r)
		ptimer_fail_nth_took(a->fail_calls, a->fail_nr, a->fail_err);
	return r;
}

int ptimer_blob_args_read(struct ptimer_blob *b, struct ptimer_blob_args *a, struct ptimer_err *err)
{
	return vm_read(b, b->base + b->code_size, a, sizeof(*a), err);
}

uint64_t ptimer_blob_data(const struct ptimer_blob *b, size_t *len)
{
	*len = (size_t)(b->occupied - b->timers);
	return b->timers;
}

int ptimer_blob_data_rw(struct ptimer_blob *b, size_t off, void *buf, size_t len, bool write,
			struct ptimer_err *err)
{
	size_t room;
	uint64_t at = ptimer_blob_data(b, &room);

	if (off > room || len > room - off)
		return ptimer_errf(err, E2BIG, "internal: %zu bytes at %zu do not fit the %zu of the data area",
				   len, off, room);
	return vm_copy(b, at + off, buf, len, write, err);
}

int ptimer_blob_syscall(struct ptimer_blob *b, int nr, const unsigned long args[6], long *ret,
			struct ptimer_err *err)
{
	return remote_syscall(b, nr, ret, args[0], args[1], args[2], args[3], args[4], args[5], err);
}

int ptimer_blob_fetch(struct ptimer_blob *b, struct ptimer_timer *timers, struct ptimer_err *err)
{
	return vm_read(b, b->timers, timers, (size_t)b->n_timers * sizeof(*timers), err);
}

int ptimer_blob_close(struct ptimer_blob *b, struct ptimer_err *err)
{
	long ret = 0;
	int r, ur;

	if (!b)
		return 0;
	r = remote_syscall(b, __NR_munmap, &ret, b->base, b->size, 0, 0, 0, 0, err);
	if (!r && ret)
		r = ptimer_errf(err, -ret, "cannot unmap the restorer (%#lx, %lu bytes) from thread %d: %s",
				(unsigned long)b->base, (unsigned long)b->size, b->tid, strerror((int)-ret));
	ur = settle(b);
	if (ur && !r && !ptimer_thread_exiting(b->tid, 0))
		r = ptimer_errf(err, -ur, "thread %d: cannot put its registers back: %s", b->tid, strerror(-ur));
	if (remove_stub(b) && !r)
		r = ptimer_errf(err, EIO, "thread %d: cannot remove ptimer's syscall stub at %#llx", b->tid,
				(unsigned long long)b->stub);
	if (ptimer_rseq_cs_put_back(b->tid, &b->rseq) && !r)
		r = ptimer_errf(err, EIO, "thread %d: cannot put its rseq_cs word back", b->tid);
	ptimer_arch_free_xstate(&b->xstate);
	if (b->mem_fd > 0)
		close(b->mem_fd - 1);
	free(b);
	return r;
}
