// SPDX-License-Identifier: MIT
/* Small /proc readers (lib/procfs.h). */
#include <errno.h>
#include <stdio.h>

#include "lib/procfs.h"

pid_t ptimer_proc_tgid(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}
