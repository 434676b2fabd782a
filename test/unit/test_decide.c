// SPDX-License-Identifier: MIT
/*
 * The plugin's decision table (plugin/decide.c) against its documentation:
 * the table after "<!-- decide-table -->" in docs/criu-plugin.md is read
 * and decide() driven through every row, each "any" taken both ways, as
 * plan.c drives it (reading the whole image and counting criu's loop pairs
 * when decide() asks).  A row the code does not follow, or a column value
 * this test does not know, fails: the page and the code cannot drift.
 *
 *   test_decide [DOC]   DOC: docs/criu-plugin.md (from the source tree)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/decide.h"
#include "plugin/conf.h"
#include "test/lib/tst.h"

#define N_COLS 10

static const char *doc = "docs/criu-plugin.md";

/* The combinations the rows cover: image mode (5) x the seven inputs. */
static bool covered[5][1 << 7];

/* "yes", "no" or "any" as a mask of the values to try: 1 no, 2 yes. */
static int yes_no(const char *v)
{
	return !strcmp(v, "yes") ? 2 : !strcmp(v, "no") ? 1 : !strcmp(v, "any") ? 3 : 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\n'))
		*--e = 0;
	return s;
}

/* A row of the table split into its N_COLS cells; false when it has not that many. */
static bool split(char *line, char **cell)
{
	int n = 0;
	char *p = strchr(line, '|');

	while (p && n < N_COLS) {
		char *q = strchr(p + 1, '|');

		if (!q)
			break;
		*q = 0;
		cell[n++] = trim(p + 1);
		p = q;
	}
	return n == N_COLS;
}

/* decide() as plan.c runs it; *read: "head" or "whole". */
static struct decision run(struct decide_in in, uint64_t pairs, const char **read)
{
	struct decision d = { 0 };

	*read = "head";
	for (int k = 0; k < 4; k++) {
		d = decide(&in);
		if (d.outcome == DECIDE_READ_IMAGE) {
			in.whole = true;
			*read = "whole";
		} else if (d.outcome == DECIDE_COUNT_PAIRS) {
			in.pairs_known = true;
			in.pairs = pairs;
		} else {
			break;
		}
	}
	return d;
}

static const char *outcome_name(enum decide_outcome o)
{
	switch (o) {
	case DECIDE_REFUSE: return "refused";
	case DECIDE_CRIU: return "criu";
	case DECIDE_CRIU_CHECKED: return "criu, checked";
	case DECIDE_PTIMER: return "ptimer";
	default: return "no answer";
	}
}

/*
 * Every combination a row allows; how many it tried, or -1 when a cell is
 * not understood (said in a FAIL).
 */
static int check_row(int line, char **c)
{
	int restore = !strcmp(c[1], "auto") ? 1 : !strcmp(c[1], "takeover") ? 2 : !strcmp(c[1], "any") ? 3 : 0;
	int exact = yes_no(c[2]), prctl = yes_no(c[3]), complete = yes_no(c[5]), ahead = yes_no(c[6]);
	int overlay = yes_no(c[7]);
	int pairs = !strcmp(c[4], "<=256") ? 1 : !strcmp(c[4], ">256") ? 2 : !strcmp(c[4], "any") ? 3 : 0;
	struct decide_in base = { .state_in_core = true, .counts_known = true, .n_timers = 3 };
	char name[160];
	int tried = 0, img;

	if (!strcmp(c[0], "standalone")) {
		base.img_mode = PTIMER_IMG_STANDALONE;
	} else if (!strcmp(c[0], "timing kept")) {
		base.img_mode = PTIMER_CRIU_AUTO;
		base.state_in_core = false;
	} else if (!strcmp(c[0], "native")) {
		base.img_mode = PTIMER_CRIU_NATIVE;
	} else if (!strcmp(c[0], "auto")) {
		base.img_mode = PTIMER_CRIU_AUTO;
	} else if (!strcmp(c[0], "takeover")) {
		base.img_mode = PTIMER_CRIU_TAKEOVER;
	} else {
		base.img_mode = 99;
	}
	img = !strcmp(c[0], "standalone") ? 0 : !strcmp(c[0], "timing kept") ? 1 : !strcmp(c[0], "native") ? 2 :
	      !strcmp(c[0], "auto") ? 3 : 4;
	if (base.img_mode == 99 || !restore || !exact || !prctl || !pairs || !complete || !ahead || !overlay) {
		snprintf(name, sizeof(name), "decide/row-%d", line);
		FAIL(name, "%s:%d: a cell this test does not know", doc, line);
		return -1;
	}
	for (int m = 0; m < 1 << 7; m++) {
		int r = m & 1, e = m >> 1 & 1, p = m >> 2 & 1, q = m >> 3 & 1, x = m >> 4 & 1, a = m >> 5 & 1,
		    o = m >> 6 & 1;
		struct decide_in in = base;
		struct decision d;
		const char *read;
		bool ok;

		if (!(restore >> r & 1) || !(exact >> e & 1) || !(prctl >> p & 1) || !(pairs >> q & 1) ||
		    !(complete >> x & 1) || !(ahead >> a & 1) || !(overlay >> o & 1) || (e && !p))
			continue;
		in.takeover = r;
		in.criu_exact = e;
		in.prctl = p;
		in.n_pending = x;
		in.ahead = a;
		in.no_overlay = !o;
		d = run(in, q ? 1000 : 10, &read);
		ok = !strcmp(outcome_name(d.outcome), c[8]) && !strcmp(read, c[9]);
		/* criu makes them: ptimer completes exactly what there is */
		if (ok && d.outcome == DECIDE_CRIU)
			ok = x ? (d.todo & DO_PENDING) != 0 : d.todo == 0;
		if (ok && d.outcome == DECIDE_REFUSE)
			ok = d.why && d.why[0];
		tried++;
		covered[img][m] = true;
		if (!ok) {
			snprintf(name, sizeof(name), "decide/row-%d", line);
			FAIL(name, "%s:%d (restore %s, exact %d, prctl %d, pairs %d, complete %d, ahead %d, overlay %d): "
			     "want %s / %s, got %s / %s (todo %#x: %s)", doc, line, r ? "takeover" : "auto", e, p,
			     q ? 1000 : 10, x, a, o, c[8], c[9], outcome_name(d.outcome), read, d.todo,
			     d.why ? d.why : "");
			return tried;
		}
	}
	snprintf(name, sizeof(name), "decide/row-%d: %s | %s -> %s, %s (%d cases)", line, c[0], c[1], c[8], c[9],
		 tried);
	if (tried)
		tst_pass(name);
	else
		FAIL(name, "%s:%d: no case the row allows", doc, line);
	return tried;
}

/*
 * Every combination of the inputs lands in some row: a case the table does
 * not cover is a gap in the documentation.
 */
static void test_table(void)
{
	char line[1024], *c[N_COLS];
	int n = 0, at = 0;
	bool in_table = false;
	FILE *f = fopen(doc, "re");

	if (!f) {
		FAIL("decide/doc", "cannot open %s (run from the source tree, or give its path)", doc);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		at++;
		if (strstr(line, "<!-- decide-table -->")) {
			in_table = true;
			continue;
		}
		if (!in_table)
			continue;
		if (line[0] != '|')
			break;
		if (!split(line, c))
			continue;
		/* the header and the separator */
		if (!strcmp(c[0], "image") || !strncmp(c[0], "---", 3))
			continue;
		check_row(at, c);
		n++;
	}
	fclose(f);
	CHECK("decide/table-found", n >= 10, "%d rows after <!-- decide-table --> in %s", n, doc);
	for (int img = 0; img < 5; img++)
		for (int m = 0; m < 1 << 7; m++) {
			/* a criu that makes exact IDs has the prctl */
			if ((m >> 1 & 1) && !(m >> 2 & 1))
				continue;
			if (!covered[img][m]) {
				FAIL("decide/every-case-in-the-table", "image %d, inputs %#x: no row of %s covers it",
				     img, m, doc);
				return;
			}
		}
	tst_pass("decide/every-case-in-the-table");
}

/* What decide() asks for before it answers, and what it needs at init. */
static void test_steps(void)
{
	struct decide_in in = { .img_mode = PTIMER_CRIU_AUTO, .state_in_core = true, .counts_known = true,
				.n_timers = 2, .criu_exact = true, .prctl = true };
	struct decision d = decide(&in);

	CHECK("decide/head-only: criu makes exact IDs, nothing to complete: no read past the head",
	      d.outcome == DECIDE_CRIU && !d.needs && !d.todo, "outcome %d needs %#x todo %#x", d.outcome, d.needs,
	      d.todo);
	in.counts_known = false;
	d = decide(&in);
	CHECK("decide/old-head: counts not in the head: the whole image", d.outcome == DECIDE_READ_IMAGE,
	      "outcome %d", d.outcome);
	in = (struct decide_in){ .img_mode = PTIMER_CRIU_AUTO, .state_in_core = true, .whole = true, .n_timers = 2,
				 .prctl = true };
	d = decide(&in);
	CHECK("decide/count-pairs: criu's loop: its pairs asked for", d.outcome == DECIDE_COUNT_PAIRS, "outcome %d",
	      d.outcome);
	in.pairs_known = true;
	in.pairs = CRIU_LOOP_PAIRS_MAX;
	d = decide(&in);
	CHECK("decide/pairs-bound: 256 pairs are left to criu", d.outcome == DECIDE_CRIU, "outcome %d", d.outcome);
	in.pairs = CRIU_LOOP_PAIRS_MAX + 1;
	d = decide(&in);
	CHECK("decide/ptimer-needs: ptimer makes them from criu's timing",
	      d.outcome == DECIDE_PTIMER && d.needs == NEED_TIMING, "outcome %d needs %#x", d.outcome, d.needs);
	in.timers_in_core = true;
	in.n_timers = 0;
	d = decide(&in);
	CHECK("decide/timers-in-core: ptimer makes them from criu's core image",
	      d.outcome == DECIDE_PTIMER && d.needs == NEED_CORE_TIMERS, "outcome %d needs %#x", d.outcome, d.needs);
	in = (struct decide_in){ .img_mode = PTIMER_CRIU_AUTO, .state_in_core = true, .whole = true, .n_timers = 2,
				 .criu_exact = true, .prctl = true, .n_clock_tid = 1, .n_leader_aimed = 1, .slice = true };
	d = decide(&in);
	CHECK("decide/completions: a thread clock, a leader's timer, slice state",
	      d.outcome == DECIDE_CRIU && d.todo == (DO_CLOCKS | DO_REAIM | DO_SLICE) && d.needs == NEED_TIMING,
	      "outcome %d todo %#x needs %#x", d.outcome, d.todo, d.needs);
	in.prctl = false;
	in.criu_exact = false;
	in.pairs_known = true;
	in.img_mode = PTIMER_CRIU_NATIVE;
	d = decide(&in);
	CHECK("decide/no-reaim-without-prctl: a leader's timer stays as criu made it",
	      d.outcome == DECIDE_CRIU_CHECKED && !(d.todo & DO_REAIM), "outcome %d todo %#x", d.outcome, d.todo);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1)
		doc = argv[1];
	return CHECK_RUN(CHECK_TEST(test_table), CHECK_TEST(test_steps));
}
