# SPDX-License-Identifier: MIT
# Sourced by inner.sh in bench mode (its helpers and setup are in place):
# runc checkpoint and restore of a container running zdtm_timers
# container-bench (the five timers, the SIGEV_THREAD_ID one aimed at a
# second thread, which criu alone restores too), with the plugin in
# /usr/lib/criu and without it, PTIMER_BENCH_RUNS (5) runs each, in turn.  Prints
# "cbench: SUITE VERSION runc PHASE MODE MEDIAN RUN..." (seconds, whole
# runc command) for PHASE checkpoint and restore, MODE alone and plugin.
RUNS=${PTIMER_BENCH_RUNS:-5}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
declare -A ck rs bad
# one checkpoint and restore of a fresh container; MODE alone: the plugin
# moved out of /usr/lib/criu for it
cbench_one() {
	local mode=$1 r=$2 b=$W/bench-$1-$2 t0 rc n
	[ -n "${bad[$mode]:-}" ] && return 0
	[ "$mode" = alone ] && mv "$PLUGIN" "$W/ptimer_plugin.so.away"
	SCEN=container-bench bundle "bench$r" "$P/bench" "$b" && oci_run runc "bench$r" "$b" &&
		ready "$b/rootfs/state" "bench-$mode" "$b/run.err" || { bad[$mode]=1; }
	if [ -z "${bad[$mode]:-}" ]; then
		t0=$EPOCHREALTIME
		if ! timeout "$TO" runc checkpoint --image-path "$b/img" --work-path "$b/work" "bench$r" >"$b/ckpt.out" 2>&1; then
			echo "cbench: $suite runc checkpoint $mode FAILED: $(logtail "$b/work/dump.log")"
			runc delete -f "bench$r" >/dev/null 2>&1
			bad[$mode]=1
		fi
	fi
	if [ -z "${bad[$mode]:-}" ]; then
		ck[$mode]+=" $(secs "$t0")"
		t0=$EPOCHREALTIME
		: | timeout "$TO" runc restore -d --image-path "$b/img" --work-path "$b/rwork" --bundle "$b" "bench$r" \
			> >(cat >>"$b/stdio.out") 2>"$b/restore.err"
		rc=$?
		rs[$mode]+=" $(secs "$t0")"
		n=$(grep -c '^ID:' "/proc/$(oci_pid runc "bench$r")/timers" 2>/dev/null)
		runc delete -f "bench$r" >/dev/null 2>&1
		if [ "$rc" -ne 0 ] || [ "$n" != 5 ]; then
			echo "cbench: $suite runc restore $mode FAILED: exit $rc, $n timers: $(logtail "$b/rwork/restore.log")"
			rs[$mode]=
			bad[$mode]=1
		else
			rm -rf "$b"
		fi
	fi
	[ "$mode" = alone ] && mv "$W/ptimer_plugin.so.away" "$PLUGIN"
	return 0
}
# alone and with the plugin in turn, the first of each pair alternating,
# so that a machine getting busier or quieter weighs on both alike
for ((r = 0; r < RUNS; r++)); do
	if ((r % 2)); then
		cbench_one plugin "$r"; cbench_one alone "$r"
	else
		cbench_one alone "$r"; cbench_one plugin "$r"
	fi
done
for mode in alone plugin; do
	[ -n "${ck[$mode]:-}" ] &&
		echo "cbench: $suite $CRIU_VERSION runc checkpoint $mode $(printf '%s\n' ${ck[$mode]} | median)${ck[$mode]}"
	[ -n "${rs[$mode]:-}" ] &&
		echo "cbench: $suite $CRIU_VERSION runc restore $mode $(printf '%s\n' ${rs[$mode]} | median)${rs[$mode]}"
done
