#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/bench-results.sh OUT - docs/results.md from what test/bench.sh printed
# (OUT): the machine, the date and the commit first, then the run as it was
# printed.  `make bench` writes it; the README links it.  The figures are
# ratios measured within one run (bench.sh says why); the absolute times
# hold for this machine at this load only.
set -u

out=$1
top=$(cd "$(dirname "$0")/.." && pwd)
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
[ -n "$cpu" ] || cpu=$(uname -m)
os=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-?}")
commit=$(git -C "$top" describe --always --dirty 2>/dev/null || echo "?")

cat <<EOM
# Benchmark results

Written by \`make bench\` (\`test/bench.sh\`, then \`test/bench-results.sh\`);
run it again to measure your machine. What each letter measures, and its
goal, is in the head of \`test/bench.sh\`.

| | |
|---|---|
| date | $(date -u '+%Y-%m-%d %H:%M UTC') |
| machine | $(uname -m), $(nproc) CPUs ($cpu), $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) |
| kernel | $(uname -r) |
| system | $os |
| load average at the end | $(cut -d' ' -f1-3 /proc/loadavg) |
| commit | $commit |

\`\`\`
$(cat "$out")
\`\`\`
EOM
