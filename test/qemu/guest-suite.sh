#!/bin/sh
# SPDX-License-Identifier: MIT
#
# test/qemu/guest-suite.sh - ptimer end to end inside one guest kernel of the
# matrix (test/qemu/matrix.sh), under busybox sh: test/cases/LIST's rounds in
# the guest flavours (guest: --mode auto; guest-linear where the kernel has
# the exact-ID prctl) through the case driver (test/lib/driver.sh), then the
# guest's own cases: images written as JSON (a counter at 5, the sparse
# sets, the far-ID timers) restored into an empty target and checked by
# /proc and by a second dump.
#
# Output lines (to stdout, the serial console):
#   1..N                                             the plan: N cases
#   PASS NAME | FAIL NAME: WHY | SKIP NAME: WHY     one check each
#   ok K CASE | not ok K CASE                        after each case
#   FEATURE KEY VALUE                                for the kernel table
#   TIME NAME WALL-S PTIMER-MS MODE                  restore times
#   # ...                                            information
#   # guest: N passed, N failed, N skipped           the totals, last
#
# Environment: PTIMER_DIR (where ptimer, zdtm_timers, kprobe are; /ptimer),
# SPARSE_MAX (the largest ID of the sparse set; 100000), FAR_ID (the far-ID
# case's first ID, the second is twice it; 1000000: test/qemu/matrix.sh
# sizes it down on guests that TCG emulates slowly, arm64).  Needs root.
# test/lib/harness.sh and driver.sh, and test/cases, are in $PTIMER_DIR
# (test/qemu/initramfs.sh puts them there).
set -u
D=${PTIMER_DIR:-/ptimer}
PT=$D/ptimer
ZT=$D/zdtm_timers
KP=$D/kprobe
SPARSE_MAX=${SPARSE_MAX:-100000}
FAR_ID=${FAR_ID:-1000000}
T=$(mktemp -d /tmp/suite.XXXXXX)

# the busybox date has no %N: the clock is kprobe's (test/qemu/kprobe.c)
H_CLOCK="$KP now"
# one CPU: look less often than on the host, each look takes it from the target
H_POLL=0.05
. "$D/harness.sh"
DRIVE_CASES=$D/cases DRIVE_BIN=$D DRIVE_W=$T DRIVE_TIME=1
. "$D/driver.sh"

# encode NAME DIR JSON-FILE: DIR/ptimers-4242.img from the JSON
encode() {
	ptimer_run "$2/encode.out" 30 encode -i "$3" -o "$2/ptimers-4242.img"
	[ "$PT_RC" -eq 0 ] && return 0
	fail "$1/encode" "ptimer encode -i $3: exit $PT_RC: $(oneline "$2/encode.out.err")"
	return 1
}

# timer_json ID CLOCK NOTIFY SIGNO SIVAL VSEC ISEC: one image timer (pid 4242)
timer_json() {
	printf '{"id":%s,"clock_id":%s,"sigev_notify":%s,"signo":%s,"sival":%s,"notify_tid":4242,"it_value":{"sec":%s,"nsec":0},"it_interval":{"sec":%s,"nsec":0},"overrun":0}' "$@"
}

# refused NAME OUT IDS...: ptimer exited non-zero (not a timeout), one line
# on stderr, naming every ID
refused() {
	local name=$1 out=$2 w ok=1
	shift 2
	if [ "$PT_RC" -eq 0 ] || [ "$PT_RC" -ge 124 ]; then
		fail "$name/refused" "ptimer exit $PT_RC, want a refusal: $(oneline "$out.err")"
		return
	fi
	pass "$name/refused"
	info "$name: exit $PT_RC: $(oneline "$out.err")"
	[ "$(grep -c . "$out.err")" -eq 1 ] && pass "$name/one-line-error" ||
		fail "$name/one-line-error" "$(grep -c . "$out.err") lines: $(oneline "$out.err")"
	for w; do grep -qw -- "$w" "$out.err" || ok=0; done
	[ "$ok" = 1 ] && pass "$name/names-ids" || fail "$name/names-ids" "stderr does not name all of '$*': $(oneline "$out.err")"
}

# ---- the cases ------------------------------------------------------------------

# The linear-counter case (test/e2e/fixtures/linear-counter.json): a target whose counter stands at 5,
# an image with IDs 0, 3, 9.  Exact kernels restore all three; linear mode
# must refuse before it creates anything, naming 0 and 3.
case_counter() {
	local mode=$1 name="counter-at-5.$1" dir="$T/counter.$1" vpid sc=offset-empty
	mkdir -p "$dir"
	{
		printf '{"version":1,"pid":4242,"timers":['
		timer_json 0 1 1 0 0 1000 0; printf ','
		timer_json 3 0 0 37 51 1000 0; printf ','
		printf '{"id":9,"clock_id":1,"sigev_notify":0,"signo":43,"sival":153,"notify_tid":4242,"it_value":{"sec":0,"nsec":100000000},"it_interval":{"sec":0,"nsec":100000000},"overrun":0}'
		printf ']}\n'
	} >"$dir/img.json"
	encode "$name" "$dir" "$dir/img.json" || return
	[ "$mode" = auto ] && [ "$EXACT" = 1 ] && sc=offset-target
	start_role verify "$sc" "$dir" "$name"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" 60 || { fail "$name/target" "$(oneline "$dir/verify.out")"; reap "$vpid"; return; }
	ptimer_run "$dir/restore.out" 120 restore -t "$vpid" -D "$dir" --mode "$mode"
	if [ "$sc" = offset-target ]; then
		[ "$PT_RC" -eq 0 ] && pass "$name/restore" || fail "$name/restore" "exit $PT_RC: $(oneline "$dir/restore.out.err")"
		[ "$(ids_of_proc "/proc/$vpid/timers")" = "0 3 9 " ] && pass "$name/ids-0-3-9" ||
			fail "$name/ids-0-3-9" "/proc/$vpid/timers has '$(ids_of_proc "/proc/$vpid/timers")'"
		finish_verify "$dir" "$vpid"
		return
	fi
	refused "$name" "$dir/restore.out" 0 3
	[ ! -s "/proc/$vpid/timers" ] && pass "$name/nothing-left" ||
		fail "$name/nothing-left" "/proc/$vpid/timers holds '$(ids_of_proc "/proc/$vpid/timers")'"
	reap "$vpid"
}

# Counter at 5, an image with IDs 6 and 9: reachable by the linear loop.
case_counter_reachable() {
	local name=counter-at-5.reachable dir="$T/counter-reachable" vpid ids
	mkdir -p "$dir"
	{
		printf '{"version":1,"pid":4242,"timers":['
		timer_json 6 1 1 0 0 1000 0; printf ','
		timer_json 9 0 0 40 99 1000 5
		printf ']}\n'
	} >"$dir/img.json"
	encode "$name" "$dir" "$dir/img.json" || return
	start_role verify offset-empty "$dir" "$name"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" 60 || { fail "$name/target" "$(oneline "$dir/verify.out")"; reap "$vpid"; return; }
	ptimer_run "$dir/restore.out" 120 restore -t "$vpid" -D "$dir" --mode auto
	ids=$(ids_of_proc "/proc/$vpid/timers")
	[ "$PT_RC" -eq 0 ] && [ "$ids" = "6 9 " ] && pass "$name/ids-6-9" ||
		fail "$name/ids-6-9" "exit $PT_RC, ids '$ids': $(oneline "$dir/restore.out.err")"
	reap "$vpid"
}

# threads: restore without --tid-map must refuse, naming the missing tid.
case_thread_no_map() {
	local name=threads.no-tid-map dir="$T/threads.auto" vpid s2
	[ -f "$dir/setup.tids" ] || { skip "$name" "no threads image"; return; }
	mkdir -p "$T/nomap"
	cp "$dir"/ptimers-*.img "$T/nomap/"
	s2=$(sed -n 2p "$dir/setup.tids")
	start_role verify empty2 "$T/nomap" "$name"
	vpid=$ROLE_PID
	wait_ready "$T/nomap" verify "$vpid" 60 || { fail "$name/target" "$(oneline "$T/nomap/verify.out")"; reap "$vpid"; return; }
	ptimer_run "$T/nomap/restore.out" 60 restore -t "$vpid" -D "$T/nomap" --mode auto
	refused "$name" "$T/nomap/restore.out" "$s2"
	[ ! -s "/proc/$vpid/timers" ] && pass "$name/nothing-left" ||
		fail "$name/nothing-left" "/proc/$vpid/timers holds '$(ids_of_proc "/proc/$vpid/timers")'"
	reap "$vpid"
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

# The sparse set: NS timers, IDs spread up to MAX, mixed clocks and kinds,
# from an encoded image into an empty target (--mode MODE).  Checked by
# /proc/PID/timers and by dumping the target again: every field as in the
# image, values not larger and still armed.
case_sparse() {
	local mode=$1 max=$2 ns=$3 name="sparse$2.$1" dir="$T/sparse.$1.$2" vpid t0 t1 i id step
	mkdir -p "$dir"
	step=$((max / (ns - 1)))
	{
		printf '{"version":1,"pid":4242,"timers":['
		i=0
		while [ "$i" -lt "$ns" ]; do
			id=$((i * step))
			[ "$i" -eq $((ns - 1)) ] && id=$max
			[ "$i" -gt 0 ] && printf ','
			# clocks REALTIME, MONOTONIC, BOOTTIME; SIGEV_SIGNAL / NONE
			timer_json "$id" "$(echo "0 1 7" | cut -d' ' -f$((i % 3 + 1)))" $((i % 2)) \
				$((34 + i % 20)) $((id * 3 + 1)) $((2000 + i * 10)) $((i % 4))
			i=$((i + 1))
		done
		printf ']}\n'
	} >"$dir/img.json"
	encode "$name" "$dir" "$dir/img.json" || return
	ptimer_run "$dir/want.json" 30 show "$dir" --json
	fields "$dir/want.json" >"$dir/want.f"
	start_role verify empty "$dir" "$name"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" 60 || { fail "$name/target" "$(oneline "$dir/verify.out")"; reap "$vpid"; return; }
	t0=$(now)
	ptimer_run "$dir/restore.out" 400 restore -t "$vpid" -D "$dir" --mode "$mode"
	t1=$(now)
	if [ "$PT_RC" -ne 0 ]; then
		fail "$name/restore" "ptimer restore --mode $mode: exit $PT_RC: $(oneline "$dir/restore.out.err")"
		reap "$vpid"
		return
	fi
	pass "$name/restore"
	timeline "$name" "$t0" "$t1" "$dir/restore.out"
	info "$name: $(oneline "$dir/restore.out") | stderr: $(head -1 "$dir/restore.out.err" | cut -c1-160) ... $(tail -1 "$dir/restore.out.err" | cut -c1-120)"
	check_restored "$name" "$dir" "$vpid"
	reap "$vpid"
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

# sparse-million (one timer at ID 2,000,000) where setup cannot make it (no
# prctl): the image of zdtm_timers' sparse scenario written as JSON,
# restored into its verify role, which checks every field.  2,000,001
# create/delete pairs.  Sized down (FAR_ID below 1,000,000: IDs FAR_ID and
# 2 * FAR_ID, the same two timers otherwise) the target is an empty one and
# the timers are checked as the sparse set's are (check_restored).
case_sparse_million() {
	local name=sparse-million.auto dir="$T/sparse-million" vpid t0 t1 far2=$((FAR_ID * 2)) role=sparse
	mkdir -p "$dir"
	{
		printf '{"version":1,"pid":4242,"timers":['
		timer_json "$FAR_ID" 1 0 34 "$FAR_ID" 1000 0; printf ','
		timer_json "$far2" 0 1 0 "$far2" 2000 5
		printf ']}\n'
	} >"$dir/img.json"
	encode "$name" "$dir" "$dir/img.json" || return
	if [ "$FAR_ID" -ne 1000000 ]; then
		role=empty
		info "$name: sized down: IDs $FAR_ID and $far2, not 1,000,000 and 2,000,000"
		ptimer_run "$dir/want.json" 30 show "$dir" --json
		fields "$dir/want.json" >"$dir/want.f"
	fi
	start_role verify "$role" "$dir" "$name"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" 60 || { fail "$name/target" "$(oneline "$dir/verify.out")"; reap "$vpid"; return; }
	t0=$(now)
	ptimer_run "$dir/restore.out" 400 restore -t "$vpid" -D "$dir" --mode auto
	t1=$(now)
	if [ "$PT_RC" -ne 0 ]; then
		fail "$name/restore" "ptimer restore --mode auto: exit $PT_RC: $(oneline "$dir/restore.out.err")"
		reap "$vpid"
		return
	fi
	pass "$name/restore"
	timeline "$name" "$t0" "$t1" "$dir/restore.out"
	info "$name: $(oneline "$dir/restore.out")"
	# the cost said up front, progress shown meanwhile
	head -1 "$dir/restore.out.err" | grep -q pairs && pass "$name/announces-pairs" ||
		fail "$name/announces-pairs" "first stderr line: $(head -1 "$dir/restore.out.err" | cut -c1-200)"
	# ptimer prints progress every few seconds (core/restore.c): a quick
	# restore may end before the first line
	if grep -q '[0-9]%' "$dir/restore.out.err"; then
		pass "$name/shows-progress"
	elif awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a < 5) }'; then
		skip "$name/shows-progress" "restore took $(elapsed "$t0" "$t1") s, under 5 s: progress lines may not come"
	else
		fail "$name/shows-progress" "restore took $(elapsed "$t0" "$t1") s, no NN% on stderr: $(oneline "$dir/restore.out.err")"
	fi
	if [ "$role" = empty ]; then
		check_restored "$name" "$dir" "$vpid"
		reap "$vpid"
	else
		finish_verify "$dir" "$vpid"
	fi
}

# ---- main ---------------------------------------------------------------------

info "guest kernel $(uname -r), $(nproc) cpu, ptimer $PT"
for f in "$PT" "$ZT" "$KP"; do
	[ -x "$f" ] || { fail "guest/setup" "$f missing"; exit 1; }
done
"$KP" features 20000 >"$T/features" 2>&1
cat "$T/features"
"$PT" check >"$T/check" 2>&1
sed 's/^/# check: /' "$T/check"
echo "FEATURE check_prctl $(grep 'exact timer IDs' "$T/check" | head -1 | tr -s ' ')"
EXACT=0
grep -q '^FEATURE prctl77 [01]$' "$T/features" && EXACT=1
info "exact IDs: $EXACT (auto takes $([ "$EXACT" = 1 ] && echo exact || echo linear) mode)"

# ptimer check and the probe must agree on the prctl
case_check() {
	local c=0
	grep 'exact timer IDs' "$T/check" | grep -q ' yes ' && c=1
	[ "$c" = "$EXACT" ] && pass "check/prctl-agrees" ||
		fail "check/prctl-agrees" "ptimer check says '$(grep 'exact timer IDs' "$T/check" | tr -s ' ')', kprobe: $(grep prctl77 "$T/features")"
}

# test/cases/LIST's rounds in the flavours a guest offers (guest; and
# guest-linear where the exact-ID prctl makes linear mode a choice, not the
# only way), then the guest's own cases, as run_cases takes them
flavours=guest
[ "$EXACT" = 1 ] && flavours="guest guest-linear"
# shellcheck disable=SC2046
set -- case_check $(drive_words $flavours) case_thread_no_map
[ "$EXACT" = 1 ] || set -- "$@" case_sparse_million
set -- "$@" "case_sparse:auto:$SPARSE_MAX:64"
[ "$EXACT" = 1 ] && set -- "$@" "case_sparse:linear:$SPARSE_MAX:64"
set -- "$@" case_counter:auto case_counter:linear case_counter_reachable
run_cases "$@"
rm -rf "$T"
totals guest
