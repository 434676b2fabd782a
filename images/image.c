// SPDX-License-Identifier: MIT
/*
 * ptimer image files on disk: naming, atomic write, strict read, lookup.
 *
 * Framing follows CRIU's images (criu/include/magic.h, criu/protobuf.c):
 * a 32-bit magic, then length-prefixed protobuf entries.  Unlike CRIU, all
 * 32-bit framing words are little-endian whatever the host, so an image can
 * be inspected anywhere.  See images/image.h for the layout.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proto/ptimer.pb-c.h"
#include "image_int.h"

#define IMG_PREFIX	"ptimers-"
#define IMG_SUFFIX	".img"
#define WRITE_CHUNK	(64u * 1024u)

void ptimer_err_set(struct ptimer_err *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

const char *ptimer_errno_hint(int errnum)
{
	/* About the path only: these reach users of show, encode, restore and the plugin alike. */
	switch (errnum) {
	case ENOSPC:
	case EDQUOT:
		return "free space on that file system or write elsewhere";
	case EACCES:
	case EPERM:
		return "check the permissions of the file and its directory";
	case EROFS:
		return "the file system is read-only; write elsewhere";
	case ENOENT:
		return "check that the path exists";
	case ENOTDIR:
		return "a component of the path is not a directory; check the path";
	case EISDIR:
		return "the path is a directory; name the image file";
	case ENAMETOOLONG:
		return "use a shorter path";
	case EMFILE:
	case ENFILE:
		return "too many open files; raise the limit (ulimit -n) and retry";
	case ENOMEM:
		return "free memory and retry";
	case EIO:
		return "the storage reported an I/O error; check the device";
	}
	return "check the path and retry";
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int ptimer_image_path(char *buf, size_t len, const char *dir, int pid)
{
	int n = snprintf(buf, len, "%s/" IMG_PREFIX "%d" IMG_SUFFIX, dir, pid);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* ---- write -------------------------------------------------------------- */

/* Buffered writer onto the temporary file; the first error sticks. */
struct img_out {
	int fd;
	uint8_t *buf;
	size_t used;
	int err;		/* positive errno once a write failed */
};

static void out_flush(struct img_out *o)
{
	size_t done = 0;

	while (!o->err && done < o->used) {
		ssize_t n = write(o->fd, o->buf + done, o->used - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			o->err = errno;
		} else if (n == 0) {
			o->err = EIO;
		} else {
			done += n;
		}
	}
	o->used = 0;
}

/* Reserve len bytes (len <= WRITE_CHUNK, or one head entry) in the buffer,
 * flushing as needed. */
static uint8_t *out_reserve(struct img_out *o, size_t len)
{
	if (o->used + len > WRITE_CHUNK)
		out_flush(o);
	o->used += len;
	return o->buf + o->used - len;
}

static void entry_from_timer(PtimerEntry *e, const struct ptimer_timer *t)
{
	ptimer_entry__init(e);
	e->timer_id = t->timer_id;
	e->clock_id = t->clock_id;
	e->sigev_notify = t->sigev_notify;
	e->signo = t->signo;
	e->sival = t->sival;
	e->notify_tid = t->notify_tid;
	e->value_sec = t->it_value.sec;
	e->value_nsec = t->it_value.nsec;
	e->interval_sec = t->it_interval.sec;
	e->interval_nsec = t->it_interval.nsec;
	e->has_overrun = 1;
	e->overrun = t->overrun;
	if (t->pending) {
		e->has_pending = 1;
		e->pending = (uint32_t)t->pending;
		e->has_pending_overrun = 1;
		e->pending_overrun = t->pending_overrun;
	}
}

/*
 * Length word plus packed message.  Version 1 messages are ~100 bytes; the
 * cap is what readers enforce, so a writer must never exceed it.
 */
static void out_message(struct img_out *o, const ProtobufCMessage *m, size_t max)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *p;

	if (len > max) {
		if (!o->err)
			o->err = EMSGSIZE;
		return;
	}
	p = out_reserve(o, 4 + len);

	put_le32(p, len);
	protobuf_c_message_pack(m, p + 4);
}

/* img->threads as PtimerHead.threads (4); free with free_head_threads(). */
static int head_threads(PtimerHead *head, const struct ptimer_image *img)
{
	PtimerThread *th;
	uint32_t i;

	if (!img->n_threads)
		return 0;
	th = calloc(img->n_threads, sizeof(*th));
	head->threads = calloc(img->n_threads, sizeof(*head->threads));
	if (!th || !head->threads) {
		free(th);
		free(head->threads);
		head->threads = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < img->n_threads; i++) {
		const struct ptimer_thread *t = &img->threads[i];
		PtimerThread *e = &th[i];

		ptimer_thread__init(e);
		e->tid = t->tid;
		e->has_rseq_abi_pointer = e->has_rseq_abi_size = e->has_rseq_signature = 1;
		e->rseq_abi_pointer = t->rseq_abi_pointer;
		e->rseq_abi_size = t->rseq_abi_size;
		e->rseq_signature = t->rseq_signature;
		e->has_slice_ext = 1;
		e->slice_ext = t->slice_ext;
		e->has_slice_ctrl = t->rseq_abi_size >= PTIMER_RSEQ_SLICE_CTRL_END;
		e->slice_ctrl = t->slice_ctrl;
		head->threads[i] = e;
	}
	head->n_threads = img->n_threads;
	return 0;
}

static void free_head_threads(PtimerHead *head)
{
	if (head->n_threads)
		free(head->threads[0]);
	free(head->threads);
	head->threads = NULL;
	head->n_threads = 0;
}

/*
 * Mode of every ptimer image: CRIU's CR_FD_PERM (criu/include/image.h,
 * 0644), which criu's own images get through open(2), umask applied.  In a
 * user namespace the restored tasks, root mapped to an unprivileged host uid,
 * read images themselves: an image more private than criu's breaks that.
 */
#define IMG_PERM	(S_IRUSR | S_IWUSR | S_IRGRP | S_IROTH)

int ptimer_image_create_temp(const char *path, mode_t mode, char *tmp, size_t len)
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

int ptimer_image_write(const char *path, const struct ptimer_image *img, struct ptimer_err *err)
{
	return ptimer_image_write_flags(path, img, 0, err);
}

int ptimer_image_write_flags(const char *path, const struct ptimer_image *img, unsigned int flags,
			     struct ptimer_err *err)
{
	char tmp[PATH_MAX];
	struct img_out o = { .fd = -1 };
	PtimerHead head = PTIMER_HEAD__INIT;
	uint32_t i;
	int ret;

	ret = ptimer_image_validate(img, path, err);
	if (ret)
		return ret;
	/* room for one whole head entry too (threads[] can exceed a chunk) */
	o.buf = malloc(WRITE_CHUNK + 4 + PTIMER_IMG_MAX_HEAD);
	if (!o.buf) {
		ptimer_err_set(err, "cannot write image %s: out of memory; %s",
			       path, ptimer_errno_hint(ENOMEM));
		return -ENOMEM;
	}
	o.fd = ptimer_image_create_temp(path, IMG_PERM, tmp, sizeof(tmp));
	if (o.fd < 0) {
		ret = o.fd;
		if (ret == -ENAMETOOLONG)
			ptimer_err_set(err, "cannot write image %s: path too long; %s",
				       path, ptimer_errno_hint(ENAMETOOLONG));
		else
			ptimer_err_set(err, "cannot write image %s: cannot create a temporary file beside it: %s; %s",
				       path, strerror(-ret), ptimer_errno_hint(-ret));
		free(o.buf);
		return ret;
	}

	put_le32(out_reserve(&o, 4), PTIMER_IMG_MAGIC);
	head.version = PTIMER_IMG_VERSION;
	head.pid = img->pid;
	head.n_timers = img->n_timers;
	head.has_criu_mode = img->criu_mode != PTIMER_CRIU_NONE;
	head.criu_mode = img->criu_mode;
	ret = head_threads(&head, img);
	if (ret) {
		close(o.fd);
		unlink(tmp);
		free(o.buf);
		ptimer_err_set(err, "cannot write image %s: out of memory; %s",
			       path, ptimer_errno_hint(ENOMEM));
		return ret;
	}
	out_message(&o, &head.base, PTIMER_IMG_MAX_HEAD);
	free_head_threads(&head);
	for (i = 0; i < img->n_timers && !o.err; i++) {
		PtimerEntry e;

		entry_from_timer(&e, &img->timers[i]);
		out_message(&o, &e.base, PTIMER_IMG_MAX_ENTRY);
	}
	out_flush(&o);
	if (!o.err && !(flags & PTIMER_IMG_NOSYNC) && fsync(o.fd))
		o.err = errno;
	if (close(o.fd) && !o.err)
		o.err = errno;
	if (!o.err && rename(tmp, path))
		o.err = errno;
	if (o.err) {
		unlink(tmp);
		if (o.err == EMSGSIZE)
			ptimer_err_set(err, "cannot write image %s: an entry exceeds %u bytes "
				       "(PTIMER_IMG_MAX_ENTRY); this is a ptimer bug, please report it",
				       path, PTIMER_IMG_MAX_ENTRY);
		else
			ptimer_err_set(err, "cannot write image %s: %s; %s",
				       path, strerror(o.err), ptimer_errno_hint(o.err));
		free(o.buf);
		return -o.err;
	}
	if (!(flags & PTIMER_IMG_NOSYNC))
		sync_parent_dir(path);
	free(o.buf);
	return 0;
}

/* ---- read --------------------------------------------------------------- */

/* Largest well-formed file: magic + head + PTIMER_IMG_MAX_TIMERS capped entries. */
#define IMG_MAX_FILE	(4ull + PTIMER_IMG_MAX_HEAD + (1ull + PTIMER_IMG_MAX_TIMERS) * (4ull + PTIMER_IMG_MAX_ENTRY))

static int read_whole(const char *path, uint8_t **bufp, size_t *sizep, struct ptimer_err *err)
{
	struct stat st;
	uint8_t *buf = NULL;
	size_t done = 0;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		ptimer_err_set(err, "cannot open image %s: %s; %s",
			       path, strerror(-ret), ptimer_errno_hint(-ret));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		ptimer_err_set(err, "cannot stat image %s: %s; %s",
			       path, strerror(-ret), ptimer_errno_hint(-ret));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		ptimer_err_set(err, "cannot read image %s: not a regular file; name the image file", path);
		goto out;
	}
	if ((uint64_t)st.st_size > IMG_MAX_FILE) {
		ret = -EFBIG;
		ptimer_err_set(err, "cannot read image %s: %lld bytes is more than any image of "
			       "%u timers; not a ptimer image", path, (long long)st.st_size,
			       PTIMER_IMG_MAX_TIMERS);
		goto out;
	}
	/* +1 so a malloc(0) never happens and growth during the read is seen. */
	buf = malloc(st.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		ptimer_err_set(err, "cannot read image %s: out of memory for %lld bytes; %s",
			       path, (long long)st.st_size, ptimer_errno_hint(ENOMEM));
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, buf + done, st.st_size + 1 - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			ptimer_err_set(err, "cannot read image %s: %s; %s",
				       path, strerror(-ret), ptimer_errno_hint(-ret));
			goto out;
		}
		if (n == 0)
			break;
		done += n;
		if (done > (size_t)st.st_size) {
			ret = -EAGAIN;
			ptimer_err_set(err, "cannot read image %s: it grew while being read; "
				       "wait for the dump to finish and retry", path);
			goto out;
		}
	}
	*bufp = buf;
	*sizep = done;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return ret;
}

/*
 * The next length-prefixed entry at *off: 1 and (*msg, *len) when there is
 * one, 0 at the end of the data, -EINVAL when the framing is broken.
 * @name says what the entry should be, for the message ("head", "timer 3").
 */
static int next_entry(const char *path, const uint8_t *buf, size_t size, size_t *off,
		      const uint8_t **msg, uint32_t *len, const char *name,
		      struct ptimer_err *err)
{
	uint32_t max = strcmp(name, "head") ? PTIMER_IMG_MAX_ENTRY : PTIMER_IMG_MAX_HEAD;
	size_t left = size - *off;
	uint32_t l;

	if (left == 0)
		return 0;
	if (left < 4) {
		ptimer_err_set(err, "%s: %s: truncated length word at offset %zu (%zu bytes left); "
			       "the image is damaged, dump again", path, name, *off, left);
		return -EINVAL;
	}
	l = get_le32(buf + *off);
	if (l > max) {
		ptimer_err_set(err, "%s: %s: entry length %" PRIu32 " at offset %zu exceeds %u bytes; "
			       "the image is damaged, dump again", path, name, l, *off, max);
		return -EINVAL;
	}
	if (l > left - 4) {
		ptimer_err_set(err, "%s: %s: truncated entry at offset %zu: length %" PRIu32
			       " but only %zu bytes follow; the image is damaged, dump again",
			       path, name, *off, l, left - 4);
		return -EINVAL;
	}
	*msg = buf + *off + 4;
	*len = l;
	*off += 4 + (size_t)l;
	return 1;
}

static void timer_from_entry(struct ptimer_timer *t, const PtimerEntry *e)
{
	memset(t, 0, sizeof(*t));
	t->timer_id = e->timer_id;
	t->clock_id = e->clock_id;
	t->sigev_notify = e->sigev_notify;
	t->signo = e->signo;
	t->sival = e->sival;
	t->notify_tid = e->notify_tid;
	t->it_value.sec = e->value_sec;
	t->it_value.nsec = e->value_nsec;
	t->it_interval.sec = e->interval_sec;
	t->it_interval.nsec = e->interval_nsec;
	t->overrun = e->has_overrun ? e->overrun : 0;
	t->pending = e->has_pending ? (int32_t)e->pending : 0;
	t->pending_overrun = e->has_pending_overrun ? e->pending_overrun : 0;
}

/* PtimerHead.threads into img->threads; values are checked by validate. */
static int threads_from_head(const char *path, const PtimerHead *head, struct ptimer_image *img,
			     struct ptimer_err *err)
{
	size_t i;

	if (!head->n_threads)
		return 0;
	if (head->n_threads > PTIMER_IMG_MAX_THREADS) {
		ptimer_err_set(err, "%s: head: %zu threads exceed the limit %u; the image is damaged, "
			       "dump again", path, head->n_threads, PTIMER_IMG_MAX_THREADS);
		return -EINVAL;
	}
	img->threads = calloc(head->n_threads, sizeof(*img->threads));
	if (!img->threads) {
		ptimer_err_set(err, "%s: out of memory for %zu threads; %s", path, head->n_threads,
			       ptimer_errno_hint(ENOMEM));
		return -ENOMEM;
	}
	img->n_threads = head->n_threads;
	for (i = 0; i < head->n_threads; i++) {
		const PtimerThread *e = head->threads[i];
		struct ptimer_thread *t = &img->threads[i];

		t->tid = e->tid;
		t->rseq_abi_pointer = e->has_rseq_abi_pointer ? e->rseq_abi_pointer : 0;
		t->rseq_abi_size = e->has_rseq_abi_size ? e->rseq_abi_size : 0;
		t->rseq_signature = e->has_rseq_signature ? e->rseq_signature : 0;
		t->slice_ext = e->has_slice_ext ? e->slice_ext : PTIMER_SLICE_EXT_UNAVAILABLE;
		t->slice_ctrl = e->has_slice_ctrl ? e->slice_ctrl : 0;
	}
	return 0;
}

static int parse_image(const char *path, const uint8_t *buf, size_t size,
		       struct ptimer_image *img, struct ptimer_err *err)
{
	const uint8_t *msg;
	uint32_t len, i, magic;
	size_t off = 4, body;
	PtimerHead *head;
	char name[32];
	int ret;

	if (size == 0) {
		ptimer_err_set(err, "%s: empty file, not a ptimer image; dump again", path);
		return -EINVAL;
	}
	if (size < 4) {
		ptimer_err_set(err, "%s: %zu bytes, too short for the magic; not a ptimer image",
			       path, size);
		return -EINVAL;
	}
	magic = get_le32(buf);
	if (magic != PTIMER_IMG_MAGIC) {
		ptimer_err_set(err, "%s: bad magic 0x%08" PRIx32 ", expected 0x%08x; "
			       "not a ptimer image", path, magic, PTIMER_IMG_MAGIC);
		return -EINVAL;
	}
	ret = next_entry(path, buf, size, &off, &msg, &len, "head", err);
	if (ret == 0) {
		ptimer_err_set(err, "%s: no head after the magic; the image is damaged, dump again",
			       path);
		return -EINVAL;
	}
	if (ret < 0)
		return ret;
	head = ptimer_head__unpack(NULL, len, msg);
	if (!head) {
		ptimer_err_set(err, "%s: head at offset 4 is not a valid PtimerHead protobuf; "
			       "the image is damaged, dump again", path);
		return -EINVAL;
	}
	img->version = head->version;
	img->pid = head->pid;
	img->n_timers = head->n_timers;
	img->criu_mode = head->has_criu_mode ? head->criu_mode : PTIMER_CRIU_NONE;
	ret = threads_from_head(path, head, img, err);
	ptimer_head__free_unpacked(head, NULL);
	if (ret)
		return ret;
	/* Newer writers only add optional fields, so any version >= 1 is readable. */
	if (img->version == 0) {
		ptimer_err_set(err, "%s: head: version 0 is not a valid image version; dump again",
			       path);
		return -EINVAL;
	}
	if (img->n_timers > PTIMER_IMG_MAX_TIMERS) {
		ptimer_err_set(err, "%s: head: n_timers %" PRIu32 " exceeds the limit %u; "
			       "the image is damaged, dump again", path, img->n_timers,
			       PTIMER_IMG_MAX_TIMERS);
		return -EINVAL;
	}

	/* First only the framing, so the count is checked before any allocation. */
	body = off;
	for (i = 0; i < img->n_timers; i++) {
		snprintf(name, sizeof(name), "timer %" PRIu32, i);
		ret = next_entry(path, buf, size, &off, &msg, &len, name, err);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			ptimer_err_set(err, "%s: head says %" PRIu32 " timers but the file holds %"
				       PRIu32 "; the image is damaged, dump again",
				       path, img->n_timers, i);
			return -EINVAL;
		}
	}
	if (off != size) {
		ptimer_err_set(err, "%s: %zu trailing bytes at offset %zu after the %" PRIu32
			       " timers the head announces; the image is damaged, dump again",
			       path, size - off, off, img->n_timers);
		return -EINVAL;
	}

	img->timers = calloc(img->n_timers ? img->n_timers : 1, sizeof(*img->timers));
	if (!img->timers) {
		ptimer_err_set(err, "%s: out of memory for %" PRIu32 " timers; %s",
			       path, img->n_timers, ptimer_errno_hint(ENOMEM));
		return -ENOMEM;
	}
	off = body;
	for (i = 0; i < img->n_timers; i++) {
		size_t at = off;
		PtimerEntry *e;

		next_entry(path, buf, size, &off, &msg, &len, "timer", err);
		e = ptimer_entry__unpack(NULL, len, msg);
		if (!e) {
			ptimer_err_set(err, "%s: timer %" PRIu32 ": entry at offset %zu is not a "
				       "valid PtimerEntry protobuf; the image is damaged, dump again",
				       path, i, at);
			return -EINVAL;
		}
		timer_from_entry(&img->timers[i], e);
		ptimer_entry__free_unpacked(e, NULL);
	}
	return ptimer_image_validate(img, path, err);
}

int ptimer_image_read(const char *path, struct ptimer_image *img, struct ptimer_err *err)
{
	uint8_t *buf = NULL;
	size_t size = 0;
	int ret;

	memset(img, 0, sizeof(*img));
	ret = read_whole(path, &buf, &size, err);
	if (ret)
		return ret;
	ret = parse_image(path, buf, size, img, err);
	free(buf);
	if (ret)
		ptimer_image_free(img);
	return ret;
}

void ptimer_image_free(struct ptimer_image *img)
{
	if (!img)
		return;
	free(img->timers);
	free(img->threads);
	memset(img, 0, sizeof(*img));
}

/* ---- find --------------------------------------------------------------- */

/* "ptimers-<digits>.img" with a pid 1..INT_MAX: its pid, else 0. */
static int image_name_pid(const char *name)
{
	const char *p = name + strlen(IMG_PREFIX);
	long pid = 0;

	/* No leading zero: the name must be the one ptimer_image_path() makes. */
	if (strncmp(name, IMG_PREFIX, strlen(IMG_PREFIX)) || *p < '1' || *p > '9')
		return 0;
	for (; isdigit((unsigned char)*p); p++) {
		pid = pid * 10 + (*p - '0');
		if (pid > INT_MAX)
			return 0;
	}
	if (strcmp(p, IMG_SUFFIX))
		return 0;
	return pid;
}

int ptimer_image_find(const char *dir, int pid, char *buf, size_t len, struct ptimer_err *err)
{
	struct dirent *de;
	struct stat st;
	int found = 0, second = 0, n = 0;
	DIR *d;

	if (pid > 0) {
		if (ptimer_image_path(buf, len, dir, pid)) {
			ptimer_err_set(err, "image path for pid %d in %s is too long; %s",
				       pid, dir, ptimer_errno_hint(ENAMETOOLONG));
			return -ENAMETOOLONG;
		}
		if (stat(buf, &st) || !S_ISREG(st.st_mode)) {
			ptimer_err_set(err, "no image for pid %d: %s is missing; check the directory "
				       "and the pid (as seen inside the dumped process's namespace)",
				       pid, buf);
			return -ENOENT;
		}
		return 0;
	}

	d = opendir(dir);
	if (!d) {
		int e = errno;

		ptimer_err_set(err, "cannot open image directory %s: %s; %s",
			       dir, strerror(e), ptimer_errno_hint(e));
		return -e;
	}
	while ((de = readdir(d))) {
		int p = image_name_pid(de->d_name);

		if (!p)
			continue;
		if (++n == 1)
			found = p;
		else if (n == 2)
			second = p;
	}
	closedir(d);

	if (n == 0) {
		ptimer_err_set(err, "no " IMG_PREFIX "<pid>" IMG_SUFFIX " image in %s; "
			       "check the directory", dir);
		return -ENOENT;
	}
	if (n > 1) {
		ptimer_err_set(err, "%d images in %s (" IMG_PREFIX "%d" IMG_SUFFIX ", "
			       IMG_PREFIX "%d" IMG_SUFFIX "%s); pass the pid (--image-pid) to choose one",
			       n, dir, found, second, n > 2 ? ", ..." : "");
		return -EEXIST;
	}
	if (ptimer_image_path(buf, len, dir, found)) {
		ptimer_err_set(err, "image path for pid %d in %s is too long; %s",
			       found, dir, ptimer_errno_hint(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	return 0;
}
