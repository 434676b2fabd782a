// SPDX-License-Identifier: MIT
/* Whole-file reads and atomic replacement (lib/file.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/file.h"

#define READ_START	(64u * 1024u)	/* first buffer, bytes */
#define READ_ROOM	8192u		/* grow when less is left: /proc gives a page a read */

/* "WHAT PATH" or "PATH" for messages. */
static const char *named(char *buf, size_t len, const char *what, const char *path)
{
	if (what)
		snprintf(buf, len, "%s %s", what, path);
	else
		snprintf(buf, len, "%s", path);
	return buf;
}

static const char *hint_of(unsigned int flags, int e)
{
	return flags & PTIMER_FILE_HINT ? ptimer_errno_hint(e) : "";
}

#define SEP(flags) ((flags) & PTIMER_FILE_HINT ? "; " : "")

int ptimer_file_read(const char *path, const char *what, size_t max, unsigned int flags,
		     char **bufp, size_t *lenp, struct ptimer_err *err)
{
	char name[PATH_MAX + 64];
	size_t len = 0, cap, size = 0;
	struct stat st;
	char *buf = NULL;
	int fd, ret = 0;

	named(name, sizeof(name), what, path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		return ptimer_errf(err, ret, "cannot open %s: %s%s%s", name, strerror(-ret), SEP(flags),
				   hint_of(flags, -ret));
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		ptimer_errf(err, ret, "cannot stat %s: %s%s%s", name, strerror(-ret), SEP(flags),
			    hint_of(flags, -ret));
		goto out;
	}
	if ((flags & PTIMER_FILE_REGULAR) && !S_ISREG(st.st_mode)) {
		ret = ptimer_errf(err, S_ISDIR(st.st_mode) ? EISDIR : EINVAL,
				  "cannot read %s: not a regular file; name the file itself", name);
		goto out;
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		if ((unsigned long long)st.st_size > max) {
			ret = ptimer_errf(err, EFBIG, "cannot read %s: %lld bytes is more than %zu", name,
					  (long long)st.st_size, max);
			goto out;
		}
		size = (size_t)st.st_size;
	}
	/* +1: room for the NUL, and growth of a regular file is seen */
	cap = size ? size + 1 : READ_START;
	buf = malloc(cap);
	if (!buf) {
		ret = ptimer_errf(err, ENOMEM, "cannot read %s: out of memory%s%s", name, SEP(flags),
				  hint_of(flags, ENOMEM));
		goto out;
	}
	for (;;) {
		ssize_t r;

		if (!size && cap - len < READ_ROOM) {
			char *nb;

			if (len > max) {
				ret = ptimer_errf(err, EFBIG, "cannot read %s: larger than %zu bytes", name, max);
				goto out;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				ret = ptimer_errf(err, ENOMEM, "cannot read %s: out of memory at %zu bytes%s%s",
						  name, len, SEP(flags), hint_of(flags, ENOMEM));
				goto out;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			ptimer_errf(err, ret, "cannot read %s: %s%s%s", name, strerror(-ret), SEP(flags),
				    hint_of(flags, -ret));
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (size && len >= cap - 1) {
			/* one byte more than fstat said: the file is being written */
			char probe;
			ssize_t more;

			while ((more = read(fd, &probe, 1)) < 0 && errno == EINTR)
				;
			if (more == 0)
				break;
			if (more < 0) {
				ret = -errno;
				ptimer_errf(err, ret, "cannot read %s: %s%s%s", name, strerror(-ret), SEP(flags),
					    hint_of(flags, -ret));
				goto out;
			}
			ret = ptimer_errf(err, EAGAIN, "cannot read %s: it grew while being read; wait "
					  "for the writer to finish and retry", name);
			goto out;
		}
	}
	if (len > max) {
		ret = ptimer_errf(err, EFBIG, "cannot read %s: larger than %zu bytes", name, max);
		goto out;
	}
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return ret;
}

int ptimer_file_create_temp(const char *path, mode_t mode, char *tmp, size_t len)
{
	const char *slash = strrchr(path, '/');
	int dlen = slash ? (int)(slash - path + 1) : 0;
	static unsigned int seq;

	for (int tries = 0; tries < 100; tries++) {
		struct timespec ts;
		int n, fd;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		n = snprintf(tmp, len, "%.*s.%s.%d.%lx", dlen, path, path + dlen, (int)getpid(),
			     (unsigned long)(ts.tv_nsec ^ (++seq * 2654435761u)) & 0xffffff);
		if (n < 0 || (size_t)n >= len)
			return -ENAMETOOLONG;
		/* open(2) with a mode, as criu does: umask and default ACLs apply alike */
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

/* The new name must survive a crash too; some file systems refuse fsync on a directory. */
static void sync_parent_dir(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int ptimer_atomic_open(struct ptimer_atomic *a, const char *path, const char *what, mode_t mode,
		       unsigned int flags, struct ptimer_err *err)
{
	char name[PATH_MAX + 64];
	struct stat st;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	a->flags = flags;
	a->what = what;
	a->path = path;
	named(name, sizeof(name), what, path);
	if (flags & PTIMER_FILE_KEEP_OWNER) {
		if (stat(path, &st))
			return ptimer_errf(err, errno, "cannot write %s: %s%s%s", name, strerror(errno),
					   SEP(flags), hint_of(flags, errno));
		a->keep_owner = true;
		a->mode = st.st_mode & 07777;
		a->uid = st.st_uid;
		a->gid = st.st_gid;
		mode = st.st_mode & 0777;
	}
	a->fd = ptimer_file_create_temp(path, mode, a->tmp, sizeof(a->tmp));
	if (a->fd == -ENAMETOOLONG)
		return ptimer_errf(err, ENAMETOOLONG, "cannot write %s: path too long%s%s", name, SEP(flags),
				   hint_of(flags, ENAMETOOLONG));
	if (a->fd < 0)
		return ptimer_errf(err, a->fd, "cannot write %s: cannot create a temporary file beside it: %s%s%s",
				   name, strerror(-a->fd), SEP(flags), hint_of(flags, -a->fd));
	return 0;
}

int ptimer_atomic_write(struct ptimer_atomic *a, const void *buf, size_t len)
{
	const char *p = buf;
	size_t done = 0;

	while (!a->err && done < len) {
		ssize_t n = write(a->fd, p + done, len - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			a->err = errno;
		} else if (n == 0) {
			a->err = EIO;
		} else {
			done += (size_t)n;
		}
	}
	return -a->err;
}

/*
 * Owner and mode of the file replaced, before anyone can open the new one
 * by its name.  chown first: it clears set-id bits that the chmod puts back.
 */
static int keep_owner(struct ptimer_atomic *a, char *why, size_t len)
{
	if (fchown(a->fd, a->uid, a->gid)) {
		snprintf(why, len, "cannot give the new file the owner %u:%u of the old: %s",
			 (unsigned int)a->uid, (unsigned int)a->gid, strerror(errno));
		return errno;
	}
	if (fchmod(a->fd, a->mode)) {
		snprintf(why, len, "cannot give the new file the mode %04o of the old: %s",
			 (unsigned int)a->mode, strerror(errno));
		return errno;
	}
	return 0;
}

int ptimer_atomic_commit(struct ptimer_atomic *a, struct ptimer_err *err)
{
	char name[PATH_MAX + 64], why[256] = "";
	int e = a->err;

	if (!e && a->keep_owner)
		e = keep_owner(a, why, sizeof(why));
	if (!e && !(a->flags & PTIMER_FILE_NOSYNC) && fsync(a->fd))
		e = errno;
	if (close(a->fd) && !e)
		e = errno;
	a->fd = -1;
	if (!e && rename(a->tmp, a->path))
		e = errno;
	if (e) {
		unlink(a->tmp);
		named(name, sizeof(name), a->what, a->path);
		return ptimer_errf(err, e, "cannot write %s: %s%s%s", name, why[0] ? why : strerror(e),
				   SEP(a->flags), hint_of(a->flags, e));
	}
	if (a->flags & PTIMER_FILE_SYNC_DIR)
		sync_parent_dir(a->path);
	return 0;
}

void ptimer_atomic_abort(struct ptimer_atomic *a)
{
	if (a->fd >= 0) {
		close(a->fd);
		unlink(a->tmp);
	}
	a->fd = -1;
}

int ptimer_file_replace(const char *path, const char *what, const void *buf, size_t len, mode_t mode,
			unsigned int flags, struct ptimer_err *err)
{
	struct ptimer_atomic a;
	int ret = ptimer_atomic_open(&a, path, what, mode, flags, err);

	if (ret)
		return ret;
	ptimer_atomic_write(&a, buf, len);
	return ptimer_atomic_commit(&a, err);
}
