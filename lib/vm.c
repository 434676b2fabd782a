// SPDX-License-Identifier: MIT
/* Another process's memory (lib/vm.h). */
#include <errno.h>
#include <sys/uio.h>

#include "lib/vm.h"

int ptimer_vm_copy(pid_t pid, uint64_t addr, void *buf, size_t len, bool write)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n;

	if (!len)
		return 0;
	/* once more after a failure that passes (the kernel's page array) */
	for (int i = 0; i < 2; i++) {
		n = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
			  : process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n >= 0 || (errno != ENOMEM && errno != EAGAIN && errno != EINTR))
			break;
	}
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}
