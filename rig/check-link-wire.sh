#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host check: the link's wire format.  kmod/lchan_link_wire.c, the
# module's own encode and decode, is pure code: built here for the host
# against the shims of rig/wire/shim with rig/wire/link_wire_test.c, under
# AddressSanitizer and UBSan, it must give the documented bytes, refuse
# every message Documentation/link.md says a receiver refuses, and never
# read past what it was given.  The program's TAP lines are the check's.
CHECK=link-wire
# shellcheck source-path=SCRIPTDIR source=checklib.sh
. "$(dirname "$0")/checklib.sh"

check_need cc
d=$(check_dir link-wire-check)
check_run "$d/build.log" "the wire test does not build" \
	cc -std=gnu11 -O1 -g -Wall -Wextra -Werror \
	-fsanitize=address,undefined -fno-sanitize-recover=all \
	-I rig/wire/shim -I kmod -o "$d/link_wire_test" \
	rig/wire/link_wire_test.c kmod/lchan_link_wire.c
rc=0
"$d/link_wire_test" >"$d/run.log" 2>&1 || rc=$?
# Its TAP lines, numbered by the program; a sanitizer's report as comments.
grep -E '^(ok|not ok|1\.\.)' "$d/run.log"
grep -vE '^(ok|not ok|1\.\.)' "$d/run.log" | sed 's/^/#   /'
passed=$(grep -c '^ok ' "$d/run.log")
[ "$rc" = 0 ] || check_fail "the wire test failed (exit status $rc; log: $d/run.log)"
echo "$CHECK: $passed cases of kmod/lchan_link_wire.c pass on the host"
