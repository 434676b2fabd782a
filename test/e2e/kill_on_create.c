/* SPDX-License-Identifier: MIT */
/*
 * kill_on_create - SIGKILL a process the moment a name with a given prefix
 * appears in a directory: the instant of a criu restore when the plugin's
 * overlay comes into being (test/cases/failed-restore).
 *
 *   kill_on_create DIR PREFIX PIDFILE READY
 *	watches DIR (inotify: IN_CREATE, IN_MOVED_TO), then creates the
 *	file READY; at the first entry of DIR whose name starts with
 *	PREFIX it reads a pid from PIDFILE and sends it SIGKILL, prints
 *	"killed PID at NAME" and exits 0.  Exit 1 on an error (message on
 *	stderr), 2 after 60 s without such an entry.
 *
 * inotify reports the entry as its directory entry is made, before the
 * creator's next system call returns to it, so the kill lands in the
 * instants right after, before the overlay's .lock exists.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

static pid_t read_pid(const char *path)
{
	FILE *f = fopen(path, "re");
	long pid = 0;

	if (f) {
		if (fscanf(f, "%ld", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	return (pid_t)pid;
}

int main(int argc, char **argv)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd pfd;
	int fd, rfd;

	if (argc != 5) {
		fprintf(stderr, "usage: kill_on_create DIR PREFIX PIDFILE READY\n");
		return 1;
	}
	fd = inotify_init1(IN_CLOEXEC);
	if (fd < 0 || inotify_add_watch(fd, argv[1], IN_CREATE | IN_MOVED_TO) < 0) {
		fprintf(stderr, "kill_on_create: cannot watch %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	rfd = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (rfd < 0) {
		fprintf(stderr, "kill_on_create: cannot create %s: %s\n", argv[4], strerror(errno));
		return 1;
	}
	close(rfd);
	pfd.fd = fd;
	pfd.events = POLLIN;
	for (;;) {
		ssize_t n;
		int r = poll(&pfd, 1, 60000);

		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			fprintf(stderr, "kill_on_create: no %s* in %s within 60 s\n", argv[2], argv[1]);
			return 2;
		}
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "kill_on_create: reading inotify events: %s\n", strerror(errno));
			return 1;
		}
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			if (ev->len && !strncmp(ev->name, argv[2], strlen(argv[2]))) {
				pid_t pid = read_pid(argv[3]);

				if (pid <= 0 || kill(pid, SIGKILL)) {
					fprintf(stderr, "kill_on_create: cannot kill the pid in %s (%d): %s\n", argv[3],
						(int)pid, pid <= 0 ? "no pid" : strerror(errno));
					return 1;
				}
				printf("killed %d at %s\n", (int)pid, ev->name);
				return 0;
			}
			p += sizeof(*ev) + ev->len;
		}
	}
}
