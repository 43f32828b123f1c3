#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make check`: everything, from a bare Debian 12 machine to the guest test
# results, on one or more guest kernels (rig/kernels):
#   rig/check.sh [KERNEL...]    (default: LCHAN_KERNEL, else every
#   rig/check.sh --lane LANE     kernel of the list; a lane: check,
#                                      6.1 and 6.12, or rt, their RT builds)
# Phases:
#   setup        host packages, the kernels' headers, sources and images
#                (rig/setup.sh)
#   host checks  DKMS aside, the packaging and documentation checks do not
#                depend on a kernel: make install, man pages, sysfs ABI
#                document, lchanctl, bench/README.md, the tools' command
#                lines, the installed headers in C and C++, README.md and
#                the examples it shows, a newcomer's build, the socket
#                semantics selftest against the host's TCP (rig/check-*.sh),
#                once
# then for each kernel K (its runs in build/runs/<job>-K, logs in
# build/check/K/):
#   K build      module, lib, selftests, tools (KDIR = K's headers), siw.ko,
#                initramfs (after the first kernel, beside the previous
#                kernel's last guest job); on the first kernel, DKMS
#                add/build/install/remove
#   K host checks  checkpatch (K's linux-source), sparse and W=1 against K's
#                headers: beside K's guests, at the lowest priority
#   K boot/selftest  the rig checks itself on K: it must catch a failing
#                test, a kernel WARNING and a panic, and its RDMA devices
#                must work
#   K tests      the guest job "tests" (lchan.ko + build/selftests)
#   K two machines  the check lane's kernels: make check-2node
#                (rig/two-node.sh), two guests across a virtual wire
# Every check is a TAP line; the last line is "N passed, N failed, N
# skipped" over all of them, on all kernels.  Exit status is non-zero on
# any failure.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO"

TESTS_TIMEOUT=${LCHAN_TESTS_TIMEOUT:-2400}
HARNESS_TIMEOUT=180

case ${1:-} in
--lane)
	[ $# = 2 ] || rig_die "usage: $0 [--lane LANE | KERNEL...]"
	mapfile -t kernels < <(rig_kernel_names "$2")
	[ "${#kernels[@]}" -gt 0 ] || rig_die "no kernel in lane $2 (rig/kernels)"
	;;
-*) rig_die "usage: $0 [--lane LANE | KERNEL...]" ;;
'')
	if [ -n "${LCHAN_KERNEL:-}" ]; then
		kernels=("$LCHAN_KERNEL")
	else
		mapfile -t kernels < <(rig_kernel_names)
	fi
	;;
*) kernels=("$@") ;;
esac
for k in "${kernels[@]}"; do
	rig_kernel_field "$k" lane >/dev/null
done

n=0
passed=0
failed=0
skipped=0
ok() { n=$((n + 1)); passed=$((passed + 1)); echo "ok $n $*"; }
# Every failure by name, repeated at the end so that a log's tail names them.
declare -a failures=()
notok() { n=$((n + 1)); failed=$((failed + 1)); failures+=("$*"); echo "not ok $n $*"; }
skip() { n=$((n + 1)); skipped=$((skipped + 1)); echo "ok $n $1 # SKIP $2"; }

declare -a phase_names=() phase_secs=() kernel_summary=()
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
		printf '#   %-22s %5ss\n' "${phase_names[$i]}" "${phase_secs[$i]:-?}"
	done
	printf '#   %-22s %5ss\n' total "$(($(rig_now) - t0))"
	for i in "${kernel_summary[@]}"; do
		echo "# $i"
	done
	for i in "${failures[@]}"; do
		echo "# failed: $i"
	done
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

# Make the scripts, make and kbuild work on kernel K.
use_kernel() { # K
	LCHAN_KERNEL=$1
	KVER=$("$RIG_DIR/kver.sh" "$1")
	KDIR=/usr/src/linux-headers-$KVER
	export LCHAN_KERNEL KVER KDIR
}

t0=$(rig_now)
L=$B/check
mkdir -p "$L"

# ---------------------------------------------------------------- setup
phase setup
if logged "$L/setup.log" "$RIG_DIR/setup.sh" "${kernels[@]}"; then
	ok "setup: host packages and guest kernels (${kernels[*]})"
else
	notok "setup: host packages and guest kernels (${kernels[*]})"
	finish
fi
for k in "${kernels[@]}"; do
	echo "# guest kernel $k: $("$RIG_DIR/kver.sh" "$k")"
done

# Packaging and documentation (rig/check-*.sh): DKMS, make install and
# pkg-config, man pages, the sysfs ABI document, lchanctl's output,
# bench/README.md against the committed benchmark data, the tools' command
# lines and exit statuses, the build in a fresh copy of the tree,
# lchan_socket_test (it needs no module) against the host's TCP.  Each
# prints its verdict as its last line; exit status $ksft_skip is a skip.
host_check() { # NAME [TAP-PREFIX]
	local rc=0 log=$L/check-$1.log last
	"$REPO/rig/check-$1.sh" >"$log" 2>&1 || rc=$?
	last=$(tail -n1 "$log" | sed "s/^$1: //")
	case $rc in
	0) ok "${2:-}$1: $last" ;;
	"$ksft_skip") skip "${2:-}$1" "${last#SKIP: }" ;;
	*)
		notok "${2:-}$1: $last"
		echo "# log: $log"
		tail -n 30 "$log" | sed 's/^/#   /'
		;;
	esac
}

# TAP lines a check printed (rig/check-headers.sh, rig/check-readme.sh, a
# kernel's host checks): each becomes one of ours, with the comment lines
# beside them; a failure without a failed line fails on the log's last line.
tap_replay() { # LOG RC
	local log=$1 rc=$2 line desc bad=0 lines=0
	while IFS= read -r line; do
		case $line in
		'not ok '*)
			desc=${line#not ok }
			notok "${desc#* }"
			bad=1 lines=$((lines + 1))
			;;
		'ok '*' # SKIP '*)
			desc=${line#ok }
			desc=${desc#* }
			skip "${desc%% # SKIP *}" "${desc#* # SKIP }"
			lines=$((lines + 1))
			;;
		'ok '*)
			desc=${line#ok }
			ok "${desc#* }"
			lines=$((lines + 1))
			;;
		'#'*) echo "$line" ;;
		esac
	done <"$log"
	if { [ "$rc" != 0 ] && [ "$bad" = 0 ]; } || [ "$lines" = 0 ]; then
		notok "$(tail -n1 "$log")"
		echo "# log: $log"
		tail -n 30 "$log" | sed 's/^/#   /'
	fi
}
host_check_tap() { # NAME
	local rc=0 log=$L/check-$1.log
	"$REPO/rig/check-$1.sh" >"$log" 2>&1 || rc=$?
	tap_replay "$log" "$rc"
}

# ---------------------------------------------------------------- host checks
phase "host checks"
# Whatever they build, they build for the first kernel, which setup readied.
use_kernel "${kernels[0]}"
for c in install man man-examples man-sysfs abi-doc lchanctl bench-readme tools build socket; do
	host_check "$c"
done
host_check_tap headers
host_check_tap readme
host_check_tap link-wire

# ---------------------------------------------------------------- per kernel
# run_harness JOB: boot it, leave the runner's output in $L/JOB.log
run_harness() {
	local rc=0
	rm -rf "$(rig_run_dir "$1")" # never judge a stale run
	"$RIG_DIR/run-vm.sh" "$1" "$HARNESS_TIMEOUT" >"$L/$1.log" 2>&1 || rc=$?
	echo "$rc"
}
has_reason() { grep -qx "reason=$2" "$(rig_run_dir "$1")/summary" 2>/dev/null; }
show_run() {
	echo "# runner output for $1 ($L/$1.log):"
	tail -n 40 "$L/$1.log" | sed 's/^/#   /'
}

# PREEMPT_RT changes how the kernel schedules and locks, not how user space
# runs: the programs whose subject is user-space code alone (the libfabric
# provider, Open MPI over it, lchanctl, the examples, the installed files,
# the socket semantics a TCP-carrying layer keeps) run on the check lane's
# kernels, and the kernel paths they take are the other programs' subject
# on every kernel.
RT_USER_ONLY="lchan_fabric_test lchan_fabric_api_test lchan_mpi_test lchan_ctl_test lchan_examples_test lchan_install_test lchan_socket_test"
# K's host checks: checkpatch and the host's skips once per kernel source
# (its checkpatch.pl, its kselftest harness), sparse and W=1 against K's
# headers.  They print TAP lines.
kernel_host_checks() { # K SOURCE-CHECKED-UNDER
	local k=$1 under=$2 p=$1: src
	ok() { echo "ok - $*"; }
	notok() { echo "not ok - $*"; }
	skip() { echo "ok - $1 # SKIP $2"; }
	src=$(rig_kernel_field "$k" source)
	if [ -n "$under" ]; then
		echo "# $p checkpatch, skips: checked with $src's source under $under"
	elif logged "$L/checkpatch.log" "$RIG_DIR/checkpatch.sh"; then
		ok "$p checkpatch: $(tail -n1 "$L/checkpatch.log" | sed 's/^checkpatch: //')"
	else
		notok "$p checkpatch: $(tail -n1 "$L/checkpatch.log" | sed 's/^checkpatch: //')"
	fi
	if logged "$L/sparse.log" "$RIG_DIR/sparse.sh"; then
		ok "$p sparse: $(tail -n1 "$L/sparse.log" | sed 's/^sparse: //')"
	else
		notok "$p sparse: module has sparse warnings or does not build"
	fi
	[ -n "$under" ] || host_check skips "$p "
}

# They read K's headers and source and write their own logs and build
# directories only, so they run beside K's guests, at the lowest CPU and
# I/O priority: the guests keep what they use, the checks take the rest.
# Their lines join the count once K's guests are done.
host_checks_pid=
host_checks_start() { # K
	local under=${source_done[$(rig_kernel_field "$1" source)]:-}
	[ -n "$under" ] || source_done[$(rig_kernel_field "$1" source)]=$1
	host_checks_t0=$(rig_now)
	(
		renice -n 19 -p "$BASHPID" >/dev/null || true
		ionice -c 3 -p "$BASHPID" 2>/dev/null || true
		kernel_host_checks "$1" "$under"
	) >"$L/host-checks.tap" 2>&1 &
	host_checks_pid=$!
}
host_checks_collect() { # K
	local rc=0
	[ -n "$host_checks_pid" ] || return 0
	wait "$host_checks_pid" || rc=$?
	host_checks_pid=
	echo "# $1 host checks, beside its guests: $(($(rig_now) - host_checks_t0))s"
	tap_replay "$L/host-checks.tap" "$rc"
}

# K's build (module, lib, selftests, tools, siw.ko, the rig's pieces,
# initramfs), in a subshell: its TAP lines go to build/check/K/build.tap,
# what can boot to build.status.  Only kmod/, lib/ and build/ change, and
# siw.ko and the initramfs are K's own files.
build_kernel() { # K
	local k=$1 p=$1: target built=1 rig_built=1 t0
	t0=$(rig_now)
	ok() { echo "ok - $*"; }
	notok() { echo "not ok - $*"; }
	use_kernel "$k"
	L=$B/check/$k
	for target in module lib selftests tools; do
		if logged "$L/build-$target.log" make -j2 KVER="$KVER" KDIR="$KDIR" "$target"; then
			ok "$p build: make $target"
		else
			notok "$p build: make $target"
			# Without tools only the tests that use them fail: still boot.
			[ "$target" = tools ] || built=0
		fi
	done
	# shellcheck disable=SC2317 # called through logged
	build_rig() { "$RIG_DIR/siw.sh" && "$RIG_DIR/selftest/build.sh" && "$RIG_DIR/initramfs.sh"; }
	if logged "$L/build-rig.log" build_rig; then
		ok "$p build: siw.ko, rig self-test pieces, initramfs"
	else
		notok "$p build: siw.ko, rig self-test pieces, initramfs"
		rig_built=0
	fi
	echo "built=$built rig_built=$rig_built" >"$L/build.status"
	echo "# $k build: $(($(rig_now) - t0))s"
}

# A kernel's last guest job has copied what it runs into its share when it
# starts (vm_stage), and it runs long, mostly waiting: the next kernel
# builds beside it at the lowest priority once its share is staged
# (LCHAN_STAGED, which run-vm.sh and two-node.sh create then).  The
# build's lines join the count when the next kernel's turn comes.
beside_pid='' beside_k='' beside_of=''
last_job() { # NEXT-K CMD...: run CMD, building NEXT-K beside it
	local next=$1 staged=$B/check/.staged pid rc=0
	shift
	if [ -z "$next" ]; then
		"$@" || rc=$?
		return "$rc"
	fi
	rm -f "$staged"
	LCHAN_STAGED=$staged "$@" &
	pid=$!
	while [ ! -e "$staged" ] && kill -0 "$pid" 2>/dev/null; do
		sleep 1
	done
	mkdir -p "$B/check/$next"
	beside_k=$next beside_of=$LCHAN_KERNEL
	(
		renice -n 19 -p "$BASHPID" >/dev/null || true
		ionice -c 3 -p "$BASHPID" 2>/dev/null || true
		build_kernel "$next"
	) >"$B/check/$next/build.tap" 2>&1 </dev/null &
	beside_pid=$!
	wait "$pid" || rc=$?
	return "$rc"
}

declare -A source_done=()
check_kernel() { # K NEXT-K
	local k=$1 next=$2 p=$1: built rig_built rc run s t warn_tap warn_pass_log smoke_ok src
	use_kernel "$k"
	L=$B/check/$k
	mkdir -p "$L"
	echo "# kernel $k: $KVER, KDIR $KDIR"
	src=$(rig_kernel_field "$k" source)

	phase "$k build"
	if [ "$beside_k" = "$k" ]; then
		t=$(rig_now)
		wait "$beside_pid" || true
		echo "# $k built beside $beside_of's last guest job, then waited for: $(($(rig_now) - t))s"
		beside_pid='' beside_k=''
	else
		(build_kernel "$k") >"$L/build.tap" 2>&1 || true
	fi
	tap_replay "$L/build.tap" 0
	built=0 rig_built=0
	[ ! -f "$L/build.status" ] || read -r built rig_built < <(sed 's/[a-z_]*=//g' "$L/build.status")
	rm -f "$L/build.status"
	# DKMS's packaging is the same for every kernel, and it runs `make
	# module` in the tree: once, on the first kernel, before any guest
	# copies kmod/lchan.ko.
	[ "$k" != "${kernels[0]}" ] || host_check dkms "$p "
	host_checks_start "$k"
	[ "$rig_built" = 1 ] || return 0

	phase "$k boot/selftest"
	# Reading a failed test is the harness's TAP: once per kernel source.
	if [ "${source_done[$src]}" != "$k" ]; then
		echo "# $p harness: detects a failing test: checked with $src's harness under ${source_done[$src]}"
	else
		rc=$(run_harness harness-fail)
		run=$(rig_run_dir harness-fail)
		if [ "$rc" != 0 ] && has_reason harness-fail failed-tests &&
			grep -q '^not ok [0-9]* global.rig_fails_on_purpose' "$run/tap.txt" &&
			# 6.1's harness leaves the test name out of a SKIP line, 6.12's not.
			grep -q '^ok [0-9]* \(global\.rig_skips \)\?# SKIP' "$run/tap.txt" &&
			grep -qx 'skipped=1' "$run/summary"; then
			ok "$p harness: detects a failing test"
		else
			notok "$p harness: detects a failing test (runner exit $rc)"
			show_run harness-fail
		fi
	fi

	rc=$(run_harness harness-warn)
	run=$(rig_run_dir harness-warn)
	warn_tap=$run/tap.txt
	warn_pass_log=$run/logs/rig_tap_pass.log
	if [ "$rc" != 0 ] && has_reason harness-warn kernel-log &&
		grep -q 'WARNING:.*lchan_warn' "$L/harness-warn.log" &&
		grep -q '^ok ' "$warn_pass_log" && ! grep -q '^not ok' "$warn_pass_log"; then
		ok "$p harness: detects a kernel WARNING while the tests pass"
	else
		notok "$p harness: detects a kernel WARNING while the tests pass (runner exit $rc)"
		show_run harness-warn
	fi
	# The same boot ran the RDMA smoke test: traffic over rxe0 and siw0.
	smoke_ok=$(grep -c '^ok [0-9]* rdma_smoke:' "$warn_tap" 2>/dev/null || true)
	if [ "${smoke_ok:-0}" -ge 6 ] && ! grep -q '^not ok [0-9]* rdma_smoke:' "$warn_tap"; then
		ok "$p harness: rxe0 and siw0 carry RC traffic (IPv4, IPv6)"
	else
		notok "$p harness: rxe0 and siw0 carry RC traffic (IPv4, IPv6)"
		# The whole section: the probes' own logs say where they stopped.
		sed -n '/^# selftest: rdma_smoke /,/^# selftest: rdma_smoke exit/s/^/#   /p' "$warn_tap" || true
	fi

	rc=$(run_harness harness-panic)
	if [ "$rc" != 0 ] && has_reason harness-panic no-verdict && has_reason harness-panic kernel-log &&
		grep -q 'guest gave no verdict' "$L/harness-panic.log"; then
		ok "$p harness: detects a kernel panic (no verdict)"
		if has_reason harness-panic panic-hung; then
			echo "# $p harness: the kernel hung in its own panic path (the rig ended the run):"
			sed -n '/^# where each vCPU/,/^# FAIL/p' "$L/harness-panic.log"
		fi
	else
		notok "$p harness: detects a kernel panic (no verdict) (runner exit $rc)"
		show_run harness-panic
	fi

	phase "$k tests"
	if [ "$built" = 1 ]; then
		rc=0
		run=$(rig_run_dir tests)
		rm -rf "$run"
		# The check lane's kernels go on to two machines: tests is the rt
		# lane's last job.
		if [ "$(rig_kernel_field "$k" lane)" = rt ]; then
			LCHAN_APPEND="${LCHAN_APPEND:-} lchan.skip_tests=${RT_USER_ONLY// /,}" \
				last_job "$next" "$RIG_DIR/run-vm.sh" tests "$TESTS_TIMEOUT" || rc=$?
		else
			"$RIG_DIR/run-vm.sh" tests "$TESTS_TIMEOUT" || rc=$?
		fi
		s=$run/summary
		if [ -f "$s" ]; then
			passed=$((passed + $(sed -n 's/^passed=//p' "$s")))
			failed=$((failed + $(sed -n 's/^failed=//p' "$s")))
			skipped=$((skipped + $(sed -n 's/^skipped=//p' "$s")))
			mapfile -t -O "${#failures[@]}" failures < <(sed -n "s/^failure=/$p tests: /p" "$s")
		fi
		# The runner can fail without a failed TAP line (e.g. it died early).
		if [ "$rc" != 0 ] && { [ ! -f "$s" ] || grep -qx 'failed=0' "$s"; }; then
			notok "$p tests: runner failed (exit $rc)"
		fi
	else
		notok "$p tests: not run, the module or selftests did not build"
	fi

	# The check lane's kernels also run across a wire (the rt lane adds
	# the scheduler, not the network).
	[ "$(rig_kernel_field "$k" lane)" = check ] || return 0
	phase "$k two machines"
	if [ "$built" = 1 ]; then
		rc=0
		last_job "$next" "$RIG_DIR/two-node.sh" >"$L/two-node.log" 2>&1 || rc=$?
		# Its failures and its tables (two machines, impaired wire).
		grep -E '^not ok|^# (two machines|impaired wire|check-2node)' "$L/two-node.log" |
			sed "s/^/# $p 2node: /" || true
		s=$(tail -n 1 "$L/two-node.log")
		if [[ $s =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
			passed=$((passed + BASH_REMATCH[1]))
			failed=$((failed + BASH_REMATCH[2]))
			skipped=$((skipped + BASH_REMATCH[3]))
			echo "# $p two machines: $s (log: $L/two-node.log)"
			mapfile -t -O "${#failures[@]}" failures < <(sed -n "s/^not ok [0-9-]* */$p 2node: /p" "$L/two-node.log")
			[ "$rc" = 0 ] || [ "${BASH_REMATCH[2]}" != 0 ] ||
				notok "$p two machines: two-node.sh failed (exit $rc) without a failed test"
		else
			notok "$p two machines: two-node.sh gave no verdict (exit $rc)"
			tail -n 40 "$L/two-node.log" | sed 's/^/#   /'
		fi
	else
		notok "$p two machines: not run, the module did not build"
	fi
}

for i in "${!kernels[@]}"; do
	k=${kernels[$i]}
	p0=$passed f0=$failed s0=$skipped
	check_kernel "$k" "${kernels[$((i + 1))]:-}"
	host_checks_collect "$k"
	kernel_summary+=("$k ($KVER): $((passed - p0)) passed, $((failed - f0)) failed, $((skipped - s0)) skipped")
done

finish
