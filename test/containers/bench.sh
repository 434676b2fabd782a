#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/containers/bench.sh - (f) of `make bench`: runc checkpoint and
# restore of a container holding the five-timer set (zdtm_timers
# container-bench) with and without the plugin, criu 4.1.1 (trixie) and 4.2.1
# (sid), median of 5 (PTIMER_BENCH_RUNS), in turn, whole runc command; printed with
# the ratios plugin / alone and their goals: <= 1.05 on 4.2.1, where the
# plugin leaves the timers to criu (criu-mode auto), <= 1.10 on 4.1.1.
# Runs suite.sh bench in the containers roots.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=$(mktemp "${TMPDIR:-/tmp}/ptimer-cbench.XXXXXX")
trap 'rm -f "$OUT"' EXIT
bash "$here/suite.sh" bench trixie sid >"$OUT" 2>&1
grep -E '^cbench: .*FAILED|^SKIP' "$OUT" | sed 's/^/(f) /'
# field SUITE PHASE MODE N: field N of the matching cbench line, or "-"
field() { awk -v s="$1" -v p="$2" -v m="$3" -v n="$4" '$1 == "cbench:" && $2 == s && $5 == p && $6 == m { v = $n } END { print (v == "") ? "-" : v }' "$OUT"; }
ratio() { if [ "$1" = - ] || [ "$2" = - ]; then echo -; else awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; fi; }
sec() { [ "$1" = - ] && echo "-" || awk -v s="$1" 'BEGIN { printf "%.3f s", s }'; }
# goal RATIO G: "RATIO (<= G: met)" or NOT met
goal() { [ "$1" = - ] && echo - || awk -v r="$1" -v g="$2" 'BEGIN { printf "%s (<= %s: %s)", r, g, (r <= g) ? "met" : "NOT met" }'; }
echo "(f) runc with the five-timer container, whole runc command, alone and with the plugin in turn, median of ${PTIMER_BENCH_RUNS:-5} (load average $(cut -d' ' -f1-3 /proc/loadavg)):"
printf '    | %-12s | %-16s | %-16s | %-6s | %-16s | %-16s | %s\n' criu "checkpoint alone" "checkpoint+plugin" ratio "restore alone" "restore+plugin" ratio
printf '    |%s|\n' "--------------|------------------|-------------------|--------|------------------|------------------|------"
for s in trixie sid; do
	v=$(awk -v s="$s" '$1 == "cbench:" && $2 == s && $3 ~ /^[0-9]/ { print $3; exit }' "$OUT")
	ca=$(field "$s" checkpoint alone 7); cp=$(field "$s" checkpoint plugin 7)
	ra=$(field "$s" restore alone 7); rp=$(field "$s" restore plugin 7)
	g=1.10
	[ "$s" = sid ] && g=1.05
	printf '    | %-12s | %-16s | %-17s | %-6s | %-16s | %-16s | %s\n' "${v:-$s}" "$(sec "$ca")" "$(sec "$cp")" \
		"$(goal "$(ratio "$cp" "$ca")" "$g")" "$(sec "$ra")" "$(sec "$rp")" "$(goal "$(ratio "$rp" "$ra")" "$g")"
done
grep -h '^# .*CRIU_FAULT' "$OUT" | head -n 1 | sed 's/^# /    /'
