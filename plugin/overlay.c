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
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
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
#include <sys/prctl.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <criu/criu-plugin.h>
/* weak: the plugin also runs as the overlay's guard, without criu (overlay.c) */
#pragma weak criu_get_image_dir

#include "core/fault.h"
#include "core/log.h"
#include "core/util.h"
#include "plugin/plugin.h"


static char ov_name[64];	/* the overlay's name in the image directory, "" when none */
static int ov_fd = -1;		/* the overlay */
static int img_fd_saved = -1;	/* criu's image directory while the overlay takes its place */

/* Remove DIR/name, a directory of files only (an overlay). */
static void remove_overlay(int dirfd, const char *name)
{
	struct dirent *de;
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(fd, de->d_name, 0);
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	unlinkat(dirfd, name, AT_REMOVEDIR);
}

/*
 * The guard: a process of its own that removes the overlay when criu dies
 * before exit(RESTORE) does it (criu SIGKILLed by timeout -k, the OOM
 * killer, a runtime that gives up).  It is started before criu makes the
 * overlay's directory, with its name, so that no instant has an overlay
 * without a guard: killed before it made the directory, criu leaves
 * nothing; after, the guard sees it die and removes what it made (an
 * overlay whose .lock is free or not made yet: overlay_orphan).  criu
 * does not wait for it to start.  It is the plugin run as a program by
 * criu's dynamic loader (guard_start; a fork of criu where that cannot
 * be run), leaves criu's session and is not criu's child (criu's restore
 * takes the exit of any child of its own for a failure), is named
 * ptimer-guard (what kills criu by name must not kill it), keeps only the
 * image directory, criu's pidfd and its pipes, links criu's images into
 * the overlay (link_all) where there are many, once criu says it is made,
 * while criu goes on, sends the outcome (struct guard_links, waited for by
 * links_wait), and waits for criu's exit (pidfd, Linux 5.3; else a look
 * every 20 ms) or for the byte guard_done() sends once exit(RESTORE) has
 * removed the overlay itself.
 */
/* What the guard sends criu once every link is made: the outcome of link_all. */
struct guard_links {
	int32_t ret;			/* 0 or -errno */
	char msg[sizeof(((struct ptimer_err *)0)->msg)];
};

static int guard_fd = -1;	/* the write end of the guard's pipe, in criu */
static int links_fd = -1;	/* where the guard's struct guard_links comes,
				   then its word that it removed the overlay */
static bool links_done;		/* struct guard_links read */
static bool released;		/* the guard removes the overlay (overlay_release) */
static int rel_fd = -1;		/* criu's image directory, after overlay_release */

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

/*
 * Wait for the guard's links (guard_run).  Returns 0, or -errno with err
 * set (err NULL: only waited for, as before removing the overlay).
 */
static int links_wait(struct ptimer_err *err)
{
	struct guard_links in;
	ssize_t n;

	if (links_fd < 0)
		return 0;
	if (links_done)
		return 0;
	n = read_full(links_fd, &in, sizeof(in));
	links_done = true;
	if (n != (ssize_t)sizeof(in))
		return ptimer_errf(err, EIO, "the process that links criu's images into %s ended before it was done",
				   ov_name);
	if (in.ret) {
		in.msg[sizeof(in.msg) - 1] = 0;
		return ptimer_errf(err, in.ret < 0 ? -in.ret : EIO, "%s", in.msg);
	}
	return 0;
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

/*
 * Is the overlay DIR/name, made or about to be made by a criu that died,
 * left by it?  Its .lock free, or no .lock (criu died before it made it).
 * Held: another live restore's overlay of the same name (a name that
 * restore had already made when this criu chose it).
 */
static bool overlay_orphan(int dirfd, const char *name)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char lock[300];
	bool orphan;
	int fd;

	snprintf(lock, sizeof(lock), "%s/.lock", name);
	fd = openat(dirfd, lock, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return true;
	orphan = !fcntl(fd, F_OFD_SETLK, &fl);
	close(fd);
	return orphan;
}

/*
 * Link every entry of the image directory dfd (dir) but overlays into the
 * overlay ovfd: a regular file as a hard link, anything else (the parent
 * link of an incremental dump, a symbolic link, a directory) or a file on
 * a file system without hard links as a symbolic link "../NAME", which
 * resolves as criu would have resolved NAME.  A name the overlay has
 * already is a core image without timers that ptimer put there (rename(2)
 * over a link, so never through it): kept.  Returns 0 or -errno (err set).
 */
static int link_all(int dfd, int ovfd, const char *dir, struct ptimer_err *err)
{
	int dd = dup(dfd), ret = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (dd < 0 || !(d = fdopendir(dd))) {
		ret = ptimer_errf(err, errno, "cannot list the image directory %s: %s", dir, strerror(errno));
		if (dd >= 0)
			close(dd);
		return ret;
	}
	rewinddir(d);
	while (!ret) {
		char target[300];

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				ret = ptimer_errf(err, errno, "cannot list the image directory %s: %s", dir,
						  strerror(errno));
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strncmp(de->d_name, OVERLAY_PREFIX, strlen(OVERLAY_PREFIX)))
			continue;
		if (ptimer_fault("overlay-links")) {
			ret = ptimer_errf(err, EIO, "cannot link %s/%s into %s: injected failure", dir, de->d_name,
					  ov_name);
			break;
		}
		/* d_type where the file system gives it: one call a file */
		if ((de->d_type == DT_REG ||
		     (de->d_type == DT_UNKNOWN && !fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		      S_ISREG(st.st_mode))) &&
		    (!linkat(dfd, de->d_name, ovfd, de->d_name, 0) || errno == EEXIST))
			continue;
		snprintf(target, sizeof(target), "../%s", de->d_name);
		if (symlinkat(target, ovfd, de->d_name) && errno != EEXIST)
			ret = ptimer_errf(err, errno, "cannot link %s/%s into %s: %s", dir, de->d_name, ov_name,
					  strerror(errno));
	}
	closedir(d);
	return ret;
}

/* Until criu is gone (its pidfd readable, or kill(2) says ESRCH), at
 * most 2 s. */
static void gone_wait(pid_t criu, int pfd)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i < 200; i++) {
		struct pollfd pf = { .fd = pfd, .events = POLLIN };

		if (pfd >= 0 ? poll(&pf, 1, 10) > 0 : kill(criu, 0) && errno == ESRCH)
			return;
		if (pfd < 0)
			nanosleep(&tick, NULL);
	}
}

/* The guard's loop (guard_main, or a fork of criu: guard_start).  pfd:
 * criu's pidfd, -1 where the kernel has none (< 5.3).  In a fork libc's
 * idea of the thread id is criu's, so nothing that uses it (raise(),
 * pthread_*) is called.  ov_name: the overlay's name, chosen by criu
 * before the guard started. */
static __attribute__((noreturn)) void guard_run(pid_t criu, int pfd, int rd, int wr, int dirfd, const char *dir)
{
	struct pollfd pf[2] = { { .fd = rd, .events = POLLIN }, { .fd = pfd, .events = POLLIN } };
	bool made = false;
	char c;

	for (;;) {
		int n = poll(pf, pfd >= 0 ? 2 : 1, pfd >= 0 ? -1 : 20);

		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0 && (pf[0].revents & (POLLIN | POLLHUP))) {
			if (read(rd, &c, 1) != 1)
				break;		/* every write end closed: criu is gone */
			if (!c)
				_exit(0);	/* exit(RESTORE) is done with it, or it
						   is another restore's (EEXIST) */
			if (c == 'M') {
				/* criu made it (and links it): removed
				 * whatever holds its lock (a restored task
				 * inherits criu's descriptors) */
				made = true;
				continue;
			}
			if (c == 'm') {
				/*
				 * 'm': criu made it and holds its .lock; its
				 * links now, while criu goes on reading the
				 * images on another CPU (2,400 links for a
				 * tree of 300: about 11 ms).  criu waits for
				 * the outcome before it reads a file of the
				 * overlay (overlay_switch).
				 */
				struct guard_links out = { 0 };
				struct ptimer_err e = { "" };
				int ovfd = openat(dirfd, ov_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

				made = true;
				out.ret = ovfd < 0 ? ptimer_errf(&e, errno, "cannot open %s: %s", ov_name,
								 strerror(errno)) :
						     link_all(dirfd, ovfd, dir, &e);
				memcpy(out.msg, e.msg, sizeof(out.msg));
				if (ovfd >= 0)
					close(ovfd);
				if (write(wr, &out, sizeof(out)) < 0) {
					/* criu is gone already: the poll sees it */
				}
				continue;
			}
			/* 'r': criu reads its own directory again
			 * (overlay_release): remove the overlay now, on this
			 * CPU, and say so */
			remove_overlay(dirfd, ov_name);
			if (write(wr, "", 1) < 0) {
				/* criu is gone: nothing left to remove */
			}
			continue;
		}
		if (pfd >= 0 ? n > 0 && (pf[1].revents & POLLIN) : kill(criu, 0) && errno == ESRCH)
			break;
	}
	/* criu died: what it made of the overlay, if anything (told or
	 * not: killed between its mkdir and its word, when its .lock is
	 * free only once criu is gone: a kernel before 5.7 may end the pipe
	 * before it drops the lock) */
	if (!made)
		gone_wait(criu, pfd);
	if (made || overlay_orphan(dirfd, ov_name))
		remove_overlay(dirfd, ov_name);
	_exit(0);
}

/* Close every descriptor but the n of keep (criu's service fds sit near
 * its RLIMIT_NOFILE): close_range(2), Linux 5.9, else one by one up to the
 * limit. */
static void close_all_but(const int *keep, int n)
{
	unsigned int lo = 0;

	for (;;) {
		unsigned int next = ~0u;

		/* the lowest kept descriptor at or above lo */
		for (int i = 0; i < n; i++)
			if (keep[i] >= 0 && (unsigned int)keep[i] >= lo && (unsigned int)keep[i] < next)
				next = (unsigned int)keep[i];
		if (next > lo && syscall(SYS_close_range, lo, next - 1, 0) < 0) {
			long max = sysconf(_SC_OPEN_MAX);

			for (long fd = lo; fd < (long)next && fd < max; fd++)
				close((int)fd);
		}
		if (next == ~0u)
			break;
		lo = next + 1;
	}
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
 * The guard as a program of its own: ptimer_plugin.so run by criu's
 * dynamic loader (ld.so PATH runs a shared object that has an entry point,
 * as it runs libc.so.6), entered at ptimer_guard_entry, with
 *   argv: /proc/self/fd/3 GUARD_ARG <criu's pid> <overlay name>
 *   fds:  3 the plugin (for ld.so), 4 criu's pipe, 5 the pipe to criu,
 *         6 the image directory, 7 criu's pidfd (closed: none)
 * so that nothing of criu's address space is copied: a fork of criu
 * copies its page tables and then costs criu a page fault at the first
 * write to each page it shares with the copy.  The plugin by its
 * descriptor, not by its path (which names criu's libdir), so that the
 * command line names no criu before guard_name() renames it.
 */
#define GUARD_ARG "--ptimer-guard"
#define GUARD_FDS 5

static struct {
	char ldso[256];			/* criu's PT_INTERP, "" when none */
	char so[4096];			/* the plugin, as criu loaded it */
	char pid[24];
	char *argv[6];
	int fds[GUARD_FDS];		/* to 3.. in the guard, in that order */
	int err;			/* the execve's errno, from the child */
	pid_t guard;			/* the guard's pid, from the child; 0: none */
} gx;
static char gx_stack[16384] __attribute__((aligned(16)));

/* criu's dynamic loader and the plugin's path, looked up once: 0, or -1
 * (a static criu: no loader; the guard is a fork then). */
static int guard_exec_paths(void)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	size_t n = getauxval(AT_PHNUM);
	uintptr_t base = 0;
	const char *interp = NULL;
	Dl_info di;

	if (gx.ldso[0] && gx.so[0])
		return 0;
	if (!ph)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (ph[i].p_type == PT_PHDR)
			base = (uintptr_t)ph - ph[i].p_vaddr;
	for (size_t i = 0; i < n; i++)
		if (ph[i].p_type == PT_INTERP)
			interp = (const char *)(base + ph[i].p_vaddr);
	if (!interp || interp[0] != '/' || strlen(interp) >= sizeof(gx.ldso) ||
	    !dladdr((void *)guard_exec_paths, &di) || !di.dli_fname || strlen(di.dli_fname) >= sizeof(gx.so))
		return -1;
	snprintf(gx.ldso, sizeof(gx.ldso), "%s", interp);
	snprintf(gx.so, sizeof(gx.so), "%s", di.dli_fname);
	return 0;
}

/* clone(CLONE_VM | CLONE_VFORK) child of guard_start's vfork child, on
 * gx_stack: gx.fds to 3.., the rest closed, ld.so run.  System calls only
 * (criu's memory, criu and its first child stopped until the execve). */
static int guard_exec_child(void *arg)
{
	int tmp[GUARD_FDS], keep[GUARD_FDS];

	(void)arg;
	for (int i = 0; i < GUARD_FDS; i++)
		tmp[i] = gx.fds[i] >= 0 ? fcntl(gx.fds[i], F_DUPFD_CLOEXEC, 3 + GUARD_FDS) : -1;
	for (int i = 0; i < GUARD_FDS; i++) {
		keep[i] = tmp[i] >= 0 && dup2(tmp[i], 3 + i) == 3 + i ? 3 + i : -1;
		if (gx.fds[i] >= 0 && keep[i] < 0) {
			gx.err = errno ? errno : EBADF;
			_exit(127);
		}
	}
	close_all_but(keep, GUARD_FDS);
	execve(gx.ldso, gx.argv, environ);
	gx.err = errno ? errno : ENOEXEC;
	_exit(127);
}

/*
 * The guard started, for the overlay ov_name in dirfd that criu makes next
 * (overlay_make): the plugin run as a program (above), else a fork of
 * criu.  Returns 0, or -ECHILD when no guard could be started (said in a
 * warning).
 */
static int guard_start(int dirfd, const char *dir, bool may_exec)
{
	pid_t criu = getpid(), child;
	int p[2], q[2], st = 0, e, pfd = -1;
	volatile int so = -1;		/* set before the vfork, read after */
	volatile bool exec_ok;
	sigset_t all, old;

	if (pipe2(p, O_CLOEXEC))
		goto no_guard;
	if (pipe2(q, O_CLOEXEC)) {
		close(p[0]);
		close(p[1]);
		goto no_guard;
	}
	pfd = (int)syscall(SYS_pidfd_open, criu, 0);	/* CLOEXEC; Linux 5.3 */
	exec_ok = may_exec && !ptimer_fault("guard-exec") && !guard_exec_paths() &&
		  (so = open(gx.so, O_RDONLY | O_CLOEXEC)) >= 0;
	if (exec_ok) {
		snprintf(gx.pid, sizeof(gx.pid), "%d", (int)criu);
		gx.argv[0] = "ptimer-guard";
		gx.argv[1] = "/proc/self/fd/3";
		gx.argv[2] = GUARD_ARG;
		gx.argv[3] = gx.pid;
		gx.argv[4] = ov_name;
		gx.argv[5] = NULL;
		gx.fds[0] = so;
		gx.fds[1] = p[0];
		gx.fds[2] = q[1];
		gx.fds[3] = dirfd;
		gx.fds[4] = pfd;
		gx.err = 0;
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
			g = clone(guard_exec_child, gx_stack + sizeof(gx_stack), CLONE_VM | CLONE_VFORK | SIGCHLD,
				  NULL);
			if (g > 0 && !gx.err) {
				gx.guard = (pid_t)g;
				_exit(0);
			}
			if (!gx.err)
				gx.err = EAGAIN;
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
			guard_run(criu, pfd, p[0], q[1], dirfd, dir);
		}
	}
	e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	close(q[1]);
	if (pfd >= 0)
		close(pfd);
	if (so >= 0)
		close(so);
	if (child < 0) {
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
	if (!exec_ok || gx.err)
		ptimer_log(PTIMER_LOG_DEBUG, "the guard of %s is a fork of criu: %s", ov_name,
			   !may_exec ? "the one run as a program is gone" :
			   !exec_ok && ptimer_fault("guard-exec") ? "injected failure" :
			   !gx.ldso[0] ? "criu has no dynamic loader" :
			   !exec_ok ? "the plugin's file cannot be opened" : strerror(gx.err));
	guard_fd = p[1];
	links_fd = q[0];
	links_done = released = false;
	return 0;
no_guard:
	ptimer_log(PTIMER_LOG_WARN, "cannot start the process that removes ptimer's overlay if criu is killed: %s; "
		   "a later restore removes one left", strerror(errno));
	return -ECHILD;
}

/*
 * The guard's program (ptimer_guard_entry, run by guard_exec_child): its
 * arguments and descriptors checked, then guard_run.  Run otherwise (by
 * hand), it says what it is and exits 2.
 */
__attribute__((visibility("hidden"), noreturn, used)) void ptimer_guard_main(long *sp);
void ptimer_guard_main(long *sp)
{
	int argc = (int)sp[0];
	char **argv = (char **)(sp + 1), dir[4096];
	char *end = NULL;
	long criu = argc == 4 ? strtol(argv[2], &end, 10) : 0;
	ssize_t n;

	if (argc != 4 || strcmp(argv[1], GUARD_ARG) || !end || *end || criu <= 0 ||
	    strncmp(argv[3], OVERLAY_PREFIX, strlen(OVERLAY_PREFIX)) || strlen(argv[3]) >= sizeof(ov_name) ||
	    fcntl(4, F_GETFD) < 0 || fcntl(5, F_GETFD) < 0 || fcntl(6, F_GETFD) < 0) {
		static const char msg[] = "ptimer_plugin.so is a criu plugin (criu --libdir DIR); run as a program it "
					  "is only the guard of a criu restore's overlay\n";

		if (write(2, msg, sizeof(msg) - 1) < 0) {
			/* nowhere to say it */
		}
		_exit(2);
	}
	if (ptimer_fault("guard-dies"))
		_exit(3);
	snprintf(ov_name, sizeof(ov_name), "%s", argv[3]);
	close(3);		/* ld.so has mapped the plugin */
	guard_name();
	n = readlink("/proc/self/fd/6", dir, sizeof(dir) - 1);
	if (n <= 0)
		n = snprintf(dir, sizeof(dir), "the image directory");
	dir[n] = 0;
	guard_run((pid_t)criu, fcntl(7, F_GETFD) >= 0 ? 7 : -1, 4, 5, 6, dir);
}

/*
 * The plugin run by hand (./ptimer_plugin.so) is started through the
 * system's dynamic loader too, as glibc's libc.so.6 is: without a
 * PT_INTERP the kernel would jump to the entry point below with nothing
 * relocated.  dlopen ignores it; the guard names criu's loader itself.
 */
#if defined(__x86_64__)
#define PTIMER_INTERP "/lib64/ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define PTIMER_INTERP "/lib/ld-linux-aarch64.so.1"
#else
#error "PTIMER_INTERP: x86_64 and aarch64 only"
#endif
__attribute__((section(".interp"), used, visibility("hidden"))) const char ptimer_interp[] = PTIMER_INTERP;

/* The entry point ld.so jumps to: the initial stack (argc, argv...) to
 * ptimer_guard_main, the stack aligned as the ABI wants at a call. */
#if defined(__x86_64__)
__asm__(".text\n"
	".globl ptimer_guard_entry\n"
	".hidden ptimer_guard_entry\n"
	".type ptimer_guard_entry, @function\n"
	"ptimer_guard_entry:\n"
	"	endbr64\n"
	"	xor %ebp, %ebp\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call ptimer_guard_main\n"
	"	hlt\n"
	".size ptimer_guard_entry, . - ptimer_guard_entry\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl ptimer_guard_entry\n"
	".hidden ptimer_guard_entry\n"
	".type ptimer_guard_entry, %function\n"
	"ptimer_guard_entry:\n"
	"	hint #34\n"			/* bti c: a jump target where ld.so maps it PROT_BTI */
	"	mov x29, #0\n"
	"	mov x30, #0\n"
	"	mov x0, sp\n"
	"	bl ptimer_guard_main\n"
	"	brk #0\n"
	".size ptimer_guard_entry, . - ptimer_guard_entry\n");
#else
#error "ptimer_guard_entry: x86_64 and aarch64 only"
#endif

/*
 * One byte to the guard (guard_run: 'm', 'M', 'r' or 0).  Returns 0, or -errno
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
	if (links_fd >= 0) {
		close(links_fd);
		links_fd = -1;
	}
	if (guard_fd >= 0) {
		close(guard_fd);
		guard_fd = -1;
	}
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
		remove_overlay(dfd, name);
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
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st))
		return ptimer_errf(err, errno, "cannot open the image directory %s: %s", dir, strerror(errno));
	/*
	 * The guard first, the directory after: no instant has an overlay
	 * without a guard.  The guard links the images once told the overlay
	 * is made and locked (links_wait); without one, all here.
	 */
	overlay_name(ov_name, sizeof(ov_name), 0);
	guarded = !guard_start(dfd, dir, true);
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
	 * (its start, ld.so loading the plugin, is about 2 ms here; 2,400
	 * links for a tree of 300 tasks about 11 ms), else here (20 links
	 * for one task: about 0.1 ms).  The guard's are waited for by
	 * links_wait; without 'm' it sends none.
	 */
	by_guard = !ret && guarded && (dir_entries > OVERLAY_LINKS_HERE || ptimer_fault("links-by-guard"));
	if (!ret && guarded && guard_say(by_guard ? 'm' : 'M')) {
		/*
		 * The guard is gone: it could not load (ld.so, a library, the
		 * environment) or was killed.  A fork of criu in its place,
		 * told at once; none: the links here, no guard.
		 */
		ptimer_log(PTIMER_LOG_DEBUG, "the guard of %s is gone before the overlay was made", ov_name);
		guard_lost();
		if (guard_start(dfd, dir, false) || guard_say(by_guard ? 'm' : 'M')) {
			guard_lost();
			by_guard = false;
		}
	}
	links_done = !by_guard;
	if (!ret && !by_guard)
		ret = link_all(dfd, ov_fd, dir, err);
	if (ret) {
		links_wait(NULL);
		if (ov_fd >= 0)
			close(ov_fd);
		if (ov_lock >= 0)
			close(ov_lock);
		ov_fd = ov_lock = -1;
		remove_overlay(dfd, ov_name);
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
	remove_overlay(rel_fd, ov_name);
	close(rel_fd);
	rel_fd = -1;
	guard_done();
	ov_name[0] = 0;
}

void overlay_done(void)
{
	int img = criu_get_image_dir(), dfd = img_fd_saved >= 0 ? img_fd_saved : img;

	if (released) {
		char c;

		/* removed by the guard since the first RESUME_DEVICES_LATE:
		 * done before criu ends, as when removed here */
		if (read_full(links_fd, &c, 1) != 1) {
			/* killed on the way (the OOM killer): the rest here */
			ptimer_log(PTIMER_LOG_DEBUG, "the guard of %s ended before it said it removed it", ov_name);
			remove_overlay(rel_fd, ov_name);
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
			remove_overlay(dfd, ov_name);
		guard_done();
	}
	if (img_fd_saved >= 0) {
		close(img_fd_saved);
		img_fd_saved = -1;
	}
	ov_name[0] = 0;
}
