#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cases/unprivileged.sh BUILD - an unprivileged ptimer (uid 65534):
# another user's process is refused naming CAP_SYS_PTRACE; its own process
# dumps.
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

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
	bg_add "$ojob"
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

case_unprivileged
totals
