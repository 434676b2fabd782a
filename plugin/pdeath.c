// SPDX-License-Identifier: MIT
/*
 * The tasks of a restore held by the parent-death signal: from criu's
 * restorer to ptimer's RESUME_DEVICES_LATE call, a task whose timers
 * ptimer makes dies with a killed criu rather than run on without them
 * (resume.c puts the dumped signal back).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "plugin/criu_core.h"
#include "plugin/plugin.h"

/*
 * A task whose timers ptimer makes has none from criu's
 * __restore_switch_stage(CR_STATE_COMPLETE), when criu lets the tasks run
 * to the end of their rt_sigreturn, to ptimer's RESUME_DEVICES_LATE call
 * for it; criu calls no plugin between (criu/cr-restore.c
 * restore_root_task()).  A criu killed there (a timeout, the OOM killer)
 * detaches it and it would run on without its timers.  So criu restores
 * it with the parent-death signal SIGKILL (thread_core.pdeath_sig of its
 * core image in the overlay, set by criu's restorer before that stage),
 * and so every ancestor up to the tree's root: the root is criu's child
 * (restore -d or not) and dies with criu, each child with its parent,
 * and the kernel sends the signal to a child whatever its tracer
 * (kernel/exit.c forget_original_parent()).  RESUME_DEVICES_LATE puts the
 * dumped signal back in each (resume.c), so that a restore that ends well
 * leaves the tasks as criu alone would.  A root criu restores as a sibling
 * (--restore-sibling: runc, libcriu's criu_restore_child) is its caller's
 * child, not criu's: from its first RESUME_DEVICES_LATE call the plugin's
 * PTRACE_O_EXITKILL holds it (resume.c), before that its caller's own
 * handling of criu's death does.
 * Tasks with no image get a plan of their own for it.  dir: criu's image
 * directory; tree[n_tree]: its pstree.img (NULL: not read, nothing done).
 * Returns 0 or
 * -errno (err set).
 */
int hold_by_pdeath(const char *dir, const struct ptimer_criu_task *tree, uint32_t n_tree, struct ptimer_err *err)
{
	char ov[4200], dest[4300];
	pid_t *up = NULL;
	size_t n_up = 0, n_old = n_plan;
	int ret = 0;

	if (!tree)
		return 0;
	/* the ancestors without the signal yet, each once */
	for (size_t i = 0; i < n_old; i++) {
		const struct ptimer_criu_task *t = plan[i].pdeath ?
			ptimer_criu_pstree_task(tree, n_tree, plan[i].vpid) : NULL;

		while (t && t->ppid) {
			struct planned *q = planned_of(t->ppid);
			bool seen = q && q->pdeath;
			pid_t *v;

			for (size_t k = 0; !seen && k < n_up; k++)
				seen = up[k] == t->ppid;
			if (seen)
				break;
			v = realloc(up, (n_up + 1) * sizeof(*up));
			if (!v) {
				free(up);
				return ptimer_errf(err, ENOMEM, "out of memory");
			}
			up = v;
			up[n_up++] = t->ppid;
			t = ptimer_criu_pstree_task(tree, n_tree, t->ppid);
		}
	}
	if (n_up) {
		struct planned *v = realloc(plan, (n_plan + n_up) * sizeof(*v));

		if (!v) {
			free(up);
			return ptimer_errf(err, ENOMEM, "out of memory");
		}
		plan = v;
	}
	for (size_t k = 0; !ret && k < n_up; k++) {
		struct planned *q = planned_of(up[k]);
		struct ptimer_criu_core *c = NULL;

		if (!q) {	/* a task without an image: criu's alone */
			q = memset(&plan[n_plan++], 0, sizeof(*plan));
			q->vpid = up[k];
			q->maker = MAKER_CRIU;
		}
		ret = overlay_make(dir, ov, sizeof(ov), err);
		snprintf(dest, sizeof(dest), "%s/core-%d.img", ov, q->vpid);
		if (!ret)
			ret = ptimer_criu_core_open(dir, q->vpid, &c, err);
		if (!ret)
			ret = ptimer_criu_core_pdeath(c, SIGKILL, &q->pdeath_orig, err);
		if (!ret)
			ret = ptimer_criu_core_write(c, dest, err);
		ptimer_criu_core_close(c);
		q->pdeath = !ret;
		n_work += !q->work;
		q->work = true;
		/* planned_of's order for the next one */
		sort_plan();
	}
	free(up);
	return ret;
}
