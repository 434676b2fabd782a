// SPDX-License-Identifier: MIT
/*
 * Unit tests for images/: binary image write/read, framing refusals, field
 * validation (as test/cases/invalid-values.sh checks end to end), JSON
 * round trip and refusals, ptimer_image_find, and the show/name helpers.
 * Each check prints one PASS/FAIL line (test/lib/tst.h); exit status 1 on failure.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/image.h"
#include "lib/file.h"
#include "proto/ptimer.pb-c.h"
#include "test/lib/tst.h"

#define N_SAMPLE	6

/* ---- helpers -------------------------------------------------------------- */

static char scratch_root[64];

static char *scratch_dir(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", scratch_root, name);
	if (mkdir(buf, 0700)) {
		perror(buf);
		exit(2);
	}
	return buf;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void rm_rf(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Names in dir other than . and .., joined by spaces, and their count. */
static int list_dir(const char *dir, char *buf, size_t len)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	buf[0] = '\0';
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		n++;
		strncat(buf, de->d_name, len - strlen(buf) - 2);
		strcat(buf, " ");
	}
	closedir(d);
	return n;
}

static int write_bytes(const char *path, const void *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, p, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

static int write_text(const char *path, const char *s)
{
	return write_bytes(path, s, strlen(s));
}

static uint8_t *read_bytes(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	buf = malloc(st.st_size + 1);
	*len = read(fd, buf, st.st_size);
	close(fd);
	return buf;
}

static void le32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

/* A raw image built independently of ptimer_image_write, for bad contents. */
struct raw {
	uint8_t buf[1 << 16];
	size_t len;
};

static void raw_init(struct raw *r, uint32_t magic)
{
	le32(r->buf, magic);
	r->len = 4;
}

static void raw_msg(struct raw *r, const ProtobufCMessage *m, const uint8_t *extra, size_t n_extra)
{
	size_t l = protobuf_c_message_get_packed_size(m);

	le32(r->buf + r->len, l + n_extra);
	protobuf_c_message_pack(m, r->buf + r->len + 4);
	if (n_extra)
		memcpy(r->buf + r->len + 4 + l, extra, n_extra);
	r->len += 4 + l + n_extra;
}

static void raw_head(struct raw *r, uint32_t version, int32_t pid, uint32_t n)
{
	PtimerHead h = PTIMER_HEAD__INIT;

	h.version = version;
	h.pid = pid;
	h.n_timers = n;
	raw_msg(r, &h.base, NULL, 0);
}

static void raw_timer(struct raw *r, const struct ptimer_timer *t, const uint8_t *extra, size_t n)
{
	PtimerEntry e = PTIMER_ENTRY__INIT;

	e.timer_id = t->timer_id;
	e.clock_id = t->clock_id;
	e.sigev_notify = t->sigev_notify;
	e.signo = t->signo;
	e.sival = t->sival;
	e.notify_tid = t->notify_tid;
	e.value_sec = t->it_value.sec;
	e.value_nsec = t->it_value.nsec;
	e.interval_sec = t->it_interval.sec;
	e.interval_nsec = t->it_interval.nsec;
	e.has_overrun = 1;
	e.overrun = t->overrun;
	raw_msg(r, &e.base, extra, n);
}

/* clock ids as include/linux/posix-timers.h builds them, without shifting negatives. */
static int32_t cpu_clock(int32_t pid, bool thread, int which)
{
	return (int32_t)(((uint32_t)~pid << 3) | (thread ? 4u : 0u) | (uint32_t)which);
}

static struct ptimer_timer sample_timers[N_SAMPLE] = {
	{ .timer_id = 0, .clock_id = 1, .sigev_notify = PTIMER_SIGEV_SIGNAL, .signo = 14,
	  .sival = 0x11, .notify_tid = 123, .it_value = { 1, 500000000 } },
	{ .timer_id = 1000000, .clock_id = -6, .sigev_notify = PTIMER_SIGEV_SIGNAL | PTIMER_SIGEV_THREAD_ID,
	  .signo = 34, .sival = 0xffffffffffffffffull, .notify_tid = 124, .overrun = 7,
	  .it_value = { 0, 1 }, .it_interval = { 2, 999999999 } },
	{ .timer_id = INT_MAX, .clock_id = -14, .sigev_notify = PTIMER_SIGEV_NONE, .signo = 0 },
	{ .timer_id = 2000000, .clock_id = -2, .sigev_notify = PTIMER_SIGEV_THREAD, .signo = 32,
	  .sival = 0x7f0012345678ull, .notify_tid = 5, .overrun = INT32_MAX,
	  .it_value = { 100000, 0 }, .it_interval = { 1, 0 } },
	{ .timer_id = 17, .clock_id = 11, .sigev_notify = PTIMER_SIGEV_SIGNAL, .signo = 64,
	  .sival = 0x8000000000000000ull, .it_value = { 9223372036, 854775807 } },
	{ .timer_id = 3, .clock_id = 9, .sigev_notify = PTIMER_SIGEV_SIGNAL | PTIMER_SIGEV_THREAD_ID,
	  .signo = 1, .notify_tid = INT32_MAX, .it_value = { 0, 1 }, .it_interval = { 0, 1 } },
};

/* A fresh copy of the sample, so a test can break one field. */
static void sample_image(struct ptimer_image *img, struct ptimer_timer *t)
{
	memcpy(t, sample_timers, sizeof(sample_timers));
	img->version = PTIMER_IMG_VERSION;
	img->pid = 123;
	img->criu_mode = PTIMER_IMG_STANDALONE;
	img->state_in_core = 0;
	img->timers_in_core = 0;
	img->n_timers = N_SAMPLE;
	img->timers = t;
	img->n_threads = 0;
	img->threads = NULL;
}

/* The first field where a and b differ, or NULL. */
static const char *timer_diff(const struct ptimer_timer *a, const struct ptimer_timer *b)
{
	if (a->timer_id != b->timer_id) return "timer_id";
	if (a->clock_id != b->clock_id) return "clock_id";
	if (a->sigev_notify != b->sigev_notify) return "sigev_notify";
	if (a->signo != b->signo) return "signo";
	if (a->sival != b->sival) return "sival";
	if (a->notify_tid != b->notify_tid) return "notify_tid";
	if (a->overrun != b->overrun) return "overrun";
	if (a->it_value.sec != b->it_value.sec) return "it_value.sec";
	if (a->it_value.nsec != b->it_value.nsec) return "it_value.nsec";
	if (a->it_interval.sec != b->it_interval.sec) return "it_interval.sec";
	if (a->it_interval.nsec != b->it_interval.nsec) return "it_interval.nsec";
	return NULL;
}

static void check_same_timers(const char *what, const struct ptimer_image *got,
			      const struct ptimer_timer *want, uint32_t n)
{
	char name[128];
	uint32_t i;

	for (i = 0; i < n && i < got->n_timers; i++) {
		const char *d = timer_diff(&got->timers[i], &want[i]);

		snprintf(name, sizeof(name), "%s: timer %u (id %d) all fields equal", what, i,
			 want[i].timer_id);
		CHECK(name, !d, "field %s differs", d);
	}
}

/* ret must be want_ret and msg hold both substrings (s2 may be NULL) on one line. */
static void expect_err(const char *name, int ret, int want_ret, const struct ptimer_err *e,
		       const char *s1, const char *s2)
{
	bool ok = ret == want_ret && strstr(e->msg, s1) && (!s2 || strstr(e->msg, s2)) &&
		  !strchr(e->msg, '\n');

	CHECK(name, ok, "ret %d (want %d), msg \"%s\" (want \"%s\"%s%s%s)", ret, want_ret,
	      e->msg, s1, s2 ? " and \"" : "", s2 ? s2 : "", s2 ? "\"" : "");
}

/* ---- binary image ----------------------------------------------------------- */

static void test_path(void)
{
	char buf[64];
	int ret;

	ret = ptimer_image_path(buf, sizeof(buf), "/d", 5);
	CHECK("path: /d pid 5", ret == 0 && !strcmp(buf, "/d/ptimers-5.img"), "ret %d buf %s", ret, buf);
	ret = ptimer_image_path(buf, 17, "/d", 5);
	CHECK("path: 17-byte buffer holds /d/ptimers-5.img", ret == 0, "ret %d", ret);
	ret = ptimer_image_path(buf, 16, "/d", 5);
	CHECK("path: 16-byte buffer -> -ENAMETOOLONG", ret == -ENAMETOOLONG, "ret %d", ret);
}

static void test_round_trip(void)
{
	struct ptimer_timer t[N_SAMPLE];
	struct ptimer_image img, got;
	struct ptimer_err err = { "" };
	char dir[128], path[256], names[512];
	uint8_t *bytes;
	size_t len = 0;
	int ret;

	sample_image(&img, t);
	scratch_dir("rt", dir, sizeof(dir));
	ptimer_image_path(path, sizeof(path), dir, 123);

	ret = ptimer_image_write(path, &img, &err);
	CHECK("write: sample image of 6 timers", ret == 0, "ret %d: %s", ret, err.msg);
	ret = list_dir(dir, names, sizeof(names));
	CHECK("write: only ptimers-123.img left in the directory", ret == 1 &&
	      !strcmp(names, "ptimers-123.img "), "%d entries: %s", ret, names);
	bytes = read_bytes(path, &len);
	CHECK("write: magic bytes on disk are \"RMIT\"", bytes && len > 4 && !memcmp(bytes, "RMIT", 4),
	      "first bytes %02x %02x %02x %02x", bytes ? bytes[0] : 0, bytes ? bytes[1] : 0,
	      bytes ? bytes[2] : 0, bytes ? bytes[3] : 0);
	free(bytes);

	ret = ptimer_image_read(path, &got, &err);
	CHECK("read: sample image", ret == 0, "ret %d: %s", ret, err.msg);
	if (ret)
		return;
	CHECK("read: version 1", got.version == 1, "version %u", got.version);
	CHECK("read: pid 123", got.pid == 123, "pid %d", got.pid);
	CHECK("read: n_timers 6", got.n_timers == N_SAMPLE, "n_timers %u", got.n_timers);
	check_same_timers("read", &got, sample_timers, N_SAMPLE);
	CHECK("read: timer 1 sival 0xffffffffffffffff", got.timers[1].sival == UINT64_MAX,
	      "sival 0x%" PRIx64, got.timers[1].sival);
	CHECK("read: timer 1 clock_id -6", got.timers[1].clock_id == -6, "clock_id %d", got.timers[1].clock_id);
	CHECK("read: timer 2 id INT_MAX", got.timers[2].timer_id == INT_MAX, "id %d", got.timers[2].timer_id);
	CHECK("read: timer 4 it_value KTIME_MAX", got.timers[4].it_value.sec == 9223372036 &&
	      got.timers[4].it_value.nsec == 854775807, "%" PRId64 ".%09" PRId64, got.timers[4].it_value.sec,
	      got.timers[4].it_value.nsec);
	ptimer_image_free(&got);
	CHECK("free: clears the image", got.timers == NULL && got.n_timers == 0, "not cleared");

	/* Overwriting replaces the whole file. */
	img.n_timers = 2;
	img.pid = 123;
	ret = ptimer_image_write(path, &img, &err);
	ret = ret ? ret : ptimer_image_read(path, &got, &err);
	CHECK("write: overwrite with 2 timers reads back 2", ret == 0 && got.n_timers == 2,
	      "ret %d n_timers %u: %s", ret, got.n_timers, err.msg);
	CHECK("read: no criu_mode, state_in_core 0 when not written", ret == 0 && got.criu_mode == 0 &&
	      got.state_in_core == 0, "criu_mode %u state_in_core %u", got.criu_mode, got.state_in_core);
	ptimer_image_free(&got);

	/* The head alone: the counts, the number of timers, none unpacked. */
	{
		struct ptimer_timer t2[N_SAMPLE];
		struct ptimer_image h;
		uint32_t nt = 0;

		sample_image(&h, t2);
		t2[0].pending = 1;
		t2[3].pending = 1;
		ret = ptimer_image_write(path, &h, &err);
		ret = ret ? ret : ptimer_image_read_head(path, &got, &nt, &err);
		CHECK("read head: counts and n_timers, no timer unpacked", ret == 0 && got.counts_known &&
		      got.n_pending == 2 && got.n_clock_tid == 0 && nt == N_SAMPLE && got.n_timers == 0 &&
		      !got.timers && got.pid == 123, "ret %d known %u pending %u clock %u n %u/%u: %s", ret,
		      got.counts_known, got.n_pending, got.n_clock_tid, nt, got.n_timers, err.msg);
		ptimer_image_free(&got);
	}

	/*
	 * An older head: n_pending and n_clock_tid but no n_leader_aimed.  The
	 * head alone does not know what the plugin must complete; read whole,
	 * the counts come from the timers.
	 */
	{
		static struct raw r;
		PtimerHead h = PTIMER_HEAD__INIT;
		struct ptimer_timer t = sample_timers[1];	/* SIGEV_THREAD_ID */
		uint32_t nt = 0;

		t.notify_tid = 123;	/* aimed at the leader */
		raw_init(&r, PTIMER_IMG_MAGIC);
		h.version = 1;
		h.pid = 123;
		h.n_timers = 1;
		h.has_n_pending = h.has_n_clock_tid = 1;
		raw_msg(&r, &h.base, NULL, 0);
		raw_timer(&r, &t, NULL, 0);
		write_bytes(path, r.buf, r.len);
		ret = ptimer_image_read_head(path, &got, &nt, &err);
		CHECK("read head: no n_leader_aimed, so counts_known 0", ret == 0 && !got.counts_known &&
		      !got.n_leader_aimed && nt == 1, "ret %d known %u leader %u n %u: %s", ret, got.counts_known,
		      got.n_leader_aimed, nt, err.msg);
		ptimer_image_free(&got);
		ret = ptimer_image_read(path, &got, &err);
		CHECK("read whole: counts from the timers (1 aimed at the leader)", ret == 0 && got.counts_known &&
		      got.n_leader_aimed == 1 && got.n_pending == 0 && got.n_clock_tid == 0,
		      "ret %d known %u leader %u pending %u clock %u: %s", ret, got.counts_known, got.n_leader_aimed,
		      got.n_pending, got.n_clock_tid, err.msg);
		ptimer_image_free(&got);
	}

	/* The plugin's image: the timing in criu's core image, said so. */
	img.criu_mode = PTIMER_IMG_CRIU_LAST;
	img.state_in_core = 1;
	ret = ptimer_image_write(path, &img, &err);
	ret = ret ? ret : ptimer_image_read(path, &got, &err);
	CHECK("write/read: criu_mode 3 and state_in_core 1 kept", ret == 0 && got.criu_mode == PTIMER_IMG_CRIU_LAST &&
	      got.state_in_core == 1, "ret %d criu_mode %u state_in_core %u: %s", ret, got.criu_mode,
	      got.state_in_core, err.msg);
	ptimer_image_free(&got);
	img.criu_mode = PTIMER_IMG_STANDALONE;
	ret = ptimer_image_write(path, &img, &err);
	CHECK("write: state_in_core without a criu_mode refused", ret == -EINVAL && strstr(err.msg, "state_in_core"),
	      "ret %d: %s", ret, err.msg);
	img.state_in_core = 2;
	img.criu_mode = PTIMER_IMG_CRIU_FIRST;
	ret = ptimer_image_write(path, &img, &err);
	CHECK("write: state_in_core 2 refused", ret == -EINVAL && strstr(err.msg, "must be 0 or 1"),
	      "ret %d: %s", ret, err.msg);
	img.state_in_core = 0;
	img.criu_mode = PTIMER_IMG_STANDALONE;

	/* No timers at all is a valid image. */
	img.n_timers = 0;
	img.timers = NULL;
	ret = ptimer_image_write(path, &img, &err);
	ret = ret ? ret : ptimer_image_read(path, &got, &err);
	CHECK("write/read: zero timers", ret == 0 && got.n_timers == 0 && got.pid == 123,
	      "ret %d n_timers %u pid %d: %s", ret, got.n_timers, got.pid, err.msg);
	ptimer_image_free(&got);

	/* The plugin's image of a task whose timers are all criu's. */
	img.criu_mode = PTIMER_IMG_CRIU_LAST;
	img.state_in_core = 1;
	img.timers_in_core = 1;
	ret = ptimer_image_write(path, &img, &err);
	ret = ret ? ret : ptimer_image_read(path, &got, &err);
	CHECK("write/read: timers_in_core 1 kept", ret == 0 && got.timers_in_core == 1 && got.n_timers == 0 &&
	      got.state_in_core == 1, "ret %d timers_in_core %u n %u: %s", ret, got.timers_in_core, got.n_timers,
	      err.msg);
	ptimer_image_free(&got);
	img.state_in_core = 0;
	ret = ptimer_image_write(path, &img, &err);
	CHECK("write: timers_in_core without state_in_core refused", ret == -EINVAL &&
	      strstr(err.msg, "timers_in_core"), "ret %d: %s", ret, err.msg);
	img.state_in_core = 1;
	img.n_timers = 1;
	img.timers = calloc(1, sizeof(*img.timers));
	img.timers[0].clock_id = 1;
	img.timers[0].notify_tid = 123;
	ret = ptimer_image_write(path, &img, &err);
	CHECK("write: timers_in_core with timers listed refused", ret == -EINVAL &&
	      strstr(err.msg, "no timers listed"), "ret %d: %s", ret, err.msg);
	free(img.timers);
	img.timers = NULL;
	img.n_timers = 0;
	img.timers_in_core = 0;
	img.state_in_core = 0;
	img.criu_mode = PTIMER_IMG_STANDALONE;
}

/*
 * Images get criu's image mode (CR_FD_PERM 0644, criu/include/image.h) less
 * the umask, as criu's own open(2) gives them: in a user namespace restored
 * tasks read images as an unprivileged host uid.
 */
static void test_mode(void)
{
	static const mode_t masks[] = { 022, 077, 0 };
	struct ptimer_timer t[N_SAMPLE];
	struct ptimer_image img;
	struct ptimer_err err = { "" };
	char dir[128], path[256], tmp[300];
	struct stat st;
	mode_t old;
	int ret, fd;

	sample_image(&img, t);
	scratch_dir("mode", dir, sizeof(dir));
	ptimer_image_path(path, sizeof(path), dir, 7);
	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		old = umask(masks[i]);
		ret = ptimer_image_write(path, &img, &err);
		umask(old);
		CHECK("mode: write", ret == 0, "umask %03o: ret %d: %s", masks[i], ret, err.msg);
		ret = stat(path, &st);
		CHECK("mode: image is 0644 less the umask", ret == 0 && (st.st_mode & 07777) == (0644 & ~masks[i]),
		      "umask %03o: mode %04o, want %04o", masks[i], ret ? 0 : st.st_mode & 07777,
		      0644 & ~masks[i]);
	}
	fd = ptimer_file_create_temp(path, 0640, tmp, sizeof(tmp));
	CHECK("mode: create_temp names a file beside path", fd >= 0 && !strncmp(tmp, dir, strlen(dir)) &&
	      strstr(tmp, "/.ptimers-7.img.") && !fstat(fd, &st), "fd %d name %s", fd, tmp);
	CHECK("mode: create_temp is O_WRONLY, O_CLOEXEC", fd >= 0 && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_WRONLY &&
	      (fcntl(fd, F_GETFD) & FD_CLOEXEC), "fd %d", fd);
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	ret = ptimer_file_create_temp("/nonexistent-dir/ptimers-1.img", 0644, tmp, sizeof(tmp));
	CHECK("mode: create_temp in a missing directory gives -ENOENT", ret == -ENOENT, "ret %d", ret);
}

/* The sparse perf workload (test/bench.sh): 2048 timers with IDs 512 apart. */
static void test_sparse_many(void)
{
	struct ptimer_image img = { .version = 1, .pid = 1, .n_timers = 2048 }, got;
	struct ptimer_err err = { "" };
	char dir[128], path[256];
	uint32_t i;
	int ret;

	img.timers = calloc(img.n_timers, sizeof(*img.timers));
	for (i = 0; i < img.n_timers; i++) {
		img.timers[i].timer_id = i * 512;
		img.timers[i].clock_id = 1;
		img.timers[i].signo = 14;
		img.timers[i].notify_tid = 1;
		img.timers[i].it_value.nsec = i;
	}
	scratch_dir("sparse", dir, sizeof(dir));
	ptimer_image_path(path, sizeof(path), dir, 1);
	ret = ptimer_image_write(path, &img, &err);
	ret = ret ? ret : ptimer_image_read(path, &got, &err);
	CHECK("sparse: 2048 timers, ids 0..1048064 stride 512, round trip", ret == 0 &&
	      got.n_timers == 2048 && got.timers[2047].timer_id == 1048064 &&
	      got.timers[2047].it_value.nsec == 2047, "ret %d n %u: %s", ret, got.n_timers, err.msg);
	if (!ret)
		ptimer_image_free(&got);
	free(img.timers);
}

static void test_framing(void)
{
	struct ptimer_timer t[N_SAMPLE];
	struct ptimer_image img, got;
	struct ptimer_err err;
	char dir[128], path[256], bad[300];
	uint8_t *good, *b;
	size_t len = 0;
	struct raw r;
	int ret;

	sample_image(&img, t);
	scratch_dir("framing", dir, sizeof(dir));
	ptimer_image_path(path, sizeof(path), dir, 123);
	if (ptimer_image_write(path, &img, &err) || !(good = read_bytes(path, &len))) {
		FAIL("framing: setup", "cannot write sample image: %s", err.msg);
		return;
	}
	snprintf(bad, sizeof(bad), "%s/ptimers-9.img", dir);
	b = malloc(len + 16);

	memcpy(b, good, len);
	b[0] ^= 0xff;
	write_bytes(bad, b, len);
	ret = ptimer_image_read(bad, &got, &err);
	expect_err("framing: bad magic refused", ret, -EINVAL, &err, bad, "bad magic 0x54494dad");

	write_bytes(bad, good, len - 3);
	ret = ptimer_image_read(bad, &got, &err);
	expect_err("framing: entry cut 3 bytes short refused", ret, -EINVAL, &err,
		   "timer 5: truncated entry", bad);

	write_bytes(bad, good, len - 1);
	ret = ptimer_image_read(bad, &got, &err);
	expect_err("framing: last byte missing refused", ret, -EINVAL, &err, "truncated entry", NULL);

	memcpy(b, good, len);
	memcpy(b + len, "garbage", 7);
	write_bytes(bad, b, len + 7);
	ret = ptimer_image_read(bad, &got, &err);
	expect_err("framing: 7 trailing bytes refused", ret, -EINVAL, &err,
		   "7 trailing bytes at offset", bad);

	write_bytes(bad, "", 0);
	ret = ptimer_image_read(bad, &got, &err);
	expect_err("framing: empty file refused", ret, -EINVAL, &err, "empty file", bad);

	write_bytes(bad, good, 4);
	ret = ptimer_image_read(bad, &got, &err);
	expect_err("framing: magic only, no head, refused", ret, -EINVAL, &err, "no head", NULL);

	write_bytes(bad, good, 2);
	ret = ptimer_image_read(bad, &got, &err);
	expect_err("framing: 2-byte file refused", ret, -EINVAL, &err, "too short for the magic", NULL);

	/* An entry length of 0xffffffff must not be trusted for an allocation or a read. */
	raw_init(&r, PTIMER_IMG_MAGIC);
	raw_head(&r, 1, 5, 1);
	le32(r.buf + r.len, 0xffffffffu);
	memset(r.buf + r.len + 4, 0, 16);
	write_bytes(bad, r.buf, r.len + 20);
	ret = ptimer_image_read(bad, &got, &err);
	expect_err("framing: entry length 0xffffffff refused", ret, -EINVAL, &err,
		   "timer 0: entry length 4294967295", "exceeds 4096");

	raw_init(&r, PTIMER_IMG_MAGIC);
	raw_head(&r, 1, 5, 3);
	raw_timer(&r, &sample_timers[0], NULL, 0);
	raw_timer(&r, &sample_timers[1], NULL, 0);
	write_bytes(bad, r.buf, r.len);
	ret = ptimer_image_read(bad, &got, &err);
	expect_err("framing: head says 3, file has 2, refused", ret, -EINVAL, &err,
		   "head says 3 timers but the file holds 2", bad);

	raw_init(&r, PTIMER_IMG_MAGIC);
	raw_head(&r, 1, 5, 1);
	raw_timer(&r, &sample_timers[0], NULL, 0);
	raw_timer(&r, &sample_timers[1], NULL, 0);
	write_bytes(bad, r.buf, r.len);
	ret = ptimer_image_read(bad, &got, &err);
	expect_err("framing: head says 1, file has 2, refused", ret, -EINVAL, &err,
		   "trailing bytes", "after the 1 timers");

	raw_init(&r, PTIMER_IMG_MAGIC);
	raw_head(&r, 1, 5, PTIMER_IMG_MAX_TIMERS + 1);
	write_bytes(bad, r.buf, r.len);
	ret = ptimer_image_read(bad, &got, &err);
	expect_err("framing: n_timers over the limit refused", ret, -EINVAL, &err,
		   "n_timers 4194305 exceeds the limit 4194304", NULL);

	raw_init(&r, PTIMER_IMG_MAGIC);
	raw_head(&r, 0, 5, 1);
	raw_timer(&r, &sample_timers[0], NULL, 0);
	write_bytes(bad, r.buf, r.len);
	ret = ptimer_image_read(bad, &got, &err);
	expect_err("framing: version 0 refused", ret, -EINVAL, &err, "version 0", bad);

	raw_init(&r, PTIMER_IMG_MAGIC);
	raw_head(&r, 1, 5, 2);
	raw_timer(&r, &sample_timers[0], NULL, 0);
	le32(r.buf + r.len, 3);
	memcpy(r.buf + r.len + 4, "\xff\xff\xff", 3);
	write_bytes(bad, r.buf, r.len + 7);
	ret = ptimer_image_read(bad, &got, &err);
	expect_err("framing: undecodable entry refused", ret, -EINVAL, &err,
		   "timer 1: entry at offset", "not a valid PtimerEntry");

	/* A newer writer: higher version, an unknown optional field (tag 12 varint 1). */
	raw_init(&r, PTIMER_IMG_MAGIC);
	raw_head(&r, 7, 5, 2);
	raw_timer(&r, &sample_timers[0], (const uint8_t *)"\x60\x01", 2);
	raw_timer(&r, &sample_timers[1], NULL, 0);
	write_bytes(bad, r.buf, r.len);
	ret = ptimer_image_read(bad, &got, &err);
	CHECK("framing: version 7 with an unknown field 12 is read", ret == 0 && got.version == 7 &&
	      got.n_timers == 2 && !timer_diff(&got.timers[0], &sample_timers[0]) &&
	      !timer_diff(&got.timers[1], &sample_timers[1]), "ret %d: %s", ret, err.msg);
	if (!ret)
		ptimer_image_free(&got);

	/* Entries without the optional overrun read it as 0. */
	{
		PtimerEntry e = PTIMER_ENTRY__INIT;

		raw_init(&r, PTIMER_IMG_MAGIC);
		raw_head(&r, 1, 5, 1);
		e.clock_id = 1;
		e.signo = 10;
		raw_msg(&r, &e.base, NULL, 0);
		write_bytes(bad, r.buf, r.len);
		ret = ptimer_image_read(bad, &got, &err);
		CHECK("framing: entry without overrun reads overrun 0", ret == 0 &&
		      got.timers[0].overrun == 0 && got.timers[0].signo == 10, "ret %d: %s", ret, err.msg);
		if (!ret)
			ptimer_image_free(&got);
	}

	/* Case invalid-values: refused when the image is read, field and timer named. */
	{
		struct ptimer_timer x = sample_timers[3];

		x.it_value.nsec = 1500000000;
		raw_init(&r, PTIMER_IMG_MAGIC);
		raw_head(&r, 1, 5, 2);
		raw_timer(&r, &sample_timers[0], NULL, 0);
		raw_timer(&r, &x, NULL, 0);
		write_bytes(bad, r.buf, r.len);
		ret = ptimer_image_read(bad, &got, &err);
		expect_err("read: image with it_value.nsec 1500000000 refused", ret, -EINVAL, &err,
			   bad, ": timer 1 (id 2000000): it_value.nsec 1500000000 out of range 0..999999999");
		CHECK("read: refused image leaves nothing allocated", got.timers == NULL && got.n_timers == 0,
		      "timers %p n %u", (void *)got.timers, got.n_timers);
	}

	snprintf(bad, sizeof(bad), "%s/ptimers-404.img", dir);
	ret = ptimer_image_read(bad, &got, &err);
	expect_err("read: missing file -> -ENOENT", ret, -ENOENT, &err,
		   "cannot open image", "No such file or directory");
	ret = ptimer_image_read(dir, &got, &err);
	expect_err("read: a directory -> -EISDIR", ret, -EISDIR, &err, "not a regular file", dir);

	free(b);
	free(good);
}

static void test_write_failures(void)
{
	struct ptimer_timer t[N_SAMPLE];
	struct ptimer_image img = { 0 };
	struct ptimer_err err;
	char dir[128], path[300], names[512];
	int ret, n;

	sample_image(&img, t);
	scratch_dir("wfail", dir, sizeof(dir));

	snprintf(path, sizeof(path), "%s/missing/ptimers-5.img", dir);
	ret = ptimer_image_write(path, &img, &err);
	expect_err("write: into a missing directory -> -ENOENT", ret, -ENOENT, &err,
		   "cannot write image ", "No such file or directory; check that the path exists");
	CHECK("write: message names the image path", strstr(err.msg, path) != NULL, "%s", err.msg);
	n = list_dir(dir, names, sizeof(names));
	CHECK("write: missing directory leaves nothing", n == 0, "%d entries: %s", n, names);

	/* A directory where the image should go: rename() fails after the data is written. */
	snprintf(path, sizeof(path), "%s/ptimers-5.img", dir);
	mkdir(path, 0700);
	snprintf(names, sizeof(names), "%s/x", path);
	write_text(names, "x");
	ret = ptimer_image_write(path, &img, &err);
	CHECK("write: rename onto a non-empty directory fails", ret < 0 && strstr(err.msg, path),
	      "ret %d: %s", ret, err.msg);
	n = list_dir(dir, names, sizeof(names));
	CHECK("write: failed rename leaves no temporary file", n == 1 && !strcmp(names, "ptimers-5.img "),
	      "%d entries: %s", n, names);

	/* A regular file where the directory should be. */
	snprintf(path, sizeof(path), "%s/ptimers-5.img/x/ptimers-5.img", dir);
	ret = ptimer_image_write(path, &img, &err);
	expect_err("write: path through a regular file -> -ENOTDIR", ret, -ENOTDIR, &err,
		   "Not a directory", path);

	/* Unwritable directory: root passes permission checks, so only unprivileged. */
	snprintf(path, sizeof(path), "%s/ro", dir);
	mkdir(path, 0500);
	strcat(path, "/ptimers-5.img");
	if (geteuid() == 0) {
		SKIP("write: unwritable directory -> -EACCES", "running as root, permissions not enforced");
	} else {
		ret = ptimer_image_write(path, &img, &err);
		expect_err("write: unwritable directory -> -EACCES", ret, -EACCES, &err,
			   "Permission denied", "check the permissions");
		snprintf(names, sizeof(names), "%s/ro", dir);
		n = list_dir(names, names, sizeof(names));
		CHECK("write: unwritable directory leaves nothing", n == 0, "%d entries", n);
	}

	/* Validation comes before any file is created. */
	snprintf(path, sizeof(path), "%s/v", dir);
	mkdir(path, 0700);
	strcat(path, "/ptimers-5.img");
	t[2].clock_id = 5;
	ret = ptimer_image_write(path, &img, &err);
	expect_err("write: invalid image refused before writing", ret, -EINVAL, &err,
		   "timer 2 (id 2147483647): clock_id 5", path);
	snprintf(path, sizeof(path), "%s/v", dir);
	n = list_dir(path, names, sizeof(names));
	CHECK("write: invalid image creates no file", n == 0, "%d entries: %s", n, names);
}

/* ---- validation -------------------------------------------------------------- */

/* Break one field of a copy of the sample and expect a message naming it. */
#define BAD(name, idx, stmt, s1)						\
	do {									\
		struct ptimer_timer t[N_SAMPLE];				\
		struct ptimer_image img = { 0 };					\
		struct ptimer_err err = { "" };					\
		struct ptimer_timer *x;						\
										\
		sample_image(&img, t);						\
		x = &t[idx];							\
		(void)x;							\
		stmt;								\
		expect_err(name, ptimer_image_validate(&img, "/d/ptimers-5.img", &err), \
			   -EINVAL, &err, "/d/ptimers-5.img: ", s1);		\
	} while (0)

#define GOOD(name, idx, stmt)							\
	do {									\
		struct ptimer_timer t[N_SAMPLE];				\
		struct ptimer_image img = { 0 };					\
		struct ptimer_err err = { "" };					\
		struct ptimer_timer *x;						\
		int r;								\
										\
		sample_image(&img, t);						\
		x = &t[idx];							\
		(void)x;							\
		stmt;								\
		r = ptimer_image_validate(&img, "/d/ptimers-5.img", &err);	\
		CHECK(name, r == 0, "ret %d: %s", r, err.msg);			\
	} while (0)

static void test_validate(void)
{
	GOOD("validate: sample image accepted", 0, (void)x);
	BAD("validate: it_value.nsec 1500000000", 3, x->it_value.nsec = 1500000000,
	    "timer 3 (id 2000000): it_value.nsec 1500000000 out of range 0..999999999");
	BAD("validate: it_interval.nsec -1", 0, x->it_interval.nsec = -1,
	    "timer 0 (id 0): it_interval.nsec -1 out of range 0..999999999");
	BAD("validate: it_value.sec -1", 4, x->it_value.sec = -1,
	    "timer 4 (id 17): it_value.sec -1 is negative");
	BAD("validate: it_interval.sec INT64_MAX (kernel would clamp)", 1, x->it_interval.sec = INT64_MAX,
	    "timer 1 (id 1000000): it_interval 9223372036854775807.999999999 s is beyond KTIME_MAX");
	BAD("validate: it_value.sec KTIME_SEC_MAX + 1", 1, x->it_value.sec = 9223372037,
	    "it_value 9223372037.000000001 s is beyond KTIME_MAX");
	BAD("validate: it_value KTIME_MAX + 1 ns", 4, x->it_value.nsec = 854775808,
	    "timer 4 (id 17): it_value 9223372036.854775808 s is beyond KTIME_MAX");
	BAD("validate: it_interval on a disarmed hrtimer-clock timer", 0,
	    (x->it_value.sec = x->it_value.nsec = 0, x->it_interval.sec = 1), "timer 0 (id 0): it_interval 1.000000000 s on a disarmed timer");
	BAD("validate: it_interval.sec INT64_MIN", 1, x->it_interval.sec = INT64_MIN,
	    "timer 1 (id 1000000): it_interval.sec -9223372036854775808 is negative");
	BAD("validate: clock_id 5 (REALTIME_COARSE)", 0, x->clock_id = 5,
	    "timer 0 (id 0): clock_id 5 is not a clock the kernel can have a timer on");
	BAD("validate: clock_id 12", 0, x->clock_id = 12, "timer 0 (id 0): clock_id 12 ");
	BAD("validate: clock_id 4 (MONOTONIC_RAW)", 0, x->clock_id = 4, "clock_id 4 ");
	BAD("validate: clock_id -1 (CLOCKFD)", 2, x->clock_id = -1,
	    "timer 2 (id 2147483647): clock_id -1 ");
	BAD("validate: clock_id -5 (CLOCKFD, fd 0 thread bit)", 2, x->clock_id = -5, "clock_id -5 ");
	GOOD("validate: clock_id 0,2,3,7,8 accepted", 0,
	     (t[0].clock_id = 0, t[1].clock_id = 2, t[2].clock_id = 3, t[3].clock_id = 7, t[4].clock_id = 8));
	GOOD("validate: thread clock -2 measuring thread 77 accepted", 0, (x->clock_id = -2, x->clock_tid = 77));
	GOOD("validate: CLOCK_THREAD_CPUTIME_ID (3) measuring thread 77 accepted", 0,
	     (x->clock_id = 3, x->clock_tid = 77));
	BAD("validate: clock_tid on CLOCK_MONOTONIC", 0, (x->clock_id = 1, x->clock_tid = 77),
	    "timer 0 (id 0): clock_tid 77 on clock 1: only a timer on the calling thread's CPU clock");
	BAD("validate: clock_tid -3", 0, (x->clock_id = -2, x->clock_tid = -3), "clock_tid -3 on clock -2");
	GOOD("validate: CPU clock of pid 1234 prof (-9880) accepted", 0, x->clock_id = cpu_clock(1234, false, 0));
	GOOD("validate: CPU clock of tid 77 virt (-619) accepted", 0, x->clock_id = cpu_clock(77, true, 1));
	BAD("validate: duplicate id 17 at timers 1 and 4", 1, x->timer_id = 17,
	    "timer_id 17 is there twice (timers 1 and 4 of the list); a process holds each ID once: dump again");
	BAD("validate: sigev_notify 3", 0, x->sigev_notify = 3,
	    "timer 0 (id 0): sigev_notify 3 is not SIGNAL 0, NONE 1, THREAD 2 or THREAD_ID 4");
	BAD("validate: sigev_notify 5", 0, x->sigev_notify = 5, "sigev_notify 5 ");
	BAD("validate: THREAD_ID with notify_tid 0", 1, x->notify_tid = 0,
	    "timer 1 (id 1000000): notify_tid 0 must be > 0 for sigev_notify thread_id");
	BAD("validate: SIGNAL with notify_tid -1", 0, x->notify_tid = -1, "notify_tid -1 is negative");
	BAD("validate: signo 0 with SIGNAL", 0, x->signo = 0,
	    "timer 0 (id 0): signo 0 out of range 1..64 for sigev_notify signal");
	BAD("validate: signo 65 with THREAD", 3, x->signo = 65, "signo 65 out of range 1..64");
	GOOD("validate: signo 65 with NONE accepted (good_sigevent())", 2, x->signo = 65);
	GOOD("validate: signo INT_MIN with NONE accepted", 2, x->signo = INT_MIN);
	GOOD("validate: signo 0 and 64 with NONE accepted", 2, (x->signo = 64, t[2].signo = 0));
	BAD("validate: id -1", 5, x->timer_id = -1,
	    "timer 5 (id -1): timer_id -1 out of range 0..2147483647");
	BAD("validate: overrun -1", 3, x->overrun = -1, "timer 3 (id 2000000): overrun -1 is negative");
	BAD("validate: pid 0", 0, img.pid = 0, "pid 0 must be > 0");
	BAD("validate: n_timers over the limit", 0, img.n_timers = PTIMER_IMG_MAX_TIMERS + 1,
	    "n_timers 4194305 exceeds the limit");
}

/* ---- JSON ------------------------------------------------------------------------ */

static const char json_good[] =
	"{ \"version\": 1, \"pid\": 42, \"timers\": [\n"
	"  { \"id\": 7, \"clock_id\": -6, \"sigev_notify\": 4, \"signo\": 34,\n"
	"    \"sival\": 18446744073709551615, \"notify_tid\": 43,\n"
	"    \"it_value\": { \"sec\": 1, \"nsec\": 2 }, \"it_interval\": { \"sec\": 3, \"nsec\": 4 },\n"
	"    \"overrun\": 5 }\n"
	"] }\n";

/* json_good with the first occurrence of from replaced by to. */
static void json_variant(char *out, size_t len, const char *from, const char *to)
{
	const char *p = strstr(json_good, from);

	if (!p) {
		fprintf(stderr, "json_variant: \"%s\" not in the template\n", from);
		exit(2);
	}
	snprintf(out, len, "%.*s%s%s", (int)(p - json_good), json_good, to, p + strlen(from));
}

static void json_bad_text(const char *dir, const char *name, const char *text,
			  const char *s1, const char *s2)
{
	struct ptimer_image got = { 0 };
	struct ptimer_err err = { "" };
	char path[256];
	int ret;

	snprintf(path, sizeof(path), "%s/bad.json", dir);
	write_text(path, text);
	ret = ptimer_image_from_json(path, &got, &err);
	expect_err(name, ret, -EINVAL, &err, s1, s2);
	if (!ret)
		ptimer_image_free(&got);
}

static void json_bad(const char *dir, const char *name, const char *from, const char *to,
		     const char *s1, const char *s2)
{
	struct ptimer_image got = { 0 };
	struct ptimer_err err = { "" };
	char path[256], text[2048];
	int ret;

	snprintf(path, sizeof(path), "%s/bad.json", dir);
	json_variant(text, sizeof(text), from, to);
	write_text(path, text);
	ret = ptimer_image_from_json(path, &got, &err);
	expect_err(name, ret, -EINVAL, &err, s1, s2);
	if (!ret)
		ptimer_image_free(&got);
}

static void test_json(void)
{
	struct ptimer_timer t[N_SAMPLE];
	struct ptimer_image img, got;
	struct ptimer_err err = { "" };
	char dir[128], path[256], text[2048];
	uint8_t *bytes;
	size_t len = 0;
	FILE *f;
	int ret;

	sample_image(&img, t);
	scratch_dir("json", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/img.json", dir);

	f = fopen(path, "w");
	ret = ptimer_image_to_json(&img, f, &err);
	fclose(f);
	CHECK("json: to_json of the sample", ret == 0, "ret %d: %s", ret, err.msg);
	bytes = read_bytes(path, &len);
	if (bytes)
		bytes[len] = '\0';
	CHECK("json: sival printed as 18446744073709551615",
	      bytes && strstr((char *)bytes, "\"sival\": 18446744073709551615"), "%s",
	      bytes ? (char *)bytes : "(unreadable)");
	CHECK("json: it_value.sec KTIME_SEC_MAX printed exactly",
	      bytes && strstr((char *)bytes, "\"sec\": 9223372036,"), "not found");
	CHECK("json: version emitted", bytes && strstr((char *)bytes, "\"version\": 1"), "not found");
	free(bytes);

	f = fopen("/dev/full", "w");
	if (f) {
		ret = ptimer_image_to_json(&img, f, &err);
		fclose(f);
		expect_err("json: to_json onto /dev/full -> -ENOSPC", ret, -ENOSPC, &err,
			   "cannot write JSON for pid 123: No space left on device", NULL);
	} else {
		SKIP("json: to_json onto /dev/full -> -ENOSPC", "no /dev/full");
	}

	ret = ptimer_image_from_json(path, &got, &err);
	CHECK("json: from_json of to_json output", ret == 0, "ret %d: %s", ret, err.msg);
	if (!ret) {
		CHECK("json: pid 123 back", got.pid == 123, "pid %d", got.pid);
		CHECK("json: version 1 back", got.version == 1, "version %u", got.version);
		CHECK("json: 6 timers back", got.n_timers == N_SAMPLE, "n_timers %u", got.n_timers);
		check_same_timers("json", &got, sample_timers, N_SAMPLE);
		ptimer_image_free(&got);
	}

	/* The plugin's image whose timers are all criu's: the marks kept. */
	{
		struct ptimer_image lean = { .version = 1, .pid = 77, .criu_mode = PTIMER_IMG_CRIU_LAST,
					     .state_in_core = 1, .timers_in_core = 1 };

		snprintf(path, sizeof(path), "%s/lean.json", dir);
		f = fopen(path, "w");
		ret = ptimer_image_to_json(&lean, f, &err);
		fclose(f);
		ret = ret ? ret : ptimer_image_from_json(path, &got, &err);
		CHECK("json: timers_in_core 1 back", ret == 0 && got.timers_in_core == 1 && got.state_in_core == 1 &&
		      got.n_timers == 0 && got.criu_mode == PTIMER_IMG_CRIU_LAST, "ret %d timers_in_core %u: %s", ret,
		      got.timers_in_core, err.msg);
		if (!ret)
			ptimer_image_free(&got);
	}

	/* Hand-written input, without the optional version. */
	snprintf(path, sizeof(path), "%s/hand.json", dir);
	json_variant(text, sizeof(text), "\"version\": 1, ", "");
	write_text(path, text);
	ret = ptimer_image_from_json(path, &got, &err);
	CHECK("json: hand-written, no version", ret == 0 && got.version == PTIMER_IMG_VERSION &&
	      got.pid == 42 && got.n_timers == 1 && got.timers[0].timer_id == 7 &&
	      got.timers[0].clock_id == -6 && got.timers[0].sival == UINT64_MAX &&
	      got.timers[0].notify_tid == 43 && got.timers[0].it_value.nsec == 2 &&
	      got.timers[0].it_interval.sec == 3 && got.timers[0].overrun == 5,
	      "ret %d: %s", ret, err.msg);
	if (!ret)
		ptimer_image_free(&got);

	json_bad(dir, "json: top-level \"threads\" not an array refused", "\"pid\"",
		 "\"threads\": {}, \"pid\"", "bad.json: key \"threads\": expected an array", "fix the JSON");
	json_bad(dir, "json: unknown timer key refused", "\"overrun\"", "\"color\": 1, \"overrun\"",
		 "bad.json: timer 0: key \"color\": unknown key", NULL);
	json_bad(dir, "json: unknown key in it_value refused", "\"nsec\": 2", "\"nsec\": 2, \"usec\": 0",
		 "timer 0: key \"it_value.usec\": unknown key", NULL);
	json_bad(dir, "json: missing signo refused", "\"signo\": 34,", "",
		 "timer 0: key \"signo\": missing", NULL);
	json_bad(dir, "json: missing it_interval.nsec refused", ", \"nsec\": 4", "",
		 "timer 0: key \"it_interval.nsec\": missing", NULL);
	json_bad(dir, "json: missing pid refused", "\"pid\": 42, ", "", "key \"pid\": missing", NULL);
	json_bad(dir, "json: string signo refused", "\"signo\": 34", "\"signo\": \"34\"",
		 "timer 0: key \"signo\": expected an integer, got string", NULL);
	json_bad(dir, "json: double nsec refused", "\"nsec\": 2", "\"nsec\": 2.0",
		 "timer 0: key \"it_value.nsec\": expected an integer, got double", NULL);
	json_bad(dir, "json: boolean overrun refused", "\"overrun\": 5", "\"overrun\": true",
		 "key \"overrun\": expected an integer, got boolean", NULL);
	json_bad(dir, "json: null sival refused", "18446744073709551615", "null",
		 "key \"sival\": expected an integer, got null", NULL);
	json_bad(dir, "json: id 2147483648 refused", "\"id\": 7", "\"id\": 2147483648",
		 "timer 0: key \"id\": 2147483648 out of range -2147483648..2147483647", NULL);
	json_bad(dir, "json: clock_id -2147483649 refused", "\"clock_id\": -6", "\"clock_id\": -2147483649",
		 "key \"clock_id\": -2147483649 out of range", NULL);
	json_bad(dir, "json: sec 2^63 refused", "\"sec\": 1", "\"sec\": 9223372036854775808",
		 "key \"it_value.sec\": 9223372036854775808 out of range", NULL);
	json_bad(dir, "json: sival -1 refused", "18446744073709551615", "-1",
		 "key \"sival\": -1 out of range 0..18446744073709551615", NULL);
	json_bad(dir, "json: sival 2^64 refused", "18446744073709551615", "18446744073709551616",
		 "line 3: integer 18446744073709551616 does not fit in 64 bits", NULL);
	json_bad(dir, "json: duplicate key refused", "\"overrun\": 5", "\"overrun\": 5, \"id\": 8",
		 "line 5: key \"id\" appears twice in one object (first on line 2)", NULL);
	json_bad(dir, "json: version 0 refused", "\"version\": 1", "\"version\": 0",
		 "key \"version\": 0 out of range 1..4294967295", NULL);
	json_bad(dir, "json: timer not an object refused", "[\n", "[ 1,\n",
		 "timer 0: expected an object, got int", NULL);
	json_bad_text(dir, "json: timers not an array refused", "{\"pid\": 1, \"timers\": {}}",
		      "bad.json: key \"timers\": expected an array, got object", NULL);
	json_bad_text(dir, "json: it_value not an object refused",
		      "{\"pid\": 1, \"timers\": [{\"id\": 1, \"clock_id\": 1, \"sigev_notify\": 1,"
		      " \"signo\": 0, \"sival\": 0, \"notify_tid\": 0, \"it_value\": [1, 2],"
		      " \"it_interval\": {\"sec\": 0, \"nsec\": 0}, \"overrun\": 0}]}",
		      "bad.json: timer 0: key \"it_value\": expected an object, got array", NULL);
	json_bad(dir, "json: trailing garbage refused", "] }\n", "] } x\n", "bad.json: line 6: invalid JSON",
		 NULL);
	json_bad(dir, "json: truncated document refused", "] }\n", "]", "unexpected end of JSON", NULL);
	json_bad(dir, "json: validation: it_value.nsec 1500000000", "\"nsec\": 2", "\"nsec\": 1500000000",
		 "bad.json: timer 0 (id 7): it_value.nsec 1500000000 out of range 0..999999999", NULL);
	json_bad(dir, "json: validation: clock_id -1 (CLOCKFD)", "\"clock_id\": -6", "\"clock_id\": -1",
		 "timer 0 (id 7): clock_id -1 ", NULL);
	json_bad(dir, "json: validation: pid 0", "\"pid\": 42", "\"pid\": 0", "pid 0 must be > 0", NULL);

	{
		char p2[300];
		int r;

		snprintf(p2, sizeof(p2), "%s/timers-nul.json", dir);
		memcpy(text, "{\"pid\":1,\"timers\":[]}\0{\"x\":1}", 30);
		write_bytes(p2, text, 30);
		r = ptimer_image_from_json(p2, &got, &err);
		expect_err("json: content after a NUL byte refused", r, -EINVAL, &err,
			   "unexpected content after the JSON object", NULL);
		snprintf(p2, sizeof(p2), "%s/none.json", dir);
		r = ptimer_image_from_json(p2, &got, &err);
		expect_err("json: missing file -> -ENOENT", r, -ENOENT, &err, "cannot open JSON file", p2);
		write_text(p2, "");
		r = ptimer_image_from_json(p2, &got, &err);
		expect_err("json: empty file refused", r, -EINVAL, &err, "unexpected end of JSON", NULL);
		write_text(p2, "[]");
		r = ptimer_image_from_json(p2, &got, &err);
		expect_err("json: top-level array refused", r, -EINVAL, &err,
			   "expected a JSON object at the top, got array", NULL);
	}
}

/* ---- find ------------------------------------------------------------------------- */

static void test_find(void)
{
	struct ptimer_timer t[N_SAMPLE];
	struct ptimer_image img = { 0 };
	struct ptimer_err err = { "" };
	char dir[128], path[256], want[256], f[300];
	static const char *const decoys[] = {
		"ptimers-.img", "ptimers-x.img", "ptimers-05.img", "ptimers-0.img",
		"ptimers-5.img.tmp", ".ptimers-5.img.AbC123", "ptimers-99999999999.img", "core-5.img",
	};
	size_t i;
	int ret;

	sample_image(&img, t);
	scratch_dir("find", dir, sizeof(dir));

	ret = ptimer_image_find(dir, 0, path, sizeof(path), &err);
	expect_err("find: empty directory -> -ENOENT", ret, -ENOENT, &err, "no ptimers-<pid>.img image in", dir);

	for (i = 0; i < sizeof(decoys) / sizeof(decoys[0]); i++) {
		snprintf(f, sizeof(f), "%s/%s", dir, decoys[i]);
		write_text(f, "x");
	}
	ret = ptimer_image_find(dir, 0, path, sizeof(path), &err);
	expect_err("find: only decoy names -> -ENOENT", ret, -ENOENT, &err, "no ptimers-<pid>.img", NULL);

	ptimer_image_path(want, sizeof(want), dir, 42);
	img.pid = 42;
	ptimer_image_write(want, &img, &err);
	ret = ptimer_image_find(dir, 0, path, sizeof(path), &err);
	CHECK("find: one image found", ret == 0 && !strcmp(path, want), "ret %d path %s: %s", ret, path, err.msg);
	ret = ptimer_image_find(dir, 42, path, sizeof(path), &err);
	CHECK("find: pid 42 given", ret == 0 && !strcmp(path, want), "ret %d path %s", ret, path);
	ret = ptimer_image_find(dir, 0, path, 10, &err);
	expect_err("find: small buffer -> -ENAMETOOLONG", ret, -ENAMETOOLONG, &err, "too long", NULL);

	ptimer_image_path(f, sizeof(f), dir, 7);
	img.pid = 7;
	ptimer_image_write(f, &img, &err);
	ret = ptimer_image_find(dir, 0, path, sizeof(path), &err);
	expect_err("find: two images, no pid -> -EEXIST", ret, -EEXIST, &err, "2 images in", "pass the pid");
	CHECK("find: both names listed", strstr(err.msg, "ptimers-42.img") && strstr(err.msg, "ptimers-7.img"),
	      "%s", err.msg);
	ret = ptimer_image_find(dir, 42, path, sizeof(path), &err);
	CHECK("find: two images, pid 42 chosen", ret == 0 && !strcmp(path, want), "ret %d path %s", ret, path);
	ret = ptimer_image_find(dir, 8, path, sizeof(path), &err);
	expect_err("find: two images, pid 8 absent -> -ENOENT", ret, -ENOENT, &err,
		   "no image for pid 8", "ptimers-8.img is missing");

	snprintf(f, sizeof(f), "%s/nodir", dir);
	ret = ptimer_image_find(f, 0, path, sizeof(path), &err);
	expect_err("find: missing directory -> -ENOENT", ret, -ENOENT, &err, "cannot open image directory", f);
}

/* ---- show and names ------------------------------------------------------------- */

static void test_names(void)
{
	char b[64];

	CHECK("clock name 1", !strcmp(ptimer_clock_name(1, b, sizeof(b)), "CLOCK_MONOTONIC"), "%s", b);
	CHECK("clock name 11", !strcmp(ptimer_clock_name(11, b, sizeof(b)), "CLOCK_TAI"), "%s", b);
	CHECK("clock name 12", !strcmp(ptimer_clock_name(12, b, sizeof(b)), "clock 12"), "%s", b);
	CHECK("clock name -6", !strcmp(ptimer_clock_name(-6, b, sizeof(b)), "CPU(self, process, sched)"), "%s", b);
	CHECK("clock name -2", !strcmp(ptimer_clock_name(-2, b, sizeof(b)), "CPU(self, thread, sched)"), "%s", b);
	CHECK("clock name -14", !strcmp(ptimer_clock_name(-14, b, sizeof(b)), "CPU(pid 1, process, sched)"), "%s", b);
	CHECK("clock name pid 1234 prof", !strcmp(ptimer_clock_name(cpu_clock(1234, false, 0), b, sizeof(b)),
						  "CPU(pid 1234, process, prof)"), "%s", b);
	CHECK("clock name tid 77 virt", !strcmp(ptimer_clock_name(cpu_clock(77, true, 1), b, sizeof(b)),
						"CPU(tid 77, thread, virt)"), "%s", b);
	CHECK("clock name -1", !strcmp(ptimer_clock_name(-1, b, sizeof(b)), "CLOCKFD(fd 0)"), "%s", b);
	CHECK("clock name truncates safely", !strcmp(ptimer_clock_name(1, b, 6), "CLOCK"), "%s", b);
	CHECK("notify name 0", !strcmp(ptimer_notify_name(0), "signal"), "%s", ptimer_notify_name(0));
	CHECK("notify name 1", !strcmp(ptimer_notify_name(1), "none"), "%s", ptimer_notify_name(1));
	CHECK("notify name 2", !strcmp(ptimer_notify_name(2), "thread"), "%s", ptimer_notify_name(2));
	CHECK("notify name 4", !strcmp(ptimer_notify_name(4), "thread_id"), "%s", ptimer_notify_name(4));
	CHECK("notify name 3", !strcmp(ptimer_notify_name(3), "unknown"), "%s", ptimer_notify_name(3));
}

static void test_show(void)
{
	struct ptimer_timer t[N_SAMPLE];
	struct ptimer_image img = { 0 };
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	sample_image(&img, t);
	f = open_memstream(&out, &len);
	ptimer_image_show(&img, f);
	fclose(f);
	CHECK("show: header", !strncmp(out, "pid 123: 6 timers (image version 1)\n", 36), "%.60s", out);
	CHECK("show: signal line", strstr(out, "         0  CLOCK_MONOTONIC") &&
	      strstr(out, "signal 14 -> pid 123") && strstr(out, "0x0000000000000011  1.500000000"), "%s", out);
	CHECK("show: thread_id line", strstr(out, "thread_id signal 34 -> tid 124") &&
	      strstr(out, "0xffffffffffffffff  0.000000001            2.999999999"), "%s", out);
	CHECK("show: none line", strstr(out, "2147483647  CPU(pid 1, process, sched)") &&
	      strstr(out, " none "), "%s", out);
	CHECK("show: thread line", strstr(out, "thread signal 32 -> pid 5"), "%s", out);
	CHECK("show: 8 lines", ({ int n = 0; for (char *p = out; *p; p++) n += *p == '\n'; n == 8; }), "%s", out);
	free(out);
}

/* ---- per-thread rseq state (PtimerHead.threads) ------------------------------------ */

static const char json_thr[] =
	"{ \"pid\": 42, \"timers\": [], \"threads\": [\n"
	"  { \"tid\": 42, \"rseq\": { \"abi_pointer\": 140737354125504, \"abi_size\": 32,"
	" \"signature\": 1392268563 },\n"
	"    \"slice_ext\": \"enabled\", \"slice_ctrl\": 257 },\n"
	"  { \"tid\": 43, \"rseq\": { \"abi_pointer\": 0, \"abi_size\": 0, \"signature\": 0 },\n"
	"    \"slice_ext\": \"unavailable\", \"slice_ctrl\": 0 }\n"
	"] }\n";

static void thr_bad(const char *dir, const char *name, const char *from, const char *to,
		    const char *s1)
{
	struct ptimer_image got = { 0 };
	struct ptimer_err err = { "" };
	char path[256], text[2048];
	const char *p = strstr(json_thr, from);
	int ret;

	if (!p) {
		FAIL(name, "\"%s\" not in the template", from);
		return;
	}
	snprintf(text, sizeof(text), "%.*s%s%s", (int)(p - json_thr), json_thr, to, p + strlen(from));
	snprintf(path, sizeof(path), "%s/bad-thr.json", dir);
	write_text(path, text);
	ret = ptimer_image_from_json(path, &got, &err);
	expect_err(name, ret, -EINVAL, &err, s1, NULL);
	if (!ret)
		ptimer_image_free(&got);
}

/*
 * Names the first field of m (and of the messages it holds) that is absent:
 * an optional scalar without its has_ flag, a NULL message or string, an
 * empty repeated field (protobuf-c's descriptors).  NULL when all are set.
 */
static const char *absent_field(const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;

	for (unsigned int i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *at = (const char *)m + f->offset;

		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)((const char *)m + f->quantifier_offset);

			if (!n)
				return f->name;
			if (f->type == PROTOBUF_C_TYPE_MESSAGE)
				for (size_t k = 0; k < n; k++) {
					const char *in = absent_field((*(ProtobufCMessage *const *const *)at)[k]);

					if (in)
						return in;
				}
			continue;
		}
		if (f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING) {
			if (!*(void *const *)at)
				return f->name;
			continue;
		}
		if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset &&
		    !*(const protobuf_c_boolean *)((const char *)m + f->quantifier_offset))
			return f->name;
	}
	return NULL;
}

/*
 * `ptimer show --json` then `ptimer encode` gives the image back byte for
 * byte, for an image that sets every field proto/ptimer.proto has (checked
 * through the descriptors: a field added to the format and left out of
 * this image, or of the JSON, fails here), the CRIU plugin's criu_mode and
 * state_in_core among them.
 */
static void test_json_every_field(void)
{
	struct ptimer_timer t[2] = {
		{ .timer_id = 5, .clock_id = -2, .sigev_notify = PTIMER_SIGEV_SIGNAL | PTIMER_SIGEV_THREAD_ID,
		  .signo = 27, .sival = 0x1234, .notify_tid = 124, .overrun = 3, .it_value = { 1, 2 },
		  .it_interval = { 0, 10000000 }, .pending = 1, .pending_overrun = 2, .clock_tid = 124 },
		{ .timer_id = 9, .clock_id = 3, .sigev_notify = PTIMER_SIGEV_SIGNAL, .signo = 34, .notify_tid = 123,
		  .pending = 1, .pending_overrun = 0, .clock_tid = 123 },
	};
	struct ptimer_thread th[2] = {
		{ .tid = 123, .rseq_abi_pointer = 0x7f0000001000ull, .rseq_abi_size = 32,
		  .rseq_signature = 0x53053053, .slice_ext = PTIMER_SLICE_EXT_ENABLED, .slice_ctrl = 0x1 },
		{ .tid = 124, .rseq_abi_pointer = 0x7f0000002000ull, .rseq_abi_size = 32,
		  .rseq_signature = 0x53053053, .slice_ext = PTIMER_SLICE_EXT_DISABLED },
	};
	struct ptimer_image img = { .version = PTIMER_IMG_VERSION, .pid = 123, .criu_mode = 3, .state_in_core = 1,
				    .n_timers = 2, .timers = t, .n_threads = 2, .threads = th };
	struct ptimer_image got = { 0 };
	struct ptimer_err err = { "" };
	char dir[256], a[300], b[300], js[300];
	const char *missing = NULL;
	uint8_t *ba = NULL, *bb = NULL;
	size_t la = 0, lb = 0, off = 4;
	FILE *f;
	int ret;

	scratch_dir("json-every", dir, sizeof(dir));
	snprintf(a, sizeof(a), "%s/a.img", dir);
	snprintf(b, sizeof(b), "%s/b.img", dir);
	snprintf(js, sizeof(js), "%s/a.json", dir);
	ret = ptimer_image_write(a, &img, &err);
	ba = ret ? NULL : read_bytes(a, &la);
	/* every message of the file, every field set */
	for (uint32_t k = 0; ba && !missing && off + 4 <= la && k <= img.n_timers; k++) {
		uint32_t len = (uint32_t)ba[off] | (uint32_t)ba[off + 1] << 8 | (uint32_t)ba[off + 2] << 16 |
			       (uint32_t)ba[off + 3] << 24;
		ProtobufCMessage *m = k ? (ProtobufCMessage *)ptimer_entry__unpack(NULL, len, ba + off + 4)
					: (ProtobufCMessage *)ptimer_head__unpack(NULL, len, ba + off + 4);

		missing = m ? absent_field(m) : "(does not decode)";
		if (m)
			protobuf_c_message_free_unpacked(m, NULL);
		off += 4 + len;
	}
	CHECK("json: the test image sets every field of proto/ptimer.proto", ba && !missing,
	      "ret %d (%s), field '%s' absent: set it in test_json_every_field", ret, err.msg,
	      missing ? missing : "?");
	f = fopen(js, "w");
	ret = f ? ptimer_image_to_json(&img, f, &err) : -errno;
	if (f)
		fclose(f);
	if (!ret)
		ret = ptimer_image_from_json(js, &got, &err);
	if (!ret)
		ret = ptimer_image_write(b, &got, &err);
	bb = ret ? NULL : read_bytes(b, &lb);
	CHECK("json: show --json | encode gives the image back byte for byte (criu_mode, state_in_core kept)",
	      ba && bb && la == lb && !memcmp(ba, bb, la), "ret %d (%s), %zu bytes, then %zu", ret, err.msg, la, lb);
	ptimer_image_free(&got);
	free(ba);
	free(bb);
}

static void test_threads(void)
{
	struct ptimer_timer t[N_SAMPLE];
	struct ptimer_thread th[3] = {
		{ .tid = 123, .rseq_abi_pointer = 0x7f0000001000ull, .rseq_abi_size = 32,
		  .rseq_signature = 0x53053053, .slice_ext = PTIMER_SLICE_EXT_ENABLED, .slice_ctrl = 0x101 },
		{ .tid = 124, .rseq_abi_pointer = 0x7f0000002000ull, .rseq_abi_size = 20,
		  .rseq_signature = 0x53053053, .slice_ext = PTIMER_SLICE_EXT_DISABLED },
		{ .tid = 125, .slice_ext = PTIMER_SLICE_EXT_UNAVAILABLE },
	};
	struct ptimer_image img = { 0 }, got = { 0 };
	struct ptimer_thread *many;
	struct ptimer_err err = { "" };
	char dir[256], path[300], out[300];
	FILE *f;
	int ret;

	scratch_dir("threads", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/ptimers-123.img", dir);
	sample_image(&img, t);
	img.n_threads = 3;
	img.threads = th;
	ret = ptimer_image_write(path, &img, &err);
	if (!ret)
		ret = ptimer_image_read(path, &got, &err);
	CHECK("threads: binary round trip", ret == 0 && got.n_threads == 3 &&
	      !memcmp(got.threads, th, sizeof(th)) && got.n_timers == N_SAMPLE, "ret %d: %s", ret, err.msg);
	ptimer_image_free(&got);

	/* JSON out and back in */
	snprintf(out, sizeof(out), "%s/img.json", dir);
	f = fopen(out, "w");
	ret = f ? ptimer_image_to_json(&img, f, &err) : -errno;
	if (f)
		fclose(f);
	if (!ret)
		ret = ptimer_image_from_json(out, &got, &err);
	CHECK("threads: JSON round trip", ret == 0 && got.n_threads == 3 &&
	      !memcmp(got.threads, th, sizeof(th)), "ret %d: %s", ret, err.msg);
	ptimer_image_free(&got);
	{
		size_t n;
		char *s = (char *)read_bytes(out, &n);

		CHECK("threads: JSON names slice_ext and rseq keys", s && strstr(s, "\"slice_ext\": \"enabled\"") &&
		      strstr(s, "\"abi_pointer\": 139637976731648") && strstr(s, "\"abi_size\": 20") &&
		      strstr(s, "\"slice_ext\": \"unavailable\"") && strstr(s, "\"slice_ctrl\": 257"),
		      "%s", s ? s : "(unreadable)");
		free(s);
	}

	/* hand-written */
	snprintf(out, sizeof(out), "%s/thr.json", dir);
	write_text(out, json_thr);
	ret = ptimer_image_from_json(out, &got, &err);
	CHECK("threads: hand-written JSON", ret == 0 && got.n_threads == 2 && got.threads[0].tid == 42 &&
	      got.threads[0].rseq_abi_pointer == 140737354125504ull && got.threads[0].rseq_abi_size == 32 &&
	      got.threads[0].rseq_signature == 1392268563u &&
	      got.threads[0].slice_ext == PTIMER_SLICE_EXT_ENABLED && got.threads[0].slice_ctrl == 257 &&
	      got.threads[1].slice_ext == PTIMER_SLICE_EXT_UNAVAILABLE, "ret %d: %s", ret, err.msg);
	ptimer_image_free(&got);

	thr_bad(dir, "threads: tid 0 refused", "\"tid\": 43", "\"tid\": 0", "thread 1: tid 0 must be > 0");
	thr_bad(dir, "threads: duplicate tid refused", "\"tid\": 43", "\"tid\": 42",
		"tid 42 appears twice in threads");
	thr_bad(dir, "threads: abi_size 16 refused", "\"abi_size\": 32", "\"abi_size\": 16",
		"rseq abi_size 16 must be 0 or 20..4096");
	thr_bad(dir, "threads: slice_ext \"on\" refused", "\"enabled\"", "\"on\"",
		"thread 0: key \"slice_ext\": \"on\" is not");
	thr_bad(dir, "threads: slice_ext integer refused", "\"enabled\"", "2",
		"key \"slice_ext\": expected a string");
	thr_bad(dir, "threads: enabled without rseq refused", "\"unavailable\"", "\"enabled\"",
		"slice_ext enabled without an rseq registration");
	thr_bad(dir, "threads: slice_ctrl beyond abi_size refused", "\"abi_size\": 32", "\"abi_size\": 20",
		"slice_ctrl 0x101 but rseq abi_size 20");
	thr_bad(dir, "threads: missing slice_ctrl refused", ", \"slice_ctrl\": 0", "",
		"thread 1: key \"slice_ctrl\": missing");
	thr_bad(dir, "threads: unknown rseq key refused", "\"signature\": 0 }", "\"signature\": 0, \"flags\": 0 }",
		"thread 1: key \"rseq.flags\": unknown key");
	thr_bad(dir, "threads: pointer without size refused", "\"abi_pointer\": 0,", "\"abi_pointer\": 4096,",
		"rseq abi_size 0 (no registration) but abi_pointer 0x1000");
	thr_bad(dir, "threads: signature 2^32 refused", "\"signature\": 0 }", "\"signature\": 4294967296 }",
		"key \"rseq.signature\": 4294967296 out of range");

	/* A head with many threads is larger than one timer entry may be. */
	many = calloc(5000, sizeof(*many));
	for (int i = 0; many && i < 5000; i++) {
		many[i].tid = 1000 + i;
		many[i].rseq_abi_pointer = 0x7f0000000000ull + (uint64_t)i * 4096;
		many[i].rseq_abi_size = 32;
		many[i].rseq_signature = 0x53053053;
		many[i].slice_ext = PTIMER_SLICE_EXT_DISABLED;
	}
	img.n_threads = 5000;
	img.threads = many;
	ret = many ? ptimer_image_write(path, &img, &err) : -ENOMEM;
	if (!ret)
		ret = ptimer_image_read(path, &got, &err);
	CHECK("threads: 5000 threads (head > PTIMER_IMG_MAX_ENTRY) round trip", ret == 0 &&
	      got.n_threads == 5000 && got.threads[4999].tid == 5999 &&
	      got.threads[4999].rseq_abi_pointer == 0x7f0000000000ull + 4999ull * 4096, "ret %d: %s", ret, err.msg);
	ptimer_image_free(&got);
	free(many);

	/* An image without threads reads as none; JSON shows an empty array. */
	img.n_threads = 0;
	img.threads = NULL;
	ret = ptimer_image_write(path, &img, &err);
	if (!ret)
		ret = ptimer_image_read(path, &got, &err);
	CHECK("threads: image without threads reads n_threads 0", ret == 0 && got.n_threads == 0 &&
	      got.threads == NULL, "ret %d: %s", ret, err.msg);
	ptimer_image_free(&got);
}

int main(void)
{
	char tmpl[] = "/tmp/ptimer-test-image-XXXXXX";
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(scratch_root, sizeof(scratch_root), "%s", tmpl);

	rc = CHECK_RUN(CHECK_TEST(test_path), CHECK_TEST(test_round_trip), CHECK_TEST(test_mode),
	               CHECK_TEST(test_sparse_many), CHECK_TEST(test_framing),
	               CHECK_TEST(test_write_failures), CHECK_TEST(test_validate),
	               CHECK_TEST(test_json), CHECK_TEST(test_json_every_field), CHECK_TEST(test_threads),
	               CHECK_TEST(test_find),
	               CHECK_TEST(test_names), CHECK_TEST(test_show));

	rm_rf(scratch_root);
	return rc;
}
