# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Harness self-test: a kselftest program with a failing test.  The runner
# must report the failure.
# shellcheck source=lib.sh
. "$LCHAN_SHARE/guest/lib.sh"
run_tests "$LCHAN_SHARE/rig/fail"
