# SPDX-License-Identifier: MIT
#
# Kubernetes' checkpoint path without the kubelet, sourced by inner.sh (the
# sid root: containerd 2.x).  The kubelet's checkpoint API (KEP-2008) only
# forwards to the runtime's CRI CheckpointContainer, and a restore is a CRI
# CreateContainer whose image is the checkpoint archive, then StartContainer;
# cri.py makes those gRPC calls on containerd's socket, as the kubelet would.
#
# cri_case: containerd (started here, stopped after) with its CRI plugin and
# runc (io.containerd.runc.v2), a pod on the node's network (no CNI here)
# with a pid namespace per container, as Kubernetes' default.  The container
# runs `zt criu container` (five timers, one SIGEV_THREAD_ID at its pid 1);
# each round checkpoints it to an archive, removes it and restores it:
#   cri-same-pod      plugin; restored into the pod it was checkpointed in
#   cri-new-pod       plugin; the pod removed, restored into a new pod
#   cri-alone         no plugin at checkpoint or restore: the restore must
#                     fail as criu alone does ("Can't create posix timer")
#   cri-no-plugin     checkpoint with the plugin, restore on a node without
#                     it: criu restores the timer at pid 1 aimed at the
#                     process (what criu saves for it), asserted
# ctr_case: ctr's own checkpoint (a checkpoint image) and restore of a
# container with the same program, with the plugin.
# Images: podman imports the container's file system and a pause program
# (the sandbox image) and pushes them to a registry on the loopback
# (cri_registry), from which containerd pulls them.

cri() { timeout "$TO" python3 "$S/cri.py" "$CW/c.sock" "$@"; }
cri_log() { oneline "$CW/containerd.log" 100000 | grep -oE 'level=error msg="[^"]*"' | tail -n 2 | tr '\n' ' ' | cut -c1-400; }

# cri_registry: a registry (Debian's docker-registry) on a free loopback
# port, holding the container's image and the pause image (podman push):
# the node pulls both from it, and a CRI restore pulls the checkpoint's base
# image from it again by digest (containerd 2.1 always does).
cri_registry() {
	local port try
	mkdir -p "$CW/registry" "$CW/pause"
	for try in 1 2 3; do
		port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		printf 'version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' \
			"$CW/registry" "$port" >"$CW/registry.yml"
		docker-registry serve "$CW/registry.yml" >"$CW/registry.log" 2>&1 &
		REG_PID=$!
		# ready: ours answers (another program that took the port
		# meanwhile would answer too, but ours would have exited)
		wait_until 300 python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \
			"http://127.0.0.1:$port/v2/" 2>/dev/null && kill -0 "$REG_PID" 2>/dev/null && break
		kill "$REG_PID" 2>/dev/null
		wait "$REG_PID" 2>/dev/null
		REG_PID=
	done
	if [ -z "$REG_PID" ]; then
		fail cri/registry "docker-registry serve did not answer on 127.0.0.1: $(oneline "$CW/registry.log" 300)"
		return 1
	fi
	CRI_IMAGE=localhost:$port/ptimer-ct:latest
	CRI_PAUSE=localhost:$port/ptimer-pause:latest
	printf '#include <unistd.h>\nint main(void) { for (;;) pause(); }\n' >"$CW/pause.c"
	if gcc -O2 -static -o "$CW/pause/pause" "$CW/pause.c" >"$CW/images.out" 2>&1 &&
		tar -C "$CW/pause" -cf "$CW/pause.tar" . &&
		pm import --change 'ENTRYPOINT ["/pause"]' "$CW/pause.tar" "$CRI_PAUSE" >>"$CW/images.out" 2>&1 &&
		pm push --tls-verify=false "$CRI_PAUSE" >>"$CW/images.out" 2>&1 &&
		pm_image && pm push --tls-verify=false "$IMAGE" "docker://$CRI_IMAGE" >>"$CW/images.out" 2>&1; then
		return 0
	fi
	fail cri/images "podman import | push to the registry: $(tail -n 3 "$CW/images.out" | tr '\n' ' ' | cut -c1-300)"
	return 1
}

# cri_config VERSION CRI_PLUGIN BEFORE INSIDE: containerd's config.toml,
# BEFORE and INSIDE the CRI plugin's table (where the sandbox image is named)
cri_config() {
	cat <<EOF
version = $1
root = "$CW/root"
state = "$CW/state"
[grpc]
  address = "$CW/c.sock"
[ttrpc]
  address = "$CW/c.sock.ttrpc"
$3
[plugins."$2"]
$4
  enable_cdi = false
  # the suite's root lacks CAP_SYS_RESOURCE: no oom_score_adj below its own
  restrict_oom_score_adj = true
[plugins."$2".containerd]
  default_runtime_name = "runc"
[plugins."$2".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
# criu's restore.log outlives a failed restore here
[plugins."$2".containerd.runtimes.runc.options]
  CriuWorkPath = "$CW/criu-work"
EOF
}

# cri_answers SECONDS: containerd answers CRI Version within SECONDS (its
# answer in $CW/version); each try is a cri.py start, ~0.1 s, so the wait
# is counted in seconds, not tries
cri_answers() {
	local until=$((SECONDS + $1))
	while [ "$SECONDS" -lt "$until" ]; do
		kill -0 "$CRI_PID" 2>/dev/null || return 1
		timeout 10 python3 "$S/cri.py" "$CW/c.sock" version >"$CW/version" 2>"$CW/version.err" && return 0
		sleep 0.2
	done
	return 1
}

# cri_start: the registry, and containerd on a socket of its own.
cri_start() {
	CW=$W/cri
	rm -rf "$CW"
	mkdir -p "$CW/logs"
	cri_registry || { cri_stop; return 1; }
	# containerd 2.x reads config version 3, 1.x version 2 (other plugin names)
	CRI_MAJOR=$(containerd --version | awk '{ v = $3; sub(/^v/, "", v); split(v, a, "."); print a[1] }')
	if [ "${CRI_MAJOR:-0}" -ge 2 ]; then
		cri_config 3 io.containerd.cri.v1.runtime "[plugins.\"io.containerd.cri.v1.images\".pinned_images]
  sandbox = \"$CRI_PAUSE\"" ""
	else
		cri_config 2 io.containerd.grpc.v1.cri "" "  sandbox_image = \"$CRI_PAUSE\""
	fi >"$CW/config.toml"
	containerd --config "$CW/config.toml" >"$CW/containerd.log" 2>&1 &
	CRI_PID=$!
	if ! cri_answers 60; then
		fail cri/containerd "containerd --config $CW/config.toml did not answer CRI Version in 60 s: $(oneline "$CW/version.err" 200) $(tail -n 3 "$CW/containerd.log" | tr '\n' ' ' | cut -c1-300)"
		cri_stop
		return 1
	fi
	if ! CRI_REF=$(cri pull "$CRI_IMAGE" 2>"$CW/pull.err"); then
		fail cri/pull "CRI PullImage $CRI_IMAGE: $(oneline "$CW/pull.err")"
		cri_stop
		return 1
	fi
	note "$(cat "$CW/version") (CRI runtime.v1); image $CRI_REF"
	return 0
}

cri_stop() {
	[ -n "${REG_PID:-}" ] && kill "$REG_PID" 2>/dev/null && wait "$REG_PID" 2>/dev/null
	REG_PID=
	[ -n "${CRI_PID:-}" ] || return 0
	kill "$CRI_PID" 2>/dev/null
	wait "$CRI_PID" 2>/dev/null
	CRI_PID=
	# the shims and their containers outlive containerd
	pkill -KILL -f containerd-shim-runc-v2 2>/dev/null
	for m in $(awk -v w="$CW/" 'index($5, w) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
		umount -l "$m" 2>/dev/null
	done
	# the pods' cgroups and any container's left in them (inner.sh)
	cg_sweep
}

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
 "command": ["/zt", "criu", "container", "/state", "$P/$2"],
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
		if grep -qE 'ptimer: task [0-9]+ \(vpid 1\): 5 POSIX timers restored' "$log" 2>/dev/null; then
			pass "$name/restore ($t1 s): CRI CreateContainer from the archive + StartContainer ($([ "$where" = same ] && echo "same pod" || echo "new pod")): $(grep -ohE 'ptimer: task [0-9]+ \(vpid 1\): [0-9]+ POSIX timers restored, [a-zA-Z-]+ mode' "$log" | head -n1)"
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
	collect "$name" "$st"
	cri_gone "$cid2"
	cri_pod_gone "$pod2"
}

# ctr_case: ctr's checkpoint image (task and rw layer) and restore (--live)
# of the same program, in a containerd namespace of its own, with the plugin.
ctr_case() {
	local name=ctr st=$W/ctr.state ns=ptimer-ctr ref=localhost/ptimer-ckpt:ctr t0 pid ok= log
	c() { timeout "$TO" ctr --address "$CW/c.sock" --namespace "$ns" "$@"; }
	rm -rf "$st"
	mkdir -p "$st"
	if ! c images pull --plain-http "$CRI_IMAGE" >"$CW/ctr.pull" 2>&1 ||
		! c run -d --null-io --cgroup "/$CG/ctr-ct" --mount "type=bind,src=$st,dst=/state,options=rbind:rw" "$CRI_IMAGE" ctr-ct \
			/zt criu container /state "$P/$name" >"$CW/ctr.run" 2>&1; then
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
	if grep -qE 'ptimer: task [0-9]+ \(vpid 1\): 5 POSIX timers restored' "$log" 2>/dev/null; then
		pass "$name/restore ($(secs "$t0") s): ctr containers restore --rw --live: $(grep -ohE 'ptimer: task [0-9]+ \(vpid 1\): [0-9]+ POSIX timers restored, [a-zA-Z-]+ mode' "$log" | head -n1)"
	else
		fail "$name/restore" "no 'ptimer: ... 5 POSIX timers restored' in ${log:-no restore.log under $CW}: $(logtail "$log")"
	fi
	pid=$(c t ls | awk '$1 == "ctr-ct" { print $2 }')
	compare "$name" "$CW/ctr.before" "$pid"
	collect "$name" "$st"
	{ c t kill -s KILL ctr-ct; sleep 0.5; c t rm -f ctr-ct; c c rm ctr-ct; } >/dev/null 2>&1
}

cri_case() {
	if ! command -v containerd >/dev/null || ! command -v protoc >/dev/null || ! python3 -c 'import grpc' 2>/dev/null; then
		fail cri "no containerd, protoc or python3-grpcio in this root (roots.d/containers.pkgs)"
		return
	fi
	cri_start || return
	if [ "$CRI_MAJOR" -lt 2 ]; then
		# containerd 1.x: CheckpointContainer is a stub; ctr can
		if cri checkpoint no-such-container "$CW/none.tar" 2>"$CW/unimpl.err" ||
			! grep -q 'CheckpointContainer: UNIMPLEMENTED' "$CW/unimpl.err"; then
			fail cri-checkpoint "containerd $(cat "$CW/version"): want CheckpointContainer UNIMPLEMENTED, got: $(oneline "$CW/unimpl.err")"
		else
			pass "cri-checkpoint: containerd $(cut -d' ' -f2 "$CW/version") answers CRI CheckpointContainer UNIMPLEMENTED (a kubelet checkpoint fails on such a node)"
		fi
		ctr_case
		cri_stop
		return
	fi
	cri_round cri-same-pod same yes yes
	cri_round cri-new-pod new yes yes
	cri_round cri-alone same no no
	cri_round cri-no-plugin new yes no
	ctr_case
	cri_stop
}
