#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host check: without RDMA devices every selftest skips.
#
# Builds the selftests against this kernel's kselftest harness
# (rig/ksft-headers.sh, LCHAN_KERNEL) and runs each program with no
# LCHAN_* environment, as on a machine with no device named.  No test may
# fail: a test body that ran after its fixture's setup skipped would (it
# has no device), and 6.1's harness runs it unless setup leaves through
# LCHAN_T_SETUP_SKIP.  The tests without a fixture may pass.
# The last line of output is the summary; exit status 0 pass, 1 fail.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO" || exit 1

t=$B/check-skips
fail() { echo "skips: FAIL: $*"; exit 1; }

rm -rf "$t"
mkdir -p "$t"
"$RIG_DIR/ksft-headers.sh" "$t/ksft" || fail "no kselftest harness headers"
make -s -C selftests KSFT_INC="$t/ksft" OUT="$t/bin" >"$t/build.log" 2>&1 ||
	{ cat "$t/build.log"; fail "the selftests do not build"; }

# Every LCHAN_* variable of this environment, unset.
read -ra unset_lchan <<<"$(env | sed -n 's/^\(LCHAN_[A-Za-z0-9_]*\)=.*/-u \1/p' | tr '\n' ' ')"
progs=0 skipped=0 passed=0 bad=
for p in "$t"/bin/lchan_*; do
	[ -x "$p" ] || continue
	name=${p##*/}
	progs=$((progs + 1))
	(cd "$t/bin" && env "${unset_lchan[@]}" timeout 120 "./$name") >"$t/$name.log" 2>&1
	rc=$?
	s=$(grep -c '^ok .* # SKIP' "$t/$name.log")
	o=$(grep '^ok ' "$t/$name.log" | grep -vc '# SKIP')
	n=$(grep -c '^not ok' "$t/$name.log")
	skipped=$((skipped + s))
	passed=$((passed + o))
	if [ "$n" != 0 ] || [ "$((s + o))" = 0 ] || { [ "$rc" != 0 ] && [ "$rc" != 4 ]; }; then
		bad="$bad $name"
		echo "$name: exit $rc, $s skipped, $o passed, $n failed:"
		grep -E '^(not ok|# .*(FAIL|Test failed))' "$t/$name.log" | head -n 10
	fi
done
[ "$progs" -gt 0 ] || fail "no selftest programs built"
[ -z "$bad" ] || fail "without devices, tests failed in:$bad"
echo "skips: $progs programs without devices: $skipped tests skipped, $passed passed (no fixture), none failed"
