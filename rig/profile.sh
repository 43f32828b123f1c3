#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make profile`: perf profiles of connection set-up (lchan against cmtime),
# a 64-byte send ping-pong and a 64-byte send stream (lchan against
# perftest) on rxe0, in one guest run (job "profile",
# rig/guest/profile.sh).  PROFILE=connect or PROFILE=send: those rows
# alone.  PROFILE_DEV=siw: on siw0, the rows named siw0.<row>.  Copies the
# reports to bench/profile/ (LCHAN_BENCH_DIR/profile).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO"

dest=${LCHAN_BENCH_DIR:-$REPO/bench}/profile
rig_build_for_guest module lib tools
rc=0
[ -z "${PROFILE:-}" ] ||
	export LCHAN_APPEND="${LCHAN_APPEND:-} lchan.profile_only=$PROFILE"
[ -z "${PROFILE_DEV:-}" ] ||
	export LCHAN_APPEND="${LCHAN_APPEND:-} lchan.profile_dev=$PROFILE_DEV"
"$RIG_DIR/run-vm.sh" profile 1200 || rc=$?
mkdir -p "$dest"
run=$(rig_run_dir profile)
cp "$run/profile/"*.txt "$run/profile/"*.log "$dest/" ||
	rig_die "the guest wrote no profiles; see $run"
rig_log "profiles in $dest"
exit "$rc"
