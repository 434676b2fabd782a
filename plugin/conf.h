/* SPDX-License-Identifier: MIT */
/*
 * The CRIU plugin's settings: a file in criu's configuration directory,
 * each key overridden by an environment variable of criu's.
 *
 *   /etc/criu/ptimer.conf (PTIMER_CONFIG names another file; a missing file
 *   means every default).  One "key = value" or "key value" a line, '#'
 *   starts a comment, keys and values are case-sensitive:
 *
 *   key            values                   environment          default
 *   criu-mode      auto | takeover | native PTIMER_CRIU_MODE     auto
 *   strict         yes | no                 PTIMER_STRICT        no
 *   restore-mode   auto | exact | linear    PTIMER_RESTORE_MODE  auto
 *   rseq-slice     auto | require | off     PTIMER_RSEQ_SLICE    auto
 *
 * criu-mode and strict act at dump, restore-mode and rseq-slice at restore.
 * strict also takes 1/0, true/false, on/off.  A bad key or value, in the file
 * or the environment, is an error naming it and where it came from: the
 * plugin's init fails, and so does criu's dump or restore.
 */
#ifndef PTIMER_PLUGIN_CONF_H
#define PTIMER_PLUGIN_CONF_H

#include <stdbool.h>

#include "core/restore.h"
#include "core/rseq.h"
#include "images/image.h"

#define PTIMER_CONF_DEFAULT_PATH "/etc/criu/ptimer.conf"

/*
 * criu-mode: who restores the timers when criu restores the checkpoint
 * (plugin/plan.c says how each is carried out).  The value is written as
 * the image's criu_mode (images/image.h), so the numbers are the format's.
 */
enum ptimer_criu_mode {
	PTIMER_CRIU_TAKEOVER = PTIMER_IMG_CRIU_FIRST,	/* the plugin restores;
							   criu's core has no timers */
	PTIMER_CRIU_NATIVE = 2,		/* criu restores; the plugin verifies */
	PTIMER_CRIU_AUTO = PTIMER_IMG_CRIU_LAST,	/* criu restores (its core keeps
					   them) when the restoring criu makes
					   exact IDs itself (criu 4.2+ on Linux
					   6.15+); otherwise the plugin takes
					   them over at restore */
};

struct ptimer_plugin_conf {
	enum ptimer_criu_mode criu_mode;	/* AUTO, TAKEOVER or NATIVE */
	bool strict;
	enum ptimer_restore_mode restore_mode;
	enum ptimer_rseq_slice rseq_slice;
	char path[256];				/* the file read ("" if none) */
};

/*
 * ptimer_plugin_conf_load - defaults, then the file (path, or $PTIMER_CONFIG,
 * or PTIMER_CONF_DEFAULT_PATH when path is NULL), then the environment.
 * Returns 0, -EINVAL for a bad key or value (err: "FILE:LINE: ..." or
 * "PTIMER_X=...: ..."), or -errno when the file exists but cannot be read.
 */
int ptimer_plugin_conf_load(struct ptimer_plugin_conf *c, const char *path, struct ptimer_err *err);

#endif
