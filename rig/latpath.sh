#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make latency-path`: run the guest job "latpath" (rig/guest/latpath.sh)
# on KERNEL and turn its traces into bench/<kernel>/latency-path.md
# (report latpath, rig/report/latpath.py).
#   rig/latpath.sh [ROUNDS]
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO"

rounds=${1:-3}
case $rounds in '' | *[!0-9]* | 0) rig_die "ROUNDS must be a positive number" ;; esac
kernel=$(rig_kernel)
dest=${LCHAN_BENCH_DIR:-$REPO/bench}/$kernel
rc=0
LCHAN_APPEND="${LCHAN_APPEND:-} lchan.latpath_rounds=$rounds" \
	"$RIG_DIR/run-vm.sh" latpath $((300 + rounds * 300)) || rc=$?
run=$(rig_run_dir latpath)
[ -d "$run/latpath" ] || rig_die "the guest wrote no traces; see $run"
mkdir -p "$dest"
rig_report latpath --kernel "$kernel" "$run/latpath" \
	>"$dest/latency-path.md" || rc=$?
rig_log "report in $dest/latency-path.md"
exit "$rc"
