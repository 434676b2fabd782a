/* SPDX-License-Identifier: MIT */
/*
 * Whole files: one reader and one atomic writer for every file ptimer reads
 * or writes (its images, JSON input, /proc files, criu's images).
 */
#ifndef PTIMER_LIB_FILE_H
#define PTIMER_LIB_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/err.h"

/* flags of ptimer_file_read and ptimer_atomic_open */
#define PTIMER_FILE_REGULAR	0x1u	/* read: refuse what is not a regular file */
#define PTIMER_FILE_HINT	0x2u	/* messages end in ptimer_errno_hint() */
#define PTIMER_FILE_SYNC_DIR	0x4u	/* write: fsync the directory after rename */
#define PTIMER_FILE_KEEP_OWNER	0x8u	/* write: the new file gets the mode, uid
					   and gid of the file it replaces */
#define PTIMER_FILE_NOSYNC	0x10u	/* write: no fsync of the file (the rename
					   stays atomic, durability is the caller's) */

/*
 * ptimer_file_read - the whole of path, read with plain read() calls until
 * end of file (a /proc file reports size 0 and gives about a page per
 * read(): fs/seq_file.c), into *buf (malloc'ed; a NUL byte follows the *len
 * bytes, so text can be parsed in place).  what names the file in messages
 * ("image", "JSON file"; NULL: the path alone).  max: more than max bytes
 * is -EFBIG.  A regular file that grows past its size while being read is
 * -EAGAIN (someone is writing it).  Returns 0; -errno of open/fstat/read
 * (-ENOENT, -EACCES, ...); with PTIMER_FILE_REGULAR -EISDIR (a directory)
 * or -EINVAL (another non-regular file); -EFBIG, -EAGAIN, -ENOMEM.  err:
 * "cannot open|read WHAT PATH: why".
 */
int ptimer_file_read(const char *path, const char *what, size_t max, unsigned int flags,
		     char **buf, size_t *len, struct ptimer_err *err);

/*
 * ptimer_file_create_temp - create a new, empty file beside path, named
 * "DIR/.BASE.PID.RANDOM" (same directory, so that rename(2) over path is
 * atomic), with open(O_CREAT | O_EXCL, mode): the umask and a default ACL of
 * DIR apply as they do to a file criu creates with open(2) (criu/image.c).
 * tmp (len bytes) receives the name.  Returns the fd (O_WRONLY, O_CLOEXEC),
 * or -ENAMETOOLONG, -EEXIST (100 names taken), -errno of open(2) (-EACCES,
 * -EROFS, -ENOENT, -ENOSPC...).
 */
int ptimer_file_create_temp(const char *path, mode_t mode, char *tmp, size_t len);

/*
 * An atomic replacement of path: written to a temporary file
 * (ptimer_file_create_temp) in path's directory, then fsync, rename(2)
 * over path.  Readers see the old file or the whole new one, never a part.
 */
struct ptimer_atomic {
	int fd;
	int err;		/* positive errno of the first failed write */
	unsigned int flags;
	bool keep_owner;	/* mode, uid, gid below are the replaced file's */
	mode_t mode;
	uid_t uid;
	gid_t gid;
	const char *what;
	const char *path;
	char tmp[4096];
};

/*
 * ptimer_atomic_open - create the temporary file for path.  mode: the new
 * file's permission bits, less the umask (as open(2) gives them).  With
 * PTIMER_FILE_KEEP_OWNER path must exist, and the new file gets its mode
 * (set-id bits too), uid and gid instead (criu creates its images 0644
 * with open(2), criu/image.c; in a user namespace the restored init, root
 * mapped to an unprivileged host uid, opens them again).  what names the
 * file in messages ("image").  Returns 0, -ENAMETOOLONG, -EEXIST, -errno
 * of stat/open (-ENOENT, -EACCES, -ENOSPC, ...); err set.
 */
int ptimer_atomic_open(struct ptimer_atomic *a, const char *path, const char *what, mode_t mode,
		       unsigned int flags, struct ptimer_err *err);

/*
 * ptimer_atomic_write - append len bytes, looping over short writes and
 * EINTR.  A failure is kept in a->err and returned by commit; returns
 * 0, or -ENOSPC, -EDQUOT, -EIO (a write that makes no progress), ... of
 * write(2).
 */
int ptimer_atomic_write(struct ptimer_atomic *a, const void *buf, size_t len);

/*
 * ptimer_atomic_commit - keep owner and mode (PTIMER_FILE_KEEP_OWNER:
 * fchown, then fchmod, which puts back set-id bits fchown cleared), fsync, close, rename over
 * path, then fsync the directory with PTIMER_FILE_SYNC_DIR (best effort:
 * some file systems refuse it).  On any failure, or after a write failed,
 * the temporary file is removed and path is untouched.  Returns 0 or the
 * -errno (-ENOSPC, -EIO, -EPERM of fchown, ...); err set.
 */
int ptimer_atomic_commit(struct ptimer_atomic *a, struct ptimer_err *err);

/* ptimer_atomic_abort - close and remove the temporary file. */
void ptimer_atomic_abort(struct ptimer_atomic *a);

/* ptimer_file_replace - open, write buf[len], commit: see above. */
int ptimer_file_replace(const char *path, const char *what, const void *buf, size_t len, mode_t mode,
			unsigned int flags, struct ptimer_err *err);

#endif
