/* SPDX-License-Identifier: MIT */
/*
 * The overlay's guard (plugin/overlay.c says what the overlay is): the
 * process that removes the overlay when criu dies before it does, and
 * links criu's images into it while criu reads on.  Written once, with
 * raw system calls only (plugin/guard/sys.h), so that it runs both as the
 * small static program criu executes (plugin/guard/main.c, embedded in
 * the plugin: no dynamic loader, no library to load) and in a fork of
 * criu where that program cannot be run; criu's own links and removals
 * (overlay.c) use the same functions.
 */
#ifndef PTIMER_GUARD_H
#define PTIMER_GUARD_H

#include <stdbool.h>
#include <stdint.h>

/* The overlay's name: this and six random letters (overlay.c) */
#define OVERLAY_PREFIX ".ptimer-restore-"

/* What the guard sends criu once every link is made (ov_link_all's outcome);
 * criu words the message (overlay.c: links_msg). */
struct guard_links {
	int32_t ret;		/* 0 or -errno */
	int32_t what;		/* GL_* */
	char name[256];		/* the entry of the image directory, GL_LINK */
};
enum { GL_OK, GL_OPEN, GL_LIST, GL_LINK, GL_INJECTED };

/* The guard's flags (its environment, PTIMER_GUARD; main.c): failures
 * injected by the test build (core/fault.h), passed by criu. */
#define GUARD_FAIL_LINKS	1u	/* "overlay-links" */
#define GUARD_DIES		2u	/* "guard-dies": exit 3 at once */

/*
 * Each entry of the directory dirfd/name ("." : dirfd itself) but "." and
 * "..", from the start, through a description of its own and a listing
 * buffer on the stack (no malloc: a fresh heap page costs a fault):
 * fn(fd, entry, d_type, arg) until it returns nonzero.  fd is the listed
 * directory's.  Returns fn's nonzero value, 0 at the end, or -errno (the
 * directory cannot be opened or listed).
 */
int dir_each(int dirfd, const char *name, int (*fn)(int fd, const char *name, unsigned type, void *arg),
	     void *arg);

/*
 * Link every entry of the image directory dfd but overlays (names that
 * start with OVERLAY_PREFIX) into the overlay ovfd: a
 * regular file as a hard link, anything else (the parent link of an
 * incremental dump, a symbolic link, a directory) or a file on a file
 * system without hard links as a symbolic link "../NAME", which resolves
 * as criu would have resolved NAME.  A name the overlay has already is a
 * core image without timers that ptimer put there (rename(2) over a link,
 * so never through it): kept.  inject: fail at the first entry
 * (GL_INJECTED).  Returns 0 or -errno, *out says where.
 */
int ov_link_all(int dfd, int ovfd, bool inject, struct guard_links *out);

/*
 * Close every descriptor but the n of keep (criu's service fds sit near
 * its RLIMIT_NOFILE): close_range(2), Linux 5.9, else one by one up to the
 * limit.  System calls only: run also by a child that shares criu's
 * memory and thread pointer (overlay.c: guard_exec_child).
 */
void close_all_but(const int *keep, int n);

/* Remove dirfd/name, a directory of files only (an overlay). */
void ov_remove(int dirfd, const char *name);

/*
 * The guard's loop: one byte at a time from criu on rd ('m': the overlay
 * is made, link it and send struct guard_links on wr; 'M': made, criu
 * links it; 'r': criu reads its own directory again, remove the overlay
 * and send one byte; 0: done, exit), until criu's end (its pidfd pfd
 * readable, Linux 5.3; -1: kill(criu, 0) every 20 ms), when it removes
 * what criu made of dirfd/ov_name.  Never returns.
 */
__attribute__((noreturn)) void guard_loop(int criu, int pfd, int rd, int wr, int dirfd, const char *ov_name,
					  unsigned flags);

#endif
