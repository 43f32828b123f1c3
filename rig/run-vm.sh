#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot the test guest for one job and judge the run.
#
#   rig/run-vm.sh [-i] JOB [TIMEOUT_SECS]
#
# JOB is rig/guest/JOB.sh, run inside the guest by its /init.  Fresh
# build outputs (kmod/lchan.ko, build/selftests, build/tools, lib/liblchan.so*,
# siw.ko, the rig self-test pieces) are staged into build/share/, the 9p
# share; the guest writes out/ there.  Everything of a run is kept under
# build/runs/JOB/: console.log (serial), dmesg.txt, tap.txt, logs/, and
# summary (machine-readable verdict for check.sh).
#
# Exit status is non-zero when a test failed, no test ran, the guest hung or
# gave no verdict, or the kernel log shows BUG/WARNING/Oops/... lines.
# -i: interactive (serial console on stdio, no timeout, no judging).
#
# LCHAN_KERNEL=<name> boots that kernel of rig/kernels (default: its
# first entry) and keeps the run in build/runs/JOB-<name>.
# LCHAN_KERNEL=debug boots the debug kernel of rig/debug-kernel.sh
# (KASAN, lockdep, kmemleak; built beforehand) with its own siw.ko and
# initramfs, and lchan.ko from $B/debug-kmod (make module-debug).
# LCHAN_HOST_LOAD=N keeps N busy loops on the host while the guest runs:
# a reproducer for what shows only when the host's CPUs are short, as when
# CI's host checks run beside its guests.
# LCHAN_STAGED=FILE: create FILE once the share is staged (make check
# builds the next kernel from then on).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=vmlib.sh
. "$RIG_DIR/vmlib.sh"

interactive=0
if [ "${1:-}" = -i ]; then
	interactive=1
	shift
fi
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 [-i] JOB [TIMEOUT_SECS]" >&2; exit 2; }
job=$1
timeout_s=${2:-600}
[ -f "$RIG_DIR/guest/$job.sh" ] || rig_die "no such job: $job (rig/guest/$job.sh)"
case $timeout_s in '' | *[!0-9]*) rig_die "timeout must be a number of seconds" ;; esac
host_load=${LCHAN_HOST_LOAD:-0}
case $host_load in '' | *[!0-9]*) rig_die "LCHAN_HOST_LOAD must be a number of busy loops" ;; esac
vm_prepare
[ "$timeout_s" -gt $((boot_margin + 10)) ] || rig_die "timeout must exceed $((boot_margin + 10)) s"

share=$B/share
# Each named kernel (and the debug lane) keeps its own runs.
run=$(rig_run_dir "$job")
# One guest at a time owns build/share.
vm_lock

# --- stage the share -------------------------------------------------------
vm_stage "$share"
vm_staged

# --- boot --------------------------------------------------------------------
rm -rf "$run"
mkdir -p "$run"
guest_timeout=$((timeout_s - boot_margin))
vm_append "$job"
vm_qemu "$share" 2 2G

# What the guest left in the share goes to the run; its kallsyms, asked
# for once per kernel (vm_append), to the kernel's cache.
collect_out() {
	cp -a "$share/out/." "$run/" 2>/dev/null || true
	[ ! -s "$run/kallsyms" ] || mv "$run/kallsyms" "$kroot/kallsyms"
}

if [ "$interactive" = 1 ]; then
	rig_log "guest console on this terminal; Ctrl-A x quits qemu, Ctrl-A h for help"
	# A serial console has no size: pass the terminal's to the guest shell.
	if size=$(stty size 2>/dev/null); then
		append+=" lchan.rows=${size% *} lchan.cols=${size#* }"
	fi
	set +e
	"${qemu[@]}" -serial mon:stdio -append "$append lchan.timeout=0"
	rc=$?
	set -e
	collect_out
	# 1 is the guest's "pass" verdict, i.e. a clean power-off.
	[ "$rc" = 1 ] && exit 0
	exit "$rc"
fi

rig_log "booting $KVER for job $job (timeout ${timeout_s}s); console: $run/console.log"
start=$(rig_now)
: >"$run/console.log"
# qemu runs in the background so that the guest's TAP (or, with
# LCHAN_VERBOSE=1, the whole serial console) can be shown as it comes, and
# so that Ctrl-C stops the guest too (timeout puts qemu in its own process
# group, out of reach of the terminal's SIGINT).
# The monitor's socket in a short path: a socket's path is at most 107
# bytes, a checkout's may be longer.
mondir=$(mktemp -d /tmp/lchan-mon.XXXXXX)
timeout -k 10 "$timeout_s" "${qemu[@]}" \
	-monitor "unix:$mondir/sock,server=on,wait=off" \
	-serial "file:$run/console.log" \
	-append "$append lchan.timeout=$guest_timeout" 2>"$run/qemu.stderr" &
qpid=$!
vm_stall_watch "$qpid" "$run/console.log" "$mondir/sock" &
wpid=$!
load_pids=()
for ((i = 0; i < host_load; i++)); do
	(while :; do :; done) &
	load_pids+=($!)
done
[ "$host_load" = 0 ] || rig_log "host load: $host_load busy loops while the guest runs"
interrupted=0
on_signal() {
	interrupted=1
	kill -TERM "$qpid" "$wpid" "${load_pids[@]}" 2>/dev/null || true
}
trap on_signal INT TERM HUP
if [ "${LCHAN_VERBOSE:-0}" = 1 ]; then
	live=$run/console.log
else
	live=$share/out/tap.txt
fi
# --pid: tail reads to the end once qemu is gone, then exits.
tail -n +1 -F --pid="$qpid" "$live" 2>/dev/null || true
set +e
wait "$qpid"
qrc=$?
while kill -0 "$qpid" 2>/dev/null; do
	wait "$qpid"
	qrc=$?
done
kill "$wpid" "${load_pids[@]}" 2>/dev/null
wait "$wpid" "${load_pids[@]}" 2>/dev/null
rm -rf "$mondir"
set -e
trap - INT TERM HUP
if [ "$interrupted" = 1 ]; then
	rig_log "interrupted; guest stopped (logs in $run)"
	exit 130
fi
secs=$(($(rig_now) - start))
collect_out
flock -u "$lockfd"

# --- judge -------------------------------------------------------------------
vm_judge "$run" "$job" "$qrc" "$secs" "$timeout_s" "$guest_timeout"
echo "$passed passed, $failed failed, $skipped skipped"
[ "${#reasons[@]}" = 0 ]
