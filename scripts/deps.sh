#!/bin/sh
# SPDX-License-Identifier: MIT
#
# scripts/deps.sh - install the Debian packages ptimer's build (and with
# DEPS=all, the default, its `make check`) needs and that are missing;
# `make deps` runs it.  Prints "deps: all installed" when nothing is missing.
# Installing needs root; without it the missing packages are listed and the
# exit status is 1.
#
#   DEPS=build  build dependencies only (this also runs inside the criu test
#               roots, test/criu/suite-inner.sh)
#   DEPS=all    also what `make check` compiles with: clang and its libFuzzer
#               runtime; the kernel matrix's qemu (x86_64 and aarch64),
#               busybox, cpio and the slice kernel's build tools
#               (test/qemu/deps.sh --list); and on an x86_64 host the arm64
#               cross build (below)
#   CROSS_ARCH=arm64  (make deps ARCH=arm64) the arm64 cross build: Debian's
#               aarch64-linux-gnu gcc and the libraries the Makefile links,
#               as :arm64 packages (dpkg --add-architecture arm64).  Nothing
#               of the host is removed: when apt-get would remove a package,
#               deps.sh says which and installs nothing.
#
#   scripts/deps.sh install PKG...   install those of PKG that are missing,
#               nothing else: the one installer of host packages, which the
#               test harnesses call for their own tools (test/qemu/deps.sh,
#               test/criu/roots.sh) when run without `make deps`.
#
# One installer at a time: every install holds the lock file
# /run/lock/ptimer-host-apt.lock (flock) from its check of what is missing to
# the end of apt-get, and apt-get waits up to 10 minutes for dpkg's own lock
# (DPkg::Lock::Timeout) held by anything else.  Two root builds of `make
# check` that both missed debootstrap used to meet dpkg's lock, and one of
# them failed.  To add a dependency, add a line to one of the pkgs_*
# functions below.
set -u

DEPS=${DEPS:-all}
CROSS_ARCH=${CROSS_ARCH:-}

# gcc, protoc-c and the libraries the sources include
pkgs_build() {
	echo gcc libc6-dev make binutils protobuf-c-compiler libprotobuf-c-dev libcap-dev libjson-c-dev libnl-3-dev
	# criu-plugin.h, for the plugin: libcriu-dev on Debian 13 and later,
	# inside the criu package on Debian 12.
	if available libcriu-dev; then echo libcriu-dev; else echo criu; fi
}

# `make check`: clang for the sanitizer build and libFuzzer (libclang-rt-N-dev,
# N being the version Debian's clang depends on: 14 on Debian 12, 19 on 13);
# debootstrap for the criu, container and zdtm roots (test/criu/roots.sh),
# xz-utils for zdtm's source tarball (test/criu/zdtm.sh); groff and mandoc
# for the man page checks (test/cases/cli.sh); file for the cross
# build's check (test/cross.sh); the kernel matrix's qemu, busybox and cpio.
pkgs_check() {
	echo clang debootstrap xz-utils groff-base mandoc file
	apt-cache show clang 2>/dev/null |
		sed -n 's/^Depends:.*clang-\([0-9][0-9]*\).*/libclang-rt-\1-dev/p' | head -n1
	bash "$(dirname "$0")/../test/qemu/deps.sh" --list
}

# The arm64 cross build (Makefile: ARCH=arm64): gcc, libc, and LDLIBS as
# :arm64; criu-plugin.h (arch-independent) and protoc-c come from the host.
pkgs_cross_arm64() {
	echo gcc-aarch64-linux-gnu libc6-dev-arm64-cross binutils-aarch64-linux-gnu
	echo libprotobuf-c-dev:arm64 libjson-c-dev:arm64 libcap-dev:arm64 libnl-3-dev:arm64
	# `make check` (test/cross.sh) also runs the cross-built ptimer
	[ "$DEPS" = all ] && echo qemu-user-static
}

available() {
	apt-cache show "$1" >/dev/null 2>&1
}

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'
}

LOCK=/run/lock/ptimer-host-apt.lock
[ -d /run/lock ] || LOCK=/tmp/ptimer-host-apt.lock
APT_WAIT="-o DPkg::Lock::Timeout=600"

# lock: hold LOCK (fd 8) until this script exits; root only (the file is
# root's).  Waits for another installer of ours to finish.
locked=0
lock() {
	[ "$locked" = 1 ] && return 0
	exec 8>"$LOCK" || return 1
	flock 8 || return 1
	locked=1
}

# install_missing PKGS...: what is missing of them, with apt-get (root),
# under the lock; 1 on failure
install_missing() {
	missing=""
	for p in "$@"; do
		installed "$p" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "deps: missing$missing; run 'make deps' as root or install them" >&2
		return 1
	fi
	lock || { echo "deps: cannot lock $LOCK" >&2; return 1; }
	# again under the lock: another installer may have put them in meanwhile
	missing=""
	for p in "$@"; do
		installed "$p" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	# shellcheck disable=SC2086 # one word a package
	apt-get $APT_WAIT install -y -q $missing >/dev/null 2>&1 ||
		{ apt-get $APT_WAIT update -q >/dev/null 2>&1 && apt-get $APT_WAIT install -y -q $missing; }
}

# The arm64 cross packages, never at the price of a host package: apt-get
# is asked first (-s) and must remove nothing.
install_cross_arm64() {
	want=$(pkgs_cross_arm64)
	missing=""
	for p in $want; do
		installed "$p" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "deps: missing for ARCH=arm64:$missing; run 'make deps ARCH=arm64' as root" >&2
		return 1
	fi
	lock || { echo "deps: cannot lock $LOCK" >&2; return 1; }
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		echo "deps: dpkg --add-architecture arm64"
		dpkg --add-architecture arm64 || return 1
		apt-get $APT_WAIT update -q >/dev/null 2>&1
	fi
	export DEBIAN_FRONTEND=noninteractive
	# shellcheck disable=SC2086 # one word a package
	plan=$(apt-get install -s -y -q $missing 2>&1) ||
		{ apt-get $APT_WAIT update -q >/dev/null 2>&1; plan=$(apt-get install -s -y -q $missing 2>&1); } || {
		echo "deps: apt-get cannot install$missing for ARCH=arm64 (are arm64 packages in the apt sources?):" \
			"$(echo "$plan" | grep '^E:' | head -n1)" >&2
		return 1
	}
	removed=$(echo "$plan" | awk '$1 == "Remv" { printf " %s", $2 }')
	if [ -n "$removed" ]; then
		echo "deps: installing the arm64 cross packages would remove host packages ($removed ): not done" >&2
		return 1
	fi
	echo "deps: installing for ARCH=arm64:$missing"
	# shellcheck disable=SC2086
	apt-get $APT_WAIT install -y -q $missing >/dev/null
}

if [ "${1:-}" = install ]; then
	shift
	install_missing "$@"
	exit
fi
if [ "$DEPS" = build ]; then
	want=$(pkgs_build)
else
	want="$(pkgs_build) $(pkgs_check)"
fi
# shellcheck disable=SC2086
install_missing $want || exit 1
# the arm64 cross build: asked for, or part of `make check` on x86_64 hosts
if [ "$CROSS_ARCH" = arm64 ] || { [ "$DEPS" = all ] && [ "$(uname -m)" = x86_64 ]; }; then
	install_cross_arm64 || exit 1
fi
echo "deps: all installed"
