# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Harness self-test: the tests pass, but a module WARNs while loading.  The
# runner must fail the run on the kernel log alone.
# shellcheck source=lib.sh
. "$LCHAN_SHARE/guest/lib.sh"
load_ko "$LCHAN_SHARE/rig/lchan_warn.ko" || exit 1
failed=0
run_tests "$LCHAN_SHARE/rig/pass" || failed=1
# Same boot, to save one: the RDMA devices carry traffic.
run_tests "$LCHAN_SHARE/rig/smoke" || failed=1
rmmod lchan_warn || failed=1
exit $failed
