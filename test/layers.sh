#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/layers.sh [TOP] - the include layering docs/design.md ("Layers")
# states, checked on every `#include "..."` of the product's C sources and
# headers (lib/ restorer/ images/ core/ cli/ plugin/; proto/'s generated
# headers count as images/).  One PASS or FAIL line a rule, each FAIL naming
# the file, its line and the include that breaks it; exit 1 on a FAIL.
#   - folders, lowest first: lib, restorer, images (and proto), core, then
#     cli and plugin, which nothing else includes; a file includes its own
#     folder's headers or a lower folder's;
#   - restorer/'s in-target code (all of restorer/ but host/) is
#     freestanding: restorer/ headers and lib/timer.h only;
#   - core/, one module a header, in the order below (CORE_ORDER): a module
#     includes only modules at or before its own, so there is no circle.
# Run by `make check` (test/run.sh).
set -u
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
. "$top/test/lib/harness.sh"
cd "$top" || exit 1

# docs/design.md's order of core/, lowest first
CORE_ORDER="fault log util proc_timers caps procwatch task rseq pending timer_state thread_clock aim_probe restore leader dump"

rank() {
	case $1 in
	lib) echo 0 ;;
	restorer) echo 1 ;;
	images | proto) echo 2 ;;
	core) echo 3 ;;
	cli | plugin) echo 4 ;;
	*) echo 9 ;;
	esac
}
core_index() {
	local i=0 m
	for m in $CORE_ORDER; do
		[ "$m" = "$1" ] && { echo "$i"; return; }
		i=$((i + 1))
	done
	echo -1
}

bad=()
files=$(find lib restorer images core cli plugin -name '*.[ch]' | sort)
n=0
for f in $files; do
	n=$((n + 1))
	from=${f%%/*}
	while IFS=: read -r line inc; do
		to=${inc%%/*}
		[ "$to" = "$inc" ] && to=$from	# "x.h": the file's own folder
		why=
		if [ "$from" = restorer ] && [[ $f != restorer/host/* ]]; then
			[ "$to" = restorer ] || [ "$inc" = lib/timer.h ] ||
				why="in-target code includes a host header"
		elif [ "$to" = cli ] || [ "$to" = plugin ]; then
			[ "$to" = "$from" ] || why="$to/ is the top: nothing includes it"
		elif [ "$(rank "$to")" -gt "$(rank "$from")" ]; then
			why="$from/ is below $to/"
		fi
		if [ -z "$why" ] && [ "$from" = core ] && [ "$to" = core ]; then
			a=$(core_index "$(basename "${f%.*}")") b=$(core_index "$(basename "${inc%.h}")")
			if [ "$a" -lt 0 ] || [ "$b" -lt 0 ]; then
				why="core module not in the layer order (test/layers.sh CORE_ORDER, docs/design.md)"
			elif [ "$b" -gt "$a" ]; then
				why="core/$(basename "${inc%.h}") is above core/$(basename "${f%.*}")"
			fi
		fi
		[ -n "$why" ] && bad+=("$f:$line: #include \"$inc\": $why")
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
		sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1:\2/')
done

if [ "${#bad[@]}" -eq 0 ]; then
	pass "layers: the includes of $n files keep docs/design.md's layers (core: ${CORE_ORDER// / < })"
else
	for b in "${bad[@]}"; do
		fail "layers" "$b"
	done
fi
totals layers
[ "${#bad[@]}" -eq 0 ]
