/* SPDX-License-Identifier: MIT */
/*
 * The system calls of the overlay's guard (plugin/guard/guard.c), raw:
 * the same code runs as a program of its own with no libc (the guard
 * criu executes, plugin/guard/main.c) and in a fork of criu (where libc's
 * state is criu's copy).  Each returns the kernel's value, -errno on
 * failure; there is no errno.  Numbers: arch/x86/entry/syscalls/
 * syscall_64.tbl and include/uapi/asm-generic/unistd.h (aarch64).
 */
#ifndef PTIMER_GUARD_SYS_H
#define PTIMER_GUARD_SYS_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
#include "restorer/arch/x86_64/sys.h"
#define GNR_read	0
#define GNR_write	1
#define GNR_close	3
#define GNR_nanosleep	35
#define GNR_kill	62
#define GNR_fcntl	72
#define GNR_exit_group	231
#define GNR_getdents64	217
#define GNR_openat	257
#define GNR_newfstatat	262
#define GNR_unlinkat	263
#define GNR_linkat	265
#define GNR_symlinkat	266
#define GNR_ppoll	271
#define GNR_dup3	292
#define GNR_prlimit64	302
#define GNR_execveat	322
#elif defined(__aarch64__)
#include "restorer/arch/aarch64/sys.h"
#define GNR_dup3	24
#define GNR_fcntl	25
#define GNR_unlinkat	35
#define GNR_symlinkat	36
#define GNR_linkat	37
#define GNR_openat	56
#define GNR_close	57
#define GNR_getdents64	61
#define GNR_read	63
#define GNR_write	64
#define GNR_ppoll	73
#define GNR_newfstatat	79
#define GNR_exit_group	94
#define GNR_nanosleep	101
#define GNR_kill	129
#define GNR_prlimit64	261
#define GNR_execveat	281
#else
#error "plugin/guard/sys.h: x86_64 and aarch64 only"
#endif
#define GNR_close_range	436	/* the same on every architecture from Linux 5.9 */

/* uapi/asm-generic/fcntl.h, uapi/linux/fcntl.h, uapi/linux/stat.h,
 * uapi/asm-generic/errno*.h, uapi/linux/prctl.h, uapi/asm-generic/poll.h */
#define G_AT_FDCWD		(-100)
#define G_AT_SYMLINK_NOFOLLOW	0x100
#define G_AT_REMOVEDIR		0x200
#define G_O_RDONLY		0
#define G_O_RDWR		2
#if defined(__aarch64__)	/* arch/arm64/include/uapi/asm/fcntl.h */
#define G_O_DIRECTORY		040000
#define G_O_NOFOLLOW		0100000
#else
#define G_O_DIRECTORY		0200000
#define G_O_NOFOLLOW		0400000
#endif
#define G_O_CLOEXEC		02000000
#define G_F_GETFD		1
#define G_F_OFD_SETLK		37
#define G_F_WRLCK		1
#define G_S_IFMT		0170000
#define G_S_IFREG		0100000
#define G_DT_UNKNOWN		0
#define G_DT_REG		8
#define G_EINTR			4
#define G_EIO			5
#define G_ESRCH			3
#define G_EEXIST		17
#define G_POLLIN		0x1
#define G_POLLHUP		0x10
#define G_PR_SET_NAME		15
#define G_F_DUPFD_CLOEXEC	1030
#define G_AT_EMPTY_PATH		0x1000
#define G_RLIMIT_NOFILE		7

/* struct flock (uapi/asm-generic/fcntl.h, 64-bit) */
struct g_flock {
	int16_t l_type, l_whence;
	int64_t l_start, l_len;
	int32_t l_pid;
};
struct g_pollfd {
	int32_t fd;
	int16_t events, revents;
};
struct g_timespec {
	int64_t tv_sec, tv_nsec;
};
/* struct linux_dirent64 (include/linux/dirent.h) */
struct g_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	uint16_t d_reclen;
	uint8_t d_type;
	char d_name[];
};

static inline long g_read(int fd, void *b, size_t n) { return ptimer_syscall3(GNR_read, fd, (long)b, (long)n); }
static inline long g_write(int fd, const void *b, size_t n) { return ptimer_syscall3(GNR_write, fd, (long)b, (long)n); }
static inline long g_close(int fd) { return ptimer_syscall3(GNR_close, fd, 0, 0); }
static inline long g_openat(int dfd, const char *p, int fl) { return ptimer_syscall4(GNR_openat, dfd, (long)p, fl, 0); }
static inline long g_fcntl(int fd, int cmd, long arg) { return ptimer_syscall3(GNR_fcntl, fd, cmd, arg); }
static inline long g_getdents64(int fd, void *b, size_t n)
{
	return ptimer_syscall3(GNR_getdents64, fd, (long)b, (long)n);
}
static inline long g_unlinkat(int dfd, const char *p, int fl) { return ptimer_syscall3(GNR_unlinkat, dfd, (long)p, fl); }
static inline long g_linkat(int ofd, const char *o, int nfd, const char *n)
{
	return ptimer_syscall5(GNR_linkat, ofd, (long)o, nfd, (long)n, 0);
}
static inline long g_symlinkat(const char *t, int nfd, const char *n)
{
	return ptimer_syscall3(GNR_symlinkat, (long)t, nfd, (long)n);
}
/* the mode only (st_mode: offset 24 on x86_64, 16 on aarch64's generic stat) */
static inline long g_fstatat_mode(int dfd, const char *p, uint32_t *mode)
{
	uint64_t st[32];
	long r = ptimer_syscall4(GNR_newfstatat, dfd, (long)p, (long)st, G_AT_SYMLINK_NOFOLLOW);

#if defined(__x86_64__)
	*mode = ((uint32_t *)st)[6];
#else
	*mode = ((uint32_t *)st)[4];
#endif
	return r;
}
/* the kernel writes the time left back into *t (glibc's poll hides that) */
static inline long g_ppoll(struct g_pollfd *p, int n, struct g_timespec *t)
{
	return ptimer_syscall5(GNR_ppoll, (long)p, n, (long)t, 0, 8);
}
static inline long g_kill(int pid, int sig) { return ptimer_syscall3(GNR_kill, pid, sig, 0); }
static inline long g_nanosleep(struct g_timespec *t) { return ptimer_syscall3(GNR_nanosleep, (long)t, 0, 0); }
static inline long g_prctl(int op, unsigned long a) { return ptimer_syscall5(PTIMER_NR_prctl, op, (long)a, 0, 0, 0); }
static inline long g_dup3(int o, int n) { return ptimer_syscall3(GNR_dup3, o, n, 0); }
static inline long g_close_range(unsigned lo, unsigned hi) { return ptimer_syscall3(GNR_close_range, lo, hi, 0); }
static inline long g_execveat(int fd, const char *p, char *const *argv, char *const *envp, int fl)
{
	return ptimer_syscall5(GNR_execveat, fd, (long)p, (long)argv, (long)envp, fl);
}
/* RLIMIT_NOFILE's soft limit, or 1024 */
static inline uint64_t g_nofile(void)
{
	uint64_t lim[2] = { 1024, 1024 };

	ptimer_syscall4(GNR_prlimit64, 0, G_RLIMIT_NOFILE, 0, (long)lim);
	return lim[0];
}
static inline __attribute__((noreturn)) void g_exit(int code)
{
	for (;;)
		ptimer_syscall3(GNR_exit_group, code, 0, 0);
}

#endif
