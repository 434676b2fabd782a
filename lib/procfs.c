// SPDX-License-Identifier: MIT
/* The readers of /proc (lib/procfs.h). */
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cmp.h"
#include "lib/file.h"
#include "lib/procfs.h"

#define PROC_SMALL_MAX	(64u * 1024u)	/* status and stat are a few KiB */

#define PROC_SMALL_ONE	4096u		/* what one read takes at first */

/*
 * A whole /proc/PID/{status,stat,schedstat}: each is made by one show()
 * into a seq_file buffer grown until it fits (fs/proc/base.c
 * proc_single_show(), fs/seq_file.c seq_read_iter()), so a read that
 * returns less than it asked for has returned all of it.  One open, one
 * read, one close; a file that fills the first read (a status with very
 * long lists) is read again in full.  *buf: malloc'd, NUL-terminated.
 * Returns 0 or -errno (-ENOENT for a process or thread that is gone).
 */
static int read_small(const char *path, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;
	char *b;
	ssize_t r;

	if (fd < 0)
		return errno == ESRCH ? -ENOENT : -errno;
	b = malloc(PROC_SMALL_ONE);
	do
		r = b ? read(fd, b, PROC_SMALL_ONE - 1) : -1;
	while (r < 0 && b && errno == EINTR);
	ret = !b ? -ENOMEM : r < 0 ? -errno : 0;
	close(fd);
	if (!ret && (size_t)r < PROC_SMALL_ONE - 1) {
		b[r] = '\0';
		*buf = b;
		*len = (size_t)r;
		return 0;
	}
	free(b);
	if (ret)
		return ret == -ESRCH ? -ENOENT : ret;
	ret = ptimer_file_read(path, NULL, PROC_SMALL_MAX, 0, buf, len, NULL);
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

int ptimer_proc_status_keys(pid_t pid, pid_t tid, struct ptimer_status_key *keys, int n)
{
	char path[96], *buf, *line;
	int ret, found = 0;
	size_t len;

	for (int k = 0; k < n; k++)
		keys[k].found = false;
	status_path(path, sizeof(path), pid, tid);
	ret = read_small(path, &buf, &len);
	if (ret)
		return ret;
	for (line = buf; line && *line && found < n; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		for (int k = 0; k < n; k++) {
			struct ptimer_status_key *w = &keys[k];
			size_t klen = strlen(w->key), m;
			const char *v;

			if (w->found || strncmp(line, w->key, klen) || line[klen] != ':')
				continue;
			v = line + klen + 1;
			v += strspn(v, " \t");
			m = strcspn(v, "\n");
			if (w->len) {
				if (m >= w->len)
					m = w->len - 1;
				memcpy(w->out, v, m);
				w->out[m] = '\0';
			}
			w->found = true;
			found++;
			break;
		}
	}
	free(buf);
	return found;
}

int ptimer_proc_status(pid_t pid, pid_t tid, const char *key, char *out, size_t out_len)
{
	struct ptimer_status_key k = { .key = key, .out = out, .len = out_len };
	int ret = ptimer_proc_status_keys(pid, tid, &k, 1);

	return ret < 0 ? ret : ret ? 0 : -ENODATA;
}

int ptimer_proc_runtime(pid_t pid, pid_t tid, unsigned long long *ns)
{
	unsigned long long wait;
	unsigned long slices;
	char path[96], *buf;
	size_t len;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	ret = read_small(path, &buf, &len);
	if (ret)
		return ret;
	if (sscanf(buf, "%llu %llu %lu", ns, &wait, &slices) != 3)
		ret = -EINVAL;
	else if (!*ns && !wait && !slices)
		ret = -ENODATA;
	free(buf);
	return ret;
}

int ptimer_proc_same_pidns(pid_t pid)
{
	/* a process's own pid namespace never changes: looked up once (a
	 * child forked after unshare(CLONE_NEWPID) has a pid of its own) */
	static pid_t self_pid;
	static struct stat self;
	struct stat a;
	char path[64];

	if (self_pid != getpid()) {
		if (stat("/proc/self/ns/pid", &self))
			return -errno;
		self_pid = getpid();
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", pid);
	if (stat(path, &a))
		return -errno;
	return a.st_dev == self.st_dev && a.st_ino == self.st_ino;
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

	if (r == -ENOENT || r == -ESRCH)
		return true;	/* gone, or the kernel had nothing more to say: released */
	if (r)
		return false;
	return st.state == 'Z' || st.state == 'X' || (st.flags & PTIMER_PF_EXITING) ||
	       sigkill_pending(pid, tid, "SigPnd") || sigkill_pending(pid, tid, "ShdPnd");
}

int ptimer_proc_threads(pid_t pid, pid_t **tids)
{
	char path[64];
	struct dirent *de;
	pid_t *v = NULL;
	int n = 0, cap = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *stop;
		long tid = strtol(de->d_name, &stop, 10);

		if (*stop || tid <= 0)
			continue;
		if (n == cap) {
			pid_t *nv = realloc(v, (size_t)(cap = cap ? cap * 2 : 16) * sizeof(*v));

			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = (pid_t)tid;
	}
	closedir(d);
	if (n == 0) {
		free(v);
		return -ESRCH;
	}
	qsort(v, (size_t)n, sizeof(*v), ptimer_cmp_int);
	/* Leader first. */
	for (int i = 0; i < n; i++) {
		if (v[i] == pid) {
			v[i] = v[0];
			v[0] = pid;
			break;
		}
	}
	*tids = v;
	return n;
}

int ptimer_proc_sigmasks(pid_t pid, pid_t *tgid, uint64_t *caught, uint64_t *ignored, int *seccomp)
{
	char cgt[32], ign[32], tg[32], sc[16];
	struct ptimer_status_key k[] = {
		{ .key = "SigCgt", .out = cgt, .len = sizeof(cgt) },
		{ .key = "SigIgn", .out = ign, .len = sizeof(ign) },
		{ .key = "Tgid", .out = tg, .len = sizeof(tg) },
		{ .key = "Seccomp", .out = sc, .len = sizeof(sc) },
	};
	int ret = ptimer_proc_status_keys(pid, 0, k, 4);

	if (ret < 0)
		return ret;
	if (!k[0].found || !k[1].found || !k[2].found)
		return -EPROTO;
	*caught = strtoull(cgt, NULL, 16);
	*ignored = strtoull(ign, NULL, 16);
	if (tgid)
		*tgid = (pid_t)strtol(tg, NULL, 10);
	if (seccomp)	/* no line: a kernel without CONFIG_SECCOMP */
		*seccomp = k[3].found ? (int)strtol(sc, NULL, 10) : 0;
	return 0;
}

/* One line of maps ("start-end perms offset dev inode   name") into *m, its
 * name pointing into line; false for a line that does not parse. */
static bool map_line(char *line, struct ptimer_proc_map *m)
{
	unsigned long long start, end, ino;
	int at = 0;

	memset(m, 0, sizeof(*m));
	m->name = "";
	if (sscanf(line, "%llx-%llx %7s %*x %*s %llu %n", &start, &end, m->perms, &ino, &at) < 4)
		return false;
	m->start = start;
	m->end = end;
	m->inode = ino;
	if (at > 0)
		m->name = line + at;
	return true;
}

int ptimer_proc_maps_each(pid_t tid, int (*fn)(const struct ptimer_proc_map *m, void *ctx), void *ctx)
{
	char path[64], line[PATH_MAX + 128];
	int ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		struct ptimer_proc_map m;

		line[strcspn(line, "\n")] = '\0';
		if (map_line(line, &m))
			ret = fn(&m, ctx);
	}
	fclose(f);
	return ret;
}

int ptimer_proc_maps_text(pid_t tid, char **text)
{
	char path[64];
	size_t len = 0, cap = 16384;
	char *buf = malloc(cap);
	int fd, ret = 0;

	*text = NULL;
	if (!buf)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/maps", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		free(buf);
		return ret;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *v = realloc(buf, cap *= 2);

			if (!v) {
				ret = -ENOMEM;
				break;
			}
			buf = v;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			ret = -errno;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (ret) {
		free(buf);
		return ret;
	}
	buf[len] = 0;
	*text = buf;
	return 0;
}

int ptimer_proc_maps_walk(const char *text, int (*fn)(const struct ptimer_proc_map *m, void *ctx), void *ctx)
{
	char line[PATH_MAX + 128];
	int ret = 0;

	while (!ret && text && *text) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text);
		struct ptimer_proc_map m;

		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, text, n);
		line[n] = 0;
		if (map_line(line, &m))
			ret = fn(&m, ctx);
		text = nl ? nl + 1 : text + n;
	}
	return ret;
}

void ptimer_proc_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	snprintf(buf, len, "?");
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

int ptimer_proc_owner(pid_t pid, uid_t *uid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &st))
		return -errno;
	*uid = st.st_uid;
	return 0;
}

int ptimer_yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int s = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &s) != 1)
		s = -1;
	fclose(f);
	return s;
}

void ptimer_proc_fd_path(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

int ptimer_proc_self_exe(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);

	if (n < 0)
		return -errno;
	if ((size_t)n >= len - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}
