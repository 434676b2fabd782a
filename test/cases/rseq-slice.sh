#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cases/rseq-slice.sh BUILD - rseq time-slice extension on this
# kernel: dump a 2-thread process (test/e2e/rseq_threads.c), check the
# "threads" of show --json against what each thread reports itself, then an
# image edited to say "enabled": require refuses before touching the target,
# auto warns naming each thread, off is silent.  (The enabled path itself:
# test/unit/test_rseq.c, simulated kernel; no kernel here can grant one.)
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

case_rseq_slice() {
	local n=rseq-slice d=$TMP/rseq-slice pid i tid ptr want got
	mkdir -p "$d/en"
	if ! command -v python3 >/dev/null; then
		skip "$n" "python3 needed to read the JSON"
		return
	fi
	"$B/test/rseq_threads" "$d" >"$d/out" 2>&1 &
	pid=$!
	bg_add "$pid"
	if ! wait_ready "$d" rseq "$pid" 10; then
		wait "$pid"
		if [ $? -eq 4 ]; then
			skip "$n" "$(oneline "$d/out")"
		else
			fail "$n/start" "rseq_threads did not get ready: $(oneline "$d/out")"
		fi
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

case_rseq_slice
totals
