// SPDX-License-Identifier: MIT
/*
 * zero_plugin.so - a CRIU plugin that answers 0 ("done") for every task at
 * CHECKPOINT_DEVICES and RESUME_DEVICES_LATE, as criu's CUDA plugin does
 * when it is enabled (plugins/cuda/cuda_plugin.c, criu 4.1+), and writes
 * "HOOK PID" lines to the file $ZERO_PLUGIN_LOG for each call: the plugin
 * chain case (test/cases/plugin-chain) puts it beside ptimer's in both load
 * orders.  With $ZERO_PLUGIN_KILL_CRIU set it SIGKILLs criu at its first
 * RESUME_DEVICES_LATE call, after it logged it: a criu killed between the
 * tasks' calls (loaded after ptimer, that is right after ptimer's call for
 * the first task).  With $ZERO_PLUGIN_HIDDEN set it says at its init that
 * it is disabled (the global plugin_disabled, as criu's GPU plugins say
 * it), so that ptimer, loaded after it, does not see it ahead, while its
 * hooks stay in criu's chains: with $ZERO_PLUGIN_KILL_CRIU, criu is then
 * killed before ptimer's first RESUME_DEVICES_LATE call.  Built in the
 * criu roots against their criu-plugin.h.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <criu/criu-plugin.h>

static void note(const char *hook, int pid)
{
	const char *path = getenv("ZERO_PLUGIN_LOG");
	FILE *f = path ? fopen(path, "a") : NULL;

	if (f) {
		fprintf(f, "%s %d\n", hook, pid);
		fclose(f);
	}
}

bool plugin_disabled;

static int zero_init(int stage)
{
	note("init", stage);
	plugin_disabled = getenv("ZERO_PLUGIN_HIDDEN") != NULL;
	return 0;
}

static void zero_exit(int stage, int ret)
{
	note("exit", stage);
}

static int zero_checkpoint(int pid)
{
	note("CHECKPOINT_DEVICES", pid);
	return 0;
}

static int zero_resume(int pid)
{
	note("RESUME_DEVICES_LATE", pid);
	if (getenv("ZERO_PLUGIN_KILL_CRIU"))
		kill(getpid(), SIGKILL);
	return 0;
}

CR_PLUGIN_REGISTER("zero", zero_init, zero_exit)
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__CHECKPOINT_DEVICES, zero_checkpoint)
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE, zero_resume)
