#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host check: without RDMA devices every selftest skips.
#
# Builds the selftests against this kernel's kselftest harness
# (rig/ksft-headers.sh, LCHAN_KERNEL) and runs them as a user does, `make
# -C selftests run_tests` (kselftest's runner), with no LCHAN_*
# environment, as on a machine with no device named.  No test may
# fail: a test body that ran after its fixture's setup skipped would (it
# has no device), and 6.1's harness runs it unless setup leaves through
# LCHAN_T_SETUP_SKIP.  The tests that need no device (those without a
# fixture, lchan_socket_test's) may pass.
CHECK=skips
# shellcheck source-path=SCRIPTDIR source=checklib.sh
. "$(dirname "$0")/checklib.sh"

t=$(check_dir check-skips)
"$RIG_DIR/ksft-headers.sh" "$t/ksft" || check_fail "no kselftest harness headers"
check_run "$t/build.log" "the selftests do not build" make -s -C selftests KSFT_INC="$t/ksft" OUT="$t/bin"

# Every LCHAN_* variable of this environment, unset.
read -ra unset_lchan <<<"$(env | sed -n 's/^\(LCHAN_[A-Za-z0-9_]*\)=.*/-u \1/p' | tr '\n' ' ')"
# As a user runs them: kselftest's runner through make, one TAP stream in
# which each program's own lines come behind "# ".
env "${unset_lchan[@]}" LCHAN_TEST_TIMEOUT=120 \
	make -s -C selftests run_tests KSFT_INC="$t/ksft" OUT="$t/bin" >"$t/run.log" 2>&1
# Per program (the runner's "# selftests: lchan: NAME" opens it, its
# "ok|not ok N selftests: lchan: NAME" closes it): the harness's results.
read -r progs skipped passed bad < <(awk '
	/^# selftests: lchan: / { name = $NF; s = o = n = 0; next }
	/^# ok .* # SKIP/ { s++; next }
	/^# ok / { o++; next }
	/^# not ok / { n++; next }
	/^(not )?ok [0-9]+ selftests: lchan: / {
		progs++; skipped += s; passed += o
		if ($1 == "not" || n || s + o == 0) bad = bad "," name
	}
	END { print progs + 0, skipped + 0, passed + 0, (bad == "" ? "-" : substr(bad, 2)) }' "$t/run.log")
[ "$progs" -gt 0 ] || { cat "$t/run.log"; check_fail "make run_tests ran no selftest program"; }
if [ "$bad" != - ]; then
	for name in ${bad//,/ }; do
		echo "$name:"
		awk -v p="# selftests: lchan: $name" '$0 == p { on = 1; next }
			on && /^(not )?ok [0-9]+ selftests: lchan: / { print; exit }
			on && /^# (not ok|# .*(FAIL|Test failed))/' "$t/run.log" | head -n 10
	done
	check_fail "without devices, tests failed in: $bad"
fi
echo "$CHECK: $progs programs without devices: $skipped tests skipped, $passed passed (no device needed), none failed"
