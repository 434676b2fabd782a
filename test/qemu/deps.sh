#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/qemu/deps.sh - install what the kernel matrix needs on the host, when
# missing: qemu-system-x86 (qemu-system-x86_64, TCG), busybox-static (the
# guest's shell and tools), cpio (the initramfs).  Root only; without root it
# names what is missing and exits 1.  Prints one "# deps: ..." line.
set -u
PKGS="qemu-system-x86 busybox-static cpio"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "# deps: qemu-system-x86 busybox-static cpio installed"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "# deps: missing$missing; install them as root" >&2
	exit 1
fi
echo "# deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing </dev/null >/dev/null 2>&1 ||
	{ apt-get update -q </dev/null >/dev/null 2>&1 &&
		apt-get install -y -q --no-install-recommends $missing </dev/null >/dev/null 2>&1; } ||
	{ echo "# deps: apt-get install$missing failed" >&2; exit 1; }
