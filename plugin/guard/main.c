// SPDX-License-Identifier: MIT
/*
 * The overlay's guard as a program of its own: a static executable with
 * no libc and no dynamic loader (built as build/plugin/guard/guard.elf,
 * embedded in ptimer_plugin.so by restorer/blob_embed.S), which the plugin
 * executes from a memfd (overlay.c: guard_start).  Its start is an
 * execve and nothing more: no library is mapped or relocated while criu
 * restores on the other CPU.  What it is given:
 *   argv: "ptimer-guard" (what kills criu by name must not kill it)
 *   envp: PTIMER_GUARD=<criu's pid> <flags, guard.h> <the overlay's name>
 *   fds:  3 criu's pipe, 4 the pipe to criu, 5 the image directory,
 *         6 criu's pidfd (closed: none)
 * Run otherwise (by hand), it says what it is and exits 2.
 */
#include "plugin/guard/guard.h"
#include "plugin/guard/sys.h"

static const char *env_value(char **envp, const char *key)
{
	for (; *envp; envp++) {
		const char *e = *envp, *k = key;

		while (*k && *e == *k)
			e++, k++;
		if (!*k && *e == '=')
			return e + 1;
	}
	return NULL;
}

/* a decimal number at *s, up to a space; -1 when none */
static long number(const char **s)
{
	long v = 0;
	int digits = 0;

	for (; **s >= '0' && **s <= '9' && digits < 10; (*s)++, digits++)
		v = v * 10 + (**s - '0');
	if (!digits || **s != ' ')
		return -1;
	(*s)++;
	return v;
}

__attribute__((used, noreturn)) void guard_main(long *sp);
void guard_main(long *sp)
{
	long argc = sp[0];
	char **envp = (char **)(sp + 1 + argc + 1);
	const char *arg = env_value(envp, "PTIMER_GUARD"), *name = arg;
	long criu = arg ? number(&name) : -1, flags = arg ? number(&name) : -1;
	static const char prefix[] = OVERLAY_PREFIX;
	size_t len = 0;

	while (name && name[len] && len < 64)
		len++;
	if (criu <= 0 || flags < 0 || len <= sizeof(prefix) - 1 || len >= 64 ||
	    g_fcntl(3, G_F_GETFD, 0) < 0 || g_fcntl(4, G_F_GETFD, 0) < 0 || g_fcntl(5, G_F_GETFD, 0) < 0) {
		static const char msg[] = "ptimer-guard is started by ptimer's criu plugin for a criu restore; "
					  "it takes no arguments\n";

		g_write(2, msg, sizeof(msg) - 1);
		g_exit(2);
	}
	for (size_t i = 0; i < sizeof(prefix) - 1; i++)
		if (name[i] != prefix[i])
			g_exit(2);
	if (flags & GUARD_DIES)
		g_exit(3);
	g_prctl(G_PR_SET_NAME, (unsigned long)"ptimer-guard");
	guard_loop((int)criu, g_fcntl(6, G_F_GETFD, 0) >= 0 ? 6 : -1, 3, 4, 5, name, (unsigned)flags);
}

/* The kernel's entry: the initial stack (argc, argv..., envp...) to
 * guard_main, the stack aligned as the ABI wants at a call. */
#if defined(__x86_64__)
__asm__(".text\n"
	".globl _start\n"
	".type _start, @function\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call guard_main\n"
	"	hlt\n"
	".size _start, . - _start\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl _start\n"
	".type _start, %function\n"
	"_start:\n"
	"	mov x29, #0\n"
	"	mov x30, #0\n"
	"	mov x0, sp\n"
	"	bl guard_main\n"
	"	brk #0\n"
	".size _start, . - _start\n");
#endif
