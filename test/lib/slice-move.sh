# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# test/lib/slice-move.sh - the slice-move case: rseq time-slice state and
# exact timers moved between kernels for real (test/criu/slice-move.sh
# boots the guests and carries the images from one to the next).  Sourced
# by test/criu/suite-inner.sh; run as its case words:
#   slice_move:dump:LABEL     on the source kernel: test/e2e/slice_move
#                             setup, dumped by `ptimer dump` (the process
#                             runs on, unchanged) and by criu with the
#                             plugin (a pid namespace of its own: its pids
#                             are free in any guest); images, the state
#                             the process reported and its timers into
#                             /ptimer-carry-out/LABEL
#   slice_move:restore:LABEL  on the target kernel, from
#                             /ptimer-carry-in/LABEL, for --rseq-slice /
#                             PTIMER_RSEQ_SLICE auto, require and off:
#                             `ptimer restore` into a fresh copy (every
#                             area registered with the default-on flag)
#                             and `criu restore` with the plugin
# What each must give, where THIS kernel can enable extensions (the slice
# kernel) or cannot (Debian's stock 7.2: ENOTSUPP; 6.12: EINVAL, and no
# exact-ID prctl: linear mode): every timer back with its ID, clock,
# notification and signal and firing, and
#   can     auto, require: exactly the image's enabled threads enabled
#           (a thread unavailable or disabled at the dump comes back
#           disabled); off: the threads as the target had them
#   cannot  auto: the threads as the target had them, one warning per
#           thread the image has enabled, naming the kernel's answer;
#           require (when the image has one enabled): refused, nothing
#           restored (no timer made, the fresh copy as it was; criu's
#           restore failed with nothing left running); off: as auto,
#           without the warnings
# Needs: $BLD/test/slice_move (test/e2e/slice_move.c), PT or
# $INST/usr/bin/ptimer, LIBDIR (the plugin), W (work directory), the
# harness and flavour-criu.sh (kill_wait, has_file).

SM_OUT=${SM_OUT:-/ptimer-carry-out}
SM_IN=${SM_IN:-/ptimer-carry-in}

# sm_start DIR ROLE [pidns]: slice_move ROLE in DIR, its own session; with
# pidns, its own pid namespace and no file open (criu dumps it: its files
# must be there at the restore, in another guest); SM_PID
sm_start() {
	local dir=$1 role=$2 wrap=(setsid) err=$1/err.log
	[ "${3:-}" = pidns ] && wrap=(unshare -pf setsid -w) err=/dev/null
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd / && exec "${wrap[@]}" "$BLD/test/slice_move" "$role" "$dir" </dev/null >/dev/null 2>"$err") &
	disown $! 2>/dev/null
	if ! wait_until 300 test -e "$dir/$role.ready"; then
		SM_WHY="slice_move $role did not get ready: $(oneline "$dir/err.log")"
		pkill -KILL -f "slice_move $role $dir" 2>/dev/null
		return 1
	fi
	SM_PID=$(cat "$dir/$role.pid")
}

# sm_state DIR K OUT: the process of DIR reports its threads (state.K) into
# OUT: five thread lines and the signals; else a FAIL NAME-state (SM_NAME)
# and an empty OUT, which no check below takes for an answer
sm_state() {
	rm -f "$1/state.$2" "$3"
	echo "$2" >"$1/ask.tmp" && mv -f "$1/ask.tmp" "$1/ask"
	if wait_until 100 test -e "$1/state.$2" && cp "$1/state.$2" "$3" &&
		[ "$(grep -cv '^signals ' "$3")" -eq 5 ]; then
		return 0
	fi
	fail "$SM_NAME-state" "the process of $1 gave no state $2 in 10 s: $(cat "$3" 2>/dev/null | tr '\n' ';')"
	: >"$3"
	return 1
}

# sm_timers PID: /proc/PID/timers, one line a timer, sorted, a thread named
# by its rank among the process's threads (tids ascend in the order the
# program made them; a restore keeps that order)
sm_timers() {
	local ranks
	ranks=$(ls "/proc/$1/task" 2>/dev/null | sort -n | awk '{ printf "%s%s=%d", (NR > 1 ? "," : ""), $1, NR - 1 }')
	awk -v ranks="$ranks" '
		BEGIN { n = split(ranks, r, ","); for (i = 1; i <= n; i++) { split(r[i], kv, "="); rank[kv[1]] = kv[2] } }
		function flush() { if (id != "") print "ID " id " signal " sig " notify " note " clock " clk; id = "" }
		/^ID:/ { flush(); id = $2 }
		/^signal:/ { split($2, s, "/"); sig = s[1] }
		/^notify:/ { split($2, a, "/"); note = a[1]; if (a[2] ~ /^tid\./) { t = substr(a[2], 5); note = note "/thread" (t in rank ? rank[t] : "?") } }
		/^ClockID:/ { clk = $2 }
		END { flush() }' "/proc/$1/timers" 2>/dev/null | sort
}

# sm_enabled FILE: the roles a state file says are enabled (GET 1); "?"
# for a missing or empty file, which matches no expectation
sm_enabled() { [ -s "$1" ] && awk '$1 != "signals" && $3 == 1 { printf "%s ", $1 }' "$1" || echo "?"; }
# sm_signals FILE: the two timers' signal counts
sm_signals() { awk '$1 == "signals" { print $2 + $3 }' "$1"; }
# sm_threads FILE: the threads' state without their tids; "?" as above
sm_threads() { [ -s "$1" ] && awk '$1 != "signals" { print $1, $3, $4 }' "$1" || echo "?"; }

slice_move() {
	local step=$1 label=$2
	SM_PT=${PT:-$INST/usr/bin/ptimer}
	case $step in
	dump) sm_dump "$label" ;;
	restore) sm_restore "$label" ;;
	*) fail "slice-move/$step" "no such step (dump, restore)" ;;
	esac
}

sm_dump() {
	local label=$1 o=$SM_OUT/$1 n=slice-move/dump-$1 d=$W/sm-dump-$1
	mkdir -p "$o"
	info "$n: kernel $(uname -r)"
	SM_NAME=$n
	# ptimer dump: the process runs on, as it was
	if ! sm_start "$d" setup; then
		fail "$n/start" "$SM_WHY"
		return
	fi
	sm_state "$d" 1 "$o/before.state"
	sm_timers "$SM_PID" >"$o/before.timers"
	cp "$d/setup.tids" "$o/setup.tids"
	info "$n: threads before: $(sm_threads "$o/before.state" | tr '\n' ';')"
	mkdir -p "$o/ptimer"
	timeout -k 5 60 "$SM_PT" dump -t "$SM_PID" -D "$o/ptimer" >"$d/dump.out" 2>&1
	local rc=$?
	check "$n/ptimer-dump" "ptimer dump exited $rc: $(oneline "$d/dump.out")" test "$rc" -eq 0
	sm_state "$d" 2 "$d/after.state"
	check "$n/ptimer-dump-leaves-threads" "the threads after the dump: $(sm_threads "$d/after.state" | tr '\n' ';')" \
		test "$(sm_threads "$o/before.state")" = "$(sm_threads "$d/after.state")"
	check "$n/ptimer-dump-leaves-timers" "the timers after the dump differ: $(sm_timers "$SM_PID" | diff "$o/before.timers" - | grep '^[<>]' | head -n 2 | tr '\n' ' ')" \
		test "$(sm_timers "$SM_PID")" = "$(cat "$o/before.timers")"
	"$SM_PT" show --json "$o/ptimer" >"$d/show.json" 2>&1 ||
		fail "$n/image-shown" "ptimer show --json $o/ptimer: $(oneline "$d/show.json")"
	local en
	en=$(grep -c '"slice_ext": *"enabled"' "$d/show.json")
	check "$n/image-enabled-as-process" "the image has $en threads \"enabled\", the process $(sm_enabled "$o/before.state")" \
		test "$en" -eq "$(sm_enabled "$o/before.state" | wc -w)"
	kill_wait "$SM_PID"

	# criu dump with the plugin, the process in a pid namespace of its own
	if ! sm_start /tmp/slice-move-criu setup pidns; then
		fail "$n/criu-start" "$SM_WHY"
		return
	fi
	sm_state /tmp/slice-move-criu 1 "$o/criu-before.state"
	sm_timers "$SM_PID" >"$o/criu-before.timers"
	# no request pending at the dump: the process polls DIR/ask, and a
	# descriptor of it caught open by criu would need the file at the
	# restore, in another guest
	rm -f /tmp/slice-move-criu/ask
	mkdir -p "$o/criu"
	timeout -s KILL "$CRIU_TIMEOUT" criu dump -t "$SM_PID" -D "$o/criu" -v4 -o dump.log --libdir "$LIBDIR" \
		>"$d/criu-dump.out" 2>&1
	rc=$?
	check "$n/criu-dump" "criu dump exited $rc: $(grep -m2 -E 'Error|ptimer' "$o/criu/dump.log" | tr '\n' ' ' | cut -c1-300)" \
		test "$rc" -eq 0
	check "$n/criu-image" "no ptimers-*.img in the checkpoint" has_file "$o/criu/ptimers-*.img"
	[ "$rc" -eq 0 ] || kill_wait "$SM_PID"
}

# sm_expect_threads NAME GOT WANT-ENABLED [SAME-AS]: the enabled threads
# are WANT-ENABLED; with SAME-AS, every thread's GET and flags as there
sm_expect_threads() {
	local name=$1 got=$2 want=$3 same=${4:-}
	if [ -n "$same" ]; then
		check "$name-threads-untouched" "threads $(sm_threads "$got" | tr '\n' ';') where the target had $(sm_threads "$same" | tr '\n' ';')" \
			test "$(sm_threads "$got")" = "$(sm_threads "$same")"
	else
		check "$name-threads-as-image" "enabled: '$(sm_enabled "$got")', the image's: '$want' ($(sm_threads "$got" | tr '\n' ';'))" \
			test "$(sm_enabled "$got")" = "$want"
	fi
}

# sm_expect_timers NAME PID WANT-FILE STATE-DIR: the timers as in the image,
# and firing (signals counted by the process grow)
sm_expect_timers() {
	local name=$1 pid=$2 want=$3 dir=$4 s1 s2
	check "$name-timers" "timers differ from the dumped ones: $(sm_timers "$pid" | diff "$want" - | grep '^[<>]' | head -n 3 | tr '\n' ' ')" \
		test "$(sm_timers "$pid")" = "$(cat "$want")"
	sm_state "$dir" 8 "$dir/s8"
	sleep 0.5
	sm_state "$dir" 9 "$dir/s9"
	s1=$(sm_signals "$dir/s8") s2=$(sm_signals "$dir/s9")
	check "$name-timers-fire" "the timers' signals: $s1, then $s2 half a second later" test "${s2:-0}" -gt "${s1:-0}"
}

sm_restore() {
	local label=$1 i=$SM_IN/$1 n=slice-move/$1-to-this can=0 want mode
	if [ ! -f "$i/before.state" ]; then
		fail "slice-move/$label" "nothing carried in from the dump of $label ($i): its guest failed before"
		return
	fi
	info "slice-move: images of $label restored on $(uname -r)"
	SM_NAME=$n
	want=$(sm_enabled "$i/before.state")
	for mode in auto require off; do
		local m=$n/standalone-$mode d=$W/sm-fresh-$mode rc map fresh
		if ! sm_start "$d" fresh; then
			fail "$m/start" "$SM_WHY: the restores of $label were not tried"
			return
		fi
		fresh=$SM_PID
		SM_NAME=$m
		if ! sm_state "$d" 1 "$d/fresh.state"; then
			kill_wait "$fresh"
			return
		fi
		# a kernel that answers GET in the copy's threads can enable
		can=0
		awk '$1 == "prctl" && $3 >= 0 { f = 1 } END { exit !f }' "$d/fresh.state" && can=1
		# the copy's areas were registered default-on: where the kernel
		# grants, the restore has something to disable
		[ "$can" = 1 ] && check "$m-copy-starts-enabled" "the fresh copy's enabled threads: '$(sm_enabled "$d/fresh.state")', want 'prctl flag off '" \
			test "$(sm_enabled "$d/fresh.state")" = "prctl flag off "
		map=$(paste "$i/setup.tids" "$d/fresh.tids" | awk 'NR > 1 { printf " --tid-map %s=%s", $1, $2 }')
		# shellcheck disable=SC2086
		timeout -k 5 60 "$SM_PT" restore -t "$fresh" -D "$i/ptimer" --rseq-slice="$mode" $map >"$d/restore.out" 2>&1
		rc=$?
		sm_state "$d" 2 "$d/after.state"
		if [ "$can" = 0 ] && [ "$mode" = require ] && [ -n "$want" ]; then
			check "$m-refused" "ptimer restore --rseq-slice=require exited $rc: $(oneline "$d/restore.out")" \
				test "$rc" -ne 0 -a "$(grep -c . "$d/restore.out")" -eq 1
			check "$m-refusal-names-require" "no refusal by --rseq-slice=require naming the kernel's answer: $(oneline "$d/restore.out")" \
				grep -qE 'but the kernel answers .*(ENOTSUPP|EINVAL).*--rseq-slice=require: nothing restored' "$d/restore.out"
			check "$m-no-timer-made" "the fresh copy has $(grep -c '^ID:' "/proc/$fresh/timers") timers" \
				test "$(grep -c '^ID:' "/proc/$fresh/timers")" -eq 0
			sm_expect_threads "$m" "$d/after.state" "" "$d/fresh.state"
			kill_wait "$fresh"
			continue
		fi
		check "$m-restored" "ptimer restore --rseq-slice=$mode exited $rc: $(oneline "$d/restore.out")" test "$rc" -eq 0
		sed "s|^|# $m: |" "$d/restore.out"
		local warns
		warns=$(grep -c 'had the rseq time-slice extension enabled, but the kernel answers' "$d/restore.out")
		if [ "$can" = 0 ] && [ "$mode" = auto ]; then
			check "$m-warns-per-thread" "$warns warnings for the $(echo $want | wc -w) threads the image has enabled: $(oneline "$d/restore.out")" \
				test "$warns" -eq "$(echo $want | wc -w)"
			check "$m-warning-names-answer" "the warnings name no kernel answer: $(oneline "$d/restore.out")" \
				test "$warns" -eq 0 -o "$(grep -cE 'with (ENOTSUPP|EINVAL)' "$d/restore.out")" -eq "$warns"
		else
			check "$m-no-warning" "$warns warnings: $(oneline "$d/restore.out")" test "$warns" -eq 0
		fi
		if [ "$mode" = off ] || [ "$can" = 0 ]; then
			sm_expect_threads "$m" "$d/after.state" "" "$d/fresh.state"
		else
			sm_expect_threads "$m" "$d/after.state" "$want"
		fi
		sm_expect_timers "$m" "$fresh" "$i/before.timers" "$d"
		kill_wait "$fresh"
	done
	# criu restore with the plugin
	for mode in auto require off; do
		local m=$n/criu-$mode c=$W/sm-criu-$mode pid
		rm -rf "$c" /tmp/slice-move-criu
		cp -a "$i/criu" "$c"
		mkdir -p /tmp/slice-move-criu
		PTIMER_RSEQ_SLICE=$mode timeout -s KILL "$CRIU_TIMEOUT" criu restore -D "$c" -d --pidfile "$c/restored.pid" \
			-v4 -o restore.log --libdir "$LIBDIR" >"$c/restore.out" 2>&1
		rc=$?
		pid=$(cat "$c/restored.pid" 2>/dev/null)
		if [ "$can" = 0 ] && [ "$mode" = require ] && [ -n "$want" ]; then
			check "$m-refused" "criu restore with PTIMER_RSEQ_SLICE=require exited $rc" test "$rc" -ne 0
			check "$m-refusal-said" "no line of the plugin's refusal in restore.log: $(grep -E 'Error|ptimer' "$c/restore.log" | tail -n 3 | tr '\n' ' ' | cut -c1-400)" \
				grep -qE 'ptimer: .*but the kernel answers .*(ENOTSUPP|EINVAL).*require: nothing restored' "$c/restore.log"
			check "$m-nothing-running" "a process of the checkpoint runs: $(pgrep -af slice_move | tr '\n' ' ')" \
				test -z "$(pgrep -f /slice-move-criu)"
			[ -n "$pid" ] && kill_wait "$pid"
			continue
		fi
		check "$m-restored" "criu restore exited $rc: $(grep -E 'Error|ptimer.*(refus|fail)' "$c/restore.log" | tail -n 3 | tr '\n' ' ' | cut -c1-400)" \
			test "$rc" -eq 0 -a -n "$pid"
		if [ "$rc" -ne 0 ] || [ -z "$pid" ]; then
			tail -n 12 "$c/restore.log" | sed 's/^/# restore.log: /'
			[ -n "$pid" ] && kill_wait "$pid"
			continue
		fi
		SM_NAME=$m
		sm_state /tmp/slice-move-criu 2 "$c/after.state"
		local warns
		warns=$(grep -c 'had the rseq time-slice extension enabled, but' "$c/restore.log")
		if [ "$can" = 0 ] && [ "$mode" = auto ]; then
			check "$m-warns-per-thread" "$warns warnings in criu's log for the $(echo $want | wc -w) threads the image has enabled" \
				test "$warns" -eq "$(echo $want | wc -w)"
		fi
		# criu registers every area again with no flag: the threads come
		# back disabled, and the plugin enables what the image has
		if [ "$mode" = off ] || [ "$can" = 0 ]; then
			sm_expect_threads "$m" "$c/after.state" ""
		else
			sm_expect_threads "$m" "$c/after.state" "$want"
		fi
		sm_expect_timers "$m" "$pid" "$i/criu-before.timers" /tmp/slice-move-criu
		kill_wait "$pid"
	done
}
