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
# check: for each runtime a container runs `zdtm_timers criu container
# /state LABEL`, is checkpointed and restored; /proc/PID/timers before and
# after must be equal once every tid is written as the container sees it;
# then the program checks its own timers (ids, clocks, values, that they fire
# on the right thread) and its PASS/FAIL lines are printed here.  Reported
# through test/lib/harness.sh (suite.sh puts it in /ptimer-ct): the plan
# "1..N" (N cases, the build first), "ok K CASE" after each, totals last.
# cri_case (cri.sh): containerd's CRI and ctr.  PTIMER_CT_CASES (while
# working on the suite) names the cases to run instead of all, e.g.
# "prepare cri_case".
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
		gcc -O2 -std=gnu11 -D_GNU_SOURCE -I. -static -pthread -o "$W/zt" test/e2e/zdtm_timers.c lib/*.c -lrt) >"$W/build.log" 2>&1; then
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

# timers PID: /proc/PID/timers, one timer a line, sorted, every tid written
# as the container's pid namespace sees it (NSpid's last field).
timers() {
	local pid=$1
	awk -v pid="$pid" '
		function nstid(t,   f, l, n, a) {
			f = "/proc/" pid "/task/" t "/status"
			while ((getline l < f) > 0)
				if (l ~ /^NSpid:/) { n = split(l, a, /[ \t]+/); close(f); return a[n] }
			close(f); return "?" t
		}
		/^ID:/ { id = $2 } /^signal:/ { s = $2 }
		/^notify:/ { split($2, a, "."); n = a[1] "." nstid(a[2]) }
		/^ClockID:/ { print id, s, n, $2 }' "/proc/$pid/timers" | sort -n
}

# bundle NAME LABEL DIR: an OCI bundle in DIR running the program
# (scenario $SCEN, default container).
bundle() {
	local name=$1 label=$2 b=$3
	rm -rf "$b"
	mkdir -p "$b/work" "$b/rwork"
	cp -a "$ROOTFS" "$b/rootfs"
	(cd "$b" && runc spec) || return 1
	python3 - "$b/config.json" "$label" "$name" "${SCEN:-container}" "$CG" <<'PY'
import json, sys
p, label, name, scen, cg = sys.argv[1:6]
c = json.load(open(p))
c["process"]["terminal"] = False
c["process"]["args"] = ["/zt", "criu", scen, "/state", label]
c["root"]["readonly"] = False
c["linux"]["cgroupsPath"] = "/" + cg + "/" + name
json.dump(c, open(p, "w"), indent=1)
PY
}

# oci_run RT NAME BUNDLE: start the container detached, stdio on pipes.
oci_run() {
	local rt=$1 name=$2 b=$3
	"$rt" delete -f "$name" >/dev/null 2>&1
	: | timeout "$TO" "$rt" run -d --bundle "$b" "$name" > >(cat >>"$b/stdio.out") 2> >(cat >"$b/run.err")
}
# oci_pid RT NAME: the container's pid 1 as this /proc shows it ("RT state"
# waits while crun 1.28 is still in its foreground restore: then the
# program's own command line finds it)
oci_pid() {
	local p
	p=$(timeout 5 "$1" state "$2" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])' 2>/dev/null)
	[ -n "$p" ] || p=$(pgrep -xf "/zt criu [a-z-]+ /state $P/$2" | head -n1)
	echo "$p"
}

# ready DIR NAME: the program wrote DIR/criu.ready
ready() {
	wait_until 300 test -e "$1/criu.ready" && return 0
	fail "$2/start" "the program did not get ready: $(oneline "$1/criu.out") $(cat "$3" 2>/dev/null | tr '\n' ' ' | cut -c1-200)"
	return 1
}

# compare NAME BEFORE PID: the restored timers, tids mapped, against BEFORE.
compare() {
	local name=$1 before=$2 pid=$3
	timers "$pid" >"$before.after"
	if [ -s "$before" ] && cmp -s "$before" "$before.after"; then
		pass "$name/timers: /proc/PID/timers equal, tids mapped ($(awk '{ printf "%s%s", s, $1; s = "," }' "$before"))"
	else
		fail "$name/timers" "before: $(tr '\n' ';' <"$before") after: $(tr '\n' ';' <"$before.after")"
	fi
}

# collect NAME STATEDIR: let the restored program check itself.
collect() {
	local name=$1 st=$2
	touch "$st/restored"
	if ! wait_until 600 test -e "$st/criu.done"; then
		fail "$name/verify" "the restored program wrote no criu.done: $(oneline "$st/criu.out")"
		return 1
	fi
	grep -E '^(PASS|FAIL|SKIP) ' "$st/criu.result"
	tally "$st/criu.result"
}

# restored RT NAME BUNDLE: the restore command has exited, or criu finished
# and the container runs
restored() {
	[ -e "$3/restore.rc" ] && return 0
	grep -q 'Restore finished successfully' "$3/rwork/restore.log" 2>/dev/null
}

# oci_case RT: run, checkpoint, restore, compare, verify under runc or crun.
oci_case() {
	local rt=$1 name=$1 b=$W/$1 pid t0 rc
	if ! command -v "$rt" >/dev/null; then
		skip "$name" "no $rt in this root"
		return
	fi
	bundle "$name" "$P/$name" "$b" || { fail "$name/bundle" "$rt spec failed"; return; }
	if ! oci_run "$rt" "$name" "$b"; then
		skip "$name" "$rt run fails here: $(oneline "$b/run.err")"
		return
	fi
	ready "$b/rootfs/state" "$name" "$b/run.err" || { "$rt" delete -f "$name" >/dev/null 2>&1; return; }
	pid=$(oci_pid "$rt" "$name")
	timers "$pid" >"$b/before"
	t0=$EPOCHREALTIME
	timeout "$TO" "$rt" checkpoint --image-path "$b/img" --work-path "$b/work" "$name" >"$b/ckpt.out" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "$name/checkpoint" "$rt checkpoint exit $rc: $(oneline "$b/ckpt.out") $(logtail "$b/work/dump.log")"
		"$rt" delete -f "$name" >/dev/null 2>&1
		return
	fi
	pass "$name/checkpoint ($(secs "$t0") s): $(grep -ohE 'ptimer: task [0-9]+ \(vpid 1\): [0-9]+ POSIX timers saved' "$b/work/dump.log" | head -n1)"
	t0=$EPOCHREALTIME
	# in the background and in a session of its own (setsid: what crun
	# signals stays there): crun 1.28 keeps `restore -d` in the foreground
	# until the container exits (crun 1.21 and runc return); done is
	# criu's "Restore finished" with the container running, or the exit
	rm -f "$b/restore.rc"
	( : | setsid timeout "$TO" "$rt" restore -d --image-path "$b/img" --work-path "$b/rwork" --bundle "$b" "$name" \
		> >(cat >>"$b/stdio.out") 2> >(cat >"$b/restore.err"); echo $? >"$b/restore.rc" ) &
	wait_until $((TO * 10)) restored "$rt" "$name" "$b"
	rc=$(cat "$b/restore.rc" 2>/dev/null)
	case "$rc" in ''|*[!0-9]*) rc=0 ;; esac	# not exited (yet): criu finished
	if [ "$rc" -ne 0 ]; then
		fail "$name/restore" "$rt restore exit $rc: $(oneline "$b/restore.err") $(logtail "$b/rwork/restore.log")"
		"$rt" delete -f "$name" >/dev/null 2>&1
		return
	fi
	pass "$name/restore ($(secs "$t0") s): $(grep -ohE 'ptimer: task [0-9]+ \(vpid 1\): [0-9]+ POSIX timers restored, [a-zA-Z-]+ mode' "$b/rwork/restore.log" | head -n1)"
	pid=$(oci_pid "$rt" "$name")
	compare "$name" "$b/before" "$pid"
	collect "$name" "$b/rootfs/state"
	"$rt" delete -f "$name" >/dev/null 2>&1
}

export PODMAN_IGNORE_CGROUPSV1_WARNING=1
PODMAN=(podman --root "$W/podman/root" --runroot "$W/podman/run" --storage-driver vfs
	--cgroup-manager cgroupfs --events-backend file --runtime runc)
IMAGE=localhost/ptimer-ct:latest
pm() { timeout "$TO" "${PODMAN[@]}" "$@"; }
pm_pid() { pm inspect -f '{{.State.Pid}}' "$1" 2>/dev/null; }
# pm_log NAME FILE: a criu log podman keeps in the container's userdata
pm_log() { find "$W/podman" -path "*$(pm inspect -f '{{.Id}}' "$1" 2>/dev/null)*" -name "$2" 2>/dev/null | head -n1; }
pm_image() {
	pm image exists "$IMAGE" 2>/dev/null || pm import "$W/rootfs.tar" "$IMAGE" >"$W/podman-import.out" 2>&1
}
# pm_start NAME STATEDIR: a podman container holding the program.
pm_start() {
	local name=$1 st=$2
	rm -rf "$st"
	mkdir -p "$st"
	pm rm -f "$name" >/dev/null 2>&1
	pm run -d --name "$name" --network none -v "$st:/state" "$IMAGE" \
		/zt criu container /state "$P/$name" >"$W/$name.run" 2>&1
}

podman_case() {
	local name=podman st=$X/$suite-podman pid t0 rc log
	if ! pm_image; then
		skip podman "podman import fails here: $(oneline "$W/podman-import.out")"
		return
	fi
	if ! pm_start "$name" "$st"; then
		skip podman "podman run fails here: $(oneline "$W/$name.run")"
		return
	fi
	ready "$st" "$name" "$W/$name.run" || { pm rm -f "$name" >/dev/null 2>&1; return; }

	# podman checkpoint runs criu without the caller's environment: the
	# settings file is what reaches it.  A bad value fails the checkpoint
	# with one tagged line and leaves the container running.
	printf 'strict = maybe\n' >/etc/criu/ptimer.conf
	pm container checkpoint "$name" >"$W/$name.badckpt" 2>&1
	rc=$?
	log=$(pm_log "$name" dump.log)
	if [ "$rc" -ne 0 ] && [ "$(pm inspect -f '{{.State.Status}}' "$name")" = running ] &&
		[ "$(grep -c "strict = 'maybe'" "$log" 2>/dev/null)" = 1 ] &&
		grep -qE "Error \([a-z_/]+\.c:[0-9]+\): ptimer: /etc/criu/ptimer.conf:1: strict = 'maybe': expected yes or no" "$log"; then
		pass "podman/conf-bad-value: checkpoint fails, container runs: $(grep -oE 'Error \(.*' "$log" | grep ptimer | head -n1 | cut -c1-110)"
	else
		fail "podman/conf-bad-value" "checkpoint exit $rc, state $(pm inspect -f '{{.State.Status}}' "$name"): $(oneline "$W/$name.badckpt") ${log:+$(logtail "$log")}"
	fi
	printf '# test\nstrict = yes\nrestore-mode = linear\n' >/etc/criu/ptimer.conf

	pid=$(pm_pid "$name")
	timers "$pid" >"$W/$name.before"
	t0=$EPOCHREALTIME
	# -k (--keep): podman deletes criu's logs after a checkpoint otherwise
	if ! pm container checkpoint -k "$name" >"$W/$name.ckpt" 2>&1; then
		fail "podman/checkpoint" "$(oneline "$W/$name.ckpt") $(logtail "$(pm_log "$name" dump.log)")"
		pm rm -f "$name" >/dev/null 2>&1
		rm -f /etc/criu/ptimer.conf
		return
	fi
	log=$(pm_log "$name" dump.log)
	if grep -q 'ptimer: settings (/etc/criu/ptimer.conf, then the environment): criu-mode auto, strict yes, restore-mode linear' "$log"; then
		pass "podman/checkpoint ($(secs "$t0") s): settings from /etc/criu/ptimer.conf reach criu dump"
	else
		fail "podman/checkpoint" "no 'ptimer: settings (/etc/criu/ptimer.conf...strict yes' in $log: $(logtail "$log")"
	fi
	t0=$EPOCHREALTIME
	if ! pm container restore -k "$name" >"$W/$name.restore" 2>&1; then
		fail "podman/restore" "$(oneline "$W/$name.restore") $(logtail "$(pm_log "$name" restore.log)")"
		pm rm -f "$name" >/dev/null 2>&1
		rm -f /etc/criu/ptimer.conf
		return
	fi
	log=$(pm_log "$name" restore.log)
	if grep -qE 'ptimer: task [0-9]+ \(vpid 1\): 5 POSIX timers restored, linear mode' "$log"; then
		pass "podman/restore ($(secs "$t0") s): $(grep -oE 'ptimer: task [0-9]+ \(vpid 1\): 5 POSIX timers restored, linear mode' "$log")"
	else
		fail "podman/restore" "no 'ptimer: ... 5 POSIX timers restored, linear mode' in $log: $(logtail "$log")"
	fi
	rm -f /etc/criu/ptimer.conf
	compare "$name" "$W/$name.before" "$(pm_pid "$name")"
	collect "$name" "$st"
	pm rm -f "$name" >/dev/null 2>&1
}

# criu alone, and a restore on a host without the plugin (runc).  The plugin
# is moved out of /usr/lib/criu and back.  A checkpoint made with the plugin
# is a checkpoint criu alone restores as it would have without ptimer: here
# it fails as criu alone does (the container's pid 1 holds a SIGEV_THREAD_ID
# timer at itself: "Can't create posix timer"), or, where a criu can,
# restores the same timers; never a container without them.
noplugin_cases() {
	local b=$W/alone pid rc
	bundle alone "$P/alone" "$b" && oci_run runc alone "$b" && ready "$b/rootfs/state" alone "$b/run.err" || return
	mv "$PLUGIN" "$W/ptimer_plugin.so.away"
	pid=$(oci_pid runc alone)
	timers "$pid" >"$b/before"
	timeout "$TO" runc checkpoint --image-path "$b/img" --work-path "$b/work" alone >"$b/ckpt.out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		: | timeout "$TO" runc restore -d --image-path "$b/img" --work-path "$b/rwork" --bundle "$b" alone \
			> >(cat >>"$b/stdio.out") 2> >(cat >"$b/restore.err")
		rc=$?
		if [ "$rc" -ne 0 ]; then
			pass "criu-alone: runc restore without the plugin fails as known: $(grep -ohm1 "Can't create posix timer.*" "$b/rwork/restore.log" || logtail "$b/rwork/restore.log")"
		else
			note "criu $CRIU_VERSION alone restored the container (the known failure is gone)"
			compare alone "$b/before" "$(oci_pid runc alone)"
			collect alone "$b/rootfs/state"
		fi
	else
		fail "criu-alone/checkpoint" "runc checkpoint without the plugin exit $rc: $(logtail "$b/work/dump.log")"
	fi
	runc delete -f alone >/dev/null 2>&1
	mv "$W/ptimer_plugin.so.away" "$PLUGIN"

	b=$W/missing
	bundle missing "$P/missing" "$b" && oci_run runc missing "$b" && ready "$b/rootfs/state" missing "$b/run.err" || return
	timers "$(oci_pid runc missing)" >"$b/before"
	if timeout "$TO" runc checkpoint --image-path "$b/img" --work-path "$b/work" missing >"$b/ckpt.out" 2>&1; then
		mv "$PLUGIN" "$W/ptimer_plugin.so.away"
		: | timeout "$TO" runc restore -d --image-path "$b/img" --work-path "$b/rwork" --bundle "$b" missing \
			> >(cat >>"$b/stdio.out") 2> >(cat >"$b/restore.err")
		rc=$?
		mv "$W/ptimer_plugin.so.away" "$PLUGIN"
		if [ "$rc" -ne 0 ] && grep -q "Can't create posix timer" "$b/rwork/restore.log"; then
			pass "no-plugin-restore: runc restore fails as with criu alone: $(grep -ohm1 "Can't create posix timer.*" "$b/rwork/restore.log" | cut -c1-80)"
		elif [ "$rc" -eq 0 ]; then
			# criu saves the pid-1 timer aimed at the process: it cannot
			# save the leader's tid in a pid namespace (docs/criu-plugin.md)
			note "criu $CRIU_VERSION without the plugin restored the plugin's checkpoint; its SIGEV_THREAD_ID timer at pid 1 comes back aimed at the process"
			sed 's#^\([0-9]* [0-9]*/[0-9a-f]*\) signal/tid\.1 #\1 signal/pid.1 #' "$b/before" >"$b/before.alone"
			compare no-plugin-restore "$b/before.alone" "$(oci_pid runc missing)"
		else
			fail "no-plugin-restore" "runc restore failed (exit $rc), not as criu alone does: $(logtail "$b/rwork/restore.log")"
		fi
	else
		fail "no-plugin-restore/checkpoint" "$(logtail "$b/work/dump.log")"
	fi
	runc delete -f missing >/dev/null 2>&1
}

# ---- LXC: lxc-checkpoint ---------------------------------------------------------
# lxc-checkpoint runs criu itself, with criu's default plugin lookup
# (/usr/lib/criu, where the .deb put the plugin), the container's init (pid
# 1 of its namespaces) holding the scenario's timers: checkpointed and
# stopped (-s), restored (-r), compared and checked as for the OCI
# runtimes.  Then the same with the plugin moved away: criu alone, noted
# (it cannot save or restore pid 1's SIGEV_THREAD_ID timer at itself).
# The cpuset hierarchy is unmounted meanwhile (lxc 6/7 do not start with
# this host's empty cpuset.cpus there), and no AppArmor profile is named
# (criu refuses one on a kernel without AppArmor).
lxc_round() {  # NAME [alone]
	local name=$1 alone=${2:-} lp=$W/lxc-$1 r pid t0 rc
	r=$lp/ct/rootfs
	rm -rf "$lp"
	mkdir -p "$lp/ct"
	cp -a "$ROOTFS" "$r"
	cat >"$lp/ct/config" <<EOC
lxc.uts.name = $name
lxc.rootfs.path = dir:$r
lxc.init.cmd = /zt criu ${SCEN:-container} /state $P/$name
lxc.net.0.type = empty
lxc.autodev = 1
lxc.mount.auto = proc:mixed sys:ro
lxc.console.path = none
lxc.tty.max = 0
lxc.log.file = $lp/lxc.log
lxc.log.level = INFO
EOC
	if ! timeout "$TO" lxc-start -P "$lp" -n ct -d >"$lp/start.out" 2>&1; then
		fail "$name/start" "lxc-start: $(oneline "$lp/start.out") $(tail -n 3 "$lp/lxc.log" | tr '\n' ' ' | cut -c1-300)"
		return 1
	fi
	ready "$r/state" "$name" "$lp/lxc.log" || { lxc-stop -P "$lp" -n ct -k >/dev/null 2>&1; return 1; }
	pid=$(lxc-info -P "$lp" -n ct -p -H)
	timers "$pid" >"$lp/before"
	t0=$EPOCHREALTIME
	timeout "$TO" lxc-checkpoint -P "$lp" -n ct -D "$lp/img" -s -v >"$lp/ckpt.out" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ]; then
		if [ -n "$alone" ]; then
			note "criu alone: lxc-checkpoint fails: $(logtail "$lp/img/dump.log")"
		else
			fail "$name/checkpoint" "lxc-checkpoint -s exit $rc: $(oneline "$lp/ckpt.out") $(logtail "$lp/img/dump.log")"
		fi
		lxc-stop -P "$lp" -n ct -k >/dev/null 2>&1
		return 0
	fi
	[ -z "$alone" ] && pass "$name/checkpoint ($(secs "$t0") s): $(grep -ohE 'ptimer: task [0-9]+ \(vpid 1\): [0-9]+ POSIX timers saved' "$lp/img/dump.log" | head -n1)"
	t0=$EPOCHREALTIME
	timeout "$TO" lxc-checkpoint -P "$lp" -n ct -D "$lp/img" -r -v >"$lp/rst.out" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ]; then
		if [ -n "$alone" ]; then
			note "criu alone: the restore fails: $(grep -ohm1 "Can't create posix timer.*" "$lp/img/restore.log" || logtail "$lp/img/restore.log")"
		else
			fail "$name/restore" "lxc-checkpoint -r exit $rc: $(oneline "$lp/rst.out") $(logtail "$lp/img/restore.log")"
		fi
		lxc-stop -P "$lp" -n ct -k >/dev/null 2>&1
		return 0
	fi
	pid=$(lxc-info -P "$lp" -n ct -p -H)
	if [ -n "$alone" ]; then
		timers "$pid" >"$lp/before.after"
		note "criu alone restored the container: timers $(cmp -s "$lp/before" "$lp/before.after" && echo equal || echo different)"
	else
		pass "$name/restore ($(secs "$t0") s): $(grep -ohE 'ptimer: task [0-9]+ \(vpid 1\): [0-9]+ POSIX timers restored, [a-zA-Z-]+ mode' "$lp/img/restore.log" | head -n1)"
		compare "$name" "$lp/before" "$pid"
		collect "$name" "$r/state"
	fi
	lxc-stop -P "$lp" -n ct -k >/dev/null 2>&1
}
lxc_case() {
	local cpuset=
	if ! command -v lxc-checkpoint >/dev/null; then
		fail lxc "no lxc-checkpoint in this root (roots.d/containers.pkgs: lxc)"
		return
	fi
	mountpoint -q /sys/fs/cgroup/cpuset && umount /sys/fs/cgroup/cpuset && cpuset=1
	lxc_round lxc
	mv "$PLUGIN" "$W/ptimer_plugin.so.away"
	lxc_round lxc-alone alone
	mv "$W/ptimer_plugin.so.away" "$PLUGIN"
	[ -n "$cpuset" ] && mount -t cgroup -o cpuset cgroup /sys/fs/cgroup/cpuset
	return 0
}

# ---- moves between hosts: trixie checkpoints into /xfer, sid restores ---------------
move_out() {
	local b=$X/move-runc st=$X/move-podman pid
	rm -rf "$b" "$st" "$X/move-podman.tar.gz"
	if bundle move "$P/move-runc" "$b" && oci_run runc move "$b" && ready "$b/rootfs/state" move-runc/out "$b/run.err"; then
		timers "$(oci_pid runc move)" >"$b/before"
		if timeout "$TO" runc checkpoint --image-path "$b/img" --work-path "$b/work" move >"$b/ckpt.out" 2>&1; then
			pass "move-runc/out: runc checkpoint into $b/img"
			echo "$suite $CRIU_VERSION" >"$b/from"
		else
			fail "move-runc/out" "$(logtail "$b/work/dump.log")"
		fi
		runc delete -f move >/dev/null 2>&1
	fi
	# the image goes along (podman save/load keep its ID; --import looks
	# the checkpoint's image up by ID, and a second import gets another)
	rm -f "$X/ptimer-ct-image.tar"
	if pm_image && pm save -o "$X/ptimer-ct-image.tar" "$IMAGE" >"$W/podman-save.out" 2>&1 &&
		pm_start move-podman "$st" && ready "$st" move-podman/out "$W/move-podman.run"; then
		timers "$(pm_pid move-podman)" >"$X/move-podman.before"
		if pm container checkpoint --export "$X/move-podman.tar.gz" move-podman >"$W/move-podman.ckpt" 2>&1; then
			pass "move-podman/out: podman container checkpoint --export $X/move-podman.tar.gz"
		else
			fail "move-podman/out" "$(oneline "$W/move-podman.ckpt")"
		fi
		pm rm -f move-podman >/dev/null 2>&1
	fi
}

move_in() {
	local b=$X/move-runc st=$X/move-podman
	if [ -f "$b/from" ]; then
		: | timeout "$TO" runc restore -d --image-path "$b/img" --work-path "$b/rwork" --bundle "$b" move \
			> >(cat >>"$b/stdio.out") 2> >(cat >"$b/restore.err")
		if [ $? -eq 0 ]; then
			pass "move-runc/in: checkpoint of criu $(cut -d' ' -f2 "$b/from") ($(cut -d' ' -f1 "$b/from")) restored by criu $CRIU_VERSION"
			compare move-runc "$b/before" "$(oci_pid runc move)"
			collect move-runc "$b/rootfs/state"
		else
			fail "move-runc/in" "$(oneline "$b/restore.err") $(logtail "$b/rwork/restore.log")"
		fi
		runc delete -f move >/dev/null 2>&1
	else
		skip "move-runc/in" "no runc checkpoint from the other root in $b"
	fi
	if [ -f "$X/move-podman.tar.gz" ]; then
		if pm load -i "$X/ptimer-ct-image.tar" >"$W/podman-load.out" 2>&1 &&
			pm container restore --import "$X/move-podman.tar.gz" >"$W/move-podman.restore" 2>&1; then
			pass "move-podman/in: podman container restore --import"
			compare move-podman "$X/move-podman.before" "$(pm_pid move-podman)"
			collect move-podman "$st"
		else
			fail "move-podman/in" "$(oneline "$W/move-podman.restore")"
		fi
		pm rm -f move-podman >/dev/null 2>&1
	else
		skip "move-podman/in" "no podman export from the other root"
	fi
}

. "$S/cri.sh"

if [ "$what" = bench ]; then
	prepare
	. "$S/bench-inner.sh"
	exit 0
fi

set -- prepare oci_case:runc oci_case:crun podman_case noplugin_cases lxc_case
case "$suite" in
trixie) set -- "$@" move_out cri_case ;;
sid) set -- "$@" move_in cri_case ;;
esac
# PTIMER_CT_CASES (while working on the suite): the cases to run instead
# shellcheck disable=SC2086
[ -n "${PTIMER_CT_CASES:-}" ] && set -- ${PTIMER_CT_CASES}
run_cases "$@"
cg_sweep
[ -n "${PTIMER_CT_REUSE:-}" ] || rm -rf /var/tmp/ptimer-ct
totals "$suite"
