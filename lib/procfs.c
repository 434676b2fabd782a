// SPDX-License-Identifier: MIT
/* Readers of /proc/PID/status and /proc/PID/stat (lib/procfs.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/file.h"
#include "lib/procfs.h"

#define PROC_SMALL_MAX	(64u * 1024u)	/* status and stat are a few KiB */

static int read_small(const char *path, char **buf, size_t *len)
{
	int ret = ptimer_file_read(path, NULL, PROC_SMALL_MAX, 0, buf, len, NULL);

	return ret == -ESRCH ? -ENOENT : ret;
}

static int status_path(char *path, size_t len, pid_t pid, pid_t tid)
{
	char who[32];

	if (pid > 0)
		snprintf(who, sizeof(who), "%d", pid);
	else
		snprintf(who, sizeof(who), "self");
	if (tid > 0)
		return snprintf(path, len, "/proc/%s/task/%d/status", who, tid);
	return snprintf(path, len, "/proc/%s/status", who);
}

int ptimer_proc_status(pid_t pid, pid_t tid, const char *key, char *out, size_t out_len)
{
	size_t klen = strlen(key), len;
	char path[96], *buf, *line;
	int ret;

	status_path(path, sizeof(path), pid, tid);
	ret = read_small(path, &buf, &len);
	if (ret)
		return ret;
	ret = -ENODATA;
	for (line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *v;
		size_t n;

		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		v = line + klen + 1;
		v += strspn(v, " \t");
		n = strcspn(v, "\n");
		if (out_len) {
			if (n >= out_len)
				n = out_len - 1;
			memcpy(out, v, n);
			out[n] = '\0';
		}
		ret = 0;
		break;
	}
	free(buf);
	return ret;
}

int ptimer_proc_status_longs(pid_t pid, pid_t tid, const char *key, long *v, int max)
{
	char text[1024], *p, *stop;
	int n = 0, ret;

	ret = ptimer_proc_status(pid, tid, key, text, sizeof(text));
	if (ret)
		return ret;
	for (p = text;; p = stop) {
		long x = strtol(p, &stop, 10);

		if (stop == p)
			break;
		if (n < max)
			v[n] = x;
		n++;
	}
	return n;
}

pid_t ptimer_proc_tgid(pid_t tid)
{
	long v;
	int n = ptimer_proc_status_longs(tid, 0, "Tgid", &v, 1);

	if (n < 0)
		return n == -ENODATA ? -ENOENT : n;
	return n ? (pid_t)v : -ENOENT;
}

pid_t ptimer_proc_nspid(pid_t pid, pid_t tid)
{
	long v[32];	/* MAX_PID_NS_LEVEL (include/linux/pid_namespace.h) */
	int n = ptimer_proc_status_longs(pid, tid, "NSpid", v, 32);

	if (n == -ENODATA || n == 0)
		return -EINVAL;
	if (n < 0)
		return -ENOENT;
	return (pid_t)v[(n > 32 ? 32 : n) - 1];
}

int ptimer_proc_stat(pid_t pid, pid_t tid, struct ptimer_proc_stat *st)
{
	char path[64], *buf, *p;
	size_t len;
	int ret;

	if (tid > 0)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	ret = read_small(path, &buf, &len);
	if (ret)
		return ret;
	if (!len) {
		free(buf);
		return -ENOENT;
	}
	p = strrchr(buf, ')');	/* comm may hold spaces and parens */
	/* ") S ppid pgrp session tty_nr tpgid flags" */
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &st->state, &st->flags) != 2)
		ret = -EINVAL;
	free(buf);
	return ret;
}

/* SIGKILL's bit in the SigPnd:/ShdPnd: masks of /proc/PID/status (bit signo - 1). */
static bool sigkill_pending(pid_t pid, pid_t tid, const char *key)
{
	char buf[32];

	return !ptimer_proc_status(pid, tid, key, buf, sizeof(buf)) &&
	       (strtoull(buf, NULL, 16) & (1ull << (SIGKILL - 1)));
}

bool ptimer_thread_exiting(pid_t pid, pid_t tid)
{
	struct ptimer_proc_stat st;
	int r = ptimer_proc_stat(pid, tid, &st);

	if (r == -ENOENT)
		return true;	/* gone, or the kernel had nothing more to say: released */
	if (r)
		return false;
	return st.state == 'Z' || st.state == 'X' || (st.flags & PTIMER_PF_EXITING) ||
	       sigkill_pending(pid, tid, "SigPnd") || sigkill_pending(pid, tid, "ShdPnd");
}
