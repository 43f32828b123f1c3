#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run the lchan selftests as kselftest's runner does: one TAP stream, a
# result line per program (exit status 4 is a skip), each program's own
# output behind "# ".  A program gets LCHAN_TEST_TIMEOUT seconds (600).
#
#   run_tests.sh PROGRAM...
#
# Needs lchan loaded.  Which devices to test on comes from the environment:
# LCHAN_RXE_DEV/LCHAN_RXE_ADDR (a RoCE device and one of its IPv4
# addresses) and LCHAN_SIW_DEV/LCHAN_SIW_ADDR (an iWARP device); the
# variants of a device that is not named SKIP.
limit=${LCHAN_TEST_TIMEOUT:-600}
st=$(mktemp) || exit 1
trap 'rm -f "$st"' EXIT
echo "TAP version 13"
echo "1..$#"
n=0
failed=0
for t in "$@"; do
	n=$((n + 1))
	name=${t##*/}
	echo "# selftests: lchan: $name"
	if command -v timeout >/dev/null; then
		(cd "$(dirname "$t")" && timeout "$limit" "./$name" 2>&1; echo "$?" >"$st") | sed 's/^/# /'
	else
		(cd "$(dirname "$t")" && "./$name" 2>&1; echo "$?" >"$st") | sed 's/^/# /'
	fi
	rc=$(cat "$st")
	case $rc in
	0) echo "ok $n selftests: lchan: $name" ;;
	4) echo "ok $n selftests: lchan: $name # SKIP" ;;
	124) echo "not ok $n selftests: lchan: $name # TIMEOUT ${limit} seconds"; failed=1 ;;
	*) echo "not ok $n selftests: lchan: $name # exit=$rc"; failed=1 ;;
	esac
done
exit $failed
