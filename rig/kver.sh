#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the Debian kernel release (e.g. 6.1.0-57-amd64) of a kernel of
# rig/kernels:
#   rig/kver.sh [NAME]   (default: LCHAN_KERNEL, else the first entry)
# It is the dependency of the entry's meta package (linux-image-amd64 for
# 6.1), or else the newest linux-image-<abi> in apt's lists.  Security
# updates move it and old images leave the mirror, so it is resolved from
# apt's lists, never hard-coded.
#
# The Makefile calls this for every recipe when KERNEL is given (KVER is
# exported then) and apt-cache takes over a second here, so the answer is
# cached per name, keyed by the apt lists and the entry: an `apt-get
# update` that brings new lists re-resolves it.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -le 1 ] || { echo "usage: $0 [NAME]" >&2; exit 2; }
name=${1:-}
[ -n "$name" ] || name=$(rig_kernel)
meta=$(rig_kernel_field "$name" meta)
abi=$(rig_kernel_field "$name" abi)

cache_dir=$LCHAN_CACHE/kver.d
cache=$cache_dir/$name
lists=/var/lib/apt/lists

stamp=$( {
	stat -c '%n %Y %s' "$lists" "$lists"/*_Packages* 2>/dev/null || true
	printf '%s %s\n' "$meta" "$abi"
} | md5sum | cut -d' ' -f1)

if [ -r "$cache" ]; then
	read -r old_stamp old_kver <"$cache" || true
	if [ "${old_stamp:-}" = "$stamp" ] && [ -n "${old_kver:-}" ]; then
		printf '%s\n' "$old_kver"
		exit 0
	fi
fi

if [ "$meta" != - ]; then
	kver=$(apt-cache depends "$meta" 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\([^ ]*\)$/\1/p' | grep -E -x "$abi" | head -n1 || true)
else
	kver=$(apt-cache search --names-only "^linux-image-($abi)\$" 2>/dev/null |
		awk '{ print $1 }' | sed 's/^linux-image-//' | sort -V | tail -n1 || true)
fi

if [ -n "$kver" ]; then
	mkdir -p "$cache_dir"
	printf '%s %s\n' "$stamp" "$kver" >"$cache.tmp.$$"
	mv -f "$cache.tmp.$$" "$cache"
	printf '%s\n' "$kver"
	exit 0
fi

# No apt lists (never updated, or offline): take the newest installed
# headers of this kernel.  Not cached, since installing headers would not
# change the stamp.
kver=$(find /usr/src -maxdepth 1 -name 'linux-headers-*' -printf '%f\n' 2>/dev/null |
	sed 's/^linux-headers-//' | grep -E -x "$abi" | sort -V | tail -n1 || true)
if [ -z "$kver" ]; then
	what=$meta
	[ "$meta" != - ] || what="linux-image-$abi"
	echo "kver.sh: cannot resolve kernel $name: apt-cache knows no $what and no /usr/src/linux-headers-$abi exists (run apt-get update)" >&2
	exit 1
fi
printf '%s\n' "$kver"
