#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make vm-shell`: the test guest with a shell on this terminal (serial
# console on stdio).  The share holds fresh builds of whatever builds; the
# environment of the tests is in /etc/lchan.env.  Ctrl-A x quits qemu.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO"

"$RIG_DIR/setup.sh"
KVER=$("$RIG_DIR/kver.sh")
export KVER
for target in module lib selftests tools; do
	make -s KVER="$KVER" KDIR="/usr/src/linux-headers-$KVER" "$target" ||
		rig_log "warning: make $target failed; the guest gets what there is"
done
exec "$RIG_DIR/run-vm.sh" -i shell
