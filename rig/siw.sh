#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build siw.ko out of tree and print its path: Debian does not enable
# CONFIG_RDMA_SIW, so its sources come from the kernel's linux-source
# (cached) and are built against the guest's headers, with the fixes in
# rig/siw-patches/ (siw bugs lchan's tests found, none of them in lchan).
# Output: ~/.cache/lchan/$KVER/siw/siw.ko, rebuilt only when missing or
# older than its sources or the headers, or its patches changed.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

KVER=$(rig_kver)
KDIR=/usr/src/linux-headers-$KVER
[ -f "$KDIR/Makefile" ] || rig_die "$KDIR missing (run rig/setup.sh)"
src=$(rig_src_cache)/drivers/infiniband/sw/siw
out=$LCHAN_CACHE/$KVER/siw
ko=$out/siw.ko
patches=("$(dirname "$0")"/siw-patches/*.patch)
[ -e "${patches[0]}" ] || patches=()
# What the cached build came from: the sources' path and the patches.
stamp="$src $(cat ${patches[@]+"${patches[@]}"} </dev/null | sha256sum | cut -c1-12)"

uptodate() {
	[ -f "$ko" ] && [ "$(cat "$out/.src" 2>/dev/null)" = "$stamp" ] || return 1
	[ -z "$(find "$src" "$KDIR/Module.symvers" -newer "$ko" -print -quit)" ]
}

if ! uptodate; then
	mkdir -p "$LCHAN_CACHE/$KVER"
	# Another checkout may be building the same one.
	exec {lockfd}>"$LCHAN_CACHE/$KVER/.siw.lock"
	flock "$lockfd"
	if ! uptodate; then
		rig_log "building siw.ko for $KVER"
		tmp=$(mktemp -d "$LCHAN_CACHE/$KVER/.siw.XXXXXX")
		trap 'rm -rf "$tmp"' EXIT
		# Kbuild writes objects next to the sources: build in a copy.
		cp -a "$src/." "$tmp/"
		for p in ${patches[@]+"${patches[@]}"}; do
			patch -d "$tmp" -p5 -s --no-backup-if-mismatch <"$p" ||
				rig_die "$p does not apply to $src"
		done
		if ! make -s -C "$KDIR" M="$tmp" CONFIG_RDMA_SIW=m modules >"$tmp/build.log" 2>&1; then
			cat "$tmp/build.log" >&2
			rig_die "siw.ko build failed"
		fi
		[ -f "$tmp/siw.ko" ] || rig_die "siw build produced no siw.ko"
		printf '%s\n' "$stamp" >"$tmp/.src"
		rm -rf "$out"
		mv "$tmp" "$out"
		trap - EXIT
	fi
	flock -u "$lockfd"
fi
printf '%s\n' "$ko"
