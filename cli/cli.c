// SPDX-License-Identifier: MIT
/*
 * ptimer: dump a live process's POSIX timers, restore them with the same
 * IDs into a live process, show and encode images, check this kernel.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/check.h"
#include "core/dump.h"
#include "core/log.h"
#include "core/restore.h"
#include "core/rseq.h"
#include "core/util.h"
#include "images/image.h"

static const char usage[] =
	"usage: ptimer dump -t PID -D DIR [--strict]\n"
	"       ptimer restore -t PID -D DIR [--image-pid N] [--tid-map OLD=NEW]...\n"
	"                      [--mode auto|exact|linear] [--allow-wrap] [--verify] [-q|-v]\n"
	"                      [--rseq-slice auto|require|off]\n"
	"       ptimer show FILE|DIR [--json]\n"
	"       ptimer encode -i JSON -o IMG\n"
	"       ptimer check\n";

static int fail(const char *msg)
{
	fprintf(stderr, "ptimer: %s\n", msg);
	return 1;
}

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "ptimer: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage);
	return 2;
}

/* A positive decimal pid; 0 on anything else. */
static pid_t parse_pid(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v <= 0 || v > INT_MAX)
		return 0;
	return (pid_t)v;
}

enum { OPT_IMAGE_PID = 256, OPT_TID_MAP, OPT_MODE, OPT_ALLOW_WRAP, OPT_JSON, OPT_STRICT, OPT_VERIFY,
       OPT_RSEQ_SLICE };

static const struct option long_opts[] = {
	{ "tree", required_argument, NULL, 't' },
	{ "images-dir", required_argument, NULL, 'D' },
	{ "image-pid", required_argument, NULL, OPT_IMAGE_PID },
	{ "tid-map", required_argument, NULL, OPT_TID_MAP },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "allow-wrap", no_argument, NULL, OPT_ALLOW_WRAP },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "rseq-slice", required_argument, NULL, OPT_RSEQ_SLICE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct cli {
	pid_t pid, image_pid;
	const char *dir, *in, *out;
	bool json, strict;
	struct ptimer_restore_opts ropt;
	struct ptimer_tid_map map[64];
};

static int parse_opts(int argc, char **argv, struct cli *c)
{
	int opt;

	opterr = 0;	/* one line of our own instead of getopt's */
	while ((opt = getopt_long(argc, argv, ":t:D:i:o:vqh", long_opts, NULL)) != -1) {
		switch (opt) {
		case 't':
			if (!(c->pid = parse_pid(optarg)))
				return bad_usage("-t %s: not a pid", optarg);
			break;
		case 'D':
			c->dir = optarg;
			break;
		case 'i':
			c->in = optarg;
			break;
		case 'o':
			c->out = optarg;
			break;
		case OPT_IMAGE_PID:
			if (!(c->image_pid = parse_pid(optarg)))
				return bad_usage("--image-pid %s: not a pid", optarg);
			break;
		case OPT_TID_MAP: {
			char *eq = strchr(optarg, '=');
			struct ptimer_tid_map *m = &c->map[c->ropt.n_tid_map];

			if (c->ropt.n_tid_map == (int)(sizeof(c->map) / sizeof(c->map[0])))
				return bad_usage("--tid-map %s: too many maps", optarg);
			if (!eq)
				return bad_usage("--tid-map %s: expected OLD=NEW", optarg);
			*eq = '\0';
			m->from = parse_pid(optarg);
			m->to = parse_pid(eq + 1);
			*eq = '=';
			if (!m->from || !m->to)
				return bad_usage("--tid-map %s: expected OLD=NEW, two tids", optarg);
			c->ropt.n_tid_map++;
			break;
		}
		case OPT_MODE:
			if (!strcmp(optarg, "auto"))
				c->ropt.mode = PTIMER_RESTORE_AUTO;
			else if (!strcmp(optarg, "exact"))
				c->ropt.mode = PTIMER_RESTORE_EXACT;
			else if (!strcmp(optarg, "linear"))
				c->ropt.mode = PTIMER_RESTORE_LINEAR;
			else
				return bad_usage("--mode %s: expected auto, exact or linear", optarg);
			break;
		case OPT_ALLOW_WRAP:
			c->ropt.allow_wrap = true;
			break;
		case OPT_JSON:
			c->json = true;
			break;
		case OPT_STRICT:
			c->strict = true;
			break;
		case OPT_VERIFY:
			c->ropt.verify = true;
			break;
		case OPT_RSEQ_SLICE:
			if (ptimer_slice_rseq_slice_parse(optarg, &c->ropt.rseq_slice))
				return bad_usage("--rseq-slice %s: expected auto, require or off", optarg);
			break;
		case 'v':
			ptimer_verbosity = PTIMER_LOG_DEBUG;
			break;
		case 'q':
			ptimer_verbosity = PTIMER_LOG_ERROR;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		case ':':
			return bad_usage("%s needs a value", argv[optind - 1]);
		default:
			return bad_usage("unknown option %s", argv[optind - 1]);
		}
	}
	c->ropt.tid_map = c->map;
	return 0;
}

static int cmd_dump(struct cli *c)
{
	struct ptimer_dump_opts o = { .strict = c->strict };
	struct ptimer_err err;

	if (!c->pid || !c->dir)
		return bad_usage("%s", "dump needs -t PID and -D DIR");
	return ptimer_dump(c->pid, c->dir, &o, &err) ? fail(err.msg) : 0;
}

static int cmd_restore(struct cli *c)
{
	struct ptimer_restore_stats st;
	struct ptimer_err err;
	char path[4096];

	if (!c->pid || !c->dir)
		return bad_usage("%s", "restore needs -t PID and -D DIR");
	if (ptimer_image_find(c->dir, c->image_pid, path, sizeof(path), &err))
		return fail(err.msg);
	c->ropt.progress = true;
	if (ptimer_restore(c->pid, path, &c->ropt, &st, &err))
		return fail(err.msg);
	printf("restored %s into process %d: %s mode, %.3f ms (%.3f ms inside the process)\n", path, c->pid,
	       st.mode == PTIMER_MODE_LINEAR ? "linear" : "exact-ID", (double)st.ns_total / 1e6,
	       (double)st.ns_inject / 1e6);
	if (st.mode == PTIMER_MODE_LINEAR)
		printf("linear mode: %llu create/delete pairs\n", (unsigned long long)st.pairs);
	return 0;
}

static int cmd_show(struct cli *c, const char *target)
{
	struct ptimer_image img;
	struct ptimer_err err;
	char path[4096];
	struct stat sb;
	int ret;

	if (!target)
		return bad_usage("%s", "show needs FILE or DIR");
	if (!stat(target, &sb) && S_ISDIR(sb.st_mode)) {
		if (ptimer_image_find(target, c->image_pid, path, sizeof(path), &err))
			return fail(err.msg);
		target = path;
	}
	if (ptimer_image_read(target, &img, &err))
		return fail(err.msg);
	if (c->json)
		ret = ptimer_image_to_json(&img, stdout, &err);
	else
		ret = (ptimer_image_show(&img, stdout), 0);
	ptimer_image_free(&img);
	return ret ? fail(err.msg) : 0;
}

static int cmd_encode(struct cli *c)
{
	struct ptimer_image img;
	struct ptimer_err err;
	int ret;

	if (!c->in || !c->out)
		return bad_usage("%s", "encode needs -i JSON and -o IMG");
	if (ptimer_image_from_json(c->in, &img, &err))
		return fail(err.msg);
	ret = ptimer_image_write(c->out, &img, &err);
	ptimer_image_free(&img);
	return ret ? fail(err.msg) : 0;
}

/* The core's messages, on stderr. */
static void log_to_stderr(int level, const char *msg)
{
	static const char *const prefix[] = { "error", "warning", "info", "debug" };

	fprintf(stderr, "ptimer: %s: %s\n", prefix[level], msg);
}

int main(int argc, char **argv)
{
	struct cli c = { 0 };
	const char *cmd;
	int ret;

	if (argc < 2)
		return bad_usage("%s", "no command given");
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		fputs(usage, stdout);
		return 0;
	}
	ptimer_log_set(log_to_stderr);
	ptimer_verbosity = PTIMER_LOG_INFO;
	ret = parse_opts(argc - 1, argv + 1, &c);
	if (ret)
		return ret;
	if (!strcmp(cmd, "dump") || !strcmp(cmd, "restore")) {
		sigset_t old;

		/* Held until the target is released (see ptimer_block_stop_signals);
		 * then a pending one ends ptimer with its usual status. */
		ptimer_block_stop_signals(&old);
		ret = !strcmp(cmd, "dump") ? cmd_dump(&c) : cmd_restore(&c);
		fflush(stdout);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return ret;
	}
	if (!strcmp(cmd, "show"))
		return cmd_show(&c, optind < argc - 1 ? argv[optind + 1] : NULL);
	if (!strcmp(cmd, "encode"))
		return cmd_encode(&c);
	if (!strcmp(cmd, "check"))
		return ptimer_check();
	return bad_usage("unknown command \"%s\"", cmd);
}
