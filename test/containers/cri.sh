# SPDX-License-Identifier: MIT
#
# Kubernetes' checkpoint path without the kubelet, sourced by inner.sh (the
# sid root: containerd 2.x).  The kubelet's checkpoint API (KEP-2008) only
# forwards to the runtime's CRI CheckpointContainer, and a restore is a CRI
# CreateContainer whose image is the checkpoint archive, then StartContainer;
# cri.py makes those gRPC calls on containerd's socket, as the kubelet would.
#
# The node: containerd (started here, stopped after) with its CRI plugin and
# runc (io.containerd.runc.v2), a pod on the node's network (no CNI here)
# with a pid namespace per container, as Kubernetes' default.  The rounds
# are the cri flavours of the case driver (test/lib/flavour-containers.sh):
# the container runs `zt criu container` (five timers, one SIGEV_THREAD_ID
# at its pid 1); each round checkpoints it to an archive, removes it and
# restores it:
#   cri-same-pod      plugin; restored into the pod it was checkpointed in
#   cri-new-pod       plugin; the pod removed, restored into a new pod
#   cri-alone         no plugin at checkpoint or restore: the restore must
#                     fail as criu alone does ("Can't create posix timer")
#   cri-plugin-at-dump (checks named cri-no-plugin)
#                     checkpoint with the plugin, restore on a node without
#                     it: criu restores the timer at pid 1 aimed at the
#                     process (what criu saves for it), asserted
#   ctr               ctr's own checkpoint (a checkpoint image) and restore
#                     of a container with the same program, with the plugin
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

# cri_case: the node (containerd and the registry) up, test/cases/LIST's
# rounds in the flavours it offers (containerd 2.x: the CRI rounds and ctr;
# 1.x: cri-stub, its CheckpointContainer answering UNIMPLEMENTED, and ctr),
# the node down.
cri_case() {
	local w c f fls="cri-same-pod cri-new-pod cri-alone cri-plugin-at-dump ctr"
	if ! command -v containerd >/dev/null || ! command -v protoc >/dev/null || ! python3 -c 'import grpc' 2>/dev/null; then
		fail cri "no containerd, protoc or python3-grpcio in this root (roots.d/containers.pkgs)"
		return
	fi
	cri_start || return
	[ "$CRI_MAJOR" -lt 2 ] && fls="cri-stub ctr"
	for w in $(drive_words $fls); do
		IFS=: read -r _ c f <<<"$w"
		drive "$c" "$f"
	done
	cri_stop
}
