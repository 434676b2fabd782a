# SPDX-License-Identifier: MIT
#
# test/lib/driver.sh - the one driver of ptimer's checkpoint/restore cases,
# in the manner of CRIU's zdtm: a case is a program that sets itself up,
# says it is ready, waits to be checkpointed and restored, and checks
# itself; a flavour says only how the checkpoint is taken and where.  POSIX
# sh (bash on the host and in the Debian roots, busybox sh in the qemu
# guests), sourced after test/lib/harness.sh.
#
# The cases: test/cases/LIST, one line a case, "NAME FLAVOUR...", the
# flavours it runs in; test/cases/NAME says what the case runs (below).
# An environment prepares itself, sets the DRIVE_* variables and asks for
# the flavours it offers; every case of LIST that names one of them runs in
# it, in LIST's order:
#
#   drive_words FLAVOUR...    "drive:CASE:FLAVOUR" words, for run_cases
#   drive CASE FLAVOUR        one round: PASS/FAIL/SKIP lines
#
# Flavours (the label each check's name starts with, in brackets):
#   host            the case's own script, test/cases/CASE.sh, on the host:
#                   what a standalone ptimer owes beyond a round (refusals,
#                   controls, interrupted runs, the command line) [the
#                   script's own names]
#   ptimer          ptimer dump of the running program (setup role), the
#                   process killed, ptimer restore --mode auto into a fresh
#                   one (verify role), which checks itself [CASE.auto]
#   ptimer-exact    the same, --mode exact [CASE.exact]
#   ptimer-linear   the same, --mode linear [CASE.linear]
#   ptimer-pidns    ptimer, both processes pid 1 of a pid namespace of
#                   their own, no tid map [CASE.auto.pidns]
#   guest, guest-linear   ptimer and ptimer-linear in a qemu guest
#                   (test/qemu/guest-suite.sh) [CASE.auto, CASE.linear]
#   criu            criu dump + criu restore with the plugin (criu-mode
#                   auto), the program's criu role checks itself [CASE]
#   criu-native, criu-takeover   the plugin in that criu-mode
#                   [native-CASE, takeover-CASE]
#   criu-strict     PTIMER_STRICT=yes [strict-CASE]
#   criu-pidns      criu, the program pid 1 of its own pid namespace
#                   [CASE-pidns]
#   criu-alone      criu without the plugin: dump and restore are checked,
#                   the program's own lines are shown as "# criu alone:"
#                   notes, not counted [CASE-alone]
#   runc, crun, podman, lxc, cri-..., ctr, ...   the container runtimes,
#                   the program as a container's pid 1: listed in
#                   test/lib/flavour-containers.sh
# The criu flavours are in test/lib/flavour-criu.sh and the container ones
# in test/lib/flavour-containers.sh (bash), which those environments source.
#
# A case file (sourced; every variable is reset first):
#   CASE_PROG       the program, in DRIVE_BIN (zdtm_timers)
#   CASE_PROGS      other programs of DRIVE_BIN the case's own round runs
#                   (case_criu, case_guest): built and carried with it
#   CASE_ARGS       words after the role (zdtm_timers: the scenario)
#   CASE_TAG        the program's own prefix of its check names, replaced
#                   by the label; empty: the program takes the label as its
#                   last argument (zdtm_timers)
#   CASE_SETUP, CASE_VERIFY   the roles of the ptimer flavours (setup,
#                   verify): the source, and a fresh process of the same
#                   layout that checks itself once DIR/restored exists and
#                   prints its lines on stdout, then exits; the criu and
#                   container flavours use the role "criu"
#   CASE_PAIRS=yes  a linear restore announces its create/delete pairs
#                   and shows progress (the sparse set)
#   CASE_ALONE_XFAIL, CASE_ALONE_WHY   check names (the program's, after
#                   its tag) that criu alone fails by design, and why: in
#                   the criu-alone flavours a FAIL of one of them is an
#                   XFAIL with that reason, counted; the program's other
#                   lines stay notes
#   CASE_SAME_TIMERS=no   /proc/PID/timers is not expected the same
#                   before the dump and after a criu restore (a timer of
#                   an exited thread comes back as SIGEV_NONE)
#   CASE_SAME_TIMERS=grows   the program makes timers of its own at any
#                   time (Go: one per thread as it first runs Go code), so
#                   /proc/PID/timers may gain lines between the look before
#                   the dump and the dump, or after the restore: every line
#                   before the dump must be there after the restore
#   case_criu_dump LABEL IMG   optional: more checks of a criu dump with
#                   the plugin (IMG/dump.log)
#   case_criu CASE FLAVOUR   optional: the case's own round in the criu
#                   flavours (the criu suite's special cases: settings,
#                   failures, reuse), run instead of the common one
#   case_guest CASE FLAVOUR  the same in the guest flavours (images written
#                   as JSON, refusals; POSIX sh, busybox runs it)
#   CASE_CRIU_FLAVOURS, CASE_GUEST_FLAVOURS   the flavours case_criu and
#                   case_guest know (criu; guest): in another, a FAIL
# The role protocol (test/e2e/zdtm_timers.c): the program writes
# DIR/ROLE.pid, DIR/ROLE.tids (ptimer roles) and then DIR/ROLE.ready; exit
# 4 before ready is a SKIP (the kernel lacks something); once DIR/restored
# exists it checks itself and prints PASS/FAIL/SKIP lines (verify role: on
# stdout; criu role: to DIR/criu.result, then DIR/criu.done).
#
# The environment sets: DRIVE_CASES (the case files), DRIVE_BIN (the test
# programs), DRIVE_W (scratch: a round works in DRIVE_W/LABEL), PT (ptimer,
# for the ptimer flavours), DRIVE_TOP and DRIVE_BUILD (the checkout and the
# build directory, for the host flavour); DRIVE_TIME=1 prints "TIME LABEL WALL-S
# PTIMER-MS MODE" after each ptimer restore (the kernel matrix's table).

DRIVE_TIME=${DRIVE_TIME:-0}

# case_load NAME: reset the CASE_* variables, then read DRIVE_CASES/NAME;
# status 1 when there is no such case (neither NAME nor NAME.sh).
case_load() {
	CASE_NAME=$1 CASE_PROG=zdtm_timers CASE_PROGS= CASE_ARGS= CASE_TAG= CASE_SETUP=setup CASE_VERIFY=verify
	CASE_PAIRS=no CASE_SAME_TIMERS=yes CASE_CRIU_FLAVOURS=criu CASE_GUEST_FLAVOURS=guest
	CASE_ALONE_XFAIL= CASE_ALONE_WHY=
	unset -f case_criu_dump case_criu case_guest 2>/dev/null
	if [ -f "$DRIVE_CASES/$1" ]; then
		. "$DRIVE_CASES/$1"
	else
		# a case with only a script of its own (flavour host)
		[ -f "$DRIVE_CASES/$1.sh" ]
	fi
}

# drive_words FLAVOUR...: "drive:CASE:FLAVOUR" for every case of LIST and
# every FLAVOUR given that its line names, case by case in LIST's order;
# PTIMER_CASES="NAME..." (in the environment): those cases only.
drive_words() {
	awk -v want=" $* " -v only=" ${PTIMER_CASES:-} " '
		/^[ \t]*(#|$)/ { next }
		only != "  " && !index(only, " " $1 " ") { next }
		{ for (i = 2; i <= NF; i++) if (index(want, " " $i " ")) print "drive:" $1 ":" $i }' \
		"$DRIVE_CASES/LIST"
}

# drive_progs FLAVOUR...: the test programs (names in DRIVE_BIN) the cases
# of those flavours run, one a line, sorted: each case's CASE_PROG and the
# CASE_PROGS its own round uses.  The environments build and carry these,
# so that a new program and its case line run wherever the flavour is.
drive_progs() {
	# shellcheck disable=SC2046
	drive_progs_of $(PTIMER_CASES= drive_words "$@" | sed 's/^drive:\([^:]*\):.*/\1/')
}

# drive_progs_of CASE...: the same for the cases named.  Each case file is
# read in a subshell of its own (nounset off: a file may name the suite's
# variables at the top), so one cannot end the list.
drive_progs_of() {
	for _dp_c; do
		(
			set +u
			case_load "$_dp_c" || exit 0
			echo "$CASE_PROG"
			for _dp_p in ${CASE_PROGS:-}; do echo "$_dp_p"; done
		)
	done | sort -u
}

# The flavours there are (a LIST line naming another is a FAIL of drive_lint).
DRIVE_FLAVOURS="host ptimer ptimer-exact ptimer-linear ptimer-pidns guest guest-linear
criu criu-native criu-takeover criu-strict criu-pidns criu-alone criu-post-dump-copy
criu-page-server criu-lazy criu-lazy-alone criu-predump criu-predump-alone
runc crun podman runc-alone runc-plugin-at-dump runc-killed crun-killed lxc lxc-alone runc-move
podman-move
cri-same-pod cri-new-pod cri-alone cri-plugin-at-dump cri-stub ctr
docker docker-leave-running docker-takeover docker-takeover-leave-running docker-alone docker-network-none
incus-snapshot incus-stop incus-move incus-copy incus-unpriv-snapshot incus-unpriv-stop incus-unpriv-move incus-unpriv-copy incus-takeover-snapshot incus-takeover-stop incus-takeover-move incus-takeover-copy incus-unpriv-takeover-move incus-alone incus-alone-copy incus-unpriv-alone-copy"

# drive_lint: LIST itself: every flavour one of DRIVE_FLAVOURS, every case
# with its file (NAME, or NAME.sh for a case that runs only in host), every
# host case with its script.  PASS cases/list, or a FAIL a fault.
drive_lint() {
	awk -v known=" $(echo $DRIVE_FLAVOURS) " -v dir="$DRIVE_CASES" '
		/^[ \t]*(#|$)/ { next }
		{
			f = dir "/" $1; sh = f ".sh"
			hasf = (system("test -f \"" f "\"") == 0); hassh = (system("test -f \"" sh "\"") == 0)
			if (NF < 2) print "FAIL cases/list/" $1 ": no flavour on its line"
			for (i = 2; i <= NF; i++) {
				if (!index(known, " " $i " "))
					print "FAIL cases/list/" $1 ": unknown flavour " $i " (test/lib/driver.sh DRIVE_FLAVOURS)"
				else if ($i == "host" && !hassh)
					print "FAIL cases/list/" $1 ": flavour host, no script " sh
				else if ($i != "host" && !hasf)
					print "FAIL cases/list/" $1 ": flavour " $i ", no case file " f
			}
			n++
		}
		END { print "# cases/list: " n " cases" }' "$DRIVE_CASES/LIST" >"$DRIVE_W/lint.out"
	cat "$DRIVE_W/lint.out"
	tally "$DRIVE_W/lint.out"
	grep -q '^FAIL ' "$DRIVE_W/lint.out" || pass "cases/list: every line's case file and flavours exist"
}

# drive CASE FLAVOUR: one round of CASE in FLAVOUR.
drive() {
	if ! case_load "$1"; then
		fail "$1/$2" "no case file $DRIVE_CASES/$1 (nor $1.sh)"
		return 1
	fi
	if [ "$2" != host ] && [ ! -f "$DRIVE_CASES/$1" ]; then
		fail "$1/$2" "$1 has only a host script ($1.sh); flavour $2 needs a case file $DRIVE_CASES/$1"
		return 1
	fi
	case $2 in
	host) fl_host "$1" ;;
	ptimer) fl_ptimer "$1.auto" auto "" ;;
	ptimer-exact) fl_ptimer "$1.exact" exact "" ;;
	ptimer-linear) fl_ptimer "$1.linear" linear "" ;;
	ptimer-pidns) fl_ptimer "$1.auto.pidns" auto pidns ;;
	guest | guest-linear)
		if command -v case_guest >/dev/null 2>&1; then
			case " $CASE_GUEST_FLAVOURS " in
			*" $2 "*) case_guest "$1" "$2" ;;
			*) fail "$1/$2" "$1's round of its own (case_guest) runs in $CASE_GUEST_FLAVOURS, not $2 (CASE_GUEST_FLAVOURS)" ;;
			esac
		elif [ "$2" = guest ]; then
			fl_ptimer "$1.auto" auto ""
		else
			fl_ptimer "$1.linear" linear ""
		fi ;;
	criu | criu-*)
		if command -v fl_criu >/dev/null 2>&1; then
			fl_criu "$1" "$2"
		else
			fail "$1/$2" "the criu flavours need test/lib/flavour-criu.sh"
		fi ;;
	runc | runc-* | crun | crun-* | podman | podman-* | lxc | lxc-* | cri-* | ctr | docker | docker-* | incus-*)
		if command -v fl_container >/dev/null 2>&1; then
			fl_container "$1" "$2"
		else
			fail "$1/$2" "the container flavours need test/lib/flavour-containers.sh"
		fi ;;
	*) fail "$1/$2" "no flavour '$2' (test/lib/driver.sh)" ;;
	esac
}

# drive_start ROLE DIR [LABEL]: DRIVE_BIN/CASE_PROG ROLE CASE_ARGS DIR
# [LABEL] in the background (start_role's ROLE_WRAP and ROLE_CWD), output in
# DIR/ROLE.out; its pid in ROLE_PID (bg_add'ed).  LABEL goes only to a
# program without a CASE_TAG.
drive_start() {
	set -- "$1" "$2" "${3:-}"
	[ -n "$CASE_TAG" ] && set -- "$1" "$2" ""
	# shellcheck disable=SC2086
	(cd "${ROLE_CWD:-.}" && exec ${ROLE_WRAP:-} "$DRIVE_BIN/$CASE_PROG" "$1" $CASE_ARGS "$2" ${3:+"$3"}) \
		>"$2/$1.out" 2>&1 </dev/null &
	ROLE_PID=$!
	bg_add "$ROLE_PID"
}

# drive_ready LABEL DIR ROLE JOB: wait for DIR/ROLE.ready (120 s); a role
# that exits 4 first is a SKIP LABEL (the kernel lacks what the case needs),
# another end, or no ready in time (the job killed), a FAIL LABEL/ROLE.
# JOB must still be this shell's to wait for (disown it after).  Status 1
# unless ready.
drive_ready() {
	wait_ready "$2" "$3" "$4" 120 && return 0
	if alive "$4"; then
		reap "$4"
		fail "$1/$3" "$CASE_PROG $3 $CASE_ARGS did not get ready in 120 s: $(oneline "$2/$3.out")"
		return 1
	fi
	wait "$4" 2>/dev/null
	_d_rc=$?
	if [ "$_d_rc" -eq 4 ]; then
		skip "$1" "$(oneline "$2/$3.out")"
	else
		fail "$1/$3" "$CASE_PROG $3 $CASE_ARGS exited $_d_rc: $(oneline "$2/$3.out")"
	fi
	return 1
}

# drive_lines FILE LABEL [TAG]: FILE's PASS/FAIL/SKIP lines, printed and
# counted; with TAG (a program's own prefix, CASE_TAG), TAG/ replaced by
# H_PREFIX LABEL/.
drive_lines() {
	if [ -n "${3:-}" ]; then
		sed -E "s#^($H_STATUS) $3/#\\1 $H_PREFIX$2/#" "$1" | grep -E "^($H_STATUS) " >"$1.lines"
	else
		grep -E "^($H_STATUS) " "$1" >"$1.lines"
	fi
	cat "$1.lines"
	tally "$1.lines"
	return 0
}

# drive_collect LABEL STATEDIR [TAG]: let a restored criu role check itself
# (touch STATEDIR/restored), wait for STATEDIR/criu.done (60 s), then print
# and count STATEDIR/criu.result's lines (drive_lines).  Status 1, with a
# FAIL LABEL/verify, when it never came.
drive_collect() {
	touch "$2/restored"
	if ! wait_until 600 test -e "$2/criu.done"; then
		fail "$1/verify" "the restored program wrote no criu.done: $(oneline "$2/criu.out")"
		return 1
	fi
	drive_lines "$2/criu.result" "$1" "${3:-}"
}

# ---- what the ptimer flavours look at ----------------------------------------

# ids_of_json FILE: the timer IDs of a `ptimer show --json`, sorted, one line.
ids_of_json() { grep -oE '"id" *: *-?[0-9]+' "$1" | grep -oE -- '-?[0-9]+' | sort -n | tr '\n' ' '; }

# snapshot PID FILE-PREFIX: maps and timers of a process, for "untouched".
snapshot() {
	cat "/proc/$1/maps" >"$2.maps"
	cat "/proc/$1/timers" >"$2.timers"
}

# untouched NAME PID FILE-PREFIX: maps and timers as in the snapshot, running.
untouched() {
	cat "/proc/$2/maps" >"$3.maps.after"
	cat "/proc/$2/timers" >"$3.timers.after"
	if ! cmp -s "$3.maps" "$3.maps.after"; then
		fail "$1-maps-unchanged" "/proc/$2/maps changed: $(diff "$3.maps" "$3.maps.after" | grep '^[<>]' | head -n 3 | tr '\n' ' ')"
	else
		pass "$1-maps-unchanged"
	fi
	if ! cmp -s "$3.timers" "$3.timers.after"; then
		fail "$1-timers-unchanged" "/proc/$2/timers changed: $(grep -c '^ID:' "$3.timers") timers before, $(grep -c '^ID:' "$3.timers.after") after; first new: $(diff "$3.timers" "$3.timers.after" | grep '^>' | head -n 2 | tr '\n' ' ')"
	else
		pass "$1-timers-unchanged"
	fi
	if _d_why=$(not_stopped "$2"); then pass "$1-not-stopped"; else fail "$1-not-stopped" "$_d_why"; fi
}

# tidmap DIR [SETUP VERIFY]: --tid-map for every thread but the leader,
# from the SETUP role's to the VERIFY role's (DIR/setup.tids and
# DIR/verify.tids by default: one tid a line, leader first); nothing when
# the roles wrote no tids (a single-threaded program).
tidmap() {
	[ -f "$1/${2:-setup}.tids" ] && [ -f "$1/${3:-verify}.tids" ] || return 0
	paste "$1/${2:-setup}.tids" "$1/${3:-verify}.tids" | awk 'NR > 1 && $1 && $2 { printf " --tid-map %s=%s", $1, $2 }'
}

# show_roundtrip LABEL DIR IMG SRC-TIMERS: `ptimer show --json` of DIR names
# the timers /proc named (SRC-TIMERS), and `ptimer encode` of that JSON
# gives the image back (the same bytes, or the same show --json).
show_roundtrip() {
	mkdir -p "$2/rt"
	ptimer_run "$2/rt/show.json" 60 show "$2" --json
	if [ "$PT_RC" -ne 0 ]; then
		fail "$1/show-json" "ptimer show $2 --json: exit $PT_RC: $(oneline "$2/rt/show.json.err")"
		return
	fi
	_d_want=$(ids_of_proc "$4")
	_d_got=$(ids_of_json "$2/rt/show.json")
	check "$1/show-json-ids" "ids in show --json differ from /proc's: got '$(echo "$_d_got" | cut -c1-120)', want '$(echo "$_d_want" | cut -c1-120)'" \
		[ "$_d_got" = "$_d_want" ]
	ptimer_run "$2/rt/encode.out" 60 encode -i "$2/rt/show.json" -o "$2/rt/re.img"
	if [ "$PT_RC" -ne 0 ]; then
		fail "$1/encode-roundtrip" "ptimer encode -i show.json: exit $PT_RC: $(oneline "$2/rt/encode.out.err")"
	elif cmp -s "$3" "$2/rt/re.img"; then
		pass "$1/encode-roundtrip"
	else
		ptimer_run "$2/rt/show2.json" 60 show "$2/rt/re.img" --json
		if cmp -s "$2/rt/show.json" "$2/rt/show2.json"; then
			pass "$1/encode-roundtrip"
			info "$1: re-encoded image differs in bytes, show --json identical"
		else
			fail "$1/encode-roundtrip" "show --json of the re-encoded image differs: $(diff "$2/rt/show.json" "$2/rt/show2.json" | head -n 4 | tr '\n' ' ')"
		fi
	fi
	rm -f "$2/rt/re.img"
}

# timeline LABEL T0 T1 RESTORE-OUT: "TIME LABEL WALL-S PTIMER-MS MODE", the
# last two from ptimer's "...: linear mode, 440.926 ms (...)" line.
timeline() {
	echo "TIME $1 $(elapsed "$2" "$3") $(sed -n 's/.*: \([A-Za-z-]*\) mode, \([0-9.]*\) ms.*/\2 \1/p' "$4" | head -n 1)"
}

# progress_shown LABEL DIR: a linear restore whose create loop lasted
# ptimer's 3 s progress interval (core/restore.c run_restore) or more has
# shown progress (NN%) on stderr; one that ended sooner may not have.  The
# loop's time is ptimer's own ("linear mode: N create/delete pairs in X
# ms"), on the clock its rule uses: the restore's wall time also holds
# ptimer's start and the target's setup, which a busy machine stretches.
progress_shown() {
	local ms
	ms=$(sed -nE 's/^linear mode: [0-9]+ create\/delete pairs in ([0-9.]+) ms$/\1/p' "$2/restore.out" | head -n 1)
	if [ -z "$ms" ]; then
		fail "$1/shows-progress" "no 'linear mode: N create/delete pairs in X ms' line: $(oneline "$2/restore.out")"
	elif grep -q '[0-9]%' "$2/restore.out.err"; then
		pass "$1/shows-progress (loop $ms ms)"
	elif awk -v m="$ms" 'BEGIN { exit !(m < 3000) }'; then
		skip "$1/shows-progress" "the create loop took $ms ms, under the 3 s progress interval"
	else
		fail "$1/shows-progress" "the create loop took $ms ms, no NN% on stderr: $(oneline "$2/restore.out.err")"
	fi
}

# pairs_shown LABEL DIR: a linear restore says its cost (the number of
# create/delete pairs) on its first line, and its progress (progress_shown).
pairs_shown() {
	check "$1/announces-pairs" "the first line on stderr does not give the number of create/delete pairs: $(head -n 1 "$2/restore.out.err" | cut -c1-200)" \
		grep -q pairs "$2/restore.out.err.1"
	progress_shown "$1" "$2"
}

# ---- the ptimer flavours ------------------------------------------------------

# fl_host CASE: the case's own script on the host, DRIVE_CASES/CASE.sh, run
# as `bash DRIVE_CASES/CASE.sh DRIVE_BUILD` from the top of the checkout
# (DRIVE_TOP), a process of its own, killed after 900 s; its PASS/FAIL/SKIP
# lines shown and counted.  A script that exits non-zero without a FAIL
# line, or is killed, is one FAIL.
fl_host() {
	_d_out=$DRIVE_W/host.$1.out
	if [ ! -f "$DRIVE_CASES/$1.sh" ]; then
		fail "$1" "no script $DRIVE_CASES/$1.sh for the host flavour"
		return 1
	fi
	{ (cd "$DRIVE_TOP" && timeout -k 10 900 bash "$DRIVE_CASES/$1.sh" "$DRIVE_BUILD") </dev/null 2>&1
		echo "$?" >"$_d_out.rc"; } |
		tee "$_d_out"
	tally "$_d_out"
	_d_rc=$(cat "$_d_out.rc")
	if [ "$_d_rc" -eq 124 ] || [ "$_d_rc" -eq 137 ]; then
		fail "$1/exit" "$DRIVE_CASES/$1.sh did not end within 900 s (killed)"
	elif [ "$_d_rc" -ne 0 ] && ! grep -q '^FAIL ' "$_d_out"; then
		fail "$1/exit" "$DRIVE_CASES/$1.sh exited with status $_d_rc and printed no FAIL line"
	fi
	return 0
}

# fl_ptimer LABEL MODE [pidns]: the case's setup role, ptimer dump (the
# source untouched, the image what /proc said and what show --json |
# encode gives back), the process killed, a fresh verify role, ptimer
# restore --mode MODE into it (tids mapped; none in pid namespaces, where
# both have tids 1, 2, ...: the tid /proc prints is the mount's view), the target
# not left stopped, then the verify role's own checks.
fl_ptimer() {
	local label=$1 mode=$2 ns=$3 dir="$DRIVE_W/$1" spid vpid sjob vjob img t0 t1 map ROLE_WRAP=
	rm -rf "$dir"
	mkdir -p "$dir"
	# /proc stays the parent's: ROLE_PID is unshare's pid, to wait for;
	# DIR/ROLE.pid has the process's pid as this /proc sees it
	[ "$ns" = pidns ] && ROLE_WRAP="unshare -pf"
	drive_start "$CASE_SETUP" "$dir"
	sjob=$ROLE_PID
	drive_ready "$label" "$dir" "$CASE_SETUP" "$sjob" || return
	spid=$(cat "$dir/$CASE_SETUP.pid")
	snapshot "$spid" "$dir/src"

	t0=$(now)
	ptimer_run "$dir/dump.out" 120 dump -t "$spid" -D "$dir"
	t1=$(now)
	img="$dir/ptimers-$spid.img"
	[ "$ns" = pidns ] && img="$dir/ptimers-1.img"
	if [ "$PT_RC" -ne 0 ] || [ ! -f "$img" ]; then
		fail "$label/dump" "ptimer dump -t $spid -D $dir: exit $PT_RC, image $([ -f "$img" ] && echo present || echo missing): $(oneline "$dir/dump.out.err")"
		reap "$spid" "$sjob"
		return
	fi
	pass "$label/dump"
	info "$label: dump $(elapsed "$t0" "$t1") s: $(oneline "$dir/dump.out")"
	# dumping leaves the process as it was: running, same maps, same timers
	untouched "$label/dump-source" "$spid" "$dir/src"
	show_roundtrip "$label" "$dir" "$img" "$dir/src.timers"
	reap "$spid" "$sjob"

	drive_start "$CASE_VERIFY" "$dir" "$H_PREFIX$label"
	vjob=$ROLE_PID
	drive_ready "$label" "$dir" "$CASE_VERIFY" "$vjob" || return
	vpid=$(cat "$dir/$CASE_VERIFY.pid")
	map=
	[ "$ns" = pidns ] || map=$(tidmap "$dir" "$CASE_SETUP" "$CASE_VERIFY")
	t0=$(now)
	# shellcheck disable=SC2086
	ptimer_run "$dir/restore.out" 300 restore -t "$vpid" -D "$dir" --mode "$mode" $map
	t1=$(now)
	head -n 1 "$dir/restore.out.err" >"$dir/restore.out.err.1"
	if [ "$PT_RC" -ne 0 ]; then
		fail "$label/restore" "ptimer restore -t $vpid -D $dir --mode $mode$map: exit $PT_RC: $(oneline "$dir/restore.out.err")"
		reap "$vpid" "$vjob"
		return
	fi
	pass "$label/restore"
	info "$label: restore $(elapsed "$t0" "$t1") s: $(oneline "$dir/restore.out") | stderr: $(oneline "$dir/restore.out.err" 200)"
	[ "$DRIVE_TIME" = 1 ] && timeline "$label" "$t0" "$t1" "$dir/restore.out"
	if _d_why=$(not_stopped "$vpid"); then pass "$label/target-not-stopped"; else fail "$label/target-not-stopped" "$_d_why"; fi
	[ "$mode" = linear ] && [ "$CASE_PAIRS" = yes ] && pairs_shown "$label" "$dir"
	finish_verify "$dir" "$vjob" "$CASE_VERIFY" "$label" "$CASE_TAG"
}

# refused NAME OUT [WORD...]: ptimer (PT_RC, OUT.err) exited non-zero, not
# by a timeout or a signal, with exactly one line on stderr: NAME-refused,
# NAME-one-line-error; with WORDs, NAME-names-ids: the line names each.
# Status 1 when it was not refused.
refused() {
	local name=$1 out=$2 n w ok=1
	shift 2
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
	[ $# -eq 0 ] && return 0
	for w; do grep -qw -- "$w" "$out.err" || ok=0; done
	check "$name-names-ids" "stderr does not name all of '$*': $(oneline "$out.err")" [ "$ok" = 1 ]
	return 0
}

# ---- hand-written images (the guests' own cases) -------------------------------

# encode_json NAME DIR JSON-FILE: DIR/ptimers-4242.img from a hand-written
# JSON image; FAIL NAME/encode when ptimer encode refuses it.
encode_json() {
	ptimer_run "$2/encode.out" 30 encode -i "$3" -o "$2/ptimers-4242.img"
	[ "$PT_RC" -eq 0 ] && return 0
	fail "$1/encode" "ptimer encode -i $3: exit $PT_RC: $(oneline "$2/encode.out.err")"
	return 1
}

# timer_json ID CLOCK NOTIFY SIGNO SIVAL VSEC ISEC: one image timer (pid 4242)
timer_json() {
	printf '{"id":%s,"clock_id":%s,"sigev_notify":%s,"signo":%s,"sival":%s,"notify_tid":4242,"it_value":{"sec":%s,"nsec":0},"it_interval":{"sec":%s,"nsec":0},"overrun":0}' "$@"
}

# fields FILE: "id clock notify signo sival isec insec vsec" per timer of a
# `ptimer show --json` (one key a line)
fields() {
	awk -F': *' '
	function v(s) { gsub(/[ ,"]/, "", s); return s }
	/"id":/ { id = v($2) } /"clock_id":/ { c = v($2) } /"sigev_notify":/ { n = v($2) }
	/"signo":/ { s = v($2) } /"sival":/ { sv = v($2) }
	/"it_value":/ { w = "v" } /"it_interval":/ { w = "i" }
	/"sec":/ { sec[w] = v($2) } /"nsec":/ { nsec[w] = v($2) }
	/"overrun":/ { print id, c, n, s, sv, sec["i"], nsec["i"], sec["v"] }' "$1"
}

# check_restored NAME DIR VPID: VPID holds the timers of DIR/want.f (fields
# of the image), by /proc/VPID/timers and by dumping VPID again: every field
# as in the image, values not larger and still armed.
check_restored() {
	local name=$1 dir=$2 vpid=$3 ids want
	want=$(awk '{ print $1 }' "$dir/want.f" | sort -n | tr '\n' ' ')
	ids=$(ids_of_proc "/proc/$vpid/timers")
	[ "$ids" = "$want" ] && pass "$name/ids" || fail "$name/ids" "/proc/$vpid/timers: '$(echo "$ids" | cut -c1-120)', want '$(echo "$want" | cut -c1-120)'"
	mkdir -p "$dir/again"
	ptimer_run "$dir/again/dump.out" 60 dump -t "$vpid" -D "$dir/again"
	if [ "$PT_RC" -ne 0 ]; then
		fail "$name/redump" "exit $PT_RC: $(oneline "$dir/again/dump.out.err")"
	else
		ptimer_run "$dir/got.json" 30 show "$dir/again" --json
		fields "$dir/got.json" >"$dir/got.f"
		# all but the value equal; the value at most what it was, > want - 300 s
		if awk 'NR == FNR { w[$1] = $0; wv[$1] = $8; next }
			{ g = $0; sub(/ [^ ]*$/, "", g); x = w[$1]; sub(/ [^ ]*$/, "", x)
			  if (g != x || $8 > wv[$1] || $8 < wv[$1] - 300) { print "timer " $1 ": got " $0 ", want " w[$1]; bad = 1; exit }
			  n++ }
			END { if (!bad && n != length(w)) { print n " timers, want " length(w); bad = 1 } exit bad }' \
			"$dir/want.f" "$dir/got.f" >"$dir/cmp.out"; then
			pass "$name/fields"
		else
			fail "$name/fields" "$(oneline "$dir/cmp.out")"
		fi
	fi
}
