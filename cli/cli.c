// SPDX-License-Identifier: MIT
/*
 * ptimer: dump a live process's POSIX timers, restore them with the same
 * IDs into a live process, show and encode images, check this kernel.
 *
 * Every command takes only its own options; the option table below is also
 * the text of `ptimer help CMD`, so the two cannot drift apart.  The exit
 * status is the same for every command (man/ptimer.1 EXIT STATUS, the one
 * table of it; the help points there):
 * 0 done, 1 failed with one line on stderr, 2 bad command line, and death
 * by a held SIGINT/SIGTERM/SIGHUP/SIGQUIT (128+N in a shell) when it came
 * before the point where the work is committed.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/check.h"
#include "core/dump.h"
#include "core/log.h"
#include "core/restore.h"
#include "core/rseq.h"
#include "core/util.h"
#include "images/image.h"

#ifndef PTIMER_VERSION
#define PTIMER_VERSION "unknown"
#endif

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

/* Commands, as bits of struct opt_desc.cmds. */
enum { C_DUMP = 1, C_RESTORE = 2, C_SHOW = 4, C_ENCODE = 8, C_CHECK = 16 };

enum { OPT_IMAGE_PID = 256, OPT_TID_MAP, OPT_MODE, OPT_ALLOW_WRAP, OPT_JSON, OPT_STRICT, OPT_VERIFY,
       OPT_RSEQ_SLICE, OPT_FORCE_SIGNALS };

struct opt_desc {
	int val;		/* getopt_long's return: the short letter or OPT_* */
	const char *name;	/* long name */
	const char *arg;	/* argument's name, NULL for a flag */
	unsigned int cmds;	/* C_* that take it */
	const char *help;
};

static const struct opt_desc opts[] = {
	{ 't', "tree", "PID", C_DUMP,
	  "the process to dump: its pid (thread group id) as this /proc shows it" },
	{ 't', "tree", "PID", C_RESTORE,
	  "the live process to restore into, as this /proc shows it" },
	{ 'D', "images-dir", "DIR", C_DUMP,
	  "write DIR/ptimers-<pid>.img, <pid> as seen inside the process's own pid namespace; "
	  "DIR must exist and be writable" },
	{ 'D', "images-dir", "DIR", C_RESTORE,
	  "read the image from DIR (the only ptimers-<pid>.img there, or the one --image-pid names)" },
	{ OPT_IMAGE_PID, "image-pid", "N", C_RESTORE | C_SHOW,
	  "choose DIR/ptimers-N.img when DIR holds images of several processes" },
	{ OPT_STRICT, "strict", NULL, C_DUMP,
	  "refuse timers that can never fire again (aimed at a thread that has exited, or on its CPU "
	  "clock) instead of keeping them disarmed with a warning" },
	{ OPT_TID_MAP, "tid-map", "OLD=NEW", C_RESTORE,
	  "thread OLD of the image (tid inside the dumped process's namespace) is thread NEW of PID "
	  "(tid as ptimer sees it); repeat for each thread (at most 64); without a map a thread keeps "
	  "its tid, and the image's pid maps to PID" },
	{ OPT_MODE, "mode", "auto|exact|linear", C_RESTORE,
	  "auto (default): exact IDs with PR_TIMER_CREATE_RESTORE_IDS (Linux 6.15+), else the linear "
	  "create/delete loop; exact: fail on kernels without the prctl; linear: the loop even on new "
	  "kernels" },
	{ OPT_ALLOW_WRAP, "allow-wrap", NULL, C_RESTORE,
	  "linear mode: reach IDs the kernel's counter has passed by wrapping through INT_MAX "
	  "(about 2^31 create/delete pairs; the cost is stated first)" },
	{ OPT_FORCE_SIGNALS, "force-signals", NULL, C_RESTORE,
	  "restore even timers whose signal the target would not take: a glibc/musl SIGEV_THREAD "
	  "timer (signal 32 to the libc's helper thread, its callback a pointer into the dumped "
	  "process) going into another process, or an armed timer whose signal the receiving thread "
	  "neither handles, ignores nor blocks (its first expiry would kill or stop the process)" },
	{ OPT_VERIFY, "verify", NULL, C_RESTORE,
	  "read /proc/PID/timers again after the restore and compare it with the image" },
	{ OPT_RSEQ_SLICE, "rseq-slice", "auto|require|off", C_RESTORE,
	  "each thread's rseq time-slice extension mode, set back as dumped (enabled or disabled): "
	  "auto (default) warns and goes on when the kernel cannot set it; require refuses before "
	  "anything changes; off leaves it alone" },
	{ OPT_JSON, "json", NULL, C_SHOW,
	  "print JSON (the input of encode) instead of text" },
	{ 'i', "in", "JSON", C_ENCODE,
	  "the JSON file to read, as show --json prints it" },
	{ 'o', "out", "IMG", C_ENCODE,
	  "the image file to write (atomically: a temporary file renamed into place)" },
	{ 'q', "quiet", NULL, C_DUMP | C_RESTORE,
	  "print errors only (no warnings, no progress)" },
	{ 'v', "verbose", NULL, C_DUMP | C_RESTORE,
	  "print debugging detail as well" },
	{ 'h', "help", NULL, C_DUMP | C_RESTORE | C_SHOW | C_ENCODE | C_CHECK,
	  "print this help and exit" },
};

#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

struct cli {
	const struct cmd_desc *cmd;
	pid_t pid, image_pid;
	const char *dir, *in, *out, *arg;
	bool json, strict;
	bool quiet;		/* -q: errors only, no summary line, no progress */
	struct ptimer_restore_opts ropt;
	struct ptimer_tid_map map[64];
};

struct cmd_desc {
	const char *name;
	unsigned int bit;
	int min_args, max_args;	/* positional arguments */
	const char *synopsis;
	const char *summary;
	const char *text;
	const char *exits;	/* what 0 and 1 mean for this command */
	int (*run)(struct cli *c);
};

static int cmd_dump(struct cli *c);
static int cmd_restore(struct cli *c);
static int cmd_show(struct cli *c);
static int cmd_encode(struct cli *c);
static int cmd_check(struct cli *c);

static const struct cmd_desc cmds[] = {
	{ "dump", C_DUMP, 0, 0, "-t PID -D DIR [--strict] [-q|-v]",
	  "save the POSIX timers of a live process to an image",
	  "Stops every thread of PID with PTRACE_SEIZE and PTRACE_INTERRUPT (no signal is sent), reads\n"
	  "/proc/PID/timers and each timer's it_value, it_interval and overrun inside the process, writes\n"
	  "DIR/ptimers-<pid>.img atomically and lets the process go; its timers are unchanged.\n",
	  "0 the image is written; 1 nothing written, the process runs on as before",
	  cmd_dump },
	{ "restore", C_RESTORE, 0, 1, "-t PID (-D DIR | IMAGE) [OPTION]...",
	  "recreate an image's timers, with the same IDs, in a live process",
	  "Recreates the timers of an image in the live process PID with the same IDs and arms them.\n"
	  "The image is IMAGE (a ptimers-<pid>.img file, or a directory holding one) or the one in\n"
	  "-D DIR. All or nothing: on any failure the timers made so far are removed and PID is\n"
	  "released as it was. Refused before anything changes when PID already holds one of the IDs,\n"
	  "when a timer aims at a thread PID lacks (see --tid-map), or, in linear mode, when the\n"
	  "kernel's ID counter has passed a wanted ID (see --allow-wrap).\n",
	  "0 every timer is restored; 1 nothing restored, PID as before (an interrupted or refused\n"
	  "linear restore may leave its ID counter moved on)",
	  cmd_restore },
	{ "show", C_SHOW, 1, 1, "(FILE | DIR) [--json] [--image-pid N]",
	  "print an image, for people or as JSON",
	  "Prints the image FILE, or the one in DIR: the pid, each timer's ID, clock, notification,\n"
	  "signal, sival, target thread, it_value, it_interval and overrun, and each thread's rseq state.\n",
	  "0 printed; 1 the file is missing or not a valid image (the line names the field)",
	  cmd_show },
	{ "encode", C_ENCODE, 0, 0, "-i JSON -o IMG",
	  "write an image from JSON (the reverse of show --json)",
	  "Reads JSON in the form show --json prints, validates it as restore validates an image, and\n"
	  "writes the image IMG.\n",
	  "0 written; 1 invalid input (the line names the timer and field), nothing written",
	  cmd_encode },
	{ "check", C_CHECK, 0, 0, "",
	  "what this kernel and this caller support",
	  "Prints one line per item: /proc/PID/timers, the exact-ID prctl, ptrace (and yama's\n"
	  "ptrace_scope), CAP_SYS_PTRACE and CAP_CHECKPOINT_RESTORE. Changes nothing.\n",
	  "0 ptimer can dump and restore your own processes here (the exact-ID prctl and\n"
	  "CAP_SYS_PTRACE are not needed for that); 1 it cannot: a line marked \"no\" among\n"
	  "/proc/PID/timers and ptrace says why",
	  cmd_check },
};

#define N_CMDS (sizeof(cmds) / sizeof(cmds[0]))

/* The exit-status table is the man page's (EXIT STATUS): one source. */
static const char exit_text[] =
	"Exit status: 0 when done; each other status, and what was left as it was, is in\n"
	"ptimer(1), section EXIT STATUS (man ptimer; in the source tree man -l man/ptimer.1).\n";

static int fail(const char *msg)
{
	fprintf(stderr, "ptimer: %s\n", msg);
	return EXIT_FAILED;
}

/* One line: what is wrong and where to read more.  Exit status 2. */
static int bad_usage(const struct cmd_desc *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad_usage(const struct cmd_desc *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ptimer%s%s: ", cmd ? " " : "", cmd ? cmd->name : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see 'ptimer help%s%s'\n", cmd ? " " : "", cmd ? cmd->name : "");
	return EXIT_USAGE;
}

static const struct cmd_desc *find_cmd(const char *name)
{
	for (size_t i = 0; i < N_CMDS; i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

static void print_overview(FILE *f)
{
	fprintf(f, "usage: ptimer COMMAND [OPTION]... [ARG]\n"
		   "       ptimer help COMMAND   (or ptimer COMMAND --help)\n"
		   "       ptimer --version\n\n"
		   "Checkpoint and restore the POSIX timers of a live Linux process with their exact IDs.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < N_CMDS; i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\n%s\nThe CRIU plugin (ptimer_plugin.so) takes its settings from /etc/criu/ptimer.conf\n"
		   "and criu's environment (PTIMER_CRIU_MODE, PTIMER_STRICT, PTIMER_RESTORE_MODE,\n"
		   "PTIMER_RSEQ_SLICE, PTIMER_CONFIG); see ptimer(1).\n", exit_text);
}

#define HELP_COL 28	/* where option help starts */

/* Print text indented by ind, wrapped at 80 columns. */
static void print_wrapped(FILE *f, const char *text, int col, int ind)
{
	const char *p = text;

	while (*p) {
		size_t w = strcspn(p, " ");

		if (col > ind && col + 1 + (int)w > 80) {
			fprintf(f, "\n%*s", ind, "");
			col = ind;
		} else if (col > ind) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, w, f);
		col += (int)w;
		p += w;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

static void print_cmd_help(FILE *f, const struct cmd_desc *cmd)
{
	fprintf(f, "usage: ptimer %s %s\n%s: %s\n\n%s\nOptions:\n", cmd->name, cmd->synopsis, cmd->name,
		cmd->summary, cmd->text);
	for (size_t i = 0; i < N_OPTS; i++) {
		const struct opt_desc *o = &opts[i];
		char head[64];
		int n;

		if (!(o->cmds & cmd->bit))
			continue;
		if (o->val < 256)
			n = snprintf(head, sizeof(head), "  -%c, --%s%s%s", o->val, o->name, o->arg ? " " : "",
				     o->arg ? o->arg : "");
		else
			n = snprintf(head, sizeof(head), "      --%s%s%s", o->name, o->arg ? " " : "",
				     o->arg ? o->arg : "");
		/* the help text in a column of its own, below a long head */
		fprintf(f, "%s%s%*s", head, n >= HELP_COL ? "\n" : "", n >= HELP_COL ? HELP_COL : HELP_COL - n, "");
		print_wrapped(f, o->help, HELP_COL, HELP_COL);
	}
	fprintf(f, "\nExit status of %s: %s.\n", cmd->name, cmd->exits);
	fprintf(f, "The others are the same for every command: ptimer(1), section EXIT STATUS.\n");
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

/* The commands that take option name (long, or the short letter). */
static unsigned int opt_owners(const char *name, int letter)
{
	unsigned int m = 0;

	for (size_t i = 0; i < N_OPTS; i++)
		if ((name && !strcmp(opts[i].name, name)) || (!name && opts[i].val == letter))
			m |= opts[i].cmds;
	return m;
}

/* "restore" or "dump and restore": the commands in mask m. */
static const char *cmd_names(unsigned int m, char *buf, size_t len)
{
	size_t k = 0;
	int n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < N_CMDS; i++)
		if (m & cmds[i].bit)
			n++;
	for (size_t i = 0, seen = 0; i < N_CMDS && k < len; i++) {
		if (!(m & cmds[i].bit))
			continue;
		seen++;
		k += snprintf(buf + k, len - k, "%s%s", seen == 1 ? "" : (int)seen == n ? " and " : ", ",
			      cmds[i].name);
	}
	return buf;
}

/* getopt refused an option: say whether it belongs to another command. */
static int unknown_option(const struct cli *c, char **argv)
{
	const char *bad = argv[optind - 1];
	char name[64], who[64];
	unsigned int m;

	if (!strncmp(bad, "--", 2)) {
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(bad, "="), bad);
		m = opt_owners(name + 2, 0);
		if (m & c->cmd->bit)
			return bad_usage(c->cmd, "%s takes no value", name);
	} else {
		snprintf(name, sizeof(name), "-%c", optopt);
		m = opt_owners(NULL, optopt);
	}
	if (m)
		return bad_usage(c->cmd, "%s is an option of %s, not of %s", name, cmd_names(m, who, sizeof(who)),
				 c->cmd->name);
	return bad_usage(c->cmd, "unknown option %s", name);
}

static int parse_opt(struct cli *c, int opt, char *arg)
{
	switch (opt) {
	case 't':
		if (!(c->pid = parse_pid(arg)))
			return bad_usage(c->cmd, "-t %s: not a pid (a positive decimal number)", arg);
		break;
	case 'D':
		c->dir = arg;
		break;
	case 'i':
		c->in = arg;
		break;
	case 'o':
		c->out = arg;
		break;
	case OPT_IMAGE_PID:
		if (!(c->image_pid = parse_pid(arg)))
			return bad_usage(c->cmd, "--image-pid %s: not a pid (a positive decimal number)", arg);
		break;
	case OPT_TID_MAP: {
		char *eq = strchr(arg, '=');
		struct ptimer_tid_map *m = &c->map[c->ropt.n_tid_map];

		if (c->ropt.n_tid_map == (int)(sizeof(c->map) / sizeof(c->map[0])))
			return bad_usage(c->cmd, "--tid-map %s: more than %zu maps", arg,
					 sizeof(c->map) / sizeof(c->map[0]));
		if (!eq)
			return bad_usage(c->cmd, "--tid-map %s: expected OLD=NEW", arg);
		*eq = '\0';
		m->from = parse_pid(arg);
		m->to = parse_pid(eq + 1);
		*eq = '=';
		if (!m->from || !m->to)
			return bad_usage(c->cmd, "--tid-map %s: expected OLD=NEW, two tids", arg);
		c->ropt.n_tid_map++;
		break;
	}
	case OPT_MODE:
		if (!strcmp(arg, "auto"))
			c->ropt.mode = PTIMER_RESTORE_AUTO;
		else if (!strcmp(arg, "exact"))
			c->ropt.mode = PTIMER_RESTORE_EXACT;
		else if (!strcmp(arg, "linear"))
			c->ropt.mode = PTIMER_RESTORE_LINEAR;
		else
			return bad_usage(c->cmd, "--mode %s: expected auto, exact or linear", arg);
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
	case OPT_FORCE_SIGNALS:
		c->ropt.force_signals = true;
		break;
	case OPT_RSEQ_SLICE:
		if (ptimer_slice_rseq_slice_parse(arg, &c->ropt.rseq_slice))
			return bad_usage(c->cmd, "--rseq-slice %s: expected auto, require or off", arg);
		break;
	case 'v':
		ptimer_verbosity = PTIMER_LOG_DEBUG;
		break;
	case 'q':
		ptimer_verbosity = PTIMER_LOG_ERROR;
		c->quiet = true;
		break;
	}
	return 0;
}

/*
 * Parse argv (argv[0] is the command) with the command's own options only.
 * Returns 0, EXIT_USAGE after a one-line error, or -1 after printing help.
 */
static int parse_args(int argc, char **argv, struct cli *c)
{
	struct option lo[N_OPTS + 1];
	char so[2 * N_OPTS + 2] = ":";
	size_t n = 0, k = 1;
	int opt, ret, nargs;

	for (size_t i = 0; i < N_OPTS; i++) {
		const struct opt_desc *o = &opts[i];

		if (!(o->cmds & c->cmd->bit))
			continue;
		lo[n++] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL, o->val };
		if (o->val < 256) {
			so[k++] = (char)o->val;
			if (o->arg)
				so[k++] = ':';
		}
	}
	lo[n] = (struct option){ 0 };
	so[k] = '\0';

	opterr = 0;	/* one line of our own instead of getopt's */
	optind = 1;
	for (;;) {
		optopt = 0;
		opt = getopt_long(argc, argv, so, lo, NULL);
		if (opt == -1)
			break;
		if (opt == 'h') {
			print_cmd_help(stdout, c->cmd);
			return -1;
		}
		if (opt == ':' && optopt > 0 && optopt < 256)
			return bad_usage(c->cmd, "-%c needs a value", optopt);
		if (opt == ':')
			return bad_usage(c->cmd, "%s needs a value", argv[optind - 1]);
		if (opt == '?')
			return unknown_option(c, argv);
		ret = parse_opt(c, opt, optarg);
		if (ret)
			return ret;
	}
	nargs = argc - optind;
	if (nargs > c->cmd->max_args)
		return bad_usage(c->cmd, "unexpected argument '%s'", argv[optind + c->cmd->max_args]);
	if (nargs < c->cmd->min_args)
		return bad_usage(c->cmd, "missing %s", c->cmd->bit == C_SHOW ? "FILE or DIR" : "argument");
	c->arg = nargs ? argv[optind] : NULL;
	c->ropt.tid_map = c->map;
	return 0;
}

/*
 * The image a command names: -D DIR or a DIR argument through
 * ptimer_image_find (the only image there, or --image-pid's), a file
 * argument as it is.
 */
static int find_image(struct cli *c, char *path, size_t len)
{
	const char *target = c->dir ? c->dir : c->arg;
	struct ptimer_err err;
	struct stat sb;

	if (c->dir || (!stat(target, &sb) && S_ISDIR(sb.st_mode))) {
		if (ptimer_image_find(target, c->image_pid, path, len, &err))
			return fail(err.msg);
		return 0;
	}
	if (c->image_pid)
		return bad_usage(c->cmd, "--image-pid chooses an image in a directory, and %s is not one", target);
	snprintf(path, len, "%s", target);
	return 0;
}

/*
 * A stop signal held while the target was stopped but seen only after the
 * work was committed (image renamed into place, timers restored and the
 * target released): the command is done, so the signal is dropped and
 * ptimer exits 0.  Signals seen before that point fail the command in the
 * core (EINTR) and end ptimer once unblocked.
 */
static void drop_late_signals(void)
{
	struct timespec zero = { 0 };
	sigset_t one;
	int sig;

	while ((sig = ptimer_pending_stop_signal())) {
		sigemptyset(&one);
		sigaddset(&one, sig);
		if (sigtimedwait(&one, NULL, &zero) < 0)
			break;
	}
}

static int cmd_dump(struct cli *c)
{
	struct ptimer_dump_opts o = { .strict = c->strict };
	struct ptimer_dump_result res;
	struct ptimer_err err;

	if (!c->pid)
		return bad_usage(c->cmd, "-t PID is missing: which process to dump");
	if (!c->dir)
		return bad_usage(c->cmd, "-D DIR is missing: where to write the image");
	if (ptimer_dump(c->pid, c->dir, &o, &res, &err))
		return fail(err.msg);
	if (c->quiet)
		return 0;
	printf("dumped %u timers of process %d (pid %d in its namespace) to %s\n", res.n_timers, c->pid,
	       res.vpid, res.path);
	return 0;
}

#define PROGRESS_TTY_NS		250000000ull	/* bar redraw on a terminal */

/*
 * Linear progress on stderr: on a terminal a bar redrawn in place with the
 * rate and the time left; otherwise (logs, CI) one line every few seconds.
 */
static void show_progress(const struct ptimer_progress *p, void *ctx)
{
	bool tty = *(const bool *)ctx;
	double rate = p->ns_elapsed ? (double)p->pairs_done * 1e9 / (double)p->ns_elapsed : 0;
	double eta = rate > 0 ? (double)(p->pairs_total - p->pairs_done) / rate : 0;
	double frac = p->pairs_total ? (double)p->pairs_done / (double)p->pairs_total : 1.0;

	if (tty) {
		char bar[31];
		int fill = (int)(frac * 30);

		memset(bar, '#', (size_t)fill);
		memset(bar + fill, '.', (size_t)(30 - fill));
		bar[30] = '\0';
		fprintf(stderr, "\rptimer: [%s] %3.0f%% %llu/%llu pairs %.2f Mpairs/s ETA %.0f s  %s", bar,
			100.0 * frac, (unsigned long long)p->pairs_done, (unsigned long long)p->pairs_total,
			rate / 1e6, eta, p->last ? "\n" : "");
		return;
	}
	fprintf(stderr, "ptimer: process %d: linear mode: %llu/%llu pairs (%.0f%%), %u/%u timers, "
		"%.2f Mpairs/s, %.0f s left\n", p->pid, (unsigned long long)p->pairs_done,
		(unsigned long long)p->pairs_total, 100.0 * frac, p->n_created, p->n_timers, rate / 1e6, eta);
}

static int cmd_restore(struct cli *c)
{
	bool tty = isatty(STDERR_FILENO);
	struct ptimer_restore_stats st;
	struct ptimer_err err;
	char path[4096];
	struct stat sb;
	int ret;

	if (!c->pid)
		return bad_usage(c->cmd, "-t PID is missing: which process to restore into");
	if (c->dir && c->arg)
		return bad_usage(c->cmd, "both -D %s and %s name the image: give one", c->dir, c->arg);
	if (!c->dir && !c->arg)
		return bad_usage(c->cmd, "no image: pass -D DIR or the image file");
	if (c->dir && !stat(c->dir, &sb) && !S_ISDIR(sb.st_mode))
		return bad_usage(c->cmd, "-D %s is not a directory; to restore from that file, pass it without -D",
				 c->dir);
	ret = find_image(c, path, sizeof(path));
	if (ret)
		return ret;
	c->ropt.progress = c->quiet ? NULL : show_progress;
	c->ropt.progress_ctx = &tty;
	c->ropt.progress_every_ns = tty ? PROGRESS_TTY_NS : 0;
	if (ptimer_restore(c->pid, path, &c->ropt, &st, &err))
		return fail(err.msg);
	if (c->quiet)
		return 0;
	printf("restored %s into process %d: %s mode, %.3f ms (%.3f ms inside the process)\n", path, c->pid,
	       st.mode == PTIMER_RESTORE_LINEAR ? "linear" : "exact-ID", (double)st.ns_total / 1e6,
	       (double)st.ns_inject / 1e6);
	if (st.mode == PTIMER_RESTORE_LINEAR)
		printf("linear mode: %llu create/delete pairs in %.3f ms\n", (unsigned long long)st.pairs,
		       (double)st.ns_loop / 1e6);
	return 0;
}

static int cmd_show(struct cli *c)
{
	struct ptimer_image img;
	struct ptimer_err err;
	char path[4096];
	int ret;

	ret = find_image(c, path, sizeof(path));
	if (ret)
		return ret;
	if (ptimer_image_read(path, &img, &err))
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

	if (!c->in)
		return bad_usage(c->cmd, "-i JSON is missing: the file to read");
	if (!c->out)
		return bad_usage(c->cmd, "-o IMG is missing: the image to write");
	if (ptimer_image_from_json(c->in, &img, &err))
		return fail(err.msg);
	ret = ptimer_image_write(c->out, &img, &err);
	ptimer_image_free(&img);
	return ret ? fail(err.msg) : 0;
}

/* The core's messages, on stderr. */
static void log_to_stderr(int level, const char *where, const char *msg)
{
	static const char *const prefix[] = { "error", "warning", "info", "debug" };

	fprintf(stderr, "ptimer: %s: %s\n", prefix[level], msg);
}

static int cmd_check(struct cli *c)
{
	return ptimer_check() ? EXIT_FAILED : 0;
}

/* `ptimer help [CMD]` */
static int help(int argc, char **argv)
{
	const struct cmd_desc *cmd;

	if (argc < 3) {
		print_overview(stdout);
		return 0;
	}
	if (argc > 3)
		return bad_usage(NULL, "help takes one command, not '%s'", argv[3]);
	cmd = find_cmd(argv[2]);
	if (!cmd)
		return bad_usage(NULL, "no command \"%s\"", argv[2]);
	print_cmd_help(stdout, cmd);
	return 0;
}

int main(int argc, char **argv)
{
	struct cli c = { 0 };
	sigset_t old;
	int ret;

	if (argc < 2)
		return bad_usage(NULL, "no command given");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))
		return help(argc, argv);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		if (argc > 2)
			return bad_usage(NULL, "--version takes no argument");
		printf("ptimer %s (image format %u)\n", PTIMER_VERSION, PTIMER_IMG_VERSION);
		return 0;
	}
	c.cmd = find_cmd(argv[1]);
	if (!c.cmd)
		return bad_usage(NULL, argv[1][0] == '-' ? "%s: give a command first" : "no command \"%s\"",
				 argv[1]);
	ptimer_log_set(log_to_stderr);
	ptimer_verbosity = PTIMER_LOG_INFO;
	ret = parse_args(argc - 1, argv + 1, &c);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (c.cmd->bit & (C_SHOW | C_ENCODE | C_CHECK))
		return c.cmd->run(&c);

	/*
	 * dump and restore stop the target: SIGINT, SIGTERM, SIGHUP and SIGQUIT
	 * are held until it is released (see ptimer_block_stop_signals).  The
	 * core checks for them where the work can still be abandoned; a failed
	 * command then ends by the signal once it is unblocked.
	 */
	ptimer_block_stop_signals(&old);
	ret = c.cmd->run(&c);
	fflush(stdout);
	if (!ret)
		drop_late_signals();
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}
