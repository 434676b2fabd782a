#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cases/corrupt-image.sh BUILD - a real image of the mix scenario,
# corrupted by hand six ways (bad magic, truncated, trailing bytes, a huge or
# a short entry length, an empty file), is refused before the target is
# touched.
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

name=corrupt-image
mix=$TMP/mix
dir=$TMP/corrupt
make_mix_image "$mix" "$name" || exit 1
mkdir -p "$dir"
src=$(ls "$mix"/ptimers-*.img)
img=$(basename "$src")
size=$(stat -c %s "$src")
start_role verify empty2 "$dir" "$name"
vpid=$ROLE_PID
wait_ready "$dir" verify "$vpid" || { fail "$name/target" "verify did not start: $(oneline "$dir/verify.out")"; exit 1; }
snapshot "$vpid" "$dir/before"
s2=$(sed -n 2p "$mix/setup.tids")
v2=$(sed -n 2p "$dir/verify.tids")
for v in bad-magic truncated trailing-bytes huge-entry short-entry empty-file; do
	mkdir -p "$dir/$v"
	cp "$src" "$dir/$v/$img"
	case $v in
	bad-magic) printf '\x00' | dd of="$dir/$v/$img" bs=1 seek=0 conv=notrunc status=none ;;
	truncated) truncate -s $((size - 7)) "$dir/$v/$img" ;;
	trailing-bytes) printf 'garbage!' >>"$dir/$v/$img" ;;
	huge-entry) printf '\xff\xff\xff\x7f' | dd of="$dir/$v/$img" bs=1 seek=4 conv=notrunc status=none ;;
	short-entry)
		# the head entry's length one less: the protobuf is cut short
		b=$(od -An -tu1 -j4 -N1 "$src" | tr -d ' ')
		printf "\\x$(printf %02x $((b - 1)))" | dd of="$dir/$v/$img" bs=1 seek=4 conv=notrunc status=none ;;
	empty-file) : >"$dir/$v/$img" ;;
	esac
	ptimer_run "$dir/$v.out" 60 restore -t "$vpid" -D "$dir/$v" --tid-map "$s2=$v2"
	refused "$name/$v" "$dir/$v.out"
	untouched "$name/$v-target" "$vpid" "$dir/before"
done
finish_verify "$dir" "$vpid"
totals
