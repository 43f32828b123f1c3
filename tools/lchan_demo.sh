#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
# The demo's main job, run in the guest with lchan loaded: a server and a
# client process exchange messages over lchan on each RDMA device; while
# they are connected, show the channels in sysfs, lchanctl's and rdma's
# view.
set -u
tools=$(dirname "$0")
fail=0

demo_one() {
	dev=$1 addr=$2 port=$3
	echo "== $dev ($addr:$port): lchan_pingpong"
	"$tools/lchan_pingpong" -s -q -a "$addr" -p "$port" -n 20000 -S 64 &
	srv=$!
	sleep 0.5
	"$tools/lchan_pingpong" -c "$addr" -p "$port" -n 20000 -S 64 \
		>"/tmp/pp.$dev" 2>&1 &
	cli=$!
	sleep 2
	echo "-- channels while connected"
	for d in /sys/kernel/lchan/channels/*; do
		[ -d "$d" ] || continue
		echo "channel ${d##*/}:"
		for f in "$d"/*; do
			printf '  %-15s %s\n' "${f##*/}" "$(cat "$f")"
		done
	done
	echo "-- lchanctl"
	"$tools/lchanctl" || fail=1
	echo "-- lchanctl --json"
	"$tools/lchanctl" --json || fail=1
	echo "-- rdma resource show qp (link $dev)"
	rdma resource show qp link "$dev/1"
	wait $cli || fail=1
	wait $srv || fail=1
	echo "-- client"
	cat "/tmp/pp.$dev"
}

echo "== lchanctl devices"
"$tools/lchanctl" devices || fail=1
demo_one "${LCHAN_RXE_DEV:-rxe0}" "${LCHAN_RXE_ADDR:-10.0.2.15}" 18515
demo_one "${LCHAN_SIW_DEV:-siw0}" "${LCHAN_SIW_ADDR:-192.0.2.1}" 18516
exit $fail
