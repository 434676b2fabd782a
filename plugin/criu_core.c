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

static int read_file(const char *path, uint8_t **buf, size_t *len, struct ptimer_err *err)
{
	struct stat st;
	int fd, ret = 0;
	ssize_t r;

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
	if (ptimer_fault("core-write"))
		ret = ptimer_errf(err, ENOSPC, "cannot write %s: injected failure", path);
	else if (write(fd, buf, len) != (ssize_t)len)
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

bool ptimer_criu_core_runs(const struct ptimer_criu_core *c)
{
	uint32_t st = c->core->tc && c->core->tc->has_task_state ? c->core->tc->task_state : 1;

	return st == 1 || st == 3;
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

void ptimer_criu_core_strip(struct ptimer_criu_core *c)
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
}

int ptimer_criu_core_write(struct ptimer_criu_core *c, const char *dest, struct ptimer_err *err)
{
	size_t olen, rest = c->len - 12 - c->elen;
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
	ret = replace_file(dest, out, 12 + olen + rest, c->path, err);
	free(out);
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
	free(buf);
	if (!v)
		return ptimer_errf(err, EINVAL, "%s: CoreEntry does not decode", path);
	if (v->thread_core && v->thread_core->rseq_entry)
		*ptr = v->thread_core->rseq_entry->rseq_abi_pointer;
	criu_core_thread_view__free_unpacked(v, NULL);
	return 0;
}
