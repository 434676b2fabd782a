#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cases/cli.sh BUILD - the command line as a user meets it:
# --version, help per command, one-line usage errors (exit 2) for options of
# other commands and extra arguments, hints that fit the command, restore
# from an image file, check's exit status for an unprivileged caller, the
# man page (lint, every option, installed by make install), one exit-status
# table, the man page's (the help and the README point to it), and the outcome of SIGTERM
# during a dump (nothing written, 143) and during an exact-ID restore
# (finished, 0).

set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/test/lib/harness.sh"
. "$TOP/test/e2e/lib.sh"

MAN=$TOP/man/ptimer.1
CMDS="dump restore show encode check"

# run_pt NAME ARGS...: ptimer with ARGS, output in $TMP/NAME.{out,err}, status in PT_RC.
run_pt() {
	local name=$1
	shift
	ptimer_run "$TMP/$name.out" 30 "$@"
}

# usage_error NAME WORD ARGS...: exit 2, one line on stderr naming WORD, nothing on stdout.
usage_error() {
	local name=$1 word=$2 n
	shift 2
	run_pt "$name" "$@"
	n=$(wc -l <"$TMP/$name.out.err")
	check "usage/$name" "ptimer $*: exit $PT_RC, $n lines on stderr, want exit 2 and one line naming '$word': $(oneline "$TMP/$name.out.err")" \
		[ "$PT_RC" -eq 2 -a "$n" -eq 1 -a ! -s "$TMP/$name.out" ]
	grep -qF -- "$word" "$TMP/$name.out.err" || fail "usage/$name-names-$word" "stderr: $(oneline "$TMP/$name.out.err")"
}

# ---- version and help --------------------------------------------------------

run_pt version --version
check "version" "exit $PT_RC, '$(oneline "$TMP/version.out")', want 'ptimer $(cat "$TOP/VERSION") (image format N)'" \
	grep -qx "ptimer $(cat "$TOP/VERSION") (image format [0-9]*)" "$TMP/version.out"

run_pt overview --help
for c in $CMDS; do
	grep -q "^  $c " "$TMP/overview.out" || fail "help/overview-lists-$c" "$(oneline "$TMP/overview.out")"
done
check "help/overview" "exit $PT_RC" [ "$PT_RC" -eq 0 ]

for c in $CMDS; do
	run_pt "help-$c" help "$c"
	run_pt "dashhelp-$c" "$c" --help
	if [ "$PT_RC" -eq 0 ] && [ -s "$TMP/help-$c.out" ] && cmp -s "$TMP/help-$c.out" "$TMP/dashhelp-$c.out"; then
		pass "help/$c"
	else
		fail "help/$c" "ptimer $c --help: exit $PT_RC, or its text differs from ptimer help $c"
	fi
	grep -q "^usage: ptimer $c" "$TMP/help-$c.out" || fail "help/$c-usage-line" "$(head -1 "$TMP/help-$c.out")"
	# every option the help explains is in the man page, under the same name
	for o in $(grep -oE -- '^ +(-[a-zA-Z], )?--[a-z-]+' "$TMP/help-$c.out" | grep -oE -- '--[a-z-]+'); do
		[ "$o" = --help ] && continue
		grep -qF -- "${o//-/\\-}" "$MAN" || fail "man/has-$c$o" "ptimer help $c explains $o, man/ptimer.1 does not"
	done
done
# restore's options are not dump's: each command has its own help
check "help/own-options" "ptimer help dump mentions --tid-map or ptimer help restore lacks it" \
	[ "$(grep -c -- --tid-map "$TMP/help-dump.out")" -eq 0 -a "$(grep -c -- --tid-map "$TMP/help-restore.out")" -gt 0 ]

# ---- one exit-status table -------------------------------------------------------
# The man page holds it (0, 1, 2 and 128+N with SIGTERM 143); --help, each
# command's help and the README point to it and do not repeat it.
tbl_ok=1
for code in '^\.B 0$' '^\.B 1$' '^\.B 2$' '128+' 'SIGTERM'; do
	grep -q -- "$code" "$MAN" || { tbl_ok=0; info "man page lacks '$code'"; }
done
for f in "$TMP/overview.out" "$TMP/help-dump.out" "$TMP/help-restore.out" "$TOP/README.md"; do
	grep -q 'EXIT STATUS' "$f" || { tbl_ok=0; info "$f does not point to the man page's EXIT STATUS"; }
	! grep -qE -- '128\+N|SIGTERM 143|143 for' "$f" || { tbl_ok=0; info "$f repeats the exit-status table"; }
done
check "exit-status/one-table-in-man" "see the lines above" [ "$tbl_ok" = 1 ]

# ---- usage errors -------------------------------------------------------------

mkdir -p "$TMP/img"
usage_error dump-mode "restore" dump --mode linear -t $$ -D "$TMP/img"
usage_error check-t "-t" check -t 5
usage_error check-extra "extra" check extra
usage_error show-two "b" show "$TMP/a" "$TMP/b"
usage_error show-none "FILE" show
usage_error show-strict "--strict" show --strict "$TMP/img"
usage_error dump-no-dir "-D" dump -t $$
usage_error dump-extra "surplus" dump -t $$ -D "$TMP/img" surplus
usage_error restore-no-image "-D" restore -t $$
usage_error restore-two-images "give one" restore -t $$ -D "$TMP/img" "$TMP/img"
usage_error encode-json "--json" encode --json -i a -o b
usage_error unknown-command "frobnicate" frobnicate
usage_error bad-mode "--mode" restore -t $$ -D "$TMP/img" --mode fast
check "usage/nothing-written" "files in $TMP/img: $(ls -A "$TMP/img" | tr '\n' ' ')" [ -z "$(ls -A "$TMP/img")" ]

# ---- hints that fit ------------------------------------------------------------
# show and encode take no -D and no pid; a file is not a directory.

# hint_fits NAME FILE-NAMED: exit 1, the file and the reason named, no -D, no pid.
hint_fits() {
	local name=$1 what=$2 e="$TMP/$1.out.err"
	if [ "$PT_RC" -eq 1 ] && grep -q "$what" "$e" && ! grep -qE -- '-D|pid' "$e"; then
		pass "hint/$name"
	else
		fail "hint/$name" "exit $PT_RC, want 1, '$what' and no -D or pid: $(oneline "$e")"
	fi
}
run_pt show-missing show "$TMP/missing.img"
hint_fits show-missing "$TMP/missing.img.*No such file"
run_pt encode-missing encode -i "$TMP/missing.json" -o "$TMP/x.img"
hint_fits encode-missing "$TMP/missing.json.*No such file"
echo x >"$TMP/plainfile"
run_pt dump-file-dir dump -t $$ -D "$TMP/plainfile"
if [ "$PT_RC" -eq 1 ] && grep -q "$TMP/plainfile: not a directory" "$TMP/dump-file-dir.out.err" &&
	! grep -q "Permission denied" "$TMP/dump-file-dir.out.err"; then
	pass "hint/dump-D-regular-file"
else
	fail "hint/dump-D-regular-file" "exit $PT_RC, want 1 and 'not a directory': $(oneline "$TMP/dump-file-dir.out.err")"
fi

# ---- check's exit status -----------------------------------------------------------
# Without CAP_SYS_PTRACE a user can still dump its own processes: exit 0.
if command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups "$PT" check >"$TMP/check-user.out" 2>&1 </dev/null
	rc=$?
	if grep -q '^ptrace  *yes' "$TMP/check-user.out" && grep -q '^/proc/PID/timers  *yes' "$TMP/check-user.out"; then
		check "check/unprivileged-exit-0" "exit $rc, want 0 and a CAP_SYS_PTRACE no line: $(oneline "$TMP/check-user.out")" \
			[ "$rc" -eq 0 -a "$(grep -c '^CAP_SYS_PTRACE  *no ' "$TMP/check-user.out")" -eq 1 ]
	else
		check "check/unprivileged-exit-1-when-ptrace-fails" "exit $rc: $(oneline "$TMP/check-user.out")" [ "$rc" -eq 1 ]
	fi
else
	skip "check/unprivileged" "setpriv (util-linux) cannot drop to uid 65534 here"
fi

# ---- man page ------------------------------------------------------------------

if command -v groff >/dev/null; then
	groff -man -ww -z "$MAN" >"$TMP/groff.out" 2>&1
	check "man/groff-clean" "groff -man -ww -z: $(oneline "$TMP/groff.out")" [ ! -s "$TMP/groff.out" ]
else
	fail "man/groff-clean" "no groff here: 'make deps' installs it"
fi
if command -v mandoc >/dev/null; then
	mandoc -Tlint -W warning "$MAN" >"$TMP/mandoc.out" 2>&1
	check "man/mandoc-lint-clean" "mandoc -Tlint: $(oneline "$TMP/mandoc.out")" [ ! -s "$TMP/mandoc.out" ]
else
	fail "man/mandoc-lint-clean" "no mandoc here: 'make deps' installs it"
fi
missing=
# getenv("X") and name tables ("PTIMER_X" as a whole string) alike
for v in $( (grep -rhoE 'getenv\("[A-Z_]+"\)' "$TOP/plugin" "$TOP/core" "$TOP/cli"
	grep -rhoE '"PTIMER_[A-Z_]+"' "$TOP/plugin" "$TOP/core" "$TOP/cli") | grep -oE '[A-Z_]{4,}' | sort -u); do
	grep -qF "$v" "$MAN" || missing="$missing $v"
done
check "man/every-environment-variable" "the code reads$missing, man/ptimer.1 does not explain it" [ -z "$missing" ]
# make install puts the page in PREFIX/share/man/man1 (built parts are not remade here)
if [ -f "$B/ptimer_plugin.so" ]; then
	make -s -o all -C "$TOP" B="$B" install DESTDIR="$TMP/inst" PREFIX=/usr >"$TMP/install.out" 2>&1
	check "man/installed" "make install DESTDIR: $(oneline "$TMP/install.out")" \
		cmp -s "$MAN" "$TMP/inst/usr/share/man/man1/ptimer.1"
else
	make -n -o all -C "$TOP" B="$B" install DESTDIR="$TMP/inst" PREFIX=/usr >"$TMP/install.out" 2>&1
	check "man/installed" "make -n install does not install man/ptimer.1: $(oneline "$TMP/install.out")" \
		grep -q "man/ptimer.1 $TMP/inst/usr/share/man/man1/ptimer.1" "$TMP/install.out"
fi

# ---- restore from an image file ------------------------------------------------------

d=$TMP/file
mkdir -p "$d"
start_role setup mix "$d"
sjob=$ROLE_PID
if wait_ready "$d" setup "$sjob" 60; then
	spid=$(cat "$d/setup.pid")
	ptimer_run "$d/dump.out" 60 dump -t "$spid" -D "$d"
	reap "$spid" "$sjob"
	start_role verify mix "$d"
	vjob=$ROLE_PID
	if [ "$PT_RC" -eq 0 ] && wait_ready "$d" verify "$vjob" 60; then
		vpid=$(cat "$d/verify.pid")
		# shellcheck disable=SC2046
		ptimer_run "$d/restore.out" 60 restore -t "$vpid" $(tidmap "$d") "$d/ptimers-$spid.img"
		check "restore-file/exit-0" "ptimer restore -t $vpid FILE: exit $PT_RC: $(oneline "$d/restore.out.err")" [ "$PT_RC" -eq 0 ]
		finish_verify "$d" "$vjob"
	else
		fail "restore-file/setup" "dump exit $PT_RC: $(oneline "$d/dump.out.err"); verify: $(oneline "$d/verify.out")"
		reap "$vjob"
	fi
else
	fail "restore-file/setup" "zdtm_timers setup mix: $(oneline "$d/setup.out")"
fi

# ---- SIGTERM while the target is stopped --------------------------------------------------
# ptimer is frozen (SIGSTOP) at a moment its target is seen stopped, and
# still stopped after the freeze: ptimer has not released it yet, so a
# SIGTERM sent then is held and seen at the dump's last check (nothing
# written, ended by SIGTERM, 143), or not looked at by an exact-ID restore
# (finished, exit 0).  Tried up to 30 times, as the window is milliseconds.

# stopped_now PID: a thread of PID is in state t or T (bash builtins only, to be quick).
stopped_now() {
	local f l
	for f in /proc/"$1"/task/*/status; do
		while IFS= read -r l; do
			case $l in
			State:*) case ${l#State:} in [[:space:]][tT]*) return 0 ;; esac; break ;;
			esac
		done <"$f" 2>/dev/null
	done
	return 1
}

# running PID: PID exists and is not a zombie (builtins only).
running() {
	local st
	read -r _ _ st _ <"/proc/$1/stat" 2>/dev/null || return 1
	[ "$st" != Z ]
}

# term_once TARGET OUT ARGS...: run ptimer ARGS in the background and try to
# SIGTERM it inside the window: 0 when it was, 1 when ptimer ran out of it;
# ptimer's exit status in TERM_RC.
term_once() {
	local target=$1 out=$2 p
	shift 2
	env --default-signal=TERM "$PT" "$@" >"$out" 2>"$out.err" </dev/null &
	p=$!
	while running "$p" && ! stopped_now "$target"; do :; done
	kill -STOP "$p" 2>/dev/null
	if running "$p" && stopped_now "$target"; then
		kill -TERM "$p"
		kill -CONT "$p"
		wait "$p"
		TERM_RC=$?
		return 0
	fi
	kill -CONT "$p" 2>/dev/null
	wait "$p"
	TERM_RC=$?
	return 1
}

d=$TMP/term
mkdir -p "$d/img"
start_role setup dense "$d"
sjob=$ROLE_PID
if ! wait_ready "$d" setup "$sjob" 120; then
	fail "sigterm/setup" "zdtm_timers setup dense: $(oneline "$d/setup.out")"
else
	spid=$(cat "$d/setup.pid")
	snapshot "$spid" "$d/src"
	caught=0
	for ((try = 1; try <= 30; try++)); do
		term_once "$spid" "$d/dump.out" dump -t "$spid" -D "$d/img" && { caught=1; break; }
		[ "$TERM_RC" -eq 0 ] || break
		rm -f "$d/img"/*	# ran out of the window: a whole dump
	done
	if [ "$caught" = 1 ]; then
		info "sigterm/dump: SIGTERM in the window on try $try"
		check "sigterm/dump-exit-143" "exit $TERM_RC: $(oneline "$d/dump.out.err")" [ "$TERM_RC" -eq 143 ]
		check "sigterm/dump-nothing-written" "in $d/img: $(ls -A "$d/img" | tr '\n' ' ')" [ -z "$(ls -A "$d/img")" ]
		check "sigterm/dump-says-nothing-written" "stdout '$(oneline "$d/dump.out")', stderr '$(oneline "$d/dump.out.err")'" \
			[ "$(grep -c "interrupted by signal 15.*nothing written" "$d/dump.out.err")" -eq 1 -a ! -s "$d/dump.out" ]
	elif [ "$TERM_RC" -ne 0 ]; then
		fail "sigterm/dump" "a dump failed: exit $TERM_RC: $(oneline "$d/dump.out.err")"
	else
		skip "sigterm/dump" "30 dumps ended before ptimer could be frozen with its target stopped"
	fi
	untouched "sigterm/dump-source" "$spid" "$d/src"

	# the exact-ID restore of the same timers
	ptimer_run "$d/dump2.out" 60 dump -t "$spid" -D "$d/img"
	reap "$spid" "$sjob"
	if ! "$PT" check 2>/dev/null | grep -q '^exact timer IDs.* yes '; then
		skip "sigterm/exact-restore" "no PR_TIMER_CREATE_RESTORE_IDS on $(uname -r)"
	elif [ "$PT_RC" -ne 0 ]; then
		fail "sigterm/exact-restore-dump" "exit $PT_RC: $(oneline "$d/dump2.out.err")"
	else
		caught=0
		for ((try = 1; try <= 30; try++)); do
			rm -f "$d/verify.ready" "$d/restored"
			start_role verify dense "$d"
			vjob=$ROLE_PID
			if ! wait_ready "$d" verify "$vjob" 120; then
				fail "sigterm/exact-restore-target" "zdtm_timers verify dense: $(oneline "$d/verify.out")"
				break
			fi
			vpid=$(cat "$d/verify.pid")
			term_once "$vpid" "$d/restore.out" restore -t "$vpid" -D "$d/img" --mode exact && { caught=1; break; }
			reap "$vpid" "$vjob"	# ran out of the window: a fresh target for the next try
			[ "$TERM_RC" -eq 0 ] || break
		done
		if [ "$caught" = 1 ]; then
			info "sigterm/exact-restore: SIGTERM in the window on try $try"
			check "sigterm/exact-restore-finishes-exit-0" "exit $TERM_RC, stdout '$(oneline "$d/restore.out")': $(oneline "$d/restore.out.err")" \
				[ "$TERM_RC" -eq 0 -a "$(grep -c '^restored ' "$d/restore.out")" -eq 1 ]
			n=$(grep -c '^ID:' "/proc/$vpid/timers")
			check "sigterm/exact-restore-all-timers" "/proc/$vpid/timers holds $n timers, want 2048" [ "$n" -eq 2048 ]
			finish_verify "$d" "$vjob"
		elif [ "$TERM_RC" -ne 0 ]; then
			fail "sigterm/exact-restore" "a restore failed: exit $TERM_RC: $(oneline "$d/restore.out.err")"
		else
			skip "sigterm/exact-restore" "30 restores ended before ptimer could be frozen with its target stopped"
		fi
	fi
fi

# ---- make help -----------------------------------------------------------------------
# every target the Makefile declares phony is on make help's list
make -s -C "$TOP" help >"$TMP/help.out" 2>&1
missing=
for t in $(sed -n 's/^\.PHONY://p' "$TOP/Makefile"); do
	re="^make $t( |$)"
	[ "$t" = all ] && re="^make +[^a-z ]"	# plain `make`, then its text
	grep -qE "$re" "$TMP/help.out" || missing="$missing $t"
done
check "make-help/every-target" "make help does not list:$missing" [ -z "$missing" ]

totals
