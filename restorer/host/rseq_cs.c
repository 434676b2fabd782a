// SPDX-License-Identifier: MIT
/*
 * A thread stopped inside an rseq critical section, and code run in it.
 *
 * When a thread that was preempted (a ptrace stop is one) goes back to user
 * space, the kernel looks at struct rseq.rseq_cs of its registration
 * (kernel/rseq.c rseq_ip_fixup()): instruction pointer inside
 * [start_ip, start_ip + post_commit_offset) means "abort": the IP becomes
 * abort_ip.  Outside the section it only clears rseq_cs.  Running our code
 * in the thread moves the IP out of the section, so the kernel clears
 * rseq_cs without an abort, and putting the saved registers back would
 * resume the thread inside its section, unprotected.  So before any code
 * runs, we do what the preemption would have done: move the saved IP to
 * abort_ip; and we put the rseq_cs word back afterwards, so that a thread we
 * did not move (its IP outside the section, or a descriptor whose flags ask
 * the kernel not to restart) finds its memory as it left it.  CRIU does the
 * same at dump (criu/cr-dump.c fixup_thread_rseq(), restore_rseq_cs()).
 *
 * uapi/linux/rseq.h: struct rseq { u32 cpu_id_start; u32 cpu_id;
 * u64 rseq_cs; u32 flags; ... }, struct rseq_cs { u32 version; u32 flags;
 * u64 start_ip; u64 post_commit_offset; u64 abort_ip; }.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>

#include "restorer/host/inject.h"
#include "lib/vm.h"

#define PTRACE_GET_RSEQ_CONFIGURATION_	0x420f	/* uapi/linux/ptrace.h, Linux 5.13 */
#define RSEQ_RSEQ_CS_OFF		8	/* struct rseq.rseq_cs */
#define RSEQ_FLAGS_OFF			16	/* struct rseq.flags */
#define RSEQ_CS_NO_RESTART_FLAGS	0x7	/* RSEQ_CS_FLAG_NO_RESTART_ON_{PREEMPT,SIGNAL,MIGRATE} */

struct rseq_config_ {
	uint64_t rseq_abi_pointer;
	uint32_t rseq_abi_size;
	uint32_t signature;
	uint32_t flags;
	uint32_t pad;
};

struct rseq_cs_ {
	uint32_t version;
	uint32_t flags;
	uint64_t start_ip;
	uint64_t post_commit_offset;
	uint64_t abort_ip;
};

static int peek(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	return ptimer_vm_copy(tid, addr, buf, len, false);
}

int ptimer_rseq_cs_save(pid_t tid, uint64_t ip, struct ptimer_rseq_cs_save *s)
{
	struct rseq_config_ c;
	struct rseq_cs_ cs;
	uint32_t rseq_flags;
	int r;

	memset(s, 0, sizeof(*s));
	s->ip = s->resume_ip = ip;
	memset(&c, 0, sizeof(c));
	/* EIO before Linux 5.13: no way to know the registration; nothing to do */
	if (ptrace(PTRACE_GET_RSEQ_CONFIGURATION_, tid, (void *)sizeof(c), &c) < 0 || !c.rseq_abi_pointer ||
	    c.rseq_abi_size < RSEQ_FLAGS_OFF + sizeof(rseq_flags))
		return 0;
	s->rseq_cs_addr = c.rseq_abi_pointer + RSEQ_RSEQ_CS_OFF;
	r = peek(tid, s->rseq_cs_addr, &s->rseq_cs, sizeof(s->rseq_cs));
	if (r)
		return r;
	s->saved = true;
	if (!s->rseq_cs)
		return 0;
	r = peek(tid, c.rseq_abi_pointer + RSEQ_FLAGS_OFF, &rseq_flags, sizeof(rseq_flags));
	if (!r)
		r = peek(tid, s->rseq_cs, &cs, sizeof(cs));
	/* a stale or bad pointer: the kernel would find the same; keep the word */
	if (r || cs.version != 0)
		return 0;
	if (ip < cs.start_ip || ip - cs.start_ip >= cs.post_commit_offset)
		return 0;
	s->in_section = true;
	/* NO_RESTART flags (before Linux 6.0): the kernel decides on resume */
	if ((cs.flags | rseq_flags) & RSEQ_CS_NO_RESTART_FLAGS)
		return 0;
	s->resume_ip = cs.abort_ip;
	return 0;
}

int ptimer_rseq_cs_put_back(pid_t tid, const struct ptimer_rseq_cs_save *s)
{
	uint64_t now;
	int r;

	/* moved to abort_ip: the kernel clears rseq_cs on an abort too */
	if (!s->saved || s->resume_ip != s->ip)
		return 0;
	r = peek(tid, s->rseq_cs_addr, &now, sizeof(now));
	if (r || now == s->rseq_cs)
		return r;
	now = s->rseq_cs;
	return ptimer_vm_copy(tid, s->rseq_cs_addr, &now, sizeof(now), true);
}
