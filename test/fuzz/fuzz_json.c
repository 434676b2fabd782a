// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: ptimer_image_from_json (the `ptimer encode` input) on
 * arbitrary bytes.  What it accepts must write as an image that reads back
 * the same (ptimer_image_write into a per-process directory under /dev/shm,
 * else /tmp, removed at exit or, after a crash, by a later run), and survive
 * JSON -> image -> JSON.
 */
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>

#include "test/fuzz/fuzz.h"

static char dir[64];

/* Remove directory d and the files in it. */
static void rm_tree(const char *d)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *dp = opendir(d);

	if (dp) {
		while ((e = readdir(dp)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
				snprintf(path, sizeof(path), "%s/%s", d, e->d_name);
				unlink(path);
			}
		closedir(dp);
	}
	rmdir(d);
}

static void rm_dir(void)
{
	rm_tree(dir);
}

/* A crashed run leaves its directory: remove those of processes gone. */
static void rm_stale(const char *base)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *dp = opendir(base);
	int pid;

	if (!dp)
		return;
	while ((e = readdir(dp)))
		if (sscanf(e->d_name, "ptimer-fuzz-%d", &pid) == 1 && pid > 0 &&
		    kill(pid, 0) && errno == ESRCH) {
			snprintf(path, sizeof(path), "%s/%s", base, e->d_name);
			rm_tree(path);
		}
	closedir(dp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1, fd_json = -1;
	struct ptimer_image img, back;
	struct ptimer_err err;
	char path[64], img_path[PATH_MAX];

	if (!dir[0]) {
		struct stat st;
		const char *base = !stat("/dev/shm", &st) && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";

		rm_stale(base);
		snprintf(dir, sizeof(dir), "%s/ptimer-fuzz-%d", base, (int)getpid());
		if (mkdir(dir, 0700) && errno != EEXIST) {
			perror(dir);
			abort();
		}
		atexit(rm_dir);
	}
	fuzz_memfd_init(&fd_json, "fuzz-json-back");
	fuzz_memfd_put(&fd, "fuzz-json", data, size, path, sizeof(path));
	if (!ptimer_image_from_json(path, &img, &err)) {
		snprintf(img_path, sizeof(img_path), "%s/x.img", dir);
		if (ptimer_image_write(img_path, &img, &err)) {
			fprintf(stderr, "fuzz: accepted JSON does not write: %s\n", err.msg);
			abort();
		}
		if (ptimer_image_read(img_path, &back, &err)) {
			fprintf(stderr, "fuzz: written image does not read back: %s\n", err.msg);
			abort();
		}
		fuzz_same_image(&img, &back, 0, "JSON -> image -> read");
		ptimer_image_free(&back);
		fuzz_json_roundtrip(&img, &fd_json);
		ptimer_image_free(&img);
	}
	fuzz_fd_check();
	return 0;
}
