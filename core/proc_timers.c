// SPDX-License-Identifier: MIT
/*
 * /proc/PID/timers and the NSpid bits of /proc/PID/status.
 *
 * The timers file is produced by fs/proc/base.c show_timer(): four lines a
 * timer, newest first.  Since kernel commit "posix-timers: Dont iterate /proc/$PID/timers with
 * sighand::siglock held" (Linux 6.15) it is
 * walked under RCU, so only a stopped process gives a consistent snapshot.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/proc_timers.h"
#include "images/image.h"
#include "lib/file.h"
#include "lib/cmp.h"

/* show_timer() prints at most ~100 bytes a timer. */
#define PROC_TIMERS_MAX	((size_t)PTIMER_IMG_MAX_TIMERS * 128)

/* Strict decimal: optional '-', digits, nothing after; within [lo, hi]. */
static int parse_long(const char *s, const char *end, long lo, long hi, long *out)
{
	char buf[32];
	size_t len = (size_t)(end - s);
	char *stop;
	long v;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (!(buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9')))
		return -EINVAL;
	errno = 0;
	v = strtol(buf, &stop, 10);
	if (errno || *stop || stop == buf || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "%px" (16 hex digits), older "%p" (hex, maybe "0x"), or "(null)". */
static int parse_pointer(const char *s, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	if (end - s == 6 && !memcmp(s, "(null)", 6)) {
		*out = 0;
		return 0;
	}
	if (end - s > 2 && s[0] == '0' && s[1] == 'x')
		s += 2;
	for (; s < end; s++, digits++) {
		int c = *s, d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	if (digits == 0 || digits > 16)
		return -EINVAL;
	*out = v;
	return 0;
}

/* The line must start with key; returns the value part or NULL. */
static const char *after_key(const char *line, const char *end, const char *key)
{
	size_t k = strlen(key);

	if ((size_t)(end - line) < k || memcmp(line, key, k))
		return NULL;
	return line + k;
}

static int parse_signal_line(const char *v, const char *end, struct ptimer_timer *t)
{
	const char *slash = memchr(v, '/', (size_t)(end - v));
	long signo;

	if (!slash || parse_long(v, slash, INT_MIN, INT_MAX, &signo))
		return -EINVAL;
	t->signo = (int32_t)signo;
	return parse_pointer(slash + 1, end, &t->sival);
}

static int parse_notify_line(const char *v, const char *end, struct ptimer_timer *t)
{
	static const struct { const char *name; int32_t notify; } kinds[] = {
		{ "signal/", PTIMER_SIGEV_SIGNAL },
		{ "none/", PTIMER_SIGEV_NONE },
		{ "thread/", PTIMER_SIGEV_THREAD },
	};
	const char *p = NULL;
	long tid;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		p = after_key(v, end, kinds[i].name);
		if (p) {
			t->sigev_notify = kinds[i].notify;
			break;
		}
	}
	if (!p)
		return -EINVAL;
	if (after_key(p, end, "tid.")) {
		t->sigev_notify |= PTIMER_SIGEV_THREAD_ID;
		p += 4;
	} else if (after_key(p, end, "pid.")) {
		p += 4;
	} else {
		return -EINVAL;
	}
	/* pid_nr_ns() gives 0 when the pid is not visible from this /proc. */
	if (parse_long(p, end, 0, INT_MAX, &tid))
		return -EINVAL;
	t->notify_tid = (int32_t)tid;
	return 0;
}

int ptimer_proc_parse_timers(const char *buf, size_t len, const char *what,
			     struct ptimer_timer **out, uint32_t *n, struct ptimer_err *err)
{
	static const char *const expect[] = { "ID: ", "signal: ", "notify: ", "ClockID: " };
	const char *p = buf, *end = buf + len;
	struct ptimer_timer *timers = NULL, *t = NULL;
	uint32_t count = 0, cap = 0;
	unsigned line_no = 0;
	int kind = 0, ret;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *v;
		long val;

		line_no++;
		if (!eol) {
			ret = ptimer_errf(err, EINVAL, "%s: line %u: truncated (no newline); the file "
					  "changed while read or is not /proc/PID/timers", what, line_no);
			goto fail;
		}
		v = after_key(p, eol, expect[kind]);
		if (!v) {
			ret = ptimer_errf(err, EINVAL, "%s: line %u: expected \"%s...\", got \"%.*s\"; "
					  "unknown /proc/PID/timers format", what, line_no, expect[kind],
					  (int)(eol - p > 60 ? 60 : eol - p), p);
			goto fail;
		}
		switch (kind) {
		case 0:
			if (count == cap) {
				uint32_t ncap = cap ? cap * 2 : 64;
				struct ptimer_timer *nt = realloc(timers, ncap * sizeof(*nt));

				if (!nt) {
					ret = ptimer_errf(err, ENOMEM, "%s: out of memory at %u timers", what, count);
					goto fail;
				}
				timers = nt;
				cap = ncap;
			}
			t = &timers[count++];
			memset(t, 0, sizeof(*t));
			ret = parse_long(v, eol, 0, INT_MAX, &val);
			t->timer_id = (int32_t)val;
			break;
		case 1:
			ret = parse_signal_line(v, eol, t);
			break;
		case 2:
			ret = parse_notify_line(v, eol, t);
			break;
		default:
			ret = parse_long(v, eol, INT_MIN, INT_MAX, &val);
			t->clock_id = (int32_t)val;
			break;
		}
		if (ret) {
			ret = ptimer_errf(err, EINVAL, "%s: line %u: bad value in \"%.*s\"", what, line_no,
					  (int)(eol - p > 60 ? 60 : eol - p), p);
			goto fail;
		}
		kind = (kind + 1) % 4;
		p = eol + 1;
	}
	if (kind != 0) {
		ret = ptimer_errf(err, EINVAL, "%s: ends inside the entry of timer %d (line %u)", what,
				  t->timer_id, line_no);
		goto fail;
	}
	*out = timers;
	*n = count;
	return 0;
fail:
	free(timers);
	return ret;
}

int ptimer_proc_read_timers_within(pid_t pid, size_t max, struct ptimer_timer **out, uint32_t *n, bool *longer,
				   struct ptimer_err *err)
{
	char path[64];
	size_t len = 0;
	char *buf = NULL;
	int ret;

	*out = NULL;
	*n = 0;
	*longer = false;
	snprintf(path, sizeof(path), "/proc/%d/timers", pid);
	ret = ptimer_file_read(path, NULL, max < PROC_TIMERS_MAX ? max : PROC_TIMERS_MAX, 0, &buf, &len, err);
	if (ret == -EFBIG && max < PROC_TIMERS_MAX) {
		*longer = true;
		return 0;
	}
	if (ret == -ENOENT && access("/proc/self/timers", F_OK))
		return ptimer_errf(err, ret, "%s: the kernel has no /proc/PID/timers "
				   "(needs CONFIG_CHECKPOINT_RESTORE)", path);
	if (ret)
		return ret;
	ret = ptimer_proc_parse_timers(buf, len, path, out, n, err);
	free(buf);
	return ret;
}

int ptimer_proc_read_timers(pid_t pid, struct ptimer_timer **out, uint32_t *n, struct ptimer_err *err)
{
	bool longer;

	return ptimer_proc_read_timers_within(pid, PROC_TIMERS_MAX, out, n, &longer, err);
}

