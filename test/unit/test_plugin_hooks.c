// SPDX-License-Identifier: MIT
/*
 * The CRIU plugin's answers to criu's hooks (plugin/hooks.c),
 * loaded as criu loads it (dlopen of ptimer_plugin.so beside this program's
 * directory), with this program standing in for the criu binary's exports
 * (print_on_level, criu_get_image_dir: linked -rdynamic).  criu's
 * run_plugins() stops at the first handler whose answer is not -ENOTSUP
 * (criu/include/plugin.h), so a hook that did nothing must answer -ENOTSUP:
 * a pid <= 0 (criu-dev's calls for the whole tree), a task without an image.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criu/criu-plugin.h>

#include "test/lib/tst.h"

static int image_fd = -1;
static int errors_logged;

/* criu/log.c's, as the plugin calls it; level 1 is an error */
void print_on_level(unsigned int loglevel, const char *format, ...)
{
	va_list ap;

	if (loglevel == 1)
		errors_logged++;
	printf("# criu log %u: ", loglevel);
	va_start(ap, format);
	vprintf(format, ap);
	va_end(ap);
}

int criu_get_image_dir(void)
{
	return image_fd;
}

static cr_plugin_desc_t *desc;
static char dir[] = "/tmp/ptimer-hooks-XXXXXX";

typedef int (*pid_hook)(int pid);

static void test_restore_hooks(void)
{
	pid_hook late = (pid_hook)desc->hooks[CR_PLUGIN_HOOK__RESUME_DEVICES_LATE];
	int ret;

	ret = desc->init(CR_PLUGIN_STAGE__RESTORE);
	CHECK("hooks: init(RESTORE) of an image directory without ptimer images", ret == 0 && !errors_logged,
	      "ret %d, %d errors logged", ret, errors_logged);
	CHECK("hooks: RESUME_DEVICES_LATE is registered", late != NULL, "no handler");
	if (!late)
		return;
	ret = late(-1);
	CHECK("hooks: RESUME_DEVICES_LATE(-1) answers -ENOTSUP", ret == -ENOTSUP, "answered %d", ret);
	ret = late(0);
	CHECK("hooks: RESUME_DEVICES_LATE(0) answers -ENOTSUP", ret == -ENOTSUP, "answered %d", ret);
	ret = late(getpid());
	CHECK("hooks: RESUME_DEVICES_LATE of a task without an image answers -ENOTSUP (lets the next plugin in)",
	      ret == -ENOTSUP && !errors_logged, "answered %d, %d errors logged", ret, errors_logged);
	desc->exit(CR_PLUGIN_STAGE__RESTORE, 0);
}

static void test_dump_hooks(void)
{
#ifdef PTIMER_HAVE_CHECKPOINT_DEVICES
	pid_hook cp = (pid_hook)desc->hooks[CR_PLUGIN_HOOK__CHECKPOINT_DEVICES];
	int ret;

	CHECK("hooks: CHECKPOINT_DEVICES is registered", cp != NULL, "no handler");
	if (!cp)
		return;
	ret = cp(-1);
	CHECK("hooks: CHECKPOINT_DEVICES(-1) answers -ENOTSUP", ret == -ENOTSUP, "answered %d", ret);
	ret = cp(0);
	CHECK("hooks: CHECKPOINT_DEVICES(0) answers -ENOTSUP", ret == -ENOTSUP, "answered %d", ret);
#else
	SKIP("hooks: CHECKPOINT_DEVICES", "this criu-plugin.h has no CHECKPOINT_DEVICES hook (criu < 4.0): the "
	     "plugin built against it cannot dump");
#endif
}

int main(void)
{
	char self[PATH_MAX], so[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	void *h;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (n <= 0 || !mkdtemp(dir)) {
		perror("test_plugin_hooks: setup");
		return 2;
	}
	self[n] = 0;
	*strrchr(self, '/') = 0;	/* BUILD/test */
	snprintf(so, sizeof(so), "%s/../ptimer_plugin.so", self);
	image_fd = open(dir, O_RDONLY | O_DIRECTORY);
	unsetenv("PTIMER_CONFIG");
	setenv("PTIMER_CONFIG", "/nonexistent/ptimer.conf", 1);
	h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	desc = h ? dlsym(h, "CR_PLUGIN_DESC") : NULL;
	if (!desc) {
		printf("1..1\nFAIL hooks: load: %s\n", dlerror());
		return 1;
	}
	rc = CHECK_RUN(CHECK_TEST(test_restore_hooks), CHECK_TEST(test_dump_hooks));
	close(image_fd);
	rmdir(dir);
	return rc;
}
