#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/bench.sh BUILD - restore benchmarks, printed as ratios from one run
# (medians; the perf workloads below):
#   (a) 50,000 timers: a process creating and arming them itself with the
#       exact-ID prctl vs `ptimer restore` of them into a fresh process
#       (wall time of the whole command); goal <= 1.5
#   (b) 2048 timers with IDs 512 apart vs 2048 dense IDs, ptimer restore;
#       goal <= 1.5
#   (c) the same two with --mode linear (create/delete until each ID)
#   (d) the sparse-million pair (IDs 1,000,000 and 2,000,000), --mode linear
#   (e) real criu (test/criu/suite.sh bench, cached Debian roots): `criu
#       restore` wall time of the sparse sets (2048 timers 512 apart, 100
#       timers 100,000 apart) with criu 4.1.1 alone, 4.1.1 + the plugin,
#       4.2.1 alone, 4.2.1 + the plugin (medians of 3 runs, up to 11 while
#       their sum stays under 3 s; a run over 20 s is
#       not repeated); goal (4.1.1 + plugin) / (4.2.1 alone) <= 1.0: with
#       the plugin Debian 13's criu restores them as fast as 4.2.1 alone.
#       PTIMER_SKIP_CRIU=1 leaves it out, and (f) and (h) too.
#   (f) containers (test/containers/bench.sh): runc checkpoint and restore
#       with and without the plugin, criu 4.1.1 and 4.2.1, as ratios.
#   (g) 50,000 timers: `ptimer dump` against one plain read of
#       /proc/PID/timers of the same process plus the process's own
#       timer_gettime of every timer (the kernel's floor: a dumper needs
#       both, and the kernel's timer lookup by ID is a hash walk)
#   (i) 1,000 timers aimed at a second thread, which `ptimer dump` makes
#       expire once each to tell the thread from a new one with its number,
#       against 1,000 aimed at the leader, which it does not: the ratio.
#   (h) real criu, one small process (7 timers) and process trees (300 x
#       0 timers, 300 x 1, 4 x 20,000): whole `criu dump` and `criu
#       restore -d` (-v3), criu alone and with the plugin (its default,
#       criu-mode auto) in turn, medians of 5 (25 for the small one),
#       ratios; on 4.2.1 also criu-mode takeover.  Goals: <= 1.05 where
#       the plugin has nothing to take over (4.2.1, auto), <= 1.10 where it
#       restores timers (4.1.1, takeover).  Beside them the plugin's own
#       time per phase (init, the task calls, exit), from its line in
#       criu's log.
# Takes about a minute and a half, plus (e): up to 5 minutes (plus about 3
# the first time, to build the roots).  Needs root.

set -u

BUILD=${1:-build}
B=$(cd "$BUILD" && pwd) || exit 1
PT=$B/ptimer
BS=$B/test/bench_self
ZT=$B/test/zdtm_timers
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-bench.XXXXXX")
. "$(dirname "$0")/lib/harness.sh"

cleanup() {
	local rc=$?
	bg_kill
	rm -rf "$TMP"
	# a helper called that no file defines: the run did less than it says
	missing_helpers || [ "$rc" -ne 0 ] || exit 1
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

die() { echo "bench: $*" >&2; exit 1; }
for f in "$PT" "$BS" "$ZT"; do [ -x "$f" ] || die "$f missing: run 'make tests'"; done

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }'; }
goal() { awk -v r="$1" -v g="$2" 'BEGIN { print (r <= g) ? "met" : "NOT met" }'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.1f ms", s * 1000 }'; }

# self_create N STRIDE DIR: a bench_self that created its own timers; pid in
# SELF_PID, the creation time in DIR/self.time.
self_create() {
	mkdir -p "$3"
	"$BS" create "$1" "$2" "$3" </dev/null >"$3/out" 2>&1 &
	SELF_PID=$!
	bg_add "$SELF_PID"
	wait_file "$3/ready" "$SELF_PID" 60 || die "bench_self create $1 $2: $(cat "$3/out")"
}

# image_of N STRIDE NAME: dump a bench_self holding the timers; DIR in IMG.
image_of() {
	local dir="$TMP/$3"
	self_create "$1" "$2" "$dir"
	"$PT" dump -t "$SELF_PID" -D "$dir" >"$dir/dump.out" 2>&1 || die "ptimer dump: $(cat "$dir/dump.out")"
	reap "$SELF_PID"
	IMG=$dir
}

# restore_once DIR ARGS...: ptimer restore into a fresh bench_self target;
# prints the wall seconds; ptimer's stdout in DIR/last.out.
restore_once() {
	local dir=$1 t="$TMP/target.$RANDOM$RANDOM" pid t0 t1 rc
	shift
	mkdir -p "$t"
	"$BS" target "$t" </dev/null >/dev/null 2>&1 &
	pid=$!
	bg_add "$pid"
	wait_file "$t/ready" "$pid" 60 || die "bench_self target did not start"
	t0=$(now)
	"$PT" restore -t "$pid" -D "$dir" "$@" >"$dir/last.out" 2>&1 </dev/null
	rc=$?
	t1=$(now)
	reap "$pid"
	rm -rf "$t"
	# (called in $(...): die would only end that subshell; med() stops the run)
	[ "$rc" -eq 0 ] || { echo "ptimer restore -D $dir $*: exit $rc: $(cat "$dir/last.out")" >"$TMP/failed"; exit 1; }
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }'
}

# med VAR RUNS DIR ARGS...: VAR = restore_median RUNS DIR ARGS..., or the
# run ends with the failed restore's message
med() {
	local v=$1
	shift
	rm -f "$TMP/failed"
	printf -v "$v" '%s' "$(restore_median "$@")"
	[ ! -e "$TMP/failed" ] || die "$(cat "$TMP/failed")"
}

# restore_median RUNS DIR ARGS...
restore_median() {
	local runs=$1 i
	shift
	for ((i = 0; i < runs; i++)); do restore_once "$@"; done | median
}

echo "ptimer bench: kernel $(uname -r), $(nproc) cpus"

# ---- (a) 50,000 timers ---------------------------------------------------------
for i in 1 2 3; do
	self_create 50000 1 "$TMP/self$i"
	cat "$TMP/self$i/self.time"
	reap "$SELF_PID"
done >"$TMP/self.times"
SELF_A=$(median <"$TMP/self.times")
image_of 50000 1 a50k
med A 3 "$IMG"
RA=$(ratio "$A" "$SELF_A")
echo "(a) 50,000 timers: self create+arm $(ms "$SELF_A"), ptimer restore $(ms "$A") (wall, median of 3)"
echo "    ptimer's own report: $(grep -v '^ptimer: ' "$IMG/last.out" | tail -1)"
echo "    ratio restore/self = $RA   goal <= 1.5: $(goal "$RA" 1.5)"

# ---- (b) stride 512 vs dense, exact -------------------------------------------
image_of 2048 512 stride
STRIDE=$IMG
image_of 2048 1 dense
DENSE=$IMG
med BS_ 5 "$STRIDE"
med BD 5 "$DENSE"
RB=$(ratio "$BS_" "$BD")
echo "(b) 2048 timers, auto mode: stride 512 $(ms "$BS_"), dense $(ms "$BD") (median of 5)"
echo "    ptimer's own report (dense): $(tail -1 "$DENSE/last.out")"
echo "    ratio stride/dense = $RB   goal <= 1.5: $(goal "$RB" 1.5)"

# ---- (c) the same, linear ---------------------------------------------------------
med CS 3 "$STRIDE" --mode linear
echo "    ptimer's own report (stride, linear): $(tail -1 "$STRIDE/last.out")"
med CD 3 "$DENSE" --mode linear
RC=$(ratio "$CS" "$CD")
echo "(c) 2048 timers, --mode linear: stride 512 $(ms "$CS"), dense $(ms "$CD") (median of 3)"
echo "    ratio stride/dense = $RC   (no goal: linear mode pays one create/delete pair per skipped ID)"

# ---- (d) sparse million, linear ------------------------------------------------------
SP="$TMP/sparse"
mkdir -p "$SP"
start_role setup sparse "$SP"
spid=$ROLE_PID
wait_ready "$SP" setup "$spid" 60 || die "zdtm_timers setup sparse: $(cat "$SP/setup.out")"
"$PT" dump -t "$spid" -D "$SP" >"$SP/dump.out" 2>&1 || die "ptimer dump: $(cat "$SP/dump.out")"
reap "$spid"
# the scenario's timers signal SIGRTMIN+n, which bench_self's target does not
# take: a standalone restore refuses them unless forced (they are far off)
med DX 3 "$SP" --force-signals
med DL 3 "$SP" --mode linear --force-signals
PAIRS=$(grep -oE '[0-9]+ create/delete pairs' "$SP/last.out" | tail -1 | grep -oE '^[0-9]+')
echo "(d) IDs 1,000,000 and 2,000,000, --mode linear: $(ms "$DL") (median of 3), ${PAIRS:-?} create/delete pairs$(
	[ -n "$PAIRS" ] && awk -v s="$DL" -v p="$PAIRS" 'BEGIN { if (p > 0) printf ", %.2f us a pair", s * 1e6 / p }')"
echo "    auto (exact-ID) mode: $(ms "$DX"); ratio linear/exact = $(ratio "$DL" "$DX")"
echo "    ptimer's own report (linear): $(grep -v '^ptimer: ' "$SP/last.out" | paste -sd ';' - | cut -c1-300)"

# ---- (g) standalone dump of 50,000 timers against the kernel's floor ---------------
# The floor is one read of /proc/PID/timers: the kernel walks the list from its
# head for every page it returns, so that read is quadratic; ptimer dump adds
# the seize, one run of the blob for the timers' state, and the image.
self_create 50000 1 "$TMP/f50k"
FP=$SELF_PID
mkdir -p "$TMP/f50k/img"
for i in 1 2 3; do
	# a dump that lost process events (a busy machine) is dumped again
	for try in 1 2 3 0; do
		[ "$try" = 0 ] && die "ptimer dump: $(cat "$TMP/f50k/dump.out")"
		t0=$(now)
		"$PT" dump -t "$FP" -D "$TMP/f50k/img" >"$TMP/f50k/dump.out" 2>&1 && break
	done
	t1=$(now)
	cat "/proc/$FP/timers" >/dev/null
	t2=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }' >>"$TMP/f.dump"
	awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.6f\n", b - a }' >>"$TMP/f.read"
done
reap "$FP"
FD=$(median <"$TMP/f.dump")
FR=$(median <"$TMP/f.read")
FG=$(cat "$TMP/f50k/gettime.time")
FL=$(awk -v a="$FR" -v b="$FG" 'BEGIN { printf "%.6f", a + b }')
echo "(g) 50,000 timers: ptimer dump $(ms "$FD"), one read of /proc/PID/timers of the same process $(ms "$FR") (median of 3, in turn)"
echo "    the process's own timer_gettime of each timer: $(ms "$FG") (median of 3 rounds, timed in the process)"
echo "    ratio dump/read = $(ratio "$FD" "$FR"); dump/(read + gettime) = $(ratio "$FD" "$FL")   (read + gettime is the kernel's floor: $(awk -v a="$FL" -v b="$FD" 'BEGIN { if (b > 0) printf "%.0f", 100 * a / b }')% of the dump)"

# ---- (i) the look at a timer's thread (core/aim_probe.c) -------------------------
# 1,000 SIGEV_THREAD_ID timers aimed at a second thread (each looked at) and
# at the leader (none is): `ptimer dump` of each in turn, 7 rounds, the
# median of the ratios pair by pair.
for at in thread leader; do
	mkdir -p "$TMP/aim-$at/img"
	"$BS" aimed 1000 "$at" "$TMP/aim-$at" >"$TMP/aim-$at/out" 2>&1 &
	bg_add $!
	wait_file "$TMP/aim-$at/ready" $! 60 || die "bench_self aimed 1000 $at: $(cat "$TMP/aim-$at/out")"
done
for ((i = 0; i < 7; i++)); do
	for at in thread leader; do
		t0=$EPOCHREALTIME
		"$PT" dump -q -t "$(cat "$TMP/aim-$at/pid")" -D "$TMP/aim-$at/img" || die "ptimer dump ($at) failed"
		awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.6f ", b - a }'
	done
	echo
done >"$TMP/aim.times"
AT=$(awk '{ print $1 }' "$TMP/aim.times" | median)
AL=$(awk '{ print $2 }' "$TMP/aim.times" | median)
AR=$(awk '{ printf "%.4f\n", $1 / $2 }' "$TMP/aim.times" | median)
echo "(i) 1,000 SIGEV_THREAD_ID timers: ptimer dump $(ms "$AT") aimed at a second thread (each made to expire once to"
echo "    see which thread the kernel holds), $(ms "$AL") aimed at the leader (not looked at); medians of 7 in turn,"
echo "    ratio (median pair by pair) = $(printf '%.2f' "$AR")"

# ---- (e) real criu: 4.1.1 / 4.2.1, alone / with the plugin -------------------------
if [ -n "${PTIMER_SKIP_CRIU:-}" ]; then
	echo "(e) real criu: skipped (PTIMER_SKIP_CRIU is set)"
	exit 0
fi
HERE=$(cd "$(dirname "$0")" && pwd)
bash "$HERE/criu/suite.sh" bench trixie sid >"$TMP/criu.out" 2>&1
grep -E '^bench: .*(FAILED|unavailable)' "$TMP/criu.out" | sed 's/^bench: /(e) /'
fault=$(grep -o 'CRIU_FAULT=[0-9]*' "$TMP/criu.out" | head -n1)
# field SUITE SET MODE N: field N of the matching "bench:" line, or "-"
field() { awk -v s="$1" -v c="$2" -v m="$3" -v n="$4" '$1 == "bench:" && $2 == s && $4 == c && $5 == m { v = $n } END { print (v == "") ? "-" : v }' "$TMP/criu.out"; }
runs() { awk -v s="$1" -v c="$2" -v m="$3" '$1 == "bench:" && $2 == s && $4 == c && $5 == m { print NF - 7 }' "$TMP/criu.out"; }
ver() { awk -v s="$1" '$1 == "bench:" && $2 == s && $3 ~ /^[0-9]/ { print $3; exit }' "$TMP/criu.out"; }
sec() { [ "$1" = - ] && echo "-" || awk -v s="$1" 'BEGIN { printf "%.3f s", s }'; }
V1=$(ver trixie); V1=${V1:-4.1.1}
V2=$(ver sid); V2=${V2:-4.2.1}
echo "(e) criu restore wall time, whole \`criu restore -d\`, median of 3 to 11 runs (more while they are quick; load average $(cut -d' ' -f1-3 /proc/loadavg)):"
printf '    | %-22s | %-18s | %-14s | %-16s | %-14s | %s\n' "timers" "criu $V1 alone" "$V1 + plugin" "criu $V2 alone" "$V2 + plugin" "($V1 + plugin) / ($V2 alone)"
printf '    |%s|\n' "------------------------|--------------------|----------------|------------------|----------------|----------------------------"
for set in stride sparse100k; do
	case $set in
	stride) what="2048, IDs 512 apart" ;;
	sparse100k) what="100, IDs 100,000 apart" ;;
	esac
	a=$(field trixie $set alone 6); b=$(field trixie $set plugin 6)
	c=$(field sid $set alone 6); d=$(field sid $set plugin 6)
	if [ "$b" != - ] && [ "$c" != - ]; then
		r=$(ratio "$b" "$c"); rr="$r (goal <= 1.0: $(goal "$r" 1.0))"
	else
		rr="-"
	fi
	n=$(runs trixie $set alone)
	printf '    | %-22s | %-18s | %-14s | %-16s | %-14s | %s\n' "$what" "$(sec "$a")$([ "${n:-3}" = 1 ] && echo ' (1 run)')" "$(sec "$b")" "$(sec "$c")" "$(sec "$d")" "$rr"
done
if [ -n "$fault" ]; then
	echo "    criu ran with $fault: ptrace hardware breakpoints do not fire on this machine, so criu"
	echo "    traces every syscall the task makes after its restorer's creds stage.  That part of each"
	echo "    restore (median; from the -v4 log) was:"
	for set in stride sparse100k; do
		printf '      %-11s %s alone %s, + plugin %s; %s alone %s, + plugin %s\n' "$set:" "$V1" \
			"$(sec "$(field trixie $set alone 7)")" "$(sec "$(field trixie $set plugin 7)")" "$V2" \
			"$(sec "$(field sid $set alone 7)")" "$(sec "$(field sid $set plugin 7)")"
	done
	echo "    It is not the same in all four columns: criu alone arms its timers there (one traced"
	echo "    timer_settime each); with the plugin on 4.1.1 criu has no timers and ptimer arms them"
	echo "    untraced; on 4.2.1 the plugin (criu-mode auto) leaves them to criu, traced as alone."
	echo "    4.1.1's create/delete loop runs before that stage and is not traced."
fi

# Trees: whole criu dump and criu restore -d, alone and with the plugin in turn.
tfield() { awk -v s="$1" -v c="$2" -v m="$3" -v n="$4" '$1 == "bench-tree:" && $2 == s && $4 == c && $5 == m { v = $n } END { print (v == "") ? "-" : v }' "$TMP/criu.out"; }
pfield() { awk -v s="$1" -v c="$2" -v m="$3" -v n="$4" '$1 == "bench-phases:" && $2 == s && $4 == c && $5 == m { v = $n } END { print (v == "") ? "-" : v }' "$TMP/criu.out"; }
tratio() { [ "$1" = - ] || [ "$2" = - ] && echo "-" || ratio "$2" "$1"; }
# pratio SUITE TREE MODE COL: the median over the rounds of MODE's time /
# criu alone's in the same round (COL 6: dump, 7: restore): each round runs
# both in turn, so a change of the machine between rounds (another tenant
# starting) weighs on both sides of a ratio, not on one median; "-" when
# the rounds do not pair up.
pratio() {
	awk -v s="$1" -v c="$2" -v m="$3" -v k="$4" '
	$1 == "bench-tree:" && $2 == s && $4 == c && ($5 == m || $5 == "alone") {
		list = ""; on = 0
		for (i = 8; i <= NF; i++) {
			if ($i == "dump:") { on = (k == 6); continue }
			if ($i == "restore:") { on = (k == 7); continue }
			if (on) list = list " " $i
		}
		t[$5] = list
	}
	END {
		na = split(t["alone"], a); nm = split(t[m], b)
		if (!na || na != nm) { print "-"; exit }
		for (i = 1; i <= na; i++) {
			if (a[i] <= 0) { print "-"; exit }
			r[i] = b[i] / a[i]
		}
		for (i = 1; i <= na; i++)
			for (j = i + 1; j <= na; j++)
				if (r[j] < r[i]) { x = r[i]; r[i] = r[j]; r[j] = x }
		printf "%.2f", r[int((na + 1) / 2)]
	}' "$TMP/criu.out"
}
# pair_or_tratio SUITE TREE MODE COL ALONE WITH: pratio, else the medians' ratio
pair_or_tratio() {
	local r
	r=$(pratio "$1" "$2" "$3" "$4")
	[ "$r" = - ] && r=$(tratio "$5" "$6")
	echo "$r"
}
tgoal() { [ "$1" = - ] && echo "-" || echo "$1 $(goal "$1" "$2" | sed 's/NOT met/NOT/')"; }
# ph X/Y/W/T [ALONE]: "X + Y + W ms" (init, task calls, exit; ms), and
# T as a share of ALONE (criu alone's wall time, s): what the plugin itself
# added, free of the noise between runs
ph() { [ "$1" = - ] && echo "-" || awk -v p="$1" -v a="${2:--}" 'BEGIN { split(p, v, "/"); printf "%.1f + %.1f + %.1f ms", v[1], v[2], v[3]
	if (a != "-" && a > 0) printf " (%.1f%%)", v[4] / (a * 1000) * 100 }'; }
# ms S: seconds as milliseconds
msec() { [ "$1" = - ] && echo "-" || awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'; }
what_tree() {
	case $1 in
	1x7) echo "1 process, 7 timers" ;;
	300x0) echo "300 processes, 0 timers" ;;
	300x1) echo "300 processes, 1 timer" ;;
	4x20000) echo "4 x 20,000 timers" ;;
	esac
}
echo "(h) one process and process trees, whole \`criu dump\` and \`criu restore -d\` (-v3) wall time in ms,"
echo "    criu alone and with the plugin in turn, medians of 9 rounds (25 for one process); ratio = the median"
echo "    over the rounds of with / alone in the same round;"
echo "    goal <= 1.05 where the plugin has nothing to take over ($V2, auto), <= 1.10 where it restores"
echo "    timers ($V1, takeover).  ptimer's own time, from its line in criu's log: init + task calls + exit"
echo "    (medians), and in all as a share of criu alone's wall time:"
printf '    | %-6s | %-34s | %-7s | %-8s | %-10s | %-27s | %-7s | %-8s | %-10s | %-27s |\n' criu tree "dump" "+ plugin" "ratio" \
	"ptimer at dump" restore "+ plugin" ratio "ptimer at restore"
printf '    |%s|\n' "--------|------------------------------------|---------|----------|------------|-----------------------------|---------|----------|------------|-----------------------------"
row() {  # SUITE VERSION TREE MODE GOAL LABEL
	local da dp ra rp
	da=$(tfield "$1" "$3" alone 6); dp=$(tfield "$1" "$3" "$4" 6)
	ra=$(tfield "$1" "$3" alone 7); rp=$(tfield "$1" "$3" "$4" 7)
	[ "$dp" = - ] && [ "$rp" = - ] && return
	printf '    | %-6s | %-34s | %-7s | %-8s | %-10s | %-27s | %-7s | %-8s | %-10s | %-27s |\n' "$2" "$6" \
		"$(msec "$da")" "$(msec "$dp")" "$(tgoal "$(pair_or_tratio "$1" "$3" "$4" 6 "$da" "$dp")" "$5")" \
		"$(ph "$(pfield "$1" "$3" "$4" 6)" "$da")" "$(msec "$ra")" "$(msec "$rp")" \
		"$(tgoal "$(pair_or_tratio "$1" "$3" "$4" 7 "$ra" "$rp")" "$5")" "$(ph "$(pfield "$1" "$3" "$4" 7)" "$ra")"
}
for tc in 1x7 300x0 300x1 4x20000; do
	row trixie "$V1" "$tc" plugin 1.10 "$(what_tree "$tc")"
done
for tc in 1x7 300x0 300x1 4x20000; do
	row sid "$V2" "$tc" plugin 1.05 "$(what_tree "$tc")"
done
# criu 4.2.1 with criu-mode takeover (ptimer restores every timer, as under 4.1.1)
for tc in 1x7 300x0 300x1 4x20000; do
	row sid "$V2" "$tc" takeover 1.10 "$(what_tree "$tc"), takeover"
done
for s in stride sparse100k; do
	p=$(awk -v s=trixie -v c="$s" '$1 == "bench-phases:" && $2 == s && $4 == c && $5 == "plugin" { v = $7 } END { print v }' "$TMP/criu.out")
	[ -n "$p" ] && echo "    (e) $s, $V1 + plugin: ptimer at restore $(ph "$p" "$(field sid "$s" alone 6)") of $V2 alone (median)"
done
grep -E '^bench: .*tree-.*FAILED' "$TMP/criu.out" | sed 's/^bench: /(h) /'

# ---- (f) containers: runc checkpoint/restore, alone / with the plugin ---------------
[ -n "${PTIMER_SKIP_CONTAINERS:-}" ] && { echo "(f) containers: skipped (PTIMER_SKIP_CONTAINERS is set)"; exit 0; }
bash "$HERE/containers/bench.sh"
