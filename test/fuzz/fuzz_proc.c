// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: ptimer_proc_parse_timers on arbitrary text.  The input
 * is copied into a buffer of exactly its size so ASan sees any read past it.
 * Accepted input must give timers whose fields are in the ranges the parser
 * promises.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/proc_timers.h"
#include "test/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ptimer_timer *timers = NULL;
	struct ptimer_err err;
	char *buf = malloc(size ? size : 1);
	uint32_t n = 0, i;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (!ptimer_proc_parse_timers(buf, size, "fuzz", &timers, &n, &err)) {
		for (i = 0; i < n; i++) {
			if (timers[i].timer_id < 0 || timers[i].notify_tid < 0 ||
			    timers[i].it_value.sec || timers[i].it_interval.sec) {
				fprintf(stderr, "fuzz: timer %u out of range\n", i);
				abort();
			}
		}
		free(timers);
	}
	free(buf);
	return 0;
}
