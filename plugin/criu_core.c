// SPDX-License-Identifier: MIT
/*
 * Editing CRIU's core-<pid>.img: the plugin takes the POSIX timers out of
 * criu's hands, so criu must not find them in the core image at restore.
 *
 * Format (criu/include/magic.h, criu/image.c, criu/protobuf.c): a 32-bit
 * IMG_COMMON_MAGIC, a 32-bit CORE_MAGIC, then one entry: a 32-bit length
 * and a CoreEntry protobuf, host byte order.  Only tc.timers.posix is
 * touched; every other field is carried through protobuf-c's unknown fields
 * (proto/criu_core.proto).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fault.h"
#include "lib/file.h"
#include "plugin/criu_core.h"
#include "proto/criu_core.pb-c.h"

#define CRIU_IMG_COMMON_MAGIC	0x54564319u
#define CRIU_CORE_MAGIC		0x55053847u

/*
 * The core image ptimer_criu_thread_rseq read last, kept for the next
 * read of the same file: plan_task reads a task's core image for the rseq
 * check, then for its timers (one open, fstat, pread and close a task
 * fewer).  Given away by the read that takes it, or dropped by
 * ptimer_criu_core_forget.
 */
static struct {
	char path[4200];
	uint8_t *buf;
	size_t len;
} kept;

void ptimer_criu_core_forget(void)
{
	free(kept.buf);
	kept.buf = NULL;
	kept.path[0] = 0;
}

static int read_file(const char *path, uint8_t **buf, size_t *len, struct ptimer_err *err)
{
	struct stat st;
	int fd, ret = 0;
	ssize_t r;

	if (kept.buf && !strcmp(kept.path, path)) {
		*buf = kept.buf;
		*len = kept.len;
		kept.buf = NULL;
		kept.path[0] = 0;
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ptimer_errf(err, errno, "cannot open criu image %s: %s", path, strerror(errno));
	if (fstat(fd, &st) || st.st_size < 12 || st.st_size > (64 << 20)) {
		ret = ptimer_errf(err, EINVAL, "criu image %s: size %lld is not that of a criu image", path,
				  (long long)st.st_size);
		goto out;
	}
	*len = (size_t)st.st_size;
	*buf = malloc(*len);
	if (!*buf) {
		ret = ptimer_errf(err, ENOMEM, "out of memory for %s", path);
		goto out;
	}
	r = pread(fd, *buf, *len, 0);
	if (r != (ssize_t)*len) {
		ret = ptimer_errf(err, EIO, "cannot read criu image %s", path);
		free(*buf);
		*buf = NULL;
	}
out:
	close(fd);
	return ret;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * Write buf as path through a temporary file beside it and rename: a crash
 * leaves the old file or the new one.  No fsync: this runs inside criu,
 * which makes none of its images durable one by one (no fsync anywhere in
 * criu/).  The new file must be criu's image in everything but the timers:
 * owner, group and mode are those of like, criu's file (criu creates images
 * 0644 with open(2), criu/image.c; in a user namespace the restored init,
 * root mapped to an unprivileged host uid, opens its children's core
 * images).  A path that was a hard link of like leaves like as it was.
 */
static int replace_file(const char *path, const uint8_t *buf, size_t len, const char *like, struct ptimer_err *err)
{
	char tmp[4200];
	struct stat st;
	int fd, ret = 0;

	if (stat(like, &st))
		return ptimer_errf(err, errno, "cannot rewrite %s: %s", like, strerror(errno));
	fd = ptimer_file_create_temp(path, st.st_mode & 0777, tmp, sizeof(tmp));
	if (fd < 0)
		return ptimer_errf(err, -fd, "cannot write %s: cannot create a file beside it: %s", path,
				   strerror(-fd));
	if (write(fd, buf, len) != (ssize_t)len)
		ret = ptimer_errf(err, errno ? errno : EIO, "cannot write %s: %s", path, strerror(errno));
	/* chown first: it clears set-id bits that the chmod then puts back */
	if (!ret && fchown(fd, st.st_uid, st.st_gid))
		ret = ptimer_errf(err, errno, "cannot write %s: cannot give the new file criu's owner %u:%u: %s",
				  path, st.st_uid, st.st_gid, strerror(errno));
	if (!ret && fchmod(fd, st.st_mode & 07777))
		ret = ptimer_errf(err, errno, "cannot write %s: cannot give the new file criu's mode %04o: %s",
				  path, st.st_mode & 07777, strerror(errno));
	close(fd);
	if (!ret && rename(tmp, path))
		ret = ptimer_errf(err, errno, "cannot write %s: %s", path, strerror(errno));
	if (ret)
		unlink(tmp);
	return ret;
}

/*
 * Write buf as dest, a name the overlay does not hold yet (the overlay's
 * guard may link criu's own file there meanwhile, plugin/overlay.c
 * link_all(), which then keeps ours): created at once with O_EXCL, the
 * owner and mode of like (st) given only where creating did not give
 * them.  1 when dest is there already (the guard's link: unlinked, then
 * created again), else 0 or -errno (err set; dest removed again, and the
 * caller puts criu's own file there).
 */
static int create_new(const char *dest, const uint8_t *buf, size_t len, const struct stat *st,
		      struct ptimer_err *err)
{
	int fd = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st->st_mode & 0777), ret = 0;
	struct stat now;

	if (fd < 0 && errno == EEXIST)
		return 1;
	if (fd < 0)
		return ptimer_errf(err, errno, "cannot write %s: %s", dest, strerror(errno));
	if (ptimer_fault("core-write"))
		ret = ptimer_errf(err, ENOSPC, "cannot write %s: injected failure", dest);
	else if (write(fd, buf, len) != (ssize_t)len)
		ret = ptimer_errf(err, errno ? errno : EIO, "cannot write %s: %s", dest, strerror(errno));
	if (!ret && fstat(fd, &now))
		ret = ptimer_errf(err, errno, "cannot write %s: %s", dest, strerror(errno));
	/* chown first: it clears set-id bits that the chmod then puts back */
	if (!ret && (now.st_uid != st->st_uid || now.st_gid != st->st_gid) &&
	    fchown(fd, st->st_uid, st->st_gid))
		ret = ptimer_errf(err, errno, "cannot write %s: cannot give the new file criu's owner %u:%u: %s",
				  dest, st->st_uid, st->st_gid, strerror(errno));
	if (!ret && ((now.st_mode ^ st->st_mode) & 07777 || now.st_uid != st->st_uid || now.st_gid != st->st_gid) &&
	    fchmod(fd, st->st_mode & 07777))
		ret = ptimer_errf(err, errno, "cannot write %s: cannot give the new file criu's mode %04o: %s",
				  dest, st->st_mode & 07777, strerror(errno));
	close(fd);
	if (ret)
		unlink(dest);
	return ret;
}

struct ptimer_criu_core {
	char path[4096];
	uint8_t *buf;		/* the whole file */
	size_t len;
	size_t elen;		/* the CoreEntry's bytes, from buf + 12 */
	CriuCoreEntry *core;
	bool edited;		/* core differs from buf */
};

void ptimer_criu_core_close(struct ptimer_criu_core *c)
{
	if (!c)
		return;
	if (c->core)
		criu_core_entry__free_unpacked(c->core, NULL);
	free(c->buf);
	free(c);
}

/*
 * One field of a protobuf message in [*p, end): its number and wire type,
 * a varint's value (*v), or a length-delimited field's bytes (*sub,
 * *sublen); fixed32/64 are skipped over.  *p moves past it.  Returns 1, 0
 * at the end, -EINVAL for bytes that are not a field (a group, a length
 * past the end, a varint longer than 10 bytes).
 */
static int pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 70; shift += 7) {
		uint8_t b;

		if (*p >= end)
			return -EINVAL;
		b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -EINVAL;
}

static int pb_field(const uint8_t **p, const uint8_t *end, uint32_t *num, uint32_t *wt, uint64_t *v,
		    const uint8_t **sub, size_t *sublen)
{
	uint64_t key;

	if (*p >= end)
		return 0;
	if (pb_varint(p, end, &key))
		return -EINVAL;
	*num = (uint32_t)(key >> 3);
	*wt = (uint32_t)(key & 7);
	switch (*wt) {
	case 0:
		return pb_varint(p, end, v) ? -EINVAL : 1;
	case 1:
	case 5: {
		size_t w = *wt == 1 ? 8 : 4;

		if ((size_t)(end - *p) < w)
			return -EINVAL;
		*p += w;
		return 1;
	}
	case 2:
		if (pb_varint(p, end, v) || *v > (uint64_t)(end - *p))
			return -EINVAL;
		*sub = *p;
		*sublen = (size_t)*v;
		*p += *v;
		return 1;
	default:
		return -EINVAL;
	}
}

/*
 * Walk the length-delimited fields path[0] / path[1] / ... of the message
 * [p, end) (each occurrence, as protobuf merges repeated embedded
 * messages), and in each message at the end of the path the varint field
 * leaf: count those messages (*n) and keep the largest leaf (*max).
 */
static int pb_span(const uint8_t *p, const uint8_t *end, const uint32_t *path, int depth, uint32_t leaf,
		   uint32_t *n, int64_t *max)
{
	const uint8_t *sub = NULL;
	uint32_t num, wt;
	size_t sublen = 0;
	uint64_t v = 0;
	int64_t id = 0;
	int r;

	while ((r = pb_field(&p, end, &num, &wt, &v, &sub, &sublen)) > 0) {
		if (!depth) {
			if (num == leaf && wt == 0)
				id = (int64_t)(uint32_t)v;	/* the last one counts */
			continue;
		}
		if (num != path[0])
			continue;
		if (wt != 2)
			return -EINVAL;
		r = pb_span(sub, sub + sublen, path + 1, depth - 1, leaf, n, max);
		if (r)
			return r;
	}
	if (r < 0)
		return r;
	if (!depth) {
		(*n)++;
		if (id > *max)
			*max = id;
	}
	return 0;
}

int ptimer_criu_core_id_span(const char *dir, pid_t vpid, uint32_t *n, int64_t *max_id, struct ptimer_err *err)
{
	/* CoreEntry.tc (3) / TaskCoreEntry.timers (7) / TaskTimersEntry.posix (4), PosixTimerEntry.it_id (1) */
	static const uint32_t path[] = { 3, 7, 4 };
	char file[4200];
	uint8_t *buf = NULL;
	size_t len = 0, elen;
	int ret;

	*n = 0;
	*max_id = -1;
	snprintf(file, sizeof(file), "%s/core-%d.img", dir, vpid);
	ret = read_file(file, &buf, &len, err);
	if (ret)
		return ret;
	if (len < 12 || get_u32(buf) != CRIU_IMG_COMMON_MAGIC || get_u32(buf + 4) != CRIU_CORE_MAGIC)
		ret = ptimer_errf(err, EINVAL, "%s: not a criu core image", file);
	elen = ret ? 0 : get_u32(buf + 8);
	if (!ret && elen > len - 12)
		ret = ptimer_errf(err, EINVAL, "%s: entry of %zu bytes, only %zu follow", file, elen, len - 12);
	if (!ret && pb_span(buf + 12, buf + 12 + elen, path, 3, 1, n, max_id))
		ret = ptimer_errf(err, EINVAL, "%s: CoreEntry does not decode", file);
	free(buf);
	return ret;
}

int ptimer_criu_core_open(const char *dir, pid_t vpid, struct ptimer_criu_core **out, struct ptimer_err *err)
{
	struct ptimer_criu_core *c = calloc(1, sizeof(*c));
	int ret;

	*out = NULL;
	if (!c)
		return ptimer_errf(err, ENOMEM, "out of memory");
	snprintf(c->path, sizeof(c->path), "%s/core-%d.img", dir, vpid);
	ret = read_file(c->path, &c->buf, &c->len, err);
	if (ret) {
		c->buf = NULL;
		goto out;
	}
	if (get_u32(c->buf) != CRIU_IMG_COMMON_MAGIC || get_u32(c->buf + 4) != CRIU_CORE_MAGIC) {
		ret = ptimer_errf(err, EINVAL, "%s: not a criu core image (magic %#x %#x)", c->path,
				  get_u32(c->buf), get_u32(c->buf + 4));
		goto out;
	}
	c->elen = get_u32(c->buf + 8);
	if (c->elen > c->len - 12) {
		ret = ptimer_errf(err, EINVAL, "%s: entry of %zu bytes, only %zu follow", c->path, c->elen,
				  c->len - 12);
		goto out;
	}
	c->core = criu_core_entry__unpack(NULL, c->elen, c->buf + 12);
	if (!c->core)
		ret = ptimer_errf(err, EINVAL, "%s: CoreEntry does not decode", c->path);
out:
	if (ret)
		ptimer_criu_core_close(c);
	else
		*out = c;
	return ret;
}

static CriuTaskTimersEntry *core_timers(const struct ptimer_criu_core *c)
{
	return c->core->tc && c->core->tc->timers ? c->core->tc->timers : NULL;
}

uint32_t ptimer_criu_core_n_timers(const struct ptimer_criu_core *c)
{
	CriuTaskTimersEntry *tt = core_timers(c);

	return tt ? (uint32_t)tt->n_posix : 0;
}

int ptimer_criu_core_timers(const struct ptimer_criu_core *c, struct ptimer_timer **out, uint32_t *n,
			    struct ptimer_err *err)
{
	CriuTaskTimersEntry *tt = core_timers(c);
	struct ptimer_timer *v;

	*out = NULL;
	*n = ptimer_criu_core_n_timers(c);
	if (!*n)
		return 0;
	v = calloc(*n, sizeof(*v));
	if (!v)
		return ptimer_errf(err, ENOMEM, "out of memory for %u timers", *n);
	for (uint32_t i = 0; i < *n; i++) {
		const CriuPosixTimerEntry *e = tt->posix[i];

		/* criu/timer.c encode_posix_timer(): all but the tid are required */
		if (!e->has_it_id || !e->has_clock_id || !e->has_si_signo || !e->has_it_sigev_notify ||
		    !e->has_vsec || !e->has_vnsec || !e->has_isec || !e->has_insec || e->it_id > INT32_MAX ||
		    e->vnsec >= 1000000000u || e->insec >= 1000000000u || e->vsec > INT64_MAX ||
		    e->isec > INT64_MAX) {
			free(v);
			return ptimer_errf(err, EINVAL, "%s: POSIX timer entry %u is incomplete or out of range; "
					   "dump again", c->path, i);
		}
		v[i].timer_id = (int32_t)e->it_id;
		v[i].clock_id = (int32_t)e->clock_id;
		v[i].sigev_notify = (int32_t)e->it_sigev_notify;
		v[i].signo = (int32_t)e->si_signo;
		v[i].sival = e->sival_ptr;
		v[i].notify_tid = e->has_notify_thread_id ? e->notify_thread_id : 0;
		v[i].overrun = e->has_overrun && e->overrun <= INT32_MAX ? (int32_t)e->overrun : 0;
		v[i].it_value.sec = (int64_t)e->vsec;
		v[i].it_value.nsec = (int64_t)e->vnsec;
		v[i].it_interval.sec = (int64_t)e->isec;
		v[i].it_interval.nsec = (int64_t)e->insec;
	}
	*out = v;
	return 0;
}

int ptimer_criu_core_pdeath(struct ptimer_criu_core *c, uint32_t sig, uint32_t *orig, struct ptimer_err *err)
{
	CriuThreadCoreEntry *th = c->core->thread_core;

	if (!th)
		return ptimer_errf(err, EINVAL, "%s: no thread_core (criu writes one for every task); dump again",
				   c->path);
	*orig = th->has_pdeath_sig ? th->pdeath_sig : 0;
	th->has_pdeath_sig = 1;
	th->pdeath_sig = sig;
	c->edited = true;
	return 0;
}

int ptimer_criu_core_strip(struct ptimer_criu_core *c, const char *dest, struct ptimer_err *err)
{
	CriuTaskTimersEntry *tt = core_timers(c);

	if (tt && tt->n_posix) {
		for (size_t i = 0; i < tt->n_posix; i++)
			criu_posix_timer_entry__free_unpacked(tt->posix[i], NULL);
		free(tt->posix);
		tt->posix = NULL;
		tt->n_posix = 0;
		c->edited = true;
	}
	return ptimer_criu_core_write(c, dest, err);
}

int ptimer_criu_core_write(struct ptimer_criu_core *c, const char *dest, struct ptimer_err *err)
{
	size_t olen, rest = c->len - 12 - c->elen;
	struct stat st;
	uint8_t *out;
	int ret;

	if (!c->edited)
		return 0;	/* nothing changed: the file stays as it is */
	olen = criu_core_entry__get_packed_size(c->core);
	out = malloc(12 + olen + rest);
	if (!out)
		return ptimer_errf(err, ENOMEM, "out of memory for %s", c->path);
	memcpy(out, c->buf, 8);
	memcpy(out + 8, &(uint32_t){ (uint32_t)olen }, 4);
	criu_core_entry__pack(c->core, out + 12);
	/* whatever followed the entry stays */
	memcpy(out + 12 + olen, c->buf + 12 + c->elen, rest);
	ret = 1;
	if (dest && stat(c->path, &st)) {
		ret = ptimer_errf(err, errno, "cannot rewrite %s: %s", c->path, strerror(errno));
	} else if (dest) {
		/* the guard's link of criu's file, there mostly (it links on the
		 * other CPU as the plan is made): gone first; the guard links each
		 * name once, so one made after that stays ours */
		ret = unlink(dest) && errno != ENOENT ? 1 : create_new(dest, out, 12 + olen + rest, &st, err);
		if (ret == 1 && !unlink(dest))
			ret = create_new(dest, out, 12 + olen + rest, &st, err);
		/* not written: criu's own file there, as the guard would have
		 * linked it (the caller leaves the timers to criu), whichever
		 * of the two came first */
		if (ret < 0 && link(c->path, dest) && errno != EEXIST) {
			char target[64];

			snprintf(target, sizeof(target), "../%s", strrchr(c->path, '/') + 1);
			symlink(target, dest);
		}
	}
	if (ret == 1)
		ret = replace_file(dest ? dest : c->path, out, 12 + olen + rest, c->path, err);
	free(out);
	return ret;
}

int ptimer_criu_core_strip_timers(const char *dir, pid_t vpid, uint32_t *removed, struct ptimer_err *err)
{
	struct ptimer_criu_core *c;
	int ret;

	*removed = 0;
	ret = ptimer_criu_core_open(dir, vpid, &c, err);
	if (ret)
		return ret;
	*removed = ptimer_criu_core_n_timers(c);
	ret = ptimer_criu_core_strip(c, NULL, err);
	ptimer_criu_core_close(c);
	return ret;
}

#define CRIU_PSTREE_MAGIC	0x50273030u

static int cmp_task(const void *a, const void *b)
{
	const struct ptimer_criu_task *x = a, *y = b;

	return (x->vpid > y->vpid) - (x->vpid < y->vpid);
}

void ptimer_criu_pstree_free(struct ptimer_criu_task *tasks, uint32_t n)
{
	for (uint32_t i = 0; tasks && i < n; i++)
		free(tasks[i].threads);
	free(tasks);
}

const struct ptimer_criu_task *ptimer_criu_pstree_task(const struct ptimer_criu_task *tasks, uint32_t n, pid_t vpid)
{
	struct ptimer_criu_task key = { .vpid = vpid };

	return n ? bsearch(&key, tasks, n, sizeof(*tasks), cmp_task) : NULL;
}

int ptimer_criu_pstree_read(const char *dir, struct ptimer_criu_task **tasks, uint32_t *n, struct ptimer_err *err)
{
	struct ptimer_criu_task *v = NULL;
	char path[4096];
	uint8_t *buf = NULL;
	size_t len = 0, off = 8, cap = 0;
	uint32_t k = 0;
	int ret;

	*tasks = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "%s/pstree.img", dir);
	if (access(path, F_OK))
		return ptimer_errf(err, ENOENT, "%s: %s", path, strerror(errno));
	ret = read_file(path, &buf, &len, err);
	if (ret)
		return ret;
	if (get_u32(buf) != CRIU_IMG_COMMON_MAGIC || get_u32(buf + 4) != CRIU_PSTREE_MAGIC) {
		ret = ptimer_errf(err, EINVAL, "%s: not a criu pstree image (magic %#x %#x)", path, get_u32(buf),
				  get_u32(buf + 4));
		free(buf);
		return ret;
	}
	while (!ret && off + 4 <= len) {
		size_t elen = get_u32(buf + off);
		CriuPstreeEntry *e;

		if (elen > len - off - 4) {
			ret = ptimer_errf(err, EINVAL, "%s: entry at %zu of %zu bytes, only %zu follow", path, off, elen,
					  len - off - 4);
			break;
		}
		e = criu_pstree_entry__unpack(NULL, elen, buf + off + 4);
		off += 4 + elen;
		if (!e) {
			ret = ptimer_errf(err, EINVAL, "%s: an entry does not decode", path);
			break;
		}
		if (k == cap) {
			struct ptimer_criu_task *w = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*w));

			if (w)
				v = w;
			else
				ret = ptimer_errf(err, ENOMEM, "out of memory");
		}
		if (!ret) {
			v[k].vpid = (pid_t)e->pid;
			v[k].ppid = e->has_ppid ? (pid_t)e->ppid : 0;
			v[k].n_threads = (uint32_t)e->n_threads;
			v[k].threads = malloc((e->n_threads + 1) * sizeof(*v[k].threads));
			if (!v[k].threads)
				ret = ptimer_errf(err, ENOMEM, "out of memory");
			for (size_t i = 0; !ret && i < e->n_threads; i++)
				v[k].threads[i] = (pid_t)e->threads[i];
			k++;
		}
		criu_pstree_entry__free_unpacked(e, NULL);
	}
	free(buf);
	if (ret) {
		ptimer_criu_pstree_free(v, k);
		return ret;
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_task);
	*tasks = v;
	*n = k;
	return 0;
}

int ptimer_criu_thread_rseq(const char *dir, pid_t tid, uint64_t *ptr, struct ptimer_err *err)
{
	char path[4096];
	uint8_t *buf = NULL;
	size_t len = 0, elen;
	CriuCoreThreadView *v;
	int ret;

	*ptr = 0;
	snprintf(path, sizeof(path), "%s/core-%d.img", dir, tid);
	ret = read_file(path, &buf, &len, err);
	if (ret)
		return ret;
	elen = get_u32(buf + 8);
	if (get_u32(buf) != CRIU_IMG_COMMON_MAGIC || get_u32(buf + 4) != CRIU_CORE_MAGIC || elen > len - 12) {
		free(buf);
		return ptimer_errf(err, EINVAL, "%s: not a criu core image", path);
	}
	v = criu_core_thread_view__unpack(NULL, elen, buf + 12);
	ptimer_criu_core_forget();
	if (strlen(path) < sizeof(kept.path)) {
		snprintf(kept.path, sizeof(kept.path), "%s", path);
		kept.buf = buf;
		kept.len = len;
	} else {
		free(buf);
	}
	if (!v)
		return ptimer_errf(err, EINVAL, "%s: CoreEntry does not decode", path);
	if (v->thread_core && v->thread_core->rseq_entry)
		*ptr = v->thread_core->rseq_entry->rseq_abi_pointer;
	criu_core_thread_view__free_unpacked(v, NULL);
	return 0;
}
