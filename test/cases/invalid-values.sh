#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cases/invalid-values.sh BUILD - encode refuses out-of-range values,
# naming the field and the timer, and writes no image.  The JSON fixtures in
# test/e2e/fixtures/invalid-values/ hold one timer, id 777; ok.json is valid,
# each other breaks one field (dupid.json: a second timer with id 777).
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

dir=$TMP/invalid-values
fix=$FIX/invalid-values
mkdir -p "$dir"
ptimer_run "$dir/ok.out" 30 encode -i "$fix/ok.json" -o "$dir/ok.img"
check "invalid-values/control-encodes" "a valid JSON was refused: exit $PT_RC: $(oneline "$dir/ok.out.err")" [ "$PT_RC" -eq 0 ]

# FIXTURE:WORDS, the words (":"-separated) stderr must hold besides 777
for v in "nsec:it_value:nsec" "negsec:it_value:sec" "clock12:clock" "intnsec:it_interval:nsec" \
	"intnegsec:it_interval:sec" "signo0:signo" "signo65:signo" "tid0:notify_tid" \
	"notify7:sigev_notify" "dupid:id"; do
	f=${v%%:*} words=${v#*:}
	name="invalid-values/$f"
	ptimer_run "$dir/$f.out" 30 encode -i "$fix/$f.json" -o "$dir/$f.img"
	if refused "$name" "$dir/$f.out"; then
		# the field (each word, e.g. it_value and nsec) and the timer (777)
		check "$name-names-field-and-timer" "stderr lacks '${words//:/ }' or 777: $(oneline "$dir/$f.out.err")" \
			bash -c 'f=$1; shift; for w; do grep -q -- "$w" "$f" || exit 1; done' _ "$dir/$f.out.err" ${words//:/ } 777
	fi
	check "$name-no-image-left" "$f.img was written" [ ! -e "$dir/$f.img" ]
done
totals
