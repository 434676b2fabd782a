// SPDX-License-Identifier: MIT
/*
 * The CRIU plugin's settings (plugin/conf.h).  podman runs criu dump without
 * the caller's environment, so a file next to criu's own configuration
 * (/etc/criu/default.conf) is the one setting every runtime passes on.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/conf.h"

struct conf_key {
	const char *key;
	const char *env;
	const char *expect;
	int (*set)(struct ptimer_plugin_conf *c, const char *v);
};

static int set_criu_mode(struct ptimer_plugin_conf *c, const char *v)
{
	if (!strcmp(v, "auto"))
		c->criu_mode = PTIMER_CRIU_AUTO;
	else if (!strcmp(v, "takeover"))
		c->criu_mode = PTIMER_CRIU_TAKEOVER;
	else if (!strcmp(v, "native"))
		c->criu_mode = PTIMER_CRIU_NATIVE;
	else
		return -EINVAL;
	return 0;
}

static int set_strict(struct ptimer_plugin_conf *c, const char *v)
{
	static const char *const yes[] = { "yes", "1", "true", "on" };
	static const char *const no[] = { "no", "0", "false", "off" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(v, yes[i])) {
			c->strict = true;
			return 0;
		}
		if (!strcmp(v, no[i])) {
			c->strict = false;
			return 0;
		}
	}
	return -EINVAL;
}

static int set_restore_mode(struct ptimer_plugin_conf *c, const char *v)
{
	if (!strcmp(v, "auto"))
		c->restore_mode = PTIMER_RESTORE_AUTO;
	else if (!strcmp(v, "exact"))
		c->restore_mode = PTIMER_RESTORE_EXACT;
	else if (!strcmp(v, "linear"))
		c->restore_mode = PTIMER_RESTORE_LINEAR;
	else
		return -EINVAL;
	return 0;
}

static int set_rseq_slice(struct ptimer_plugin_conf *c, const char *v)
{
	return ptimer_slice_rseq_slice_parse(v, &c->rseq_slice);
}

static const struct conf_key keys[] = {
	{ "criu-mode", "PTIMER_CRIU_MODE", "auto, takeover or native", set_criu_mode },
	{ "strict", "PTIMER_STRICT", "yes or no", set_strict },
	{ "restore-mode", "PTIMER_RESTORE_MODE", "auto, exact or linear", set_restore_mode },
	{ "rseq-slice", "PTIMER_RSEQ_SLICE", "auto, require or off", set_rseq_slice },
};
#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

static const struct conf_key *find_key(const char *k)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (!strcmp(keys[i].key, k))
			return &keys[i];
	return NULL;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* One line: "key = value", "key value", blank or "# comment". */
static int parse_line(struct ptimer_plugin_conf *c, char *line, const char *path, int lineno,
		      struct ptimer_err *err)
{
	const struct conf_key *k;
	char *key, *val, *hash = strchr(line, '#');
	size_t klen;

	if (hash)
		*hash = '\0';
	key = trim(line);
	if (!*key)
		return 0;
	klen = strcspn(key, "= \t");
	val = key + klen;
	if (*val) {
		*val++ = '\0';
		val = trim(val);
		if (*val == '=')
			val = trim(val + 1);
	}
	k = find_key(key);
	if (!k)
		return ptimer_errf(err, EINVAL, "%s:%d: unknown key '%s' (known: criu-mode, strict, "
				   "restore-mode, rseq-slice)", path, lineno, key);
	if (!*val || k->set(c, val))
		return ptimer_errf(err, EINVAL, "%s:%d: %s = '%s': expected %s", path, lineno, key, val,
				   k->expect);
	return 0;
}

static int load_file(struct ptimer_plugin_conf *c, const char *path, struct ptimer_err *err)
{
	char line[512];
	int lineno = 0, ret = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		if (errno == ENOENT)
			return 0;
		return ptimer_errf(err, errno, "cannot read %s: %s", path, strerror(errno));
	}
	snprintf(c->path, sizeof(c->path), "%s", path);
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			ret = ptimer_errf(err, EINVAL, "%s:%d: line longer than %zu bytes", path, lineno,
					  sizeof(line) - 2);
			goto out;
		}
		ret = parse_line(c, line, path, lineno, err);
		if (ret)
			goto out;
	}
	if (ferror(f))
		ret = ptimer_errf(err, EIO, "cannot read %s", path);
out:
	fclose(f);
	return ret;
}

int ptimer_plugin_conf_load(struct ptimer_plugin_conf *c, const char *path, struct ptimer_err *err)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->criu_mode = PTIMER_CRIU_AUTO;
	if (!path)
		path = getenv("PTIMER_CONFIG");
	if (!path || !*path)
		path = PTIMER_CONF_DEFAULT_PATH;
	ret = load_file(c, path, err);
	if (ret)
		return ret;
	for (size_t i = 0; i < N_KEYS; i++) {
		const char *v = getenv(keys[i].env);

		if (v && keys[i].set(c, v))
			return ptimer_errf(err, EINVAL, "%s=%s (environment): expected %s", keys[i].env, v,
					   keys[i].expect);
	}
	return 0;
}
