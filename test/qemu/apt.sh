# shellcheck shell=bash
# SPDX-License-Identifier: MIT
#
# test/qemu/apt.sh - sourced by kernels.sh and busybox.sh: a private apt
# configuration for one Debian suite and architecture, to `apt-get download`
# packages of it without installing them and without changing the host's apt
# (no `dpkg --add-architecture`, no sources).
#
# apt_suite SUITE ARCH DIR: DIR gets its own sources list (SUITE main, on the
# host's Debian URI read from /etc/apt), lists and cache; the array A holds
# the apt options that use them; `apt-get update` is run.  Returns 0, or 2
# with the reason on stderr (no URI, update failed: no network or no such
# suite).
# apt_fetch PKG: PKG's .deb downloaded into $APT_DIR/deb; its path in DEB.
# Returns 0 or 2 (reason on stderr).

# The host's Debian URI: deb822 (URIs:) or one-line (deb URI suite ...).
apt_host_uri() {
	local uri
	uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk 'tolower($1) == "uris:" && $2 ~ /debian\/?$/ && $2 !~ /security/ { print $2; exit }')
	[ -n "$uri" ] || uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i ~ /:\/\//) { if ($i ~ /debian\/?$/ && $i !~ /security/) { print $i; exit } break } }')
	echo "$uri"
}

apt_suite() {
	local suite=$1 arch=$2 uri keyring opt
	APT_DIR=$3
	uri=$(apt_host_uri)
	if [ -z "$uri" ]; then
		echo "no Debian URI in /etc/apt/sources.list{,.d} to fetch from" >&2
		return 2
	fi
	keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	opt="[signed-by=$keyring]"
	[ -r "$keyring" ] || opt=""
	mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial" "$APT_DIR/deb" || return 1
	echo "deb $opt $uri $suite main" >"$APT_DIR/sources.list"
	A=(-o "Dir::Etc::sourcelist=$APT_DIR/sources.list" -o "Dir::Etc::sourceparts=-"
		-o "Dir::State::Lists=$APT_DIR/lists" -o "Dir::Cache=$APT_DIR/cache"
		-o "APT::Get::List-Cleanup=0" -o "Acquire::Retries=1" -o "Acquire::http::Timeout=30"
		-o "APT::Architecture=$arch" -o "APT::Architectures::=$arch")
	if ! timeout -k 5 180 apt-get "${A[@]}" update -q >"$APT_DIR/update.log" 2>&1 </dev/null ||
		grep -qE '^(E:|Err:)' "$APT_DIR/update.log"; then
		echo "apt-get update of '$suite' ($arch) at $uri failed: $(grep -E '^(E:|Err:|W:)' "$APT_DIR/update.log" | head -2 | tr '\n' ' ')" >&2
		return 2
	fi
}

apt_fetch() {
	rm -f "$APT_DIR"/deb/*.deb
	if ! (cd "$APT_DIR/deb" && timeout -k 5 300 apt-get "${A[@]}" download -q "$1" >"$APT_DIR/download.log" 2>&1 </dev/null); then
		echo "apt-get download $1 failed: $(grep -E '^(E:|Err:)' "$APT_DIR/download.log" | head -2 | tr '\n' ' ')" >&2
		return 2
	fi
	DEB=$(ls "$APT_DIR"/deb/*.deb 2>/dev/null | head -1)
	[ -n "$DEB" ] || { echo "apt-get download $1 left no .deb" >&2; return 2; }
}
