#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host check: selftests/lchan_socket_test against the host's own TCP.
#
# The program writes down the socket semantics a layer carrying TCP must
# keep; it uses neither liblchan nor the module, so the host runs it as
# it is (the guests run it too, with the other selftests).  Built against
# this kernel's kselftest harness (rig/ksft-headers.sh, LCHAN_KERNEL);
# every test must pass, ::1's may SKIP where the host has no IPv6
# loopback, and nothing may fail.
CHECK=socket
# shellcheck source-path=SCRIPTDIR source=checklib.sh
. "$(dirname "$0")/checklib.sh"

t=$(check_dir socket-check)
"$RIG_DIR/ksft-headers.sh" "$t/ksft" >"$t/ksft.log" 2>&1 || check_fail "no kselftest harness headers"
prog=$t/bin/lchan_socket_test
check_run "$t/build.log" "selftests/lchan_socket_test.c does not build" \
	make --no-print-directory -C selftests KSFT_INC="$t/ksft" OUT="$t/bin" "$prog"

rc=0
timeout 120 "$prog" >"$t/run.log" 2>&1 || rc=$?
# The failed tests' own lines (the whole run in run.log), then the verdict.
grep -E '^not ok |^# .*(Expected|terminated|timeout|[Ff]ailed)' "$t/run.log" | head -n 40
echo "# run: $t/run.log"
skipped=$(grep -cE '^ok [0-9]+ .*# SKIP' "$t/run.log")
passed=$(($(grep -cE '^ok [0-9]+ ' "$t/run.log") - skipped))
failed=$(sed -n 's/^not ok [0-9]* //p' "$t/run.log" | paste -sd ' ')
[ -z "$failed" ] || check_fail "lchan_socket_test failed: $failed"
[ "$rc" = 0 ] || check_fail "lchan_socket_test exited $rc$([ "$rc" = 124 ] && echo ' (timed out)')"
[ "$passed" -gt 0 ] || check_fail "lchan_socket_test passed no test"
echo "$CHECK: lchan_socket_test against the host's TCP: $passed passed, $skipped skipped"
