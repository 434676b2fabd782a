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
#               runtime; and the kernel matrix's qemu (x86_64 and aarch64),
#               busybox and cpio (test/qemu/deps.sh --list)
#
# The test harnesses also install their own tools when missing
# (test/qemu/deps.sh; test/criu/roots.sh: debootstrap).  To add a
# dependency, add a line to one of the pkgs_* functions below.
set -u

DEPS=${DEPS:-all}

# gcc, protoc-c and the libraries the sources include
pkgs_build() {
	echo gcc libc6-dev make binutils protobuf-c-compiler libprotobuf-c-dev libcap-dev libjson-c-dev libnl-3-dev
	# criu-plugin.h, for the plugin: libcriu-dev on Debian 13 and later,
	# inside the criu package on Debian 12.
	if available libcriu-dev; then echo libcriu-dev; else echo criu; fi
}

# `make check`: clang for the sanitizer build and libFuzzer (libclang-rt-N-dev,
# N being the version Debian's clang depends on: 14 on Debian 12, 19 on 13).
pkgs_check() {
	echo clang
	apt-cache show clang 2>/dev/null |
		sed -n 's/^Depends:.*clang-\([0-9][0-9]*\).*/libclang-rt-\1-dev/p' | head -n1
	bash "$(dirname "$0")/../test/qemu/deps.sh" --list
}

available() {
	apt-cache show "$1" >/dev/null 2>&1
}

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'
}

if [ "$DEPS" = build ]; then
	want=$(pkgs_build)
else
	want="$(pkgs_build) $(pkgs_check)"
fi

missing=""
for p in $want; do
	installed "$p" || missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "deps: all installed"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing$missing; run 'make deps' as root or install them" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086 # one word a package
apt-get install -y -q $missing >/dev/null 2>&1 ||
	{ apt-get update -q >/dev/null 2>&1 && apt-get install -y -q $missing; }
