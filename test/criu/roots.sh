#!/usr/bin/env bash
# Cached Debian roots holding a real criu and what building ptimer needs.
#
#   roots.sh ensure SUITE [SET]  create or reuse the root of SUITE (trixie|sid);
#                            prints its path on stdout, progress and the criu
#                            version on stderr
#   roots.sh path SUITE [SET]    print the path (whether it exists or not)
#   roots.sh check SUITE [SET]   exit 0 when the root is complete and current
#   roots.sh remove SUITE [SET]  delete the root
#
# SET names an extra package set, test/criu/roots.d/SET.pkgs (one package a
# line, "#" comments): its root is a root of its own, SUITE-SET, holding the
# base packages below and the set's, so suites that need more (container
# runtimes, zdtm's tools) never rebuild a root another suite is using.
# A set with a line "@minimal" gets criu and its own packages only, none of
# the build packages below (a host as users have it: test/containers/).
# A set with a line "@arch ARCH" (arm64) is a root of that Debian
# architecture (test/criu/arm64.sh serves it to an arm64 guest): debootstrap
# --foreign (the set's packages included), then its second stage runs
# through qemu-aarch64-static,
# registered with binfmt_misc (flag F) only while the root is built, in a
# mount namespace of its own; qemu-user-static is installed on the host when
# missing.  The host's own roots and their recipes are unchanged by this.
# Suites: trixie, sid; bookworm only for minimal sets (its criu 3.17 does not
# run on new kernels, but packages install there).
#
# Roots live in $PTIMER_ROOTS (default /var/cache/ptimer-test/roots)/NAME.
# A root is built in a temporary directory beside it and renamed into place
# only when complete; its stamp file (.ptimer-root) records the suite, the
# criu version and a hash of the recipe (suite, package list, apt settings).
# A root whose stamp is missing or differs is rebuilt. Needs root; installs
# debootstrap on the host when missing. The package mirror is the one the
# host's own apt sources name.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOTS=${PTIMER_ROOTS:-${PTIMER_TEST_CACHE:-/var/cache/ptimer-test}/roots}
STAMP=.ptimer-root
RECIPE_VERSION=1

die() { echo "roots.sh: $*" >&2; exit 1; }
log() { echo "roots.sh: $*" >&2; }

# Installed by debootstrap itself (its resolver is simple: keep it to criu).
BOOT_PKGS=(criu)
# Installed with apt inside the root afterwards.
APT_PKGS=(
	gcc make libc6-dev binutils
	protobuf-c-compiler libprotobuf-c-dev libcap-dev libjson-c-dev libnl-3-dev
	libcompel-dev libcriu-dev
	python3 python3-pycriu python3-protobuf
	procps
)
# The plain roots (no SET: test/criu/suite.sh) also hold the real programs
# that suite checkpoints beside its own: Go's toolchain (a program with the
# CPU profiler on), stress-ng (its timer stressors) and a JDK 25 (JFR's
# CPU-time sampler, JEP 509).
PLAIN_PKGS=(golang-go stress-ng openjdk-25-jdk-headless)
APT_CONF='APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Check-Valid-Until "false";
Acquire::Retries "3";
Dpkg::Use-Pty "false";
'

usage() { die "usage: roots.sh ensure|path|check|remove SUITE [SET]   (SUITE: trixie or sid; SET: a file test/criu/roots.d/SET.pkgs)"; }

# set_pkgs SET: the packages of an extra set, one a line.
set_pkgs() {
	[ -n "$1" ] || return 0
	[ -r "$here/roots.d/$1.pkgs" ] || die "no package set '$1' ($here/roots.d/$1.pkgs)"
	sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' -e '/^@/d' "$here/roots.d/$1.pkgs"
}

# set_arch SET: the Debian architecture the set asks for ("@arch arm64"),
# empty for the host's own.
set_arch() {
	[ -n "$1" ] || return 0
	sed -n 's/^@arch[[:space:]]\{1,\}\([a-z0-9]\{1,\}\).*/\1/p' "$here/roots.d/$1.pkgs" | head -n1
}

# set_minimal SET: true when the set asks for no build packages.
set_minimal() {
	[ -n "$1" ] && grep -qx '@minimal' "$here/roots.d/$1.pkgs"
}

# base_pkgs: the build packages every non-minimal root gets (and the plain
# roots their programs).
base_pkgs() {
	set_minimal "$SET" || printf '%s\n' "${APT_PKGS[@]}"
	[ -n "$SET" ] || printf '%s\n' "${PLAIN_PKGS[@]}"
}

check_suite() {
	case "$1" in
	trixie|sid) ;;
	bookworm) set_minimal "$SET" || die "bookworm: only minimal sets (its criu 3.17 cannot build or run the suites)" ;;
	*) die "unknown suite '$1' (want trixie or sid)" ;;
	esac
}

mirror_uri() {
	local f=/etc/apt/sources.list.d/debian.sources uri=""
	if [ -r "$f" ]; then
		# First URIs: of a stanza whose Suites: are not *-security.
		uri=$(awk '
			/^[ \t]*$/ { if (u != "" && !sec) { print u; exit } u=""; sec=0; next }
			/^URIs:/   { u=$2 }
			/^Suites:/ { if ($0 ~ /-security/) sec=1 }
			END        { if (u != "" && !sec) print u }' "$f" | head -n1)
	fi
	if [ -z "$uri" ] && [ -r /etc/apt/sources.list ]; then
		uri=$(awk '$1=="deb" { for (i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) { if ($0 !~ /-security/) { print $i; exit } } }' /etc/apt/sources.list)
	fi
	[ -n "$uri" ] || die "cannot find a Debian mirror URI in the host's apt sources"
	echo "$uri"
}

recipe_hash() {
	local suite=$1
	{
		echo "recipe $RECIPE_VERSION"
		echo "suite $suite"
		echo "boot ${BOOT_PKGS[*]}"
		{ base_pkgs; set_pkgs "$SET"; } | LC_ALL=C sort
		set_minimal "$SET" && echo minimal
		[ -z "$ARCH" ] || echo "arch $ARCH"
		printf '%s' "$APT_CONF"
	} | sha256sum | cut -c1-16
}

# root_criu_version DIR: the version of criu installed in the root, from
# its dpkg database (read on the host for a foreign root: its dpkg-query is
# not for this CPU).
root_criu_version() {
	if [ -z "$ARCH" ]; then
		chroot "$1" dpkg-query -W -f='${Version}' criu 2>/dev/null
	else
		awk '/^Package: / { p = $2 } /^Status: / { s = $4 }
			/^Version: / && p == "criu" && s == "installed" { print $2; f = 1 }
			END { exit !f }' "$1/var/lib/dpkg/status"
	fi
}

stamp_value() {  # FILE KEY
	sed -n "s/^$2=//p" "$1" 2>/dev/null | head -n1
}

root_is_current() {  # DIR SUITE
	local dir=$1 suite=$2 st=$1/$STAMP
	[ -f "$st" ] || return 1
	[ "$(stamp_value "$st" suite)" = "$suite" ] || return 1
	[ "$(stamp_value "$st" recipe)" = "$(recipe_hash "$suite")" ] || return 1
	[ -x "$dir/usr/sbin/criu" ] || return 1
	local v
	v=$(root_criu_version "$dir") || return 1
	[ "$(stamp_value "$st" criu)" = "$v" ] || return 1
}

# Unmount anything left mounted below DIR (an interrupted debootstrap leaves
# /proc and /sys mounted in its target), then delete DIR.
destroy_dir() {
	local dir=$1 m
	[ -n "$dir" ] && [ "$dir" != / ] || die "refusing to delete '$dir'"
	[ -e "$dir" ] || return 0
	while read -r m; do
		umount -l "$m" 2>/dev/null || true
	done < <(awk -v d="$dir" '{ m=$5; gsub(/\\040/, " ", m); if (m == d || index(m, d "/") == 1) print m }' /proc/self/mountinfo | sort -r)
	if awk -v d="$dir" '{ if ($5 == d || index($5, d "/") == 1) f=1 } END { exit !f }' /proc/self/mountinfo; then
		die "'$dir' still has mounts below it; not deleting"
	fi
	rm -rf --one-file-system -- "$dir"
}

# host_install PKG: through the one installer of host packages, which runs
# one apt-get at a time (roots of several suites are built at once)
host_install() {
	log "installing $1 on the host"
	sh "$here/../../scripts/deps.sh" install "$1" >/dev/null 2>"$ROOTS/.host-install.$1.log" ||
		die "cannot install $1 on the host: $(tail -n 1 "$ROOTS/.host-install.$1.log")"
}

ensure_debootstrap() {
	command -v debootstrap >/dev/null || host_install debootstrap
	[ -e "/usr/share/debootstrap/scripts/$1" ] || die "this debootstrap has no script for '$1'"
}

build_root() {  # SUITE FINAL
	local suite=$1 final=$2 tmp uri start
	start=$(date +%s)
	ensure_debootstrap "$suite"
	[ -e "/usr/share/debootstrap/scripts/$suite" ] || die "debootstrap has no script for '$suite'"
	uri=$(mirror_uri)
	tmp="$ROOTS/.$NAME.building.$$"
	destroy_dir "$tmp"
	mkdir -p "$tmp"
	# shellcheck disable=SC2064
	trap "destroy_dir '$tmp' || true" EXIT
	local boot_log="$ROOTS/.$NAME.debootstrap.log"
	log "$suite: debootstrap into $tmp (log: $boot_log)"
	local kr=()
	[ -r /usr/share/keyrings/debian-archive-keyring.gpg ] && kr=(--keyring=/usr/share/keyrings/debian-archive-keyring.gpg)
	# A foreign root takes its set's packages from debootstrap too: apt
	# under qemu-user spends minutes reading the package lists.
	local foreign=() boot=("${BOOT_PKGS[@]}")
	if [ -n "$ARCH" ]; then
		foreign=(--arch="$ARCH" --foreign)
		mapfile -t -O "${#boot[@]}" boot < <(base_pkgs; set_pkgs "$SET")
	fi
	if ! debootstrap --variant=minbase "${foreign[@]}" "${kr[@]}" --include="$(IFS=,; echo "${boot[*]}")" \
		"$suite" "$tmp" "$uri" >"$boot_log" 2>&1; then
		tail -n 15 "$boot_log" >&2
		die "$suite: debootstrap failed (full log: $boot_log)"
	fi
	if [ -n "$ARCH" ]; then
		local t1
		t1=$(date +%s)
		log "$NAME: first stage done in $((t1 - start)) s; debootstrap --second-stage through qemu-user (log: $boot_log)"
		if ! chroot "$tmp" /debootstrap/debootstrap --second-stage >>"$boot_log" 2>&1; then
			tail -n 15 "$boot_log" >&2
			die "$NAME: debootstrap --second-stage failed (full log: $boot_log)"
		fi
		log "$NAME: second stage done in $(( $(date +%s) - t1 )) s"
	fi
	printf '%s' "$APT_CONF" > "$tmp/etc/apt/apt.conf.d/99ptimer-test"
	cp /etc/resolv.conf "$tmp/etc/resolv.conf" 2>/dev/null || true
	local apt_log="$ROOTS/.$NAME.apt.log" pkgs
	mapfile -t pkgs < <(base_pkgs; set_pkgs "$SET")
	[ -z "$ARCH" ] || pkgs=()
	[ ${#pkgs[@]} -eq 0 ] || log "$NAME: apt-get install ${pkgs[*]} (log: $apt_log)"
	if [ ${#pkgs[@]} -gt 0 ] && ! "$here/enter.sh" "$tmp" --env DEBIAN_FRONTEND=noninteractive -- \
		sh -c 'apt-get update -q && apt-get install -y -q "$@" && apt-get clean' sh "${pkgs[@]}" \
		>"$apt_log" 2>&1; then
		tail -n 15 "$apt_log" >&2
		die "$suite: apt-get install inside the root failed (full log: $apt_log)"
	fi
	local v
	v=$(root_criu_version "$tmp") || die "$suite: criu is not installed in the new root"
	[ -x "$tmp/usr/bin/crit" ] || log "$suite: warning: no crit in the root"
	set_minimal "$SET" || [ -e "$tmp/usr/include/criu/criu-plugin.h" ] || die "$suite: no /usr/include/criu/criu-plugin.h in the new root"
	{
		echo "suite=$suite"
		echo "criu=$v"
		echo "recipe=$(recipe_hash "$suite")"
		echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	} > "$tmp/$STAMP"
	# Swap in: move the old root aside first, so FINAL is never half there.
	if [ -e "$final" ]; then
		local old="$ROOTS/.$NAME.old.$$"
		mv -T -- "$final" "$old"
		mv -T -- "$tmp" "$final"
		destroy_dir "$old"
	else
		mv -T -- "$tmp" "$final"
	fi
	trap - EXIT
	log "$suite: built in $(( $(date +%s) - start )) s"
}

# Foreign roots: the CPU's qemu-user, registered with binfmt_misc.
qemu_user_of() {
	case "$1" in
	arm64) echo aarch64 ;;
	*) die "no qemu-user mapping for architecture '$1' (want arm64)" ;;
	esac
}
# The ELF header match of aarch64 executables (as qemu's own
# scripts/qemu-binfmt-conf.sh registers them).
BINFMT_AARCH64=':M::\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'

ensure_qemu_user() {  # CPU
	[ -x "/usr/bin/qemu-$1-static" ] || host_install qemu-user-static
	[ -x "/usr/bin/qemu-$1-static" ] || die "qemu-user-static has no /usr/bin/qemu-$1-static"
}

# build_foreign SUITE FINAL: runs in a mount namespace of its own (cmd_ensure
# starts it with unshare -m).  Mounts binfmt_misc there and registers
# qemu-CPU-static under the name ptimer-roots-CPU with flag F (the kernel
# opens the interpreter now, so it need not exist inside the root); the entry
# is removed when the build ends.  Where binfmt_misc is not mounted elsewhere
# the instance ends with this namespace anyway.
build_foreign() {
	local suite=$1 final=$2 cpu bm=/proc/sys/fs/binfmt_misc entry
	cpu=$(qemu_user_of "$ARCH")
	ensure_qemu_user "$cpu"
	[ "$cpu" = aarch64 ] || die "no binfmt_misc match for $cpu"
	grep -qw binfmt_misc /proc/filesystems ||
		die "$NAME: this kernel has no binfmt_misc (CONFIG_BINFMT_MISC), needed to run $ARCH programs while building the root"
	mount -t binfmt_misc binfmt_misc "$bm" 2>/dev/null || [ -e "$bm/register" ] ||
		die "$NAME: cannot mount binfmt_misc on $bm (needed to run $ARCH programs while building the root)"
	entry=$bm/ptimer-roots-$cpu
	[ -e "$entry" ] && echo -1 >"$entry"
	printf '%s' ":ptimer-roots-$cpu:${BINFMT_AARCH64#:}:/usr/bin/qemu-$cpu-static:F" >"$bm/register" ||
		die "$NAME: cannot register qemu-$cpu-static with binfmt_misc"
	# build_root sets traps of its own: a subshell (errexit on inside it;
	# "|| rc=$?" would turn it off there), then the entry goes
	local rc
	set +e
	(set -e; build_root "$suite" "$final")
	rc=$?
	set -e
	echo -1 >"$entry" 2>/dev/null
	return "$rc"
}

# Leftovers of interrupted runs. Called with the suite's lock held, so no
# other builder of this suite is running: every leftover is stale.
clean_leftovers() {
	local suite=$1 d
	for d in "$ROOTS/.$NAME.building."* "$ROOTS/.$NAME.old."*; do
		[ -e "$d" ] || continue
		log "$suite: removing leftover $d"
		destroy_dir "$d"
	done
}

cmd_ensure() {
	local suite=$1 final=$ROOTS/$NAME
	[ "$(id -u)" = 0 ] || die "must run as root"
	mkdir -p "$ROOTS"
	# One builder per root at a time; a second caller waits and then reuses.
	exec 9>"$ROOTS/.$NAME.lock"
	flock 9 || die "cannot lock $ROOTS/.$NAME.lock"
	clean_leftovers "$suite"
	if root_is_current "$final" "$suite"; then
		:
	else
		if [ -e "$final" ]; then
			log "$suite: root at $final is incomplete or out of date: rebuilding"
		fi
		if [ -n "$ARCH" ]; then
			unshare -m --propagation private -- bash "$here/roots.sh" build-foreign "$suite" "$SET" ||
				exit 1
		else
			build_root "$suite" "$final"
		fi
		root_is_current "$final" "$suite" || die "$suite: the new root fails its own check"
	fi
	exec 9>&-
	if [ -z "$ARCH" ]; then
		log "$suite: $final: criu $(stamp_value "$final/$STAMP" criu) ($(chroot "$final" criu --version 2>/dev/null | head -n1 || echo '?'))"
	else
		log "$suite: $final: criu $(stamp_value "$final/$STAMP" criu) ($ARCH)"
	fi
	echo "$final"
}

[ $# -eq 2 ] || [ $# -eq 3 ] || usage
SET=${3:-}
check_suite "$2"
NAME=$2${SET:+-$SET}
set_pkgs "$SET" >/dev/null
ARCH=$(set_arch "$SET")
[ "$ARCH" != "$(dpkg --print-architecture 2>/dev/null)" ] || ARCH=
case "$1" in
ensure) cmd_ensure "$2" ;;
build-foreign)	# internal: cmd_ensure's child, lock held, own mount namespace
	[ -n "$ARCH" ] || die "build-foreign: set '$SET' names no foreign architecture"
	build_foreign "$2" "$ROOTS/$NAME" ;;
path) echo "$ROOTS/$NAME" ;;
check) root_is_current "$ROOTS/$NAME" "$2" ;;
remove)
	[ "$(id -u)" = 0 ] || die "must run as root"
	mkdir -p "$ROOTS"; exec 9>"$ROOTS/.$NAME.lock"; flock 9
	destroy_dir "$ROOTS/$NAME" ;;
*) usage ;;
esac
