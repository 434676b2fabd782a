// SPDX-License-Identifier: MIT
/*
 * The criu this plugin is loaded into, and the kernel it runs on: does it
 * restore exact timer IDs by itself?  Learnt once a restore, with no file
 * read and no process started.
 */
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "plugin/plugin.h"
#include "restorer/abi.h"

/*
 * Does the criu running us restore exact timer IDs by itself, on this
 * kernel?  criu 4.2 switches PR_TIMER_CREATE_RESTORE_IDS on in its restorer
 * (criu/pie/restorer.c create_posix_timers(), when criu/kerndat.c found the
 * prctl); criu 4.1 and older, or any criu on a kernel before 6.15 (no prctl
 * 77: kernel commit ec2d0c04624b), make each ID by the create/delete loop,
 * slow for sparse IDs and failing when the counter has passed one.
 * -1 until asked; why says what decided it.
 */
static int criu_exact = -1;
char criu_exact_why[160];

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
	 * the string constants are in the read-only segment after the code
	 * (.rodata, .eh_frame), not in the one at offset 0 (ELF header,
	 * symbols, relocations): that segment alone is searched, a third
	 * of what criu maps read-only.  Searching all of them cost criu
	 * 4.1.1, which has no such string, ~0.4 ms of each restore (1.5 MB
	 * looked at, most of it touched the first time).  Where there is
	 * no such segment (arm64 Debian's criu: one R E segment from offset
	 * 0) every read-only one is searched, code or not.
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
 * criu_knows_timer_cr_ids - does the criu executable this plugin is loaded
 * into know exact-ID timer restore?  criu 4.2 added it together with the
 * feature "timer_cr_ids" of `criu check --feature` (criu/cr-check.c, its
 * feature table; the restorer uses it when criu/kerndat.c
 * kerndat_has_timer_cr_ids() found the prctl), so the name, a string
 * constant, is in criu's read-only segments from 4.2 on and in none
 * before.  Looked up in criu's own mapped segments (dl_iterate_phdr's
 * first object is the executable): no file read, no process started.
 * Replaces running `criu --version`, which cost a restore 10-50 ms (a
 * second criu loading all of criu's libraries).  A criu that renamed the
 * feature reads as one without: ptimer then restores the timers itself,
 * which is right, only slower.  Returns 1 or 0.
 */
static int criu_knows_timer_cr_ids(void)
{
	struct criu_knows k = { "timer_cr_ids", 0 };

	dl_iterate_phdr(criu_knows_one, &k);
	return k.found;
}

bool can_criu_restore_exact(void)
{
	bool prctl_ok;

	if (criu_exact >= 0)
		return criu_exact;
	prctl_ok = prctl(PTIMER_PR_TIMER_CREATE_RESTORE_IDS, PTIMER_PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) >= 0;
	if (!criu_knows_timer_cr_ids()) {
		criu_exact = 0;
		snprintf(criu_exact_why, sizeof(criu_exact_why), "this criu makes timer IDs by its create/delete "
			 "loop (it has no feature timer_cr_ids: exact IDs from criu 4.2)");
	} else if (!prctl_ok) {
		criu_exact = 0;
		snprintf(criu_exact_why, sizeof(criu_exact_why), "this kernel has no exact-ID timer_create "
			 "(PR_TIMER_CREATE_RESTORE_IDS, Linux 6.15)");
	} else {
		criu_exact = 1;
		snprintf(criu_exact_why, sizeof(criu_exact_why), "this criu (feature timer_cr_ids) on a kernel with "
			 "PR_TIMER_CREATE_RESTORE_IDS restores exact timer IDs itself");
	}
	return criu_exact;
}
