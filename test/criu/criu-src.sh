#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/criu/criu-src.sh - sourced: fetch_src, criu's released source as
# Debian ships it (zdtm.sh: criu's own tests; suite.sh: criu's GPU plugins).

# fetch_src SUITE DEBVER UPVER CACHE: CACHE/criu_UPVER.orig.tar.xz, Debian's
# source of criu DEBVER from SUITE, fetched once with `apt-get source
# --download-only` through a private apt configuration (deb-src of the
# host's mirror; the host's apt is not changed) and checked against the
# SHA256 apt prints; or status 1 with $why set.  Callers serialise on a lock
# of their own.
fetch_src() {
	local suite=$1 debver=$2 up=$3 CACHE=$4 adir=$4/apt/$1 uri line file sum A dl
	[ -s "$CACHE/criu_$up.orig.tar.xz" ] && return 0
	uri=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null)
	[ -n "$uri" ] || uri=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
	[ -n "$uri" ] || { why="no Debian mirror in the host's apt sources"; return 1; }
	mkdir -p "$adir/lists/partial" "$adir/cache/archives/partial"
	echo "deb-src $uri $suite main" >"$adir/sources.list"
	A=(-o "Dir::Etc::sourcelist=$adir/sources.list" -o "Dir::Etc::sourceparts=-"
		-o "Dir::State::Lists=$adir/lists" -o "Dir::Cache=$adir/cache"
		-o "Acquire::Check-Valid-Until=false" -o "APT::Sandbox::User=root")
	if ! timeout -k 5 300 apt-get "${A[@]}" update -q >"$adir/update.log" 2>&1 </dev/null; then
		why="apt-get update (deb-src $suite) failed: $(grep -E '^(E:|Err:)' "$adir/update.log" | head -n 1)"
		return 1
	fi
	line=$(apt-get "${A[@]}" --print-uris source "criu=$debver" 2>/dev/null | grep "criu_$up.orig.tar")
	file=$(echo "$line" | awk '{ print $2 }') sum=$(echo "$line" | awk '{ print $4 }')
	[ -n "$file" ] || { why="no orig tarball of criu $debver in $suite's sources"; return 1; }
	dl=$adir/dl
	rm -rf "$dl" && mkdir -p "$dl"
	# the orig tarball is all we need: a mirror missing the Debian part is fine
	(cd "$dl" && timeout -k 5 600 apt-get "${A[@]}" source --download-only "criu=$debver") \
		>"$adir/source.log" 2>&1 </dev/null
	[ -s "$dl/$file" ] || { why="apt-get source criu=$debver fetched no $file: $(grep -E '^E:' "$adir/source.log" | head -n 1)"; return 1; }
	case $sum in
	SHA256:*) [ "$(sha256sum <"$dl/$file" | cut -d' ' -f1)" = "${sum#SHA256:}" ] ||
			{ why="$file does not match its SHA256 in $suite's Sources"; return 1; } ;;
	esac
	mv "$dl/$file" "$CACHE/criu_$up.orig.tar.xz.$$" && mv "$CACHE/criu_$up.orig.tar.xz.$$" "$CACHE/criu_$up.orig.tar.xz"
}

# criu_src SUITE ROOT CACHE: the source of ROOT's criu (its .ptimer-root
# stamp names the Debian version) through fetch_src, under CACHE/.SUITE.lock
# (zdtm.sh and suite.sh may fetch at once); sets SRC_DEBVER, SRC_UP (the
# upstream version) and SRC_TAR, or status 1 with $why set.
criu_src() {
	local rc=0
	SRC_DEBVER=$(sed -n 's/^criu=//p' "$2/.ptimer-root")
	SRC_UP=${SRC_DEBVER#*:} SRC_UP=${SRC_UP%-*}
	SRC_TAR=$3/criu_$SRC_UP.orig.tar.xz
	mkdir -p "$3"
	exec 8>"$3/.$1.lock"
	flock 8
	fetch_src "$1" "$SRC_DEBVER" "$SRC_UP" "$3" || rc=1
	exec 8>&-
	return $rc
}
