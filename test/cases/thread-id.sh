#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cases/thread-id.sh BUILD - a real image of the mix scenario aims a
# timer at the dumped process's second thread: restored into a two-thread
# target without --tid-map, or mapped to a tid that is no thread of the
# target, restore must refuse, say which tid, and leave the target as it was.
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

name=thread-id
src=$TMP/mix
dir=$TMP/thread-id
make_mix_image "$src" "$name" || exit 1
mkdir -p "$dir"
cp "$src"/ptimers-*.img "$dir/"
s2=$(sed -n 2p "$src/setup.tids")
start_role verify empty2 "$dir" "$name"
vpid=$ROLE_PID
wait_ready "$dir" verify "$vpid" || { fail "$name/target" "verify did not start: $(oneline "$dir/verify.out")"; exit 1; }
v2=$(sed -n 2p "$dir/verify.tids")
snapshot "$vpid" "$dir/before"
ptimer_run "$dir/restore.out" 60 restore -t "$vpid" -D "$dir"
if refused "$name/no-map" "$dir/restore.out"; then
	check "$name/no-map-names-tid" "stderr does not name the missing tid $s2: $(oneline "$dir/restore.out.err")" \
		names "$dir/restore.out.err" thread "$s2"
fi
untouched "$name/no-map-target" "$vpid" "$dir/before"
# a map to a tid that is no thread of the target
ptimer_run "$dir/restore2.out" 60 restore -t "$vpid" -D "$dir" --tid-map "$s2=$((v2 + 100000))"
if refused "$name/bad-map" "$dir/restore2.out"; then
	check "$name/bad-map-names-tid" "stderr does not say $((v2 + 100000)) is not a thread of $vpid: $(oneline "$dir/restore2.out.err")" \
		grep -qE -- "(^|[^0-9])$((v2 + 100000)) is not a thread of process $vpid([^0-9]|\$)" "$dir/restore2.out.err"
fi
untouched "$name/bad-map-target" "$vpid" "$dir/before"
finish_verify "$dir" "$vpid"
totals
