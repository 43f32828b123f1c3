#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make check-2node`: lchan across a virtual wire.  Two guests (a and b,
# 1 vCPU and 1 GiB each) are joined by two wires, QEMU's `-netdev dgram`
# over UDP on 127.0.0.1 (rig/README.md, "Two machines"): rxe1 on the first,
# siw1 on the second, in both guests.  Guest a runs the servers, guest b
# the clients (job "2node", rig/guest/2node.sh): connect/accept, every
# data operation byte-checked, the message API, on rxe and siw over IPv4
# and IPv6, latency and bandwidth rows of lchan_perf beside perftest,
# lchan_interop against rping and librdmacm's examples in both roles,
# sixteen streams at once, and what only a wire can break: the link cut
# short and long (QEMU monitor set_link), loss, duplication and
# reordering (tc netem in the guests), guest a power-cycled mid-stream
# and back with a new listener (monitor quit, then a fresh qemu), and
# guest a powered off mid-stream (monitor quit).  Each guest's
# monitor listens on a TCP port of 127.0.0.1; the guests ask for those
# commands through the wire directory (req.NAME, done.NAME).
#
#   rig/two-node.sh [-n]     (-n: build and stage, print the qemu
#                                   command lines, boot nothing)
#
# Each guest is booted, staged and judged as run-vm.sh does one
# (vmlib.sh): the same initramfs, share, verdict and kernel-log gate.  Its
# run is kept in build/runs/2node-<kernel>/a and .../b (console.log,
# dmesg.txt, tap.txt, logs/), the shares in build/share-2node/.  TAP lines,
# then "N passed, N failed, N skipped" over both guests; the exit status is
# non-zero when either guest fails any of it.
#
# LCHAN_2NODE_TIMEOUT: seconds for the whole run of each guest (default
# 1200).  LCHAN_KERNEL as for run-vm.sh (default: the first kernel).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=vmlib.sh
. "$RIG_DIR/vmlib.sh"
cd "$REPO"

dry=0
case ${1:-} in
-n) dry=1 ;;
'') ;;
*) rig_die "usage: $0 [-n]" ;;
esac
job=2node
timeout_s=${LCHAN_2NODE_TIMEOUT:-1200}
# Runs go to build/runs/2node-<kernel> whether or not a kernel was named.
LCHAN_KERNEL=${LCHAN_KERNEL:-$(rig_kernel)}
export LCHAN_KERNEL
t0=$(rig_now)

"$RIG_DIR/setup.sh" "$LCHAN_KERNEL" >/dev/null
KVER=$("$RIG_DIR/kver.sh" "$LCHAN_KERNEL")
export KVER
make -s KVER="$KVER" KDIR="/usr/src/linux-headers-$KVER" module lib tools
vm_prepare
[ "$timeout_s" -gt $((boot_margin + 10)) ] || rig_die "timeout must exceed $((boot_margin + 10)) s"

run=$(rig_run_dir "$job")
top=$B/share-2node
wire=$top/wire
vm_lock
rm -rf "$top"
mkdir -p "$wire"
for g in a b; do
	vm_stage "$top/$g"
done
vm_staged

# Four free UDP ports on 127.0.0.1: each guest's end of each wire.
udp_free() { ! ss -Hlun 2>/dev/null | awk '{ print $4 }' | grep -q ":$1\$"; }
while :; do
	p0=$((20000 + RANDOM % 30000))
	udp_free "$p0" && udp_free $((p0 + 1)) && udp_free $((p0 + 2)) && udp_free $((p0 + 3)) && break
done

# A free TCP port on 127.0.0.1 for each guest's monitor.
tcp_free() { ! ss -Hltn 2>/dev/null | awk '{ print $4 }' | grep -q ":$1\$"; }
while :; do
	m0=$((20000 + RANDOM % 30000))
	[ "$m0" -lt "$p0" ] || [ "$m0" -gt $((p0 + 3)) ] || continue
	tcp_free "$m0" && tcp_free $((m0 + 1)) && break
done

guest_timeout=$((timeout_s - boot_margin))
vm_append "$job"
# LCHAN_2NODE_ONLY=table: the two-machine table's rows alone (make
# bench-2node); =cut: the link-cut tests alone; =impair: the impaired-wire
# streams alone; =interop: lchan_interop against rping and librdmacm's
# examples alone; =rtu: the accept whose RTU is lost.  LCHAN_2NODE_REPEAT=N:
# that plan N times over in one boot (a reproducer).
# LCHAN_2NODE_TABLE_ROUNDS=N: the table's rounds (default 1; make
# bench-2node asks for its LCHAN_BENCH_ROUNDS, default 3).
[ -z "${LCHAN_2NODE_ONLY:-}" ] || append+=" lchan.2node_only=$LCHAN_2NODE_ONLY"
[ -z "${LCHAN_2NODE_REPEAT:-}" ] || append+=" lchan.2node_repeat=$LCHAN_2NODE_REPEAT"
[ -z "${LCHAN_2NODE_TABLE_ROUNDS:-}" ] || append+=" lchan.2node_table_rounds=$LCHAN_2NODE_TABLE_ROUNDS"
# guest_qemu NODE N: the command line of guest NODE (a: N=1, b: N=2) in
# qemu.  Wire W's NIC has MAC 52:54:00:4c:0W:0N (guest/2node.sh finds
# it by that); guest N's end of wire W is port p0 + 2(W-1) + N-1.
guest_qemu() {
	local node=$1 n=$2 w lp rp
	vm_qemu "$top/$node" 1 1G
	for w in 1 2; do
		lp=$((p0 + 2 * (w - 1) + n - 1))
		rp=$((p0 + 2 * (w - 1) + 2 - n))
		# shellcheck disable=SC2054 # commas are qemu option syntax
		qemu+=(-netdev "dgram,id=w$w,local.type=inet,local.host=127.0.0.1,local.port=$lp,remote.type=inet,remote.host=127.0.0.1,remote.port=$rp"
			-device "e1000,id=nw$w,netdev=w$w,mac=52:54:00:4c:0$w:0$n,romfile=")
		# e1000, not virtio-net: after a set_link off/on of a busy
		# virtio-net NIC, qemu 7.2 now and then stopped reading its
		# transmit queue for good (the guest's avail index 232 ahead
		# of qemu's last read, no kick coming), and the skbs held
		# there kept rxe's QP referenced and silent.  e1000 has no
		# notification suppression to get out of step.
	done
	qemu+=(-virtfs "local,path=$wire,mount_tag=wire,security_model=none,id=wire"
		-monitor "tcp:127.0.0.1:$((m0 + n - 1)),server=on,wait=off"
		-serial "file:$run/$node/console.log"
		-append "$append lchan.node=$node lchan.timeout=$guest_timeout")
}
rm -rf "$run"
mkdir -p "$run/a" "$run/b"
guest_qemu a 1
qemu_a=("${qemu[@]}")
guest_qemu b 2
qemu_b=("${qemu[@]}")
printf '%q ' "${qemu_a[@]}" >"$run/a/qemu.cmd"
printf '%q ' "${qemu_b[@]}" >"$run/b/qemu.cmd"
echo >>"$run/a/qemu.cmd"
echo >>"$run/b/qemu.cmd"
if [ "$dry" = 1 ]; then
	cat "$run/a/qemu.cmd" "$run/b/qemu.cmd"
	exit 0
fi

# --- boot both ---------------------------------------------------------------
rig_log "booting $KVER for job $job, guests a and b (timeout ${timeout_s}s each); consoles: $run/{a,b}/console.log"
start=$(rig_now)
: >"$run/a/console.log"
: >"$run/b/console.log"
declare -A pid=() qrc=()
timeout -k 10 "$timeout_s" "${qemu_a[@]}" 2>"$run/a/qemu.stderr" &
pid[a]=$!
timeout -k 10 "$timeout_s" "${qemu_b[@]}" 2>"$run/b/qemu.stderr" &
pid[b]=$!
interrupted=0
on_signal() {
	interrupted=1
	kill -TERM "${pid[a]}" "${pid[b]}" 2>/dev/null || true
}
trap on_signal INT TERM HUP
# b's TAP (the cross-machine tests) as it comes.
tail -n +1 -F --pid="${pid[b]}" "$top/b/out/tap.txt" 2>/dev/null &
tailer=$!
# monitor NODE COMMAND: give COMMAND to NODE's qemu monitor.  The reply
# is read (and dropped) until the prompt comes back or qemu ends.
declare -A mport=([a]=$m0 [b]=$((m0 + 1))) asked_off=()
monitor() {
	local fd line
	exec {fd}<>"/dev/tcp/127.0.0.1/${mport[$1]}" || return 1
	printf '%s\n' "$2" >&"$fd"
	while IFS= read -r -t 5 -u "$fd" line; do
		case $line in *"$2"*) break ;; esac
	done
	sleep 0.2
	exec {fd}>&-
}
# power_cycle NODE: NODE's machine off (monitor quit: no FIN, no
# disconnect) and a fresh one booted in its place, its console in
# console.N.log (N: the boot), appended to console.log at the end.  (A
# reset in place would not do: the guests run with -no-reboot, so that a
# panic ends qemu, and a QMP reset that allows one reboot left 6.12's
# second boot stuck unpacking its initramfs.)
declare -A boots=([a]=1 [b]=1)
power_cycle() { # NODE
	local -n q=qemu_$1
	local args=() x
	monitor "$1" quit || return 1
	wait "${pid[$1]}" || true
	boots[$1]=$((boots[$1] + 1))
	for x in "${q[@]}"; do
		[ "$x" != "file:$run/$1/console.log" ] || x=file:$run/$1/console.${boots[$1]}.log
		args+=("$x")
	done
	timeout -k 10 "$timeout_s" "${args[@]}" 2>>"$run/$1/qemu.stderr" &
	pid[$1]=$!
}
# monitor_read NODE COMMAND: COMMAND's reply from NODE's qemu monitor,
# all it prints until it is quiet for a second.
monitor_read() {
	local fd line
	exec {fd}<>"/dev/tcp/127.0.0.1/${mport[$1]}" || return 1
	printf '%s\n' "$2" >&"$fd"
	while IFS= read -r -t 1 -u "$fd" line; do
		printf '%s\n' "$line"
	done | tr -d '\r' | grep -v '^(qemu)\|^QEMU .* monitor'
	exec {fd}>&-
}
# wire_state: what qemu says of both guests' wire NICs and their
# backends, for a stream that stalled.
wire_state() {
	local g
	for g in a b; do
		kill -0 "${pid[$g]}" 2>/dev/null || continue
		echo "== $g: info network"
		monitor_read "$g" "info network"
	done
}
# Requests of the guests (guest/2node.sh): req.NAME holds "NODE COMMAND".
serve_requests() {
	local f name node cmd
	for f in "$wire"/req.*; do
		[ -e "$f" ] || continue
		# A request being written (guest/2node.sh put: NAME.tmp, then
		# a rename).
		case $f in *.tmp) continue ;; esac
		name=${f##*/req.}
		[ ! -e "$wire/done.$name" ] || continue
		read -r node cmd <"$f" || true
		case $node in a | b) ;; *) continue ;; esac
		case $cmd in
		quit) asked_off[$node]=1 ;;
		"set_link w"[12]" on" | "set_link w"[12]" off" | power_cycle | wire_state) ;;
		*) continue ;;
		esac
		if [ "$cmd" = power_cycle ]; then
			power_cycle "$node" || rig_log "$node: the power cycle failed"
		elif [ "$cmd" = wire_state ]; then
			wire_state >"$wire/state.$name" 2>&1
		else
			monitor "$node" "$cmd" || rig_log "monitor of $node: \"$cmd\" not delivered"
		fi
		: >"$wire/done.$name"
	done
}
# Tell each guest when the other's qemu has ended: its waits end early.
while [ "${#qrc[@]}" -lt 2 ]; do
	serve_requests
	for g in a b; do
		[ -z "${qrc[$g]:-}" ] || continue
		! kill -0 "${pid[$g]}" 2>/dev/null || continue
		q=0
		wait "${pid[$g]}" || q=$?
		qrc[$g]=$q
		: >"$wire/$g.exited"
	done
	sleep 0.2
done
wait "$tailer" 2>/dev/null || true
trap - INT TERM HUP
if [ "$interrupted" = 1 ]; then
	rig_log "interrupted; guests stopped (logs in $run)"
	exit 130
fi
secs=$(($(rig_now) - start))
for g in a b; do
	cp -a "$top/$g/out/." "$run/$g/" 2>/dev/null || true
	for ((i = 2; i <= boots[$g]; i++)); do
		cat "$run/$g/console.$i.log" >>"$run/$g/console.log" 2>/dev/null || true
	done
done
flock -u "$lockfd"

# --- judge both --------------------------------------------------------------
echo "# guest a (servers):"
cat "$run/a/tap.txt" 2>/dev/null || true
tp=0 tf=0 ts=0 bad=0
for g in a b; do
	# A guest quit on request has no verdict of its own: it said how its
	# part went before (a.verdict).
	if [ -n "${asked_off[$g]:-}" ] && [ "${qrc[$g]}" = 0 ]; then
		cp "$wire/$g.verdict" "$run/$g/poweroff-verdict" 2>/dev/null || true
		qrc[$g]=off
	fi
	vm_judge "$run/$g" "$job-$g" "${qrc[$g]}" "$secs" "$timeout_s" "$guest_timeout" "rig $g"
	tp=$((tp + passed)) tf=$((tf + failed)) ts=$((ts + skipped))
	[ "${#reasons[@]}" = 0 ] || bad=1
done
# b's figures, as medians and ratios: reported, not bounds.
[ ! -s "$run/b/two-machines.tsv" ] || rig_report two-machines "$run/b/two-machines.tsv" || true
echo "# check-2node: $KVER, guests ${secs}s, all ${t0:+$(($(rig_now) - t0))}s"
echo "$tp passed, $tf failed, $ts skipped"
[ "$bad" = 0 ]
