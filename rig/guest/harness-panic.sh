# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Harness self-test: the kernel crashes mid-run.  The runner must report
# that the guest gave no verdict.
# shellcheck source=lib.sh
. "$LCHAN_SHARE/guest/lib.sh"
run_tests "$LCHAN_SHARE/rig/pass"
echo "rig-guest: crashing the kernel on purpose"
echo c >/proc/sysrq-trigger
sleep 30
