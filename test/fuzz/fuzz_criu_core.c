// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the plugin's reader and editor of criu's images
 * (plugin/criu_core.c) on arbitrary bytes, as core-1.img and pstree.img.
 * Core images cross machines in a migration, so a broken or hostile one
 * must be refused with -EINVAL, never crash the plugin inside criu.  Of
 * one that is read, the edit the plugin makes must hold when read back:
 * stripped, it holds no timer; the parent-death signal set is the one read;
 * whether the task runs is unchanged.
 */
#include <signal.h>

#include "plugin/criu_core.h"
#include "test/fuzz/fuzz.h"

static char dir[64];

static void cleanup(void)
{
	static const char *const names[] = { "core-1.img", "core-2.img", "pstree.img" };
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

static void put(const char *name, const uint8_t *data, size_t size)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size)) {
		perror(path);
		abort();
	}
	close(fd);
}

static void edit_and_reread(struct ptimer_criu_core *c)
{
	struct ptimer_criu_core *back = NULL;
	struct ptimer_err err;
	char path[128];
	uint32_t orig = 0, again = 0;
	bool runs = ptimer_criu_core_runs(c), had = ptimer_criu_core_n_timers(c) > 0, pdeath;

	ptimer_criu_core_strip(c);
	pdeath = !ptimer_criu_core_pdeath(c, SIGTERM, &orig, &err);
	snprintf(path, sizeof(path), "%s/core-2.img", dir);
	unlink(path);
	if (ptimer_criu_core_write(c, path, &err)) {
		fprintf(stderr, "write of an image that was read: %s\n", err.msg);
		abort();
	}
	/* nothing edited, nothing written */
	if (!had && (!pdeath || orig == SIGTERM) && access(path, F_OK))
		return;
	if (ptimer_criu_core_open(dir, 2, &back, &err)) {
		fprintf(stderr, "the edited image cannot be read back: %s\n", err.msg);
		abort();
	}
	if (ptimer_criu_core_n_timers(back) || ptimer_criu_core_runs(back) != runs ||
	    (pdeath && (ptimer_criu_core_pdeath(back, SIGTERM, &again, &err) || again != SIGTERM))) {
		fprintf(stderr, "the edit did not hold: %u timers, runs %d -> %d, pdeath %u\n",
			ptimer_criu_core_n_timers(back), runs, ptimer_criu_core_runs(back), again);
		abort();
	}
	ptimer_criu_core_close(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ptimer_criu_core *c = NULL;
	struct ptimer_criu_task *tasks = NULL;
	struct ptimer_timer *timers = NULL;
	struct ptimer_err err;
	uint32_t n = 0;
	uint64_t rseq = 0;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/ptimer-fuzz-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			abort();
		}
		atexit(cleanup);
	}
	put("core-1.img", data, size);
	put("pstree.img", data, size);
	if (!ptimer_criu_core_open(dir, 1, &c, &err)) {
		if (!ptimer_criu_core_timers(c, &timers, &n, &err) && n != ptimer_criu_core_n_timers(c)) {
			fprintf(stderr, "%u timers read of %u\n", n, ptimer_criu_core_n_timers(c));
			abort();
		}
		free(timers);
		edit_and_reread(c);
		ptimer_criu_core_close(c);
	}
	ptimer_criu_thread_rseq(dir, 1, &rseq, &err);
	if (!ptimer_criu_pstree_read(dir, &tasks, &n, &err)) {
		for (uint32_t i = 0; i < n; i++)
			if (ptimer_criu_pstree_task(tasks, n, tasks[i].vpid) == NULL)
				abort();
		ptimer_criu_pstree_free(tasks, n);
	}
	fuzz_fd_check();
	return 0;
}
