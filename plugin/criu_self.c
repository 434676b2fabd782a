// SPDX-License-Identifier: MIT
/*
 * Does the criu this plugin is loaded into restore exact timer IDs by
 * itself, on this kernel?  criu 4.2 switches PR_TIMER_CREATE_RESTORE_IDS on
 * in its restorer (criu/pie/restorer.c create_posix_timers(), when
 * criu/kerndat.c found the prctl); criu 4.1 and older, or any criu on a
 * kernel before 6.15 (no prctl 77: kernel commit ec2d0c04624b), make each
 * ID by the create/delete loop.  Learnt with no file read and no process
 * started (running `criu --version` loads a second criu with all its
 * libraries).
 */
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "plugin/plugin.h"
#include "restorer/abi.h"

struct criu_knows {
	const char *what;
	int found;
};

static int criu_knows_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct criu_knows *k = data;
	size_t n = strlen(k->what) + 1;
	bool rodata = false;

	(void)size;
	/*
	 * Where the linker separates code (-z separate-code, x86_64 Debian)
	 * the string constants are in the read-only segment after the code,
	 * not in the one at offset 0 (ELF header, symbols, relocations):
	 * that segment alone is searched, so that a criu without the string
	 * is not read whole at each restore.  Where there is no such segment
	 * (arm64 Debian's criu: one R E segment from offset 0) every
	 * read-only one is searched.
	 */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && !(ph->p_flags & (PF_W | PF_X)) && ph->p_offset)
			rodata = true;
	}
	for (int i = 0; i < info->dlpi_phnum && !k->found; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R) || (ph->p_flags & PF_W) ||
		    (rodata && ((ph->p_flags & PF_X) || !ph->p_offset)))
			continue;
		if (memmem((const void *)(info->dlpi_addr + ph->p_vaddr), ph->p_filesz, k->what, n))
			k->found = 1;
	}
	return 1;	/* the first object is the executable: criu itself */
}

/*
 * Does the criu executable know exact-ID timer restore?  criu 4.2 added it
 * with the feature "timer_cr_ids" of `criu check --feature`
 * (criu/cr-check.c), so that string is in criu's read-only segments from
 * 4.2 on and in none before (dl_iterate_phdr's first object is the
 * executable).  A criu that renamed the feature reads as one without:
 * ptimer then restores the timers itself, right, only slower.
 */
static int criu_knows_timer_cr_ids(void)
{
	struct criu_knows k = { "timer_cr_ids", 0 };

	dl_iterate_phdr(criu_knows_one, &k);
	return k.found;
}

bool criu_makes_exact_ids(char *why, size_t len)
{
	bool prctl_ok = prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) >= 0;

	if (!criu_knows_timer_cr_ids()) {
		snprintf(why, len, "this criu makes timer IDs by its create/delete loop (it has no feature "
			 "timer_cr_ids: exact IDs from criu 4.2)");
		return false;
	}
	if (!prctl_ok) {
		snprintf(why, len, "this kernel has no exact-ID timer_create (PR_TIMER_CREATE_RESTORE_IDS, Linux 6.15)");
		return false;
	}
	snprintf(why, len, "this criu (feature timer_cr_ids) on a kernel with PR_TIMER_CREATE_RESTORE_IDS restores "
		 "exact timer IDs itself");
	return true;
}
