# SPDX-License-Identifier: MIT
#
# test/lib/flavour-criu.sh - the criu flavours of the case driver
# (test/lib/driver.sh), and the criu steps the criu suite's own cases share.
# bash; sourced by test/criu/suite-inner.sh after harness.sh and driver.sh,
# inside a Debian root with a real criu.  Needs: W (scratch), P (the label
# prefix, criu-SUITE), ZT (zdtm_timers), INST (where ptimer is installed),
# LIBDIR (criu's plugin directory with ptimer_plugin.so), CRIU_TIMEOUT (s),
# CRIU_VERSION.
#
#   fl_criu CASE FLAVOUR   one round (driver.sh lists the flavours): the
#                          case's criu role started (setsid; criu-pidns:
#                          pid 1 of its own pid namespace), criu dump,
#                          criu restore -d, the plugin's log lines for the
#                          criu-mode, /proc/PID/timers before the dump
#                          against after the restore, then the program's
#                          own checks once DIR/restored exists.

gone() { [ ! -e "/proc/$1" ] || [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
kill_wait() { kill -KILL "$1" 2>/dev/null; wait_until 100 gone "$1"; }

# start NAME ROLE SCENARIO KIND: zdtm_timers ROLE in $W/NAME (KIND plain:
# setsid; pidns: pid 1 of its own pid namespace, `unshare -pf setsid -w`, no
# --mount-proc).  Sets PID (as this /proc shows it) and D.
start() {
	local name=$1 role=$2 sc=$3 kind=$4 ROLE_WRAP=setsid ROLE_CWD=/
	D=$W/$name
	rm -rf "$D" "$D.img"
	mkdir -p "$D"
	[ "$kind" = pidns ] && ROLE_WRAP="unshare -pf setsid -w"
	start_role "$role" "$sc" "$D" "$P/$name"
	disown "$ROLE_PID"
	if ! wait_ready "$D" "$role" "$ROLE_PID" 60; then
		fail "$name/start" "zdtm_timers $role $sc did not get ready: $(oneline "$D/$role.out")"
		return 1
	fi
	PID=$(cat "$D/$role.pid")
}

# dump NAME IMG [ENV=V]... [-- CRIU-ARGS]: criu dump -t $PID with the plugin;
# DTIME set (seconds).  A failure is a FAIL NAME/dump, or, with DUMP_QUIET
# set, no line: DUMP_WHY says why and the caller reports it.
dump() {
	local name=$1 img=$2 envs=() rc t0
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift
	rm -rf "$img"
	mkdir -p "$img"
	t0=$EPOCHREALTIME
	env "${envs[@]}" timeout -s KILL "$CRIU_TIMEOUT" criu dump -t "$PID" -D "$img" -v4 -o dump.log "$@" \
		>"$img/dump.out" 2>&1
	rc=$?
	# criu's own seize gave up: a thread did not stop for PTRACE_INTERRUPT
	# within criu's 10 s (its wait4 interrupted by criu's timeout alarm:
	# "err -1/4", compel/src/lib/infect.c), before the plugin's first task
	# call; seen once with Go's profiler threads on a loaded machine.
	# criu resumed the tree: one more dump, said
	if [ "$rc" -ne 0 ] && grep -q 'Unseizable non-zombie .* err -1/4' "$img/dump.log" &&
		! grep -q 'ptimer: time in ptimer (dump): .*, [1-9][0-9]* task call' "$img/dump.log"; then
		echo "# $name: criu dump could not stop a thread in time ($(grep -m1 -o 'Unseizable non-zombie .*' "$img/dump.log")): criu dumped again"
		rm -rf "$img"
		mkdir -p "$img"
		env "${envs[@]}" timeout -s KILL "$CRIU_TIMEOUT" criu dump -t "$PID" -D "$img" -v4 -o dump.log "$@" \
			>"$img/dump.out" 2>&1
		rc=$?
	fi
	DTIME=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
	if [ "$rc" -ne 0 ]; then
		DUMP_WHY="criu dump exit $rc: $(grep -E 'Error \(|pie: .*rror' "$img/dump.log" | grep -v RLIMIT_NOFILE | head -n 1 | cut -c1-200) ... $(logtail "$img/dump.log")"
		[ -n "${DUMP_QUIET:-}" ] || fail "$name/dump" "$DUMP_WHY"
		return 1
	fi
	case " $* " in *" --leave-running "*) return 0 ;; esac
	wait_until 100 gone "$PID" || { fail "$name/dump" "pid $PID still there after criu dump"; return 1; }
}

# restore IMG [CRIU-ARGS]: criu restore -d; RC, RPID, RTIME set.
restore() {
	local img=$1 t0
	shift
	rm -f "$img/restored.pid"
	t0=$EPOCHREALTIME
	timeout -s KILL "$CRIU_TIMEOUT" criu restore -D "$img" -d --pidfile "$img/restored.pid" "$@" \
		>"$img/restore.out" 2>&1
	RC=$?
	RTIME=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.4f", b - a }')
	RPID=$(cat "$img/restored.pid" 2>/dev/null)
}

# collect NAME [ALONE [TAG]]: let the restored criu role check itself; print
# and count its lines (drive_lines: TAG/ replaced by NAME/).  ALONE not
# empty (criu without the plugin): the lines only shown, as "# criu alone:"
# notes.
collect() {
	local name=$1 alone=${2:-} tag=${3:-}
	if [ -n "$alone" ] && touch "$D/restored" && wait_until 600 test -e "$D/criu.done"; then
		sed -nE "s#^($H_STATUS) #\\# criu alone: \\1 #p" "$D/criu.result"
		alone_xfail "$name" "$tag" "$D/criu.result"
	elif [ -n "$alone" ] || ! drive_collect "$name" "$D" "$tag"; then
		[ -n "$alone" ] && fail "$name/verify" "the restored program wrote no criu.done: $(oneline "$D/criu.out")"
		[ -n "$RPID" ] && kill_wait "$RPID"
		return 1
	fi
	[ -n "$RPID" ] && wait_until 100 gone "$RPID"
	return 0
}

# alone_xfail NAME TAG RESULT: criu alone's outcome where the case says it
# fails by design (CASE_ALONE_XFAIL, CASE_ALONE_WHY): each check named
# there that FAILed is an XFAIL NAME/CHECK with the reason and what the
# program saw; one that passed, or never ran, is a FAIL (the case's claim
# about criu is out of date).
alone_xfail() {
	local c line
	for c in $CASE_ALONE_XFAIL; do
		line=$(grep -m1 -E "^(PASS|FAIL) ${2:+$2/}$c(:|\$)" "$3")
		case $line in
		FAIL*) xfail "$1/$c" "$CASE_ALONE_WHY (the program: ${line#*: })" ;;
		PASS*) fail "$1/$c" "criu alone passes $c, which test/cases/$CASE_NAME says it fails (CASE_ALONE_XFAIL)" ;;
		*) fail "$1/$c" "the program printed no line $c (CASE_ALONE_XFAIL of test/cases/$CASE_NAME)" ;;
		esac
	done
}

# proc_timers PID: the process's timers as /proc/PID/timers shows them, one
# "ID SIGNAL NOTIFY CLOCKID" line a timer, sorted by ID.
proc_timers() {
	awk '/^ID:/ { id = $2 } /^signal:/ { s = $2 } /^notify:/ { n = $2 }
		/^ClockID:/ { print id, s, n, $2 }' "/proc/$1/timers" | sort -n
}

# fl_criu CASE FLAVOUR: the round of driver.sh's criu flavours
# (fl_criu_round), then the differential rule: the plugin is never worse
# than criu alone.  Each plugin flavour's outcome is kept; after the
# criu-alone round of the case (LIST puts criu-alone after them), a case
# criu alone passed (restored, its program's checks all PASS) that failed
# in criu, criu-native or criu-takeover is a FAIL naming both.
fl_criu() {
	local f0=$H_FAIL rc
	fl_criu_round "$@"
	rc=$?
	case $2 in
	criu | criu-native | criu-takeover)
		if [ "$rc" -eq 0 ] && [ "$H_FAIL" -eq "$f0" ]; then echo ok; else echo fail; fi >"$W/outcome.$1.$2" ;;
	criu-alone) differential "$1" ;;
	esac
	return 0
}

# differential CASE: see fl_criu.
differential() {
	local c=$1 fl bad= seen=
	[ -f "$W/$c-alone/criu.done" ] && [ -s "$W/$c-alone/criu.result" ] &&
		! grep -q '^FAIL' "$W/$c-alone/criu.result" || return 0
	for fl in criu criu-native criu-takeover; do
		[ -f "$W/outcome.$c.$fl" ] || continue
		seen="$seen $fl"
		[ "$(cat "$W/outcome.$c.$fl")" = ok ] || bad="$bad $fl"
	done
	[ -n "$seen" ] || return 0
	if [ -n "$bad" ]; then
		fail "$c/differential" "criu alone passes $c (criu-alone), the plugin fails it in:$bad"
	else
		pass "$c/differential: criu alone and the plugin both pass ($seen )"
	fi
}

# fl_criu_round CASE FLAVOUR: one round.  It works in $W/LABEL, the image in
# $W/LABEL.img (a later case may restore it again: case_no_plugin takes
# mix's).  Status 1 when the round stopped early.
fl_criu_round() {
	local c=$1 fl=$2 name=$1 kind=plain alone= envs= method= img job plugin
	if command -v case_criu >/dev/null; then
		case " $CASE_CRIU_FLAVOURS " in
		*" $fl "*) case_criu "$c" "$fl" ;;
		*) fail "$c/$fl" "$c's round of its own (case_criu) runs in $CASE_CRIU_FLAVOURS, not $fl (CASE_CRIU_FLAVOURS)" ;;
		esac
		return
	fi
	case $fl in
	criu) ;;
	criu-native) name=native-$c envs=PTIMER_CRIU_MODE=native ;;
	criu-takeover) name=takeover-$c envs=PTIMER_CRIU_MODE=takeover ;;
	criu-strict) name=strict-$c envs=PTIMER_STRICT=yes ;;
	criu-pidns) name=$c-pidns kind=pidns ;;
	criu-alone) name=$c-alone alone=1 ;;
	criu-post-dump-copy) name=post-dump-copy-$c kind=pidns method=post_dump_copy ;;
	criu-page-server) name=page-server-$c kind=pidns method=page_server ;;
	criu-lazy) name=lazy-$c kind=pidns method=lazy ;;
	criu-lazy-alone) name=lazy-$c-alone kind=pidns method=lazy ;;
	criu-predump) name=predump-$c kind=pidns method=predump ;;
	criu-predump-alone) name=predump-$c-alone kind=pidns method=predump ;;
	*) fail "$c/$fl" "no criu flavour '$fl' (test/lib/driver.sh)"; return 1 ;;
	esac
	plugin="--libdir $LIBDIR"
	[ -n "$alone" ] && plugin=
	D=$W/$name
	rm -rf "$D" "$D.img"
	mkdir -p "$D"
	local ROLE_CWD=/ ROLE_WRAP=setsid
	[ "$kind" = pidns ] && ROLE_WRAP="unshare -pf setsid -w"
	drive_start criu "$D" "$P/$name"
	job=$ROLE_PID
	# a program that exits 4 before it is ready lacks a kernel feature: a
	# SKIP with its reason (drive_ready; it must still be our job to wait)
	drive_ready "$name" "$D" criu "$job" || return 1
	disown "$job"
	PID=$(cat "$D/criu.pid")
	# the ways of shipping a checkpoint: their own rounds, below
	[ -n "$method" ] && { "criu_$method" "$name"; return; }
	img=$D.img
	rm -f "$D/timers.before"
	[ "$kind" = plain ] && [ -z "$alone" ] && [ "$CASE_SAME_TIMERS" != no ] && proc_timers "$PID" >"$D/timers.before"
	# criu alone's failures are its own: an XFAIL with criu's reason (the
	# differential rule below needs only its outcome)
	# shellcheck disable=SC2086
	if ! DUMP_QUIET=1 dump "$name" "$img" $envs -- $plugin; then
		lazy_or_alone "$name/dump" "$DUMP_WHY"
		kill_wait "$PID"
		return 1
	fi
	[ -z "$alone" ] && command -v case_criu_dump >/dev/null && case_criu_dump "$name" "$img"
	# shellcheck disable=SC2086
	restore "$img" $plugin -v4 -o restore.log
	if [ "$RC" -ne 0 ]; then
		lazy_or_alone "$name/restore" "criu restore exit $RC: $(logtail "$img/restore.log")"
		return 1
	fi
	pass "$name/restore (${RTIME} s; dump ${DTIME} s)"
	if [ -s "$D/timers.before" ]; then
		proc_timers "$RPID" >"$D/timers.after"
		if cmp -s "$D/timers.before" "$D/timers.after"; then
			pass "$name/proc-timers: /proc/PID/timers the same before the dump and after the restore ($(wc -l <"$D/timers.after") timers)"
		elif [ "$CASE_SAME_TIMERS" = grows ] && ! grep -qvxF -f "$D/timers.after" "$D/timers.before"; then
			pass "$name/proc-timers: the $(wc -l <"$D/timers.before") timers of /proc/PID/timers before the dump all there after the restore, the same ($(wc -l <"$D/timers.after") in all: the program makes more of its own)"
		else
			fail "$name/proc-timers" "/proc/PID/timers differ after the restore: $(diff "$D/timers.before" "$D/timers.after" | grep '^[<>]' | head -n 4 | tr '\n' ' ')"
		fi
	fi
	# the plugin's lines, then the program's own checks whatever they said
	[ -z "$alone" ] && plugin_log "$name" "$img" "$envs" && plugin_time "$name" "$img" && plugin_insn "$name" "$img"
	collect "$name" "$alone" "$CASE_TAG"
}

# plugin_insn NAME IMG: where ptimer made a task's timers, the task was held
# (it dies with criu during ptimer's call), and on x86_64 ptimer's syscalls
# there ran at the vDSO's syscall instruction rather than through a stub
# written into the task (restorer/host/inject.h PTIMER_BLOB_DIES_WITH_TRACER);
# arm64 keeps the stub.
plugin_insn() {
	local name=$1 img=$2 made at
	made=$(grep -cE 'ptimer: task .*: [1-9][0-9]* POSIX timers restored' "$img/restore.log")
	[ "$made" -gt 0 ] || return 0
	at=$(grep -c "ptimer: thread [0-9]*: no stub, ptimer's syscalls run at the vDSO's syscall instruction" "$img/restore.log")
	case $(uname -m) in
	x86_64)
		# at least one a task: ptimer's first blob in each is there
		if [ "$at" -ge "$made" ]; then
			pass "$name/no-stub: $at thread(s) ran ptimer's syscalls at the vDSO's syscall instruction"
		else
			fail "$name/no-stub" "ptimer made the timers of $made task(s) but ran its syscalls at the vDSO's instruction in $at thread(s) only ('no stub' lines of restore.log)"
		fi ;;
	*)
		if [ "$at" = 0 ]; then
			pass "$name/no-stub: $(uname -m) keeps the stub"
		else
			fail "$name/no-stub" "$(uname -m) ran syscalls at a vDSO instruction ($at lines), which it has no support for"
		fi ;;
	esac
}

# plugin_log NAME IMG ENVS: the plugin's restore line for its criu-mode.
plugin_log() {
	case " $3 " in
	*PTIMER_CRIU_MODE=native*)
		if grep -q 'ptimer: .*criu restored match the image' "$2/restore.log"; then
			pass "$1/plugin-verified"
		else
			fail "$1/plugin-verified" "no 'ptimer: ... match the image' in restore.log: $(logtail "$2/restore.log")"
		fi ;;
	*PTIMER_CRIU_MODE=takeover*)
		plugin_restored "$1" "$2" ;;
	*)
		# criu-mode auto (the default): criu 4.2 on a kernel with the
		# exact-ID prctl restores what it saved right; the rest, and
		# everything under 4.1, is ptimer's
		auto_decision "$1" "$2" || return 1
		if [ "$AUTO_EXACT" = yes ] && criu_restored "$2"; then
			pass "$1/criu-restored: $(grep -oE 'ptimer: .*criu restore[sd] its.*' "$2/restore.log" | head -n1 | cut -c1-120)"
			! grep -q 'ptimer: .*POSIX timers restored,' "$2/restore.log" || info "$1: some tasks taken over"
		elif [ "$AUTO_EXACT" = no ]; then
			criu_loop "$1" "$2"
		else
			plugin_restored "$1" "$2"
		fi ;;
	esac
}

# criu_restored IMG: the plugin's line for a task whose timers criu made
# (at init, "restores", when nothing after criu is ptimer's; else after its
# completions, "restored")
criu_restored() {
	grep -qE 'ptimer: .*criu restore[sd] its ([0-9]+ )?POSIX timers(, all of them from its core image)? \(criu-mode auto\)' "$1/restore.log"
}

# criu_loop NAME IMG: under a criu that makes timer IDs by its
# create/delete loop (4.1, or a kernel without the exact-ID prctl), the
# plugin's line for the restored root task: left to that loop with the
# number of create/delete pairs its timer IDs cost the loop (largest ID + 1
# - how many, of the timers criu saved: crit), at most the bound the
# log names; else restored by ptimer for a reason the line gives: the loop
# over the bound (the same count), or, on a kernel without the prctl,
# completions that need it.  Then the line of whoever made them.
criu_loop() {
	local name=$1 img=$2 line bound vpid pairs got said reason
	line=$(grep -oE "ptimer: criu-mode auto: [0-9]+ tasks? left to criu's create/delete loop \(at most [0-9]+ pairs each\), [0-9]+ restored by ptimer" "$img/restore.log" | head -n1)
	if [ -z "$line" ]; then
		fail "$name/criu-loop" "no 'ptimer: criu-mode auto: N tasks left to criu's create/delete loop ...' in restore.log: $(logtail "$img/restore.log")"
		return 1
	fi
	bound=$(sed -E 's/.*at most ([0-9]+) pairs.*/\1/' <<<"$line")
	vpid=$(awk '/^NSpid:/ { print $NF }' "/proc/$RPID/status" 2>/dev/null)
	# from the timers criu saved (core-VPID.img, which the plugin never
	# changes): the process may have made or deleted some since
	pairs=
	[ -n "$vpid" ] && pairs=$(crit decode -i "$img/core-$vpid.img" 2>"$img/crit.err" | python3 -c '
import json, sys
e = json.load(sys.stdin)["entries"][0]
ids = [t["it_id"] for t in e.get("tc", {}).get("timers", {}).get("posix", [])]
print(max(ids) + 1 - len(ids) if ids else -1)' 2>>"$img/crit.err")
	if [ -z "$vpid" ] || [ -z "$pairs" ]; then
		fail "$name/criu-loop" "restored root $RPID: cannot read its NSpid, or its timers in $img/core-$vpid.img (crit: $(oneline "$img/crit.err"))"
		return 1
	fi
	if [ "$pairs" -lt 0 ]; then
		pass "$name/criu-loop: the root task has no timer (${line#ptimer: criu-mode auto: })"
		return 0
	fi
	got=$(grep -oE "ptimer: task vpid $vpid: (criu's create/delete loop makes its timer IDs in [0-9]+ pairs \(at most [0-9]+\): left to criu|ptimer restores its timers: .*)" "$img/restore.log" | head -n1)
	said=$(sed -nE "s/.*(in|need) ([0-9]+) (create\/delete )?pairs.*/\2/p" <<<"$got")
	reason=
	case $got in
	*"left to criu")
		[ "$said" = "$pairs" ] && [ "$pairs" -le "$bound" ] || reason="left to criu, but its IDs need $pairs pairs (bound $bound)" ;;
	*"criu's loop would need"*)
		[ "$said" = "$pairs" ] && [ "$pairs" -gt "$bound" ] || reason="taken for $said pairs, but its IDs need $pairs (bound $bound)" ;;
	*"needs the exact-ID prctl"*)
		! "$INST/usr/bin/ptimer" check 2>/dev/null | grep -q '^exact timer IDs.* yes ' ||
			reason="taken for want of the exact-ID prctl, which this kernel has" ;;
	"") reason="no line for the task" ;;
	*) reason="an unexpected reason" ;;
	esac
	if [ -n "$reason" ]; then
		fail "$name/criu-loop" "root task (vpid $vpid): $reason: ${got#ptimer: }"
		return 1
	fi
	pass "$name/criu-loop: root task (vpid $vpid), IDs worth $pairs pairs: ${got#ptimer: task vpid $vpid: }"
	case $got in
	*"left to criu")
		if criu_restored "$img"; then
			pass "$name/criu-restored: $(grep -oE 'ptimer: .*criu restore[sd] its.*' "$img/restore.log" | head -n1 | cut -c1-120)"
		else
			fail "$name/criu-restored" "no 'ptimer: ... criu restores/restored its ... POSIX timers' in restore.log: $(logtail "$img/restore.log")"
		fi ;;
	*) plugin_restored "$name" "$img" ;;
	esac
}

# plugin_time NAME IMG: at dump and at restore the plugin's line of its own
# time, "time in ptimer (STAGE): init X ms, N task calls Y ms (longest Z
# ms), exit W ms, in all T ms": N the calls criu logged for its hook
# (CHECKPOINT_DEVICES, 11; RESUME_DEVICES_LATE, 9: criu's -v4 line per
# call; criu-dev also calls it for the whole tree, which ptimer does not
# count), T their sum.
plugin_time() {
	local name=$1 img=$2 st hook line n calls sum
	for st in dump restore; do
		hook=9
		[ $st = dump ] && hook=11
		line=$(grep -oE "ptimer: time in ptimer \($st\): init [0-9.]+ ms, [0-9]+ task calls? [0-9.]+ ms \(longest [0-9.]+ ms\), exit [0-9.]+ ms, in all [0-9.]+ ms" "$img/$st.log" | tail -n 1)
		if [ -z "$line" ]; then
			fail "$name/plugin-time-$st" "no 'ptimer: time in ptimer ($st): ...' line in $st.log: $(logtail "$img/$st.log")"
			return 1
		fi
		n=$(sed -E 's/.*ms, ([0-9]+) task call.*/\1/' <<<"$line")
		calls=$(grep -c "plugin: \`ptimer' hook $hook -> " "$img/$st.log")
		sum=$(awk -v l="$line" 'BEGIN { n = split(l, w, " "); for (i = 1; i <= n; i++) if (w[i + 1] == "ms" || w[i + 1] == "ms,") v[++k] = w[i]
			# init, tasks, exit, all ("(longest Z ms)," is not one)
			d = v[1] + v[2] + v[3] - v[4]; print (d < 0.01 && d > -0.01) ? "ok" : "off by " d }')
		if { [ "$n" = "$calls" ] || { [ -n "${PTIMER_CRIU_DEV:-}" ] && [ "$n" -le "$calls" ]; }; } && [ "$sum" = ok ]; then
			pass "$name/plugin-time-$st: ${line#ptimer: }"
		else
			fail "$name/plugin-time-$st" "criu called the hook $calls times, the line counts $n calls; its sum is $sum: $line"
		fi
	done
}

plugin_restored() {
	local mine theirs
	if grep -q 'ptimer: .*POSIX timers restored' "$2/restore.log"; then
		pass "$1/plugin-restored: $(grep -o 'ptimer: .*POSIX timers restored.*' "$2/restore.log" | head -n1 | cut -c1-120)"
	else
		fail "$1/plugin-restored" "no 'ptimer: ... POSIX timers restored' in restore.log: $(logtail "$2/restore.log")"
	fi
	# ptimer changes no task's CPUs: the restored task may run where criu
	# alone leaves it (a forked task's, this shell's)
	mine=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
	theirs=$(awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$RPID/status" 2>/dev/null)
	check "$1/cpus-as-criu-leaves-them" "restored task $RPID may run on CPUs '$theirs', criu's caller on '$mine'" \
		test -n "$theirs" -a "$theirs" = "$mine"
}

# auto_decision NAME IMG: the restore log says what criu-mode auto decided
# (at restore: the restoring criu is what counts), and it is what this criu
# and kernel call for; AUTO_EXACT yes or no.
auto_decision() {
	local line want=no
	line=$(grep -o 'ptimer: criu-mode auto: .*' "$2/restore.log" | head -n1)
	case $CRIU_VERSION in
	4.[2-9]* | [5-9].*) "$INST/usr/bin/ptimer" check 2>/dev/null | grep -q '^exact timer IDs.* yes ' && want=yes ;;
	esac
	AUTO_EXACT=no
	case $line in
	*"restores exact timer IDs itself"*) AUTO_EXACT=yes ;;
	"") fail "$1/auto-decision" "no 'ptimer: criu-mode auto: ...' in restore.log"; return 1 ;;
	esac
	if [ "$AUTO_EXACT" = "$want" ]; then
		pass "$1/auto-decision (criu $CRIU_VERSION): ${line#ptimer: criu-mode auto: }"
	else
		fail "$1/auto-decision" "criu $CRIU_VERSION, exact-ID prctl ${want}: the plugin decided '$line'"
		return 1
	fi
}

# ---- what the criu suite's own cases share (test/cases, case_criu) --------

ns_timers() { proc_timers "$1" | sed -E 's#/(tid|pid)\.[0-9]+#/\1#'; }
ns_same() {  # NAME PID
	ns_timers "$2" >"$D/timers.$1"
	if [ -s "$D/timers.before" ] && cmp -s "$D/timers.before" "$D/timers.$1"; then
		pass "$name/$1: the $(wc -l <"$D/timers.before") timers of the original"
	else
		fail "$name/$1" "original: $(tr '\n' ';' <"$D/timers.before") restored: $(tr '\n' ';' <"$D/timers.$1")"
	fi
}

restored_same() {  # NAME IMG
	local name=$1 img=$2
	if [ "$RC" -ne 0 ]; then
		fail "$name" "criu restore exit $RC: $(logtail "$img/restore.log")"
		return 1
	fi
	proc_timers "$RPID" >"$D/timers.after"
	if cmp -s "$D/timers.before" "$D/timers.after"; then
		pass "$name: $(wc -l <"$D/timers.after") timers as before the dump (${RTIME} s)"
	else
		fail "$name" "/proc/PID/timers differ: $(diff "$D/timers.before" "$D/timers.after" | grep '^[<>]' | head -n 4 | tr '\n' ' ')"
	fi
	kill_wait "$RPID"
}

# restore_collect NAME DIR WHAT: criu restore of DIR with the plugin, a PASS
# NAME/restore (saying WHAT) or a FAIL, then the program's own checks.
restore_collect() {
	restore "$2" --libdir "$LIBDIR" -v4 -o restore.log
	if [ "$RC" -ne 0 ]; then
		fail "$1/restore" "criu restore ($3): exit $RC: $(logtail "$2/restore.log")"
		return 1
	fi
	pass "$1/restore (${RTIME} s, $3)"
	collect "$1" "" "$CASE_TAG"
}

# ---- what criu hands a checkpoint to: the flavours criu-post-dump-copy,
# criu-page-server, criu-lazy[-alone], criu-predump[-alone] (fl_criu has
# started the case, pid 1 of its own pid namespace: D, PID) ----------------

# Migration tools ship the images from criu's post-dump action script,
# which criu runs before the plugins' exit(DUMP) (criu/cr-dump.c
# cr_dump_finish()); lazy migration sends them on at the same point.  The
# copy made there must be the whole checkpoint: every file as at the end of
# the dump (but criu's log and statistics), ptimers images included, and
# restored from it the process checks its timers (the case as pid 1 of
# its own pid namespace: threads' leader holds a SIGEV_THREAD_ID timer at
# itself, which criu alone cannot restore).
criu_post_dump_copy() {  # NAME
	local name=$1 img copy script=$W/$1.sh d
	img=$D.img copy=$D.copy
	rm -rf "$copy"
	printf '#!/bin/sh\n[ "$CRTOOLS_SCRIPT_ACTION" = post-dump ] || exit 0\ncp -a "$CRTOOLS_IMAGE_DIR/." "%s"\n' \
		"$copy" >"$script"
	chmod +x "$script"
	dump "$name" "$img" -- --libdir "$LIBDIR" --action-script "$script" || { kill_wait "$PID"; return 1; }
	d=$(diff -rq -x dump.log -x dump.out -x 'stats-*' "$copy" "$img" 2>&1)
	check "$name/copy-complete" "the post-dump copy differs from the finished dump: $(echo "$d" | head -n 3 | tr '\n' ' ')" \
		test -z "$d"
	check "$name/copy-has-ptimers-image" "no ptimers-*.img in the post-dump copy: $(ls "$copy" | tr '\n' ' ')" \
		has_file "$copy/ptimers-*.img"
	restore_collect "$name" "$copy" "the post-dump copy"
}

# Lazy migration (test/criu/guest.sh: a kernel with userfaultfd): criu dump
# --lazy-pages writes every image but the memory, runs the post-dump script
# (which ships the directory, here a copy), then serves the pages; criu
# lazy-pages on the copy fetches them for criu restore --lazy-pages.  The
# plugin's last dump hook runs only after all pages have gone: the copy
# must restore the case as pid 1 of its own pid namespace (threads' leader
# holds a SIGEV_THREAD_ID timer at itself, which criu alone cannot save)
# with its timers.  A NAME ending in "alone": criu without the plugin, noted.
# restored_checks NAME HOW: the restored process checks itself: its lines
# counted, or for criu alone (NAME ending in "alone") one note
restored_checks() {
	case $1 in
	*alone)
		touch "$D/restored"
		wait_until 600 test -e "$D/criu.done" && note "criu alone: $1: restored, $(grep -c '^FAIL' "$D/criu.result") of its checks fail"
		[ -n "$RPID" ] && wait_until 100 gone "$RPID" ;;
	*)
		pass "$1/restore (${RTIME} s, $2)"
		collect "$1" "" "$CASE_TAG" ;;
	esac
}
lazy_or_alone() {  # NAME WHAT: a FAIL, or criu alone's XFAIL
	case $1 in
	*alone | *alone/*) xfail "$1" "criu alone (not required to pass): $2" ;;
	*) fail "$1" "$2" ;;
	esac
}
criu_lazy() {  # NAME
	local name=$1 img copy plugin=(--libdir "$LIBDIR") script port=$((27000 + RANDOM % 1000)) dpid lpid drc
	case $name in *alone) plugin=() ;; esac
	# lazy pages need userfaultfd with fork and remove events
	if ! criu check --feature uffd-noncoop >"$W/lazy-check.out" 2>&1; then
		skip "$name" "this kernel cannot: criu check --feature uffd-noncoop: $(oneline "$W/lazy-check.out" 200)"
		kill_wait "$PID"
		return 0
	fi
	img=$D.img copy=$D.copy script=$W/$name-copy.sh
	rm -rf "$img" "$copy" "$copy.ready"
	mkdir -p "$img"
	printf '#!/bin/sh\n[ "$CRTOOLS_SCRIPT_ACTION" = post-dump ] || exit 0\ncp -a "$CRTOOLS_IMAGE_DIR/." "%s" && touch "%s.ready"\n' \
		"$copy" "$copy" >"$script"
	chmod +x "$script"
	timeout -s KILL "$CRIU_TIMEOUT" criu dump -t "$PID" -D "$img" -v4 -o dump.log --lazy-pages \
		--address 127.0.0.1 --port "$port" --action-script "$script" "${plugin[@]}" >"$img/dump.out" 2>&1 &
	dpid=$!
	if ! wait_until 1200 test -e "$copy.ready"; then
		lazy_or_alone "$name/dump" "no post-dump copy: $(logtail "$img/dump.log")"
		kill -KILL "$dpid" 2>/dev/null
		kill_wait "$PID"
		return 0
	fi
	check_copy_ptimers "$name" "$copy"
	timeout -s KILL "$CRIU_TIMEOUT" criu lazy-pages -D "$copy" --page-server --address 127.0.0.1 \
		--port "$port" -v4 -o lazy.log >"$copy/lazy.out" 2>&1 &
	lpid=$!
	restore "$copy" --lazy-pages "${plugin[@]}" -v4 -o restore.log
	wait "$dpid"
	drc=$?
	wait "$lpid"
	if [ "$RC" -ne 0 ] || [ "$drc" -ne 0 ]; then
		lazy_or_alone "$name/restore" "criu restore --lazy-pages exit $RC, criu dump exit $drc: $(logtail "$copy/restore.log") $(logtail "$img/dump.log")"
		[ -n "$RPID" ] && kill_wait "$RPID"
		gone "$PID" || kill_wait "$PID"
		return 0
	fi
	restored_checks "$name" "pages fetched lazily"
}
# check_copy_ptimers NAME DIR: the plugin's images are in a copy made at post-dump
check_copy_ptimers() {
	case $1 in *alone) return 0 ;; esac
	check "$1/copy-has-ptimers-image" "no ptimers-*.img in the post-dump copy: $(ls "$2" | tr '\n' ' ')" \
		has_file "$2/ptimers-*.img"
}
has_file() { compgen -G "$1" >/dev/null; }  # PATTERN: a file matches

# Iterative migration (test/criu/guest.sh: a kernel with soft-dirty
# tracking): criu pre-dump --track-mem while the process runs, then criu
# dump --track-mem --prev-images-dir, then the restore of the last images.
# pre-dump calls no plugin hook but init (criu/cr-dump.c
# cr_pre_dump_tasks()); the dump is the plugin's as ever.  threads as pid 1
# of its own pid namespace, as for lazy pages.
criu_predump() {  # NAME
	local name=$1 img pre plugin=(--libdir "$LIBDIR")
	case $name in *alone) plugin=() ;; esac
	if ! criu check --feature mem_dirty_track >"$W/track-check.out" 2>&1; then
		skip "$name" "this kernel cannot: criu check --feature mem_dirty_track: $(oneline "$W/track-check.out" 200)"
		kill_wait "$PID"
		return 0
	fi
	img=$D.img pre=$D.pre
	rm -rf "$img" "$pre"
	mkdir -p "$img" "$pre"
	if ! timeout -s KILL "$CRIU_TIMEOUT" criu pre-dump -t "$PID" -D "$pre" --track-mem -v4 -o pre-dump.log \
		"${plugin[@]}" >"$pre/pre-dump.out" 2>&1; then
		lazy_or_alone "$name/pre-dump" "criu pre-dump failed: $(logtail "$pre/pre-dump.log")"
		kill_wait "$PID"
		return 0
	fi
	if ! DUMP_QUIET=1 dump "$name" "$img" -- --track-mem --prev-images-dir ../"$(basename "$pre")" "${plugin[@]}"; then
		lazy_or_alone "$name/dump" "$DUMP_WHY"
		kill_wait "$PID"
		return 0
	fi
	restore "$img" "${plugin[@]}" -v4 -o restore.log
	if [ "$RC" -ne 0 ]; then
		lazy_or_alone "$name/restore" "criu restore exit $RC: $(logtail "$img/restore.log")"
		return 0
	fi
	restored_checks "$name" "after a pre-dump"
}

# criu dump --page-server: the memory goes to a criu page-server (here on
# the same machine, into a directory of its own), everything else, the
# plugin's images included, to the dump's directory; restored from the two
# put together.  threads as pid 1 of its own pid namespace.
criu_page_server() {  # NAME
	local name=$1 img pages port=$((28000 + RANDOM % 1000)) spid
	img=$D.img pages=$D.pages
	rm -rf "$pages"
	mkdir -p "$pages"
	timeout -s KILL "$CRIU_TIMEOUT" criu page-server -D "$pages" --address 127.0.0.1 --port "$port" \
		-v4 -o ps.log >"$pages/ps.out" 2>&1 &
	spid=$!
	# listening: a TCP socket in state 0A on the port (no ss in the roots)
	if ! wait_until 300 grep -qE "^ *[0-9]+: [0-9A-F]+:$(printf '%04X' "$port") [0-9A-F]+:0000 0A " /proc/net/tcp; then
		fail "$name/page-server" "criu page-server did not start: $(logtail "$pages/ps.log")"
		kill -KILL "$spid" 2>/dev/null
		kill_wait "$PID"
		return 1
	fi
	dump "$name" "$img" -- --page-server --address 127.0.0.1 --port "$port" --libdir "$LIBDIR" ||
		{ kill -KILL "$spid" 2>/dev/null; kill_wait "$PID"; return 1; }
	wait "$spid"
	if has_file "$img/pages-*.img" || ! has_file "$pages/pages-*.img"; then
		fail "$name/pages-on-server" "the pages are not where the page server is: dump $(ls "$img" | tr '\n' ' '); server $(ls "$pages" | tr '\n' ' ')"
		return 1
	fi
	cp "$pages"/pagemap-*.img "$pages"/pages-*.img "$img/"
	restore_collect "$name" "$img" "memory from the page server's directory"
}


# plugin_dir DIR FIRST SO...: DIR holding the plugins SO... (paths; copied
# under their own names), made so that criu, which loads a plugin directory
# in readdir order (criu/plugin.c cr_plugin_init()), loads the one named
# FIRST (a file name) before every other.  Creation order decides on tmpfs
# (newest first, here), the names' hashes on ext4: each SO is created first
# and last in turn and `ls -U` checked.  Status 1 when no order gives it.
plugin_dir() {
	local dir=$1 first=$2 so lead at
	shift 2
	for lead in "$@"; do
		for at in first last; do
			rm -rf "$dir"
			mkdir -p "$dir"
			[ $at = first ] && cp "$lead" "$dir/"
			for so in "$@"; do
				[ "$so" = "$lead" ] || cp "$so" "$dir/"
			done
			[ $at = last ] && cp "$lead" "$dir/"
			[ "$(ls -U "$dir" | head -n 1)" = "$first" ] && return 0
		done
	done
	return 1
}
