// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: ptimer_image_from_json (the `ptimer encode` input) on
 * arbitrary bytes.  What it accepts must write as an image
 * (ptimer_image_write, into a per-process directory under /dev/shm, removed
 * at exit) that reads back the same, and survive JSON -> image -> JSON.
 */
#include <limits.h>
#include <sys/stat.h>

#include "test/fuzz/fuzz.h"

static char dir[64];

static void rm_dir(void)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/x.img", dir);
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1, fd_json = -1;
	struct ptimer_image img, back;
	struct ptimer_err err;
	char path[64], img_path[PATH_MAX];

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/dev/shm/ptimer-fuzz-%d", (int)getpid());
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
