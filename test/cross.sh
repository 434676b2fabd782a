#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cross.sh BUILD - the cross build of the other architecture:
# `make ARCH=arm64` on an x86_64 host (ARCH=x86_64 on an arm64 one) into
# build-ARCH/, then
#   - `file` of ptimer, ptimer_plugin.so and the guest programs
#     (test/zdtm_timers, qemu/kprobe) names the target machine;
#   - every library `readelf -d` lists as NEEDED exists in the target's
#     multiarch directories (ldd cannot read a foreign binary);
#   - the blob is the target's (blob.elf's machine) and a whole number of
#     pages;
#   - with qemu-user (qemu-aarch64[-static]) the cross-built programs run:
#     the blob's syscall stub and its ends without a tracer
#     (test_blob_local ends: the mark, registers and signal mask), ptimer
#     --version says VERSION, and show --json of an image BUILD/ptimer
#     encoded from a test fixture prints what BUILD/ptimer prints.
# What runs a cross-built ptimer against a kernel (ptrace, which qemu-user
# lacks) is the qemu kernel matrix.  SKIP when the cross compiler is missing
# ('make deps' installs it on x86_64).
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 1
. test/lib/harness.sh

case $(uname -m) in
x86_64)	A=arm64 TRIPLET=aarch64-linux-gnu MACHINE='ARM aarch64' ELFM=AArch64 QEMU=aarch64 ;;
aarch64) A=x86_64 TRIPLET=x86_64-linux-gnu MACHINE='x86-64' ELFM='X86-64' QEMU=x86_64 ;;
*)	skip_suite cross "no cross build defined for a $(uname -m) host"; totals; exit 0 ;;
esac
B=build-$A
# `make deps` installs the arm64 cross build on x86_64 (scripts/deps.sh):
# there its absence is a FAIL; elsewhere 'make deps ARCH=x86_64' is asked for
if ! command -v "$TRIPLET-gcc" >/dev/null 2>&1; then
	if [ "$A" = arm64 ]; then
		fail cross "no $TRIPLET-gcc: 'make deps' installs the cross toolchain"
		totals
		exit 1
	fi
	skip_suite cross "no $TRIPLET-gcc: 'make deps ARCH=$A' installs the cross toolchain"
	totals
	exit 0
fi

t0=$(now)
if ! out=$(make -s ARCH="$A" all "$B/test/test_blob_local" 2>&1); then
	fail cross/build "make ARCH=$A: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
	totals
	exit 1
fi
pass "cross/build: make ARCH=$A into $B/ ($(elapsed "$t0" "$(now)") s)"

for f in ptimer ptimer_plugin.so test/zdtm_timers qemu/kprobe; do
	what=$(file -b "$B/$f" 2>&1)
	check "cross/file $f" "file says: $what" grep -q "$MACHINE" <<<"$what"
done

# NEEDED of the binary and the plugin, looked up where the target's loader looks
missing=""
for f in ptimer ptimer_plugin.so; do
	for lib in $("$TRIPLET-readelf" -d "$B/$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		found=""
		for d in "/usr/lib/$TRIPLET" "/lib/$TRIPLET" "/usr/$TRIPLET/lib"; do
			[ -e "$d/$lib" ] && found=$d
		done
		[ -n "$found" ] || missing="$missing $f:$lib"
	done
done
check "cross/needed: the libraries ptimer and the plugin need exist for $A" \
	"not found in /usr/lib/$TRIPLET, /lib/$TRIPLET or /usr/$TRIPLET/lib:$missing" test -z "$missing"

m=$("$TRIPLET-readelf" -h "$B/restorer/blob.elf" | sed -n 's/^ *Machine: *//p')
size=$(stat -c %s "$B/restorer/blob.bin")
check "cross/blob: the restorer blob is $ELFM code, whole pages" "machine '$m', $size bytes" \
	test "$m" = "$ELFM" -a $((size % 4096)) -eq 0 -a "$size" -gt 0

QEMU_BIN=$(command -v "qemu-$QEMU-static" || command -v "qemu-$QEMU") || QEMU_BIN=""
if [ -z "$QEMU_BIN" ] && [ "$A" = arm64 ]; then
	fail cross/qemu-user "no qemu-$QEMU-static: 'make deps' installs qemu-user-static"
elif [ -z "$QEMU_BIN" ]; then
	skip cross/qemu-user "no qemu-$QEMU-static or qemu-$QEMU (apt-get install qemu-user-static)"
elif [ ! -x "$BUILD/ptimer" ]; then
	skip cross/qemu-user "$BUILD/ptimer not built (the image to show comes from it)"
else
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-cross.XXXXXX")
	trap 'rm -rf "$TMP"' EXIT
	# without the host's LD_PRELOAD (stdbuf's, from test/run.sh): the
	# target's loader cannot load a host library
	QRUN=(env -u LD_PRELOAD "$QEMU_BIN" -L "/usr/$TRIPLET" "$B/ptimer")
	v=$("${QRUN[@]}" --version 2>&1)
	check "cross/qemu-user: $A ptimer --version" "printed: $v" grep -q "^ptimer $(cat VERSION) " <<<"$v"
	# the in-target code's stub and ends, which need no ptrace
	env -u LD_PRELOAD "$QEMU_BIN" -L "/usr/$TRIPLET" "$B/test/test_blob_local" ends >"$TMP/ends.out" 2>&1
	sed 's/^\(PASS\|FAIL\|SKIP\) /\1 cross\/qemu-user: /' "$TMP/ends.out"
	sed 's/^\(PASS\|FAIL\|SKIP\) /\1 cross\/qemu-user: /' "$TMP/ends.out" >"$TMP/ends.tally"
	tally "$TMP/ends.tally"
	grep -q '^PASS .*stub end without a tracer' "$TMP/ends.out" ||
		fail cross/qemu-user/ends "test_blob_local ends: $(oneline "$TMP/ends.out" 300)"
	"$BUILD/ptimer" encode -i test/e2e/fixtures/sparse.json -o "$TMP/img" >"$TMP/enc.out" 2>&1
	"$BUILD/ptimer" show --json "$TMP/img" >"$TMP/host.json" 2>&1
	"${QRUN[@]}" show --json "$TMP/img" >"$TMP/cross.json" 2>&1
	same_show() { grep -q '"id": *2000000' "$TMP/host.json" && cmp -s "$TMP/host.json" "$TMP/cross.json"; }
	check "cross/qemu-user: $A ptimer show --json reads the host's image alike" \
		"host: $(oneline "$TMP/host.json" 120) / $A: $(oneline "$TMP/cross.json" 120)" same_show
fi
totals
