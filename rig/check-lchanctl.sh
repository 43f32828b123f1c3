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
# A stream a program under lchan-run accepted.
chan 12 rxe0 10.0.2.15 6379 10.0.2.16 41003 doorbell 7 8 0 comm=redis-server kind=stream
mkdir -p "$fs/channels/2/subdir" "$t/empty/channels"	# subdir: not an attribute

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

# Each case of check-lchanctl.expected: a line "== NAME STATUS ARGS..."
# (@FS@ the made-up tree, @T@ the work directory), then the output.
name=
while IFS= read -r line; do
	if [[ $line != '== '* ]]; then
		want+=$'\n'$line
		continue
	fi
	[ -z "$name" ] || expect "$name" "$want_rc" "${want#$'\n'}" "${args[@]}"
	line=${line//@FS@/$fs}
	read -r _ name want_rc line <<<"${line//@T@/$t}"
	read -ra args <<<"$line"
	want=
done <"$RIG_DIR/check-lchanctl.expected"
expect "$name" "$want_rc" "${want#$'\n'}" "${args[@]}"
LCHAN_SYSFS=$fs expect env-root 0 "$("$ctl" -d "$fs" devices)" devices
LCHAN_SYSFS=$t/nonexistent expect option-wins 0 "$("$ctl" -d "$fs" devices)" -d "$fs" devices
check_done "list, show, devices, text and JSON, exit statuses as expected"
