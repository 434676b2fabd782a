// SPDX-License-Identifier: MIT
/*
 * The plugins criu loaded before ptimer: which of them handle a hook ptimer
 * needs, and what they kept from it, said once the dump or restore is
 * through.  criu's GPU plugins (plugins/cuda, plugins/amdgpu) are the ones
 * met in practice: enabled, they answer every task's CHECKPOINT_DEVICES and
 * RESUME_DEVICES_LATE themselves.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <criu/criu-plugin.h>

#include "core/log.h"
#include "plugin/criu_core.h"
#include "plugin/plugin.h"

/*
 * The plugins criu loaded before this one that handle a hook ptimer needs.
 * criu loads the plugin directory's *.so in readdir order and runs each
 * one's init as it loads it (criu/plugin.c cr_lib_load()), chaining each
 * hook's handlers in that order; run_plugins() stops at the first answer
 * that is not -ENOTSUP.  So at our init the plugins already loaded are the
 * ones ahead of us, and one of them (criu's CUDA plugin, enabled, answers 0
 * for every task) can keep us from a hook.  Their names, for the messages;
 * n_seen counts the tasks each hook of ours was called for.
 */
char ahead[256];
unsigned int n_seen;

struct ahead_walk {
	int hook;
	char *buf;
	size_t len;
	const char *dir;	/* our directory with its '/', as criu named it */
	size_t dir_len;		/* 0: not known, every object looked at */
};

static bool ends_in_so(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && !strcmp(name + n - 3, ".so");
}

static int ahead_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ahead_walk *w = arg;
	cr_plugin_desc_t *d;
	const bool *off;
	void *h;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	/*
	 * criu loads its plugins as "LIBDIR/NAME.so", every one from the one
	 * directory it loaded us from (criu/plugin.c cr_plugin_init(), 4.0 to
	 * criu-dev).  An object named from elsewhere is not one, unless its
	 * name ends in ".so" (a plugin mapped before under another name,
	 * LD_PRELOAD or a symbolic link, keeps that name: dlopen returns the
	 * same object); criu's own libraries, about 25, end in ".so.N".
	 * Looking each up (dlopen, dlsym) cost ~0.2 ms of every dump and
	 * restore on a VM where each first touch of a page traps.
	 */
	if (w->dir_len && (strncmp(info->dlpi_name, w->dir, w->dir_len) ||
			   strchr(info->dlpi_name + w->dir_len, '/')) && !ends_in_so(info->dlpi_name))
		return 0;
	h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	d = dlsym(h, "CR_PLUGIN_DESC");
	/*
	 * criu's GPU plugins keep what their init decided in a global
	 * (plugins/cuda/cuda_plugin.c and plugins/amdgpu/amdgpu_plugin.c,
	 * criu 4.1, 4.2: bool plugin_disabled): no GPU or no cuda-checkpoint
	 * at dump, a checkpoint whose inventory does not name them at restore.
	 * Disabled, every hook of theirs answers -ENOTSUP: not in our way.
	 */
	off = dlsym(h, "plugin_disabled");
	if (d && d != &CR_PLUGIN_DESC && (unsigned int)w->hook < d->max_hooks && d->hooks[w->hook] &&
	    !(off && *off)) {
		size_t used = strlen(w->buf);

		snprintf(w->buf + used, w->len - used, "%s%s (%s)", used ? ", " : "", d->name ? d->name : "?",
			 info->dlpi_name);
	}
	dlclose(h);
	return 0;
}

/* The plugins loaded before ptimer with a handler for hook, into ahead. */
void find_ahead(int hook)
{
	struct ahead_walk w = { .hook = hook, .buf = ahead, .len = sizeof(ahead) };
	const char *slash;
	Dl_info self;

	ahead[0] = 0;
	n_seen = 0;
	if (dladdr((void *)find_ahead, &self) && self.dli_fname && (slash = strrchr(self.dli_fname, '/'))) {
		w.dir = self.dli_fname;
		w.dir_len = (size_t)(slash - self.dli_fname) + 1;
	}
	dl_iterate_phdr(ahead_one, &w);
}


/* How many tasks criu saved (its pstree.img), 0 when it cannot be read. */
static unsigned int tasks_saved(void)
{
	struct ptimer_criu_task *tree = NULL;
	struct ptimer_err err;
	uint32_t n = 0;
	char dir[4096];

	image_dir(dir, sizeof(dir));
	if (ptimer_criu_pstree_read(dir, &tree, &n, &err))
		return 0;
	ptimer_criu_pstree_free(tree, n);
	return n;
}

/*
 * What a plugin ahead of ptimer kept from it (find_ahead), said once the
 * dump or restore is through: never a silent change.  At dump criu saved
 * those tasks' timers alone (a restore gives them back as criu alone
 * would); at restore criu made them (the plan left the core images
 * whole), and ptimer's additions to what criu made are missing.
 */
void report_ahead(int stage, int ret)
{
	unsigned int n;

	if (!ahead[0] || ret)
		return;
	if (stage == CR_PLUGIN_STAGE__DUMP) {
		n = tasks_saved();
		if (n > n_seen)
			ptimer_log(PTIMER_LOG_WARN, "ptimer was called for %u of the %u tasks criu saved: %s answered "
				   "CHECKPOINT_DEVICES first for the others, whose timers criu saved alone", n_seen, n,
				   ahead);
		return;
	}
	for (size_t i = 0; i < n_plan; i++)
		if (plan[i].work && !plan[i].run.seen)
			ptimer_log(PTIMER_LOG_WARN, "task vpid %d: %s answered RESUME_DEVICES_LATE before ptimer: its "
				   "%u timers are as criu restored them (a thread-CPU-clock timer in the leader, a "
				   "pid-namespace leader's timer aimed at the process, a pending expiry as criu queues "
				   "it, no rseq slice extension)", plan[i].vpid, ahead, plan[i].n_timers);
}

