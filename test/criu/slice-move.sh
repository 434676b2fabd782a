#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/criu/slice-move.sh [BUILD] - rseq time-slice checkpoints moved
# between kernels for real: four guests of test/criu/guest.sh (sid's root,
# criu 4.2.1 with the plugin, qemu TCG), each a step of test/lib/slice-move.sh,
# what one leaves carried to the next (guest.sh PTIMER_GUEST_CARRY_*):
#   1. Debian's stock 7.2 (built without CONFIG_RSEQ_SLICE_EXTENSION: the
#      prctl answers ENOTSUPP): dump (`ptimer dump`, criu dump + plugin)
#   2. the slice kernel (test/qemu/slice-kernel.sh): restore step 1's
#      images (threads that had no extension stay without), then dump
#   3. Debian's stock 7.2: restore step 2's images (ENOTSUPP)
#   4. Debian 13's 6.12 (no slice ABI, EINVAL; no exact-ID prctl: linear
#      mode): restore step 2's images
# Each restore runs with --rseq-slice / PTIMER_RSEQ_SLICE auto, require
# and off.  Checks named slice-move-STEP/slice-move/...; "ok K" per guest.
# A guest that cannot be had (root, kernel, qemu) is guest.sh's FAIL.
# PTIMER_SLICE_MOVE_DIR: keep what each step carried there (from-stock,
# from-slice: the images, the states the process reported, its timers).
# PTIMER_SLICE_MOVE_FROM: a directory where other boots already ran steps 1
# and 2 (test/run.sh has criu-guest-sid dump and criu-guest-slice restore
# and dump, guest.sh PTIMER_GUEST_MORE_CASES): only steps 3 and 4 boot,
# from its from-slice.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
B=${1:-$top/build}
. "$top/test/lib/harness.sh"

if [ -n "${PTIMER_SLICE_MOVE_FROM:-}" ]; then plan 2; else plan 4; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-slice-move.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

# step K NAME KERNEL IN OUT CASES...: guest.sh amd64 sid on KERNEL
step() {
	local k=$1 name=$2 kernel=$3 in=$4 out=$5 f0=$H_FAIL
	shift 5
	PTIMER_GUEST_NAME=$name PTIMER_GUEST_KERNEL=$kernel PTIMER_GUEST_CARRY_IN=$in PTIMER_GUEST_CARRY_OUT=$out \
		PTIMER_CRIU_GUEST_CASES="$*" bash "$here/guest.sh" amd64 sid "$B" >"$TMP/$name.out" 2>&1
	# one plan for this script: the guest's own plan and verdict as notes
	sed 's/^1\.\./# guest plan: 1../; s/^ok /# guest: ok /; s/^not ok /# guest: not ok /' "$TMP/$name.out" |
		grep -v '^# .*: [0-9]* passed, [0-9]* failed'
	tally "$TMP/$name.out"
	if [ "$H_FAIL" -eq "$f0" ]; then echo "ok $k $name"; else echo "not ok $k $name"; fi
}

if [ -n "${PTIMER_SLICE_MOVE_FROM:-}" ]; then
	C=$PTIMER_SLICE_MOVE_FROM k=0
else
	C=${PTIMER_SLICE_MOVE_DIR:-$TMP} k=2
	rm -rf "$C/from-stock" "$C/from-slice"
	mkdir -p "$C/from-stock" "$C/from-slice"
	step 1 slice-move-stock-dump sid "" "$C/from-stock" slice_move:dump:stock
	step 2 slice-move-slice slice "$C/from-stock" "$C/from-slice" slice_move:restore:stock slice_move:dump:slice
fi
step $((k + 1)) slice-move-stock-restore sid "$C/from-slice" "" slice_move:restore:slice
step $((k + 2)) slice-move-6.12 trixie "$C/from-slice" "" slice_move:restore:slice
totals slice-move
