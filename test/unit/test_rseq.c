// SPDX-License-Identifier: MIT
/*
 * rseq time-slice extension, host side (core/rseq.c) against a simulated
 * kernel: PTRACE_GET_RSEQ_CONFIGURATION and process memory come from tables
 * here, prctl(PR_RSEQ_SLICE_EXTENSION) from test/unit/simkernel.c through
 * the real in-target code (restorer/algo.c, PTIMER_OP_SLICE).  The real
 * kernel's paths are the slice-grants case's (test/qemu/slice-kernel.sh);
 * here the ones no kernel takes on demand (flags that do not follow SET).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/restore.h"
#include "core/rseq.h"
#include "restorer/algo.h"
#include "test/lib/tst.h"
#include "test/unit/simkernel.h"

/* struct rseq areas of the simulated threads: 64 bytes, 32-aligned */
static uint8_t areas[4][64] __attribute__((aligned(32)));
static long blob_runs;
static char last_warn[1024];

static void capture(int level, const char *where, const char *msg)
{
	if (level == PTIMER_LOG_WARN)
		snprintf(last_warn, sizeof(last_warn), "%s", msg);
}

/* what PTRACE_GET_RSEQ_CONFIGURATION reports for host tid 2000 + i */
static uint64_t ptrace_rseq[4];
static uint32_t ptrace_len[4];

static int sim_get_config(void *ctx, pid_t tid, struct ptimer_rseq_config *c)
{
	memset(c, 0, sizeof(*c));
	if (tid < 2000 || tid > 2003)
		return -ESRCH;
	c->rseq_abi_pointer = ptrace_rseq[tid - 2000];
	c->rseq_abi_size = ptrace_rseq[tid - 2000] ? ptrace_len[tid - 2000] : 0;
	c->signature = c->rseq_abi_size ? 0x53053053 : 0;
	return 0;
}

static int sim_slice(void *ctx, pid_t tid, bool owns_waits, uint32_t how, uint32_t arg, int32_t *get, int32_t *set,
		     struct ptimer_err *err)
{
	struct ptimer_blob_args a = { .abi_version = PTIMER_ABI_VERSION, .op = PTIMER_OP_SLICE,
				      .slice_how = how, .slice_arg = arg };

	blob_runs++;
	simk.cur_tid = tid;
	if (ptimer_blob_main(&a))
		return ptimer_errf(err, EIO, "blob failed");
	*get = a.slice_get;
	*set = a.slice_set;
	return 0;
}

static int sim_mem(void *ctx, pid_t pid, uint64_t addr, void *buf, size_t len, bool write)
{
	if (write)
		memcpy((void *)(uintptr_t)addr, buf, len);
	else
		memcpy(buf, (void *)(uintptr_t)addr, len);
	return 0;
}

static const struct ptimer_rseq_ops sim_ops = { sim_get_config, sim_slice, sim_mem, NULL };

/* host tids 2000.. and vtids 10.. of a process; thread i's rseq = areas[i] */
static pid_t host_tids[4] = { 2000, 2001, 2002, 2003 }, vtids[4] = { 10, 11, 12, 13 };
static struct ptimer_task task = { .pid = 2000, .vpid = 10, .n_threads = 4, .tids = host_tids,
				   .vtids = vtids };

static void setup(enum simk_slice slice)
{
	simk_reset();
	simk.slice = slice;
	memset(areas, 0, sizeof(areas));
	for (int i = 0; i < 4; i++) {
		struct simk_thread *t = simk_thread(host_tids[i]);

		t->rseq = i < 3 ? (uint64_t)(uintptr_t)areas[i] : 0;	/* thread 3: no rseq */
		t->rseq_len = i == 1 ? 32 : 33;		/* thread 1: the original 32-byte ABI */
		ptrace_rseq[i] = t->rseq;
		ptrace_len[i] = t->rseq_len;
	}
	blob_runs = 0;
	last_warn[0] = '\0';
}

static void test_dump(void)
{
	struct ptimer_image img = { 0 };
	struct ptimer_err err = { "" };
	int ret;

	setup(SIMK_SLICE_ON);
	simk_thread(2000)->slice_enabled = 1;
	areas[0][28] = 1;	/* request */
	areas[0][29] = 1;	/* granted */
	ret = ptimer_dump_threads(&task, &sim_ops, &img, &err);
	CHECK("dump: 4 threads with vtids", ret == 0 && img.n_threads == 4 && img.threads[0].tid == 10 &&
	      img.threads[3].tid == 13, "ret %d n %u: %s", ret, img.n_threads, err.msg);
	if (ret)
		return;
	CHECK("dump: enabled thread", img.threads[0].slice_ext == PTIMER_SLICE_EXT_ENABLED &&
	      img.threads[0].rseq_abi_pointer == (uintptr_t)areas[0] && img.threads[0].rseq_abi_size == 33 &&
	      img.threads[0].rseq_signature == 0x53053053 && img.threads[0].slice_ctrl == 0x0101,
	      "slice_ext %u ctrl 0x%x", img.threads[0].slice_ext, img.threads[0].slice_ctrl);
	CHECK("dump: 32-byte (original ABI) registration: unavailable, though GET says 0",
	      img.threads[1].slice_ext == PTIMER_SLICE_EXT_UNAVAILABLE && img.threads[1].rseq_abi_size == 32,
	      "slice_ext %u", img.threads[1].slice_ext);
	CHECK("dump: v2 registration not enabled: disabled", img.threads[2].slice_ext == PTIMER_SLICE_EXT_DISABLED,
	      "slice_ext %u", img.threads[2].slice_ext);
	CHECK("dump: thread without rseq: unavailable, not asked",
	      img.threads[3].slice_ext == PTIMER_SLICE_EXT_UNAVAILABLE && img.threads[3].rseq_abi_size == 0 &&
	      blob_runs == 3, "slice_ext %u, %ld blob runs", img.threads[3].slice_ext, blob_runs);
	img.pid = 10;
	CHECK("dump: image validates", ptimer_image_validate(&img, "dump", &err) == 0, "%s", err.msg);
	ptimer_image_free(&img);

	setup(SIMK_SLICE_ABSENT);
	ret = ptimer_dump_threads(&task, &sim_ops, &img, &err);
	CHECK("dump: kernel without it (EINVAL): unavailable, asked once", ret == 0 &&
	      img.threads[0].slice_ext == PTIMER_SLICE_EXT_UNAVAILABLE &&
	      img.threads[2].slice_ext == PTIMER_SLICE_EXT_UNAVAILABLE && blob_runs == 1,
	      "ret %d, %ld runs", ret, blob_runs);
	ptimer_image_free(&img);

	setup(SIMK_SLICE_DISABLED);
	simk.slice_get_checks = 1;
	ret = ptimer_dump_threads(&task, &sim_ops, &img, &err);
	CHECK("dump: GET answering ENOTSUPP: unavailable, asked once", ret == 0 &&
	      img.threads[0].slice_ext == PTIMER_SLICE_EXT_UNAVAILABLE && blob_runs == 1,
	      "ret %d, %ld runs", ret, blob_runs);
	ptimer_image_free(&img);

	setup(SIMK_SLICE_ON);
	simk.slice_get_checks = 1;
	simk_thread(2000)->rseq = 0;	/* ptrace says registered, prctl ENXIO */
	simk_thread(2002)->slice_enabled = 1;
	ret = ptimer_dump_threads(&task, &sim_ops, &img, &err);
	CHECK("dump: ENXIO is the thread's answer: unavailable there, others asked", ret == 0 &&
	      img.threads[0].slice_ext == PTIMER_SLICE_EXT_UNAVAILABLE && img.threads[0].rseq_abi_size == 33 &&
	      img.threads[2].slice_ext == PTIMER_SLICE_EXT_ENABLED, "ret %d", ret);
	ptimer_image_free(&img);
}

/* An image whose thread 10 (the leader) and 12 had the extension enabled; 11 disabled. */
static struct ptimer_thread img_threads[3];
static struct ptimer_image image = { .version = 1, .pid = 10, .n_threads = 3, .threads = img_threads };

static void image_setup(void)
{
	struct ptimer_thread th[3] = {
		{ .tid = 10, .rseq_abi_size = 33, .rseq_abi_pointer = 0x1000, .rseq_signature = 1,
		  .slice_ext = PTIMER_SLICE_EXT_ENABLED, .slice_ctrl = 0x0101 },
		{ .tid = 11, .rseq_abi_size = 33, .rseq_abi_pointer = 0x2000, .rseq_signature = 1,
		  .slice_ext = PTIMER_SLICE_EXT_DISABLED },
		{ .tid = 12, .rseq_abi_size = 33, .rseq_abi_pointer = 0x3000, .rseq_signature = 1,
		  .slice_ext = PTIMER_SLICE_EXT_ENABLED },
	};

	memcpy(img_threads, th, sizeof(th));
}

/* targets + prepare + apply, as ptimer_restore_task does */
static int restore(const struct ptimer_restore_opts *o, struct ptimer_slice_target **v, int *n,
		   struct ptimer_err *err)
{
	int ret = ptimer_slice_targets(&task, &image, o->tid_map, o->n_tid_map, o->slice_start_disabled, v, n, err);

	if (!ret)
		ret = ptimer_slice_prepare(task.pid, *v, *n, o->rseq_slice, &sim_ops, err);
	if (!ret)
		ret = ptimer_slice_apply(task.pid, *v, *n, o->rseq_slice, &sim_ops, err);
	return ret;
}

/* thread 2001 a 33-byte area, enabled, whose struct rseq.flags keep saying
 * so whatever SET does */
static void setup_flags_stuck(void)
{
	setup(SIMK_SLICE_ON);
	simk_thread(2001)->rseq_len = ptrace_len[1] = 33;
	simk_thread(2001)->slice_enabled = 1;
	simk_thread(2001)->flags_stuck = 1;
	areas[1][16] = 0x30;
}

static void test_restore(void)
{
	struct ptimer_restore_opts o = { .rseq_slice = PTIMER_RSEQ_SLICE_AUTO };
	struct ptimer_tid_map map = { .from = 12, .to = 2003 };
	struct ptimer_slice_target *v = NULL;
	struct ptimer_err err = { "" };
	int n = 0, ret;

	image_setup();
	setup(SIMK_SLICE_ON);
	/* the restored memory: a grant saved in the image, private bytes in 11 */
	areas[0][28] = 1;
	areas[0][29] = 1;
	areas[1][28] = 0x5a;
	areas[1][29] = 0xa5;
	ret = restore(&o, &v, &n, &err);
	CHECK("restore: 3 threads with a mode mapped (pid, same tid)", ret == 0 && n == 3 &&
	      v[0].host_tid == 2000 && v[1].host_tid == 2001 && v[2].host_tid == 2002, "ret %d n %d: %s", ret, n,
	      err.msg);
	CHECK("restore: SET ENABLE in threads 2000 and 2002; 2001 disabled already: not touched",
	      simk_thread(2000)->slice_enabled && !simk_thread(2001)->slice_enabled &&
	      simk_thread(2002)->slice_enabled && simk_thread(2001)->slice_set_calls == 0, "enabled %d %d %d",
	      simk_thread(2000)->slice_enabled, simk_thread(2001)->slice_enabled, simk_thread(2002)->slice_enabled);
	CHECK("restore: struct rseq.flags AVAILABLE|ENABLED as the kernel writes them", areas[0][16] == 0x30 &&
	      areas[2][16] == 0x30, "%02x %02x", areas[0][16], areas[2][16]);
	CHECK("restore: slice_ctrl never written", areas[0][28] == 1 && areas[0][29] == 1 &&
	      areas[1][28] == 0x5a && areas[1][29] == 0xa5, "%02x %02x / %02x %02x", areas[0][28], areas[0][29],
	      areas[1][28], areas[1][29]);
	CHECK("restore: no warning", !last_warn[0], "%s", last_warn);
	ptimer_slice_undo(task.pid, v, n, &sim_ops);
	CHECK("restore: undo disables again", !simk_thread(2000)->slice_enabled &&
	      !simk_thread(2002)->slice_enabled, "still enabled");
	free(v);

	/* under criu every thread starts disabled: only the enabled are set */
	setup(SIMK_SLICE_ON);
	o.slice_start_disabled = true;
	ret = restore(&o, &v, &n, &err);
	CHECK("restore: slice_start_disabled: the 2 enabled threads only, 2001 not asked", ret == 0 && n == 2 &&
	      v[0].host_tid == 2000 && v[1].host_tid == 2002 && simk_thread(2000)->slice_enabled &&
	      blob_runs == 4, "ret %d n %d, %ld runs", ret, n, blob_runs);
	o.slice_start_disabled = false;
	free(v);

	/* a fresh process whose threads start enabled (RSEQ_FLAG_SLICE_EXT_DEFAULT_ON):
	 * the disabled one is disabled, the enabled ones left alone */
	setup(SIMK_SLICE_ON);
	simk_thread(2001)->rseq_len = ptrace_len[1] = 33;
	for (pid_t tid = 2000; tid <= 2002; tid++)
		simk_thread(tid)->slice_enabled = 1;
	ret = restore(&o, &v, &n, &err);
	CHECK("restore: enabled by default: thread 2001 disabled, 2000 and 2002 not set again", ret == 0 &&
	      simk_thread(2000)->slice_enabled && !simk_thread(2001)->slice_enabled &&
	      simk_thread(2002)->slice_enabled && simk_thread(2000)->slice_set_calls == 1 &&
	      simk_thread(2001)->slice_set_calls == 1 && areas[1][16] == 0x10 && !last_warn[0],
	      "ret %d, enabled %d %d %d, SETs %ld (the probe's) %ld, flags %02x: %s", ret,
	      simk_thread(2000)->slice_enabled, simk_thread(2001)->slice_enabled, simk_thread(2002)->slice_enabled,
	      simk_thread(2000)->slice_set_calls, simk_thread(2001)->slice_set_calls, areas[1][16], last_warn);
	ptimer_slice_undo(task.pid, v, n, &sim_ops);
	CHECK("restore: undo enables 2001 again", simk_thread(2001)->slice_enabled &&
	      simk_thread(2000)->slice_enabled, "2001 %d", simk_thread(2001)->slice_enabled);
	free(v);

	/* thread 11 "unavailable" at the dump (a kernel without extensions):
	 * disabled where the target's thread has one enabled, found by the
	 * kernel's flags; a thread whose flags say disabled runs no code */
	image.threads[1].slice_ext = PTIMER_SLICE_EXT_UNAVAILABLE;
	setup(SIMK_SLICE_ON);
	simk_thread(2001)->rseq_len = ptrace_len[1] = 33;
	simk_thread(2001)->slice_enabled = 1;
	areas[1][16] = 0x30;
	ret = restore(&o, &v, &n, &err);
	CHECK("restore: unavailable in the image, enabled in the target: disabled", ret == 0 && n == 3 &&
	      !simk_thread(2001)->slice_enabled && simk_thread(2001)->slice_set_calls == 1 && !last_warn[0],
	      "ret %d n %d, enabled %d, SETs %ld: %s", ret, n, simk_thread(2001)->slice_enabled,
	      simk_thread(2001)->slice_set_calls, last_warn);
	free(v);
	setup(SIMK_SLICE_ON);
	simk_thread(2001)->rseq_len = ptrace_len[1] = 33;
	areas[1][16] = 0x10;
	ret = restore(&o, &v, &n, &err);
	CHECK("restore: unavailable in the image, flags say disabled: no code run in the thread", ret == 0 &&
	      v[1].skip && blob_runs == 4 && simk_thread(2001)->slice_set_calls == 0,
	      "ret %d, skip %d, %ld runs", ret, v[1].skip, blob_runs);
	free(v);
	image.threads[1].slice_ext = PTIMER_SLICE_EXT_DISABLED;
	v = NULL;
	free(v);

	/* the kernel's flags do not follow the mode: checked, not trusted */
	setup_flags_stuck();
	ret = restore(&o, &v, &n, &err);
	CHECK("restore: auto, struct rseq.flags still ENABLED after SET 0: warning names the thread", ret == 0 &&
	      strstr(last_warn, "thread 2001") && strstr(last_warn, "disabled") &&
	      strstr(last_warn, "struct rseq.flags"), "ret %d: %s", ret, last_warn);
	ptimer_slice_undo(task.pid, v, n, &sim_ops);
	free(v);
	o.rseq_slice = PTIMER_RSEQ_SLICE_REQUIRE;
	setup_flags_stuck();
	ret = restore(&o, &v, &n, &err);
	if (ret)
		ptimer_slice_undo(task.pid, v, n, &sim_ops);
	CHECK("restore: require, the same: refused (EPROTO), every thread back as it was", ret == -EPROTO &&
	      !simk_thread(2000)->slice_enabled && simk_thread(2001)->slice_enabled, "ret %d: %s", ret, err.msg);
	free(v);
	o.rseq_slice = PTIMER_RSEQ_SLICE_AUTO;

	/* --tid-map 12=2003, whose thread has no rseq area: ENXIO-like */
	setup(SIMK_SLICE_ON);
	o.n_tid_map = 1;
	o.tid_map = &map;
	ret = restore(&o, &v, &n, &err);
	CHECK("restore: --tid-map 12=2003 maps", ret == 0 && n == 3 && v[2].host_tid == 2003, "ret %d", ret);
	CHECK("restore: auto, target thread without rseq: warning names it", ret == 0 && v[2].skip &&
	      strstr(last_warn, "thread 2003 (tid 12 in the image)") && strstr(last_warn, "no rseq registration"),
	      "%s", last_warn);
	free(v);
	o.rseq_slice = PTIMER_RSEQ_SLICE_REQUIRE;
	setup(SIMK_SLICE_ON);
	ret = restore(&o, &v, &n, &err);
	CHECK("restore: require, target thread without rseq: refused, nothing enabled",
	      ret == -ENXIO && strstr(err.msg, "thread 2003") && !simk_thread(2000)->slice_enabled,
	      "ret %d: %s", ret, err.msg);
	free(v);
	o.n_tid_map = 0;

	/* image tid with no thread in the target */
	image.threads[2].tid = 77;
	setup(SIMK_SLICE_ON);
	ret = restore(&o, &v, &n, &err);
	CHECK("restore: require, unmapped tid: -ESRCH naming --tid-map", ret == -ESRCH &&
	      strstr(err.msg, "--tid-map 77=TID"), "ret %d: %s", ret, err.msg);
	CHECK("restore: unmapped tid: named by its image tid, never 'thread 0'",
	      strstr(err.msg, "tid 77 of the image") && !strstr(err.msg, "thread 0"), "%s", err.msg);
	free(v);
	image.threads[2].tid = 12;

	/* a kernel that has it but refuses SET (7.2 today: ENOTSUPP) */
	setup(SIMK_SLICE_DISABLED);
	ret = restore(&o, &v, &n, &err);
	CHECK("restore: require, ENOTSUPP: refused in prepare, nothing set", ret == -524 &&
	      strstr(err.msg, "ENOTSUPP") && strstr(err.msg, "thread 2000") &&
	      simk_thread(2000)->slice_set_calls == 1, "ret %d: %s", ret, err.msg);
	free(v);
	o.rseq_slice = PTIMER_RSEQ_SLICE_AUTO;
	setup(SIMK_SLICE_DISABLED);
	ret = restore(&o, &v, &n, &err);
	CHECK("restore: auto, ENOTSUPP: warning with the kernel's answer; the disabled thread is as dumped",
	      ret == 0 && strstr(last_warn, "ENOTSUPP") && v[0].skip && v[1].skip && v[2].skip, "ret %d: %s", ret,
	      last_warn);
	free(v);
	setup(SIMK_SLICE_ABSENT);
	ret = restore(&o, &v, &n, &err);
	CHECK("restore: auto, EINVAL (6.18): warning", ret == 0 && strstr(last_warn, "EINVAL"), "%s", last_warn);
	free(v);

	/* off: nobody asked, nothing written */
	o.rseq_slice = PTIMER_RSEQ_SLICE_OFF;
	setup(SIMK_SLICE_ON);
	areas[0][29] = 1;
	ret = restore(&o, &v, &n, &err);
	CHECK("restore: off: no prctl", ret == 0 && blob_runs == 0 && !simk_thread(2000)->slice_enabled,
	      "ret %d runs %ld", ret, blob_runs);
	free(v);

	/* already enabled (RSEQ_FLAG_SLICE_EXT_DEFAULT_ON): undo keeps it */
	o.rseq_slice = PTIMER_RSEQ_SLICE_AUTO;
	setup(SIMK_SLICE_ON);
	simk_thread(2000)->slice_enabled = 1;
	ret = restore(&o, &v, &n, &err);
	ptimer_slice_undo(task.pid, v, n, &sim_ops);
	CHECK("restore: undo leaves a thread enabled that was enabled before", ret == 0 &&
	      simk_thread(2000)->slice_enabled && !simk_thread(2002)->slice_enabled, "ret %d", ret);
	free(v);
}

int main(void)
{
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ptimer_log_set(capture);
	rc = CHECK_RUN(CHECK_TEST(test_dump),
	               CHECK_TEST(test_restore));
	simk_reset();
	return rc;
}
