#!/bin/sh
# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Rig smoke test, run in the guest: the RDMA devices the tests rely on are
# up and carry traffic (rping client/server on each device and address).
# Prints TAP.  Not an lchan test: it tells rig trouble from module trouble.
# shellcheck disable=SC1091 # written by the guest /init
. /etc/lchan.env

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

# rping server and client on one address; both must finish cleanly.
rping_pair() {
	timeout 30 rping -s -a "$1" -C 3 >/tmp/rping-s.log 2>&1 &
	_srv=$!
	# Connect only once the server listens: a connect that comes first is
	# rejected (a loaded host makes that likely).
	_i=0
	while [ $_i -lt 100 ] && ! rdma resource show cm_id 2>/dev/null | grep -q 'state LISTEN.*comm rping'; do
		sleep 0.1
		_i=$((_i + 1))
	done
	timeout 30 rping -c -a "$1" -C 3 -v >/tmp/rping-c.log 2>&1
	_crc=$?
	wait $_srv
	_src=$?
	if [ $_crc = 0 ] && [ $_src = 0 ] && [ "$(grep -c 'ping data' /tmp/rping-c.log)" = 3 ]; then
		return 0
	fi
	echo "# rping on $1: client exit $_crc, server exit $_src"
	sed 's/^/# client: /' /tmp/rping-c.log
	sed 's/^/# server: /' /tmp/rping-s.log
	return 1
}

for spec in "$LCHAN_RXE_DEV $LCHAN_RXE_ADDR" "$LCHAN_RXE_DEV $LCHAN_RXE_ADDR6" \
	"$LCHAN_SIW_DEV $LCHAN_SIW_ADDR" "$LCHAN_SIW_DEV $LCHAN_SIW_ADDR6"; do
	# shellcheck disable=SC2086 # split "dev addr"
	set -- $spec
	if rping_pair "$2"; then
		ok "rdma_smoke: rping over $1 to $2"
	else
		notok "rdma_smoke: rping over $1 to $2"
	fi
done
exit $failed
