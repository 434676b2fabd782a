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
 * (overlay_release: criu reads no image after, but writes stats-restore
 * there), and is removed at exit(RESTORE).
 *
 * A criu that is SIGKILLed leaves its overlay behind.  That is harmless:
 * criu never reads a directory of that name (it opens its images by their
 * own names), and the next restore with the plugin removes it (clean_leftover)
 * once the lock that the restore which made it held is free.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <criu/criu-plugin.h>
/* weak: the plugin is also loaded without criu (test/unit/test_plugin_hooks.c) */
#pragma weak criu_get_image_dir

#include "core/fault.h"
#include "core/log.h"
#include "core/util.h"
#include "plugin/plugin.h"

int dir_each(int at, const char *name, int (*fn)(int fd, const char *name, unsigned type, void *arg),
	     void *arg)
{
	/* a description of its own: its offset is not the caller's */
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), ret = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		ret = -errno;
		close(fd);
		return ret;
	}
	while (!ret) {
		/* fn may set errno: only readdir's own counts */
		errno = 0;
		de = readdir(d);
		if (!de) {
			ret = -errno;
			break;
		}
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			ret = fn(dirfd(d), de->d_name, de->d_type, arg);
	}
	closedir(d);
	return ret;
}

struct unlinked {
	bool removed;	/* an entry went in this pass */
	bool failed;	/* an entry stayed */
};

static int unlink_one(int fd, const char *name, unsigned type, void *arg)
{
	struct unlinked *u = arg;

	(void)type;
	if (!unlinkat(fd, name, 0))
		u->removed = true;
	else
		u->failed = true;
	return 0;
}

/* Remove dirfd/name, a directory of files only (an overlay). */
static void ov_remove(int dirfd, const char *name)
{
	/* again from the start while a pass removed something: a listing
	 * read while its directory changes may skip an entry, and an unlink
	 * may fail once (EIO, EINTR on a network file system) */
	for (int pass = 0, retried = 0; pass < 64; pass++) {
		struct unlinked u = { false, false };

		if (dir_each(dirfd, name, unlink_one, &u) || (!u.removed && (!u.failed || retried++)))
			break;
	}
	if (unlinkat(dirfd, name, AT_REMOVEDIR) && errno != ENOENT && unlinkat(dirfd, name, AT_REMOVEDIR) &&
	    errno != ENOENT)
		ptimer_log(PTIMER_LOG_WARN, "cannot remove ptimer's directory %s from the image directory: %s; "
			   "criu never reads it, and the next restore with ptimer removes it", name, strerror(errno));
}

struct link_arg {
	struct overlay *ov;
	int dfd;
	const char *dir;
	struct ptimer_err *err;
	bool failed;		/* err says which entry */
};

/*
 * One entry of the image directory into the overlay: a regular file as a
 * hard link, anything else (the parent link of an incremental dump, a
 * symbolic link) or a file on a file system without hard links as a
 * symbolic link "../NAME", which resolves as criu would have resolved NAME.
 * Overlays are left out.  Returns 0 or -errno (err set).
 */
static int link_one(int fd, const char *name, unsigned type, void *arg)
{
	struct link_arg *a = arg;
	char target[300];
	struct stat st;

	(void)fd;
	if (!strncmp(name, OVERLAY_PREFIX, strlen(OVERLAY_PREFIX)))
		return 0;
	if (ptimer_fault("overlay-links")) {
		a->failed = true;
		return ptimer_errf(a->err, EIO, "cannot link %s/%s into %s: injected failure", a->dir, name, a->ov->name);
	}
	if ((type == DT_REG || (type == DT_UNKNOWN && !fstatat(a->dfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
				S_ISREG(st.st_mode))) &&
	    !linkat(a->dfd, name, a->ov->fd, name, 0))
		return 0;
	snprintf(target, sizeof(target), "../%s", name);
	if (!symlinkat(target, a->ov->fd, name))
		return 0;
	a->failed = true;
	return ptimer_errf(a->err, errno, "cannot link %s/%s into %s: %s", a->dir, name, a->ov->name, strerror(errno));
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

/* A fresh overlay directory in dirfd, mode 0700 until overlay_make gives
 * it the directory's: OVERLAY_PREFIX and six random letters (unique across
 * pid namespaces and hosts sharing the directory).  Returns 0 or -errno. */
static int overlay_mkdir(struct overlay *ov, int dirfd)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

	for (int tries = 0; tries < 100; tries++) {
		unsigned char r[6];
		size_t at = (size_t)snprintf(ov->name, sizeof(ov->name), OVERLAY_PREFIX);

		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
			uint64_t x = ptimer_now_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)tries * 2654435761u;

			memcpy(r, &x, sizeof(r));
		}
		for (size_t i = 0; i < sizeof(r); i++)
			ov->name[at++] = abc[r[i] % (sizeof(abc) - 1)];
		ov->name[at] = 0;
		if (!mkdirat(dirfd, ov->name, 0700))
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int overlay_make(struct overlay *ov, const char *dir, char *path, size_t len, struct ptimer_err *err)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct link_arg la = { .ov = ov, .dir = dir, .err = err };
	struct stat st;
	int ret;

	if (ov->fd >= 0) {
		snprintf(path, len, "%s/%s", dir, ov->name);
		return 0;
	}
	if (ov->mkdir_err)
		return ptimer_errf(err, -ov->mkdir_err, "%s", ov->mkdir_msg);
	la.dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (la.dfd < 0 || fstat(la.dfd, &st)) {
		ret = ptimer_errf(err, errno, "cannot open the image directory %s: %s", dir, strerror(errno));
		goto out;
	}
	ret = overlay_mkdir(ov, la.dfd);
	if (ret) {
		ret = ptimer_errf(err, -ret, "cannot make a directory for criu to read in %s: %s", dir,
				  strerror(-ret));
		ov->name[0] = 0;
		goto out;
	}
	ov->fd = openat(la.dfd, ov->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/*
	 * .lock appears locked: made and locked under another name, then
	 * renamed.  Made as .lock and locked after, another restore's
	 * overlay_stale could take the free lock in between and remove this
	 * live overlay; before the rename it sees an overlay being made.
	 * Owner and mode are the directory's: in a user namespace the
	 * restored init, an unprivileged host uid, opens its children's
	 * core images.
	 */
	if (ov->fd >= 0)
		ov->lock = openat(ov->fd, ".lock.new", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (ov->fd < 0 || ov->lock < 0 || fcntl(ov->lock, F_OFD_SETLK, &fl) ||
	    renameat(ov->fd, ".lock.new", ov->fd, ".lock") || fchown(ov->fd, st.st_uid, st.st_gid) ||
	    fchmod(ov->fd, st.st_mode & 07777))
		ret = ptimer_errf(err, errno, "cannot make %s/%s for criu to read: %s", dir, ov->name, strerror(errno));
	if (!ret)
		ret = dir_each(la.dfd, ".", link_one, &la);
	if (ret < 0 && !la.failed)
		ret = ptimer_errf(err, -ret, "cannot list the image directory %s: %s", dir, strerror(-ret));
	if (ret) {
		if (ov->lock >= 0)
			close(ov->lock);
		if (ov->fd >= 0)
			close(ov->fd);
		ov->fd = ov->lock = -1;
		ov_remove(la.dfd, ov->name);
		ov->name[0] = 0;
	} else {
		snprintf(path, len, "%s/%s", dir, ov->name);
	}
out:
	if (ret) {
		/* a directory where none can be made (read-only): said once,
		 * not tried again for each task */
		ov->mkdir_err = ret;
		snprintf(ov->mkdir_msg, sizeof(ov->mkdir_msg), "%s", err->msg);
	}
	if (la.dfd >= 0)
		close(la.dfd);
	return ret;
}

int overlay_switch(struct overlay *ov, struct ptimer_err *err)
{
	int img = criu_get_image_dir();

	if (ov->fd < 0 || ov->criu_dir >= 0)
		return 0;
	ov->criu_dir = fcntl(img, F_DUPFD_CLOEXEC, 3);
	if (ov->criu_dir < 0 || dup2(ov->fd, img) < 0)
		return ptimer_errf(err, errno, "cannot give criu %s to read: %s", ov->name, strerror(errno));
	ptimer_log(PTIMER_LOG_DEBUG, "criu reads its images through %s", ov->name);
	return 0;
}

void overlay_release(struct overlay *ov)
{
	int img = criu_get_image_dir();

	if (ov->criu_dir < 0 || img < 0)
		return;
	if (dup2(ov->criu_dir, img) < 0) {
		ptimer_log(PTIMER_LOG_DEBUG, "cannot give criu its image directory back yet: %s", strerror(errno));
		return;
	}
	/* kept: overlay_done removes the overlay through it */
}

void overlay_done(struct overlay *ov)
{
	int img = criu_get_image_dir(), dfd = ov->criu_dir >= 0 ? ov->criu_dir : img;

	ov->mkdir_err = 0;
	if (ov->criu_dir >= 0 && img >= 0 && dup2(ov->criu_dir, img) < 0)
		ptimer_log(PTIMER_LOG_ERROR, "cannot give criu its image directory back: %s", strerror(errno));
	/* the lock first: NFS renames a file removed while open (.nfsXXXX),
	 * which would keep the overlay's directory from being removed */
	if (ov->lock >= 0)
		close(ov->lock);
	if (ov->fd >= 0) {
		close(ov->fd);
		if (dfd >= 0)
			ov_remove(dfd, ov->name);
	}
	if (ov->criu_dir >= 0)
		close(ov->criu_dir);
	ov->fd = ov->lock = ov->criu_dir = -1;
	ov->name[0] = 0;
}
