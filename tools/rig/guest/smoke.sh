# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Job "smoke": only the rig's own checks (RDMA devices carry rping traffic,
# a kselftest program runs); no lchan.  Tells rig trouble from module trouble.
# shellcheck source=lib.sh
. "$LCHAN_SHARE/guest/lib.sh"
failed=0
run_tests "$LCHAN_SHARE/rig/smoke" || failed=1
run_tests "$LCHAN_SHARE/rig/pass" || failed=1
exit $failed
