// SPDX-License-Identifier: MIT
/*
 * The decision table (docs/criu-plugin.md, "At restore: who restores the
 * timers"), row by row.  criu 4.2 on a kernel with the exact-ID prctl
 * makes the IDs itself in its restorer (criu/pie/restorer.c
 * create_posix_timers()); criu 4.1, or any criu without the prctl, makes
 * them by its create/delete loop, right for any set but one pair per ID
 * skipped; ptimer takes over where that loop is slow, where criu would
 * get a timer wrong, or where the settings say so.
 */
#include "plugin/decide.h"
#include "plugin/conf.h"

static struct decision refuse(const char *why)
{
	return (struct decision){ .outcome = DECIDE_REFUSE, .why = why };
}

struct decision decide(const struct decide_in *in)
{
	bool auto_ = in->img_mode == PTIMER_CRIU_AUTO && !in->takeover;
	bool completions = in->n_pending || in->n_clock_tid || in->n_leader_aimed;
	struct decision d = { .outcome = DECIDE_PTIMER };

	if (in->img_mode == PTIMER_IMG_STANDALONE)
		return refuse("was written by `ptimer dump`, not by the CRIU plugin: restore it with `ptimer "
			      "restore`, or remove it to restore as criu alone would");
	if (in->img_mode < PTIMER_IMG_CRIU_FIRST || in->img_mode > PTIMER_IMG_CRIU_LAST)
		return refuse("names a criu-mode this plugin does not know: restore it with the ptimer that "
			      "dumped it, or dump again");
	if (!in->state_in_core && in->n_timers)
		return refuse("keeps the timers' timing itself, a format of a development ptimer that no "
			      "release restores: dump again");
	/*
	 * criu makes exact IDs and checks each one it gets: with nothing
	 * to complete, the image's head is all the restore reads.
	 */
	if (!in->whole) {
		if (!auto_ || !in->criu_exact || !in->counts_known || completions)
			return (struct decision){ .outcome = DECIDE_READ_IMAGE };
		return (struct decision){ .outcome = DECIDE_CRIU, .todo = in->slice ? DO_SLICE : 0,
					  .why = "criu makes exact IDs itself; its image's head is all ptimer reads" };
	}
	if (in->img_mode == PTIMER_CRIU_NATIVE) {
		d.outcome = DECIDE_CRIU_CHECKED;
		d.why = "criu-mode native (the dump's): criu makes them, ptimer checks them";
	} else if (auto_ && in->criu_exact) {
		d.outcome = DECIDE_CRIU;
		d.why = "criu makes exact IDs itself";
	} else if (auto_ && !in->prctl && completions) {
		/* completing re-creates a timer under its own ID */
		d.why = "completing what criu makes (a pending expiry, a thread CPU clock, a pid-namespace "
			"leader's timer) needs the exact-ID prctl, which this kernel lacks";
	} else if (auto_ && !in->pairs_known) {
		return (struct decision){ .outcome = DECIDE_COUNT_PAIRS };
	} else if (auto_ && in->pairs <= CRIU_LOOP_PAIRS_MAX) {
		d.outcome = DECIDE_CRIU;
		d.why = "criu's create/delete loop reaches its IDs cheaply";
	} else if (auto_) {
		d.why = "criu's create/delete loop would reach its IDs slowly";
	} else {
		d.why = in->takeover ? "criu-mode takeover in the restore's settings" :
				       "criu-mode takeover (the dump's)";
	}
	/* criu's core image keeps the timers where ptimer may not be called
	 * for the task, or where criu cannot be given one without them */
	if (d.outcome == DECIDE_PTIMER && (in->ahead || in->no_overlay)) {
		d.outcome = DECIDE_CRIU_CHECKED;
		d.why = in->ahead ? "a plugin loaded before ptimer may answer RESUME_DEVICES_LATE for it: criu "
				    "makes them, ptimer checks them where it is called" :
				    "no core image without the timers can be given to criu: criu makes them, "
				    "ptimer checks them";
	}
	if (d.outcome != DECIDE_PTIMER) {
		d.todo = (in->n_leader_aimed && in->prctl ? DO_REAIM : 0) | (in->n_clock_tid ? DO_CLOCKS : 0) |
			 (in->slice ? DO_SLICE : 0);
	}
	d.todo |= in->n_pending ? DO_PENDING : 0;
	if (in->n_timers && (d.outcome != DECIDE_CRIU || in->n_pending || in->n_clock_tid))
		d.needs |= NEED_TIMING;
	if (in->timers_in_core && d.outcome != DECIDE_CRIU)
		d.needs |= NEED_CORE_TIMERS;
	return d;
}
