#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make vm-shell`: the test guest with a shell on this terminal (serial
# console on stdio).  The share holds fresh builds of whatever builds; the
# environment of the tests is in /etc/lchan.env.  Ctrl-A x quits qemu.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO"

rig_build_for_guest --may-fail module lib selftests tools
exec "$RIG_DIR/run-vm.sh" -i shell
