// SPDX-License-Identifier: MIT
/*
 * The plugins criu loaded before ptimer: which of them handle a hook ptimer
 * needs (hooks.c says at exit what they kept from it).  criu's GPU plugins (plugins/cuda, plugins/amdgpu) are the ones
 * met in practice: enabled, they answer every task's CHECKPOINT_DEVICES and
 * RESUME_DEVICES_LATE themselves.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <criu/criu-plugin.h>

#include "plugin/plugin.h"

/*
 * The plugins criu loaded before this one that handle a hook ptimer needs.
 * criu loads the plugin directory's *.so in readdir order and runs each
 * one's init as it loads it (criu/plugin.c cr_lib_load()), chaining each
 * hook's handlers in that order; run_plugins() stops at the first answer
 * that is not -ENOTSUP.  So at our init the plugins already loaded are the
 * ones ahead of us, and one of them (criu's CUDA plugin, enabled, answers 0
 * for every task) can keep us from a hook.  Their names, for the messages.
 */

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

void find_ahead(int hook, char *buf, size_t len)
{
	struct ahead_walk w = { .hook = hook, .buf = buf, .len = len };
	const char *slash;
	Dl_info self;

	buf[0] = 0;
	if (dladdr((void *)find_ahead, &self) && self.dli_fname && (slash = strrchr(self.dli_fname, '/'))) {
		w.dir = self.dli_fname;
		w.dir_len = (size_t)(slash - self.dli_fname) + 1;
	}
	dl_iterate_phdr(ahead_one, &w);
}
