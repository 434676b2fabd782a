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
#include "images/image.h"
#include "lib/file.h"

#define IMG_PREFIX	"ptimers-"
#define IMG_SUFFIX	".img"
#define WRITE_CHUNK	(64u * 1024u)

/*
 * Mode of every ptimer image: CRIU's CR_FD_PERM (criu/include/image.h,
 * 0644), which criu's own images get through open(2), umask applied.  In a
 * user namespace the restored tasks, root mapped to an unprivileged host uid,
 * read images themselves: an image more private than criu's breaks that.
 */
#define IMG_PERM	(S_IRUSR | S_IWUSR | S_IRGRP | S_IROTH)

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
	struct ptimer_atomic a;
	uint8_t *buf;
	size_t used;
	int err;		/* positive errno once a write failed */
};

static void out_flush(struct img_out *o)
{
	if (!o->err)
		o->err = -ptimer_atomic_write(&o->a, o->buf, o->used);
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
	if (t->clock_tid) {
		e->has_clock_tid = 1;
		e->clock_tid = t->clock_tid;
	}
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

int ptimer_image_write(const char *path, const struct ptimer_image *img, struct ptimer_err *err)
{
	return ptimer_image_write_flags(path, img, 0, err);
}

int ptimer_image_write_flags(const char *path, const struct ptimer_image *img, unsigned int flags,
			     struct ptimer_err *err)
{
	struct img_out o = { .a.fd = -1 };
	PtimerHead head = PTIMER_HEAD__INIT;
	uint32_t i;
	int ret;

	ret = ptimer_image_validate(img, path, err);
	if (ret)
		return ret;
	/* room for one whole head entry too (threads[] can exceed a chunk) */
	o.buf = malloc(WRITE_CHUNK + 4 + PTIMER_IMG_MAX_HEAD);
	if (!o.buf)
		return ptimer_errf(err, ENOMEM, "cannot write image %s: out of memory; %s",
				   path, ptimer_errno_hint(ENOMEM));
	ret = ptimer_atomic_open(&o.a, path, "image", IMG_PERM, PTIMER_FILE_HINT |
				 (flags & PTIMER_IMG_NOSYNC ? PTIMER_FILE_NOSYNC : PTIMER_FILE_SYNC_DIR), err);
	if (ret)
		goto out;

	put_le32(out_reserve(&o, 4), PTIMER_IMG_MAGIC);
	head.version = PTIMER_IMG_VERSION;
	head.pid = img->pid;
	head.n_timers = img->n_timers;
	head.has_criu_mode = img->criu_mode != PTIMER_IMG_STANDALONE;
	head.criu_mode = img->criu_mode;
	head.has_state_in_core = img->state_in_core != 0;
	head.state_in_core = img->state_in_core;
	head.has_timers_in_core = true;
	head.timers_in_core = img->timers_in_core;
	head.has_n_pending = head.has_n_clock_tid = head.has_n_leader_aimed = true;
	for (i = 0; i < img->n_timers; i++) {
		head.n_leader_aimed += (img->timers[i].sigev_notify & PTIMER_SIGEV_THREAD_ID) &&
				       img->timers[i].notify_tid == img->pid;
		head.n_pending += img->timers[i].pending != 0;
		head.n_clock_tid += ptimer_thread_clock(img->timers[i].clock_id) && img->timers[i].clock_tid;
	}
	ret = head_threads(&head, img);
	if (ret) {
		ptimer_atomic_abort(&o.a);
		ptimer_errf(err, ret, "cannot write image %s: out of memory; %s", path,
			    ptimer_errno_hint(ENOMEM));
		goto out;
	}
	out_message(&o, &head.base, PTIMER_IMG_MAX_HEAD);
	free_head_threads(&head);
	for (i = 0; i < img->n_timers && !o.err; i++) {
		PtimerEntry e;

		entry_from_timer(&e, &img->timers[i]);
		out_message(&o, &e.base, PTIMER_IMG_MAX_ENTRY);
	}
	out_flush(&o);
	if (o.err == EMSGSIZE) {
		ptimer_atomic_abort(&o.a);
		ret = ptimer_errf(err, EMSGSIZE, "cannot write image %s: an entry exceeds %u bytes "
				  "(PTIMER_IMG_MAX_ENTRY); this is a ptimer bug, please report it",
				  path, PTIMER_IMG_MAX_ENTRY);
		goto out;
	}
	ret = ptimer_atomic_commit(&o.a, err);
out:
	free(o.buf);
	return ret;
}

/* ---- read --------------------------------------------------------------- */

/* Largest well-formed file: magic + head + PTIMER_IMG_MAX_TIMERS capped entries. */
#define IMG_MAX_FILE	(4ull + PTIMER_IMG_MAX_HEAD + (1ull + PTIMER_IMG_MAX_TIMERS) * (4ull + PTIMER_IMG_MAX_ENTRY))


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
		return ptimer_errf(err, EINVAL, "%s: %s: truncated length word at offset %zu (%zu bytes left); "
				   "the image is damaged, dump again", path, name, *off, left);
	}
	l = get_le32(buf + *off);
	if (l > max) {
		return ptimer_errf(err, EINVAL, "%s: %s: entry length %" PRIu32 " at offset %zu exceeds %u bytes; "
				   "the image is damaged, dump again", path, name, l, *off, max);
	}
	if (l > left - 4) {
		return ptimer_errf(err, EINVAL, "%s: %s: truncated entry at offset %zu: length %" PRIu32
				   " but only %zu bytes follow; the image is damaged, dump again",
				   path, name, *off, l, left - 4);
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
	t->clock_tid = e->has_clock_tid ? e->clock_tid : 0;
}

/* PtimerHead.threads into img->threads; values are checked by validate. */
static int threads_from_head(const char *path, const PtimerHead *head, struct ptimer_image *img,
			     struct ptimer_err *err)
{
	size_t i;

	if (!head->n_threads)
		return 0;
	if (head->n_threads > PTIMER_IMG_MAX_THREADS) {
		return ptimer_errf(err, EINVAL, "%s: head: %zu threads exceed the limit %u; the image is damaged, "
				   "dump again", path, head->n_threads, PTIMER_IMG_MAX_THREADS);
	}
	img->threads = calloc(head->n_threads, sizeof(*img->threads));
	if (!img->threads) {
		return ptimer_errf(err, ENOMEM, "%s: out of memory for %zu threads; %s", path, head->n_threads,
				   ptimer_errno_hint(ENOMEM));
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

/* The first four bytes: PTIMER_IMG_MAGIC. */
static int check_magic(const char *path, const uint8_t *buf, size_t size, struct ptimer_err *err)
{
	uint32_t magic;

	if (size == 0)
		return ptimer_errf(err, EINVAL, "%s: empty file, not a ptimer image; dump again", path);
	if (size < 4)
		return ptimer_errf(err, EINVAL, "%s: %zu bytes, too short for the magic; not a ptimer image",
				   path, size);
	magic = get_le32(buf);
	if (magic != PTIMER_IMG_MAGIC)
		return ptimer_errf(err, EINVAL, "%s: bad magic 0x%08" PRIx32 ", expected 0x%08x; "
				   "not a ptimer image", path, magic, PTIMER_IMG_MAGIC);
	return 0;
}

/* The head entry at *off: version, pid, n_timers, criu_mode, threads. */
static int parse_head(const char *path, const uint8_t *buf, size_t size, size_t *off,
		      struct ptimer_image *img, struct ptimer_err *err)
{
	const uint8_t *msg;
	PtimerHead *head;
	uint32_t len;
	int ret;

	ret = next_entry(path, buf, size, off, &msg, &len, "head", err);
	if (ret == 0)
		return ptimer_errf(err, EINVAL, "%s: no head after the magic; the image is damaged, dump again",
				   path);
	if (ret < 0)
		return ret;
	head = ptimer_head__unpack(NULL, len, msg);
	if (!head)
		return ptimer_errf(err, EINVAL, "%s: head at offset 4 is not a valid PtimerHead protobuf; "
				   "the image is damaged, dump again", path);
	img->version = head->version;
	img->pid = head->pid;
	img->n_timers = head->n_timers;
	img->criu_mode = head->has_criu_mode ? head->criu_mode : PTIMER_IMG_STANDALONE;
	img->state_in_core = head->has_state_in_core ? head->state_in_core : 0;
	img->counts_known = head->has_n_pending && head->has_n_clock_tid && head->has_n_leader_aimed;
	img->n_pending = img->counts_known ? head->n_pending : 0;
	img->n_clock_tid = img->counts_known ? head->n_clock_tid : 0;
	img->n_leader_aimed = img->counts_known ? head->n_leader_aimed : 0;
	img->timers_in_core = head->has_timers_in_core ? head->timers_in_core : 0;
	ret = threads_from_head(path, head, img, err);
	ptimer_head__free_unpacked(head, NULL);
	if (ret)
		return ret;
	/* Newer writers only add optional fields, so any version >= 1 is readable. */
	if (img->version == 0)
		return ptimer_errf(err, EINVAL, "%s: head: version 0 is not a valid image version; dump again",
				   path);
	if (img->n_timers > PTIMER_IMG_MAX_TIMERS)
		return ptimer_errf(err, EINVAL, "%s: head: n_timers %" PRIu32 " exceeds the limit %u; "
				   "the image is damaged, dump again", path, img->n_timers,
				   PTIMER_IMG_MAX_TIMERS);
	return 0;
}

/*
 * Only the framing of the n_timers entries from off, so that the count is
 * checked before any allocation: exactly that many, nothing after them.
 */
static int check_framing(const char *path, const uint8_t *buf, size_t size, size_t off, uint32_t n_timers,
			 struct ptimer_err *err)
{
	const uint8_t *msg;
	uint32_t len;
	char name[32];
	int ret;

	for (uint32_t i = 0; i < n_timers; i++) {
		snprintf(name, sizeof(name), "timer %" PRIu32, i);
		ret = next_entry(path, buf, size, &off, &msg, &len, name, err);
		if (ret < 0)
			return ret;
		if (ret == 0)
			return ptimer_errf(err, EINVAL, "%s: head says %" PRIu32 " timers but the file holds %"
					   PRIu32 "; the image is damaged, dump again", path, n_timers, i);
	}
	if (off != size)
		return ptimer_errf(err, EINVAL, "%s: %zu trailing bytes at offset %zu after the %" PRIu32
				   " timers the head announces; the image is damaged, dump again",
				   path, size - off, off, n_timers);
	return 0;
}

/* The n_timers entries from off (framing checked) into img->timers. */
static int parse_timers(const char *path, const uint8_t *buf, size_t size, size_t off,
			struct ptimer_image *img, struct ptimer_err *err)
{
	const uint8_t *msg;
	uint32_t len;

	img->timers = calloc(img->n_timers ? img->n_timers : 1, sizeof(*img->timers));
	if (!img->timers)
		return ptimer_errf(err, ENOMEM, "%s: out of memory for %" PRIu32 " timers; %s",
				   path, img->n_timers, ptimer_errno_hint(ENOMEM));
	for (uint32_t i = 0; i < img->n_timers; i++) {
		size_t at = off;
		PtimerEntry *e;

		next_entry(path, buf, size, &off, &msg, &len, "timer", err);
		e = ptimer_entry__unpack(NULL, len, msg);
		if (!e)
			return ptimer_errf(err, EINVAL, "%s: timer %" PRIu32 ": entry at offset %zu is not a "
					   "valid PtimerEntry protobuf; the image is damaged, dump again",
					   path, i, at);
		timer_from_entry(&img->timers[i], e);
		ptimer_entry__free_unpacked(e, NULL);
	}
	return 0;
}

/* magic, head, the timers' framing, the timers, then every field's check. */
static int parse_image(const char *path, const uint8_t *buf, size_t size,
		       struct ptimer_image *img, struct ptimer_err *err)
{
	size_t off = 4;
	int ret;

	ret = check_magic(path, buf, size, err);
	if (!ret)
		ret = parse_head(path, buf, size, &off, img, err);
	if (!ret)
		ret = check_framing(path, buf, size, off, img->n_timers, err);
	if (!ret)
		ret = parse_timers(path, buf, size, off, img, err);
	if (!ret)
		ret = ptimer_image_validate(img, path, err);
	return ret;
}

/* The whole image, or with n_timers the head alone (ptimer_image_read_head). */
/*
 * The head's counts from the timers themselves, for an image whose head
 * lacks them (an older ptimer's), as ptimer_image_write counts them: once
 * read whole, every image has them (counts_known 1).
 */
static void count_timers(struct ptimer_image *img)
{
	img->n_pending = img->n_clock_tid = img->n_leader_aimed = 0;
	for (uint32_t i = 0; i < img->n_timers; i++) {
		const struct ptimer_timer *tm = &img->timers[i];

		img->n_leader_aimed += (tm->sigev_notify & PTIMER_SIGEV_THREAD_ID) && tm->notify_tid == img->pid;
		img->n_pending += tm->pending != 0;
		img->n_clock_tid += ptimer_thread_clock(tm->clock_id) && tm->clock_tid;
	}
	img->counts_known = 1;
}

/* path names the bytes in errors; n_timers non-NULL: the head alone */
static int parse_buf(const char *path, const uint8_t *buf, size_t size, struct ptimer_image *img,
		     uint32_t *n_timers, struct ptimer_err *err)
{
	size_t off = 4;
	int ret;

	memset(img, 0, sizeof(*img));
	if (n_timers)
		*n_timers = 0;
	if (!n_timers) {
		ret = parse_image(path, buf, size, img, err);
		if (!ret && !img->counts_known)
			count_timers(img);
	} else {
		ret = check_magic(path, buf, size, err);
		if (!ret)
			ret = parse_head(path, buf, size, &off, img, err);
		if (!ret)
			ret = check_framing(path, buf, size, off, img->n_timers, err);
		if (!ret) {
			*n_timers = img->n_timers;
			img->n_timers = 0;
			ret = ptimer_image_validate(img, path, err);
		}
	}
	if (ret)
		ptimer_image_free(img);
	return ret;
}

static int read_image(const char *path, struct ptimer_image *img, uint32_t *n_timers, struct ptimer_err *err)
{
	char *buf = NULL;
	size_t size = 0;
	int ret;

	memset(img, 0, sizeof(*img));
	if (n_timers)
		*n_timers = 0;
	ret = ptimer_image_file(path, &buf, &size, err);
	if (ret)
		return ret;
	ret = parse_buf(path, (const uint8_t *)buf, size, img, n_timers, err);
	free(buf);
	return ret;
}

int ptimer_image_file(const char *path, char **buf, size_t *size, struct ptimer_err *err)
{
	return ptimer_file_read(path, "image", IMG_MAX_FILE, PTIMER_FILE_REGULAR | PTIMER_FILE_HINT, buf, size, err);
}

int ptimer_image_parse(const char *path, const void *buf, size_t size, struct ptimer_image *img,
		       uint32_t *n_timers, struct ptimer_err *err)
{
	return parse_buf(path, buf, size, img, n_timers, err);
}

int ptimer_image_read(const char *path, struct ptimer_image *img, struct ptimer_err *err)
{
	return read_image(path, img, NULL, err);
}

int ptimer_image_read_head(const char *path, struct ptimer_image *img, uint32_t *n_timers, struct ptimer_err *err)
{
	return read_image(path, img, n_timers, err);
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
			return ptimer_errf(err, ENAMETOOLONG, "image path for pid %d in %s is too long; %s",
					   pid, dir, ptimer_errno_hint(ENAMETOOLONG));
		}
		if (stat(buf, &st) || !S_ISREG(st.st_mode)) {
			return ptimer_errf(err, ENOENT, "no image for pid %d: %s is missing; check the directory "
					   "and the pid (as seen inside the dumped process's namespace)",
					   pid, buf);
		}
		return 0;
	}

	d = opendir(dir);
	if (!d) {
		int e = errno;

		return ptimer_errf(err, e, "cannot open image directory %s: %s; %s",
				   dir, strerror(e), ptimer_errno_hint(e));
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
		return ptimer_errf(err, ENOENT, "no " IMG_PREFIX "<pid>" IMG_SUFFIX " image in %s; "
				   "check the directory", dir);
	}
	if (n > 1) {
		return ptimer_errf(err, EEXIST, "%d images in %s (" IMG_PREFIX "%d" IMG_SUFFIX ", "
				   IMG_PREFIX "%d" IMG_SUFFIX "%s); pass the pid (--image-pid) to choose one",
				   n, dir, found, second, n > 2 ? ", ..." : "");
	}
	if (ptimer_image_path(buf, len, dir, found)) {
		return ptimer_errf(err, ENAMETOOLONG, "image path for pid %d in %s is too long; %s",
				   found, dir, ptimer_errno_hint(ENAMETOOLONG));
	}
	return 0;
}
