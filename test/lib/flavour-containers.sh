# SPDX-License-Identifier: MIT
#
# test/lib/flavour-containers.sh - the container flavours of the case driver
# (test/lib/driver.sh): a case's program (zdtm_timers, built static as /zt)
# runs as a container's pid 1, `/zt criu SCENARIO /state LABEL`, the
# container is checkpointed and restored by a runtime, its timers compared
# before and after (/proc/PID/timers, every tid as the container sees it),
# then the program checks itself.  bash; sourced by
# test/containers/inner.sh inside a SUITE-containers root, which prepares
# the runtimes (and test/containers/cri.sh containerd, for the cri and ctr
# flavours).  Needs: W, X (/xfer, shared by the two roots), P (the label
# prefix), CG (the containers' cgroup), ROOTFS (the container's file
# system), PLUGIN (the installed plugin), TO (s), suite, CRIU_VERSION.
#
# Flavours (the check names' label in brackets; only the case `container`
# runs in them):
#   runc, crun       OCI checkpoint / restore -d [runc, crun]
#   podman           podman container checkpoint -k / restore -k, the
#                    settings file (a bad value refused, the container
#                    left running; strict and restore-mode linear reach
#                    criu) [podman]
#   runc-alone       runc with the plugin moved away: the restore fails as
#                    criu alone does, or, where a criu can, brings the same
#                    timers [criu-alone]
#   runc-plugin-at-dump   checkpoint with the plugin, restore on a node
#                    without it: as criu alone does [no-plugin-restore]
#   runc-killed, crun-killed   the runtime's restore with criu SIGKILLed
#                    before ptimer's first RESUME_DEVICES_LATE call: what
#                    the runtime leaves of the container [runc-killed,
#                    crun-killed]
#   lxc, lxc-alone   lxc-checkpoint -s / -r, with the plugin and without
#                    (noted) [lxc, lxc-alone]
#   runc-move, podman-move   checkpoint in the trixie root into /xfer,
#                    restore in the sid root (podman: --export / --import)
#                    [move-runc, move-podman]
#   cri-same-pod, cri-new-pod, cri-alone, cri-plugin-at-dump   containerd's
#                    CRI CheckpointContainer, then CreateContainer from the
#                    archive and StartContainer (test/containers/cri.sh)
#                    [cri-same-pod, cri-new-pod, cri-alone, cri-no-plugin]
#   cri-stub         containerd 1.x: CheckpointContainer answers
#                    UNIMPLEMENTED [cri-checkpoint]
#   ctr              ctr containers checkpoint --task --rw / restore --rw
#                    --live [ctr]
#   docker, docker-leave-running, docker-takeover, docker-alone,
#   docker-network-none   docker checkpoint create [--leave-running] /
#                    docker start --checkpoint under dockerd (docker_case,
#                    test/containers/inner.sh; docker_round below)

# What the plugin's restore log says of the container's pid 1 (five timers,
# one SIGEV_THREAD_ID at itself): ptimer restored them (criu 4.1, or
# takeover), or criu did (4.2+, criu-mode auto) and ptimer aimed the
# leader's timer at it again.
CT_PLUGIN_RESTORED='ptimer: task [0-9]+ \(vpid 1\): 5 POSIX timers restored, [a-zA-Z-]+ mode|ptimer: task [0-9]+: 1 timer criu made aimed at the process aimed at its leader again'


# fl_container CASE FLAVOUR: one round.  The rounds check what the
# container scenario holds (five timers, one SIGEV_THREAD_ID at pid 1,
# which criu alone cannot restore) and keep fixed names (containers, state
# directories, /xfer): they take the case `container` only.
fl_container() {
	local c=$1 fl=$2 SCEN=$CASE_ARGS
	if [ "$c" != container ]; then
		fail "$c/$fl" "the container flavours check the container scenario's timers: only the case 'container' runs in them (test/lib/flavour-containers.sh)"
		return 1
	fi
	case $fl in
	cri-* | ctr)
		if [ -z "${CW:-}" ]; then
			fail "$c/$fl" "no containerd node: the cri and ctr flavours run inside cri_case (test/containers/cri.sh)"
			return 1
		fi ;;
	esac
	case $fl in
	runc | crun) oci_case "$fl" ;;
	podman) podman_case podman ;;
	runc-alone) noplugin_alone alone criu-alone ;;
	runc-plugin-at-dump) noplugin_restore missing no-plugin-restore ;;
	runc-killed | crun-killed) oci_killed "${fl%-killed}" "$fl" ;;
	lxc) lxc_flavour lxc ;;
	lxc-alone) lxc_flavour lxc-alone alone ;;
	runc-move) if [ "$suite" = trixie ]; then runc_move_out; else runc_move_in; fi ;;
	podman-move) if [ "$suite" = trixie ]; then podman_move_out; else podman_move_in; fi ;;
	cri-same-pod) cri_round cri-same-pod same yes yes ;;
	cri-new-pod) cri_round cri-new-pod new yes yes ;;
	cri-alone) cri_round cri-alone same no no ;;
	cri-plugin-at-dump) cri_round cri-no-plugin new yes no ;;
	cri-stub) cri_stub ;;
	ctr) ctr_case ctr ;;
	incus-*)
		if [ -z "${INC_HOLD:-}" ]; then
			fail "$c/$fl" "no incusd: the incus flavours run inside incus_case (test/containers/inner.sh)"
			return 1
		fi
		# criu 4.1 makes no exact timer IDs itself (no timer_cr_ids): its
		# criu-mode auto is takeover, which the auto rounds ran
		case $fl/$CRIU_VERSION in
		incus-*takeover*/4.[01].* | incus-*takeover*/[0-3].*)
			info "$P/$fl: criu $CRIU_VERSION: criu-mode auto restores as takeover does (the auto rounds' restore lines)"
			return 0 ;;
		esac
		case $fl in
		incus-snapshot) incus_round "$fl" snapshot true ;;
		incus-stop) incus_round "$fl" stop true ;;
		incus-move) incus_round "$fl" move true ;;
		incus-copy) incus_round "$fl" copy true ;;
		incus-unpriv-snapshot) incus_round "$fl" snapshot false ;;
		incus-unpriv-stop) incus_round "$fl" stop false ;;
		incus-unpriv-move) incus_round "$fl" move false ;;
		incus-unpriv-copy) incus_round "$fl" copy false ;;
		incus-takeover-snapshot) incus_round "$fl" snapshot true takeover ;;
		incus-takeover-stop) incus_round "$fl" stop true takeover ;;
		incus-takeover-move) incus_round "$fl" move true takeover ;;
		incus-takeover-copy) incus_round "$fl" copy true takeover ;;
		incus-unpriv-takeover-move) incus_round "$fl" move false takeover ;;
		incus-alone) incus_round "$fl" snapshot true alone ;;
		incus-unpriv-alone-copy) incus_round "$fl" copy false alone ;;
		incus-alone-copy) incus_round "$fl" copy true alone ;;
		*) fail "$c/$fl" "no container flavour '$fl' (test/lib/flavour-containers.sh)"; return 1 ;;
		esac ;;
	docker | docker-leave-running | docker-takeover | docker-takeover-leave-running | docker-alone | docker-network-none)
		if [ -z "${DK_PID:-}" ]; then
			fail "$c/$fl" "no dockerd: the docker flavours run inside docker_case (test/containers/inner.sh)"
			return 1
		fi
		case $fl in
		docker) docker_round docker ;;
		docker-leave-running) docker_round "$fl" leave ;;
		docker-takeover) docker_round "$fl" "" takeover ;;
		docker-takeover-leave-running) docker_round "$fl" leave takeover ;;
		docker-alone) docker_round "$fl" alone ;;
		docker-network-none) docker_round "$fl" none ;;
		esac ;;
	*) fail "$c/$fl" "no container flavour '$fl' (test/lib/flavour-containers.sh)"; return 1 ;;
	esac
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

# oci_up NAME LABEL BUNDLE [CHECK]: a runc container NAME from a new bundle
# whose program names its checks LABEL/..., the program ready; a FAIL
# CHECK/... (default LABEL) at the step that failed, status 1.
oci_up() {
	local chk=${4:-$2}
	if ! bundle "$1" "$P/$2" "$3"; then
		fail "$chk/bundle" "runc spec or the bundle's config failed in $3"
		return 1
	fi
	if ! oci_run runc "$1" "$3"; then
		fail "$chk/run" "runc run failed: $(oneline "$3/run.err")"
		return 1
	fi
	ready "$3/rootfs/state" "$chk" "$3/run.err"
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

# restored RT NAME BUNDLE: the restore command has exited, or criu finished
# and the container runs
restored() {
	[ -e "$3/restore.rc" ] && return 0
	grep -q 'Restore finished successfully' "$3/rwork/restore.log" 2>/dev/null
}

# oci_case RT [NAME]: run, checkpoint, restore, compare, verify under runc or crun.
oci_case() {  # RT [NAME]
	local rt=$1 name=${2:-$1} b=$W/${2:-$1} pid t0 rc
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
	drive_collect "$name" "$b/rootfs/state"
	"$rt" delete -f "$name" >/dev/null 2>&1
}

# oci_killed RT NAME: criu SIGKILLed in the runtime's restore before
# ptimer's first RESUME_DEVICES_LATE call, when every task of the container
# is restored, held by ptimer with the parent-death signal SIGKILL, and
# none has its timers yet.  criu restores the container's pid 1 as the
# runtime's child (--restore-sibling), so criu's death kills nothing by
# itself: what is left is the runtime's doing.  The other plugin
# (test/criu/zero_plugin.c) is loaded first, from a plugin directory named
# in a criu configuration file (CRIU_CONFIG_FILE, which criu reads in swrk
# mode too; the runtimes pass their environment to criu), and kills criu at
# its first call.  Checked: the runtime's restore fails, and no process of
# the container runs afterwards (none without its timers).
oci_killed() {
	local rt=$1 name=$2 b=$W/$2 lib=$W/lib-zero-first so pid rc left n=0
	if ! command -v "$rt" >/dev/null; then
		skip "$name" "no $rt in this root"
		return
	fi
	# criu loads a directory's plugins in readdir order: the other first
	for so in zero.so a-zero.so 0-zero.so zz-zero.so; do
		for at in first last; do
			rm -rf "$lib"
			mkdir -p "$lib"
			[ $at = first ] && cp "$W/zero_plugin.so" "$lib/$so"
			cp "$PLUGIN" "$lib/"
			[ $at = last ] && cp "$W/zero_plugin.so" "$lib/$so"
			[ "$(ls -U "$lib" | head -n 1)" = "$so" ] && break 2
		done
	done
	if [ "$(ls -U "$lib" | head -n 1)" != "$so" ]; then
		fail "$name/plugin-directory" "cannot list the other plugin first: $(ls -U "$lib" | tr '\n' ' ')"
		return
	fi
	echo "libdir $lib" >"$W/killed.conf"
	bundle "$name" "$P/$name" "$b" || { fail "$name/bundle" "$rt spec failed"; return; }
	if ! oci_run "$rt" "$name" "$b"; then
		skip "$name" "$rt run fails here: $(oneline "$b/run.err")"
		return
	fi
	ready "$b/rootfs/state" "$name" "$b/run.err" || { "$rt" delete -f "$name" >/dev/null 2>&1; return; }
	if ! PTIMER_CRIU_MODE=takeover timeout "$TO" "$rt" checkpoint --image-path "$b/img" --work-path "$b/work" \
		"$name" >"$b/ckpt.out" 2>&1; then
		fail "$name/checkpoint" "$rt checkpoint failed: $(oneline "$b/ckpt.out") $(logtail "$b/work/dump.log")"
		"$rt" delete -f "$name" >/dev/null 2>&1
		return
	fi
	: | CRIU_CONFIG_FILE=$W/killed.conf ZERO_PLUGIN_KILL_CRIU=1 ZERO_PLUGIN_HIDDEN=1 ZERO_PLUGIN_LOG=$b/zero.log \
		PTIMER_CRIU_MODE=takeover setsid timeout "$TO" "$rt" restore -d --image-path "$b/img" --work-path "$b/rwork" \
		--bundle "$b" "$name" >"$b/restore.out" 2>&1
	rc=$?
	if ! grep -q '^RESUME_DEVICES_LATE ' "$b/zero.log" 2>/dev/null; then
		fail "$name/criu-killed" "the other plugin was not called at RESUME_DEVICES_LATE ($rt restore exit $rc): $(oneline "$b/restore.out") $(logtail "$b/rwork/restore.log")"
		"$rt" delete -f "$name" >/dev/null 2>&1
		return
	fi
	if grep -q 'POSIX timers restored' "$b/rwork/restore.log" 2>/dev/null; then
		fail "$name/criu-killed" "ptimer's call came before the other plugin's: $(grep -m1 'POSIX timers restored' "$b/rwork/restore.log")"
	else
		pass "$name/criu-killed: before ptimer's first RESUME_DEVICES_LATE call; $rt restore exit $rc: $(oneline "$b/restore.out" | cut -c1-160)"
	fi
	check "$name/restore-failed" "$rt restore exit 0 with criu killed" test "$rc" -ne 0
	sleep 1
	# the container's pid 1 as criu restored it (the other plugin's call)
	pid=$(sed -n 's/^RESUME_DEVICES_LATE //p' "$b/zero.log" | head -n 1)
	left=$(pgrep -xf "/zt criu container /state $P/$name")
	for pid in $left; do
		n=$((n + 1))
		note "$name: left running: pid $pid, $(grep -c '^ID:' "/proc/$pid/timers" 2>/dev/null) timers, $(awk '/^SigQ|^State/' "/proc/$pid/status" | tr '\n' ' ')"
	done
	if [ "$n" = 0 ]; then
		pass "$name/nothing-left: $rt killed the restored container (pid 1 was $pid) when criu died ($("$rt" state "$name" >/dev/null 2>&1 && echo "the container is still listed" || echo "the container is gone"))"
	else
		fail "$name/nothing-left" "$n process(es) of the container left running after criu was killed"
	fi
	"$rt" delete -f "$name" >/dev/null 2>&1
	for pid in $left; do kill -KILL "$pid" 2>/dev/null; done
	# the cgroup yard the killed criu left mounted in the work directory,
	# and crun's .proxy-crun cgroup it left in the container's
	for so in "$b"/rwork/.criu.cgyard.*; do
		[ -d "$so" ] && umount -R -l "$so" 2>/dev/null
	done
	rmdir /sys/fs/cgroup/*/"$CG/$name"/.proxy-crun /sys/fs/cgroup/*/"$CG/$name" 2>/dev/null
	return 0
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
		/zt criu "${SCEN:-container}" /state "$P/$name" >"$W/$name.run" 2>&1
}

podman_case() {
	local name=${1:-podman} st=$X/$suite-${1:-podman} pid t0 rc log
	if ! pm_image; then
		skip "$name" "podman import fails here: $(oneline "$W/podman-import.out")"
		return
	fi
	if ! pm_start "$name" "$st"; then
		skip "$name" "podman run fails here: $(oneline "$W/$name.run")"
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
		pass "$name/conf-bad-value: checkpoint fails, container runs: $(grep -oE 'Error \(.*' "$log" | grep ptimer | head -n1 | cut -c1-110)"
	else
		fail "$name/conf-bad-value" "checkpoint exit $rc, state $(pm inspect -f '{{.State.Status}}' "$name"): $(oneline "$W/$name.badckpt") ${log:+$(logtail "$log")}"
	fi
	# takeover: ptimer restores the timers on every criu, in linear mode
	printf '# test\ncriu-mode = takeover\nstrict = yes\nrestore-mode = linear\n' >/etc/criu/ptimer.conf

	pid=$(pm_pid "$name")
	timers "$pid" >"$W/$name.before"
	t0=$EPOCHREALTIME
	# -k (--keep): podman deletes criu's logs after a checkpoint otherwise
	if ! pm container checkpoint -k "$name" >"$W/$name.ckpt" 2>&1; then
		fail "$name/checkpoint" "$(oneline "$W/$name.ckpt") $(logtail "$(pm_log "$name" dump.log)")"
		pm rm -f "$name" >/dev/null 2>&1
		rm -f /etc/criu/ptimer.conf
		return
	fi
	log=$(pm_log "$name" dump.log)
	if grep -q 'ptimer: settings (/etc/criu/ptimer.conf, then the environment): criu-mode takeover, strict yes, restore-mode linear' "$log"; then
		pass "$name/checkpoint ($(secs "$t0") s): settings from /etc/criu/ptimer.conf reach criu dump"
	else
		fail "$name/checkpoint" "no 'ptimer: settings (/etc/criu/ptimer.conf...strict yes' in $log: $(logtail "$log")"
	fi
	t0=$EPOCHREALTIME
	if ! pm container restore -k "$name" >"$W/$name.restore" 2>&1; then
		fail "$name/restore" "$(oneline "$W/$name.restore") $(logtail "$(pm_log "$name" restore.log)")"
		pm rm -f "$name" >/dev/null 2>&1
		rm -f /etc/criu/ptimer.conf
		return
	fi
	log=$(pm_log "$name" restore.log)
	if grep -qE 'ptimer: task [0-9]+ \(vpid 1\): 5 POSIX timers restored, linear mode' "$log"; then
		pass "$name/restore ($(secs "$t0") s): $(grep -oE 'ptimer: task [0-9]+ \(vpid 1\): 5 POSIX timers restored, linear mode' "$log")"
	else
		fail "$name/restore" "no 'ptimer: ... 5 POSIX timers restored, linear mode' in $log: $(logtail "$log")"
	fi
	rm -f /etc/criu/ptimer.conf
	compare "$name" "$W/$name.before" "$(pm_pid "$name")"
	drive_collect "$name" "$st"
	pm rm -f "$name" >/dev/null 2>&1
}

# criu alone, and a restore on a host without the plugin (runc).  The plugin
# is moved out of /usr/lib/criu and back.  A checkpoint made with the plugin
# is a checkpoint criu alone restores as it would have without ptimer: here
# it fails as criu alone does (the container's pid 1 holds a SIGEV_THREAD_ID
# timer at itself: "Can't create posix timer"), or, where a criu can,
# restores the same timers; never a container without them.
noplugin_alone() {
	local ct=$1 label=$2 b=$W/$1 pid rc
	oci_up "$ct" "$ct" "$b" || return
	mv "$PLUGIN" "$W/ptimer_plugin.so.away"
	pid=$(oci_pid runc "$ct")
	timers "$pid" >"$b/before"
	timeout "$TO" runc checkpoint --image-path "$b/img" --work-path "$b/work" "$ct" >"$b/ckpt.out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		: | timeout "$TO" runc restore -d --image-path "$b/img" --work-path "$b/rwork" --bundle "$b" "$ct" \
			> >(cat >>"$b/stdio.out") 2> >(cat >"$b/restore.err")
		rc=$?
		if [ "$rc" -ne 0 ]; then
			pass "$label: runc restore without the plugin fails as known: $(grep -ohm1 "Can't create posix timer.*" "$b/rwork/restore.log" || logtail "$b/rwork/restore.log")"
		else
			note "criu $CRIU_VERSION alone restored the container (the known failure is gone)"
			compare "$ct" "$b/before" "$(oci_pid runc "$ct")"
			drive_collect "$ct" "$b/rootfs/state"
		fi
	else
		fail "$label/checkpoint" "runc checkpoint without the plugin exit $rc: $(logtail "$b/work/dump.log")"
	fi
	runc delete -f "$ct" >/dev/null 2>&1
	mv "$W/ptimer_plugin.so.away" "$PLUGIN"
}
noplugin_restore() {
	local ct=$1 label=$2 b=$W/$1 rc
	oci_up "$ct" "$ct" "$b" || return
	timers "$(oci_pid runc "$ct")" >"$b/before"
	if timeout "$TO" runc checkpoint --image-path "$b/img" --work-path "$b/work" "$ct" >"$b/ckpt.out" 2>&1; then
		mv "$PLUGIN" "$W/ptimer_plugin.so.away"
		: | timeout "$TO" runc restore -d --image-path "$b/img" --work-path "$b/rwork" --bundle "$b" "$ct" \
			> >(cat >>"$b/stdio.out") 2> >(cat >"$b/restore.err")
		rc=$?
		mv "$W/ptimer_plugin.so.away" "$PLUGIN"
		if [ "$rc" -ne 0 ] && grep -q "Can't create posix timer" "$b/rwork/restore.log"; then
			pass "$label: runc restore fails as with criu alone: $(grep -ohm1 "Can't create posix timer.*" "$b/rwork/restore.log" | cut -c1-80)"
		elif [ "$rc" -eq 0 ]; then
			# criu saves the pid-1 timer aimed at the process: it cannot
			# save the leader's tid in a pid namespace (docs/criu-plugin.md)
			note "criu $CRIU_VERSION without the plugin restored the plugin's checkpoint; its SIGEV_THREAD_ID timer at pid 1 comes back aimed at the process"
			sed 's#^\([0-9]* [0-9]*/[0-9a-f]*\) signal/tid\.1 #\1 signal/pid.1 #' "$b/before" >"$b/before.alone"
			compare "$label" "$b/before.alone" "$(oci_pid runc "$ct")"
		else
			fail "$label" "runc restore failed (exit $rc), not as criu alone does: $(logtail "$b/rwork/restore.log")"
		fi
	else
		fail "$label/checkpoint" "$(logtail "$b/work/dump.log")"
	fi
	runc delete -f "$ct" >/dev/null 2>&1
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
		drive_collect "$name" "$r/state"
	fi
	lxc-stop -P "$lp" -n ct -k >/dev/null 2>&1
}
lxc_flavour() {  # NAME [alone]
	local cpuset=
	if ! command -v lxc-checkpoint >/dev/null; then
		fail "$1" "no lxc-checkpoint in this root (roots.d/containers.pkgs: lxc)"
		return
	fi
	mountpoint -q /sys/fs/cgroup/cpuset && umount /sys/fs/cgroup/cpuset && cpuset=1
	[ -n "${2:-}" ] && mv "$PLUGIN" "$W/ptimer_plugin.so.away"
	lxc_round "$@"
	[ -n "${2:-}" ] && mv "$W/ptimer_plugin.so.away" "$PLUGIN"
	[ -n "$cpuset" ] && mount -t cgroup -o cpuset cgroup /sys/fs/cgroup/cpuset
	return 0
}

# alone_restored NAME RC LOG WHAT OUT: criu alone's restore by a runtime's
# WHAT (its exit RC, its output OUT, criu's LOG): an XFAIL while criu
# cannot restore the container's timer at pid 1, a FAIL when it failed
# otherwise (status 1 both); PASS and status 0 when criu restored it (the
# caller compares).
alone_restored() {
	if grep -q "Can't create posix timer" "$3" 2>/dev/null; then
		xfail "$1/restore" "criu $CRIU_VERSION alone cannot restore the SIGEV_THREAD_ID timer at the container's pid 1: $(grep -ohm1 "Can't create posix timer.*" "$3")$([ "$2" = 0 ] && echo "; $4 answered 0: it started the container afresh")"
		return 1
	fi
	if [ "$2" -ne 0 ]; then
		fail "$1/restore" "$4 without the plugin failed, not as criu alone does: $(oneline "$5" 200) $(logtail "$3")"
		return 1
	fi
	pass "$1/restore: criu $CRIU_VERSION alone restored the container (the known failure is gone)"
}

# plugin_restored NAME LOG T0 [takeover]: the plugin's restore line for
# the container's pid 1 in criu's LOG (a runtime that runs criu itself,
# whose only settings are /etc/criu/ptimer.conf's: takeover must be there)
plugin_restored() {
	if grep -qE "$CT_PLUGIN_RESTORED" "$2" 2>/dev/null; then
		pass "$1/restore ($(secs "$3") s): $(grep -ohE "$CT_PLUGIN_RESTORED" "$2" | head -n 1)"
	else
		fail "$1/restore" "no ptimer restore line for the container's pid 1 in $2"
	fi
	[ "${4:-}" = takeover ] && check "$1/takeover" "criu-mode takeover did not reach criu through /etc/criu/ptimer.conf: $(grep -m1 'ptimer: settings' "$2" 2>/dev/null)" \
		grep -q 'ptimer: settings .*criu-mode takeover' "$2"
	return 0
}

# ---- Docker: docker checkpoint create / docker start --checkpoint ---------------------
# dockerd (docker.io) with a data root, exec root and socket of its own
# under $W/docker, started by docker_case in a network namespace of its own
# (lo only: no bridge, no iptables, the host's network untouched) and
# stopped after.  `docker checkpoint` needs --experimental.  Containers run
# with --network host, i.e. in that namespace: Docker 28 cannot restore a
# --network none container at all (docker-network-none).  dockerd runs its
# own containerd, whose runc shim runs criu: the settings file
# /etc/criu/ptimer.conf reaches it, the caller's environment does not.
DK=$W/docker
DK_IMAGE=ptimer-ct:latest
dk() { timeout "$TO" docker -H "unix://$DK/d.sock" "$@"; }

# dk_start: dockerd up, the container's image imported; a FAIL when not.
dk_start() {
	DK_PID=
	if ! command -v dockerd >/dev/null; then
		fail docker "no dockerd in this root (roots.d/containers.pkgs: docker.io)"
		return 1
	fi
	awk -v d="$DK/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m"; done
	rm -rf "$DK"
	mkdir -p "$DK"
	unshare -n sh -c 'ip link set lo up && exec "$@"' dockerd dockerd --experimental \
		--data-root "$DK/root" --exec-root "$DK/run" -H "unix://$DK/d.sock" --pidfile "$DK/dockerd.pid" \
		--bridge none --iptables=false --ip6tables=false --ip-forward=false --storage-driver vfs \
		--exec-opt native.cgroupdriver=cgroupfs --cgroup-parent "/$CG/docker" >"$DK/dockerd.log" 2>&1 &
	DK_PID=$!
	if ! wait_until 600 dk version >/dev/null 2>&1; then
		fail docker/dockerd "dockerd did not answer in 60 s: $(dk version 2>&1 | tail -n 2 | tr '\n' ' ' | cut -c1-200) $(tail -n 3 "$DK/dockerd.log" | tr '\n' ' ' | cut -c1-300)"
		dk_stop
		return 1
	fi
	if ! dk import "$W/rootfs.tar" "$DK_IMAGE" >"$DK/import.out" 2>&1; then
		fail docker/import "docker import of the container's file system: $(oneline "$DK/import.out")"
		dk_stop
		return 1
	fi
	note "docker $(dk version -f '{{.Server.Version}}' 2>/dev/null), containerd $(dk version -f '{{range .Server.Components}}{{if eq .Name "containerd"}}{{.Version}}{{end}}{{end}}' 2>/dev/null)"
}

# dk_stop: every container removed, dockerd (and its containerd) stopped.
dk_stop() {
	[ -n "${DK_PID:-}" ] || return 0
	dk rm -f $(dk ps -aq 2>/dev/null) >/dev/null 2>&1
	kill "$DK_PID" 2>/dev/null
	wait_until 300 sh -c "! kill -0 $DK_PID 2>/dev/null" || kill -KILL "$DK_PID" 2>/dev/null
	wait "$DK_PID" 2>/dev/null
	# its containerd and shims, if dockerd left them
	pkill -KILL -f "$DK/run/containerd" 2>/dev/null
	# what they left mounted below $DK (shm of containers, the data root)
	awk -v d="$DK/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m"; done
	DK_PID=
}

# dk_log ID FILE: the newest criu log FILE (dump.log, restore.log) of the
# container ID, wherever containerd's runc shim kept it
dk_log() {
	find "$DK" -path "*$1*" -name "$2" -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -n 1 | cut -d' ' -f2-
}

# docker_round NAME [leave|alone|none] [takeover]: run the container,
# checkpoint it, start it from the checkpoint, compare its timers and let
# the program check itself.
#   leave     docker checkpoint create --leave-running: the container runs on
#             with its timers as they were, then is stopped and started from
#             the checkpoint
#   alone     the plugin moved away: criu alone, the control (its failure,
#             the timer at pid 1, an XFAIL while criu fails)
#   none      --network none: Docker 28 restores no such container
#             (containerd#12141), an XFAIL while it fails; Docker 26 does
#   takeover  /etc/criu/ptimer.conf says criu-mode = takeover
docker_round() {
	local name=$1 how=${2:-} mode=${3:-} st=$W/$1-state id pid t0 rc net=host cargs= log
	rm -rf "$st"
	mkdir -p "$st"
	[ "$how" = none ] && net=none
	[ "$how" = leave ] && cargs=--leave-running
	dk rm -f "$name" >/dev/null 2>&1
	if ! dk run -d --name "$name" --network "$net" -v "$st:/state" "$DK_IMAGE" \
		/zt criu "${SCEN:-container}" /state "$P/$name" >"$W/$name.run" 2>&1; then
		fail "$name/run" "docker run: $(oneline "$W/$name.run")"
		return
	fi
	ready "$st" "$name" "$W/$name.run" || { dk rm -f "$name" >/dev/null 2>&1; return; }
	id=$(dk inspect -f '{{.Id}}' "$name")
	pid=$(dk inspect -f '{{.State.Pid}}' "$name")
	timers "$pid" >"$W/$name.before"
	[ "$mode" = takeover ] && printf 'criu-mode = takeover\n' >/etc/criu/ptimer.conf
	[ "$how" = alone ] && mv "$PLUGIN" "$W/ptimer_plugin.so.away"
	t0=$EPOCHREALTIME
	dk checkpoint create $cargs "$name" c1 >"$W/$name.ckpt" 2>&1
	rc=$?
	log=$(dk_log "$id" dump.log)
	if [ "$rc" -ne 0 ]; then
		fail "$name/checkpoint" "docker checkpoint create $cargs exit $rc: $(oneline "$W/$name.ckpt") ${log:+$(logtail "$log")}"
		docker_end "$name" "$how"
		return
	fi
	if [ "$how" = alone ]; then
		pass "$name/checkpoint ($(secs "$t0") s): without the plugin"
	elif ls "$DK/root/containers/$id/checkpoints/c1"/ptimers-*.img >/dev/null 2>&1; then
		pass "$name/checkpoint ($(secs "$t0") s): $(cd "$DK/root/containers/$id/checkpoints/c1" && ls ptimers-*.img | tr '\n' ' ')in the checkpoint's directory"
	else
		fail "$name/checkpoint" "no ptimers-*.img in $DK/root/containers/$id/checkpoints/c1: $(ls "$DK/root/containers/$id/checkpoints/c1" 2>&1 | tr '\n' ' ' | cut -c1-300)"
	fi
	if [ "$how" = leave ]; then
		# running on as it was; then stopped, to be started from the checkpoint
		compare "$name/left-running" "$W/$name.before" "$(dk inspect -f '{{.State.Pid}}' "$name")"
		dk stop -t 0 "$name" >/dev/null 2>&1
	fi
	# a failed restore's log goes with the task's bundle: criu writes it
	# where runc's criu configuration file says (runc reads
	# /etc/criu/runc.conf, and criu lets it override runc's options)
	[ "$how" = alone ] && printf 'log-file %s\n' "$W/$name.restore.log" >/etc/criu/runc.conf
	t0=$EPOCHREALTIME
	dk_start_checkpoint "$name"
	rc=$?
	log=$(dk_log "$id" restore.log)
	[ "$how" = alone ] && log=$W/$name.restore.log
	if [ "$how" = alone ]; then
		if alone_restored "$name" "$rc" "$log" "docker start --checkpoint" "$W/$name.start"; then
			compare "$name" "$W/$name.before" "$(dk inspect -f '{{.State.Pid}}' "$name")"
			drive_collect "$name" "$st"
		fi
	elif [ "$how" = none ] && [ "$rc" -ne 0 ] && grep -q '/proc/0/ns/net' "$W/$name.start"; then
		xfail "$name/restore" "Docker restores no --network none container (containerd#12141, it binds /proc/0/ns/net): $(oneline "$W/$name.start" 200)"
	elif [ "$rc" -ne 0 ]; then
		fail "$name/restore" "docker start --checkpoint exit $rc: $(oneline "$W/$name.start") ${log:+$(logtail "$log")}"
	else
		plugin_restored "$name" "${log:-$DK/restore.log}" "$t0" "$mode"
		compare "$name" "$W/$name.before" "$(dk inspect -f '{{.State.Pid}}' "$name")"
		drive_collect "$name" "$st"
	fi
	docker_end "$name" "$how"
}
# dk_start_checkpoint NAME: docker start --checkpoint c1 NAME, output in
# $W/NAME.start.  Docker's upload of the checkpoint to its containerd fails
# now and then with "commit failed: content sha256:...: already exists"
# when a blob of the same content is still in containerd's store (moby
# #42900, Docker's alone: criu has not run yet): tried again, noted.
dk_start_checkpoint() {
	local try rc
	for try in 1 2 3; do
		dk start --checkpoint c1 "$1" >"$W/$1.start" 2>&1
		rc=$?
		[ "$rc" -ne 0 ] && grep -q 'failed to upload checkpoint to containerd: .*already exists' "$W/$1.start" || return "$rc"
		note "$1: docker start --checkpoint, try $try: $(oneline "$W/$1.start" 160) (moby#42900): once more"
		sleep 1
	done
	return "$rc"
}
docker_end() {
	[ "$2" = alone ] && [ -e "$W/ptimer_plugin.so.away" ] && mv "$W/ptimer_plugin.so.away" "$PLUGIN"
	rm -f /etc/criu/ptimer.conf /etc/criu/runc.conf
	dk rm -f "$1" >/dev/null 2>&1
	return 0
}

# ---- Incus: stateful snapshots, stateful stop, moves and copies ---------------------
# Two incusd (incus-base: containers through liblxc), a and b, with
# directories of their own under $W/incus, in one network namespace of
# their own (lo only: b pulls a's container over https on 127.0.0.1; no
# bridge, no firewall), started by incus_case and stopped after.  The CLI
# reaches both through their unix sockets (b as the remote "b").  liblxc 7
# refuses the v1 cgroup layout: incus_case mounts cgroup2 over
# /sys/fs/cgroup, so it runs last.  Each container runs the program as its
# init (raw.lxc lxc.init.cmd), without console or AppArmor profile (this
# kernel has no AppArmor), with migration.stateful=true.  Unprivileged
# containers get root's 1000000:1000000000 of /etc/subuid and /etc/subgid,
# and INCUS_IDMAPPED_MOUNTS_DISABLE=1: the restore cannot open the files of
# an idmapped root file system.  Incus runs criu through liblxc: only
# /etc/criu/ptimer.conf reaches it; its logs are in INCUS_DIR/logs/NAME.
IN=$W/incus
inc() { timeout "$TO" env INCUS_DIR="$IN/a" INCUS_CONF="$IN/conf" incus "$@"; }
incb() { timeout "$TO" env INCUS_DIR="$IN/b" INCUS_CONF="$IN/conf" incus "$@"; }
# inc_pid DAEMON NAME: the container's init as this /proc shows it
inc_pid() {
	timeout "$TO" env INCUS_DIR="$IN/$1" incus query "/1.0/instances/$2/state" 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["pid"])' 2>/dev/null
}
# inc_running DAEMON NAME: the container runs there
inc_running() {
	[ "$(timeout "$TO" env INCUS_DIR="$IN/$1" incus query "/1.0/instances/$2/state" 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["status"])' 2>/dev/null)" = Running ]
}
# inc_log DAEMON NAME WHAT: the newest criu log of NAME there whose name has WHAT (dump, restore)
inc_log() {
	find "$IN/$1/logs/$2" -name "*$3*.log" -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -n 1 | cut -d' ' -f2-
}
# inc_sweep: what liblxc left in the host's cgroup2 hierarchy for our containers
inc_sweep() {
	local d
	for d in /sys/fs/cgroup/lxc.payload.pt-* /sys/fs/cgroup/lxc.monitor.pt-*; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}
# inc_host_back: the host's cgroup2 hierarchy as inc_start found it:
# liblxc's lxc.pivot gone, and the controllers it enabled in the root's
# cgroup.subtree_control (hugetlb here) disabled again: crun's containers
# live in that hierarchy too, and criu cannot restore one whose parent's
# subtree_control changed under it ("write to cgroup.subtree_control")
inc_host_back() {
	local c
	inc_sweep
	rmdir /sys/fs/cgroup/lxc.pivot 2>/dev/null
	[ -f "$IN/subtree_control" ] || return 0
	for c in $(cat /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null); do
		grep -qw -- "$c" "$IN/subtree_control" 2>/dev/null || echo "-$c" >/sys/fs/cgroup/cgroup.subtree_control ||
			fail incus/host "cannot disable $c in the host's cgroup2 root, which liblxc enabled"
	done
	rm -f "$IN/subtree_control"
}

# inc_start: both daemons up, each with a dir storage pool and a default
# profile of only a root disk, the container's image imported into a; a
# FAIL when not.
inc_start() {
	local d
	INC_HOLD=
	if ! command -v incus >/dev/null || [ ! -x /usr/libexec/incus/incusd ]; then
		fail incus "no incus or /usr/libexec/incus/incusd in this root (roots.d/containers.pkgs: incus-base, incus-client)"
		return 1
	fi
	umount -R /sys/fs/cgroup 2>/dev/null
	if ! mount -t cgroup2 cgroup2 /sys/fs/cgroup; then
		fail incus/cgroup2 "cannot mount cgroup2 on /sys/fs/cgroup (liblxc 7 needs it)"
		return 1
	fi
	mkdir -p "$IN"
	# a run killed before inc_stop left what liblxc enabled, and its
	# record of the root as it found it (inc_host_back removes it)
	if [ -f "$IN/subtree_control" ]; then
		inc_host_back
	else
		inc_sweep
	fi
	cat /sys/fs/cgroup/cgroup.subtree_control >"$IN/subtree_control"
	for d in uid gid; do
		grep -q '^root:' "/etc/sub$d" 2>/dev/null || echo 'root:1000000:1000000000' >>"/etc/sub$d"
	done
	find "$IN" -mindepth 1 -maxdepth 1 ! -name subtree_control -exec rm -rf {} +
	mkdir -p "$IN/a" "$IN/b" "$IN/conf"
	unshare -n sleep infinity &
	INC_HOLD=$!
	sleep 0.1
	nsenter -t "$INC_HOLD" -n ip link set lo up
	for d in a b; do
		INCUS_DIR=$IN/$d INCUS_IDMAPPED_MOUNTS_DISABLE=1 nsenter -t "$INC_HOLD" -n \
			/usr/libexec/incus/incusd --group "" --logfile "$IN/$d/incusd.log" >"$IN/$d.out" 2>&1 &
		echo $! >"$IN/$d.pid"
	done
	for d in a b; do
		if ! wait_until 600 env INCUS_DIR="$IN/$d" incus query /1.0 >/dev/null 2>&1; then
			fail incus/incusd "incusd ($d) did not answer in 60 s: $(tail -n 3 "$IN/$d.out" "$IN/$d/incusd.log" 2>/dev/null | tr '\n' ' ' | cut -c1-300)"
			inc_stop
			return 1
		fi
		printf 'config:\n  core.https_address: 127.0.0.1:%s\nstorage_pools:\n- name: default\n  driver: dir\nprofiles:\n- name: default\n  devices:\n    root:\n      path: /\n      pool: default\n      type: disk\n' \
			"$([ $d = a ] && echo 8443 || echo 8444)" >"$IN/$d.preseed"
		if ! timeout "$TO" env INCUS_DIR="$IN/$d" incus admin init --preseed <"$IN/$d.preseed" >"$IN/$d.init" 2>&1; then
			fail incus/init "incus admin init --preseed ($d): $(oneline "$IN/$d.init")"
			inc_stop
			return 1
		fi
	done
	mkdir -p "$IN/image"
	cp -a "$ROOTFS" "$IN/image/rootfs"
	printf 'architecture: %s\ncreation_date: %s\nproperties:\n  description: ptimer test program\n' "$(uname -m)" "$(date +%s)" >"$IN/image/metadata.yaml"
	if ! tar -C "$IN/image" -czf "$IN/image.tar.gz" metadata.yaml rootfs ||
		! inc image import "$IN/image.tar.gz" --alias ptimer-ct >"$IN/import.out" 2>&1 ||
		! inc remote add b "unix://$IN/b/unix.socket" >"$IN/remote.out" 2>&1; then
		fail incus/image "incus image import, remote add: $(oneline "$IN/import.out") $(oneline "$IN/remote.out" 2>/dev/null)"
		inc_stop
		return 1
	fi
	note "incus $(inc version 2>/dev/null | awk '/^Server version/ { print $3 }'), liblxc $(lxc-start --version 2>/dev/null)"
}

# inc_stop: every container deleted, both daemons stopped, cgroups swept.
inc_stop() {
	local d p
	for d in a b; do
		for p in $(timeout "$TO" env INCUS_DIR="$IN/$d" incus list -c n -f csv 2>/dev/null); do
			timeout "$TO" env INCUS_DIR="$IN/$d" incus delete -f "$p" >/dev/null 2>&1
		done
		p=$(cat "$IN/$d.pid" 2>/dev/null)
		[ -n "$p" ] && kill "$p" 2>/dev/null
	done
	for d in a b; do
		p=$(cat "$IN/$d.pid" 2>/dev/null)
		[ -n "$p" ] || continue
		wait_until 300 sh -c "! kill -0 $p 2>/dev/null" || kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	[ -n "${INC_HOLD:-}" ] && kill "$INC_HOLD" 2>/dev/null && wait "$INC_HOLD" 2>/dev/null
	INC_HOLD=
	awk -v d="$IN/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m"; done
	inc_host_back
}

# incus_round NAME PATH PRIVILEGED [takeover|alone]: a container holding
# the program through PATH, then its timers compared and the program's own
# check:
#   snapshot  incus snapshot create --stateful, snapshot restore --stateful
#   stop      incus stop --stateful, incus start
#   move      incus move to b (a live migration)
#   copy      incus copy to b of the running container: the copy restored
#             there, the original running on as it was
# takeover: /etc/criu/ptimer.conf says criu-mode = takeover; alone: the
# plugin moved away, criu alone (its failure an XFAIL while criu fails).
incus_round() {
	local try
	for try in 1 2 3; do
		incus_try "$@"
		[ $? = 2 ] || return 0
		note "$1, try $try: criu's restore in the container's user namespace could not open timens-0.img (Permission denied), before ptimer's first task call; once more with a new container"
	done
	# criu's restored init opens timens-0.img from inside the container's
	# user namespace, in a state directory Incus makes root's, mode 0700:
	# on sid one restore in six fails so, with the plugin or without
	# (incus-alone rounds); Incus 6.0's unprivileged copy, every time
	xfail "$1" "criu's restore could not open timens-0.img in the container's user namespace in 3 tries (Incus's state directory is root's, mode 0700; criu alone meets it too)"
}
# incus_try: one try of incus_round; 2 when it met criu's timens-0.img race
incus_try() {
	local name=$1 how=$2 priv=$3 mode=${4:-} ct=pt-$1 st=$IN/state-$1 pid rc t0 log at=a img
	rm -rf "$st"
	mkdir -p "$st"
	chmod 0777 "$st"
	if ! inc init ptimer-ct "$ct" -c security.privileged="$priv" -c migration.stateful=true \
		-c raw.lxc="lxc.console.path = none
lxc.apparmor.profile =
lxc.init.cmd = /zt criu ${SCEN:-container} /state $P/$name" >"$IN/$name.init" 2>&1 ||
		! inc config device add "$ct" state disk source="$st" path=/state >>"$IN/$name.init" 2>&1 ||
		! inc start "$ct" >>"$IN/$name.init" 2>&1; then
		fail "$name/start" "incus init, config device add, start: $(oneline "$IN/$name.init") $(tail -n 2 "$IN/a/logs/$ct/lxc.log" 2>/dev/null | tr '\n' ' ' | cut -c1-300)"
		inc delete -f "$ct" >/dev/null 2>&1
		return
	fi
	ready "$st" "$name" "$IN/$name.init" || { inc delete -f "$ct" >/dev/null 2>&1; return; }
	pid=$(inc_pid a "$ct")
	timers "$pid" >"$IN/$name.before"
	[ "$mode" = takeover ] && printf 'criu-mode = takeover\n' >/etc/criu/ptimer.conf
	[ "$mode" = alone ] && mv "$PLUGIN" "$W/ptimer_plugin.so.away"
	t0=$EPOCHREALTIME
	case $how in
	snapshot)
		inc snapshot create "$ct" s1 --stateful >"$IN/$name.out" 2>&1 &&
			img=$IN/a/storage-pools/default/containers-snapshots/$ct/s1/state &&
			inc_img "$name" "$img" &&
			inc snapshot restore "$ct" s1 --stateful >>"$IN/$name.out" 2>&1 ;;
	stop)
		inc stop "$ct" --stateful >"$IN/$name.out" 2>&1 &&
			inc_img "$name" "$IN/a/storage-pools/default/containers/$ct/state" &&
			inc start "$ct" >>"$IN/$name.out" 2>&1 ;;
	move)
		at=b
		inc move "$ct" "b:$ct" >"$IN/$name.out" 2>&1 ;;
	copy)
		at=b
		inc copy "$ct" "b:$ct" >"$IN/$name.out" 2>&1 ;;
	esac
	rc=$?
	# a migration's images go over the wire: the source's dump log says
	# what the plugin saved (a source that is gone took its logs along:
	# then the plugin's restore line, which it writes from its image, is
	# the proof)
	case $how/$mode in
	move/alone | copy/alone) ;;
	move/* | copy/*)
		if [ -z "$(inc_log a "$ct" dump)" ]; then
			info "$name/checkpoint: the source is gone, with its logs"
		elif grep -qE 'ptimer: task [0-9]+ \(vpid 1\): [0-9]+ POSIX timers saved to ptimers-1.img' "$(inc_log a "$ct" dump)" 2>/dev/null; then
			pass "$name/checkpoint: $(grep -ohE 'ptimer: task [0-9]+ \(vpid 1\): [0-9]+ POSIX timers saved to ptimers-1.img' "$(inc_log a "$ct" dump)" | head -n 1)"
		else
			fail "$name/checkpoint" "no 'POSIX timers saved to ptimers-1.img' in the source's dump log: $(logtail "$(inc_log a "$ct" dump)")"
		fi ;;
	esac
	log=$(inc_log "$at" "$ct" restore)
	# whatever incus answered: Incus 6.0 starts a copy whose restore
	# failed afresh, and exits 0
	if grep -qs 'Unable to open timens-0.img: Permission denied' "$log" "$(inc_log a "$ct" restore)"; then
		inc_end "$name"
		return 2
	fi
	if [ "$mode" = alone ]; then
		mv "$W/ptimer_plugin.so.away" "$PLUGIN"
		# Incus 6.0 starts a copy criu could not restore afresh, and answers 0
		alone_restored "$name" "$rc" "$log" "incus $how" "$IN/$name.out" &&
			compare "$name" "$IN/$name.before" "$(inc_pid "$at" "$ct")"
		[ "$how" = copy ] && inc_original "$name"
		inc_end "$name"
		return
	fi
	if [ "$how" = move ] && [ "$rc" -ne 0 ] && grep -q 'Failed to delete original instance after copying it' "$IN/$name.out" &&
		inc_running b "$ct"; then
		xfail "$name/move-rc" "incus move answers rc $rc after a good move (the copy runs on b): $(oneline "$IN/$name.out" 160)"
		inc delete -f "$ct" >/dev/null 2>&1
		rc=0
	fi
	if [ "$rc" -ne 0 ] || ! inc_running "$at" "$ct"; then
		fail "$name/$how" "incus $how exit $rc: $(oneline "$IN/$name.out") $(logtail "$(inc_log a "$ct" dump)" ${log:+"$log"})"
		inc_end "$name"
		return
	fi
	plugin_restored "$name" "${log:-$IN/$at/logs/$ct/restore.log}" "$t0" "$mode"
	[ "$how" = copy ] && inc_original "$name"
	compare "$name" "$IN/$name.before" "$(inc_pid "$at" "$ct")"
	drive_collect "$name" "$st"
	inc_end "$name"
}
# inc_original NAME: after incus copy of the running container, the
# original.  Incus 7 copies a running container with criu's final state
# "dead" ("Unfreezing tasks into 2" in its dump log): its init is killed,
# and Incus still lists it as running.  An XFAIL naming that while it
# holds, with the plugin or without; else the original must be as before.
# Then it goes, so that only the copy checks itself in the state directory
# they share.
inc_original() {
	local ct=pt-$1 pid
	pid=$(inc_pid a "$ct")
	if [ -n "$pid" ] && [ -e "/proc/$pid" ]; then
		compare "$1/original" "$IN/$1.before" "$pid"
	elif grep -qs 'Unfreezing tasks into 2' "$(inc_log a "$ct" dump)"; then
		xfail "$1/original" "incus copy of a running container kills the original (criu's dump ends it: 'Unfreezing tasks into 2'), yet lists it as $(inc list "$ct" -c s -f csv 2>/dev/null)"
	else
		fail "$1/original" "the original's init is gone after incus copy, not by criu's dump: $(oneline "$IN/$1.out" 200)"
	fi
	inc delete -f "$ct" >/dev/null 2>&1
}

# inc_img NAME DIR: the plugin's image among the checkpoint's
inc_img() {
	[ "$mode" = alone ] && return 0
	if ls "$2"/ptimers-*.img >/dev/null 2>&1; then
		pass "$1/checkpoint: $(cd "$2" && ls ptimers-*.img | tr '\n' ' ')in $2"
	else
		fail "$1/checkpoint" "no ptimers-*.img in $2: $(ls "$2" 2>&1 | tr '\n' ' ' | cut -c1-200)"
	fi
	return 0
}
inc_end() {
	local ct=pt-$1
	rm -f /etc/criu/ptimer.conf
	[ -e "$W/ptimer_plugin.so.away" ] && mv "$W/ptimer_plugin.so.away" "$PLUGIN"
	inc delete -f "$ct" >/dev/null 2>&1
	incb delete -f "$ct" >/dev/null 2>&1
	inc_sweep
	return 0
}

# ---- moves between hosts: trixie checkpoints into /xfer, sid restores ---------------
runc_move_out() {
	local b=$X/move-runc
	rm -rf "$b"
	if oci_up move move-runc "$b" move-runc/out; then
		timers "$(oci_pid runc move)" >"$b/before"
		if timeout "$TO" runc checkpoint --image-path "$b/img" --work-path "$b/work" move >"$b/ckpt.out" 2>&1; then
			pass "move-runc/out: runc checkpoint into $b/img"
			echo "$suite $CRIU_VERSION" >"$b/from"
		else
			fail "move-runc/out" "$(logtail "$b/work/dump.log")"
		fi
		runc delete -f move >/dev/null 2>&1
	fi
}
podman_move_out() {
	local st=$X/move-podman
	rm -rf "$st" "$X/move-podman.tar.gz"
	# the image goes along (podman save/load keep its ID; --import looks
	# the checkpoint's image up by ID, and a second import gets another)
	rm -f "$X/ptimer-ct-image.tar"
	if ! pm_image || ! pm save -o "$X/ptimer-ct-image.tar" "$IMAGE" >"$W/podman-save.out" 2>&1; then
		fail "move-podman/out" "podman import or save of $IMAGE failed: $(oneline "$W/podman-save.out")"
	elif ! pm_start move-podman "$st"; then
		fail "move-podman/out" "podman run failed: $(oneline "$W/move-podman.run")"
	elif ready "$st" move-podman/out "$W/move-podman.run"; then
		timers "$(pm_pid move-podman)" >"$X/move-podman.before"
		if pm container checkpoint --export "$X/move-podman.tar.gz" move-podman >"$W/move-podman.ckpt" 2>&1; then
			pass "move-podman/out: podman container checkpoint --export $X/move-podman.tar.gz"
		else
			fail "move-podman/out" "$(oneline "$W/move-podman.ckpt")"
		fi
		pm rm -f move-podman >/dev/null 2>&1
	fi
}

runc_move_in() {
	local b=$X/move-runc
	if [ -f "$b/from" ]; then
		: | timeout "$TO" runc restore -d --image-path "$b/img" --work-path "$b/rwork" --bundle "$b" move \
			> >(cat >>"$b/stdio.out") 2> >(cat >"$b/restore.err")
		if [ $? -eq 0 ]; then
			pass "move-runc/in: checkpoint of criu $(cut -d' ' -f2 "$b/from") ($(cut -d' ' -f1 "$b/from")) restored by criu $CRIU_VERSION"
			compare move-runc "$b/before" "$(oci_pid runc move)"
			drive_collect move-runc "$b/rootfs/state"
		else
			fail "move-runc/in" "$(oneline "$b/restore.err") $(logtail "$b/rwork/restore.log")"
		fi
		runc delete -f move >/dev/null 2>&1
	else
		skip "move-runc/in" "no runc checkpoint from the other root in $b"
	fi
}
podman_move_in() {
	local st=$X/move-podman
	if [ -f "$X/move-podman.tar.gz" ]; then
		if pm load -i "$X/ptimer-ct-image.tar" >"$W/podman-load.out" 2>&1 &&
			pm container restore --import "$X/move-podman.tar.gz" >"$W/move-podman.restore" 2>&1; then
			pass "move-podman/in: podman container restore --import"
			compare move-podman "$X/move-podman.before" "$(pm_pid move-podman)"
			drive_collect move-podman "$st"
		else
			fail "move-podman/in" "$(oneline "$W/move-podman.restore")"
		fi
		pm rm -f move-podman >/dev/null 2>&1
	else
		skip "move-podman/in" "no podman export from the other root"
	fi
}


# ---- containerd: CRI and ctr (the node: test/containers/cri.sh) ----------------------

# cri_pod_json NAME: the PodSandboxConfig of pod NAME (as the kubelet would
# send it for a pod with hostNetwork and no shareProcessNamespace).
cri_pod_json() {
	cat >"$CW/$1.pod.json" <<EOF
{"metadata": {"name": "$1", "uid": "uid-$1", "namespace": "ptimer", "attempt": 0},
 "log_directory": "$CW/logs/$1",
 "linux": {"cgroup_parent": "/$CG/$1",
  "security_context": {"namespace_options": {"network": "NODE", "pid": "CONTAINER", "ipc": "POD"}}}}
EOF
}

# cri_ctr_json FILE NAME IMAGE STATEDIR: the ContainerConfig of the program
cri_ctr_json() {
	cat >"$1" <<EOF
{"metadata": {"name": "timers"}, "image": {"image": "$3"},
 "command": ["/zt", "criu", "${SCEN:-container}", "/state", "$P/$2"],
 "mounts": [{"container_path": "/state", "host_path": "$4"}],
 "log_path": "$2.log",
 "linux": {"security_context": {"namespace_options": {"network": "NODE", "pid": "CONTAINER", "ipc": "POD"}}}}
EOF
}

# cri_running ID: the container runs; its pid in CRI_RPID
cri_running() {
	local st
	st=$(cri status "$1" 2>/dev/null) || return 1
	set -- $st
	[ "$1" = CONTAINER_RUNNING ] && [ "${2:-0}" -gt 0 ] && CRI_RPID=$2
}

# cri_gone ID: stop and remove a container, quietly
cri_gone() { cri stop "$1" >/dev/null 2>&1; cri rm "$1" >/dev/null 2>&1; }
cri_pod_gone() { cri stopp "$1" >/dev/null 2>&1; cri rmp "$1" >/dev/null 2>&1; }

# cri_round NAME POD2 PLUGIN_AT_DUMP PLUGIN_AT_RESTORE: one checkpoint and
# restore; POD2 "same" restores into the first pod, else into a new pod.
cri_round() {
	local name=$1 where=$2 pdump=$3 prest=$4 st=$W/$1.state pod pod2 pj=$CW/$1.pod.json cid cid2 a t0 t1 rc log
	rm -rf "$st"
	mkdir -p "$st" "$CW/logs/$name" "$CW/logs/$name-2"
	cri_pod_json "$name"
	cri_ctr_json "$CW/$name.ctr.json" "$name" "$CRI_IMAGE" "$st"
	if ! pod=$(cri runp "$CW/$name.pod.json" 2>"$CW/$name.err") ||
		! cid=$(cri create "$pod" "$CW/$name.ctr.json" "$CW/$name.pod.json" 2>>"$CW/$name.err") ||
		! cri start "$cid" 2>>"$CW/$name.err"; then
		fail "$name/start" "$(oneline "$CW/$name.err") $(cri_log)"
		[ -n "${pod:-}" ] && cri_pod_gone "$pod"
		return
	fi
	ready "$st" "$name" "$CW/logs/$name/$name.log" || { cri_pod_gone "$pod"; return; }
	cri_running "$cid" || { fail "$name/status" "CRI ContainerStatus: not running"; cri_pod_gone "$pod"; return; }
	timers "$CRI_RPID" >"$CW/$name.before"

	[ "$pdump" = yes ] || mv "$PLUGIN" "$W/ptimer_plugin.so.away"
	a=$CW/$name.tar
	t0=$EPOCHREALTIME
	cri checkpoint "$cid" "$a" 2>"$CW/$name.err"
	rc=$?
	t1=$(secs "$t0")
	[ "$pdump" = yes ] || mv "$W/ptimer_plugin.so.away" "$PLUGIN"
	if [ "$rc" -ne 0 ]; then
		fail "$name/checkpoint" "CRI CheckpointContainer: $(oneline "$CW/$name.err") $(cri_log)"
		cri_pod_gone "$pod"
		return
	fi
	tar -xOf "$a" dump.log >"$CW/$name.dump.log" 2>/dev/null
	log=$(grep -ohE 'ptimer: task [0-9]+ \(vpid 1\): [0-9]+ POSIX timers saved' "$CW/$name.dump.log" | head -n1)
	if [ "$pdump" = yes ]; then
		if [ -n "$log" ]; then
			pass "$name/checkpoint ($t1 s): CRI CheckpointContainer to an archive of $(($(stat -c %s "$a") / 1024)) KiB, dump.log in it: $log"
		else
			fail "$name/checkpoint" "no 'ptimer: ... POSIX timers saved' in the archive's dump.log: $(logtail "$CW/$name.dump.log")"
		fi
	elif [ ! -s "$CW/$name.dump.log" ] || grep -qE 'ptimer(_plugin|: )' "$CW/$name.dump.log"; then
		fail "$name/checkpoint" "the archive's dump.log is missing, or shows the plugin although it was moved away: $(logtail "$CW/$name.dump.log")"
	fi
	# KEP-2008 checkpoints leave the container running: it goes, as
	# before a migration
	cri_gone "$cid"
	pod2=$pod
	if [ "$where" != same ]; then
		cri_pod_gone "$pod"
		cri_pod_json "$name-2"
		pj=$CW/$name-2.pod.json
		if ! pod2=$(cri runp "$pj" 2>"$CW/$name.err"); then
			fail "$name/new-pod" "$(oneline "$CW/$name.err")"
			return
		fi
	fi
	cri_ctr_json "$CW/$name.restore.json" "$name" "$a" "$st"
	[ "$prest" = yes ] || mv "$PLUGIN" "$W/ptimer_plugin.so.away"
	t0=$EPOCHREALTIME
	rc=0
	cid2=$(cri create "$pod2" "$CW/$name.restore.json" "$pj" 2>"$CW/$name.err") &&
		cri start "$cid2" 2>>"$CW/$name.err" || rc=$?
	t1=$(secs "$t0")
	[ "$prest" = yes ] || mv "$W/ptimer_plugin.so.away" "$PLUGIN"
	log=$(find "$CW/criu-work" "$CW/state" "$CW/root" -name restore.log -newer "$a" 2>/dev/null | head -n1)
	if [ "$pdump" != yes ]; then
		# criu alone: the known failure, through the whole path
		if grep -qE 'ptimer(_plugin|: )' "$log" 2>/dev/null; then
			fail "$name" "the plugin ran at restore although it was moved away: $(logtail "$log")"
		elif [ "$rc" -ne 0 ] && grep -q "Can't create posix timer" "$log" 2>/dev/null; then
			pass "$name: restore without the plugin fails as criu alone does: $(oneline "$CW/$name.err" 300) restore.log: $(grep -ohm1 "Can't create posix timer.*" "$log")"
		elif [ "$rc" -eq 0 ]; then
			note "criu $CRIU_VERSION alone restored the container (the known failure is gone)"
			if wait_until 300 cri_running "$cid2"; then
				compare "$name" "$CW/$name.before" "$CRI_RPID"
			else
				fail "$name" "criu alone restored the container, which does not run: $(cri status "$cid2" 2>&1)"
			fi
		else
			fail "$name" "the restore failed, not as criu alone does: $(oneline "$CW/$name.err") ${log:+$(logtail "$log")}"
		fi
		[ -n "${cid2:-}" ] && cri_gone "$cid2"
		cri_pod_gone "$pod2"
		return
	fi
	if [ "$rc" -ne 0 ]; then
		fail "$name/restore" "CRI CreateContainer+StartContainer from $a: $(oneline "$CW/$name.err") ${log:+$(logtail "$log")} $(cri_log)"
		[ -n "${cid2:-}" ] && cri_gone "$cid2"
		cri_pod_gone "$pod2"
		return
	fi
	if ! wait_until 300 cri_running "$cid2"; then
		fail "$name/restore" "the restored container does not run: $(cri status "$cid2" 2>&1)"
		cri_gone "$cid2"
		cri_pod_gone "$pod2"
		return
	fi
	if [ "$prest" = yes ]; then
		if grep -qE "$CT_PLUGIN_RESTORED" "$log" 2>/dev/null; then
			pass "$name/restore ($t1 s): CRI CreateContainer from the archive + StartContainer ($([ "$where" = same ] && echo "same pod" || echo "new pod")): $(grep -ohE "$CT_PLUGIN_RESTORED" "$log" | head -n1)"
		else
			fail "$name/restore" "no 'ptimer: ... 5 POSIX timers restored' in ${log:-no restore.log}: $(logtail "$log")"
		fi
		compare "$name" "$CW/$name.before" "$CRI_RPID"
	else
		# a node without the plugin: criu's own image of the timer at pid 1
		if grep -qE 'ptimer(_plugin|: )' "$log" 2>/dev/null; then
			fail "$name/restore" "the plugin ran although it was moved away: $(logtail "$log")"
		else
			pass "$name/restore: a node without the plugin restores the plugin's archive with criu alone"
		fi
		sed 's#^\([0-9]* [0-9]*/[0-9a-f]*\) signal/tid\.1 #\1 signal/pid.1 #' "$CW/$name.before" >"$CW/$name.before.alone"
		compare "$name" "$CW/$name.before.alone" "$CRI_RPID"
		# and the program's own check finds that one timer changed
		touch "$st/restored"
		if ! wait_until 600 test -e "$st/criu.done"; then
			fail "$name/verify" "the restored program wrote no criu.done in 60 s: $(oneline "$st/criu.out")"
		elif [ "$(grep -c '^FAIL ' "$st/criu.result" 2>/dev/null)" = 1 ] &&
			grep -q "^FAIL $P/$name/id100002 notify: notify signal/pid, want signal/tid" "$st/criu.result"; then
			pass "$name/verify: the program's one failing check of $(grep -cE '^(PASS|FAIL) ' "$st/criu.result") is its timer at pid 1, now aimed at the process (id100002 notify: signal/pid, want signal/tid)"
		else
			fail "$name/verify" "want exactly one FAIL (id100002 notify): $(grep '^FAIL ' "$st/criu.result" 2>/dev/null | tr '\n' ';' | cut -c1-300)"
		fi
		cri_gone "$cid2"
		cri_pod_gone "$pod2"
		return
	fi
	drive_collect "$name" "$st"
	cri_gone "$cid2"
	cri_pod_gone "$pod2"
}

# ctr_case: ctr's checkpoint image (task and rw layer) and restore (--live)
# of the same program, in a containerd namespace of its own, with the plugin.
ctr_case() {  # [NAME]
	local name=${1:-ctr} st=$W/${1:-ctr}.state ns=ptimer-ctr ref=localhost/ptimer-ckpt:ctr t0 pid ok= log
	c() { timeout "$TO" ctr --address "$CW/c.sock" --namespace "$ns" "$@"; }
	rm -rf "$st"
	mkdir -p "$st"
	if ! c images pull --plain-http "$CRI_IMAGE" >"$CW/ctr.pull" 2>&1 ||
		! c run -d --null-io --cgroup "/$CG/ctr-ct" --mount "type=bind,src=$st,dst=/state,options=rbind:rw" "$CRI_IMAGE" ctr-ct \
			/zt criu "${SCEN:-container}" /state "$P/$name" >"$CW/ctr.run" 2>&1; then
		fail "$name/run" "ctr images pull | ctr run: $(oneline "$CW/ctr.pull" 200) $(oneline "$CW/ctr.run" 200)"
		return
	fi
	ready "$st" "$name" "$CW/ctr.run" || { c t kill -s KILL ctr-ct; c t rm -f ctr-ct; c c rm ctr-ct; return; } >/dev/null 2>&1
	pid=$(c t ls | awk '$1 == "ctr-ct" { print $2 }')
	timers "$pid" >"$CW/ctr.before"
	t0=$EPOCHREALTIME
	if c c checkpoint --task --rw ctr-ct "$ref" >"$CW/ctr.ckpt" 2>&1; then
		ok=1
		pass "$name/checkpoint ($(secs "$t0") s): ctr containers checkpoint --task --rw: image $ref"
	else
		fail "$name/checkpoint" "ctr containers checkpoint --task --rw: $(oneline "$CW/ctr.ckpt")"
	fi
	{ c t kill -s KILL ctr-ct; sleep 0.5; c t rm -f ctr-ct; c c rm ctr-ct; } >/dev/null 2>&1
	[ -n "$ok" ] || return
	t0=$EPOCHREALTIME
	if ! c c restore --rw --live ctr-ct "$ref" >"$CW/ctr.restore" 2>&1; then
		fail "$name/restore" "ctr containers restore --rw --live: $(oneline "$CW/ctr.restore")"
		{ c t rm -f ctr-ct; c c rm ctr-ct; } >/dev/null 2>&1
		return
	fi
	log=$(find "$CW/state" "$CW/root" -path "*$ns*" -name restore.log 2>/dev/null | head -n1)
	if grep -qE "$CT_PLUGIN_RESTORED" "$log" 2>/dev/null; then
		pass "$name/restore ($(secs "$t0") s): ctr containers restore --rw --live: $(grep -ohE "$CT_PLUGIN_RESTORED" "$log" | head -n1)"
	else
		fail "$name/restore" "no 'ptimer: ... 5 POSIX timers restored' in ${log:-no restore.log under $CW}: $(logtail "$log")"
	fi
	pid=$(c t ls | awk '$1 == "ctr-ct" { print $2 }')
	compare "$name" "$CW/ctr.before" "$pid"
	drive_collect "$name" "$st"
	{ c t kill -s KILL ctr-ct; sleep 0.5; c t rm -f ctr-ct; c c rm ctr-ct; } >/dev/null 2>&1
}

# cri_stub: containerd 1.x: CheckpointContainer is a stub (UNIMPLEMENTED),
# as a kubelet's checkpoint meets it on such a node; ctr can checkpoint.
cri_stub() {
	if cri checkpoint no-such-container "$CW/none.tar" 2>"$CW/unimpl.err" ||
		! grep -q 'CheckpointContainer: UNIMPLEMENTED' "$CW/unimpl.err"; then
		fail cri-checkpoint "containerd $(cat "$CW/version"): want CheckpointContainer UNIMPLEMENTED, got: $(oneline "$CW/unimpl.err")"
	else
		pass "cri-checkpoint: containerd $(cut -d' ' -f2 "$CW/version") answers CRI CheckpointContainer UNIMPLEMENTED (a kubelet checkpoint fails on such a node)"
	fi
}
