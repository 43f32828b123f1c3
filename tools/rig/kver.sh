#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the Debian kernel ABI (e.g. 6.1.0-57-amd64) that linux-image-amd64
# currently points to.  Security updates bump it and old images leave the
# mirror, so it is resolved from apt's lists, never hard-coded.
#
# The Makefile calls this for every recipe (KVER is exported) and apt-cache
# takes over a second here, so the answer is cached, keyed by the apt lists:
# an `apt-get update` that brings new lists re-resolves it.
set -euo pipefail

cache_dir=${LCHAN_CACHE:-$HOME/.cache/lchan}
cache=$cache_dir/kver
lists=/var/lib/apt/lists

stamp=$( { stat -c '%n %Y %s' "$lists" "$lists"/*_Packages* 2>/dev/null || true; } | md5sum | cut -d' ' -f1)

if [ -r "$cache" ]; then
	read -r old_stamp old_kver <"$cache" || true
	if [ "${old_stamp:-}" = "$stamp" ] && [ -n "${old_kver:-}" ]; then
		printf '%s\n' "$old_kver"
		exit 0
	fi
fi

kver=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: linux-image-\([0-9][^ ]*-amd64\)$/\1/p' | head -n1 || true)

if [ -n "$kver" ]; then
	mkdir -p "$cache_dir"
	printf '%s %s\n' "$stamp" "$kver" >"$cache.tmp.$$"
	mv -f "$cache.tmp.$$" "$cache"
	printf '%s\n' "$kver"
	exit 0
fi

# No apt lists (never updated, or offline): take the newest installed
# headers.  Not cached, since installing headers would not change the stamp.
kver=$(find /usr/src -maxdepth 1 -name 'linux-headers-*-amd64' -printf '%f\n' 2>/dev/null |
	sed 's/^linux-headers-//' | sort -V | tail -n1)
if [ -z "$kver" ]; then
	echo "kver.sh: cannot resolve the kernel: apt-cache knows no linux-image-amd64 and no /usr/src/linux-headers-*-amd64 exists (run apt-get update)" >&2
	exit 1
fi
printf '%s\n' "$kver"
