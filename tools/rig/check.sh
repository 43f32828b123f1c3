#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make check`: everything, from a bare Debian 12 machine to the guest test
# results.  Phases:
#   setup        host packages, guest kernel (tools/rig/setup.sh)
#   host checks  checkpatch and sparse over the module; DKMS, make install,
#                man pages, sysfs ABI document, lchanctl (tools/check-*.sh)
#   build        module, lib, selftests, tools (KDIR = Debian's headers for
#                the guest kernel), siw.ko, initramfs
#   boot/selftest  the rig checks itself: it must catch a failing test, a
#                kernel WARNING and a panic, and its RDMA devices must work
#   tests        the guest job "tests" (lchan.ko + build/selftests)
# Every check is a TAP line; the last line is "N passed, N failed, N
# skipped" over all of them.  Exit status is non-zero on any failure.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO"

TESTS_TIMEOUT=${LCHAN_TESTS_TIMEOUT:-2400}
HARNESS_TIMEOUT=180

n=0
passed=0
failed=0
skipped=0
ok() { n=$((n + 1)); passed=$((passed + 1)); echo "ok $n $*"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $*"; }

declare -a phase_names=() phase_secs=()
phase_start=0
phase() { # NAME: close the running phase, open NAME
	local now
	now=$(rig_now)
	if [ ${#phase_names[@]} -gt 0 ]; then
		phase_secs+=($((now - phase_start)))
	fi
	[ -n "$1" ] || return 0
	phase_names+=("$1")
	phase_start=$now
	echo "# ---- $1"
}

finish() {
	local i
	phase ""
	echo "# phase timings:"
	for i in "${!phase_names[@]}"; do
		printf '#   %-14s %4ss\n' "${phase_names[$i]}" "${phase_secs[$i]:-?}"
	done
	printf '#   %-14s %4ss\n' total "$(($(rig_now) - t0))"
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" = 0 ]
	exit
}

# Run a command with its output in a log; on failure show the log's tail.
logged() { # LOG CMD...
	local log=$1
	shift
	if "$@" >"$log" 2>&1; then
		return 0
	fi
	echo "# command failed: $* (log: $log)"
	tail -n 60 "$log" | sed 's/^/#   /'
	return 1
}

t0=$(rig_now)
mkdir -p "$B/check"
L=$B/check

# ---------------------------------------------------------------- setup
phase setup
if logged "$L/setup.log" "$RIG_DIR/setup.sh"; then
	ok "setup: host packages and guest kernel"
else
	notok "setup: host packages and guest kernel"
	finish
fi
KVER=$("$RIG_DIR/kver.sh")
KDIR=/usr/src/linux-headers-$KVER
export KVER KDIR
echo "# guest kernel $KVER, KDIR $KDIR"

# ---------------------------------------------------------------- host checks
phase "host checks"
if logged "$L/checkpatch.log" "$RIG_DIR/checkpatch.sh"; then
	ok "checkpatch: $(tail -n1 "$L/checkpatch.log" | sed 's/^checkpatch: //')"
else
	notok "checkpatch: $(tail -n1 "$L/checkpatch.log" | sed 's/^checkpatch: //')"
fi
if logged "$L/sparse.log" "$RIG_DIR/sparse.sh"; then
	ok "sparse: $(tail -n1 "$L/sparse.log" | sed 's/^sparse: //')"
else
	notok "sparse: module has sparse warnings or does not build"
fi
# Packaging and documentation (tools/check-*.sh): DKMS, make install and
# pkg-config, man pages, the sysfs ABI document, lchanctl's output.  Each
# prints its verdict as its last line; exit status 4 is a skip.
host_check() { # NAME
	local rc=0 log=$L/check-$1.log last
	"$REPO/tools/check-$1.sh" >"$log" 2>&1 || rc=$?
	last=$(tail -n1 "$log" | sed "s/^$1: //")
	case $rc in
	0) ok "$1: $last" ;;
	4)
		n=$((n + 1))
		skipped=$((skipped + 1))
		echo "ok $n $1 # SKIP ${last#SKIP: }"
		;;
	*)
		notok "$1: $last"
		echo "# log: $log"
		tail -n 30 "$log" | sed 's/^/#   /'
		;;
	esac
}
for c in dkms install man abi-doc lchanctl; do
	host_check "$c"
done

# ---------------------------------------------------------------- build
phase build
built=1
for target in module lib selftests tools; do
	if logged "$L/build-$target.log" make -j2 KVER="$KVER" KDIR="$KDIR" "$target"; then
		ok "build: make $target"
	else
		notok "build: make $target"
		# Without tools only the tests that use them fail: still boot.
		[ "$target" = tools ] || built=0
	fi
done
# shellcheck disable=SC2317 # called through logged
build_rig() { "$RIG_DIR/siw.sh" && "$RIG_DIR/selftest/build.sh" && "$RIG_DIR/initramfs.sh"; }
if logged "$L/build-rig.log" build_rig; then
	ok "build: siw.ko, rig self-test pieces, initramfs"
else
	notok "build: siw.ko, rig self-test pieces, initramfs"
	finish
fi

# ---------------------------------------------------------------- harness
phase "boot/selftest"
# run_harness JOB: boot it, leave the runner's output in $L/JOB.log
run_harness() {
	local rc=0
	rm -rf "$B/runs/$1" # never judge a stale run
	"$RIG_DIR/run-vm.sh" "$1" "$HARNESS_TIMEOUT" >"$L/$1.log" 2>&1 || rc=$?
	echo "$rc"
}
has_reason() { grep -qx "reason=$2" "$B/runs/$1/summary" 2>/dev/null; }
show_run() {
	echo "# runner output for $1 ($L/$1.log):"
	tail -n 40 "$L/$1.log" | sed 's/^/#   /'
}

rc=$(run_harness harness-fail)
if [ "$rc" != 0 ] && has_reason harness-fail failed-tests &&
	grep -q '^not ok [0-9]* global.rig_fails_on_purpose' "$B/runs/harness-fail/tap.txt" &&
	grep -q '^ok [0-9]* # SKIP' "$B/runs/harness-fail/tap.txt" &&
	grep -qx 'skipped=1' "$B/runs/harness-fail/summary"; then
	ok "harness: detects a failing test"
else
	notok "harness: detects a failing test (runner exit $rc)"
	show_run harness-fail
fi

rc=$(run_harness harness-warn)
warn_tap=$B/runs/harness-warn/tap.txt
warn_pass_log=$B/runs/harness-warn/logs/rig_tap_pass.log
if [ "$rc" != 0 ] && has_reason harness-warn kernel-log &&
	grep -q 'WARNING:.*lchan_warn' "$L/harness-warn.log" &&
	grep -q '^ok ' "$warn_pass_log" && ! grep -q '^not ok' "$warn_pass_log"; then
	ok "harness: detects a kernel WARNING while the tests pass"
else
	notok "harness: detects a kernel WARNING while the tests pass (runner exit $rc)"
	show_run harness-warn
fi
# The same boot ran the RDMA smoke test: rping over rxe0 and siw0.
smoke_ok=$(grep -c '^ok [0-9]* rdma_smoke:' "$warn_tap" || true)
if [ "$smoke_ok" -ge 6 ] && ! grep -q '^not ok [0-9]* rdma_smoke:' "$warn_tap"; then
	ok "harness: rxe0 and siw0 carry rping traffic (IPv4, IPv6)"
else
	notok "harness: rxe0 and siw0 carry rping traffic (IPv4, IPv6)"
	grep 'rdma_smoke' "$warn_tap" | sed 's/^/#   /' || true
fi

rc=$(run_harness harness-panic)
if [ "$rc" != 0 ] && has_reason harness-panic no-verdict && has_reason harness-panic kernel-log &&
	grep -q 'guest gave no verdict' "$L/harness-panic.log"; then
	ok "harness: detects a kernel panic (no verdict)"
else
	notok "harness: detects a kernel panic (no verdict) (runner exit $rc)"
	show_run harness-panic
fi

# ---------------------------------------------------------------- tests
phase tests
if [ "$built" = 1 ]; then
	rc=0
	rm -rf "$B/runs/tests"
	"$RIG_DIR/run-vm.sh" tests "$TESTS_TIMEOUT" || rc=$?
	s=$B/runs/tests/summary
	if [ -f "$s" ]; then
		passed=$((passed + $(sed -n 's/^passed=//p' "$s")))
		failed=$((failed + $(sed -n 's/^failed=//p' "$s")))
		skipped=$((skipped + $(sed -n 's/^skipped=//p' "$s")))
	fi
	# The runner can fail without a failed TAP line (e.g. it died early).
	if [ "$rc" != 0 ] && { [ ! -f "$s" ] || grep -qx 'failed=0' "$s"; }; then
		notok "tests: runner failed (exit $rc)"
	fi
else
	notok "tests: not run, the module or selftests did not build"
fi

finish
