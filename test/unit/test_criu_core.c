// SPDX-License-Identifier: MIT
/*
 * The plugin's edit of criu's core-<pid>.img (plugin/criu_core.c): the
 * POSIX timers go, everything else of criu's image stays: the other fields
 * (carried as protobuf-c unknown fields), the bytes after the entry, and the
 * file's owner, group and mode (criu creates images 0644, criu/image.c; in a
 * user namespace the restored init reads its children's core images as an
 * unprivileged host uid).
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/criu_core.h"
#include "proto/criu_core.pb-c.h"
#include "test/lib/tst.h"

#define CRIU_IMG_COMMON_MAGIC	0x54564319u
#define CRIU_CORE_MAGIC		0x55053847u

/* CoreEntry.mtype = 1 (field 1, varint): stands for every field we do not know. */
static const uint8_t mtype_field[] = { 0x08, 0x01 };
/* Something criu might append after the entry. */
static const uint8_t trailer[] = { 0xde, 0xad, 0xbe, 0xef };

/* Write DIR/core-VPID.img holding n_timers timers, IDs 0, stride, 2 stride,
 * ...; returns its size or -1. */
static long write_core_ids(const char *dir, int vpid, size_t n_timers, uint32_t stride)
{
	CriuPosixTimerEntry *te = calloc(n_timers + 1, sizeof(*te)), **tp = calloc(n_timers + 1, sizeof(*tp));
	CriuTaskTimersEntry timers = CRIU_TASK_TIMERS_ENTRY__INIT;
	CriuTaskCoreEntry tc = CRIU_TASK_CORE_ENTRY__INIT;
	CriuCoreEntry core = CRIU_CORE_ENTRY__INIT;
	uint32_t hdr[3] = { CRIU_IMG_COMMON_MAGIC, CRIU_CORE_MAGIC, 0 };
	uint8_t *buf = NULL;
	size_t len, n = 0;
	char path[256];
	FILE *f;

	for (size_t i = 0; te && tp && i < n_timers; i++) {
		criu_posix_timer_entry__init(&te[i]);
		te[i].has_it_id = 1;
		te[i].it_id = (uint32_t)(i * stride);
		/* the fields after it that criu writes */
		te[i].has_clock_id = te[i].has_si_signo = te[i].has_it_sigev_notify = 1;
		te[i].clock_id = 1;
		te[i].has_vsec = te[i].has_vnsec = te[i].has_isec = te[i].has_insec = 1;
		tp[i] = &te[i];
	}
	timers.n_posix = n_timers;
	timers.posix = tp;
	tc.timers = &timers;
	core.tc = &tc;
	len = te && tp ? criu_core_entry__get_packed_size(&core) : 0;
	buf = te && tp ? malloc(len + sizeof(mtype_field)) : NULL;
	snprintf(path, sizeof(path), "%s/core-%d.img", dir, vpid);
	f = buf ? fopen(path, "we") : NULL;
	if (f) {
		criu_core_entry__pack(&core, buf);
		memcpy(buf + len, mtype_field, sizeof(mtype_field));
		len += sizeof(mtype_field);
		hdr[2] = (uint32_t)len;
		n = fwrite(hdr, 1, sizeof(hdr), f) + fwrite(buf, 1, len, f) + fwrite(trailer, 1, sizeof(trailer), f);
	}
	free(te);
	free(tp);
	free(buf);
	if (!f || fclose(f) || n != sizeof(hdr) + len + sizeof(trailer))
		return -1;
	return (long)n;
}

static long write_core(const char *dir, int vpid, size_t n_timers)
{
	return write_core_ids(dir, vpid, n_timers, 512);
}

/*
 * criu's timers decoded (ptimer_criu_core_timers), which is how the plugin
 * prices criu's loop: every timer and the largest ID, for none, a few and
 * 20,000 timers; a file cut short is refused, naming it.
 */
static void test_decode(void)
{
	static const struct { size_t n; uint32_t stride; } sets[] = { { 0, 1 }, { 1, 7 }, { 3, 512 }, { 20000, 1 },
								       { 100, 100000 } };
	char dir[] = "/tmp/ptimer-test-criu-span-XXXXXX", path[300];
	struct ptimer_err err = { "" };

	if (!mkdtemp(dir)) {
		FAIL("criu_core: mkdtemp", "%s", strerror(errno));
		return;
	}
	for (size_t k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
		struct ptimer_criu_core *c = NULL;
		struct ptimer_timer *tm = NULL;
		uint32_t nd = 0;
		int64_t maxd = -1;
		int ret = write_core_ids(dir, 10, sets[k].n, sets[k].stride) < 0 ? -EIO : 0;
		char name[96];

		ret = ret ? ret : ptimer_criu_core_open(dir, 10, &c, &err);
		ret = ret ? ret : ptimer_criu_core_timers(c, &tm, &nd, &err);
		for (uint32_t i = 0; !ret && i < nd; i++)
			maxd = tm[i].timer_id > maxd ? tm[i].timer_id : maxd;
		snprintf(name, sizeof(name), "criu_core: %zu timers %u apart decoded", sets[k].n, sets[k].stride);
		CHECK(name, !ret && nd == sets[k].n && maxd == (sets[k].n ? (int64_t)((sets[k].n - 1) * sets[k].stride) : -1),
		      "ret %d (%s): decoded %u, largest %lld", ret, err.msg, nd, (long long)maxd);
		free(tm);
		ptimer_criu_core_close(c);
	}
	/* the entry cut short in the middle of the timers */
	snprintf(path, sizeof(path), "%s/core-11.img", dir);
	if (write_core_ids(dir, 11, 50, 3) > 0 && !truncate(path, 12 + 200)) {
		struct ptimer_criu_core *c = NULL;
		int fd = open(path, O_RDWR | O_CLOEXEC);
		uint32_t elen = 200;

		/* the header says what is left, so that the cut is inside a timer */
		if (fd < 0 || pwrite(fd, &elen, 4, 8) != 4) {
			FAIL("criu_core: a cut image", "cannot rewrite %s", path);
		} else {
			int ret = ptimer_criu_core_open(dir, 11, &c, &err);

			CHECK("criu_core: a cut image is refused, naming the file",
			      ret == -EINVAL && strstr(err.msg, "core-11.img"), "ret %d: %s", ret, err.msg);
			ptimer_criu_core_close(c);
		}
		if (fd >= 0)
			close(fd);
	} else {
		FAIL("criu_core: a cut image", "cannot write %s", path);
	}
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path))
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* The timers of DIR/core-VPID.img taken out in place, as the plugin does
 * into its overlay: *removed how many there were. */
static int strip_in_place(const char *dir, int vpid, uint32_t *removed, struct ptimer_err *err)
{
	struct ptimer_criu_core *c;
	char path[300];
	int ret = ptimer_criu_core_open(dir, vpid, &c, err);

	*removed = 0;
	if (ret)
		return ret;
	*removed = ptimer_criu_core_n_timers(c);
	snprintf(path, sizeof(path), "%s/core-%d.img", dir, vpid);
	ptimer_criu_core_strip(c);
	ret = ptimer_criu_core_write(c, path, err);
	ptimer_criu_core_close(c);
	return ret;
}

static void test_strip_keeps_file(const char *dir, mode_t mode, uid_t uid, gid_t gid)
{
	char path[256], name[128];
	struct ptimer_err err = { "" };
	uint32_t removed = 0, left = 99;
	struct stat st;
	uint8_t buf[4096];
	CriuCoreEntry *core;
	ssize_t len;
	int ret, fd;

	snprintf(path, sizeof(path), "%s/core-5.img", dir);
	unlink(path);
	if (write_core(dir, 5, 3) < 0 || chmod(path, mode) || chown(path, uid, gid)) {
		FAIL("criu_core: setup", "cannot write %s: %s", path, strerror(errno));
		return;
	}
	ret = strip_in_place(dir, 5, &removed, &err);
	snprintf(name, sizeof(name), "criu_core: strip of a %04o %u:%u image", mode, uid, gid);
	CHECK(name, ret == 0 && removed == 3, "ret %d removed %u: %s", ret, removed, err.msg);
	ret = stat(path, &st);
	snprintf(name, sizeof(name), "criu_core: mode %04o and owner %u:%u kept", mode, uid, gid);
	CHECK(name, !ret && (st.st_mode & 07777) == mode && st.st_uid == uid && st.st_gid == gid,
	      "now %04o %u:%u", ret ? 0 : st.st_mode & 07777, ret ? 0 : st.st_uid, ret ? 0 : st.st_gid);
	ret = strip_in_place(dir, 5, &left, &err);	/* a second strip finds none */
	CHECK("criu_core: no timers left", ret == 0 && left == 0, "ret %d left %u: %s", ret, left, err.msg);

	fd = open(path, O_RDONLY | O_CLOEXEC);
	len = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	core = len > 12 ? criu_core_entry__unpack(NULL, *(uint32_t *)(buf + 8), buf + 12) : NULL;
	CHECK("criu_core: the unknown field (mtype) is carried",
	      core && core->base.n_unknown_fields == 1 && core->base.unknown_fields[0].tag == 1,
	      "%u unknown fields", core ? (unsigned int)core->base.n_unknown_fields : 0);
	if (core)
		criu_core_entry__free_unpacked(core, NULL);
	CHECK("criu_core: the bytes after the entry are carried",
	      len > 12 && !memcmp(buf + 12 + *(uint32_t *)(buf + 8), trailer, sizeof(trailer)) &&
	      (size_t)len == 12 + *(uint32_t *)(buf + 8) + sizeof(trailer), "len %zd", len);
}

static int count_entries(const char *dir)
{
	char cmd[300];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "re");
	if (p && fscanf(p, "%d", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	return n;
}

static void test_strip(void)
{
	char dir[] = "/tmp/ptimer-test-criu-core-XXXXXX", path[300];
	struct ptimer_err err = { "" };
	uint32_t removed = 9;
	struct stat st, st2;
	int ret;

	if (!mkdtemp(dir)) {
		FAIL("criu_core: mkdtemp", "%s", strerror(errno));
		return;
	}
	/* criu's mode, as criu writes it */
	test_strip_keeps_file(dir, 0644, getuid(), getgid());
	/* whatever criu's images are, the rewrite keeps it */
	test_strip_keeps_file(dir, 0640, getuid(), getgid());
	if (geteuid() == 0)
		test_strip_keeps_file(dir, 0644, 1234, 5678);
	else
		SKIP("criu_core: foreign owner kept", "needs root to give the image another owner");
	CHECK("criu_core: nothing but core-5.img left in the directory", count_entries(dir) == 1,
	      "%d entries", count_entries(dir));

	/* No timers: the file is not touched at all (same inode). */
	snprintf(path, sizeof(path), "%s/core-6.img", dir);
	ret = write_core(dir, 6, 0) < 0 || stat(path, &st);
	ret = ret ? ret : strip_in_place(dir, 6, &removed, &err);
	CHECK("criu_core: an image without timers stays the same file",
	      !ret && removed == 0 && !stat(path, &st2) && st.st_ino == st2.st_ino,
	      "ret %d removed %u: %s", ret, removed, err.msg);

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path))
		fprintf(stderr, "cannot remove %s\n", dir);
	return;
}

/*
 * The parent-death signal the plugin gives a task whose timers it restores
 * (plugin/plan.c hold_by_pdeath): set in thread_core, the dumped one
 * returned, the timers and every other field of thread_core kept.
 */
static void test_pdeath(void)
{
	char dir[] = "/tmp/ptimer-test-criu-pdeath-XXXXXX", path[300], dest[300];
	static const uint8_t futex_rla[] = { 0x08, 0x2a };	/* thread_core field 1 = 42 */
	CriuThreadCoreEntry th = CRIU_THREAD_CORE_ENTRY__INIT;
	CriuCoreEntry core = CRIU_CORE_ENTRY__INIT, *back = NULL;
	uint32_t hdr[3] = { CRIU_IMG_COMMON_MAGIC, CRIU_CORE_MAGIC, 0 };
	struct ptimer_criu_core *c = NULL;
	struct ptimer_err err = { "" };
	ProtobufCMessageUnknownField uf;
	uint8_t buf[4096];
	uint32_t orig = 99;
	size_t len;
	FILE *f;
	int ret;

	if (!mkdtemp(dir)) {
		FAIL("criu_core: mkdtemp", "%s", strerror(errno));
		return;
	}
	uf.tag = 1;
	uf.wire_type = PROTOBUF_C_WIRE_TYPE_VARINT;
	uf.len = 1;
	uf.data = (uint8_t *)futex_rla + 1;
	th.base.n_unknown_fields = 1;
	th.base.unknown_fields = &uf;
	th.has_pdeath_sig = 1;
	th.pdeath_sig = 17;
	core.thread_core = &th;
	len = criu_core_entry__pack(&core, buf);
	hdr[2] = (uint32_t)len;
	snprintf(path, sizeof(path), "%s/core-7.img", dir);
	f = fopen(path, "we");
	ret = !f || fwrite(hdr, 1, sizeof(hdr), f) != sizeof(hdr) || fwrite(buf, 1, len, f) != len;
	if (f && fclose(f))
		ret = 1;
	if (ret) {
		FAIL("criu_core: pdeath setup", "cannot write %s", path);
		return;
	}
	snprintf(dest, sizeof(dest), "%s/core-7.new", dir);
	ret = ptimer_criu_core_open(dir, 7, &c, &err);
	if (!ret)
		ret = ptimer_criu_core_pdeath(c, SIGKILL, &orig, &err);
	if (!ret)
		ret = ptimer_criu_core_write(c, dest, &err);
	ptimer_criu_core_close(c);
	CHECK("criu_core: pdeath set, the dumped signal (17) returned", ret == 0 && orig == 17, "ret %d orig %u: %s",
	      ret, orig, err.msg);
	f = fopen(dest, "re");
	len = f ? fread(buf, 1, sizeof(buf), f) : 0;
	if (f)
		fclose(f);
	if (len > 12)
		back = criu_core_entry__unpack(NULL, len - 12, buf + 12);
	CHECK("criu_core: pdeath_sig 9 written, thread_core's other field kept",
	      back && back->thread_core && back->thread_core->has_pdeath_sig && back->thread_core->pdeath_sig == SIGKILL &&
	      back->thread_core->base.n_unknown_fields == 1 && back->thread_core->base.unknown_fields[0].tag == 1 &&
	      back->thread_core->base.unknown_fields[0].data[0] == 42,
	      "%s", back ? "thread_core differs" : "does not decode");
	if (back)
		criu_core_entry__free_unpacked(back, NULL);

	/* no thread_core: refused, nothing written */
	write_core(dir, 8, 2);
	ret = ptimer_criu_core_open(dir, 8, &c, &err);
	if (!ret)
		ret = ptimer_criu_core_pdeath(c, SIGKILL, &orig, &err);
	ptimer_criu_core_close(c);
	CHECK("criu_core: pdeath of an entry without thread_core refused", ret == -EINVAL && strstr(err.msg, "thread_core"),
	      "ret %d: %s", ret, err.msg);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path))
		fprintf(stderr, "cannot remove %s\n", dir);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	return CHECK_RUN(CHECK_TEST(test_strip), CHECK_TEST(test_pdeath), CHECK_TEST(test_decode));
}
