// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: ptimer_image_read on arbitrary bytes.  A valid image must
 * also survive image -> JSON -> image unchanged.
 */
#include "test/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1, fd_json = -1;
	struct ptimer_image img;
	struct ptimer_err err;
	char path[64];

	fuzz_memfd_init(&fd_json, "fuzz-json-back");
	fuzz_memfd_put(&fd, "fuzz-image", data, size, path, sizeof(path));
	if (!ptimer_image_read(path, &img, &err)) {
		fuzz_json_roundtrip(&img, &fd_json);
		ptimer_image_free(&img);
	}
	fuzz_fd_check();
	return 0;
}
