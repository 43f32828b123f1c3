#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
# Host check: lchanctl's output, exactly, on a made-up sysfs tree (the
# guest test lchan_ctl_test checks it against live channels): channels in
# numeric order, IPv6 endpoints in brackets, an attribute lchanctl does not
# know still shown by `show`, JSON numbers and strings, exit statuses (3:
# no sysfs tree, the module is not loaded).
CHECK=lchanctl
# shellcheck source-path=SCRIPTDIR source=checklib.sh
. "$(dirname "$0")/checklib.sh"

t=$(check_dir lchanctl-check)
ctl=$t/lchanctl
check_run "$t/build.log" "tools/lchanctl.c does not build" make --no-print-directory -C tools "$ctl" OUT="$t"

fs=$t/sysfs
attrs() { # DIR NAME=VALUE...
	local dir=$1 kv
	shift
	mkdir -p "$dir"
	for kv in "$@"; do printf '%s\n' "${kv#*=}" >"$dir/${kv%%=*}"; done
}
attrs "$fs" abi_version=1 features=0x1fff
attrs "$fs/devices/rxe0" transport=RoCE ports=1 channels=3 max_qp_wr=1048576 max_send_sge=32
attrs "$fs/devices/siw0" transport=iWARP ports=1 channels=1 max_qp_wr=32768 max_send_sge=6
chan() { # ID DEV LADDR LPORT RADDR RPORT MODE SEND RECV ERRORS [EXTRA=VALUE]
	attrs "$fs/channels/$1" state=connected device="$2" port=1 local_addr="$3" \
		local_port="$4" remote_addr="$5" remote_port="$6" local_qpn=17 \
		remote_qpn=18 sq_entries=128 rq_entries=128 cq_entries=256 \
		sq_outstanding=0 rq_outstanding=16 send_ops="$8" send_bytes=6400 \
		recv_ops="$9" recv_bytes=3200 errors="${10}" enters=7 pid=412 \
		mode="$7" features=0x1fff "${@:11}"
}
chan 10 rxe0 10.0.2.15 18515 10.0.2.16 41000 doorbell 100 50 0 ack_timeout=18 retry_count=6 keepalive_ms=1000 keepalive_probes=3
chan 2 siw0 2001:db8:1::1 18516 2001:db8:1::2 41001 poller 5 6 1 zz_new=hello ack_timeout=0 retry_count=0 keepalive_ms=0 keepalive_probes=0
# An older module's channel: no RC timing attributes, none shown.
chan 11 rxe0 10.0.2.15 18517 10.0.2.16 41002 doorbell 1 2 0
mkdir -p "$fs/channels/2/subdir"	# not an attribute: ignored

expect() { # NAME EXPECTED-STATUS EXPECTED-OUTPUT ARGS...
	local name=$1 want_rc=$2 want=$3 got rc
	shift 3
	got=$("$ctl" "$@" 2>/dev/null)
	rc=$?
	[ "$rc" = "$want_rc" ] || err "$name: exit status $rc, not $want_rc"
	if [ "$got" != "$want" ]; then
		err "$name: output differs (want, then got):"
		diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | sed 's/^/#   /'
	fi
}

expect list 0 \
'chan 2 dev siw0/1 state connected [2001:db8:1::1]:18516 -> [2001:db8:1::2]:41001 pid 412 mode poller rc tcp keepalive off send 5 recv 6 errors 1
chan 10 dev rxe0/1 state connected 10.0.2.15:18515 -> 10.0.2.16:41000 pid 412 mode doorbell rc 18/6 (7.52 s) keepalive 1000 ms send 100 recv 50 errors 0
chan 11 dev rxe0/1 state connected 10.0.2.15:18517 -> 10.0.2.16:41002 pid 412 mode doorbell send 1 recv 2 errors 0' \
	-d "$fs"
expect list-json 0 \
'[{"id":2,"state":"connected","device":"siw0","port":1,"local_addr":"2001:db8:1::1","local_port":18516,"remote_addr":"2001:db8:1::2","remote_port":41001,"pid":412,"mode":"poller","ack_timeout":0,"retry_count":0,"keepalive_ms":0,"send_ops":5,"recv_ops":6,"errors":1},{"id":10,"state":"connected","device":"rxe0","port":1,"local_addr":"10.0.2.15","local_port":18515,"remote_addr":"10.0.2.16","remote_port":41000,"pid":412,"mode":"doorbell","ack_timeout":18,"retry_count":6,"keepalive_ms":1000,"send_ops":100,"recv_ops":50,"errors":0},{"id":11,"state":"connected","device":"rxe0","port":1,"local_addr":"10.0.2.15","local_port":18517,"remote_addr":"10.0.2.16","remote_port":41002,"pid":412,"mode":"doorbell","send_ops":1,"recv_ops":2,"errors":0}]' \
	--json --sysfs "$fs"
expect show 0 \
'chan 2
    state           connected
    device          siw0
    port            1
    local_addr      2001:db8:1::1
    local_port      18516
    remote_addr     2001:db8:1::2
    remote_port     41001
    local_qpn       17
    remote_qpn      18
    pid             412
    mode            poller
    ack_timeout     0
    retry_count     0
    keepalive_ms    0
    keepalive_probes 0
    sq_entries      128
    rq_entries      128
    cq_entries      256
    sq_outstanding  0
    rq_outstanding  16
    send_ops        5
    send_bytes      6400
    recv_ops        6
    recv_bytes      3200
    errors          1
    enters          7
    features        0x1fff
    zz_new          hello' \
	-d "$fs" show 2
expect show-json-pretty 0 \
'[
    {
        "id": 10,
        "state": "connected",
        "device": "rxe0",
        "port": 1,
        "local_addr": "10.0.2.15",
        "local_port": 18515,
        "remote_addr": "10.0.2.16",
        "remote_port": 41000,
        "local_qpn": 17,
        "remote_qpn": 18,
        "pid": 412,
        "mode": "doorbell",
        "ack_timeout": 18,
        "retry_count": 6,
        "keepalive_ms": 1000,
        "keepalive_probes": 3,
        "sq_entries": 128,
        "rq_entries": 128,
        "cq_entries": 256,
        "sq_outstanding": 0,
        "rq_outstanding": 16,
        "send_ops": 100,
        "send_bytes": 6400,
        "recv_ops": 50,
        "recv_bytes": 3200,
        "errors": 0,
        "enters": 7,
        "features": "0x1fff"
    }
]' \
	-j -p -d "$fs" show 10
expect devices 0 \
'rxe0: transport RoCE ports 1 channels 3 max_qp_wr 1048576 max_send_sge 32
siw0: transport iWARP ports 1 channels 1 max_qp_wr 32768 max_send_sge 6' \
	-d "$fs" devices
expect devices-json 0 \
'[{"name":"rxe0","transport":"RoCE","ports":1,"channels":3,"max_qp_wr":1048576,"max_send_sge":32},{"name":"siw0","transport":"iWARP","ports":1,"channels":1,"max_qp_wr":32768,"max_send_sge":6}]' \
	-j -d "$fs" devices
LCHAN_SYSFS=$fs expect env-root 0 "$("$ctl" -d "$fs" devices)" devices
LCHAN_SYSFS=$t/nonexistent expect option-wins 0 "$("$ctl" -d "$fs" devices)" -d "$fs" devices
mkdir -p "$t/empty/channels"
expect empty-list 0 '' -d "$t/empty"
expect empty-json 0 '[]' -j -d "$t/empty"
expect no-channel 1 '' -d "$fs" show 3
expect no-channel-json 1 '' -j -d "$fs" show 3
expect no-module 3 '' -d "$t/nonexistent"
expect bad-id 2 '' -d "$fs" show 2x
expect bad-command 2 '' -d "$fs" frobnicate
expect extra-arg 2 '' -d "$fs" devices extra

check_done "list, show, devices, text and JSON, exit statuses as expected"
