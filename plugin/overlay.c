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
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <criu/criu-plugin.h>

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
 * The guard: a process of its own that makes the overlay's directory and
 * removes the overlay when criu dies before exit(RESTORE) does it (criu
 * SIGKILLed by timeout -k, the OOM killer, a runtime that gives up).  It
 * makes the directory itself, so that no instant has an overlay without a
 * guard: killed before the guard made it, criu leaves nothing; after, the
 * guard sees it die.  It is forked twice (vfork, then clone) and leaves criu's session (criu's
 * restore takes the exit of any child of its own for a failure), is named
 * ptimer-guard (what kills criu by name must not kill it), keeps only the
 * image directory and its pipes, sends the directory's name back, links
 * criu's images into it (link_all) while criu goes on, sends the outcome
 * (struct guard_links, waited for by links_wait), and waits for criu's exit (pidfd_open, Linux 5.3; else a look every 20 ms)
 * or for the byte guard_done() sends once exit(RESTORE) has removed the
 * overlay itself.
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

/* A fresh overlay directory in dirfd, OVERLAY_PREFIX and six random
 * letters (unique across pid namespaces and hosts sharing the directory),
 * mode 0700 until overlay_make gives it the directory's; into name.
 * Returns 0 or -errno. */
static int overlay_mkdir(int dirfd, char *name, size_t len)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

	for (int tries = 0; tries < 100; tries++) {
		unsigned char r[6];
		size_t at = (size_t)snprintf(name, len, OVERLAY_PREFIX);

		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
			uint64_t x = ptimer_now_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)tries * 2654435761u;

			memcpy(r, &x, sizeof(r));
		}
		for (size_t i = 0; i < sizeof(r) && at + 1 < len; i++)
			name[at++] = abc[r[i] % (sizeof(abc) - 1)];
		name[at] = 0;
		if (!mkdirat(dirfd, name, 0700))
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
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
		if (!fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
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

/* Made by a raw clone (guard_start): libc's idea of the thread id is
 * criu's here, so nothing that uses it (raise(), pthread_*) is called. */
static void guard_run(pid_t criu, int rd, int wr, int dirfd, const char *dir)
{
	int pfd = (int)syscall(SYS_pidfd_open, criu, 0);
	struct pollfd pf[2] = { { .fd = rd, .events = POLLIN }, { .fd = pfd, .events = POLLIN } };
	char c;

	/* the overlay: made here, its name to criu (none: criu reads EOF) */
	if (overlay_mkdir(dirfd, ov_name, sizeof(ov_name)))
		_exit(0);
	if (write(wr, ov_name, sizeof(ov_name)) == (ssize_t)sizeof(ov_name)) {
		/*
		 * Then its links, while criu goes on reading the images on
		 * another CPU (2,400 links for a tree of 300: about 11 ms).
		 * criu waits for the outcome before it reads a file of the
		 * overlay (overlay_switch).
		 */
		struct guard_links out = { 0 };
		struct ptimer_err e = { "" };
		int ovfd = openat(dirfd, ov_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		out.ret = ovfd < 0 ? ptimer_errf(&e, errno, "cannot open %s: %s", ov_name, strerror(errno)) :
				     link_all(dirfd, ovfd, dir, &e);
		memcpy(out.msg, e.msg, sizeof(out.msg));
		if (ovfd >= 0)
			close(ovfd);
		if (write(wr, &out, sizeof(out)) < 0) {
			/* criu is gone already: the poll below sees it */
		}
	}

	for (;;) {
		int n = poll(pf, pfd >= 0 ? 2 : 1, pfd >= 0 ? -1 : 20);

		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0 && (pf[0].revents & (POLLIN | POLLHUP))) {
			if (read(rd, &c, 1) != 1)
				break;		/* every write end closed: criu is gone */
			if (!c)
				_exit(0);	/* exit(RESTORE) is done with it */
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
 * The guard started, and the overlay's directory made by it in dirfd, its
 * name in ov_name.  Returns 0; -ECHILD when no guard could be started
 * (said in a warning), -EIO when the guard could not make the directory:
 * criu then makes it itself (overlay_make), with no guard.
 */
static int guard_start(int dirfd, const char *dir)
{
	pid_t criu = getpid(), child;
	int p[2], q[2], st = 0, e;
	sigset_t all, old;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC))
		goto no_guard;
	if (pipe2(q, O_CLOEXEC)) {
		close(p[0]);
		close(p[1]);
		goto no_guard;
	}
	/*
	 * vfork: the first child borrows criu's memory and stack until it
	 * exits, so that criu's address space is copied once (for the guard),
	 * not twice: a copy of criu at init(RESTORE) is most of the plugin's
	 * init for a small restore (1.3 ms of 1.8 here).  Until its _exit it
	 * makes system calls only (no libc state of criu's touched); the
	 * guard is a fork of it by clone(2), in its own session.
	 */
	/* no handler of criu's may run on the stack the vfork child borrows;
	 * the guard keeps every signal blocked */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	child = vfork();
	if (child == 0) {
		long g;

		syscall(SYS_setsid);
		/* x86_64 and aarch64 (restorer/abi.h): flags first */
		g = syscall(SYS_clone, (unsigned long)SIGCHLD, 0ul, 0ul, 0ul, 0ul);
		if (g)
			_exit(g < 0 ? 1 : 0);
		{
			/* the guard: criu's memory copied, nothing of it shared */
			const int keep[3] = { p[0], q[1], dirfd };

			guard_name();
			close_all_but(keep, 3);
			guard_run(criu, p[0], q[1], dirfd, dir);
		}
	}
	e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	close(q[1]);
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
	n = read_full(q[0], ov_name, sizeof(ov_name));
	if (n != (ssize_t)sizeof(ov_name) || ov_name[sizeof(ov_name) - 1] ||
	    strncmp(ov_name, OVERLAY_PREFIX, strlen(OVERLAY_PREFIX))) {
		/* the guard made none, and is gone once p closes */
		close(q[0]);
		ov_name[0] = 0;
		close(p[1]);
		return -EIO;
	}
	guard_fd = p[1];
	links_fd = q[0];
	links_done = released = false;
	return 0;
no_guard:
	ptimer_log(PTIMER_LOG_WARN, "cannot start the process that removes ptimer's overlay if criu is killed: %s; "
		   "a later restore removes one left", strerror(errno));
	return -ECHILD;
}

static void guard_done(void)
{
	if (links_fd >= 0) {
		close(links_fd);
		links_fd = -1;
	}
	if (guard_fd < 0)
		return;
	if (write(guard_fd, "", 1) != 1)
		ptimer_log(PTIMER_LOG_DEBUG, "the guard of %s is gone already", ov_name);
	close(guard_fd);
	guard_fd = -1;
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
 * overlay_switch, or here when there is no guard).  Its name is unique across pid
 * namespaces and hosts sharing the directory (overlay_mkdir), and it holds
 * .lock, locked (F_OFD_SETLK) while this restore runs (overlay_stale).
 * Its owner and mode are dir's (in a user namespace the restored init,
 * an unprivileged host uid, opens its children's core images).  *path:
 * the overlay's path.  Returns 0 or -errno (err set; nothing left).
 */
static int ov_lock = -1;	/* the overlay's .lock, locked */

int overlay_make(const char *dir, char *path, size_t len, struct ptimer_err *err)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct stat st;
	int dfd, ret = 0, guarded;

	if (ov_fd >= 0) {
		snprintf(path, len, "%s/%s", dir, ov_name);
		return 0;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st))
		return ptimer_errf(err, errno, "cannot open the image directory %s: %s", dir, strerror(errno));
	/* made by the guard (no instant without it), which links the images
	 * too (links_wait); else all here */
	guarded = !guard_start(dfd, dir);
	if (!guarded) {
		ret = overlay_mkdir(dfd, ov_name, sizeof(ov_name));
		if (ret) {
			ret = ptimer_errf(err, -ret, "cannot make a directory for criu to read in %s: %s", dir,
					  strerror(-ret));
			ov_name[0] = 0;
			close(dfd);
			return ret;
		}
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
	if (!ret && !guarded)
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
	if (write(guard_fd, "r", 1) == 1) {
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
