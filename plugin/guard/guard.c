// SPDX-License-Identifier: MIT
/*
 * The overlay's guard (guard.h), in raw system calls: no libc, no errno,
 * nothing that needs the dynamic loader, a thread pointer or a heap.
 */
#include "plugin/guard/guard.h"
#include "plugin/guard/sys.h"

static bool g_prefix(const char *s, const char *p)
{
	while (*p)
		if (*s++ != *p++)
			return false;
	return true;
}

static bool dot_or_dotdot(const char *n)
{
	return n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]));
}

/* dst = a then b, within len bytes (cut, NUL-terminated) */
static void g_cat(char *dst, size_t len, const char *a, const char *b)
{
	size_t at = 0;

	while (*a && at + 1 < len)
		dst[at++] = *a++;
	while (*b && at + 1 < len)
		dst[at++] = *b++;
	dst[at] = 0;
}

static int set_out(struct guard_links *out, int ret, int what, const char *name)
{
	out->ret = ret;
	out->what = what;
	g_cat(out->name, sizeof(out->name), name ? name : "", "");
	return ret;
}

int dir_each(int dirfd, const char *name, int (*fn)(int fd, const char *name, unsigned type, void *arg), void *arg)
{
	/* a description of its own: its offset is not the caller's */
	long fd = g_openat(dirfd, name, G_O_RDONLY | G_O_DIRECTORY | G_O_NOFOLLOW | G_O_CLOEXEC), n;
	char buf[4096] __attribute__((aligned(8)));
	int ret = 0;

	if (fd < 0)
		return (int)fd;
	while (!ret && (n = g_getdents64((int)fd, buf, sizeof(buf))) > 0)
		for (long at = 0; !ret && at < n;) {
			struct g_dirent64 *de = (struct g_dirent64 *)(buf + at);

			at += de->d_reclen;
			if (!dot_or_dotdot(de->d_name))
				ret = fn((int)fd, de->d_name, de->d_type, arg);
		}
	g_close((int)fd);
	return ret ? ret : n < 0 ? (int)n : 0;
}

struct link_arg {
	int dfd, ovfd;
	bool inject;
	struct guard_links *out;
};

static int link_one(int fd, const char *name, unsigned type, void *arg)
{
	struct link_arg *a = arg;
	char target[300];
	uint32_t mode = 0;
	long r;

	(void)fd;
	if (g_prefix(name, OVERLAY_PREFIX))
		return 0;
	if (a->inject)
		return set_out(a->out, -G_EIO, GL_INJECTED, name);
	/* d_type where the file system gives it: one call a file */
	if (type == G_DT_REG ||
	    (type == G_DT_UNKNOWN && !g_fstatat_mode(a->dfd, name, &mode) && (mode & G_S_IFMT) == G_S_IFREG)) {
		r = g_linkat(a->dfd, name, a->ovfd, name);
		if (!r || r == -G_EEXIST)
			return 0;
	}
	g_cat(target, sizeof(target), "../", name);
	r = g_symlinkat(target, a->ovfd, name);
	return r && r != -G_EEXIST ? set_out(a->out, (int)r, GL_LINK, name) : 0;
}

int ov_link_all(int dfd, int ovfd, bool inject, struct guard_links *out)
{
	struct link_arg a = { dfd, ovfd, inject, out };
	int ret;

	set_out(out, 0, GL_OK, NULL);
	ret = dir_each(dfd, ".", link_one, &a);
	/* fn's failures are said in out already; the listing's not */
	return ret && !out->ret ? set_out(out, ret, GL_LIST, NULL) : ret;
}

void close_all_but(const int *keep, int n)
{
	unsigned int lo = 0;

	for (;;) {
		unsigned int next = ~0u;

		/* the lowest kept descriptor at or above lo */
		for (int i = 0; i < n; i++)
			if (keep[i] >= 0 && (unsigned int)keep[i] >= lo && (unsigned int)keep[i] < next)
				next = (unsigned int)keep[i];
		if (next > lo && g_close_range(lo, next - 1) < 0) {
			uint64_t max = g_nofile();

			for (uint64_t fd = lo; fd < next && fd < max; fd++)
				g_close((int)fd);
		}
		if (next == ~0u)
			break;
		lo = next + 1;
	}
}

static int unlink_one(int fd, const char *name, unsigned type, void *arg)
{
	(void)type;
	if (!g_unlinkat(fd, name, 0))
		*(bool *)arg = true;
	return 0;
}

void ov_remove(int dirfd, const char *name)
{
	/* again from the start while a pass removed something: a listing
	 * read while its directory changes may skip an entry */
	for (int pass = 0; pass < 64; pass++) {
		bool removed = false;

		if (dir_each(dirfd, name, unlink_one, &removed) || !removed)
			break;
	}
	g_unlinkat(dirfd, name, G_AT_REMOVEDIR);
}

/*
 * Is the overlay dirfd/name, made or about to be made by a criu that died,
 * left by it?  Its .lock free, or no .lock (criu died before it made it).
 * Held: another live restore's overlay of the same name (a name that
 * restore had already made when this criu chose it).
 */
static bool ov_orphan(int dirfd, const char *name)
{
	struct g_flock fl = { .l_type = G_F_WRLCK };
	char lock[300];
	long fd, r;

	g_cat(lock, sizeof(lock), name, "/.lock");
	fd = g_openat(dirfd, lock, G_O_RDWR | G_O_NOFOLLOW | G_O_CLOEXEC);
	if (fd < 0)
		return true;
	r = g_fcntl((int)fd, G_F_OFD_SETLK, (long)&fl);
	g_close((int)fd);
	return !r;
}

static bool criu_gone(int criu)
{
	return g_kill(criu, 0) == -G_ESRCH;
}

/* Until criu is gone (its pidfd readable, or kill(2) says ESRCH), at
 * most 2 s. */
static void gone_wait(int criu, int pfd)
{
	for (int i = 0; i < 200; i++) {
		/* fresh each time: ppoll(2) writes the time left back */
		struct g_timespec tick = { 0, 10 * 1000 * 1000 };
		struct g_pollfd pf = { .fd = pfd, .events = G_POLLIN };

		if (pfd >= 0 ? g_ppoll(&pf, 1, &tick) > 0 : criu_gone(criu))
			return;
		if (pfd < 0)
			g_nanosleep(&tick);
	}
}

void guard_loop(int criu, int pfd, int rd, int wr, int dirfd, const char *ov_name, unsigned flags)
{
	struct g_pollfd pf[2] = { { .fd = rd, .events = G_POLLIN }, { .fd = pfd, .events = G_POLLIN } };
	bool made = false;
	char c;

	for (;;) {
		/* fresh each time: ppoll(2) writes the time left back */
		struct g_timespec tick = { 0, 20 * 1000 * 1000 };
		long n = g_ppoll(pf, pfd >= 0 ? 2 : 1, pfd >= 0 ? NULL : &tick);

		if (n == -G_EINTR)
			continue;
		if (n > 0 && (pf[0].revents & (G_POLLIN | G_POLLHUP))) {
			if (g_read(rd, &c, 1) != 1)
				break;		/* every write end closed: criu is gone */
			if (!c)
				g_exit(0);	/* exit(RESTORE) is done with it, or it
						   is another restore's (EEXIST) */
			if (c == 'M') {
				/* criu made it and links it itself */
				made = true;
				continue;
			}
			if (c == 'm') {
				/*
				 * 'm': criu made it and holds its .lock; its
				 * links now, while criu goes on reading the
				 * images on another CPU (2,400 links for a
				 * tree of 300: about 11 ms).  criu waits for
				 * the outcome before it reads a file of the
				 * overlay (overlay_switch).
				 */
				struct guard_links out;
				long ovfd = g_openat(dirfd, ov_name, G_O_RDONLY | G_O_DIRECTORY | G_O_NOFOLLOW | G_O_CLOEXEC);

				made = true;
				if (ovfd < 0) {
					set_out(&out, (int)ovfd, GL_OPEN, NULL);
				} else {
					ov_link_all(dirfd, (int)ovfd, flags & GUARD_FAIL_LINKS, &out);
					g_close((int)ovfd);
				}
				/* criu gone already: the poll sees it */
				g_write(wr, &out, sizeof(out));
				continue;
			}
			/* 'r': criu reads its own directory again
			 * (overlay_release): remove the overlay now, on this
			 * CPU, and say so */
			ov_remove(dirfd, ov_name);
			g_write(wr, "", 1);
			continue;
		}
		if (pfd >= 0 ? n > 0 && (pf[1].revents & G_POLLIN) : criu_gone(criu))
			break;
	}
	/* criu died: what it made of the overlay, if anything (told or
	 * not: killed between its mkdir and its word, when its .lock is
	 * free only once criu is gone: a kernel before 5.7 may end the pipe
	 * before it drops the lock) */
	if (!made)
		gone_wait(criu, pfd);
	if (made || ov_orphan(dirfd, ov_name))
		ov_remove(dirfd, ov_name);
	g_exit(0);
}
