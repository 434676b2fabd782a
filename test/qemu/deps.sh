#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/qemu/deps.sh [--list] - install what the kernel matrix needs on the
# host, when missing: qemu-system-x86 (qemu-system-x86_64, TCG),
# qemu-system-arm (qemu-system-aarch64, for the arm64 guests), busybox-static
# (the x86_64 guests' shell and tools; the arm64 busybox is fetched, not
# installed: test/qemu/busybox.sh), cpio (the initramfs), and the tools
# that build the slice kernel from source (test/qemu/slice-kernel.sh: gcc,
# make, bison, flex, bc, libelf-dev, libssl-dev, xz-utils).  Root only;
# without root it names what is missing and exits 1.  Prints one "# deps: ..." line.
# --list: print the package names only (scripts/deps.sh, `make deps`).
set -u
PKGS="qemu-system-x86 qemu-system-arm busybox-static cpio gcc make bison flex bc libelf-dev libssl-dev xz-utils"
if [ "${1:-}" = --list ]; then
	echo "$PKGS"
	exit 0
fi
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "# deps: $PKGS installed"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "# deps: missing$missing; install them as root" >&2
	exit 1
fi
echo "# deps: installing$missing"
# the one installer of host packages, one at a time (scripts/deps.sh)
# shellcheck disable=SC2086
sh "$(dirname "$0")/../../scripts/deps.sh" install $missing </dev/null >/dev/null 2>&1 ||
	{ echo "# deps: apt-get install$missing failed" >&2; exit 1; }
