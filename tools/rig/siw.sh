#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build siw.ko out of tree: Debian does not enable CONFIG_RDMA_SIW, so its
# sources come from linux-source-6.1 (cached) and are built against the
# guest's headers.  Output: $B/siw/siw.ko, rebuilt only when missing or
# older than its sources or the headers.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

KVER=$(rig_kver)
KDIR=/usr/src/linux-headers-$KVER
[ -f "$KDIR/Makefile" ] || rig_die "$KDIR missing (run tools/rig/setup.sh)"
src=$(rig_src_cache)/drivers/infiniband/sw/siw
out=$B/siw
ko=$out/siw.ko

uptodate() {
	[ -f "$ko" ] && [ "$(cat "$out/.kver" 2>/dev/null)" = "$KVER" ] || return 1
	[ "$(cat "$out/.src" 2>/dev/null)" = "$src" ] || return 1
	[ -z "$(find "$src" "$KDIR/Module.symvers" -newer "$ko" -print -quit)" ]
}

if uptodate; then
	exit 0
fi

rig_log "building siw.ko for $KVER"
rm -rf "$out"
mkdir -p "$out"
# Kbuild writes objects next to the sources: build in a copy, not the cache.
cp -a "$src/." "$out/"
if ! make -s -C "$KDIR" M="$out" CONFIG_RDMA_SIW=m modules >"$out/build.log" 2>&1; then
	cat "$out/build.log" >&2
	rig_die "siw.ko build failed"
fi
[ -f "$ko" ] || rig_die "siw build produced no $ko"
printf '%s\n' "$KVER" >"$out/.kver"
printf '%s\n' "$src" >"$out/.src"
