#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/criu/arm64.sh [BUILD-ARM64] - the CRIU plugin on arm64: Debian sid's
# criu (4.2.1, arm64) dumping and restoring processes that hold POSIX
# timers, through the plugin cross-built by `make ARCH=arm64` (BUILD-ARM64,
# default build-arm64), inside sid's arm64 kernel under
# qemu-system-aarch64: test/criu/guest.sh arm64 sid, which says how.
exec bash "$(dirname "${BASH_SOURCE[0]}")/guest.sh" arm64 sid "$@"
