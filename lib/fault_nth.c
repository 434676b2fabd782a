// SPDX-License-Identifier: MIT
/*
 * The test build's N-th-call failures (lib/fault_nth.h): the
 * counter, and the host-side syscall wrappers the linker puts in front of
 * libc (-Wl,--wrap=NAME, the Makefile's FAULT_WRAP, fault build only).
 * Each wrapper fails its call, before making it, with an errno the call
 * can really return; PTIMER_FAIL_ERRNO overrides it.  Nothing here is in
 * the builds users get.
 */
#ifdef PTIMER_FAULT_INJECT
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "lib/fault_nth.h"

static long nth = -1;		/* -1: PTIMER_FAIL_NTH not read yet; 0: off */
static int forced_errno;
static atomic_long calls;
static atomic_bool held;	/* ptimer_fail_nth_hold; the reaper thread reads it */

/* one line to PTIMER_FAIL_NTH_LOG, by raw syscalls: never counted */
static void nth_note(const char *fmt, ...)
{
	const char *path = getenv("PTIMER_FAIL_NTH_LOG");
	char line[160];
	va_list ap;
	long fd;
	int n;

	if (!path)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (n > 0)
		syscall(SYS_write, (int)fd, line, (size_t)(n < (int)sizeof(line) ? n : (int)sizeof(line) - 1));
	syscall(SYS_close, (int)fd);
}

static void nth_calls(void)
{
	if (nth > 0)
		nth_note("calls %ld\n", (long)atomic_load(&calls));
}

static void nth_init(void)
{
	const char *s = getenv("PTIMER_FAIL_NTH"), *e = getenv("PTIMER_FAIL_ERRNO");

	nth = s ? atol(s) : 0;
	if (nth < 0)
		nth = 0;
	forced_errno = e ? atoi(e) : 0;
	if (nth > 0)
		atexit(nth_calls);
}

bool ptimer_fail_nth(const char *what, int err)
{
	long c;

	if (nth < 0)
		nth_init();
	if (!nth || held)
		return false;
	c = atomic_fetch_add(&calls, 1) + 1;
	if (c != nth)
		return false;
	errno = forced_errno ? forced_errno : err;
	nth_note("failed %ld %s %s\n", c, what, strerrorname_np(errno) ? strerrorname_np(errno) : "?");
	return true;
}

unsigned ptimer_fail_nth_blob_at(void)
{
	long c;

	if (nth < 0)
		nth_init();
	c = atomic_load(&calls);
	return nth > c + 1 ? (unsigned)(nth - c - 1) : 0;
}

void ptimer_fail_nth_hold(bool on)
{
	held = on;
}

void ptimer_fail_nth_took(unsigned n, int nr, int err)
{
	char what[32];

	atomic_fetch_add(&calls, (long)n);
	if (!nr)
		return;
	/* the blob failed its fail_at-th call: the N-th */
	snprintf(what, sizeof(what), "blob-syscall-%d", nr);
	nth_note("failed %ld %s %s\n", nth, what, strerrorname_np(-err) ? strerrorname_np(-err) : "?");
}

/* ---- the wrapped calls -------------------------------------------------- */

#define FAIL(name, err) ptimer_fail_nth(#name, err)

pid_t __real_waitpid(pid_t pid, int *st, int opts);
pid_t __wrap_waitpid(pid_t pid, int *st, int opts)
{
	return FAIL(waitpid, EINTR) ? -1 : __real_waitpid(pid, st, opts);
}

int __real_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return FAIL(open, ENOMEM) ? -1 : __real_open(path, flags, mode);
}

int __real_openat(int dfd, const char *path, int flags, ...);
int __wrap_openat(int dfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return FAIL(openat, ENOMEM) ? -1 : __real_openat(dfd, path, flags, mode);
}

int __real_fcntl(int fd, int cmd, ...);
int __wrap_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return FAIL(fcntl, EINTR) ? -1 : __real_fcntl(fd, cmd, arg);
}

int __real_prctl(int op, ...);
int __wrap_prctl(int op, ...)
{
	unsigned long a[4];
	va_list ap;

	va_start(ap, op);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	return FAIL(prctl, EINVAL) ? -1 : __real_prctl(op, a[0], a[1], a[2], a[3]);
}

#define WRAP(ret, bad, name, err, params, args)      \
	ret __real_##name params;                     \
	ret __wrap_##name params                      \
	{                                             \
		if (FAIL(name, err))                  \
			return bad;                   \
		return __real_##name args;            \
	}

WRAP(ssize_t, -1, read, EIO, (int fd, void *buf, size_t n), (fd, buf, n))
WRAP(ssize_t, -1, write, ENOSPC, (int fd, const void *buf, size_t n), (fd, buf, n))
WRAP(ssize_t, -1, pread, EIO, (int fd, void *buf, size_t n, off_t at), (fd, buf, n, at))
WRAP(ssize_t, -1, pwrite, EIO, (int fd, const void *buf, size_t n, off_t at), (fd, buf, n, at))
WRAP(ssize_t, -1, process_vm_readv, ENOMEM,
     (pid_t pid, const struct iovec *l, unsigned long nl, const struct iovec *r, unsigned long nr, unsigned long f),
     (pid, l, nl, r, nr, f))
WRAP(ssize_t, -1, process_vm_writev, ENOMEM,
     (pid_t pid, const struct iovec *l, unsigned long nl, const struct iovec *r, unsigned long nr, unsigned long f),
     (pid, l, nl, r, nr, f))
WRAP(int, -1, kill, ESRCH, (pid_t pid, int sig), (pid, sig))
WRAP(int, -1, tgkill, ESRCH, (pid_t tgid, pid_t tid, int sig), (tgid, tid, sig))
WRAP(FILE *, NULL, fopen, ENOMEM, (const char *path, const char *mode), (path, mode))
WRAP(DIR *, NULL, opendir, ENOMEM, (const char *path), (path))
WRAP(int, -1, fstat, ENOMEM, (int fd, struct stat *st), (fd, st))
WRAP(int, -1, stat, ENOMEM, (const char *path, struct stat *st), (path, st))
WRAP(int, -1, fstatat, ENOMEM, (int dfd, const char *path, struct stat *st, int flags), (dfd, path, st, flags))
WRAP(ssize_t, -1, readlink, ENOMEM, (const char *path, char *buf, size_t n), (path, buf, n))
WRAP(int, -1, unlinkat, EIO, (int dfd, const char *path, int flags), (dfd, path, flags))
WRAP(int, -1, linkat, ENOSPC, (int a, const char *p, int b, const char *q, int flags), (a, p, b, q, flags))
WRAP(int, -1, mkdirat, ENOSPC, (int dfd, const char *path, mode_t mode), (dfd, path, mode))
WRAP(int, -1, rename, EIO, (const char *a, const char *b), (a, b))
WRAP(int, -1, renameat, EIO, (int a, const char *p, int b, const char *q), (a, p, b, q))
WRAP(int, -1, fsync, EIO, (int fd), (fd))
WRAP(int, -1, fchmod, EIO, (int fd, mode_t mode), (fd, mode))
WRAP(int, -1, fchown, EIO, (int fd, uid_t u, gid_t g), (fd, u, g))
WRAP(int, -1, dup2, EINTR, (int a, int b), (a, b))
WRAP(int, -1, sigtimedwait, EINTR, (const sigset_t *set, siginfo_t *info, const struct timespec *t), (set, info, t))
#endif
