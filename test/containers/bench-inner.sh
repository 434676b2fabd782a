# SPDX-License-Identifier: MIT
# Sourced by inner.sh in bench mode (its helpers and setup are in place):
# runc checkpoint and restore of a container running zdtm_timers
# container-bench (the five timers, the SIGEV_THREAD_ID one aimed at a
# second thread, which criu alone restores too), with the plugin in
# /usr/lib/criu and without it, PTIMER_BENCH_RUNS (3) runs each.  Prints
# "cbench: SUITE VERSION runc PHASE MODE MEDIAN RUN..." (seconds, whole
# runc command) for PHASE checkpoint and restore, MODE alone and plugin.
RUNS=${PTIMER_BENCH_RUNS:-3}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
for mode in alone plugin; do
	[ "$mode" = alone ] && mv "$PLUGIN" "$W/ptimer_plugin.so.away"
	ck=() rs=()
	for ((r = 0; r < RUNS; r++)); do
		b=$W/bench-$mode-$r
		SCEN=container-bench bundle "bench$r" "$P/bench" "$b" && oci_run runc "bench$r" "$b" &&
			ready "$b/rootfs/state" "bench-$mode" "$b/run.err" || break
		t0=$EPOCHREALTIME
		if ! timeout "$TO" runc checkpoint --image-path "$b/img" --work-path "$b/work" "bench$r" >"$b/ckpt.out" 2>&1; then
			echo "cbench: $suite runc checkpoint $mode FAILED: $(logtail "$b/work/dump.log")"
			runc delete -f "bench$r" >/dev/null 2>&1
			break
		fi
		ck+=("$(secs "$t0")")
		t0=$EPOCHREALTIME
		: | timeout "$TO" runc restore -d --image-path "$b/img" --work-path "$b/rwork" --bundle "$b" "bench$r" \
			> >(cat >>"$b/stdio.out") 2>"$b/restore.err"
		rc=$?
		rs+=("$(secs "$t0")")
		n=$(grep -c '^ID:' "/proc/$(oci_pid runc "bench$r")/timers" 2>/dev/null)
		runc delete -f "bench$r" >/dev/null 2>&1
		if [ "$rc" -ne 0 ] || [ "$n" != 5 ]; then
			echo "cbench: $suite runc restore $mode FAILED: exit $rc, $n timers: $(logtail "$b/rwork/restore.log")"
			rs=()
			break
		fi
		rm -rf "$b"
	done
	[ "$mode" = alone ] && mv "$W/ptimer_plugin.so.away" "$PLUGIN"
	[ ${#ck[@]} -gt 0 ] && echo "cbench: $suite $CRIU_VERSION runc checkpoint $mode $(printf '%s\n' "${ck[@]}" | median) ${ck[*]}"
	[ ${#rs[@]} -gt 0 ] && echo "cbench: $suite $CRIU_VERSION runc restore $mode $(printf '%s\n' "${rs[@]}" | median) ${rs[*]}"
done
