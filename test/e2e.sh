#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/e2e.sh BUILD - ptimer end to end: real processes, real dumps, real
# restores.  Each scenario of test/e2e/zdtm_timers.c is set up in one process,
# dumped with `ptimer dump`, that process is killed (a migration; it also
# gives back its RLIMIT_SIGPENDING share), a fresh process with the same
# thread layout is started, `ptimer restore` recreates the timers in it, and
# that process checks every timer itself (zdtm style).  Then the cases of
# shared/cases/README.md that need their own setting: linear-counter,
# thread-id, invalid-values, an ID already taken, corrupted images.
#
# Output: one PASS/FAIL/SKIP line a check (the verify processes' lines
# included), "# ..." lines for information.  Exit 1 when anything failed.
# Needs root (ptrace, the exact-ID prctl).  No terminal, no stdin needed.

set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/test/lib/harness.sh"
. "$TOP/test/e2e/lib.sh"

# ---- one scenario: setup, dump, kill, verify, restore ------------------------

MIX_IMG_DIR=
run_scenario() {
	local sc=$1 mode=$2 label="$1.$2" dir="$TMP/$1.$2" spid vpid sjob vjob img t0 t1 why rc
	[ "$PIDNS" = 1 ] && label="$label.pidns" dir="$dir.pidns"
	mkdir -p "$dir"
	start_role setup "$sc" "$dir"
	sjob=$ROLE_PID
	if ! wait_ready "$dir" setup "$sjob" 120; then
		wait "$sjob" 2>/dev/null
		rc=$?
		if [ "$rc" -eq 4 ]; then
			skip "$label" "$(oneline "$dir/setup.out")"
		else
			fail "$label/setup" "zdtm_timers setup exited $rc: $(oneline "$dir/setup.out")"
		fi
		return
	fi
	spid=$(cat "$dir/setup.pid")
	snapshot "$spid" "$dir/src"

	t0=$(now)
	ptimer_run "$dir/dump.out" 120 dump -t "$spid" -D "$dir"
	t1=$(now)
	img="$dir/ptimers-$spid.img"
	[ "$PIDNS" = 1 ] && img="$dir/ptimers-1.img"
	if [ "$PT_RC" -ne 0 ] || [ ! -f "$img" ]; then
		fail "$label/dump" "ptimer dump -t $spid -D $dir: exit $PT_RC, image $([ -f "$img" ] && echo present || echo missing): $(oneline "$dir/dump.out.err")"
		reap "$spid" "$sjob"
		return
	fi
	pass "$label/dump"
	info "$label: dump $(elapsed "$t0" "$t1") s: $(oneline "$dir/dump.out")"
	# Dumping must leave the process as it was: running, same maps, same timers.
	untouched "$label/dump-source" "$spid" "$dir/src"

	# The image says what /proc said, and survives show --json | encode.
	mkdir -p "$dir/rt"
	ptimer_run "$dir/rt/show.json" 60 show "$dir" --json
	if [ "$PT_RC" -ne 0 ]; then
		fail "$label/show-json" "ptimer show $dir --json: exit $PT_RC: $(oneline "$dir/rt/show.json.err")"
	else
		local want got
		want=$(ids_of_proc "$dir/src.timers")
		got=$(ids_of_json "$dir/rt/show.json")
		check "$label/show-json-ids" "ids in show --json differ from /proc/$spid/timers: got '$(echo "$got" | cut -c1-120)', want '$(echo "$want" | cut -c1-120)'" \
			[ "$got" = "$want" ]
		ptimer_run "$dir/rt/encode.out" 60 encode -i "$dir/rt/show.json" -o "$dir/rt/re.img"
		if [ "$PT_RC" -ne 0 ]; then
			fail "$label/encode-roundtrip" "ptimer encode -i show.json: exit $PT_RC: $(oneline "$dir/rt/encode.out.err")"
		elif cmp -s "$img" "$dir/rt/re.img"; then
			pass "$label/encode-roundtrip"
		else
			ptimer_run "$dir/rt/show2.json" 60 show "$dir/rt/re.img" --json
			if cmp -s "$dir/rt/show.json" "$dir/rt/show2.json"; then
				pass "$label/encode-roundtrip"
				info "$label: re-encoded image differs in bytes, show --json identical"
			else
				fail "$label/encode-roundtrip" "show --json of the re-encoded image differs: $(diff "$dir/rt/show.json" "$dir/rt/show2.json" | head -4 | tr '\n' ' ')"
			fi
		fi
	fi
	rm -f "$dir/rt/re.img"
	if [ "$label" = mix.auto ]; then
		MIX_IMG_DIR="$TMP/mix-image"
		mkdir -p "$MIX_IMG_DIR"
		cp "$img" "$dir/setup.tids" "$MIX_IMG_DIR/"
	fi

	reap "$spid" "$sjob"

	start_role verify "$sc" "$dir" "$label"
	vjob=$ROLE_PID
	if ! wait_ready "$dir" verify "$vjob" 60; then
		fail "$label/verify-start" "zdtm_timers verify did not get ready: $(oneline "$dir/verify.out")"
		reap "$vjob"
		return
	fi
	vpid=$(cat "$dir/verify.pid")
	tid_map_args "$dir"
	# In their own namespaces both processes have tids 1, 2...: the image's
	# tids are the target's without a map (cases/README.md pidns-leader-tid).
	[ "$PIDNS" = 1 ] && TIDMAP=()
	local modeargs=()
	[ "$mode" = auto ] || modeargs=(--mode "$mode")
	t0=$(now)
	ptimer_run "$dir/restore.out" 300 restore -t "$vpid" -D "$dir" "${TIDMAP[@]}" "${modeargs[@]}"
	t1=$(now)
	if [ "$PT_RC" -ne 0 ]; then
		fail "$label/restore" "ptimer restore -t $vpid -D $dir ${TIDMAP[*]} ${modeargs[*]}: exit $PT_RC: $(oneline "$dir/restore.out.err")"
		reap "$vpid" "$vjob"
		return
	fi
	pass "$label/restore"
	info "$label: restore $(elapsed "$t0" "$t1") s: $(oneline "$dir/restore.out")"
	if why=$(not_stopped "$vpid"); then pass "$label/target-not-stopped"; else fail "$label/target-not-stopped" "$why"; fi
	if [ "$label" = sparse.linear ]; then
		# sparse-million: the cost is said up front, progress shown meanwhile
		check "$label/announces-pairs" "the first line on stderr does not give the number of create/delete pairs: $(head -1 "$dir/restore.out.err" | cut -c1-200)" \
			bash -c 'head -1 "$1" | grep -q "pairs"' _ "$dir/restore.out.err"
		# A progress line comes every 3 s off a terminal (core/restore.c):
		# a restore quicker than that has none to show.
		if awk -v d="$(elapsed "$t0" "$t1")" 'BEGIN { exit !(d < 4) }'; then
			skip "$label/shows-progress" "the restore took $(elapsed "$t0" "$t1") s, under the 3 s progress interval"
		else
			check "$label/shows-progress" "no progress line (NN%) on stderr: $(oneline "$dir/restore.out.err")" \
				grep -q '[0-9]%' "$dir/restore.out.err"
		fi
	fi
	finish_verify "$dir" "$vjob"
}

# ---- cases/README.md --------------------------------------------------------

# The linear-counter image: IDs 0, 3, 9 of process 4242, the same timers as
# zdtm_timers' offset-target scenario (SIGRTMIN is 34 with glibc).
write_lc_json() {
	cat >"$1" <<'EOF'
{"version":1,"pid":4242,"timers":[
 {"id":0,"clock_id":1,"sigev_notify":1,"signo":0,"sival":0,"notify_tid":4242,
  "it_value":{"sec":1000,"nsec":0},"it_interval":{"sec":0,"nsec":0},"overrun":0},
 {"id":3,"clock_id":0,"sigev_notify":0,"signo":37,"sival":51,"notify_tid":4242,
  "it_value":{"sec":1000,"nsec":0},"it_interval":{"sec":0,"nsec":0},"overrun":0},
 {"id":9,"clock_id":1,"sigev_notify":0,"signo":43,"sival":153,"notify_tid":4242,
  "it_value":{"sec":0,"nsec":100000000},"it_interval":{"sec":0,"nsec":100000000},"overrun":0}
]}
EOF
}

LC_IMG=
make_lc_image() {
	local dir="$TMP/lc-image"
	mkdir -p "$dir"
	write_lc_json "$dir/lc.json"
	ptimer_run "$dir/encode.out" 30 encode -i "$dir/lc.json" -o "$dir/ptimers-4242.img"
	if [ "$PT_RC" -ne 0 ]; then
		fail "linear-counter/encode" "ptimer encode -i $dir/lc.json: exit $PT_RC: $(oneline "$dir/encode.out.err")"
		return 1
	fi
	pass "linear-counter/encode"
	LC_IMG="$dir/ptimers-4242.img"
}

# refused NAME: ptimer exited non-zero with exactly one line on stderr.
refused() {
	local name=$1 out=$2 n
	n=$(grep -c . "$out.err")
	if [ "$PT_RC" -eq 0 ]; then
		fail "$name-refused" "ptimer exited 0 (stdout: $(oneline "$out"))"
		return 1
	fi
	if [ "$PT_RC" -ge 124 ]; then
		fail "$name-refused" "ptimer exit $PT_RC (timeout or signal): $(oneline "$out.err")"
		return 1
	fi
	pass "$name-refused"
	info "$name: exit $PT_RC: $(oneline "$out.err")"
	check "$name-one-line-error" "$n lines on stderr, want 1: $(oneline "$out.err")" [ "$n" -eq 1 ]
	return 0
}

# names FILE WORD...: every WORD appears as a word in FILE.
names() {
	local f=$1 w
	shift
	for w; do grep -qw -- "$w" "$f" || return 1; done
}

# A target with its counter at 5; linear mode cannot reach 0 and 3.
case_linear_counter() {
	local dir="$TMP/linear-counter" vpid name=linear-counter/linear
	mkdir -p "$dir"
	cp "$LC_IMG" "$dir/"
	start_role verify offset-empty "$dir" "$name"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$name/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	snapshot "$vpid" "$dir/before"
	ptimer_run "$dir/restore.out" 120 restore -t "$vpid" -D "$dir" --mode linear
	if refused "$name" "$dir/restore.out"; then
		check "$name-names-unreachable-ids" "stderr does not name both unreachable ids 0 and 3: $(oneline "$dir/restore.out.err")" \
			names "$dir/restore.out.err" 0 3
	fi
	check "$name-no-timers-left" "/proc/$vpid/timers holds: $(ids_of_proc /proc/"$vpid"/timers)" \
		[ ! -s "/proc/$vpid/timers" ]
	untouched "$name-target" "$vpid" "$dir/before"
	finish_verify "$dir" "$vpid"
}

# A refused linear restore leaves no timer behind, and moves the counter by
# exactly one: before Linux 6.15 the only way to read the counter is to create
# one timer (the probe; README "Linear mode").  Counter at 5, refused restore
# of 0,3,9 -> counter at 6: an image with IDs 6 and 9 still restores, and
# one with ID 5 is refused as passed.
case_linear_retry() {
	local dir="$TMP/linear-retry" vpid name=linear-counter/retry ids
	mkdir -p "$dir/first" "$dir/second"
	cp "$LC_IMG" "$dir/first/"
	cat >"$dir/second.json" <<'EOF'
{"version":1,"pid":4242,"timers":[
 {"id":6,"clock_id":1,"sigev_notify":1,"signo":0,"sival":0,"notify_tid":4242,
  "it_value":{"sec":1000,"nsec":0},"it_interval":{"sec":0,"nsec":0},"overrun":0},
 {"id":9,"clock_id":1,"sigev_notify":1,"signo":0,"sival":0,"notify_tid":4242,
  "it_value":{"sec":1000,"nsec":0},"it_interval":{"sec":0,"nsec":0},"overrun":0}
]}
EOF
	ptimer_run "$dir/encode.out" 30 encode -i "$dir/second.json" -o "$dir/second/ptimers-4242.img"
	if [ "$PT_RC" -ne 0 ]; then
		fail "$name/encode" "ptimer encode -i $dir/second.json: exit $PT_RC: $(oneline "$dir/encode.out.err")"
		return
	fi
	start_role verify offset-empty "$dir" "$name"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$name/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	ptimer_run "$dir/first.out" 120 restore -t "$vpid" -D "$dir/first" --mode linear
	refused "$name/first" "$dir/first.out"
	ptimer_run "$dir/second.out" 120 restore -t "$vpid" -D "$dir/second" --mode linear
	ids=$(ids_of_proc "/proc/$vpid/timers")
	check "$name/ids-6-9-after-a-refusal" "counter at 5, refused restore of 0,3,9 (probe takes 5), then linear restore of 6,9: exit $PT_RC, ids '$ids': $(oneline "$dir/second.out.err")" \
		[ "$PT_RC" -eq 0 -a "$ids" = "6 9 " ]
	reap "$vpid"
}

# The same image and counter in auto (exact) mode: all three come back.
case_exact_offset() {
	local dir="$TMP/exact-offset" vpid name=linear-counter/auto ids
	mkdir -p "$dir"
	cp "$LC_IMG" "$dir/"
	start_role verify offset-target "$dir" "$name"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$name/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	ptimer_run "$dir/restore.out" 120 restore -t "$vpid" -D "$dir"
	if [ "$PT_RC" -ne 0 ]; then
		fail "$name/restore" "ptimer restore -t $vpid -D $dir: exit $PT_RC: $(oneline "$dir/restore.out.err")"
	else
		pass "$name/restore"
		ids=$(ids_of_proc "/proc/$vpid/timers")
		check "$name/ids-0-3-9" "/proc/$vpid/timers has ids '$ids'" [ "$ids" = "0 3 9 " ]
	fi
	finish_verify "$dir" "$vpid"
}

# The target already holds ID 3: refused in either mode, target unchanged.
case_taken_id() {
	local mode=$1 dir="$TMP/taken-id.$1" vpid name="taken-id/$1" modeargs=()
	mkdir -p "$dir"
	cp "$LC_IMG" "$dir/"
	[ "$mode" = auto ] || modeargs=(--mode "$mode")
	start_role verify holder "$dir" "$name"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$name/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	snapshot "$vpid" "$dir/before"
	ptimer_run "$dir/restore.out" 120 restore -t "$vpid" -D "$dir" "${modeargs[@]}"
	if refused "$name" "$dir/restore.out"; then
		check "$name-names-id-3" "stderr does not name id 3: $(oneline "$dir/restore.out.err")" \
			names "$dir/restore.out.err" 3
	fi
	untouched "$name-target" "$vpid" "$dir/before"
	finish_verify "$dir" "$vpid"
}

# The mix image aims a timer at the setup's second thread: without --tid-map
# (or mapped to a thread the target lacks) restore must refuse and say which.
case_thread_id() {
	local dir="$TMP/thread-id" vpid name=thread-id s2 v2
	if [ -z "$MIX_IMG_DIR" ]; then
		fail "$name" "no mix image (mix.auto dump failed)"
		return
	fi
	mkdir -p "$dir"
	cp "$MIX_IMG_DIR"/ptimers-*.img "$dir/"
	s2=$(sed -n 2p "$MIX_IMG_DIR/setup.tids")
	start_role verify empty2 "$dir" "$name"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$name/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	v2=$(sed -n 2p "$dir/verify.tids")
	snapshot "$vpid" "$dir/before"
	ptimer_run "$dir/restore.out" 60 restore -t "$vpid" -D "$dir"
	if refused "$name/no-map" "$dir/restore.out"; then
		check "$name/no-map-names-tid" "stderr does not name the missing tid $s2: $(oneline "$dir/restore.out.err")" \
			names "$dir/restore.out.err" "$s2"
	fi
	untouched "$name/no-map-target" "$vpid" "$dir/before"
	# a map to a tid that is no thread of the target
	ptimer_run "$dir/restore2.out" 60 restore -t "$vpid" -D "$dir" --tid-map "$s2=$((v2 + 100000))"
	if refused "$name/bad-map" "$dir/restore2.out"; then
		check "$name/bad-map-names-tid" "stderr names neither $s2 nor $((v2 + 100000)): $(oneline "$dir/restore2.out.err")" \
			bash -c 'grep -qw -- "$1" "$3" || grep -qw -- "$2" "$3"' _ "$s2" "$((v2 + 100000))" "$dir/restore2.out.err"
	fi
	untouched "$name/bad-map-target" "$vpid" "$dir/before"
	finish_verify "$dir" "$vpid"
}

# encode refuses out-of-range values, naming the field and the timer.
case_invalid_values() {
	local dir="$TMP/invalid-values" name v
	mkdir -p "$dir"
	# one timer, id 777; each variant breaks one field
	json() { # clock notify signo tid vsec vnsec isec insec [extra timer]
		printf '{"version":1,"pid":4242,"timers":[{"id":777,"clock_id":%s,"sigev_notify":%s,"signo":%s,"sival":5,"notify_tid":%s,"it_value":{"sec":%s,"nsec":%s},"it_interval":{"sec":%s,"nsec":%s},"overrun":0}%s]}\n' "$@"
	}
	json 1 0 40 4242 100 0 0 0 "" >"$dir/ok.json"
	ptimer_run "$dir/ok.out" 30 encode -i "$dir/ok.json" -o "$dir/ok.img"
	check "invalid-values/control-encodes" "a valid JSON was refused: exit $PT_RC: $(oneline "$dir/ok.out.err")" [ "$PT_RC" -eq 0 ]

	json 1 0 40 4242 100 1500000000 0 0 "" >"$dir/nsec.json"
	json 1 0 40 4242 -5 0 0 0 "" >"$dir/negsec.json"
	json 12 0 40 4242 100 0 0 0 "" >"$dir/clock12.json"
	json 1 0 40 4242 100 0 0 1000000000 "" >"$dir/intnsec.json"
	json 1 0 40 4242 100 0 -1 0 "" >"$dir/intnegsec.json"
	json 1 0 0 4242 100 0 0 0 "" >"$dir/signo0.json"
	json 1 0 65 4242 100 0 0 0 "" >"$dir/signo65.json"
	json 1 4 40 0 100 0 0 0 "" >"$dir/tid0.json"
	json 1 7 40 4242 100 0 0 0 "" >"$dir/notify7.json"
	json 1 0 40 4242 100 0 0 0 ',{"id":777,"clock_id":1,"sigev_notify":1,"signo":0,"sival":0,"notify_tid":4242,"it_value":{"sec":1,"nsec":0},"it_interval":{"sec":0,"nsec":0},"overrun":0}' >"$dir/dupid.json"
	for v in "nsec:it_value:nsec" "negsec:it_value:sec" "clock12:clock" "intnsec:it_interval:nsec" \
		"intnegsec:it_interval:sec" "signo0:signo" "signo65:signo" "tid0:notify_tid" \
		"notify7:sigev_notify" "dupid:id"; do
		local f=${v%%:*} words=${v#*:}
		name="invalid-values/$f"
		ptimer_run "$dir/$f.out" 30 encode -i "$dir/$f.json" -o "$dir/$f.img"
		if refused "$name" "$dir/$f.out"; then
			# the field (each word, e.g. it_value and nsec) and the timer (777)
			check "$name-names-field-and-timer" "stderr lacks '${words//:/ }' or 777: $(oneline "$dir/$f.out.err")" \
				bash -c 'f=$1; shift; for w; do grep -q -- "$w" "$f" || exit 1; done' _ "$dir/$f.out.err" ${words//:/ } 777
		fi
		check "$name-no-image-left" "$f.img was written" [ ! -e "$dir/$f.img" ]
	done
}

# A hand-corrupted image is refused before the target is touched.
case_corrupt_images() {
	local dir="$TMP/corrupt" vpid name img src size b
	if [ -z "$MIX_IMG_DIR" ]; then
		fail "corrupt-image" "no mix image (mix.auto dump failed)"
		return
	fi
	mkdir -p "$dir"
	src=$(ls "$MIX_IMG_DIR"/ptimers-*.img)
	img=$(basename "$src")
	size=$(stat -c %s "$src")
	start_role verify empty2 "$dir" corrupt-image
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "corrupt-image/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	snapshot "$vpid" "$dir/before"
	local s2 v2
	s2=$(sed -n 2p "$MIX_IMG_DIR/setup.tids")
	v2=$(sed -n 2p "$dir/verify.tids")
	for v in bad-magic truncated trailing-bytes huge-entry short-entry empty-file; do
		mkdir -p "$dir/$v"
		cp "$src" "$dir/$v/$img"
		case $v in
		bad-magic) printf '\x00' | dd of="$dir/$v/$img" bs=1 seek=0 conv=notrunc status=none ;;
		truncated) truncate -s $((size - 7)) "$dir/$v/$img" ;;
		trailing-bytes) printf 'garbage!' >>"$dir/$v/$img" ;;
		huge-entry) printf '\xff\xff\xff\x7f' | dd of="$dir/$v/$img" bs=1 seek=4 conv=notrunc status=none ;;
		short-entry)
			# the head entry's length one less: the protobuf is cut short
			b=$(od -An -tu1 -j4 -N1 "$src" | tr -d ' ')
			printf "\\x$(printf %02x $((b - 1)))" | dd of="$dir/$v/$img" bs=1 seek=4 conv=notrunc status=none ;;
		empty-file) : >"$dir/$v/$img" ;;
		esac
		name="corrupt-image/$v"
		ptimer_run "$dir/$v.out" 60 restore -t "$vpid" -D "$dir/$v" --tid-map "$s2=$v2"
		refused "$name" "$dir/$v.out"
		untouched "$name-target" "$vpid" "$dir/before"
	done
	finish_verify "$dir" "$vpid"
}

# ---- main ----------------------------------------------------------------------

info "ptimer e2e: $PT, kernel $(uname -r)"
"$PT" check 2>&1 | sed 's/^/# check: /'

# rseq time-slice extension on this kernel: dump a 2-thread process, check the
# "threads" of show --json against what each thread reports itself, then an
# image edited to say "enabled": require refuses before touching the target,
# auto warns naming each thread, off is silent.  (The enabled path itself:
# test/unit/test_rseq.c, simulated kernel; no kernel here can grant one.)
case_rseq_slice() {
	local n=rseq-slice d=$TMP/rseq-slice pid i tid ptr want got
	mkdir -p "$d/en"
	if ! command -v python3 >/dev/null; then
		skip "$n" "python3 needed to read the JSON"
		return
	fi
	"$B/test/rseq_threads" >"$d/out" 2>&1 &
	pid=$!
	BG+=("$pid")
	for i in $(seq 50); do grep -q '^ready\|^SKIP' "$d/out" && break; sleep 0.1; done
	if grep -q '^SKIP' "$d/out"; then
		skip "$n" "$(grep '^SKIP' "$d/out")"
		reap "$pid"
		return
	fi
	if ! "$PT" dump -t "$pid" -D "$d" >"$d/dump.log" 2>&1; then
		fail "$n/dump" "$(oneline "$d/dump.log")"
		reap "$pid"
		return
	fi
	"$PT" show --json "$d" >"$d/img.json"
	want=
	while read -r _ tid _ ptr _; do
		want+="$tid $((ptr));"
	done < <(grep '^thread' "$d/out")
	got=$(python3 -c 'import json,sys
for t in json.load(open(sys.argv[1]))["threads"]:
    print("%d %d;" % (t["tid"], t["rseq"]["abi_pointer"]), end="")' "$d/img.json")
	check "$n/threads-tids-and-rseq-pointers" "want '$want', image has '$got'" [ "$want" = "$got" ]
	got=$(python3 -c 'import json,sys
print(" ".join(sorted(set(t["slice_ext"] for t in json.load(open(sys.argv[1]))["threads"]))))' "$d/img.json")
	check "$n/slice-ext-unavailable-on-$(uname -r)" "slice_ext: $got" [ "$got" = unavailable ]
	tid=$(awk '/^thread/ { t = $2 } END { print t }' "$d/out")

	sed 's/"unavailable"/"enabled"/' "$d/img.json" >"$d/en.json"
	if ! "$PT" encode -i "$d/en.json" -o "$d/en/ptimers-$pid.img" >"$d/enc.log" 2>&1; then
		fail "$n/encode-enabled" "$(oneline "$d/enc.log")"
		reap "$pid"
		return
	fi
	snapshot "$pid" "$d/snap"
	if "$PT" restore -t "$pid" -D "$d/en" --rseq-slice=require >"$d/req.log" 2>&1; then
		fail "$n/require-refused" "restore succeeded: $(oneline "$d/req.log")"
	else
		check "$n/require-refused" "message: $(oneline "$d/req.log")" \
			grep -q "thread $pid (tid $pid in the image).*EINVAL.*nothing restored" "$d/req.log"
	fi
	untouched "$n/require" "$pid" "$d/snap"
	if "$PT" restore -t "$pid" -D "$d/en" >"$d/auto.log" 2>&1; then
		check "$n/auto-warns-naming-each-thread" "output: $(oneline "$d/auto.log")" \
			grep -q "warning: .*thread $tid (tid $tid in the image).*EINVAL" "$d/auto.log"
	else
		fail "$n/auto-succeeds" "$(oneline "$d/auto.log")"
	fi
	if "$PT" restore -t "$pid" -D "$d/en" --rseq-slice off >"$d/off.log" 2>&1; then
		check "$n/off-silent" "output: $(oneline "$d/off.log")" \
			[ "$(grep -vc '^restored ' "$d/off.log")" = 0 ]
	else
		fail "$n/off-succeeds" "$(oneline "$d/off.log")"
	fi
	reap "$pid"
}

# ---- interrupted and contended runs, full disks, permissions (issue 6) ---------

# The sparse image (IDs 1,000,000 and 2,000,000, pid 4242) from JSON: a
# linear restore of it takes seconds (2 million create/delete pairs).
make_sparse_image() {
	local dir=$1
	mkdir -p "$dir"
	cat >"$dir/sparse.json" <<'JSON'
{"version":1,"pid":4242,"timers":[
 {"id":1000000,"clock_id":1,"sigev_notify":1,"signo":0,"sival":0,"notify_tid":4242,
  "it_value":{"sec":1000,"nsec":0},"it_interval":{"sec":0,"nsec":0},"overrun":0},
 {"id":2000000,"clock_id":0,"sigev_notify":1,"signo":0,"sival":0,"notify_tid":4242,
  "it_value":{"sec":2000,"nsec":0},"it_interval":{"sec":5,"nsec":0},"overrun":0}
]}
JSON
	"$PT" encode -i "$dir/sparse.json" -o "$dir/ptimers-4242.img" >"$dir/encode.log" 2>&1
}

sigblk() { awk '/^SigBlk:/ { print $2 }' "/proc/$1/status"; }

# wait_pid_max PID SECONDS: wait for a background job at most SECONDS; its
# status in WAIT_RC (999: still running after SECONDS, then killed).
wait_pid_max() {
	local p=$1 i n=$(($2 * 100))
	for ((i = 0; i < n; i++)); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.01
	done
	if kill -0 "$p" 2>/dev/null; then
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		WAIT_RC=999
		return
	fi
	wait "$p" 2>/dev/null
	WAIT_RC=$?
}

# SIG (TERM or INT) to a linear restore after ~1 s: it rolls back between
# chunks and exits non-zero; the target is as before, running.
case_interrupt_restore() {
	local sig=$1 n="interrupt/$1" dir="$TMP/interrupt.$1" vpid ppid blk
	make_sparse_image "$dir" || { fail "$n/encode" "$(oneline "$dir/encode.log")"; return; }
	start_role verify empty "$dir" "$n"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$n/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	snapshot "$vpid" "$dir/before"
	blk=$(sigblk "$vpid")
	# a background job of a script ignores SIGINT: give ptimer the default back
	env --default-signal="$sig" "$PT" restore -t "$vpid" -D "$dir" --mode linear >"$dir/r.out" 2>"$dir/r.out.err" </dev/null &
	ppid=$!
	sleep 1
	kill -"$sig" "$ppid"
	wait_pid_max "$ppid" 20
	check "$n/ptimer-exits-non-zero" "exit $WAIT_RC (999: still running 20 s after SIG$sig): $(oneline "$dir/r.out.err")" \
		[ "$WAIT_RC" -ne 0 -a "$WAIT_RC" -ne 999 ]
	info "$n: exit $WAIT_RC: $(oneline "$dir/r.out.err")"
	check "$n/says-interrupted" "stderr does not say it was interrupted and restored nothing: $(oneline "$dir/r.out.err")" \
		grep -q 'interrupted by signal.*restored nothing' "$dir/r.out.err"
	if alive "$vpid"; then pass "$n/target-alive"; else fail "$n/target-alive" "process $vpid is gone"; return; fi
	untouched "$n/target" "$vpid" "$dir/before"
	check "$n/no-timers" "/proc/$vpid/timers holds: $(ids_of_proc /proc/"$vpid"/timers)" [ ! -s "/proc/$vpid/timers" ]
	check "$n/sigblk-unchanged" "SigBlk $blk before, $(sigblk "$vpid") after" [ "$(sigblk "$vpid")" = "$blk" ]
	finish_verify "$dir" "$vpid"
}

# The multi-threaded target is killed mid-restore: ptimer says so in one
# line within seconds, no hang.
case_target_killed() {
	local n=interrupt/target-killed dir="$TMP/target-killed" vpid ppid lines
	make_sparse_image "$dir" || { fail "$n/encode" "$(oneline "$dir/encode.log")"; return; }
	start_role verify empty2 "$dir" "$n"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$n/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	"$PT" restore -t "$vpid" -D "$dir" --mode linear >"$dir/r.out" 2>"$dir/r.out.err" </dev/null &
	ppid=$!
	sleep 1
	{
		kill -KILL "$vpid"
		wait_pid_max "$ppid" 10
		wait "$vpid"
	} 2>/dev/null
	check "$n/ptimer-exits-non-zero-in-time" "exit $WAIT_RC (999: still running 10 s after the target died): $(oneline "$dir/r.out.err")" \
		[ "$WAIT_RC" -ne 0 -a "$WAIT_RC" -ne 999 ]
	info "$n: exit $WAIT_RC: $(oneline "$dir/r.out.err")"
	# the linear announcement ("ptimer: info: ...") comes first; then one error
	lines=$(grep -vc '^ptimer: info: ' "$dir/r.out.err")
	check "$n/one-line-error" "$lines lines besides the info line on stderr: $(oneline "$dir/r.out.err")" [ "$lines" -eq 1 ]
	check "$n/names-exit" "stderr does not say process $vpid exited: $(oneline "$dir/r.out.err")" \
		grep -q "process $vpid exited" "$dir/r.out.err"
}

# Two ptimers on one target: the second is refused (already traced), the
# first finishes.
case_two_ptimers() {
	local n=contended dir="$TMP/contended" vpid ppid ids
	make_sparse_image "$dir" || { fail "$n/encode" "$(oneline "$dir/encode.log")"; return; }
	mkdir -p "$dir/second"
	start_role verify empty "$dir" "$n"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$n/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	"$PT" restore -t "$vpid" -D "$dir" --mode linear >"$dir/r.out" 2>"$dir/r.out.err" </dev/null &
	ppid=$!
	sleep 0.5
	ptimer_run "$dir/second.out" 30 dump -t "$vpid" -D "$dir/second"
	if refused "$n/second" "$dir/second.out"; then
		check "$n/second-says-already-traced" "stderr: $(oneline "$dir/second.out.err")" \
			grep -q "already traced by process $ppid" "$dir/second.out.err"
	fi
	check "$n/second-wrote-nothing" "$(ls -A "$dir/second")" [ -z "$(ls -A "$dir/second")" ]
	wait_pid_max "$ppid" 120
	ids=$(ids_of_proc "/proc/$vpid/timers")
	check "$n/first-succeeds" "exit $WAIT_RC, ids '$ids': $(oneline "$dir/r.out.err")" \
		[ "$WAIT_RC" -eq 0 -a "$ids" = "1000000 2000000 " ]
	reap "$vpid"
}

# Dump into a full file system and into a read-only one: one line naming
# the file and the reason, nothing left behind, the process running.
case_dump_no_space() {
	local n=dump-full dir="$TMP/dump-full" spid sjob
	mkdir -p "$dir/small" "$dir/ro"
	if ! mount -t tmpfs -o size=8k ptimer-e2e "$dir/small" 2>"$dir/mount.err"; then
		skip "$n" "cannot mount a tmpfs: $(oneline "$dir/mount.err")"
		return
	fi
	mount -t tmpfs -o ro,size=8k ptimer-e2e "$dir/ro" 2>/dev/null
	start_role setup dense "$dir"
	sjob=$ROLE_PID
	if ! wait_ready "$dir" setup "$sjob" 120; then
		fail "$n/setup" "zdtm_timers setup dense: $(oneline "$dir/setup.out")"
		umount "$dir/small" "$dir/ro" 2>/dev/null
		return
	fi
	spid=$(cat "$dir/setup.pid")
	snapshot "$spid" "$dir/src"
	ptimer_run "$dir/full.out" 60 dump -t "$spid" -D "$dir/small"
	if refused "$n/enospc" "$dir/full.out"; then
		check "$n/enospc-names-file-and-reason" "stderr: $(oneline "$dir/full.out.err")" \
			grep -q "$dir/small/ptimers-$spid.img.*No space left" "$dir/full.out.err"
	fi
	check "$n/enospc-nothing-left" "left in $dir/small: $(ls -A "$dir/small" | tr '\n' ' ')" [ -z "$(ls -A "$dir/small")" ]
	untouched "$n/enospc-source" "$spid" "$dir/src"
	if mountpoint -q "$dir/ro"; then
		ptimer_run "$dir/ro.out" 60 dump -t "$spid" -D "$dir/ro"
		if refused "$n/read-only" "$dir/ro.out"; then
			check "$n/read-only-names-dir-and-reason" "stderr: $(oneline "$dir/ro.out.err")" \
				grep -q "$dir/ro.*Read-only file system" "$dir/ro.out.err"
		fi
		check "$n/read-only-nothing-left" "left in $dir/ro: $(ls -A "$dir/ro" | tr '\n' ' ')" [ -z "$(ls -A "$dir/ro")" ]
		untouched "$n/read-only-source" "$spid" "$dir/src"
	else
		skip "$n/read-only" "cannot mount a read-only tmpfs"
	fi
	reap "$spid" "$sjob"
	umount "$dir/small" "$dir/ro" 2>/dev/null
}

# An unprivileged ptimer: another user's process is refused naming
# CAP_SYS_PTRACE; its own process dumps.
case_unprivileged() {
	local n=unprivileged dir="$TMP/unpriv" own="$TMP/unpriv-own" vpid opid ojob as
	if ! command -v setpriv >/dev/null || ! setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
		skip "$n" "setpriv (util-linux) cannot drop to uid 65534 here"
		return
	fi
	as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	chmod 711 "$TMP"
	mkdir -p "$dir/img" "$own"
	chmod 777 "$dir/img" "$own"
	start_role verify empty "$dir" "$n"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$n/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	snapshot "$vpid" "$dir/before"
	timeout -k 5 30 "${as[@]}" "$PT" dump -t "$vpid" -D "$dir/img" >"$dir/d.out" 2>"$dir/d.out.err" </dev/null
	PT_RC=$?
	if refused "$n/root-target" "$dir/d.out"; then
		check "$n/root-target-names-CAP_SYS_PTRACE" "stderr: $(oneline "$dir/d.out.err")" \
			grep -q "CAP_SYS_PTRACE" "$dir/d.out.err"
	fi
	untouched "$n/root-target" "$vpid" "$dir/before"
	reap "$vpid"
	"${as[@]}" "$ZT" setup threads "$own" >"$own/setup.out" 2>&1 </dev/null &
	ojob=$!
	BG+=("$ojob")
	if ! wait_ready "$own" setup "$ojob" 60; then
		fail "$n/own-target" "zdtm_timers setup threads as uid 65534: $(oneline "$own/setup.out")"
		return
	fi
	opid=$(cat "$own/setup.pid")
	timeout -k 5 30 "${as[@]}" "$PT" dump -t "$opid" -D "$own" >"$own/d.out" 2>"$own/d.out.err" </dev/null
	PT_RC=$?
	check "$n/own-target-dumps" "exit $PT_RC, image $([ -f "$own/ptimers-$opid.img" ] && echo present || echo missing): $(oneline "$own/d.out.err")" \
		[ "$PT_RC" -eq 0 -a -f "$own/ptimers-$opid.img" ]
	# without CAP_NET_ADMIN there is no proc connector watch: said, not fatal
	info "$n: own target: $(oneline "$own/d.out.err")"
	reap "$opid" "$ojob"
}

# A timer on another process's CPU clock: dump refuses, naming that pid.
case_other_cpuclock() {
	local n=other-cpuclock dir="$TMP/other-cpuclock" p c job
	mkdir -p "$dir/img"
	"$B/test/other_cpuclock" "$dir" >"$dir/out" 2>&1 </dev/null &
	job=$!
	BG+=("$job")
	wait_ready "$dir" other "$job" 30 || { fail "$n/target" "other_cpuclock did not start: $(oneline "$dir/out")"; return; }
	read -r p c <"$dir/other.pid"
	ptimer_run "$dir/d.out" 30 dump -t "$p" -D "$dir/img"
	if refused "$n" "$dir/d.out"; then
		check "$n/names-pid" "stderr does not name pid $c: $(oneline "$dir/d.out.err")" names "$dir/d.out.err" "$c"
	fi
	check "$n/no-image" "$(ls -A "$dir/img")" [ -z "$(ls -A "$dir/img")" ]
	local why
	if why=$(not_stopped "$p"); then pass "$n/not-stopped"; else fail "$n/not-stopped" "$why"; fi
	reap "$p" "$job"
}

# race_dumps NAME PROGRAM TAG WHAT IMAGE_OK REFUSAL_RE [MIN_OK]: 20 dumps of a
# process (test/e2e/PROGRAM, ready as TAG) that changes under ptimer's feet.
# Each dump either writes an image that IMAGE_OK (a function: PID JSON-FILE
# IDS) accepts, or fails in one line (matching REFUSAL_RE when it is not
# empty) leaving no file; never a silent stale image.  At least MIN_OK
# (default 0) of the 20 must write an image.  The target stays alive and
# not stopped.
race_dumps() {
	local n=$1 prog=$2 tag=$3 what=$4 image_ok=$5 refusal=$6 min_ok=${7:-0}
	local dir="$TMP/$n" p job i ok=0 refusedn=0 bad=0 why ids
	mkdir -p "$dir/img"
	"$B/test/$prog" "$dir" >"$dir/out" 2>&1 </dev/null &
	job=$!
	BG+=("$job")
	wait_ready "$dir" "$tag" "$job" 30 || { fail "$n/target" "$prog did not start: $(oneline "$dir/out")"; return; }
	p=$(cat "$dir/$tag.pid")
	for ((i = 0; i < 20; i++)); do
		rm -f "$dir/img"/*
		ptimer_run "$dir/d.out" 30 dump -t "$p" -D "$dir/img"
		if [ "$PT_RC" -eq 0 ]; then
			ptimer_run "$dir/show.json" 30 show "$dir/img" --json
			ids=$(ids_of_json "$dir/show.json")
			if [ "$PT_RC" -eq 0 ] && "$image_ok" "$p" "$dir/show.json" "$ids"; then
				ok=$((ok + 1))
			else
				bad=$((bad + 1))
				why="dump $i succeeded but the image has ids '$ids': $(oneline "$dir/show.json" | cut -c1-200)"
			fi
		elif [ "$PT_RC" -lt 124 ] && [ "$(grep -vc '^ptimer: warning' "$dir/d.out.err")" -eq 1 ] &&
			{ [ -z "$refusal" ] || grep -qE "$refusal" "$dir/d.out.err"; } &&
			[ -z "$(ls -A "$dir/img")" ]; then
			refusedn=$((refusedn + 1))
		else
			bad=$((bad + 1))
			why="dump $i: exit $PT_RC, left '$(ls -A "$dir/img" | tr '\n' ' ')': $(oneline "$dir/d.out.err")"
		fi
	done
	info "$n: 20 dumps of a process $what: $ok consistent images, $refusedn refused"
	check "$n/consistent-or-refused" "$bad of 20 neither: last: ${why:-}" [ "$bad" -eq 0 ]
	[ "$min_ok" -gt 0 ] && check "$n/images-written" \
		"$ok of 20 dumps wrote an image, want $min_ok; last refusal: $(oneline "$dir/d.out.err")" \
		[ "$ok" -ge "$min_ok" ]
	if why=$(not_stopped "$p"); then pass "$n/not-stopped"; else fail "$n/not-stopped" "$why"; fi
	check "$n/target-alive" "process $p is gone: $(oneline "$dir/out")" alive "$p"
	reap "$p" "$job"
}

# test/e2e/thread_churn.c: its one timer, id 0, aimed at the process.  Only
# what happens while the process is stopped can make an image stale, and
# nothing happens then: all 20 dumps write an image (threads that exit while
# being attached are skipped like those already gone).
churn_image_ok() { [ "$3" = "0 " ] && grep -q "\"notify_tid\" *: *$1\b" "$2"; }
case_thread_churn() {
	race_dumps thread-churn thread_churn churn "whose threads come and go" churn_image_ok \
		"thread [0-9]+ exited while the process was being dumped|called exec" 20
}

# test/e2e/exec_loop.c: a new program every ~2 ms, each creating one timer.
# An image holds that timer or nothing (stopped between exec and
# timer_create); the ID counter survives exec (it lives in signal_struct), so
# any one ID will do.
exec_image_ok() { [ "$(echo $3 | wc -w)" -le 1 ]; }
case_exec_loop() {
	race_dumps exec-loop exec_loop exec "that execs every ~2 ms" exec_image_ok ""
}

# PTIMER_E2E_CASES="case_a case_b:ARG": only these cases (":" separates arguments).
if [ -n "${PTIMER_E2E_CASES:-}" ]; then
	for c in $PTIMER_E2E_CASES; do
		${c//:/ }
	done
	[ "$H_FAIL" -eq 0 ]
	exit
fi

for sc in mix sparse stride dense many threads cpuclocks; do
	run_scenario "$sc" auto
done
run_scenario mix exact
for sc in mix sparse stride threads; do
	run_scenario "$sc" linear
done
# pidns-leader-tid: source and target each pid 1 of their own pid namespace
if unshare -pf true 2>/dev/null; then
	PIDNS=1
	for sc in threads mix cpuclocks; do
		run_scenario "$sc" auto
	done
	PIDNS=0
else
	skip "pidns" "unshare -pf does not work here"
fi

if make_lc_image; then
	case_linear_counter
	case_linear_retry
	case_exact_offset
	case_taken_id auto
	case_taken_id linear
fi
case_thread_id
case_invalid_values
case_corrupt_images
case_rseq_slice
case_interrupt_restore TERM
case_interrupt_restore INT
case_target_killed
case_two_ptimers
case_dump_no_space
case_unprivileged
case_other_cpuclock
case_thread_churn
case_exec_loop

# Cases of their own: test/e2e/cases/NAME.sh, each run as
# "bash test/e2e/cases/NAME.sh BUILD" with its own scratch directory.
for c in "$TOP"/test/e2e/cases/*.sh; do
	[ -f "$c" ] || continue
	info "case $(basename "$c" .sh)"
	(cd "$TOP" && bash "$c" "$B") >"$TMP/case.out" 2>&1 </dev/null
	rc=$?
	cat "$TMP/case.out"
	nf=$(grep -c '^FAIL ' "$TMP/case.out")
	H_FAIL=$((H_FAIL + nf))
	[ "$rc" -ne 0 ] && [ "$nf" -eq 0 ] && fail "$(basename "$c" .sh)/exit" "exited with status $rc and printed no FAIL line"
done

[ "$H_FAIL" -eq 0 ]
