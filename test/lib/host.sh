# SPDX-License-Identifier: MIT
#
# test/lib/host.sh - what the host side of the root-based suites shares
# (bash: test/criu/suite.sh, test/criu/zdtm.sh, test/containers/suite.sh,
# test/containers/install.sh).  Sourced after test/lib/harness.sh.

# pack_tree TOP OUT: the project as it is in the work tree TOP (tracked and
# untracked files git does not ignore; without git, everything but build
# directories) into the tar file OUT.  Status non-zero when tar failed.
pack_tree() {
	local top=$1 out=$2
	if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
		(cd "$top" && git ls-files -z --cached --others --exclude-standard |
			xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
			tar --null -T - -cf "$out")
	else
		tar -C "$top" --exclude=./build --exclude='./build-*' -cf "$out" .
	fi
}

# ensure_roots SCRATCH SET SUITE...: the Debian root of each SUITE with the
# extra package set SET ("" for the base roots; test/criu/roots.sh), built
# in parallel when missing (the network is the bottleneck).  Sets ROOT_RC
# (an associative array, SUITE -> roots.sh's exit status); roots.sh's
# progress goes to stdout as "# " lines.
declare -A ROOT_RC
ensure_roots() {
	local scratch=$1 set=$2 s roots
	roots=$(cd "$(dirname "${BASH_SOURCE[0]}")/../criu" && pwd)/roots.sh
	shift 2
	for s in "$@"; do
		if "$roots" check "$s" $set 2>/dev/null; then
			ROOT_RC[$s]=0
			continue
		fi
		echo "# building the ${s}${set:+-$set} root (cached in $("$roots" path "$s" $set); a few minutes)"
		"$roots" ensure "$s" $set >"$scratch/root.$s.out" 2>"$scratch/root.$s.err" &
		ROOT_RC[$s]=pid:$!
	done
	for s in "$@"; do
		case ${ROOT_RC[$s]} in
		pid:*) wait "${ROOT_RC[$s]#pid:}"; ROOT_RC[$s]=$?
			sed 's/^/# /' "$scratch/root.$s.err" ;;
		esac
	done
}
