#!/usr/bin/env bash
# Run a command inside a debootstrapped root, the way real CRIU needs it.
#
#   enter.sh ROOT [--bind HOSTDIR:ROOTDIR]... [--ro-bind HOSTDIR:ROOTDIR]...
#            [--cwd DIR] [--env NAME=VALUE]... [--sys] [--pts] [--pidns]
#            -- CMD [ARG]...
#
# What the command sees:
#   - a private mount namespace (unshare -m, private propagation); the root is
#     bind-mounted onto itself and made "/" with pivot_root: the host's mounts
#     are gone, so criu's mount lookups only see the root's own mounts;
#   - a fresh /proc (same pid namespace as the caller: host pids);
#   - with --pidns: CMD runs as pid 1 of a new pid namespace (and /proc is
#     that namespace's). Orphans, such as the tasks of `criu restore -d`, are
#     then reparented to CMD instead of the host's pid 1 (which on some
#     machines never reaps them), and every process left in the namespace is
#     killed when CMD exits or the caller dies. Make CMD a shell (bash reaps
#     any child) when orphans are expected;
#   - a tmpfs /dev holding new nodes null zero full random urandom tty
#     net/tun (criu check opens it), the
#     /dev/fd, stdin, stdout, stderr links and an empty /dev/shm;
#     /dev/pts + /dev/ptmx only with --pts; /sys (sysfs) only with --sys;
#   - tmpfs /tmp and /run (empty on every entry);
#   - the requested binds (the ROOTDIR is created if missing);
#   - no file descriptor above 2 (an fd from outside the root makes criu dump
#     fail with "Can't lookup mount"), stdin from the root's /dev/null;
#   - a clean environment: PATH, HOME=/root, LANG=C.UTF-8, TERM if set, and
#     every --env given.
# Needs root. Works without a terminal. Exit status is the command's.
set -euo pipefail

die() { echo "enter.sh: $*" >&2; exit 1; }

if [ "${1:-}" = "--inner" ]; then
	inner=1; shift
else
	inner=0
fi

[ $# -ge 1 ] || die "usage: enter.sh ROOT [--bind HOST:DIR]... [--ro-bind HOST:DIR]... [--cwd DIR] [--env N=V]... [--sys] [--pts] [--pidns] -- CMD..."
root=$1; shift
binds=() ; ro_binds=() ; envs=() ; cwd=/ ; want_sys=0 ; want_pts=0 ; want_pidns=0
while [ $# -gt 0 ]; do
	case "$1" in
	--bind) [ $# -ge 2 ] || die "--bind needs HOSTDIR:ROOTDIR"; binds+=("$2"); shift 2 ;;
	--ro-bind) [ $# -ge 2 ] || die "--ro-bind needs HOSTDIR:ROOTDIR"; ro_binds+=("$2"); shift 2 ;;
	--cwd) [ $# -ge 2 ] || die "--cwd needs a directory"; cwd=$2; shift 2 ;;
	--env) [ $# -ge 2 ] || die "--env needs NAME=VALUE"; [[ "$2" == [A-Za-z_]*=* ]] || die "--env: not NAME=VALUE: $2"; envs+=("$2"); shift 2 ;;
	--sys) want_sys=1; shift ;;
	--pts) want_pts=1; shift ;;
	--pidns) want_pidns=1; shift ;;
	--) shift; break ;;
	*) die "unknown option '$1' (the command goes after --)" ;;
	esac
done
[ $# -ge 1 ] || die "no command given after --"

if [ "$inner" = 0 ]; then
	[ "$(id -u)" = 0 ] || die "must run as root"
	command -v unshare >/dev/null || die "unshare (util-linux) not found"
	[ -d "$root" ] || die "root '$root' is not a directory"
	root=$(realpath -e -- "$root")
	[ "$root" != / ] || die "refusing to enter the host's /"
	[ -x "$root/bin/sh" ] || [ -x "$root/usr/bin/sh" ] || die "'$root' does not look like a root (no /bin/sh)"
	for b in "${binds[@]}" "${ro_binds[@]}"; do
		[[ "$b" == *:/* ]] || die "bind '$b': want HOSTDIR:/ABSOLUTE/ROOTDIR"
		[ -e "${b%%:*}" ] || die "bind '$b': ${b%%:*} does not exist"
	done
	args=("$root")
	for b in "${binds[@]}"; do args+=(--bind "$(realpath -e -- "${b%%:*}"):${b#*:}"); done
	for b in "${ro_binds[@]}"; do args+=(--ro-bind "$(realpath -e -- "${b%%:*}"):${b#*:}"); done
	for e in "${envs[@]}"; do args+=(--env "$e"); done
	[ "$want_sys" = 1 ] && args+=(--sys)
	[ "$want_pts" = 1 ] && args+=(--pts)
	args+=(--cwd "$cwd" -- "$@")
	ns=(--mount --propagation private)
	[ "$want_pidns" = 1 ] && ns+=(--pid --fork --kill-child)
	exec unshare "${ns[@]}" -- bash "$0" --inner "${args[@]}"
fi

# --- inside the new mount namespace ----------------------------------------
mount --bind "$root" "$root"
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
mkdir -p "$root/dev" "$root/tmp" "$root/run"
mount -t tmpfs -o mode=0755,nosuid,size=1m tmpfs-dev "$root/dev"
mknod -m 666 "$root/dev/null"    c 1 3
mknod -m 666 "$root/dev/zero"    c 1 5
mknod -m 666 "$root/dev/full"    c 1 7
mknod -m 666 "$root/dev/random"  c 1 8
mknod -m 666 "$root/dev/urandom" c 1 9
mknod -m 666 "$root/dev/tty"     c 5 0
mkdir -m 755 "$root/dev/net"
mknod -m 666 "$root/dev/net/tun" c 10 200
ln -s /proc/self/fd   "$root/dev/fd"
ln -s /proc/self/fd/0 "$root/dev/stdin"
ln -s /proc/self/fd/1 "$root/dev/stdout"
ln -s /proc/self/fd/2 "$root/dev/stderr"
mkdir -m 1777 "$root/dev/shm"
if [ "$want_pts" = 1 ]; then
	mkdir "$root/dev/pts"
	mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts"
	ln -s pts/ptmx "$root/dev/ptmx"
fi
if [ "$want_sys" = 1 ]; then
	mkdir -p "$root/sys"
	mount -t sysfs -o nosuid,nodev,noexec sysfs "$root/sys"
fi
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs-tmp "$root/tmp"
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs-run "$root/run"
# A missing bind target is created: a directory, or an empty file when the
# source is not a directory.
bind_target() {
	local src=$1 dst=$root/$2
	if [ -d "$src" ]; then
		mkdir -p "$dst"
	elif [ ! -e "$dst" ]; then
		mkdir -p "$(dirname "$dst")"
		: > "$dst"
	fi
}
for b in "${binds[@]}"; do
	bind_target "${b%%:*}" "${b#*:}"
	mount --bind "${b%%:*}" "$root/${b#*:}"
done
for b in "${ro_binds[@]}"; do
	bind_target "${b%%:*}" "${b#*:}"
	mount --bind "${b%%:*}" "$root/${b#*:}"
	mount -o remount,bind,ro "$root/${b#*:}"
done

# pivot_root(".", "."): the old root ends up stacked on top of the new one
# and is then detached; no put_old directory needed in the root.
cd "$root"
pivot_root . .
umount -l .
cd /

# From here on only the root's files are visible.
exec </dev/null
for p in /proc/$$/fd/*; do
	fd=${p##*/}
	case "$fd" in 0|1|2|255) continue ;; esac   # 255: bash's own script fd, close-on-exec
	eval "exec $fd>&-" 2>/dev/null || true
done
cd "$cwd" 2>/dev/null || die "--cwd: no directory '$cwd' inside the root"
env_clean=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8)
[ -n "${TERM:-}" ] && env_clean+=("TERM=$TERM")
exec env -i "${env_clean[@]}" "${envs[@]}" "$@"
