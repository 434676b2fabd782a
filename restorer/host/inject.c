// SPDX-License-Identifier: MIT
/*
 * Running restorer/blob inside a stopped thread with libcompel's host API.
 *
 * compel_prepare_noctx() saves the thread's registers and signal mask;
 * compel_syscall() runs single syscalls (mmap, mprotect, munmap) through a
 * syscall instruction it pokes over the first executable page;
 * compel_run_at() starts the thread at our entry with every signal but
 * SIGTRAP blocked and waits for the blob's int3; after each, compel puts the
 * saved registers and mask back.  See criu compel/src/lib/infect.c.
 * Memory is copied with process_vm_writev/readv (Linux 3.2).
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <compel/infect.h>
#include <compel/log.h>

#include "restorer/blob.h"
#include "restorer/host/inject.h"
#include "core/ptimer.h"

#define PAGE 4096ul
#define PAGE_ALIGN(x) (((x) + PAGE - 1) & ~(PAGE - 1))

struct ptimer_blob {
	struct parasite_ctl *ctl;
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
};

bool ptimer_compel_log_owned = true;

/* compel's last error line, to explain a failed compel call. */
static char compel_last[256];

/*
 * While compel waits for the one thread running our code, the process may
 * be killed.  Its other threads, traced by us, then stay zombies until we
 * reap them, and the thread compel waits for (the leader) is not reported
 * until they are gone: compel's wait4() would block for ever.  A reaper
 * thread collects exits of the other threads while a compel call runs.
 * Standalone only: inside criu, criu owns its tracees' wait events.
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
 * first look comes after 20 ms: a compel call is usually done by then. */
static void *reaper_main(void *arg)
{
	struct reaper *r = arg;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		struct timespec until;
		char path[64];
		struct dirent *de;
		DIR *d;

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
		snprintf(path, sizeof(path), "/proc/%d/task", r->tgid);
		d = opendir(path);
		if (d) {
			while ((de = readdir(d))) {
				pid_t tid = (pid_t)atoi(de->d_name);
				int status;

				if (tid > 0 && tid != r->busy_tid)
					waitpid(tid, &status, __WALL | WNOHANG);
			}
			closedir(d);
		}
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
	r->running = ptimer_compel_log_owned && b->tgid > 0 &&
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

/* After a failed compel call: is the process gone?  Then say so. */
static int explain_failure(const struct ptimer_blob *b, const char *what, struct ptimer_err *err)
{
	char path[64], line[128];
	bool gone = true;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", b->tid);
	f = fopen(path, "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "State:", 6))
				gone = strchr(line, 'Z') || strchr(line, 'X');
		fclose(f);
	}
	if (gone)
		return ptimer_errf(err, ESRCH, "process %d exited while ptimer was %s in it", b->tgid, what);
	return ptimer_errf(err, EIO, "%s in thread %d failed: %s", what, b->tid,
			   compel_last[0] ? compel_last : "compel call failed");
}


static void compel_log(unsigned int lvl, const char *fmt, va_list ap)
{
	if (lvl <= COMPEL_LOG_WARN) {
		vsnprintf(compel_last, sizeof(compel_last), fmt, ap);
		compel_last[strcspn(compel_last, "\n")] = '\0';
	}
}

/* First executable mapping of tid: where compel pokes its syscall insn. */
static unsigned long exec_area(pid_t tid)
{
	char path[64], line[512];
	unsigned long ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3)
			continue;
		/* [vsyscall] is outside the task's address space for ptrace pokes. */
		if (perms[2] == 'x' && end - start >= PAGE && !strstr(line, "[vsyscall]")) {
			ret = start;
			break;
		}
	}
	fclose(f);
	return ret;
}

static int remote_syscall(struct ptimer_blob *b, int nr, long *ret, unsigned long a1, unsigned long a2,
			  unsigned long a3, unsigned long a4, unsigned long a5, unsigned long a6,
			  struct ptimer_err *err)
{
	struct reaper r;
	int failed;

	compel_last[0] = '\0';
	reaper_start(&r, b);
	failed = compel_syscall(b->ctl, nr, ret, a1, a2, a3, a4, a5, a6);
	reaper_stop(&r);
	if (failed)
		return explain_failure(b, "running a syscall", err);
	return 0;
}

static int vm_write(struct ptimer_blob *b, uint64_t addr, const void *src, size_t len,
		    struct ptimer_err *err)
{
	struct iovec local = { (void *)src, len }, remote = { (void *)addr, len };
	ssize_t w;

	if (!len)
		return 0;
	w = process_vm_writev(b->tid, &local, 1, &remote, 1, 0);
	if (w < 0 && errno == ESRCH)
		return ptimer_errf(err, ESRCH, "process %d exited while ptimer was working in it", b->tgid);
	if (w != (ssize_t)len)
		return ptimer_errf(err, w < 0 ? errno : EIO, "cannot write %zu bytes into thread %d at %#lx: %s",
				   len, b->tid, (unsigned long)addr, w < 0 ? strerror(errno) : "short write");
	return 0;
}

static int vm_read(struct ptimer_blob *b, uint64_t addr, void *dst, size_t len, struct ptimer_err *err)
{
	struct iovec local = { dst, len }, remote = { (void *)addr, len };
	ssize_t r;

	if (!len)
		return 0;
	r = process_vm_readv(b->tid, &local, 1, &remote, 1, 0);
	if (r < 0 && errno == ESRCH)
		return ptimer_errf(err, ESRCH, "process %d exited while ptimer was working in it", b->tgid);
	if (r != (ssize_t)len)
		return ptimer_errf(err, r < 0 ? errno : EIO, "cannot read %zu bytes from thread %d at %#lx: %s",
				   len, b->tid, (unsigned long)addr, r < 0 ? strerror(errno) : "short read");
	return 0;
}

int ptimer_blob_open(struct ptimer_blob **out, pid_t tid, uint32_t n_timers, uint32_t n_occupied,
		     struct ptimer_err *err)
{
	size_t blob_len = (size_t)(ptimer_blob_end - ptimer_blob_start);
	struct ptimer_blob *b;
	struct infect_ctx *ictx;
	long ret;
	int r;

	if (ptimer_compel_log_owned)
		compel_log_init(compel_log, COMPEL_LOG_WARN);
	b = calloc(1, sizeof(*b));
	if (!b)
		return ptimer_errf(err, ENOMEM, "out of memory");
	b->tid = tid;
	b->tgid = ptimer_proc_tgid(tid);
	b->n_timers = n_timers;
	b->n_occupied = n_occupied;
	b->code_size = PAGE_ALIGN(blob_len);
	b->timers = b->code_size + PAGE;
	b->occupied = b->timers + PAGE_ALIGN((uint64_t)n_timers * sizeof(struct ptimer_timer));
	b->stack_top = b->occupied + PAGE_ALIGN((uint64_t)n_occupied * sizeof(int32_t)) + PTIMER_BLOB_STACK;
	b->size = b->stack_top;

#ifdef PTIMER_COMPEL_PREPARE_RSEQ
	/* Debian's compel 4.2 can handle rseq itself; ptimer_rseq_cs_save does it here for every version */
	b->ctl = compel_prepare_noctx(tid, false);
#else
	b->ctl = compel_prepare_noctx(tid);
#endif
	if (!b->ctl) {
		r = ptimer_errf(err, EIO, "cannot take control of thread %d: %s", tid,
				compel_last[0] ? compel_last : "compel_prepare_noctx failed");
		free(b);
		return r;
	}
	/*
	 * Before any code runs: a thread stopped inside an rseq critical
	 * section resumes at its abort_ip, as after a preemption.
	 */
	r = ptimer_rseq_cs_save(tid, compel_get_leader_ip(b->ctl), &b->rseq);
	if (r) {
		r = ptimer_errf(err, -r, "thread %d: cannot read its rseq area: %s", tid, strerror(-r));
		goto fail_cure;
	}
	if (b->rseq.resume_ip != b->rseq.ip)
		compel_set_leader_ip(b->ctl, b->rseq.resume_ip);
	ictx = compel_infect_ctx(b->ctl);
	ictx->task_size = compel_task_size();
	ictx->syscall_ip = exec_area(tid);
	if (!ictx->syscall_ip) {
		r = ptimer_errf(err, EIO, "thread %d has no executable mapping to run syscalls from", tid);
		goto fail_cure;
	}
	r = remote_syscall(b, __NR_mmap, &ret, 0, b->size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, (unsigned long)-1, 0, err);
	if (r)
		goto fail_cure;
	if (ret < 0 && ret > -4096) {
		r = ptimer_errf(err, -ret, "cannot map %lu bytes into process of thread %d: %s",
				(unsigned long)b->size, tid, strerror((int)-ret));
		goto fail_cure;
	}
	b->base = (uint64_t)ret;
	b->timers += b->base;
	b->occupied += b->base;
	b->stack_top += b->base;

	r = vm_write(b, b->base, ptimer_blob_start, blob_len, err);
	if (r)
		goto fail_unmap;
	r = remote_syscall(b, __NR_mprotect, &ret, b->base, b->code_size, PROT_READ | PROT_EXEC, 0, 0, 0, err);
	if (!r && ret)
		r = ptimer_errf(err, -ret, "cannot make the restorer executable in thread %d: %s", tid,
				strerror((int)-ret));
	if (r)
		goto fail_unmap;
	*out = b;
	return 0;

fail_unmap:
	remote_syscall(b, __NR_munmap, &ret, b->base, b->size, 0, 0, 0, 0, NULL);
fail_cure:
	if (compel_cure(b->ctl))
		ptimer_log(PTIMER_LOG_ERROR, "restoring thread %d's registers failed: %s", tid, compel_last);
	ptimer_rseq_cs_put_back(tid, &b->rseq);
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
	int r;

	a->stack_top = b->stack_top;
	a->abi_version = PTIMER_ABI_VERSION;
	a->timers = b->timers;
	a->occupied = b->occupied;
	if (a->n_timers > b->n_timers || a->n_occupied > b->n_occupied)
		return ptimer_errf(err, EINVAL, "internal: %u timers / %u ids do not fit the %u / %u mapped",
				   a->n_timers, a->n_occupied, b->n_timers, b->n_occupied);
	struct reaper rp;
	int failed;

	r = vm_write(b, args, a, sizeof(*a), err);
	if (r)
		return r;
	compel_last[0] = '\0';
	reaper_start(&rp, b);
	failed = compel_run_at(b->ctl, b->base, NULL);
	reaper_stop(&rp);
	if (failed)
		return explain_failure(b, "running its code", err);
	return vm_read(b, args, a, sizeof(*a), err);
}

int ptimer_blob_fetch(struct ptimer_blob *b, struct ptimer_timer *timers, struct ptimer_err *err)
{
	return vm_read(b, b->timers, timers, (size_t)b->n_timers * sizeof(*timers), err);
}

int ptimer_blob_close(struct ptimer_blob *b, struct ptimer_err *err)
{
	long ret = 0;
	int r;

	if (!b)
		return 0;
	r = remote_syscall(b, __NR_munmap, &ret, b->base, b->size, 0, 0, 0, 0, err);
	if (!r && ret)
		r = ptimer_errf(err, -ret, "cannot unmap the restorer (%#lx, %lu bytes) from thread %d: %s",
				(unsigned long)b->base, (unsigned long)b->size, b->tid, strerror((int)-ret));
	if (compel_cure(b->ctl) && !r)
		r = ptimer_errf(err, EIO, "cannot restore thread %d's registers: %s", b->tid, compel_last);
	if (ptimer_rseq_cs_put_back(b->tid, &b->rseq) && !r)
		r = ptimer_errf(err, EIO, "thread %d: cannot put its rseq_cs word back", b->tid);
	free(b);
	return r;
}
