#!/bin/sh
# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Rig smoke test, run in the guest: the RDMA devices the tests rely on are
# up and carry traffic (rig_cmping client/server on each device and address).
# Prints TAP.  Not an lchan test: it tells rig trouble from module trouble.
# shellcheck source=../guest/lib.sh
. "$LCHAN_SHARE/guest/lib.sh"

n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
notok() { n=$((n + 1)); echo "not ok $n $*"; failed=1; }
failed=0

echo "TAP version 13"
echo "1..6"

for dev in "$LCHAN_RXE_DEV" "$LCHAN_SIW_DEV"; do
	if ibv_devinfo -d "$dev" 2>&1 | grep -q PORT_ACTIVE; then
		ok "rdma_smoke: $dev port active"
	else
		notok "rdma_smoke: $dev port active"
		ibv_devinfo -d "$dev" 2>&1 | sed 's/^/# /'
	fi
done

# rig_cmping server and client on one address; both must finish cleanly.
# The client sends only once the server has said "established" (why: see
# rig_cmping.c).
probe=$LCHAN_SHARE/rig/rig_cmping

# Until FILE has a line matching WORD, for at most TENTHS tenths of a second.
wait_line() { # WORD FILE TENTHS
	_i=0
	while [ $_i -lt "$3" ] && ! grep -qs "$1" "$2"; do
		sleep 0.1
		_i=$((_i + 1))
	done
}

probe_pair() {
	# Nothing of the last pair's may be read as this one's.
	rm -f /tmp/cmping.go /tmp/cmping-s.out /tmp/cmping-s.log /tmp/cmping-c.out /tmp/cmping-c.log
	timeout 30 "$probe" -s "$1" 7471 >/tmp/cmping-s.out 2>/tmp/cmping-s.log &
	_srv=$!
	# Connect only once the server listens: a connect that comes first is
	# rejected (a loaded host makes that likely).
	wait_line listening /tmp/cmping-s.log 100
	timeout 30 "$probe" -c "$1" 7471 /tmp/cmping.go >/tmp/cmping-c.out 2>/tmp/cmping-c.log &
	_cli=$!
	wait_line established /tmp/cmping-s.out 200
	touch /tmp/cmping.go
	wait $_cli
	_crc=$?
	wait $_srv
	_src=$?
	if [ $_crc = 0 ] && [ $_src = 0 ] && [ "$(grep -c 'ping data' /tmp/cmping-c.out)" = 3 ]; then
		return 0
	fi
	echo "# rig_cmping on $1: client exit $_crc, server exit $_src"
	cat /tmp/cmping-c.out /tmp/cmping-c.log | sed 's/^/# client: /'
	cat /tmp/cmping-s.out /tmp/cmping-s.log | sed 's/^/# server: /'
	rdma resource show qp 2>&1 | sed 's/^/# /'
	echo "# $(dev_counters "$LCHAN_RXE_DEV")"
	echo "# $(dev_counters "$LCHAN_SIW_DEV")"
	return 1
}

for spec in "$LCHAN_RXE_DEV $LCHAN_RXE_ADDR" "$LCHAN_RXE_DEV $LCHAN_RXE_ADDR6" \
	"$LCHAN_SIW_DEV $LCHAN_SIW_ADDR" "$LCHAN_SIW_DEV $LCHAN_SIW_ADDR6"; do
	# shellcheck disable=SC2086 # split "dev addr"
	set -- $spec
	if probe_pair "$2"; then
		ok "rdma_smoke: traffic over $1 to $2"
	else
		notok "rdma_smoke: traffic over $1 to $2"
	fi
done
exit $failed
