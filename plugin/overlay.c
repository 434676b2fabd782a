// SPDX-License-Identifier: MIT
/*
 * The overlay: the directory criu reads its images from while ptimer
 * restores timers that criu's core images must not hold.
 *
 * Where ptimer restores the timers itself, criu must read core images
 * without them, and the image directory must stay the user's checkpoint
 * whatever happens: a restore that fails, a criu that is killed, another
 * restore of it at the same time, criu alone after.  So criu's images are
 * never changed: criu is given a directory of its own to read, the overlay
 * DIR/.ptimer-restore-XXXXXX, which holds a hard link of each of its
 * files (a symbolic link where the file system has none) and, in place of
 * the core images ptimer restores, those images without the timers.  The
 * overlay takes the place of criu's image directory descriptor
 * (criu_get_image_dir(), which criu and its restored tasks open every image
 * through) from the end of init(RESTORE) to the first RESUME_DEVICES_LATE
 * (overlay_release: criu reads no image after), when criu's own is put
 * back and the guard removes the overlay, or to exit(RESTORE) where the
 * restore failed before.  If criu dies before that, the guard removes it;
 * what a guard could not remove, the next restore does.
 */
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <criu/criu-plugin.h>
/* weak: the plugin is also loaded without criu (test/unit/test_plugin_hooks.c) */
#pragma weak criu_get_image_dir

#include "core/fault.h"
#include "core/log.h"
#include "core/util.h"
#include "plugin/plugin.h"
#include "plugin/guard/sys.h"


static char ov_name[64];	/* the overlay's name in the image directory, "" when none */
static int ov_fd = -1;		/* the overlay */
static int img_fd_saved = -1;	/* criu's image directory while the overlay takes its place */

/*
 * The guard: a process of its own that removes the overlay when criu dies
 * before exit(RESTORE) does it (criu SIGKILLed by timeout -k, the OOM
 * killer, a runtime that gives up).  It is started before criu makes the
 * overlay's directory, with its name, so that no instant has an overlay
 * without a guard: killed before it made the directory, criu leaves
 * nothing; after, the guard sees it die and removes what it made (an
 * overlay whose .lock is free or not made yet: guard.c ov_orphan).  criu
 * does not wait for it to start.  It is a small static program embedded
 * in the plugin (plugin/guard/), executed from a memfd (guard_start; a
 * fork of criu where that cannot be run: the same code, plugin/guard/
 * guard.c), leaves criu's session and is not criu's child (criu's restore
 * takes the exit of any child of its own for a failure), is named
 * ptimer-guard (what kills criu by name must not kill it), keeps only the
 * image directory, criu's pidfd and its pipes, links criu's images into
 * the overlay (link_all) where there are many, once criu says it is made,
 * while criu goes on, sends the outcome (struct guard_links, waited for by
 * links_wait), and waits for criu's exit (pidfd, Linux 5.3; else a look
 * every 20 ms) or for the byte guard_done() sends once exit(RESTORE) has
 * removed the overlay itself.
 */

static int guard_fd = -1;	/* the write end of the guard's pipe, in criu */
static int links_fd = -1;	/* where the guard's struct guard_links comes,
				   then its word that it removed the overlay */
static bool links_done;		/* struct guard_links read */
static bool released;		/* the guard removes the overlay (overlay_release) */
static int rel_fd = -1;		/* criu's image directory, after overlay_release */
static bool exec_check;		/* the guard's program: its outcome not seen yet */
static char ov_dir[4096];	/* the image directory's path, for messages */

/* read(2) until len bytes or EOF; bytes read or -1 */
static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t at = 0;

	while (at < len) {
		ssize_t n = read(fd, (char *)buf + at, len - at);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (!n)
			break;
		at += (size_t)n;
	}
	return (ssize_t)at;
}

/* ov_link_all's outcome (in criu or the guard) as err: 0 or -errno. */
static int links_msg(const struct guard_links *gl, struct ptimer_err *err)
{
	int e = gl->ret < 0 ? -gl->ret : EIO;
	char name[sizeof(gl->name)];

	if (!gl->ret)
		return 0;
	snprintf(name, sizeof(name), "%.*s", (int)sizeof(name) - 1, gl->name);
	switch (gl->what) {
	case GL_OPEN:
		return ptimer_errf(err, e, "cannot open %s/%s: %s", ov_dir, ov_name, strerror(e));
	case GL_LIST:
		return ptimer_errf(err, e, "cannot list the image directory %s: %s", ov_dir, strerror(e));
	case GL_INJECTED:
		return ptimer_errf(err, e, "cannot link %s/%s into %s: injected failure", ov_dir, name, ov_name);
	default:
		return ptimer_errf(err, e, "cannot link %s/%s into %s: %s", ov_dir, name, ov_name, strerror(e));
	}
}


/* A fresh overlay name into name[len]: OVERLAY_PREFIX and six random
 * letters (unique across pid namespaces and hosts sharing the directory). */
static void overlay_name(char *name, size_t len, int tries)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char r[6];
	size_t at = (size_t)snprintf(name, len, OVERLAY_PREFIX);

	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		uint64_t x = ptimer_now_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)tries * 2654435761u;

		memcpy(r, &x, sizeof(r));
	}
	for (size_t i = 0; i < sizeof(r) && at + 1 < len; i++)
		name[at++] = abc[r[i] % (sizeof(abc) - 1)];
	name[at] = 0;
}

/* A fresh overlay directory in dirfd, mode 0700 until overlay_make gives
 * it the directory's; its name into name.  Returns 0 or -errno. */
static int overlay_mkdir(int dirfd, char *name, size_t len)
{
	for (int tries = 0; tries < 100; tries++) {
		overlay_name(name, len, tries);
		if (!mkdirat(dirfd, name, 0700))
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* Every link into the overlay made here, in criu (few images, no guard). */
static int link_all(int dfd, int ovfd, struct ptimer_err *err)
{
	struct guard_links gl;

	ov_link_all(dfd, ovfd, ptimer_fault("overlay-links"), &gl);
	return links_msg(&gl, err);
}

/*
 * The guard's name, "ptimer-guard", as its comm and as its command line,
 * so that what kills criu by name (pkill -f criu, killall criu) does not
 * kill the guard, which must outlive criu.  The command line is moved to
 * the name with PR_SET_MM_ARG_START/END (Linux 3.5, CAP_SYS_RESOURCE),
 * else written over criu's own arguments in the guard's copy of criu's
 * stack ([arg_start, arg_end) from /proc/self/stat fields 48 and 49, as
 * setproctitle() does; the kernel then shows the name and NULs).
 */
static void guard_name(void)
{
	static char name[] = "ptimer-guard";
	unsigned long lo = 0, hi = 0;
	char buf[1024], *p;
	ssize_t n;
	int fd, k;

	prctl(PR_SET_NAME, name, 0, 0, 0);
	if (!prctl(PR_SET_MM, PR_SET_MM_ARG_START, (unsigned long)name, 0, 0) &&
	    !prctl(PR_SET_MM, PR_SET_MM_ARG_END, (unsigned long)(name + sizeof(name)), 0, 0))
		return;
	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* after the comm: field 3 is the first; arg_start is 48, arg_end 49 */
	for (k = 3; p && k <= 48; k++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %lu %lu", &lo, &hi) != 2 || hi <= lo || hi - lo < sizeof(name))
		return;
	memset((void *)lo, 0, hi - lo);
	memcpy((void *)lo, name, sizeof(name));
}

/*
 * The guard as a program of its own (plugin/guard/main.c: its argv, envp
 * and descriptors), executed from a memfd that holds it (execveat(2)
 * AT_EMPTY_PATH, Linux 3.19; MFD_EXEC where vm.memfd_noexec makes memfds
 * noexec by default, Linux 6.3), so that nothing of criu's address space
 * is copied: a fork of criu copies its page tables and then costs criu a
 * page fault at the first write to each page it shares with the copy.
 * Static, with no dynamic loader: its start is its execve only, where the
 * plugin run by ld.so, the guard before it, mapped and relocated four
 * libraries while criu restored: 0.7 ms more of a small
 * restore (criu 4.2.1, one task with 7 timers, takeover, medians of 15).
 */
#define GUARD_FDS 4
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U	/* uapi/linux/memfd.h, Linux 6.3 */
#endif
extern const unsigned char ptimer_guard_elf_start[], ptimer_guard_elf_end[];

static struct {
	char env[128];			/* PTIMER_GUARD=<criu> <flags> <ov_name> */
	char *argv[2], *envp[2];
	int fds[GUARD_FDS];		/* to 3.. in the guard, in that order */
	int prog;			/* the memfd holding the program */
	pid_t guard;			/* the guard's pid, from the child; 0: none */
	/* 1 while the child that executes the program may use criu's
	 * memory: the kernel zeroes it at that child's execve or exit
	 * (CLONE_CHILD_CLEARTID; mm_release, kernel/fork.c) and wakes a
	 * futex waiter; failed: set by the child before it exits */
	volatile int alive, failed;
} gx;
static char gx_stack[16384] __attribute__((aligned(16)));

/* The guard's program in a fresh memfd (CLOEXEC): its descriptor, or
 * -errno (the guard is a fork of criu then). */
static __attribute__((noinline)) int guard_prog(void)
{
	/* "guard-noexec": an empty program, which execveat refuses (ENOEXEC) */
	size_t len = ptimer_fault("guard-noexec") ? 0 : (size_t)(ptimer_guard_elf_end - ptimer_guard_elf_start), at = 0;
	int fd = memfd_create("ptimer-guard", MFD_CLOEXEC | MFD_EXEC), e;

	if (fd < 0 && errno == EINVAL)	/* before Linux 6.3 */
		fd = memfd_create("ptimer-guard", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (at < len) {
		ssize_t n = write(fd, ptimer_guard_elf_start + at, len - at);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = n < 0 ? errno : EIO;
			close(fd);
			return -e;
		}
		at += (size_t)n;
	}
	return fd;
}

/*
 * clone(CLONE_VM) child of guard_start's vfork child, on gx_stack: gx.fds
 * to 3.., the rest closed but the program's memfd (which the execveat
 * closes), the program run.  It shares criu's memory and thread pointer
 * while criu goes on (criu waits for no execve: 130-450 us here), so it
 * makes raw system calls only (no errno, no libc state) and reads only gx,
 * which criu leaves alone until gx.alive says the child is done with
 * criu's memory (guard_child_wait: before the next guard_start and before
 * criu may unload the plugin).  A program that could not run (gx.failed)
 * is replaced by a fork of criu at links_wait.
 */
static int guard_exec_child(void *arg)
{
	int tmp[GUARD_FDS], keep[GUARD_FDS + 1];

	(void)arg;
	for (int i = 0; i < GUARD_FDS; i++)
		tmp[i] = gx.fds[i] >= 0 ? (int)g_fcntl(gx.fds[i], G_F_DUPFD_CLOEXEC, 4 + GUARD_FDS) : -1;
	keep[GUARD_FDS] = (int)g_fcntl(gx.prog, G_F_DUPFD_CLOEXEC, 4 + GUARD_FDS);
	for (int i = 0; i < GUARD_FDS; i++) {
		keep[i] = tmp[i] >= 0 && g_dup3(tmp[i], 3 + i) == 3 + i ? 3 + i : -1;
		if ((gx.fds[i] >= 0 && keep[i] < 0) || keep[GUARD_FDS] < 0) {
			gx.failed = 1;
			g_exit(127);
		}
	}
	close_all_but(keep, GUARD_FDS + 1);
	g_execveat(keep[GUARD_FDS], "", gx.argv, gx.envp, G_AT_EMPTY_PATH);
	gx.failed = 1;
	g_exit(127);
}

/* Until the child that executes the guard's program is done with criu's
 * memory (gx.alive), at most 2 s.  Returns true when it is. */
static bool guard_child_wait(void)
{
	uint64_t end = 0;

	while (gx.alive) {
		struct timespec ms = { 0, 1000000 };
		uint64_t now = ptimer_now_ns();

		if (!end)
			end = now + 2000000000ull;
		else if (now >= end)
			return false;
		syscall(SYS_futex, &gx.alive, FUTEX_WAIT, 1, &ms, NULL, 0);
	}
	return true;
}

/*
 * The guard started, for the overlay ov_name in dirfd that criu makes next
 * (overlay_make): the program (above), else a fork of criu.  Returns 0, or
 * -ECHILD when no guard could be started (said in a warning).
 */
static int guard_start(int dirfd, bool may_exec)
{
	pid_t criu = getpid(), child;
	int p[2], q[2], st = 0, e, pfd = -1;
	unsigned flags = (ptimer_fault("overlay-links") ? GUARD_FAIL_LINKS : 0) |
			 (ptimer_fault("guard-dies") ? GUARD_DIES : 0);
	volatile bool exec_ok;
	volatile int prog;	/* set before the vfork, read after */
	sigset_t all, old;

	if (pipe2(p, O_CLOEXEC))
		goto no_guard;
	if (pipe2(q, O_CLOEXEC)) {
		close(p[0]);
		close(p[1]);
		goto no_guard;
	}
	pfd = (int)syscall(SYS_pidfd_open, criu, 0);	/* CLOEXEC; Linux 5.3 */
	/* gx is the last child's until it is done with it */
	prog = may_exec && !ptimer_fault("guard-exec") && guard_child_wait() ? guard_prog() : -1;
	exec_ok = prog >= 0;
	if (exec_ok) {
		gx.alive = 1;
		gx.failed = 0;
		gx.prog = prog;
		snprintf(gx.env, sizeof(gx.env), "PTIMER_GUARD=%d %u %s", (int)criu, flags, ov_name);
		gx.argv[0] = "ptimer-guard";
		gx.argv[1] = NULL;
		gx.envp[0] = gx.env;
		gx.envp[1] = NULL;
		gx.fds[0] = p[0];
		gx.fds[1] = q[1];
		gx.fds[2] = dirfd;
		gx.fds[3] = pfd;
	}
	/*
	 * vfork: the first child borrows criu's memory and stack until it
	 * exits, and makes system calls only (no libc state of criu's
	 * touched).  In its own session it starts the guard, which is not
	 * criu's child then: the program (guard_exec_child), or where that
	 * cannot be run a fork of it by clone(2), criu's address space
	 * copied once.  No handler of criu's may run on the stack the vfork
	 * child borrows; the guard keeps every signal blocked.
	 */
	gx.guard = 0;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	child = vfork();
	if (child == 0) {
		long g;

		syscall(SYS_setsid);
		if (exec_ok) {
			g = clone(guard_exec_child, gx_stack + sizeof(gx_stack),
				  CLONE_VM | CLONE_CHILD_CLEARTID | SIGCHLD, NULL, NULL, NULL, &gx.alive);
			if (g > 0) {
				gx.guard = (pid_t)g;
				_exit(0);
			}
			gx.alive = 0;
			exec_ok = false;
		}
		/* x86_64 and aarch64 (restorer/abi.h): flags first */
		g = syscall(SYS_clone, (unsigned long)SIGCHLD, 0ul, 0ul, 0ul, 0ul);
		if (g) {
			gx.guard = g > 0 ? (pid_t)g : 0;
			_exit(g < 0 ? 1 : 0);
		}
		{
			/* the guard: criu's memory copied, nothing of it shared */
			const int keep[4] = { p[0], q[1], dirfd, pfd };

			guard_name();
			close_all_but(keep, 4);
			guard_loop(criu, pfd, p[0], q[1], dirfd, ov_name, flags & ~GUARD_DIES);
		}
	}
	e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	close(q[1]);
	if (pfd >= 0)
		close(pfd);
	if (prog >= 0)
		close(prog);	/* gx.prog: read by guard_exec_child */
	if (child < 0) {
		gx.alive = 0;	/* no child to say it */
		close(p[1]);
		close(q[0]);
		errno = e;
		goto no_guard;
	}
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		/* the guard could not be forked (RLIMIT_NPROC, a pids cgroup) */
		close(p[1]);
		close(q[0]);
		errno = EAGAIN;
		goto no_guard;
	}
	if (!exec_ok)
		ptimer_log(PTIMER_LOG_DEBUG, "the guard of %s is a fork of criu: %s", ov_name,
			   !may_exec ? "the one run as a program is gone" :
			   ptimer_fault("guard-exec") ? "injected failure" :
			   prog < 0 ? strerror(-prog) : "cannot clone the process that runs its program");
	guard_fd = p[1];
	links_fd = q[0];
	links_done = released = false;
	exec_check = exec_ok;
	return 0;
no_guard:
	ptimer_log(PTIMER_LOG_WARN, "cannot start the process that removes ptimer's overlay if criu is killed: %s; "
		   "a later restore removes one left", strerror(errno));
	return -ECHILD;
}

/*
 * One byte to the guard (guard_loop: 'm', 'M', 'r' or 0).  Returns 0, or -errno
 * when it is gone: the SIGPIPE such a write raises is blocked and taken
 * back, since criu, which does not ignore it, would die of it.
 */
static int guard_say(char c)
{
	struct timespec zero = { 0 };
	sigset_t pipe_set, old;
	ssize_t n;
	int e;

	if (guard_fd < 0)
		return -EBADF;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, &old);
	n = write(guard_fd, &c, 1);
	e = n < 0 ? errno : EIO;
	if (n < 0 && e == EPIPE)
		sigtimedwait(&pipe_set, NULL, &zero);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return n == 1 ? 0 : -e;
}

/* The guard's pipes closed, nothing said (it is gone). */
static void guard_lost(void)
{
	/* criu may unload the plugin next (init failed): the child running
	 * on its gx_stack done first */
	guard_child_wait();
	if (links_fd >= 0) {
		close(links_fd);
		links_fd = -1;
	}
	if (guard_fd >= 0) {
		close(guard_fd);
		guard_fd = -1;
	}
}

/* The guard's program could not run (gx.failed, seen by links_wait): a
 * fork of criu in its place, told the overlay is made ('M': the links are
 * criu's); none: the restore goes on without a guard. */
static void guard_replace(void)
{
	int img = criu_get_image_dir();

	guard_lost();
	if (img < 0 || guard_start(img, false) || guard_say('M'))
		guard_lost();
	links_done = true;
}

/* The links the guard did not make, made here (criu's own directory is
 * still its image directory: before overlay_switch).  0 or -errno. */
static int links_here(struct ptimer_err *err)
{
	int img = criu_get_image_dir();

	if (ov_fd < 0 || img < 0)
		return ptimer_errf(err, EIO, "the process that links criu's images into %s ended before it was done",
				   ov_name);
	return link_all(img, ov_fd, err);
}


/*
 * Wait for the guard's links (guard_loop).  Returns 0, or -errno with err
 * set (err NULL: only waited for, as before removing the overlay).
 */
static int links_wait(struct ptimer_err *err)
{
	struct guard_links in;
	ssize_t n;

	if (links_fd < 0)
		return 0;
	if (err && exec_check) {
		/* the program's outcome, known by now (its execve takes
		 * 0.1-0.5 ms, started before the overlay was made) */
		exec_check = false;
		if (guard_child_wait() && gx.failed) {
			bool links = !links_done;

			guard_replace();
			return links ? links_here(err) : 0;
		}
	}
	if (links_done)
		return 0;
	n = read_full(links_fd, &in, sizeof(in));
	links_done = true;
	if (n == (ssize_t)sizeof(in))
		return links_msg(&in, err);
	/* the guard ended before its word (killed; its program died as it
	 * started): the links here, the restore goes on without a guard */
	ptimer_log(PTIMER_LOG_DEBUG, "the guard of %s ended before it linked criu's images: linked here", ov_name);
	guard_lost();
	return err ? links_here(err) : -EIO;
}

/* The guard sent away (0: it exits and removes nothing). */
static void guard_done(void)
{
	if (guard_fd >= 0 && guard_say(0))
		ptimer_log(PTIMER_LOG_DEBUG, "the guard of %s is gone already", ov_name);
	guard_lost();
}

/*
 * Is the overlay DIR/name another restore's that is over?  A restore holds
 * an open file description lock (F_OFD_SETLK) on the overlay's .lock from
 * its making to its removal, so the lock is free once that criu and
 * everything it forked are gone, in whatever pid namespace or host (a
 * shared image directory).  An overlay without .lock is being made: stale
 * only after a minute.
 */
static bool overlay_stale(int dirfd, const char *name)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char lock[300];
	struct stat st;
	bool stale;
	int fd;

	snprintf(lock, sizeof(lock), "%s/.lock", name);
	fd = openat(dirfd, lock, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode) &&
		       st.st_mtime + 60 < time(NULL);
	stale = !fcntl(fd, F_OFD_SETLK, &fl);
	close(fd);
	return stale;
}

/*
 * What restores that did not finish left in dir (fd dfd), one entry (name)
 * of its listing: an overlay of a criu that no longer runs is removed.  A
 * core-<vpid>.img.with-timers is what a development ptimer (0.1, in no
 * release) left when it stripped criu's core images in place: its restore
 * is refused with one line saying how to put it back.  Called from
 * plan_restore's one pass over the directory; prefix tests first, so that
 * most names cost a compare.  Returns 0 or -EINVAL (err set).
 */
int clean_leftover(const char *dir, int dfd, const char *name, struct ptimer_err *err)
{
	static const char wt[] = ".img.with-timers";
	size_t len = strlen(name);
	int vpid, end = 0;

	if (!strncmp(name, OVERLAY_PREFIX, strlen(OVERLAY_PREFIX)) && overlay_stale(dfd, name)) {
		ov_remove(dfd, name);
		ptimer_log(PTIMER_LOG_INFO, "%s/%s: left by a restore that did not finish; removed", dir, name);
		return 0;
	}
	if (strncmp(name, "core-", 5) || len < sizeof(wt) || strcmp(name + len - (sizeof(wt) - 1), wt))
		return 0;
	if (sscanf(name, "core-%d.img.with-timers%n", &vpid, &end) != 1 || name[end])
		return 0;
	return ptimer_errf(err, EINVAL, "%s/%s: criu's core image of task %d, kept aside by a development "
			   "ptimer that stripped core-%d.img in place and did not finish; put it back (mv "
			   "core-%d.img.with-timers core-%d.img in %s) and restore again, or dump again",
			   dir, name, vpid, vpid, vpid, vpid, dir);
}

/*
 * Make the overlay of dir (once): every entry of dir but overlays in it
 * (link_all; made by the guard while criu reads on, waited for by
 * overlay_switch, or here when there is no guard; the guard is started
 * first, guard_start).  Its name is unique across pid
 * namespaces and hosts sharing the directory (overlay_mkdir), and it holds
 * .lock, locked (F_OFD_SETLK) while this restore runs (overlay_stale).
 * Its owner and mode are dir's (in a user namespace the restored init,
 * an unprivileged host uid, opens its children's core images).  *path:
 * the overlay's path.  Returns 0 or -errno (err set; nothing left).
 */
static int ov_lock = -1;	/* the overlay's .lock, locked */
static int ov_mkdir_err;	/* -errno: no overlay can be made in this restore */
static char ov_mkdir_msg[sizeof(((struct ptimer_err *)0)->msg)];
static size_t dir_entries;	/* in the image directory (overlay_expect) */

void overlay_expect(size_t n_entries)
{
	dir_entries = n_entries;
}

int overlay_make(const char *dir, char *path, size_t len, struct ptimer_err *err)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct stat st;
	int dfd, ret = 0;
	bool guarded, by_guard;

	if (ov_fd >= 0) {
		snprintf(path, len, "%s/%s", dir, ov_name);
		return 0;
	}
	if (ov_mkdir_err) {
		/* a directory where none can be made (read-only): said once,
		 * not tried again for each task, each with a guard */
		return ptimer_errf(err, -ov_mkdir_err, "%s", ov_mkdir_msg);
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st))
		return ptimer_errf(err, errno, "cannot open the image directory %s: %s", dir, strerror(errno));
	snprintf(ov_dir, sizeof(ov_dir), "%s", dir);
	/*
	 * The guard first, the directory after: no instant has an overlay
	 * without a guard.  The guard links the images once told the overlay
	 * is made and locked (links_wait); without one, all here.
	 */
	overlay_name(ov_name, sizeof(ov_name), 0);
	guarded = !guard_start(dfd, true);
	if (guarded && ptimer_fault("guard-dies")) {
		/*
		 * The test of a guard that dies before criu's word: its exit
		 * waited for, at most 5 s.  By its pidfd, not by the hangup
		 * of the pipe it wrote to: an exiting task's files are
		 * released one by one (deferred fput), so the pipe criu
		 * writes to can still have the guard as its reader then;
		 * the pidfd is readable once all are (exit_task_work comes
		 * before exit_notify, kernel/exit.c).
		 */
		int gp = gx.guard > 0 ? (int)syscall(SYS_pidfd_open, gx.guard, 0) : -1, gerr = gp < 0 ? errno : 0;
		struct pollfd pf = { .fd = gp, .events = POLLIN };
		struct timespec ms = { 0, 1000000 };
		uint64_t end = ptimer_now_ns() + 5000000000ull;
		char stat[64], st_buf[256];

		for (uint64_t now = ptimer_now_ns(); gp >= 0 && now < end && !pf.revents; now = ptimer_now_ns())
			if (poll(&pf, 1, (int)((end - now) / 1000000 + 1)) < 0 && errno != EINTR)
				break;
		if (gp >= 0)
			close(gp);
		/* no pidfd (Linux < 5.3): its /proc entry gone or a zombie */
		snprintf(stat, sizeof(stat), "/proc/%d/stat", (int)gx.guard);
		while (gp < 0 && gx.guard > 0 && gerr != ESRCH && ptimer_now_ns() < end) {
			int fd = open(stat, O_RDONLY | O_CLOEXEC);
			ssize_t n = fd >= 0 ? read(fd, st_buf, sizeof(st_buf) - 1) : -1;
			char *rp = n > 0 ? (st_buf[n] = 0, strrchr(st_buf, ')')) : NULL;

			if (fd >= 0)
				close(fd);
			if (!rp || rp[1] != ' ' || rp[2] == 'Z' || rp[2] == 'X')
				break;
			nanosleep(&ms, NULL);
		}
	}
	ret = mkdirat(dfd, ov_name, 0700) ? -errno : 0;
	if (ret == -EEXIST && guarded) {
		/* another restore's overlay has that name (one chance in
		 * 62^6): sent away, that guard leaves it alone */
		ptimer_log(PTIMER_LOG_DEBUG, "%s/%s is another restore's; this one goes on without a guard", dir,
			   ov_name);
		links_done = true;
		guard_done();
		guarded = false;
	}
	if (ret == -EEXIST)
		ret = overlay_mkdir(dfd, ov_name, sizeof(ov_name));
	if (ret) {
		ret = ptimer_errf(err, -ret, "cannot make a directory for criu to read in %s: %s", dir, strerror(-ret));
		ov_mkdir_err = ret;
		snprintf(ov_mkdir_msg, sizeof(ov_mkdir_msg), "%s", err->msg);
		links_done = true;
		guard_done();
		ov_name[0] = 0;
		close(dfd);
		return ret;
	}
	snprintf(path, len, "%s/%s", dir, ov_name);
	ov_fd = openat(dfd, ov_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/*
	 * .lock appears locked: made and locked under another name, then
	 * renamed.  Made as .lock and locked after, another restore's
	 * overlay_stale could take the free lock in between and remove this
	 * live overlay; before the rename it sees an overlay being made.
	 */
	if (ov_fd >= 0)
		ov_lock = openat(ov_fd, ".lock.new", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (ov_fd < 0 || ov_lock < 0 || fcntl(ov_lock, F_OFD_SETLK, &fl) ||
	    renameat(ov_fd, ".lock.new", ov_fd, ".lock") ||
	    fchown(ov_fd, st.st_uid, st.st_gid) || fchmod(ov_fd, st.st_mode & 07777))
		ret = ptimer_errf(err, errno, "cannot make %s/%s for criu to read: %s", dir, ov_name, strerror(errno));
	/*
	 * The links: by the guard while criu reads on where there are many
	 * (2,400
	 * links for a tree of 300 tasks about 11 ms), else here (20 links
	 * for one task: about 0.1 ms).  The guard's are waited for by
	 * links_wait; without 'm' it sends none.
	 */
	by_guard = !ret && guarded && (dir_entries > OVERLAY_LINKS_HERE || ptimer_fault("links-by-guard"));
	if (!ret && guarded && guard_say(by_guard ? 'm' : 'M')) {
		/*
		 * The guard is gone: its program could not run (a seccomp
		 * filter without execveat) or it was killed.  A fork of criu in its place,
		 * told at once; none: the links here, no guard.
		 */
		ptimer_log(PTIMER_LOG_DEBUG, "the guard of %s is gone before the overlay was made", ov_name);
		guard_lost();
		if (guard_start(dfd, false) || guard_say(by_guard ? 'm' : 'M')) {
			guard_lost();
			by_guard = false;
		}
	}
	links_done = !by_guard;
	if (!ret && !by_guard)
		ret = link_all(dfd, ov_fd, err);
	if (ret) {
		links_wait(NULL);
		if (ov_fd >= 0)
			close(ov_fd);
		if (ov_lock >= 0)
			close(ov_lock);
		ov_fd = ov_lock = -1;
		ov_remove(dfd, ov_name);
		guard_done();
		ov_name[0] = 0;
	}
	close(dfd);
	return ret;
}

int overlay_links(struct ptimer_err *err)
{
	return ov_fd >= 0 ? links_wait(err) : 0;
}

/* The overlay takes the place of criu's image directory (end of init). */
int overlay_switch(struct ptimer_err *err)
{
	int img = criu_get_image_dir(), ret;

	if (ov_fd < 0 || img_fd_saved >= 0)
		return 0;
	ret = links_wait(err);	/* overlay_links has, normally */
	if (ret)
		return ret;
	img_fd_saved = fcntl(img, F_DUPFD_CLOEXEC, 3);
	if (img_fd_saved < 0 || dup2(ov_fd, img) < 0)
		return ptimer_errf(err, errno, "cannot give criu %s to read: %s", ov_name, strerror(errno));
	ptimer_log(PTIMER_LOG_DEBUG, "criu reads its images through %s", ov_name);
	return 0;
}

/*
 * criu's image directory back in its place, the overlay removed (exit, a
 * failed init).  By exit(RESTORE) criu may have closed its descriptor
 * (criu_get_image_dir() then answers -1): the overlay is removed through
 * the one kept.
 */
void overlay_release(void)
{
	int img = criu_get_image_dir();

	if (img_fd_saved < 0 || guard_fd < 0 || links_fd < 0 || img < 0)
		return;		/* no guard: exit(RESTORE) removes it */
	if (dup2(img_fd_saved, img) < 0) {
		ptimer_log(PTIMER_LOG_DEBUG, "cannot give criu its image directory back yet: %s", strerror(errno));
		return;
	}
	rel_fd = img_fd_saved;	/* to remove through, should the guard die */
	img_fd_saved = -1;
	/* the lock first (overlay_done) */
	if (ov_lock >= 0) {
		close(ov_lock);
		ov_lock = -1;
	}
	close(ov_fd);
	ov_fd = -1;
	if (!guard_say('r')) {
		released = true;
		return;
	}
	/* the guard is gone: removed here */
	ov_remove(rel_fd, ov_name);
	close(rel_fd);
	rel_fd = -1;
	guard_done();
	ov_name[0] = 0;
}

void overlay_done(void)
{
	int img = criu_get_image_dir(), dfd = img_fd_saved >= 0 ? img_fd_saved : img;

	ov_mkdir_err = 0;
	if (released) {
		char c;

		/* removed by the guard since the first RESUME_DEVICES_LATE:
		 * done before criu ends, as when removed here */
		if (read_full(links_fd, &c, 1) != 1) {
			/* killed on the way (the OOM killer): the rest here */
			ptimer_log(PTIMER_LOG_DEBUG, "the guard of %s ended before it said it removed it", ov_name);
			ov_remove(rel_fd, ov_name);
		}
		close(rel_fd);
		rel_fd = -1;
		released = false;
		guard_done();
		ov_name[0] = 0;
		return;
	}
	if (img_fd_saved >= 0 && img >= 0 && dup2(img_fd_saved, img) < 0)
		ptimer_log(PTIMER_LOG_ERROR, "cannot give criu its image directory back: %s", strerror(errno));
	/* the lock first: NFS renames a file removed while open (.nfsXXXX),
	 * which would keep the overlay's directory from being removed */
	if (ov_lock >= 0) {
		close(ov_lock);
		ov_lock = -1;
	}
	if (ov_fd >= 0) {
		links_wait(NULL);	/* no link made after the removal */
		close(ov_fd);
		ov_fd = -1;
		if (dfd >= 0)
			ov_remove(dfd, ov_name);
		guard_done();
	}
	if (img_fd_saved >= 0) {
		close(img_fd_saved);
		img_fd_saved = -1;
	}
	ov_name[0] = 0;
}
