// SPDX-License-Identifier: MIT
/*
 * The CRIU plugin's settings (plugin/conf.c): defaults, the file, the
 * environment over the file, and one-line errors for bad keys and values.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin/conf.h"
#include "test/lib/tst.h"

static char dir[] = "/tmp/ptimer-conf-XXXXXX";
static char file[128];

static void write_conf(const char *text)
{
	FILE *f = fopen(file, "w");

	if (!f) {
		perror(file);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static void clear_env(void)
{
	unsetenv("PTIMER_CONFIG");
	unsetenv("PTIMER_CRIU_MODE");
	unsetenv("PTIMER_STRICT");
	unsetenv("PTIMER_RESTORE_MODE");
	unsetenv("PTIMER_RSEQ_SLICE");
}

static void test_defaults(void)
{
	struct ptimer_plugin_conf c;
	struct ptimer_err err = { "" };
	char missing[160];
	int ret;

	snprintf(missing, sizeof(missing), "%s/none.conf", dir);
	ret = ptimer_plugin_conf_load(&c, missing, &err);
	CHECK("conf: a missing file gives the defaults", ret == 0 && c.criu_mode == PTIMER_CRIU_AUTO &&
	      !c.strict && c.restore_mode == PTIMER_RESTORE_AUTO && c.rseq_slice == PTIMER_RSEQ_SLICE_AUTO &&
	      c.path[0] == '\0', "ret %d mode %d strict %d restore %d slice %d path '%s' (%s)", ret,
	      c.criu_mode, c.strict, c.restore_mode, c.rseq_slice, c.path, err.msg);
}

static void test_file(void)
{
	struct ptimer_plugin_conf c;
	struct ptimer_err err = { "" };
	int ret;

	write_conf("# ptimer plugin settings\n\ncriu-mode = native\n  strict yes   # refuse lost timers\n"
		   "restore-mode=linear\nrseq-slice\toff\n");
	ret = ptimer_plugin_conf_load(&c, file, &err);
	CHECK("conf: every key from the file ('=', blank, tab, comments)", ret == 0 &&
	      c.criu_mode == PTIMER_CRIU_NATIVE && c.strict && c.restore_mode == PTIMER_RESTORE_LINEAR &&
	      c.rseq_slice == PTIMER_RSEQ_SLICE_OFF && !strcmp(c.path, file),
	      "ret %d mode %d strict %d restore %d slice %d (%s)", ret, c.criu_mode, c.strict,
	      c.restore_mode, c.rseq_slice, err.msg);

	setenv("PTIMER_CONFIG", file, 1);
	ret = ptimer_plugin_conf_load(&c, NULL, &err);
	CHECK("conf: PTIMER_CONFIG names the file", ret == 0 && c.criu_mode == PTIMER_CRIU_NATIVE,
	      "ret %d mode %d (%s)", ret, c.criu_mode, err.msg);

	setenv("PTIMER_CRIU_MODE", "takeover", 1);
	setenv("PTIMER_STRICT", "0", 1);
	setenv("PTIMER_RESTORE_MODE", "exact", 1);
	setenv("PTIMER_RSEQ_SLICE", "require", 1);
	ret = ptimer_plugin_conf_load(&c, NULL, &err);
	CHECK("conf: the environment overrides the file", ret == 0 && c.criu_mode == PTIMER_CRIU_TAKEOVER &&
	      !c.strict && c.restore_mode == PTIMER_RESTORE_EXACT && c.rseq_slice == PTIMER_RSEQ_SLICE_REQUIRE,
	      "ret %d mode %d strict %d restore %d slice %d (%s)", ret, c.criu_mode, c.strict,
	      c.restore_mode, c.rseq_slice, err.msg);
	clear_env();
}

static void expect_bad(const char *name, const char *text, const char *env, const char *val, const char *want)
{
	struct ptimer_plugin_conf c;
	struct ptimer_err err = { "" };
	int ret;

	write_conf(text);
	if (env)
		setenv(env, val, 1);
	ret = ptimer_plugin_conf_load(&c, file, &err);
	CHECK(name, ret == -EINVAL && strstr(err.msg, want) && !strchr(err.msg, '\n'),
	      "ret %d, message '%s' (want '%s')", ret, err.msg, want);
	clear_env();
}

static void test_bad(void)
{
	char want[200];
	struct ptimer_plugin_conf c;
	struct ptimer_err err = { "" };
	int ret;

	snprintf(want, sizeof(want), "%s:2: unknown key 'stirct'", file);
	expect_bad("conf: an unknown key names file, line and key", "strict = no\nstirct = yes\n", NULL, NULL, want);
	snprintf(want, sizeof(want), "%s:1: criu-mode = 'nativ': expected auto, takeover or native", file);
	expect_bad("conf: a bad value names file, line, key and what is expected", "criu-mode = nativ\n",
		   NULL, NULL, want);
	snprintf(want, sizeof(want), "%s:1: strict = '': expected yes or no", file);
	expect_bad("conf: a key without a value is refused", "strict\n", NULL, NULL, want);
	expect_bad("conf: a bad environment value is refused, naming the variable", "criu-mode = native\n",
		   "PTIMER_RSEQ_SLICE", "sometimes", "PTIMER_RSEQ_SLICE=sometimes (environment): expected auto, require or off");
	expect_bad("conf: an empty PTIMER_STRICT is refused, not taken as yes", "", "PTIMER_STRICT", "",
		   "PTIMER_STRICT= (environment): expected yes or no");

	/* A file that exists but cannot be read: a directory (EISDIR), which
	 * root cannot read either. */
	ret = ptimer_plugin_conf_load(&c, dir, &err);
	CHECK("conf: a file that cannot be read is an error, not the defaults",
	      ret < 0 && strstr(err.msg, "cannot read") && strstr(err.msg, dir), "ret %d (%s)", ret, err.msg);
}

int main(void)
{
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	clear_env();
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(file, sizeof(file), "%s/ptimer.conf", dir);
	rc = CHECK_RUN(CHECK_TEST(test_defaults), CHECK_TEST(test_file), CHECK_TEST(test_bad));
	unlink(file);
	rmdir(dir);
	return rc;
}
