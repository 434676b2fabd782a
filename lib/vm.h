/* SPDX-License-Identifier: MIT */
/* Another process's memory, copied with process_vm_readv/writev (Linux 3.2). */
#ifndef PTIMER_LIB_VM_H
#define PTIMER_LIB_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * ptimer_vm_copy - copy len bytes from addr in process pid into buf, or
 * from buf to addr when write is true (process_vm_readv(2) /
 * process_vm_writev(2): needs ptrace access to pid; the target is not
 * stopped for it).  len 0 does nothing; a call that fails with ENOMEM,
 * EAGAIN or EINTR is made once more.  Returns 0, -EFAULT (part of the
 * range is not mapped, or not writable: a short copy), -ESRCH (pid is
 * gone), -EPERM, or another -errno of the call.
 */
int ptimer_vm_copy(pid_t pid, uint64_t addr, void *buf, size_t len, bool write);

#endif
