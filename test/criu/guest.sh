#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/criu/guest.sh ARCH SUITE [BUILD] - the CRIU plugin with Debian
# SUITE's criu (trixie: 4.1.1, sid: 4.2.1) inside a guest booted under
# qemu (TCG, one vCPU) with Debian sid's kernel, where the host's kernel
# cannot serve: ARCH arm64 (the project cross-built, qemu-system-aarch64)
# or amd64 (this host's build; the guest's kernel has soft-dirty tracking
# and userfaultfd, which criu's pre-dump and lazy pages need and this
# host's 6.18 lacks).
#
#   1. the files built in BUILD (arm64: `make ARCH=arm64`, default
#      build-arm64; amd64: `make`, default build): ptimer, ptimer_plugin.so,
#      test/zdtm_timers;
#   2. the root SUITE-arm64 or SUITE-guest (test/criu/roots.sh ensure SUITE
#      arm64|guest: criu and the project's libraries, no compilers; arm64
#      through qemu-user), packed once into an uncompressed cpio beside it
#      (ROOT.cpio, remade when the root's stamp changes); the plugin is
#      built again from BUILD's objects against the root's criu-plugin.h
#      (make CRIU_PLUGIN_INC=...), as the criu suite builds it inside each
#      root: a Debian 12 host's header is criu 3.17's, whose plugin refuses
#      to dump; test/pending_timer with it;
#   3. sid's kernel of ARCH (test/qemu/kernels.sh, cached);
#   4. qemu boots the kernel with ROOT.cpio + a small cpio of this run (the
#      built files, test/criu/suite-inner.sh and the harness, /init =
#      test/criu/guest-init.sh): the root is the guest's whole file system,
#      its kernel the only one criu sees.  suite-inner.sh runs the criu
#      suite's cases on them (prebuilt mode, no compiler in the guest).
#
# Output: the plan "1..1", the guest's PASS/FAIL/SKIP lines (names
# "criu-SUITE-ARCH/CASE/..."), "ok 1 criu-SUITE-ARCH", "# ..." notes with
# the times (root, boot, guest), the totals.  No built files is a SKIP
# naming them; a root, kernel or qemu that cannot be had is a FAIL.  Exit
# 1 when a check failed.
#
# Environment (NAME: ARM64 for arm64, GUEST for amd64):
#   PTIMER_CRIU_NAME_CASES    the cases (words as suite-inner.sh's list has them)
#   PTIMER_CRIU_NAME_TIMEOUT  seconds the guest may take (900)
#   PTIMER_ARM64_KERNEL       an arm64 kernel Image to boot instead of sid's
#   PTIMER_NAME_CRIU_FAULT    CRIU_FAULT for criu in the guest (unset)
# and, for a guest that is one step of a move (test/criu/slice-move.sh):
#   PTIMER_GUEST_MORE_CASES   cases run after the ARCH's own
#   PTIMER_GUEST_KERNEL       amd64: the kernel to boot, "slice" or a Debian
#                             suite's (trixie: 6.12), instead of the ARCH's
#   PTIMER_GUEST_NAME         the name of the checks, instead of criu-SUITE-...
#   PTIMER_GUEST_CARRY_IN     a directory the guest finds as /ptimer-carry-in
#   PTIMER_GUEST_CARRY_OUT    a directory that receives what the guest left
#                             in /ptimer-carry-out (packed on the console,
#                             the guest's only channel back)
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
ARCH=${1:-}
SUITE=${2:-}
case $ARCH in
arm64)
	B=${3:-$top/build-arm64}
	NAME=criu-$SUITE-arm64 ROOTSET=arm64 ELF=AArch64 QEMU=qemu-system-aarch64
	TO=${PTIMER_CRIU_ARM64_TIMEOUT:-900} FAULT=${PTIMER_ARM64_CRIU_FAULT:-}
	MAKEARCH=(ARCH=arm64)
	# Each case is a few criu runs; under TCG one dump or restore takes
	# seconds: a part of test/cases/LIST's criu rounds (drive:CASE:FLAVOUR,
	# test/lib/driver.sh).
	CASES=${PTIMER_CRIU_ARM64_CASES:-drive:stride:criu drive:stride:criu-takeover
drive:sparse100k:criu-takeover drive:auto-fallback:criu
drive:mix:criu drive:mix:criu-takeover drive:threads:criu drive:threads:criu-pidns
drive:exited:criu drive:exited-alone:criu drive:no-plugin-restore:criu
drive:mix:criu-native drive:pending-expiry:criu drive:pending-expiry:criu-alone} ;;
amd64-slice)
	# the rseq time-slice rounds, on the kernel built with
	# CONFIG_RSEQ_SLICE_EXTENSION (test/qemu/slice-kernel.sh), booted
	# with rseq_debug=1 (the kernel checks slice_ctrl at syscall entry)
	B=${3:-$top/build}
	NAME=criu-$SUITE-slice ROOTSET=guest ELF=X86-64 QEMU=qemu-system-x86_64
	TO=${PTIMER_CRIU_SLICE_TIMEOUT:-900} FAULT=${PTIMER_SLICE_CRIU_FAULT:-}
	MAKEARCH=()
	CASES=${PTIMER_CRIU_SLICE_CASES:-drive:slice-grants:criu drive:slice-grants:criu-alone drive:threads:criu} ;;
amd64)
	B=${3:-$top/build}
	NAME=criu-$SUITE-guest ROOTSET=guest ELF=X86-64 QEMU=qemu-system-x86_64
	TO=${PTIMER_CRIU_GUEST_TIMEOUT:-900} FAULT=${PTIMER_GUEST_CRIU_FAULT:-}
	MAKEARCH=()
	# what needs the guest's kernel: lazy pages and pre-dump, with the
	# plugin and with criu alone
	CASES=${PTIMER_CRIU_GUEST_CASES:-$(unset PTIMER_CASES && DRIVE_CASES=$top/test/cases && . "$top/test/lib/driver.sh" &&
		drive_words criu-lazy criu-lazy-alone criu-predump criu-predump-alone)} ;;
*)
	echo "usage: guest.sh arm64|amd64 trixie|sid, or amd64-slice trixie|sid|criu-dev [BUILD]" >&2
	exit 2 ;;
esac
# cases after the ARCH's own: steps of test/criu/slice-move.sh that
# test/run.sh has this boot run beside them
[ -n "${PTIMER_GUEST_MORE_CASES:-}" ] && CASES="$CASES $PTIMER_GUEST_MORE_CASES"
NAME=${PTIMER_GUEST_NAME:-$NAME}
KSEL=
if [ -n "${PTIMER_GUEST_KERNEL:-}" ]; then
	[ "$ARCH" = arm64 ] && { echo "guest.sh: PTIMER_GUEST_KERNEL is for amd64 guests" >&2; exit 2; }
	KSEL=$PTIMER_GUEST_KERNEL
fi
[ -z "$KSEL" ] && [ "$ARCH" = amd64-slice ] && KSEL=slice
# RSUITE: the Debian root the guest boots; criu-dev (the slice guest only)
# runs CRIU's criu-dev, built by the criu stage (test/criu/suite.sh, cached
# in PTIMER_CRIU_DEV_CACHE), in sid's root, whose libraries it was built
# against
RSUITE=$SUITE
case $SUITE in
trixie|sid) ;;
criu-dev) [ "$ARCH" = amd64-slice ] || { echo "guest.sh: criu-dev runs in the slice guest only" >&2; exit 2; }
	RSUITE=sid ;;
*) echo "usage: guest.sh arm64|amd64 trixie|sid, or amd64-slice trixie|sid|criu-dev [BUILD]" >&2; exit 2 ;;
esac
. "$top/test/lib/harness.sh"
finish() {
	totals "$NAME"
	exit
}

plan 1
if [ "$(id -u)" != 0 ]; then
	skip_suite "$NAME" "needs root (debootstrap, binfmt_misc, qemu)"
	finish
fi
[ -d "$B" ] && B=$(cd "$B" && pwd)
# the plugin is linked again below, against the root's criu-plugin.h (make
# check builds ptimer and the test programs, not the plugin, before this)
need=(ptimer test/zdtm_timers)
[ "$ARCH" = arm64 ] && need+=(ptimer_plugin.so)
for f in "${need[@]}"; do
	if [ ! -f "$B/$f" ]; then
		skip_suite "$NAME" "no $B/$f: build it first (make ${MAKEARCH[*]})"
		finish
	fi
	if ! LC_ALL=C readelf -h "$B/$f" 2>/dev/null | grep -q "Machine:.*$ELF"; then
		fail "$NAME/files" "$B/$f is not an $ELF ELF file"
		finish
	fi
done
[ -x "$top/test/qemu/deps.sh" ] && bash "$top/test/qemu/deps.sh" >/dev/null 2>&1
for t in "$QEMU" cpio; do
	if ! command -v "$t" >/dev/null; then
		fail "$NAME" "no $t on this host: 'make deps' installs it (test/qemu/deps.sh)"
		finish
	fi
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-$NAME.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

# ---- the kernel --------------------------------------------------------------
KARGS=
if [ "$ARCH" = arm64 ] && [ -n "${PTIMER_ARM64_KERNEL:-}" ]; then
	kernel=$PTIMER_ARM64_KERNEL
	krel="$(basename "$kernel") (PTIMER_ARM64_KERNEL)"
elif [ "$KSEL" = slice ]; then
	kernel=$(bash "$top/test/qemu/slice-kernel.sh" 2>"$TMP/kernel.err")
	if [ $? -ne 0 ] || [ ! -s "$kernel" ]; then
		fail "$NAME" "cannot build the slice kernel: $(tail -n 1 "$TMP/kernel.err")"
		finish
	fi
	krel="$(sed -n 's/^release=//p' "$(dirname "$kernel")/stamp" 2>/dev/null) (CONFIG_RSEQ_SLICE_EXTENSION=y)"
	KARGS=" rseq_debug=1"
else
	ks=${KSEL:-sid} ka=${ARCH%-slice}
	kernel=$(PTIMER_KERNEL_MODULES=1 bash "$top/test/qemu/kernels.sh" "$ks" "$ka" 2>"$TMP/kernel.err")
	rc=$?
	if [ "$rc" -ne 0 ] || [ ! -s "$kernel" ]; then
		fail "$NAME" "cannot fetch $ks's $ka kernel: $(tail -n 1 "$TMP/kernel.err")"
		finish
	fi
	krel=$(sed -n 's/^release=//p' "$(dirname "$kernel")/stamp" 2>/dev/null)
fi

# ---- the root and its cpio -----------------------------------------------------
t0=$(now)
if ! root=$("$here/roots.sh" ensure "$RSUITE" "$ROOTSET" 2>"$TMP/root.err"); then
	sed 's/^/# /' "$TMP/root.err"
	fail "$NAME" "cannot build the $RSUITE $ROOTSET root: $(grep 'roots.sh: ' "$TMP/root.err" | tail -n 1 | cut -c1-300)"
	finish
fi
grep -E 'built in|stage done|debootstrap' "$TMP/root.err" | sed 's/^/# /'
echo "# $NAME: root $root ($(sed -n 's/^criu=/criu /p' "$root/.ptimer-root")), ready after $(elapsed "$t0" "$(now)") s"

# root_cpio ROOT OUT: the root packed as an uncompressed newc cpio (the
# kernel unpacks it into the guest's rootfs), without documentation, apt's
# caches or what the guest mounts itself; remade when ROOT's stamp changes.
root_cpio() {
	local r=$1 out=$2
	exec 8>"$out.lock"
	flock 8 || return 1
	if [ -s "$out" ] && cmp -s "$r/.ptimer-root" "$out.stamp"; then
		exec 8>&-
		return 0
	fi
	(cd "$r" && find . -xdev \( -path './proc/*' -o -path './sys/*' -o -path './dev/*' \
		-o -path './usr/share/doc/*' -o -path './usr/share/man/*' -o -path './usr/share/info/*' \
		-o -path './usr/share/locale/*' -o -path './var/cache/apt/*' -o -path './var/lib/apt/lists/*' \) \
		-prune -o -print | LC_ALL=C sort | cpio -o -H newc --quiet) >"$out.new" &&
		mv -f "$out.new" "$out" && cp "$r/.ptimer-root" "$out.stamp"
	local rc=$?
	exec 8>&-
	return $rc
}
t0=$(now)
if ! root_cpio "$root" "$root.cpio" 2>"$TMP/cpio.err"; then
	fail "$NAME/root-cpio" "cannot pack $root into $root.cpio: $(oneline "$TMP/cpio.err")"
	finish
fi
echo "# $NAME: $root.cpio: $(($(stat -c %s "$root.cpio") / 1048576)) MiB, ready after $(elapsed "$t0" "$(now)") s"

# ---- the plugin, against this criu's criu-plugin.h -------------------------------
if [ ! -f "$root/usr/include/criu/criu-plugin.h" ]; then
	fail "$NAME/plugin-build" "no usr/include/criu/criu-plugin.h in $root (libcriu-dev)"
	finish
fi
mkdir -p "$TMP/criu-inc"
cp -r "$root/usr/include/criu" "$TMP/criu-inc/"
# criu-dev: its tree's criu/criu and criu-plugin.h (the criu stage built them)
DEV=
if [ "$SUITE" = criu-dev ]; then
	devcache=${PTIMER_CRIU_DEV_CACHE:-${PTIMER_TEST_CACHE:-/var/cache/ptimer-test}/criu-dev}
	for st in "$devcache"/*.built; do
		[ -x "${st%.built}/criu/criu" ] && DEV=${st%.built}
	done
	if [ -z "$DEV" ]; then
		fail "$NAME/criu-dev" "no criu-dev build in $devcache: test/criu/suite.sh check criu-dev builds it (make check runs it first)"
		finish
	fi
	cp "$DEV/criu/include/criu-plugin.h" "$TMP/criu-inc/criu/criu-plugin.h"
fi
cp -a "$B" "$TMP/build"
rm -f "$TMP/build/plugin/"*.o "$TMP/build/ptimer_plugin.so"
# the C programs of this guest's cases (test/lib/driver.sh drive_progs)
PROGS=$(DRIVE_CASES=$top/test/cases && . "$top/test/lib/driver.sh" &&
	{ drive_progs_of $(for w in $CASES; do [ "${w#drive:}" != "$w" ] && w=${w#drive:} && echo "${w%%:*}"; done | sort -u)
	  for w in $CASES; do [ "${w#slice_move:}" != "$w" ] && echo slice_move; done; } | sort -u |
	while read -r p; do [ -f "$top/test/e2e/$p.c" ] && echo "$p"; done)
if ! make -C "$top" "${MAKEARCH[@]}" B="$TMP/build" CRIU_PLUGIN_INC="$TMP/criu-inc" "$TMP/build/ptimer_plugin.so" \
	$(for p in $PROGS; do echo "$TMP/build/test/$p"; done) \
	>"$TMP/plugin.log" 2>&1 || ! grep -q -- '-DPTIMER_HAVE_CHECKPOINT_DEVICES' "$TMP/plugin.log"; then
	fail "$NAME/plugin-build" "make ${MAKEARCH[*]} CRIU_PLUGIN_INC=(criu $(sed -n 's/^criu=//p' "$root/.ptimer-root")) ptimer_plugin.so and $(echo $PROGS): $(tail -n 3 "$TMP/plugin.log" | tr '\n' ' ' | cut -c1-300)"
	finish
fi
if [ -n "$DEV" ]; then
	echo "# $NAME: ptimer_plugin.so rebuilt against criu-dev's criu-plugin.h ($(basename "$DEV"))"
else
	echo "# $NAME: ptimer_plugin.so rebuilt against the root's criu-plugin.h (criu $(sed -n 's/^#define CRIU_VERSION "\(.*\)"$/\1/p' "$TMP/criu-inc/criu/version.h"))"
fi

# ---- this run's files ------------------------------------------------------------
o=$TMP/overlay
mkdir -p "$o/ptimer-bin/usr/bin" "$o/ptimer-bin/usr/lib/criu" "$o/ptimer-bin/build/test" "$o/ptimer-criu"
cp "$B/ptimer" "$o/ptimer-bin/usr/bin/"
cp "$TMP/build/ptimer_plugin.so" "$o/ptimer-bin/usr/lib/criu/"
for f in $PROGS; do
	cp "$TMP/build/test/$f" "$o/ptimer-bin/build/test/"
done
if [ -n "$DEV" ]; then
	mkdir -p "$o/criu-dev/criu/criu/include"
	cp "$DEV/criu/criu" "$o/criu-dev/criu/criu/"
	cp "$DEV/criu/include/criu-plugin.h" "$o/criu-dev/criu/criu/include/"
fi
cp "$here/suite-inner.sh" "$o/ptimer-criu/"
cp "$top"/test/lib/*.sh "$o/ptimer-criu/"
cp -r "$top/test/cases" "$o/ptimer-criu/cases"
cp "$here/guest-init.sh" "$o/init"
# the modules criu needs that this kernel builds as such (test/qemu/kernels.sh)
if [ -s "$(dirname "$kernel")/modules/order" ]; then
	mkdir -p "$o/ptimer-modules"
	cp "$(dirname "$kernel")"/modules/* "$o/ptimer-modules/"
fi
if [ -n "${PTIMER_GUEST_CARRY_IN:-}" ]; then
	mkdir -p "$o/ptimer-carry-in"
	cp -a "$PTIMER_GUEST_CARRY_IN"/. "$o/ptimer-carry-in/"
fi
chmod 755 "$o/init"
{
	printf 'GUEST_SUITE=%q\n' "${NAME#criu-}"
	printf 'PTIMER_CRIU_CASES=%q\n' "$(echo $CASES)"
	printf 'PTIMER_CRIU_TIMEOUT=%q\n' "${PTIMER_CRIU_TIMEOUT:-300}"
	[ -n "$FAULT" ] && printf 'CRIU_FAULT=%q\n' "$FAULT"
	[ -n "$DEV" ] && printf 'PTIMER_CRIU_DEV=%q\n' criu/criu/criu
	[ -n "${PTIMER_GUEST_CARRY_OUT:-}" ] && printf 'GUEST_CARRY_OUT=1\n'
} >"$o/ptimer-criu/guest.env"
(cd "$o" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$TMP/run.cpio" || {
	fail "$NAME/cpio" "cannot pack this run's files"
	finish
}
# The kernel takes concatenated cpio archives; later files win.
cat "$root.cpio" "$TMP/run.cpio" >"$TMP/initrd"

# ---- the guest -------------------------------------------------------------------
echo "# $NAME: booting $krel under $QEMU (TCG); the guest times out after $TO s"
log=$TMP/guest
t0=$(now)
if [ "$ARCH" = arm64 ]; then
	# pauth-impdef: QEMU's own pointer-authentication hash, faster under TCG
	timeout -k 10 "$TO" qemu-system-aarch64 -M virt -accel tcg -cpu max,pauth-impdef=on -m 2048 -smp 1 \
		-nographic -no-reboot -monitor none -serial stdio -display none -nic none \
		-kernel "$kernel" -initrd "$TMP/initrd" \
		-append "console=ttyAMA0 quiet loglevel=1 panic=-1 rdinit=/init" \
		</dev/null >"$log.raw" 2>&1
else
	# KVM fails on this machine (nested: "emulation failure"): TCG
	timeout -k 10 "$TO" qemu-system-x86_64 -accel tcg -cpu max -m 2048 -smp 1 \
		-nographic -no-reboot -monitor none -serial stdio -display none -nic none \
		-kernel "$kernel" -initrd "$TMP/initrd" \
		-append "console=ttyS0 no_timer_check quiet loglevel=1 panic=-1 rdinit=/init$KARGS" \
		</dev/null >"$log.raw" 2>&1
fi
rc=$?
secs=$(elapsed "$t0" "$(now)")
tr -d '\r' <"$log.raw" >"$log.log"
cp "$log.log" "$B/$NAME.log" 2>/dev/null
# the suite's lines (harness format) and its notes, between the markers
# (the begin marker may follow the console's escape sequences on its line)
sed -n '/@@ptimer-guest-begin/,/^@@ptimer-guest-end/p' "$log.log" |
	grep -E "^($H_STATUS) |^(not )?ok [0-9]|^# |^1\\.\\." >"$TMP/lines"
sed 's/^1\.\./# cases: 1../; s/^ok /# ok /; s/^not ok /# not ok /' "$TMP/lines"
tally "$TMP/lines"
end=$(grep -m1 '^@@ptimer-guest-end' "$log.log")
# what the guest carries out: a gzip'ed tar in base64 between the markers
if [ -n "${PTIMER_GUEST_CARRY_OUT:-}" ]; then
	mkdir -p "$PTIMER_GUEST_CARRY_OUT"
	if ! sed -n '/^@@ptimer-carry-begin/,/^@@ptimer-carry-end/p' "$log.log" | sed '1d;$d' | base64 -d 2>/dev/null |
		tar -xz -C "$PTIMER_GUEST_CARRY_OUT" 2>"$TMP/carry.err"; then
		fail "$NAME/carry-out" "what the guest left in /ptimer-carry-out did not come back whole: $(oneline "$TMP/carry.err")"
	fi
fi
if [ -n "$end" ]; then
	echo "# $NAME: guest done in $secs s (${end#@@ptimer-guest-end })"
	case $end in
	*"rc=0 "*) ;;
	*) grep -q '^FAIL ' "$TMP/lines" || fail "$NAME/guest" "suite-inner.sh ended ${end#@@ptimer-guest-end } with no FAIL line" ;;
	esac
elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	fail "$NAME/guest" "the guest did not finish within $TO s; last line: $(grep -v '^$' "$log.log" | tail -n 1 | cut -c1-200)"
elif ! grep -q '@@ptimer-guest-begin' "$log.log"; then
	fail "$NAME/guest" "the guest never reached /init (qemu exit $rc): $(grep -v '^$' "$log.log" | tail -n 3 | tr '\n' ' ' | cut -c1-300)"
else
	fail "$NAME/guest" "the guest stopped in the middle (qemu exit $rc after $secs s); last line: $(grep -v '^$' "$log.log" | tail -n 1 | cut -c1-200)"
fi
if [ "$H_FAIL" -eq 0 ]; then echo "ok 1 $NAME"; else echo "not ok 1 $NAME"; fi
finish
