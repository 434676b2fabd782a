#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/qemu/matrix.sh [BUILD [ARCH]] - ptimer's end-to-end suite inside
# Debian's kernels, each booted under qemu (TCG: KVM does not work on these
# machines): bookworm's 6.1, trixie's 6.12 and sid's newest (7.x), and
# sid's source built with rseq time-slice extensions ("slice",
# test/qemu/slice-kernel.sh; amd64 only: "7.2-slice").  ARCH is
# amd64 (the default: the cloud kernels, qemu-system-x86_64) or arm64
# (linux-image-arm64, qemu-system-aarch64 -M virt; BUILD holds ptimer and
# the test programs cross-built for aarch64, build-arm64 from
# `make ARCH=arm64`).
#
#   1. test/qemu/deps.sh installs qemu-system-x86, qemu-system-arm,
#      busybox-static and cpio when missing;
#   2. BUILD/qemu/kprobe is compiled from test/qemu/kprobe.c (for arm64 with
#      ${CROSS_COMPILE:-aarch64-linux-gnu-}gcc), and
#      test/qemu/initramfs.sh packs BUILD/ptimer, BUILD/test/zdtm_timers,
#      kprobe, busybox (of ARCH: test/qemu/busybox.sh) and
#      test/qemu/guest-suite.sh into one initramfs;
#   3. for each suite test/qemu/kernels.sh fetches the kernel once (cached in
#      /var/cache/ptimer-test/kernels/SUITE, or SUITE-arm64), qemu boots it
#      with the initramfs, /init runs the guest suite and powers off; the
#      serial console is the only channel back.
#
# arm64 guests run under TCG emulating another instruction set, 2 to 5
# times slower than the x86_64 ones at the linear create/delete loop (6.1,
# both at once: 2 M pairs 53.4 s against 24.1 s, 100,000 pairs 3.9 s
# against 0.85 s): the far-ID case (a linear restore up to two far IDs on
# kernels without the prctl) takes IDs 100,000 and 200,000 there instead of
# 1,000,000 and 2,000,000 (PTIMER_MATRIX_FAR); the same two timers, the
# same linear path, a tenth of the pairs (about 45 s less a kernel).
#
# Output: the plan "1..N" (N kernels) first; the guests' PASS/FAIL/SKIP
# lines, each name prefixed by the kernel ("PASS 6.12/mix.auto/restore", for
# arm64 "PASS arm64-6.12/mix.auto/restore"), and "ok K KERNEL" or "not ok K
# KERNEL" after each; a kernel that cannot be fetched is a SKIP with the
# reason; a guest that does not finish within its time is a FAIL with the
# last line it printed.  Then the kernel x feature table in markdown (also
# written to BUILD/qemu/matrix.md), and the totals "# matrix: N passed, N
# failed, N skipped" (test/lib/harness.sh).  Exit 1 when anything failed.
# Guest logs: BUILD/qemu/logs/SUITE.log.
#
# Environment:
#   PTIMER_MATRIX_SUITES   suites to boot (default "bookworm trixie sid
#                          slice"; arm64 without slice)
#   PTIMER_MATRIX_TIMEOUT  seconds one guest may take, boot to power-off
#                          (240 amd64, 600 arm64)
#   PTIMER_MATRIX_JOBS     guests at once (1; each takes one host core)
#   PTIMER_MATRIX_SPARSE   largest ID of the sparse set (100000)
#   PTIMER_MATRIX_FAR      the far-ID case's first ID (1000000 amd64,
#                          100000 arm64)
#   PTIMER_KERNEL_REFRESH  1: look for newer kernels than the cached ones
set -u

BUILD=${1:-build}
ARCH=${2:-amd64}
HERE=$(cd "$(dirname "$0")" && pwd)
# slice: sid's kernel source built with CONFIG_RSEQ_SLICE_EXTENSION
# (test/qemu/slice-kernel.sh), amd64 only
SUITES=${PTIMER_MATRIX_SUITES:-bookworm trixie sid slice}
[ "$ARCH" = arm64 ] && SUITES=${PTIMER_MATRIX_SUITES:-bookworm trixie sid}
JOBS=${PTIMER_MATRIX_JOBS:-1}
SPARSE=${PTIMER_MATRIX_SPARSE:-100000}
case $ARCH in
amd64)
	TO=${PTIMER_MATRIX_TIMEOUT:-240}
	FAR=${PTIMER_MATRIX_FAR:-1000000}
	KSUF="" PFX="" ;;
arm64)
	TO=${PTIMER_MATRIX_TIMEOUT:-600}
	FAR=${PTIMER_MATRIX_FAR:-100000}
	KSUF=-arm64 PFX=arm64- ;;
*)
	echo "matrix.sh: architecture '$ARCH' is not amd64 or arm64" >&2
	exit 2 ;;
esac
. "$HERE/../lib/harness.sh"
finish() {
	totals matrix
	exit
}

# shellcheck disable=SC2086
plan "$(set -- $SUITES; echo $#)"
B=$(cd "$BUILD" 2>/dev/null && pwd) || { fail "${PFX}matrix/setup" "no build directory '$BUILD'"; finish; }
for f in "$B/ptimer" "$B/test/zdtm_timers"; do
	[ -x "$f" ] || { fail "${PFX}matrix/setup" "$f is missing: run 'make tests' (arm64: 'make ARCH=arm64') first"; finish; }
done
if [ "$(uname -m)" != x86_64 ]; then
	skip_suite "${PFX}matrix" "the kernels and tools are fetched for an x86_64 Debian host; this host is $(uname -m)"
	finish
fi
if ! why=$(bash "$HERE/deps.sh" 2>&1); then
	fail "${PFX}matrix" "$(echo "$why" | tail -1)"
	finish
fi
echo "$why"

Q=$B/qemu
mkdir -p "$Q/logs"
if [ "$ARCH" = amd64 ]; then
	# CC may carry words ("ccache gcc")
	read -r -a KCC <<<"${CC:-gcc}"
else
	KCC=("${CROSS_COMPILE:-aarch64-linux-gnu-}gcc")
fi
if ! why=$("${KCC[@]}" -O2 -Wall -Wextra -o "$Q/kprobe" "$HERE/kprobe.c" 2>&1); then
	fail "${PFX}matrix/kprobe" "${KCC[*]} test/qemu/kprobe.c: $(echo "$why" | head -3 | tr '\n' ' ')"
	finish
fi
if ! why=$(bash "$HERE/initramfs.sh" "$B" "$Q/initramfs.cpio.gz" "$ARCH" 2>&1); then
	fail "${PFX}matrix/initramfs" "$(echo "$why" | tail -2 | tr '\n' ' ')"
	finish
fi
echo "# matrix: $ARCH initramfs $Q/initramfs.cpio.gz ($(du -k "$Q/initramfs.cpio.gz" | cut -f1) KiB); guests time out after $TO s; far-ID case: IDs $FAR and $((FAR * 2))"

# boot SUITE: fetch, boot, leave the cleaned serial log in logs/SUITE.log and
# the outcome in logs/SUITE.status ("ok SECONDS", "skip WHY", "fail WHY")
boot() {
	local s=$1 log=$Q/logs/$1 kernel rc t0 t1
	rm -f "$log".*
	local extra=
	if [ "$s" = slice ]; then
		# built, not fetched: the first run builds it (test/qemu/slice-kernel.sh);
		# rseq_debug=1: the kernel checks slice_ctrl at every syscall entry
		# of a granted thread and kills one it finds inconsistent
		kernel=$(bash "$HERE/slice-kernel.sh" 2>"$log.fetch")
		rc=$?
		extra=" rseq_debug=1"
	else
		kernel=$(bash "$HERE/kernels.sh" "$s" "$ARCH" 2>"$log.fetch")
		rc=$?
	fi
	if [ "$rc" -ne 0 ]; then
		# a kernel the matrix could not fetch is an environment not built: a FAIL
		echo "fail cannot $([ "$s" = slice ] && echo build || echo fetch) the kernel: $(tail -1 "$log.fetch")" >"$log.status"
		return
	fi
	t0=$(now)
	local args="quiet loglevel=1 panic=-1 ptimer.sparse=$SPARSE ptimer.far=$FAR$extra"
	if [ "$ARCH" = amd64 ]; then
		# no_timer_check: a busy host makes TCG too slow for the kernel's
		# IO-APIC timer check, and 6.1 then panics at boot ("IO-APIC +
		# timer doesn't work!"); the check is for broken hardware.
		timeout -k 10 "$TO" qemu-system-x86_64 -accel tcg -cpu max -m 1024 -smp 1 \
			-nographic -no-reboot -monitor none -serial stdio -display none -nic none \
			-kernel "$kernel" -initrd "$Q/initramfs.cpio.gz" \
			-append "console=ttyS0 no_timer_check $args" \
			</dev/null >"$log.raw" 2>&1
	else
		# pauth-impdef: QEMU's own pointer-authentication hash instead of
		# the architected QARMA, which TCG computes 2 to 4 times slower
		# (every function entry of the kernel signs its return address)
		timeout -k 10 "$TO" qemu-system-aarch64 -M virt -accel tcg -cpu max,pauth-impdef=on \
			-m 1024 -smp 1 -nographic -no-reboot -monitor none -serial stdio \
			-display none -nic none \
			-kernel "$kernel" -initrd "$Q/initramfs.cpio.gz" \
			-append "console=ttyAMA0 $args" \
			</dev/null >"$log.raw" 2>&1
	fi
	rc=$?
	t1=$(now)
	# the serial console: CRLF, terminal resets from the firmware
	tr -d '\r' <"$log.raw" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1bc//g' >"$log.log"
	local secs
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a }')
	if grep -q '@@ptimer-guest-end' "$log.log"; then
		echo "ok $secs" >"$log.status"
	elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "fail the guest did not finish within $TO s (hung or too slow); last line: $(grep -v '^$' "$log.log" | grep -v '^qemu-system' | tail -1 | cut -c1-200)" >"$log.status"
	elif ! grep -q '@@ptimer-guest-begin' "$log.log"; then
		echo "fail the guest never started the suite (qemu exit $rc): $(grep -v '^$' "$log.log" | tail -3 | tr '\n' ' ' | cut -c1-300)" >"$log.status"
	else
		echo "fail the guest stopped in the middle of the suite (qemu exit $rc after $secs s); last line: $(grep -v '^$' "$log.log" | tail -1 | cut -c1-200)" >"$log.status"
	fi
}

# Guests run JOBS at a time; results are printed in suite order.
running=0
for s in $SUITES; do
	echo "# matrix: $s: fetching and booting"
	boot "$s" &
	running=$((running + 1))
	if [ "$running" -ge "$JOBS" ]; then
		wait -n 2>/dev/null || wait
		running=$((running - 1))
	fi
done
wait

# kname SUITE: "6.12" ("arm64-6.12") from the cached kernel's release, else
# the suite
kname() {
	local st=${PTIMER_KERNEL_CACHE:-${PTIMER_TEST_CACHE:-/var/cache/ptimer-test}/kernels}/$1$KSUF/stamp r
	r=$(sed -n 's/^release=//p' "$st" 2>/dev/null)
	local sfx=
	[ "$1" = slice ] && sfx=-slice
	if [ -n "$r" ]; then echo "$r" | awk -v p="$PFX" -v s="$sfx" -F. '{ sub(/[^0-9].*/, "", $2); print p $1 "." $2 s }'; else echo "$PFX$1"; fi
}
stampval() { sed -n "s/^$2=//p" "${PTIMER_KERNEL_CACHE:-${PTIMER_TEST_CACHE:-/var/cache/ptimer-test}/kernels}/$1$KSUF/stamp" 2>/dev/null; }

ROWS=()
K=0
for s in $SUITES; do
	log=$Q/logs/$s
	k=$(kname "$s")
	K=$((K + 1))
	f0=$H_FAIL
	read -r what rest <"$log.status"
	case $what in
	skip)
		skip "$k/$s" "$rest"
		ROWS+=("| $k ($s) | – | – | – | – | – | – | – | – | kernel not fetched: ${rest//|//} |")
		echo "ok $K $k"
		continue ;;
	fail)
		if [ ! -f "$log.log" ]; then
			fail "$k/$s" "$rest"
			ROWS+=("| $k ($s) | – | – | – | – | – | – | – | – | ${rest//|//} |")
			echo "not ok $K $k"
			continue
		fi ;;
	esac
	echo "# matrix: $k: $(stampval "$s" package) $(stampval "$s" version), guest $(sed -n 's/.*@@ptimer-guest-begin //p' "$log.log" | head -1)"
	# the guest's verdict lines, each named for its kernel
	sed -n '/@@ptimer-guest-begin/,$p' "$log.log" | grep -E "^($H_STATUS) " | sed -E "s#^($H_STATUS) #\\1 $k/#" >"$log.res"
	grep -E '^(FEATURE|TIME|# )' "$log.log" | sed "s/^/# $k: /" | grep -v '^# [^:]*: # verify: '
	cat "$log.res"
	p=$(grep -c '^PASS ' "$log.res")
	f=$(grep -c '^FAIL ' "$log.res")
	n=$(grep -c '^SKIP ' "$log.res")
	tally "$log.res"
	if [ "$what" = fail ]; then
		fail "$k/guest" "$rest"
		f=$((f + 1))
	elif [ "$p" -eq 0 ]; then
		fail "$k/guest" "the suite finished without a single PASS line (see $log.log)"
		f=$((f + 1))
	fi
	if [ "$H_FAIL" -eq "$f0" ]; then echo "ok $K $k"; else echo "not ok $K $k"; fi

	# ---- the table row ----
	feat() { sed -n "s/^FEATURE $1 //p" "$log.log" | head -1; }
	tim() { awk -v n="$1" '$1 == "TIME" && $2 == n { print; exit }' "$log.log"; }
	ms() { # TIME line -> "458 ms linear" / "9.6 s linear"
		tim "$1" | awk '{ if ($4 != "") { if ($4 >= 1000) printf "%.1f s %s", $4 / 1000, $5; else printf "%.0f ms %s", $4, $5 }; t = 1 }
			END { if (!t || $4 == "") print "–" }'
	}
	pr=$(feat prctl77)
	case $pr in
	0 | 1) exact="yes (GET → $pr)"; auto=exact ;;
	'') exact="?"; auto="?" ;;
	*) exact="no ($pr)"; auto=linear ;;
	esac
	# linear fallback: every check of the suite (auto is linear) or the
	# forced --mode linear ones (exact kernels)
	if [ "$auto" = linear ]; then
		lp=$p lf=$f
	else
		lp=$(grep -cE '^PASS [^ ]*\.linear[/ ]' "$log.res")
		lf=$(grep -cE '^FAIL [^ ]*\.linear[/ ]' "$log.res")
	fi
	if [ "$lf" -eq 0 ] && [ "$lp" -gt 0 ]; then
		lin="passes ($lp checks$([ "$auto" = linear ] || echo ", --mode linear"))"
	else
		lin="**fails** ($lf of $((lp + lf)) checks)"
	fi
	tl=$(feat timers_line)
	case $(feat timers_format) in
	px16) tf="%px, 16 hex digits: \`$tl\`" ;;
	p16-hashed) tf="16 hex digits, hashed (%p): \`$tl\`" ;;
	p) tf="%p: \`$tl\`" ;;
	*) tf="$(feat timers_format): \`$tl\`" ;;
	esac
	rs=$(feat rseq)
	case $rs in
	[0-9]*) rs="glibc, $rs bytes" ;;
	esac
	sl="$(feat slice_get) (rseq: $rs)"
	rate=$(feat pair_rate)
	[ -n "$rate" ] && rate=$(awk -v r="$rate" 'BEGIN { printf "%.0fk", r / 1000 }')
	if [ "$what" = ok ]; then
		res="$p pass, $f fail, $n skip; $(awk '{ print $2 }' "$log.status") s"
	else
		res="$p pass, $f fail, $n skip; **${rest//|//}**"
	fi
	ROWS+=("| $k ($s) | $exact | $auto | $lin | $tf | $sl | $(ms "sparse$SPARSE.auto") | $(ms sparse.auto) | $rate | $res |")
done

TABLE=$Q/matrix.md
# exact kernels restore zdtm_timers' sparse scenario (IDs 1,000,000 and
# 2,000,000); the others the far-ID case, sized down on arm64
FARCOL="IDs 1,000,000 + 2,000,000"
[ "$FAR" -ne 1000000 ] && FARCOL="IDs 1,000,000 + 2,000,000 (exact); $FAR + $((FAR * 2)) (linear)"
{
	echo "| kernel | exact IDs (prctl 77 GET) | \`--mode auto\` takes | linear fallback | /proc/PID/timers \`signal:\` line | rseq slice extension (prctl 79 GET) | restore: 64 timers, IDs to $SPARSE | restore: $FARCOL | create/delete pairs/s (TCG) | guest suite |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	for r in "${ROWS[@]}"; do echo "$r"; done
} >"$TABLE"
echo "# matrix: kernel x feature table ($TABLE):"
cat "$TABLE"
finish
