#!/bin/bash
# SPDX-License-Identifier: MIT
#
# /init of the guest that test/criu/guest.sh boots (arm64 or amd64): the
# Debian root (criu) unpacked from the initramfs is the guest's whole file
# system.  Mounts what criu needs (a real /proc, sysfs, devtmpfs, devpts),
# runs the criu suite (suite-inner.sh, prebuilt mode) on the project's
# files built on the host, prints an end line and returns: the kernel then
# panics (pid 1 exited) and, with panic=-1 and qemu's -no-reboot, qemu
# exits.  The serial console is the only channel back.  bash as pid 1 reaps
# the tasks `criu restore -d` leaves behind.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
mount -t proc -o nosuid,nodev,noexec proc /proc
mount -t sysfs -o nosuid,nodev,noexec sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm /run /tmp
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts /dev/pts
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /run
# the slice kernel: grants of 50 us, its longest, not 5 us, which TCG's
# slow way out of the kernel uses up before the thread sees the grant
# (test/qemu/init says what was measured)
if mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null && [ -w /sys/kernel/debug/rseq/slice_ext_nsec ]; then
	echo 50000 >/sys/kernel/debug/rseq/slice_ext_nsec
fi
chmod 1777 /tmp
# criu's kernel feature probe (kerndat) connects a TCP socket to 127.0.0.1:
# the loopback must be up.
ip link set lo up || echo "# guest: cannot bring the loopback up: criu's feature probe will fail"
echo "@@ptimer-guest-begin"
echo "# guest: $(uname -sr) $(uname -m), /init after $(cut -d' ' -f1 /proc/uptime) s of uptime"
# modules criu needs that the kernel has as modules (/ptimer-modules/order,
# test/qemu/kernels.sh, amd64 only): no modprobe here, so finit_module(2)
# (x86_64: 313)
[ "$(uname -m)" = x86_64 ] || rm -rf /ptimer-modules
for m in $(cat /ptimer-modules/order 2>/dev/null); do
	perl -e 'my $p = ""; open(my $f, "<", $ARGV[0]) or die "$!\n"; syscall(313, fileno($f), $p, 0) == 0 or die "$!\n"' \
		"/ptimer-modules/$m" 2>&1 | sed "s|^|# guest: cannot load $m: |"
done
[ -s /ptimer-modules/order ] && echo "# guest: modules loaded: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
# what the host chose: GUEST_SUITE, PTIMER_CRIU_CASES, CRIU_FAULT, PTIMER_CRIU_TIMEOUT
set -a
. /ptimer-criu/guest.env
set +a
cd /
bash /ptimer-criu/suite-inner.sh "$GUEST_SUITE" prebuilt:/ptimer-bin /ptimer-criu check </dev/null
rc=$?
# a step of a move (test/criu/slice-move.sh): what the next guest needs
if [ -n "${GUEST_CARRY_OUT:-}" ]; then
	mkdir -p /ptimer-carry-out
	echo "@@ptimer-carry-begin"
	tar -C /ptimer-carry-out -cz . | base64
	echo "@@ptimer-carry-end"
fi
echo "@@ptimer-guest-end rc=$rc uptime $(cut -d' ' -f1 /proc/uptime) s"
