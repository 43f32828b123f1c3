#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the rig's self-test pieces into $B/rig-selftest (never into
# build/selftests, where the real tests live):
#   pass/rig_tap_pass, fail/rig_tap_fail, smoke/rdma_smoke (with its probe
#   rig_cmping), lchan_warn.ko
set -euo pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

KVER=$(rig_kver)
KDIR=/usr/src/linux-headers-$KVER
here=$RIG_DIR/selftest
out=$B/rig-selftest
mkdir -p "$out/pass" "$out/fail" "$out/smoke" "$out/kmod" "$B/ksft"
"$RIG_DIR/ksft-headers.sh" "$B/ksft"

cc=${CC:-cc}
build_tap() { # $1 output, rest: extra flags
	local o=$1
	shift
	if [ ! -x "$o" ] || [ "$here/rig_tap.c" -nt "$o" ] || [ "$B/ksft/kselftest_harness.h" -nt "$o" ]; then
		"$cc" -O2 -Wall -Werror -I"$B/ksft" "$@" -o "$o" "$here/rig_tap.c"
	fi
}
build_tap "$out/pass/rig_tap_pass"
build_tap "$out/fail/rig_tap_fail" -DRIG_FAIL
# A rig whose RDMA devices do not work must not pass its own self-test.
install -m 0755 "$here/rdma_smoke.sh" "$out/smoke/rdma_smoke"
# The probe sits next to the script, outside smoke/ (every file there is run).
if [ ! -x "$out/rig_cmping" ] || [ "$here/rig_cmping.c" -nt "$out/rig_cmping" ]; then
	"$cc" -std=c11 -O2 -Wall -Wextra -Werror -o "$out/rig_cmping" "$here/rig_cmping.c" -lrdmacm -libverbs
fi

ko=$out/lchan_warn.ko
if [ ! -f "$ko" ] || [ "$here/lchan_warn.c" -nt "$ko" ] ||
	[ "$(cat "$out/.kver" 2>/dev/null)" != "$KVER" ]; then
	# Kbuild writes next to the sources: build in a copy.
	cp "$here/lchan_warn.c" "$here/Kbuild" "$out/kmod/"
	make -s -C "$KDIR" M="$out/kmod" modules >"$out/kmod/build.log" 2>&1 ||
		{ cat "$out/kmod/build.log" >&2; rig_die "lchan_warn.ko build failed"; }
	cp "$out/kmod/lchan_warn.ko" "$ko"
	printf '%s\n' "$KVER" >"$out/.kver"
fi
