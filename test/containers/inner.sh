#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The part of test/containers/suite.sh that runs inside a SUITE-containers
# root (enter.sh --pidns --sys --pts; /ptimer-src.tar, /ptimer-ct = this
# folder, /xfer shared with the other root).
#
#   inner.sh SUITE check|bench
#
# Build: make deps DEPS=build && make deb, apt-get install ./build/ptimer_*.deb
# (the plugin lands in /usr/lib/criu, where every runtime's criu finds it),
# and test/e2e/zdtm_timers.c built static as the container's program.
# Host setup the runtimes need here (cgroup v1, no systemd): the v1
# hierarchies mounted and no cgroup2 (crun refuses a v1 layout with cgroup2
# mounted), a cgroupsPath in every config, stdio of containers on pipes.
# Where ptrace hardware breakpoints never fire (test/criu/hwbp-probe.c), a
# wrapper named criu first on PATH adds CRIU_FAULT=130: podman starts criu
# dump without the caller's environment, but every runtime finds criu on PATH.
#
# check: test/cases/LIST's rounds in the container flavours (test/lib/driver.sh,
# test/lib/flavour-containers.sh: a container runs `zdtm_timers criu
# container /state LABEL`, a runtime checkpoints and restores it,
# /proc/PID/timers before and after must be equal once every tid is written
# as the container sees it, then the program checks its own timers), then
# containerd's (cri_case, cri.sh).  This script prepares the root and the
# runtimes and runs nothing of its own.  Reported through
# test/lib/harness.sh (suite.sh puts it and test/lib, test/cases in
# /ptimer-ct): the plan "1..N" (N cases, the build first), "ok K CASE"
# after each, totals last.  PTIMER_CT_CASES (while working on the suite)
# names the cases to run instead of all, e.g. "prepare cri_case".
# bench: runc checkpoint and restore, with and without the plugin.
set -u

suite=$1 what=${2:-check}
P=containers-$suite
S=/ptimer-ct
SRC=/var/tmp/ptimer-ct/src
W=/var/tmp/ptimer-ct/work
X=/xfer
TO=${PTIMER_CT_TIMEOUT:-180}
PLUGIN=/usr/lib/criu/ptimer_plugin.so
H_PREFIX=$P/
. "$S/harness.sh"
DRIVE_CASES=$S/cases DRIVE_BIN=/nonexistent DRIVE_W=$W
. "$S/driver.sh"
. "$S/flavour-containers.sh"

note() { echo "# $suite: $*"; }
secs() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }'; }

# ---- build and install ----------------------------------------------------------
# prepare: build and install the .deb, set the host up for the runtimes,
# the container's file system (check: the first case; bench: before it runs).
prepare() {
	# PTIMER_CT_REUSE=1 (while working on the suite): keep the last build
	[ -n "${PTIMER_CT_REUSE:-}" ] && [ -x "$W/zt" ] || rm -rf /var/tmp/ptimer-ct
	mkdir -p "$SRC" "$W"
	t0=$EPOCHREALTIME
	if [ -n "${PTIMER_CT_REUSE:-}" ] && [ -x "$W/zt" ]; then
		note "PTIMER_CT_REUSE: the build of an earlier run"
	elif (cd "$SRC" && tar xf /ptimer-src.tar && make deps DEPS=build && make -j2 deb &&
		gcc -O2 -std=gnu11 -D_GNU_SOURCE -I. -static -pthread -o "$W/zt" test/e2e/zdtm_timers.c test/lib/tst.c lib/*.c -lrt &&
		gcc -O2 -Wall -shared -fPIC -o "$W/zero_plugin.so" test/criu/zero_plugin.c) >"$W/build.log" 2>&1; then
		[ "$what" = check ] && pass "build: make deps && make deb ($(secs "$t0") s)"
	else
		fail build "$(tail -n 5 "$W/build.log" | tr '\n' ' ' | cut -c1-400)"
		exit 1
	fi
	DEB=$(ls "$SRC"/build/ptimer_*.deb)
	if DEBIAN_FRONTEND=noninteractive apt-get install -y -q --reinstall "$DEB" >"$W/apt.log" 2>&1 &&
		[ -f "$PLUGIN" ] && [ -x /usr/bin/ptimer ]; then
		[ "$what" = check ] && pass "install: apt-get install ./build/$(basename "$DEB") ($(dpkg-query -W -f='${Depends}' ptimer))"
	else
		fail install "apt-get install ./build/$(basename "$DEB"): $(tail -n 3 "$W/apt.log" | tr '\n' ' ')"
		exit 1
	fi
	mkdir -p "$X/debs/$suite" && cp "$DEB" "$X/debs/$suite/"
	CRIU_VERSION=$(criu --version | awk '/^Version/ { print $2 }')
	note "criu $CRIU_VERSION, runc $(runc --version | awk 'NR == 1 { print $3 }'), crun $(crun --version 2>/dev/null | awk 'NR == 1 { print $3 }'), podman $(podman --version | awk '{ print $3 }')"

	# The plugin's settings file: a directory of this session over /etc/criu,
	# so the cached root's own file (the package's conffile) stays as it is.
	mkdir -p "$W/etc-criu"
	cp /etc/criu/* "$W/etc-criu/" 2>/dev/null
	mount --bind "$W/etc-criu" /etc/criu

	# ---- host setup ------------------------------------------------------------------
	mount -t tmpfs -o mode=0755 cgroup-root /sys/fs/cgroup
	for c in cpu cpuacct cpuset memory devices freezer blkio pids; do
		grep -qw "^$c" /proc/cgroups || continue
		mkdir -p "/sys/fs/cgroup/$c"
		mount -t cgroup -o "$c" cgroup "/sys/fs/cgroup/$c" || note "cannot mount the $c cgroup hierarchy"
	done
	mkdir -p /sys/fs/cgroup/systemd
	mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd || note "cannot mount the name=systemd hierarchy"
	# cgroups of containers of an interrupted run (the hierarchies are the
	# host's; CRI pods nest their containers one level down)
	cg_sweep

	if gcc -O2 -o "$W/hwbp-probe" "$S/hwbp-probe.c" 2>/dev/null && "$W/hwbp-probe" >"$W/hwbp.out" 2>&1; then
		note "$(cat "$W/hwbp.out")"
	else
		mkdir -p /run/ptimer-bin
		printf '#!/bin/sh\nCRIU_FAULT=130 exec /usr/sbin/criu "$@"\n' >/run/ptimer-bin/criu
		chmod +x /run/ptimer-bin/criu
		export PATH=/run/ptimer-bin:$PATH
		note "$(cat "$W/hwbp.out" 2>/dev/null); criu runs as CRIU_FAULT=130 criu (wrapper first on PATH)"
	fi

	# The container's file system: the static program and an empty /state.
	ROOTFS=$W/rootfs
	mkdir -p "$ROOTFS"/{proc,dev,sys,tmp,state}
	cp "$W/zt" "$ROOTFS/zt"
	tar -C "$ROOTFS" -cf "$W/rootfs.tar" .
}

# ---- helpers -----------------------------------------------------------------------

# The containers' cgroups: /$CG/NAME in every v1 hierarchy, which are the
# host's, so one name a root: a run in the other root at the same time
# (another checkout's make check) never shares a freezer with this one.
CG=ptimer-ct-$suite
# cg_sweep: remove what is left empty under /$CG, deepest first.  crun also
# makes cgroups in the host's cgroup2 hierarchy (a hybrid host's "unified"
# one, which the root does not mount), nested one level deeper at each run
# and never removed: criu walks that hierarchy at every dump, and after a
# day of runs (3,770 directories, 99 deep) a runc checkpoint took 1.1-1.5 s
# instead of 0.2 s.  Those go too, through a mount of our own.
cg_sweep() {
	local d u=$W/cgroup2
	# crun's .proxy-crun, which a restore whose criu was killed leaves
	find /sys/fs/cgroup/*/"$CG" -mindepth 1 -depth -type d -name '.*' -exec rmdir {} + 2>/dev/null
	for d in /sys/fs/cgroup/*/"$CG"/*/*/ /sys/fs/cgroup/*/"$CG"/*/ /sys/fs/cgroup/*/"$CG"/ \
		/sys/fs/cgroup/*/ptimer-ct/*/*/ /sys/fs/cgroup/*/ptimer-ct/*/ /sys/fs/cgroup/*/ptimer-ct/; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	mkdir -p "$u"
	if mount -t cgroup2 cgroup2 "$u" 2>/dev/null; then
		find "$u" -mindepth 1 -depth -type d -path "$u/ptimer-ct*" -exec rmdir {} + 2>/dev/null
		umount "$u"
	fi
	return 0
}

. "$S/cri.sh"

# incus_case: two incusd started (in a network namespace of their own), the
# incus flavours of test/cases/LIST, both stopped.  Last: it mounts cgroup2
# over the v1 hierarchies the other runtimes use.
incus_case() {
	local w c f
	inc_start || return
	for w in $(drive_words incus-snapshot incus-stop incus-move incus-copy incus-unpriv-snapshot incus-unpriv-stop incus-unpriv-move incus-unpriv-copy incus-takeover-snapshot incus-takeover-stop incus-takeover-move incus-takeover-copy incus-unpriv-takeover-move incus-alone incus-alone-copy incus-unpriv-alone-copy); do
		IFS=: read -r _ c f <<<"$w"
		drive "$c" "$f"
	done
	inc_stop
}

# docker_case: dockerd started (in a network namespace of its own), the
# docker flavours of test/cases/LIST, dockerd stopped
docker_case() {
	local w c f
	dk_start || return
	for w in $(drive_words docker docker-leave-running docker-takeover docker-takeover-leave-running docker-alone docker-network-none); do
		IFS=: read -r _ c f <<<"$w"
		drive "$c" "$f"
	done
	dk_stop
}

if [ "$what" = bench ]; then
	prepare
	. "$S/bench-inner.sh"
	exit 0
fi

# test/cases/LIST's rounds in the flavours this root offers (a move's
# checkpoint is taken in trixie and restored in sid, which runs after it),
# then containerd's (cri_case, cri.sh)
# shellcheck disable=SC2046
set -- prepare $(drive_words runc crun podman runc-alone runc-plugin-at-dump runc-killed crun-killed lxc lxc-alone runc-move \
	podman-move) docker_case cri_case incus_case
# PTIMER_CT_CASES (while working on the suite): the cases to run instead
# ("prepare drive:container:crun cri_case")
# shellcheck disable=SC2086
[ -n "${PTIMER_CT_CASES:-}" ] && set -- ${PTIMER_CT_CASES}
run_cases "$@"
cg_sweep
[ -n "${PTIMER_CT_REUSE:-}" ] || rm -rf /var/tmp/ptimer-ct
totals "$suite"
