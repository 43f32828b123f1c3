#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: build, boot the guest with job "demo" (load lchan, show
# /sys/kernel/lchan and whatever tools/demo.sh adds), print what it saw.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO"

# tools are optional for the demo (the module side may not have them yet).
rig_build_for_guest module lib --may-fail tools

rc=0
"$RIG_DIR/run-vm.sh" demo "${LCHAN_DEMO_TIMEOUT:-600}" || rc=$?
run=$(rig_run_dir demo)
echo "# ---- demo output (${run#"$REPO"/}/demo.txt)"
cat "$run/demo.txt" 2>/dev/null || echo "(the guest wrote no demo output)"
exit "$rc"
