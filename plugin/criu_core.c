// SPDX-License-Identifier: MIT
/*
 * Editing CRIU's core-<pid>.img: the plugin takes the POSIX timers out of
 * criu's hands, so criu must not find them in the core image at restore.
 *
 * Format (criu/include/magic.h, criu/image.c, criu/protobuf.c): a 32-bit
 * IMG_COMMON_MAGIC, a 32-bit CORE_MAGIC, then one entry: a 32-bit length
 * and a CoreEntry protobuf, host byte order.  Only tc.timers.posix is
 * touched; every other field is carried through protobuf-c's unknown fields
 * (proto/criu_core.proto).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/file.h"
#include "plugin/criu_core.h"
#include "proto/criu_core.pb-c.h"

#define CRIU_IMG_COMMON_MAGIC	0x54564319u
#define CRIU_CORE_MAGIC		0x55053847u

/* criu's core-<vpid>.img: a few KiB; larger is not a core image. */
#define CRIU_CORE_MAX	(64u << 20)

static int read_core(const char *path, uint8_t **buf, size_t *len, struct ptimer_err *err)
{
	char *b;
	int ret = ptimer_file_read(path, "criu image", CRIU_CORE_MAX, PTIMER_FILE_REGULAR, &b, len, err);

	if (ret)
		return ret;
	if (*len < 12) {
		free(b);
		return ptimer_errf(err, EINVAL, "criu image %s: size %zu is not that of a core image", path,
				   *len);
	}
	*buf = (uint8_t *)b;
	return 0;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

int ptimer_criu_core_strip_timers(const char *dir, pid_t vpid, uint32_t *removed, struct ptimer_err *err)
{
	char path[4096];
	uint8_t *buf = NULL, *out = NULL;
	CriuCoreEntry *core = NULL;
	size_t len, elen, olen;
	int ret;

	*removed = 0;
	snprintf(path, sizeof(path), "%s/core-%d.img", dir, vpid);
	ret = read_core(path, &buf, &len, err);
	if (ret)
		return ret;
	if (get_u32(buf) != CRIU_IMG_COMMON_MAGIC || get_u32(buf + 4) != CRIU_CORE_MAGIC) {
		ret = ptimer_errf(err, EINVAL, "%s: not a criu core image (magic %#x %#x)", path, get_u32(buf),
				  get_u32(buf + 4));
		goto out;
	}
	elen = get_u32(buf + 8);
	if (elen > len - 12) {
		ret = ptimer_errf(err, EINVAL, "%s: entry of %zu bytes, only %zu follow", path, elen, len - 12);
		goto out;
	}
	core = criu_core_entry__unpack(NULL, elen, buf + 12);
	if (!core) {
		ret = ptimer_errf(err, EINVAL, "%s: CoreEntry does not decode", path);
		goto out;
	}
	if (!core->tc || !core->tc->timers || !core->tc->timers->n_posix)
		goto out;	/* nothing to take out: the file stays as it is */
	*removed = (uint32_t)core->tc->timers->n_posix;
	for (size_t i = 0; i < core->tc->timers->n_posix; i++)
		criu_posix_timer_entry__free_unpacked(core->tc->timers->posix[i], NULL);
	free(core->tc->timers->posix);
	core->tc->timers->posix = NULL;
	core->tc->timers->n_posix = 0;

	olen = criu_core_entry__get_packed_size(core);
	out = malloc(12 + olen + (len - 12 - elen));
	if (!out) {
		ret = ptimer_errf(err, ENOMEM, "out of memory for %s", path);
		goto out;
	}
	memcpy(out, buf, 8);
	memcpy(out + 8, &(uint32_t){ (uint32_t)olen }, 4);
	criu_core_entry__pack(core, out + 12);
	/* whatever followed the entry stays */
	memcpy(out + 12 + olen, buf + 12 + elen, len - 12 - elen);
	/*
	 * The new file must be criu's image in everything but the timers:
	 * owner, group and mode are those of the old one (criu creates images
	 * 0644 with open(2), criu/image.c; in a user namespace the restored
	 * init, root mapped to an unprivileged host uid, opens its children's
	 * core images).
	 */
	ret = ptimer_file_replace(path, "criu image", out, 12 + olen + (len - 12 - elen), 0,
				  PTIMER_FILE_KEEP_OWNER | PTIMER_FILE_SYNC_DIR, err);
out:
	if (core)
		criu_core_entry__free_unpacked(core, NULL);
	free(out);
	free(buf);
	return ret;
}
