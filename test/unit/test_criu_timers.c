// SPDX-License-Identifier: MIT
/*
 * Unit tests for the plugin's reading and editing of criu's core image
 * (plugin/criu_core.c): a core-<vpid>.img made here the way criu writes
 * one (magic pair, length, CoreEntry), with fields our schema does not
 * name before the timers and bytes after the entry; the timers read back
 * with every field (the timing the plugin's restore takes from it), the
 * strip keeping every other byte, the strip that keeps criu's file beside
 * it and the put-back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/dump.h"
#include "core/log.h"
#include "core/task.h"
#include "images/image.h"
#include "plugin/criu_core.h"
#include "proto/criu_core.pb-c.h"
#include "test/lib/tst.h"

#define IMG_COMMON_MAGIC	0x54564319u
#define CORE_MAGIC		0x55053847u

/* field 1 (mtype) varint 3, field 2 (thread_info) as 3 raw bytes: unknown to our schema */
static const uint8_t unknown_head[] = { 0x08, 0x03, 0x12, 0x03, 0x0a, 0x01, 0x07 };
static const uint8_t trailer[] = { 0xde, 0xad, 0xbe, 0xef };

static CriuPosixTimerEntry entry(uint32_t id, int32_t clock, uint32_t notify, int32_t tid, uint64_t vsec)
{
	CriuPosixTimerEntry e = CRIU_POSIX_TIMER_ENTRY__INIT;

	e.has_it_id = e.has_clock_id = e.has_si_signo = e.has_it_sigev_notify = true;
	e.has_sival_ptr = e.has_overrun = e.has_isec = e.has_insec = e.has_vsec = e.has_vnsec = true;
	e.it_id = id;
	e.clock_id = (uint32_t)clock;
	e.si_signo = 34;
	e.it_sigev_notify = notify;
	e.sival_ptr = 0x1122334455667788ull + id;
	e.overrun = id;
	e.isec = 5;
	e.insec = 250;
	e.vsec = vsec;
	e.vnsec = 999999999;
	if (tid) {
		e.has_notify_thread_id = true;
		e.notify_thread_id = tid;
	}
	return e;
}

/* Write DIR/core-<vpid>.img holding n timers; returns the file's size. */
static size_t write_core(const char *dir, int vpid, CriuPosixTimerEntry *v, size_t n)
{
	CriuPosixTimerEntry *pv[8];
	CriuTaskTimersEntry tt = CRIU_TASK_TIMERS_ENTRY__INIT;
	CriuTaskCoreEntry tc = CRIU_TASK_CORE_ENTRY__INIT;
	CriuCoreEntry core = CRIU_CORE_ENTRY__INIT;
	uint8_t buf[4096];
	uint32_t len, magic[2] = { IMG_COMMON_MAGIC, CORE_MAGIC };
	char path[256];
	FILE *f;

	for (size_t i = 0; i < n; i++)
		pv[i] = &v[i];
	tt.n_posix = n;
	tt.posix = pv;
	tc.timers = &tt;
	core.tc = &tc;
	memcpy(buf, unknown_head, sizeof(unknown_head));
	len = (uint32_t)(sizeof(unknown_head) + criu_core_entry__pack(&core, buf + sizeof(unknown_head)));
	snprintf(path, sizeof(path), "%s/core-%d.img", dir, vpid);
	f = fopen(path, "w");
	if (!f || fwrite(magic, 4, 2, f) != 2 || fwrite(&len, 4, 1, f) != 1 || fwrite(buf, 1, len, f) != len ||
	    fwrite(trailer, 1, sizeof(trailer), f) != sizeof(trailer) || fclose(f)) {
		perror(path);
		exit(2);
	}
	return 12 + len + sizeof(trailer);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	static uint8_t buf[8192];
	FILE *f = fopen(path, "r");

	*len = f ? fread(buf, 1, sizeof(buf), f) : 0;
	if (f)
		fclose(f);
	return buf;
}

/* A child holding one SIGEV_THREAD_ID timer aimed at itself; its ID in *id. */
static pid_t child_with_timer(int *id)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		exit(2);
	pid = fork();
	if (pid == 0) {
		struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGRTMIN + 1 };
		timer_t tm;
		int v = -1;

		ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
		if (!timer_create(CLOCK_MONOTONIC, &ev, &tm))
			v = (int)(intptr_t)tm;
		if (write(p[1], &v, sizeof(v)) != sizeof(v))
			_exit(2);
		for (;;)
			pause();
	}
	if (pid < 0 || read(p[0], id, sizeof(*id)) != sizeof(*id) || *id < 0)
		exit(2);
	close(p[0]);
	close(p[1]);
	return pid;
}

static pid_t the_child;

static void kill_child(void)
{
	if (the_child > 0) {
		kill(the_child, SIGKILL);
		waitpid(the_child, NULL, 0);
	}
}

/* Stop pid in a ptrace stop of ours, as criu holds the tasks it dumps. */
static void seize_stop(pid_t pid)
{
	int status;

	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) || ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) ||
	    waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status)) {
		perror("seizing the child");
		exit(2);
	}
}

/* The CPU clock of thread tid (CPUCLOCK_SCHED, per thread): include/linux/posix-timers_types.h */
static int32_t thread_cpu_clock(pid_t tid)
{
	return (int32_t)((~(uint32_t)tid << 3) | 4 | 2);
}

static void test_criu_core(void)
{
	char dir[] = "/tmp/ptimer-test-criu-core.XXXXXX", path[256];
	struct ptimer_criu_core *c = NULL;
	struct ptimer_timer *tm = NULL;
	struct ptimer_err err;
	CriuPosixTimerEntry v[5];
	size_t before, after;
	uint32_t n = 0;
	pid_t child;
	uint8_t *b;
	int ret, child_id;

	ptimer_log_set(NULL);
	if (!mkdtemp(dir)) {
		FAIL("criu-core/mkdtemp", "%s: %s", dir, strerror(errno));
		return;
	}
	child = child_with_timer(&child_id);
	the_child = child;
	atexit(kill_child);
	seize_stop(child);
	/* newest first, as criu lists them; one aimed at thread 2, one at a gone
	 * thread 9, one on the CPU clock of gone thread 7, one plain signal, and
	 * the child's own, aimed at its leader, as criu 4.1 and 4.2 write it in a pid
	 * namespace: -1 */
	v[0] = entry(120, 1, PTIMER_SIGEV_THREAD_ID, 2, 30);
	v[1] = entry(103, 1, PTIMER_SIGEV_THREAD_ID, 9, 40);
	v[2] = entry(107, thread_cpu_clock(7), PTIMER_SIGEV_SIGNAL, 0, 50);
	v[3] = entry(100, 0, PTIMER_SIGEV_SIGNAL, 0, 60);
	v[4] = entry((uint32_t)child_id, 1, PTIMER_SIGEV_THREAD_ID, -1, 70);
	before = write_core(dir, 1, v, 5);

	ret = ptimer_criu_core_open(dir, 1, &c, &err);
	CHECK("criu-core/open", ret == 0, "%d %s", ret, err.msg);
	if (ret)
		return;
	CHECK("criu-core/n-timers", ptimer_criu_core_n_timers(c) == 5, "%u", ptimer_criu_core_n_timers(c));
	ret = ptimer_criu_core_timers(c, &tm, &n, &err);
	CHECK("criu-core/timers", ret == 0 && n == 5, "%d n %u %s", ret, n, ret ? err.msg : "");
	if (ret || n != 5)
		return;
	CHECK("criu-core/fields", tm[0].timer_id == 120 && tm[0].clock_id == 1 && tm[0].signo == 34 &&
	      tm[0].sigev_notify == PTIMER_SIGEV_THREAD_ID && tm[0].notify_tid == 2 &&
	      tm[0].sival == 0x1122334455667788ull + 120 && tm[0].overrun == 120 && tm[0].it_value.sec == 30 &&
	      tm[0].it_value.nsec == 999999999 && tm[0].it_interval.sec == 5 && tm[0].it_interval.nsec == 250,
	      "id %d clock %d signo %d notify %d tid %d sival %#llx overrun %d value %lld.%09lld interval %lld.%09lld",
	      tm[0].timer_id, tm[0].clock_id, tm[0].signo, tm[0].sigev_notify, tm[0].notify_tid,
	      (unsigned long long)tm[0].sival, tm[0].overrun, (long long)tm[0].it_value.sec,
	      (long long)tm[0].it_value.nsec, (long long)tm[0].it_interval.sec, (long long)tm[0].it_interval.nsec);
	CHECK("criu-core/cpu-clock", tm[2].clock_id == thread_cpu_clock(7) && tm[2].clock_id < 0, "%d",
	      tm[2].clock_id);

	free(tm);

	/* strip: the timers go, every other byte stays */
	snprintf(path, sizeof(path), "%s/core-1.img", dir);
	ptimer_criu_core_strip(c);
	ret = ptimer_criu_core_write(c, path, &err);
	CHECK("criu-core/strip", ret == 0, "%d %s", ret, err.msg);
	ptimer_criu_core_close(c);
	b = slurp(path, &after);
	/* left: the unknown fields, an empty tc { timers { } } (4 bytes), the trailer */
	CHECK("criu-core/strip-keeps", after == 12 + sizeof(unknown_head) + 4 + sizeof(trailer) &&
	      memmem(b + 12, after - 12 - sizeof(trailer), unknown_head, sizeof(unknown_head)) &&
	      !memcmp(b + after - sizeof(trailer), trailer, sizeof(trailer)) &&
	      ((uint32_t *)b)[0] == IMG_COMMON_MAGIC && ((uint32_t *)b)[1] == CORE_MAGIC &&
	      ((uint32_t *)b)[2] == sizeof(unknown_head) + 4,
	      "size %zu (was %zu)", after, before);
	ret = ptimer_criu_core_open(dir, 1, &c, &err);
	CHECK("criu-core/stripped", ret == 0 && ptimer_criu_core_n_timers(c) == 0, "%d %u", ret,
	      ret ? 0 : ptimer_criu_core_n_timers(c));
	/* nothing to strip: the file is not rewritten */
	if (!ret) {
		struct stat s1, s2;

		stat(path, &s1);
		ptimer_criu_core_strip(c);
		ret = ptimer_criu_core_write(c, path, &err);
		stat(path, &s2);
		CHECK("criu-core/strip-nothing", ret == 0 && s1.st_ino == s2.st_ino, "%d ino %lu %lu", ret,
		      (unsigned long)s1.st_ino, (unsigned long)s2.st_ino);
		ptimer_criu_core_close(c);
	}

	/* strip into a hard link of criu's file (the plugin's overlay): criu's file as it was */
	write_core(dir, 4, v, 2);
	snprintf(path, sizeof(path), "%s/core-4.img", dir);
	{
		char link_path[4200];
		size_t orig_len, now_len, stripped_len;
		uint8_t *orig = malloc(8192), *now = malloc(8192);
		struct stat s0, s1, s2;

		{
			const uint8_t *x = slurp(path, &orig_len);

			memcpy(orig, x, orig_len);
		}
		chmod(path, 0640);
		stat(path, &s0);
		snprintf(link_path, sizeof(link_path), "%s/core-4.link", dir);
		unlink(link_path);
		ret = link(path, link_path) ? -errno : 0;
		if (!ret)
			ret = ptimer_criu_core_open(dir, 4, &c, &err);
		if (!ret) {
			ptimer_criu_core_strip(c);
			ret = ptimer_criu_core_write(c, link_path, &err);
			ptimer_criu_core_close(c);
		}
		{
			const uint8_t *x = slurp(path, &now_len);

			memcpy(now, x, now_len);
		}
		slurp(link_path, &stripped_len);
		stat(path, &s1);
		stat(link_path, &s2);
		CHECK("criu-core/strip-into-a-link-leaves-criu's-file", ret == 0 && now_len == orig_len &&
		      !memcmp(now, orig, orig_len) && s1.st_ino == s0.st_ino && s2.st_ino != s0.st_ino &&
		      stripped_len < orig_len && (s2.st_mode & 07777) == 0640 && s2.st_uid == s0.st_uid,
		      "%d '%s' criu's %zu (was %zu) stripped %zu mode %o", ret, err.msg, now_len, orig_len,
		      stripped_len, s2.st_mode & 07777);
		unlink(link_path);
		free(orig);
		free(now);
	}

	/* a value out of range is refused, naming the file */
	v[0].vnsec = 1000000000u;
	write_core(dir, 2, v, 1);
	ret = ptimer_criu_core_open(dir, 2, &c, &err);
	if (!ret) {
		ret = ptimer_criu_core_timers(c, &tm, &n, &err);
		CHECK("criu-core/out-of-range", ret == -EINVAL && strstr(err.msg, "core-2.img"), "%d '%s'", ret,
		      err.msg);
		ptimer_criu_core_close(c);
	}
	ret = ptimer_criu_core_open(dir, 3, &c, &err);
	CHECK("criu-core/missing", ret == -ENOENT && !c, "%d", ret);

	kill_child();
	the_child = 0;
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path))
		FAIL("criu-core/cleanup", "%s failed", path);
	return;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	return CHECK_RUN(CHECK_TEST(test_criu_core));
}
