/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the libFuzzer targets (test/fuzz/fuzz_*.c).
 *
 * The image and JSON readers take a path, so the input goes into one memfd
 * per process, made once and rewritten for every input, and the readers get
 * /proc/self/fd/N: no files on disk, nothing to clean up.  fuzz_fd_check()
 * turns a descriptor leaked by the code under test into a crash.
 */
#ifndef PTIMER_FUZZ_H
#define PTIMER_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "images/image.h"

/* Create memfd *fdp ("name") unless done; every target makes all of its
 * memfds before fuzz_fd_check() first runs. */
static inline void fuzz_memfd_init(int *fdp, const char *name)
{
	if (*fdp < 0) {
		*fdp = memfd_create(name, MFD_CLOEXEC);
		if (*fdp < 0) {
			perror("memfd_create");
			abort();
		}
	}
}

/* Write data into memfd *fdp (made by fuzz_memfd_init); its path into path. */
static inline void fuzz_memfd_put(int *fdp, const char *name, const void *data, size_t size,
				  char *path, size_t len)
{
	fuzz_memfd_init(fdp, name);
	if (ftruncate(*fdp, 0) || (size && pwrite(*fdp, data, size, 0) != (ssize_t)size)) {
		perror("memfd write");
		abort();
	}
	snprintf(path, len, "/proc/self/fd/%d", *fdp);
}

static inline int fuzz_lowest_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		perror("open /dev/null");
		abort();
	}
	close(fd);
	return fd;
}

/* Abort when the lowest free descriptor moved since the first call (a leak).
 * libFuzzer's own threads open files now and then, so a move must last
 * 100 ms to count: a leaked descriptor stays. */
static inline void fuzz_fd_check(void)
{
	static int first = -1;
	int fd = fuzz_lowest_free_fd();

	if (first < 0)
		first = fd;
	if (fd == first)
		return;
	usleep(100 * 1000);
	fd = fuzz_lowest_free_fd();
	if (fd != first) {
		char link[64], target[256] = "?";
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", first);
		n = readlink(link, target, sizeof(target) - 1);
		target[n > 0 ? n : 1] = '\0';
		/* The sanitizer's symbolizer (libFuzzer's NEW_FUNC lines) keeps
		 * pipes to llvm-symbolizer; the code under test opens files only. */
		if (!strncmp(target, "pipe:", 5)) {
			first = fd;
			return;
		}
		fprintf(stderr, "fuzz: file descriptor leak: fd %d (%s) left open\n", first, target);
		abort();
	}
}

/* Abort unless a and b hold the same timers and threads (version and
 * criu_mode only when with_meta). */
static inline void fuzz_same_image(const struct ptimer_image *a, const struct ptimer_image *b,
				   int with_meta, const char *how)
{
	uint32_t i;

	if (a->pid != b->pid || a->n_timers != b->n_timers || a->n_threads != b->n_threads ||
	    (with_meta && (a->version != b->version || a->criu_mode != b->criu_mode))) {
		fprintf(stderr, "fuzz: %s changed the header\n", how);
		abort();
	}
	for (i = 0; i < a->n_timers; i++) {
		const struct ptimer_timer *x = &a->timers[i], *y = &b->timers[i];

		if (x->timer_id != y->timer_id || x->clock_id != y->clock_id ||
		    x->sigev_notify != y->sigev_notify || x->signo != y->signo ||
		    x->sival != y->sival || x->notify_tid != y->notify_tid ||
		    x->overrun != y->overrun || x->it_value.sec != y->it_value.sec ||
		    x->it_value.nsec != y->it_value.nsec || x->it_interval.sec != y->it_interval.sec ||
		    x->it_interval.nsec != y->it_interval.nsec) {
			fprintf(stderr, "fuzz: %s changed timer %u\n", how, i);
			abort();
		}
	}
	for (i = 0; i < a->n_threads; i++) {
		const struct ptimer_thread *x = &a->threads[i], *y = &b->threads[i];

		if (x->tid != y->tid || x->rseq_abi_size != y->rseq_abi_size ||
		    x->rseq_abi_pointer != y->rseq_abi_pointer ||
		    x->rseq_signature != y->rseq_signature || x->slice_ext != y->slice_ext ||
		    x->slice_ctrl != y->slice_ctrl) {
			fprintf(stderr, "fuzz: %s changed thread %u\n", how, i);
			abort();
		}
	}
}

/* img -> JSON text -> ptimer_image_from_json (through memfd *fdp); abort
 * unless it reads back the same. */
static inline void fuzz_json_roundtrip(const struct ptimer_image *img, int *fdp)
{
	struct ptimer_image back;
	struct ptimer_err err;
	char path[64], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f || ptimer_image_to_json(img, f, &err)) {
		fprintf(stderr, "fuzz: ptimer_image_to_json failed\n");
		abort();
	}
	fclose(f);
	fuzz_memfd_put(fdp, "fuzz-json-back", text, len, path, sizeof(path));
	free(text);
	if (ptimer_image_from_json(path, &back, &err)) {
		fprintf(stderr, "fuzz: JSON of a valid image does not read back: %s\n", err.msg);
		abort();
	}
	fuzz_same_image(img, &back, 0, "image -> JSON -> image");
	ptimer_image_free(&back);
}

#endif
