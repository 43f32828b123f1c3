# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Job "2node": one of the two guests of `make check-2node`
# (rig/two-node.sh), joined by two virtual wires: rxe1 on the first,
# siw1 on the second.  lchan.node=a runs the servers, lchan.node=b the
# clients; both print the TAP of their own set-up, and b the TAP of every
# cross-machine test, whose verdict takes in the server's exit status too.
#
# The guests meet in a 9p directory of their own (mount tag "wire"), one
# file per step, each written whole (rename):
#   ready.ID  a: the server of test ID listens ("ok"), or could not ("fail")
#   srv.ID    a: the server's exit status (log.ID: its output)
#   cli.ID    b: the client is done (a then ends a server still waiting)
#   a.exited, b.exited   the host: that guest's qemu has ended
#   req.NAME  b: a request to the host, "NODE MONITOR-COMMAND" (set_link
#             w1 off, quit) or "NODE power_cycle": what only a wire can
#             break
#   a.boot1   a: its first boot's status, before the power cycle (so its
#             second boot knows it is one)
#   done.NAME the host: request NAME was given to NODE's qemu monitor
#   a.verdict a: "pass" before it is powered off (its own part went well)
# Every wait is bounded, and ends early when the peer's qemu is gone.
# shellcheck source=lib.sh
. "$LCHAN_SHARE/guest/lib.sh"

WIRE=/mnt/wire
LOGS=$LCHAN_OUT/logs
T=$LCHAN_TOOLS
BASE_PORT=18600
SRV_LIMIT=180	# a server's whole life
CLI_LIMIT=120	# a client's whole run
PERFTEST_LIMIT=30	# ... perftest's (the yardstick, which hangs now and then on siw)
READY_LIMIT=60	# b waits this long for a server to listen
SRV_WAIT=30	# ... and this long for its exit status after the client
LINGER=15	# a ends a server this long after its client is done
PEER_LIMIT=120	# either waits this long for the other to answer a ping
HOST_LIMIT=20	# b waits this long for the host to carry out a request
ACT_AFTER=4	# a wire test's cut starts this long into its stream
KA_MS=1000	# the keepalive tests' period
# ... and what they allow from asking for the cut to b's error: two
# periods (an idle channel), each look up to 1/8 late (timer slack), and
# 0.5 s for the host to carry out the cut and for emulation.
KA_LIMIT=$(awk -v k="$KA_MS" 'BEGIN { printf "%.2f", 2.25 * k / 1000 + 0.5 }')
# A streaming channel's: the look after its last completion re-arms, the
# next sends a probe, the one after ends it (each up to 1/8 late).
KA_STREAM_LIMIT=$(awk -v k="$KA_MS" 'BEGIN { printf "%.2f", 3.375 * k / 1000 + 0.5 }')

node=$(kernel_arg node "")
# table: only the two-machine table's rows (make bench-2node); cut: only
# the link-cut tests, impair: only the impaired-wire streams, interop:
# only lchan against rping and librdmacm's examples (reproducers)
only=$(kernel_arg 2node_only "")
# The plan this many times over, ids prefixed rN. (rounds after the first).
repeat=$(kernel_arg 2node_repeat 1)
# The two-machine table's rounds: one proves its rows run (make check),
# make bench-2node asks for three to take medians of.
table_rounds=$(kernel_arg 2node_table_rounds 1)
case $node in
a) me=1 peer=b ;;
b) me=2 peer=a ;;
*)
	tap "not ok - 2node: lchan.node=a or lchan.node=b on the kernel command line"
	exit 1
	;;
esac
hostname "lchan-$node"
failed=0

# ---------------------------------------------------------------- the wire

# The plan, one place in the guest: wire W (1: rxe, 2: siw) is the NIC
# with MAC 52:54:00:4c:0W:0N on node N (a=1, b=2; two-node.sh gives the
# MACs), address 10.77.W.N/24 and fd77:W::N/64.
addr() { # DEV(rxe|siw) FAMILY(4|6) NODE(1|2)
	case $1 in rxe) _w=1 ;; *) _w=2 ;; esac
	if [ "$2" = 4 ]; then echo "10.77.$_w.$3"; else echo "fd77:$_w::$3"; fi
}
nic_of_mac() {
	for _n in /sys/class/net/*; do
		[ "$(cat "$_n/address")" = "$1" ] && { echo "${_n##*/}"; return 0; }
	done
	return 1
}

wire_nic() { # DEV: this node's NIC on DEV's wire
	case $1 in rxe) _w=1 ;; *) _w=2 ;; esac
	nic_of_mac "52:54:00:4c:0$_w:0$me"
}

# Impair what this node sends on DEV's wire (tc netem SPEC, commas for
# spaces; empty: nothing), or stop doing so.
netem_set() { # DEV SPEC
	[ -n "$2" ] || return 0
	_nn=$(wire_nic "$1") || return 1
	# shellcheck disable=SC2046 # SPEC is a word list
	/usr/sbin/tc qdisc replace dev "$_nn" root netem $(echo "$2" | tr , ' ')
}
# Lose every RTU this node sends on DEV's wire: RoCEv2 (UDP 4791), IPv4
# without options, so the MAD starts at byte 48 (20 IP, 8 UDP, 12 BTH,
# 8 DETH); its class (CM, 7) is at 49, its attribute (RTU, 0x14) at 64.
# They go to the prio qdisc's third band, where netem loses them all.
rtu_drop_set() { # DEV
	_nn=$(wire_nic "$1") || return 1
	/usr/sbin/tc qdisc replace dev "$_nn" root handle 1: prio &&
		/usr/sbin/tc qdisc add dev "$_nn" parent 1:3 handle 30: netem loss 100% &&
		/usr/sbin/tc filter add dev "$_nn" parent 1: protocol ip prio 1 u32 \
			match ip protocol 17 0xff match ip dport 4791 0xffff \
			match u8 0x07 0xff at 49 match u16 0x0014 0xffff at 64 \
			flowid 1:3
}
netem_clear() { # DEV
	_nn=$(wire_nic "$1") || return 1
	/usr/sbin/tc qdisc del dev "$_nn" root 2>/dev/null
	return 0
}

wire_up() { # DEV W
	_nic=$(nic_of_mac "52:54:00:4c:0$2:0$me") || {
		echo "no NIC with MAC 52:54:00:4c:0$2:0$me" >&2
		return 1
	}
	# A peer's neighbour entry stays valid for the whole run once learnt
	# (as a RoCE NIC holds the MAC in the connected QP), but is still
	# dropped when this link goes down.  rxe resends through the table:
	# a dead peer's entry going stale, then failing, holds each resend
	# up to 3 s for address resolution, and with more than 64 packets
	# held rxe's requester stops, and with it the retransmit timer, which
	# only a sent packet restarts.  The RC bound would then measure the
	# neighbour table (lchan_accept(3); rig/README.md, "Two machines").
	echo 3600000 >"/proc/sys/net/ipv4/neigh/$_nic/base_reachable_time_ms" &&
		echo 3600000 >"/proc/sys/net/ipv6/neigh/$_nic/base_reachable_time_ms" &&
		/usr/sbin/ip addr add "$(addr "$1" 4 "$me")/24" dev "$_nic" &&
		/usr/sbin/ip addr add "$(addr "$1" 6 "$me")/64" dev "$_nic" nodad &&
		/usr/sbin/ip link set "$_nic" up &&
		rdma link add "${1}1" type "$1" netdev "$_nic" &&
		echo "$_nic"
}

mkdir -p "$LOGS" "$WIRE"
modprobe sch_netem || tap "# $node: no sch_netem; the netem tests will fail"
# The wire NICs (two-node.sh says why e1000).
modprobe e1000 || tap "# $node: no e1000; the wires will not come up"
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 wire "$WIRE"; then
	tap "not ok - $node: mount the wire directory (9p tag wire)"
	exit 1
fi
for _d in "rxe 1" "siw 2"; do
	# shellcheck disable=SC2086 # "dev wire"
	set -- $_d
	if _nic=$(wire_up "$1" "$2" 2>"$LOGS/wire-$1.log"); then
		tap "ok - $node: ${1}1 on $_nic ($(addr "$1" 4 "$me"), $(addr "$1" 6 "$me"))"
	else
		tap "not ok - $node: ${1}1 on the wire"
		sed 's/^/# /' "$LOGS/wire-$1.log"
		failed=1
	fi
done
[ "$failed" = 0 ] || exit 1

if ! load_ko "$LCHAN_KO"; then
	tap "not ok - $node: insmod lchan ($LCHAN_KO; did make module run?)"
	exit 1
fi
tap "ok - $node: insmod lchan"

# The peer answers on both wires, IPv4 and IPv6 (it may still be booting).
peer_n=$((3 - me))
for _d in rxe siw; do
	for _f in 4 6; do
		_a=$(addr "$_d" "$_f" "$peer_n")
		_t0=$(date +%s)
		until ping -c 1 -W 1 "$_a" >/dev/null 2>&1; do
			if [ $(($(date +%s) - _t0)) -ge "$PEER_LIMIT" ] || [ -e "$WIRE/$peer.exited" ]; then
				break
			fi
			sleep 0.5
		done
		if ping -c 3 -W 2 "$_a" >"$LOGS/ping-$_d-$_f.log" 2>&1; then
			tap "ok - $node: $peer answers ping on the $_d wire at $_a ($(sed -n 's/.*min\/avg\/max = //p' "$LOGS/ping-$_d-$_f.log"))"
		else
			tap "not ok - $node: $peer answers ping on the $_d wire at $_a"
			failed=1
		fi
	done
done
[ "$failed" = 0 ] || exit 1

# ---------------------------------------------------------------- the plan

# One line per test: ID|DEV|FAMILY|KIND|NAME|SERVER|CLIENT.  KIND is how
# the server listens (rdma: rdma_cm, tcp: perftest's TCP exchange); @A@ is
# the server's address (node a's), @P@ the test's port, @X@ the local GID
# index of the device's IPv4 address (perftest without rdma_cm).  Every one moves data and checks
# it (lchan_perf -V, lchan_msg_perf -V; lchan_pingpong and lchan_echo
# always do).  lat.* are the latency rows, IPv4 only (perftest's -R takes
# no IPv6 address here), ID's last part the tool.
plan() {
	for _d in rxe siw; do
		for _f in 4 6; do
			_p="$_d.ipv$_f"
			echo "$_p.pingpong|$_d|$_f|rdma|connect/accept, lchan_pingpong 100 x 4 KiB|$T/lchan_pingpong -s -a @A@ -p @P@ -n 100 -S 4096|$T/lchan_pingpong -c @A@ -p @P@ -n 100 -S 4096 -q"
			for _t in send_lat write_lat read_lat; do
				echo "$_p.$_t|$_d|$_f|rdma|lchan_perf $_t, 64 B and 4 KiB, verified|$T/lchan_perf -s -a @A@ -p @P@|$T/lchan_perf -c @A@ -p @P@ -t $_t -S 64,4096 -n 200 -V"
			done
			echo "$_p.atomic_lat|$_d|$_f|rdma|lchan_perf atomic_lat (FETCH_ADD), verified|$T/lchan_perf -s -a @A@ -p @P@|$T/lchan_perf -c @A@ -p @P@ -t atomic_lat -n 200 -V"
			for _t in send_bw write_bw read_bw; do
				echo "$_p.$_t|$_d|$_f|rdma|lchan_perf $_t, 4 KiB and 64 KiB, verified|$T/lchan_perf -s -a @A@ -p @P@|$T/lchan_perf -c @A@ -p @P@ -t $_t -S 4096,65536 -n 100 -V"
			done
			echo "$_p.echo|$_d|$_f|rdma|message API: lchan_echo 200 x 4 KiB, compared|$T/lchan_echo -s -a @A@ -p @P@|$T/lchan_echo -c @A@ -p @P@ -n 200 -S 4096"
			echo "$_p.msg_lat|$_d|$_f|rdma|message API: lchan_msg_perf lat, 64 B and 64 KiB, verified|$T/lchan_msg_perf -s -a @A@ -p @P@|$T/lchan_msg_perf -c @A@ -p @P@ -t lat -S 64,65536 -n 100 -V"
			echo "$_p.msg_bw|$_d|$_f|rdma|message API: lchan_msg_perf bw, 4 KiB and 64 KiB, verified|$T/lchan_msg_perf -s -a @A@ -p @P@|$T/lchan_msg_perf -c @A@ -p @P@ -t bw -S 4096,65536 -n 100 -V"
		done
		# perftest over rdma_cm (-R) between the guests on rxe was
		# rejected now and then (no listener, reason 8), and the client
		# then crashed in librdmacm: on rxe it exchanges over TCP and
		# names its RoCEv2 GID.  iWARP has rdma_cm only.
		if [ "$_d" = rxe ]; then
			_pk=tcp _px="-d rxe1 -x @X@"
		else
			_pk=rdma _px="-R -d siw1"
		fi
		# The two-machine table: lchan and perftest alternating,
		# table_rounds rounds (table()).
		_r=0
		while [ "$_r" -lt "$table_rounds" ]; do
			_r=$((_r + 1))
			echo "$_d.ipv4.lat.lchan_perf.$_r|$_d|4|rdma|latency row $_r: lchan_perf send_lat 64 B x 1000|$T/lchan_perf -s -a @A@ -p @P@|$T/lchan_perf -c @A@ -p @P@ -t send_lat -S 64 -n 1000 --json"
			echo "$_d.ipv4.lat.ib_send_lat.$_r|$_d|4|$_pk|latency row $_r: ib_send_lat 64 B x 1000|ib_send_lat $_px -p @P@ -s 64 -n 1000|ib_send_lat $_px -p @P@ -s 64 -n 1000 @A@"
			echo "$_d.ipv4.bw.lchan_perf.$_r|$_d|4|rdma|bandwidth row $_r: lchan_perf write_bw 64 KiB x 500|$T/lchan_perf -s -a @A@ -p @P@|$T/lchan_perf -c @A@ -p @P@ -t write_bw -S 65536 -n 500 --json"
			echo "$_d.ipv4.bw.ib_write_bw.$_r|$_d|4|$_pk|bandwidth row $_r: ib_write_bw 64 KiB x 500|ib_write_bw $_px -p @P@ -s 65536 -n 500|ib_write_bw $_px -p @P@ -s 65536 -n 500 @A@"
		done
		# A byte-checked stream both ways, 5 s, the default rc, on a
		# clean wire and then impaired in both directions (tc netem at
		# both ends, ACTION netem:SPEC, commas for spaces): what loss,
		# duplication and reordering cost (table()).  Set-up within
		# 30 s: rdma_cm resends a lost CM message after 4.3 s
		# (CMA_CM_RESPONSE_TIMEOUT), so at 5% loss both ways a
		# set-up now and then needs more than the default 10 s.
		for _n in clean: loss1:loss,1% loss5:loss,5% dup5:duplicate,5% reorder:delay,2ms,reorder,25%; do
			_ns=${_n#*:}
			echo "$_d.ipv4.netem.${_n%%:*}|$_d|4|rdma|stream 5 s both ways, wire: $(echo "${_ns:-clean}" | tr , ' ')|$T/lchan_wire -t 5 -L 30 -C 30 -s -a @A@ -p @P@|$T/lchan_wire -t 5 -L 30 -C 30 -c @A@ -p @P@|netem:$_ns"
		done
		# Every RTU the client sends is lost: the accepting side must
		# learn from the first data that the connection is up (rxe
		# raises no COMM_EST, lchan_cm_data_arrived()), well within
		# accept's 10 s, not from a resent REP.
		[ "$_d" != rxe ] ||
			echo "$_d.ipv4.rtu_lost|$_d|4|rdma|every RTU lost: the accept completes on the first data, stream byte-exact|$T/lchan_wire -t 2 -C 5 -s -a @A@ -p @P@|$T/lchan_wire -t 2 -C 5 -c @A@ -p @P@|droprtu"
		# lchan against programs not written for it (lchan_interop,
		# which never asks for lchan's opening exchange), each role:
		# rping, READ and WRITE into each other's memory, every byte
		# checked on lchan's side and by rping -V; librdmacm's
		# rdma_server and rdma_client, 16 bytes each way.  A program
		# that serves binds a's address.  Doorbell, and one poller row.
		_i="$T/lchan_interop"
		echo "$_d.ipv4.interop.rping_server|$_d|4|rdma|interop: lchan_interop as rping's client against rping -s, 10 x 65535 B READ and WRITE, checked|rping -s -a @A@ -p @P@ -S 65535 -d|$_i rping -c -a @A@ -p @P@ -C 10 -S 65535"
		echo "$_d.ipv4.interop.rping_client|$_d|4|rdma|interop: lchan_interop as rping's server against rping -c -V, 10 x 65535 B READ and WRITE, checked|$_i rping -s -a @A@ -p @P@ -C 10 -S 65535|rping -c -a @A@ -p @P@ -C 10 -S 65535 -V -d"
		echo "$_d.ipv4.interop.rping_client.poller|$_d|4|rdma|interop: lchan_interop as rping's server in poller mode against rping -c -V, 10 x 4 KiB, checked|$_i rping -s -a @A@ -p @P@ -C 10 -S 4096 -m poller|rping -c -a @A@ -p @P@ -C 10 -S 4096 -V -d"
		echo "$_d.ipv4.interop.rdma_server|$_d|4|rdma|interop: lchan_interop against librdmacm's rdma_server, 16 B each way, checked|rdma_server -s @A@ -p @P@|$_i rdma-cm -c -a @A@ -p @P@"
		echo "$_d.ipv4.interop.rdma_client|$_d|4|rdma|interop: lchan_interop against librdmacm's rdma_client, 16 B each way, checked|$_i rdma-cm -s -a @A@ -p @P@|rdma_client -s @A@ -p @P@"
	done
	# What only a wire can break.  ACTION (b): cut:W:SECS cuts wire W at
	# a's NIC ACT_AFTER s into the stream, for SECS.  A short cut (2 s,
	# under the defaults' 7.5 s bound on rxe; TCP on siw) must leave the
	# stream whole, a long one (8 s against a 1.6 s bound, rc 16/5) must
	# end it cleanly on both sides, on b (whose link stays up) within the
	# bound; a's time is reported, not judged (rxe there noticed in 1.7 to
	# 6.4 s; why is not yet established).  Then a new channel must
	# connect over the same wire.
	_w="$T/lchan_wire -t 12 -L 30"
	echo "rxe.ipv4.cut_short|rxe|4|rdma|link cut 2 s mid-stream: the channel survives, stream byte-exact|$_w -s -a @A@ -p @P@|$_w -c @A@ -p @P@|cut:1:2"
	echo "siw.ipv4.cut_short|siw|4|rdma|link cut 2 s mid-stream: the channel survives, stream byte-exact|$_w -s -a @A@ -p @P@|$_w -c @A@ -p @P@|cut:2:2"
	_w="$T/lchan_wire -t 60 -T 16 -R 5 -L 30"
	echo "rxe.ipv4.cut_long|rxe|4|rdma|link cut 8 s, rc 16/5: both ends fail cleanly, b within the bound|$_w -X -s -a @A@ -p @P@|$_w -x -c @A@ -p @P@|cut:1:8"
	echo "rxe.ipv4.after_cut|rxe|4|rdma|a new channel after the link returned, stream byte-exact|$T/lchan_wire -t 3 -s -a @A@ -p @P@|$T/lchan_wire -t 3 -c @A@ -p @P@"
	# iWARP has no RC bound (TCP resends for minutes): a streaming
	# channel's keepalive ends it (KA_STREAM_LIMIT after its last
	# completion, judged here; lchan_wire -X only reports the time).
	_w="$T/lchan_wire -t 60 -k $KA_MS -X -L 30"
	echo "siw.ipv4.cut_long_ka|siw|4|rdma|link cut 8 s, keepalive $KA_MS ms: both ends fail cleanly, b within $KA_STREAM_LIMIT s of its last completion|$_w -s -a @A@ -p @P@|$_w -c @A@ -p @P@|cut:2:8"
	echo "siw.ipv4.after_cut|siw|4|rdma|a new channel after the link returned, stream byte-exact|$T/lchan_wire -t 3 -s -a @A@ -p @P@|$T/lchan_wire -t 3 -c @A@ -p @P@"
	# An idle channel sends nothing, so only its keepalive can notice
	# that the peer vanished: the link cut 8 s, both ends must fail
	# with the keepalive's CQE, b within KA_LIMIT of asking for the cut.
	_w="$T/lchan_wire -i -x -k $KA_MS -L 30"
	echo "rxe.ipv4.keepalive|rxe|4|rdma|idle channel, keepalive $KA_MS ms, link cut 8 s: both ends fail, b within ${KA_LIMIT} s|$_w -s -a @A@ -p @P@|$_w -c @A@ -p @P@|cut:1:8"
	echo "siw.ipv4.keepalive|siw|4|rdma|idle channel, keepalive $KA_MS ms, link cut 8 s: both ends fail, b within ${KA_LIMIT} s|$_w -s -a @A@ -p @P@|$_w -c @A@ -p @P@|cut:2:8"
	echo "siw.ipv4.after_keepalive|siw|4|rdma|a new channel after the link returned, stream byte-exact|$T/lchan_wire -t 3 -s -a @A@ -p @P@|$T/lchan_wire -t 3 -c @A@ -p @P@"
}

# The plan this run follows: all of it, or the table's rows, the link-cut
# tests, the impaired-wire streams, the interop rows or the lost RTU alone,
# REPEAT times.
plan_run() {
	_round=1
	while [ "$_round" -le "$repeat" ]; do
		case $only in
		table) plan | grep -E '^[a-z]+\.ipv4\.(lat|bw)\.' ;;
		cut) plan | grep -E '^[a-z]+\.ipv4\.(cut_|after_|keepalive)' ;;
		impair) plan | grep -E '^[a-z]+\.ipv4\.netem\.' ;;
		interop) plan | grep -E '^[a-z]+\.ipv4\.interop\.' ;;
		rtu) plan | grep -E '^[a-z]+\.ipv4\.rtu_lost' ;;
		*) plan ;;
		esac | if [ "$_round" = 1 ]; then cat; else sed "s/^/r$_round./"; fi
		_round=$((_round + 1))
	done
}

# GROUP of the plan: "" all of plan_run, serial: what runs alone (the
# table's rows among it), wire:DEV: DEV's link cuts and keepalives.  These
# mostly wait (for a cut to end, for a keepalive or RC bound), and each
# device has a wire of its own: rxe's run beside siw's.
plan_group() { # GROUP
	_wire='\.ipv4\.(cut_|after_|keepalive)'
	case $1 in
	'') plan_run ;;
	serial) plan_run | grep -vE "^(r[0-9]+\.)?[a-z]+$_wire" ;;
	wire:*) plan_run | grep -E "^(r[0-9]+\.)?${1#wire:}$_wire" ;;
	esac
}

# Wait for FILE, at most SECS; early out when the peer's qemu is gone.
# (Helpers share the shell's globals: each keeps to names of its own, and
# the loops below to _seq, which wait_listen does not use.)
wait_file() { # FILE SECS
	_wt0=$(date +%s)
	while [ ! -e "$1" ]; do
		if [ $(($(date +%s) - _wt0)) -ge "$2" ] || [ -e "$WIRE/$peer.exited" ]; then
			[ -e "$1" ]
			return
		fi
		sleep 0.2
	done
}

# Write FILE whole: the peer never reads half of it.
put() { # FILE CONTENT
	echo "$2" >"$1.tmp" && mv "$1.tmp" "$1"
}

# GID index of DEV's RoCEv2 GID for IPV4 (port 1).
gid_index() { # DEV IPV4
	_hex=$(echo "$2" | awk -F. '{ printf "%02x%02x:%02x%02x", $1, $2, $3, $4 }')
	for _g in "/sys/class/infiniband/$1/ports/1/gids/"*; do
		_gi=${_g##*/}
		[ "$(cat "$_g" 2>/dev/null)" = "0000:0000:0000:0000:0000:ffff:$_hex" ] || continue
		[ "$(cat "/sys/class/infiniband/$1/ports/1/gid_attrs/types/$_gi" 2>/dev/null)" = "RoCE v2" ] || continue
		echo "$_gi"
		return 0
	done
	return 1
}

cmd_of() { # TEMPLATE DEV FAMILY PORT: the command, on this node
	_x=
	case $1 in *@X@*) _x=$(gid_index "${2}1" "$(addr "$2" 4 "$me")") ;; esac
	echo "$1" | sed -e "s/@A@/$(addr "$2" "$3" 1)/g" -e "s/@P@/$4/g" -e "s/@X@/$_x/g"
}

# ------------------------------------------------------------ a: servers

# DEV's count of packets its network stack refused (0 where the device
# does not count them).
send_err() { # DEV
	cat "/sys/class/infiniband/${1}1/ports/1/hw_counters/send_err" 2>/dev/null || echo 0
}

# A wire NIC's transmit side, for a stalled stream: is the queue stopped
# (watchdog, tx_timeout, bytes in flight) or do packets sit in the qdisc?
nic_state() { # NODE NIC
	_q=/sys/class/net/$2/queues/tx-0
	echo "rig: $1's $2: $(/usr/sbin/ip -s link show dev "$2" | tr -s ' \n' ' ')"
	echo "rig: $1's $2 tx-0: tx_timeout $(cat "$_q/tx_timeout" 2>/dev/null), bql inflight $(cat "$_q/byte_queue_limits/inflight" 2>/dev/null); qdisc $(/usr/sbin/tc -s qdisc show dev "$2" | tr -s ' \n' ' ')"
	dmesg | grep -E 'NETDEV WATCHDOG|TX timeout' | tail -n 3 | sed "s/^/rig: $1's kernel: /"
}

# Why a program is still there (WHY): where it waits, its channels, the
# device's counters, the neighbour table, TCP's sockets (siw's).
proc_state() { # PID DEV WHY
	echo "rig: $3 at $(cut -d ' ' -f 1 /proc/uptime) (boot clock)"
	for _st in /proc/"$1"/task/*; do
		echo "rig: thread ${_st##*/}: $(sed -n 's/^State:\t//p' "$_st/status"), waits in $(cat "$_st/wchan" 2>/dev/null)"
		sed 's/^/rig:   /' "$_st/stack" 2>/dev/null
	done
	for _sc in /sys/kernel/lchan/channels/*/; do
		[ -d "$_sc" ] || continue
		echo "rig: channel $_sc: $(cd "$_sc" && grep -H . -- * 2>/dev/null | tr '\n' ' ')"
	done
	echo "rig: $(dev_counters "${2}1")"
	echo "rig: neighbours: $(/usr/sbin/ip neigh show | tr '\n' ';')"
	rdma resource show qp 2>/dev/null | sed 's/^/rig: /'
	ss -tanmi 2>/dev/null | sed 's/^/rig: tcp: /'
}

serve() { # GROUP FIRST-PORT
	_seq=0
	plan_group "$1" | while IFS='|' read -r _id _d _f _kind _name _srv _cli _act; do
		_port=$(($2 + _seq))
		_seq=$((_seq + 1))
		_log=$LOGS/$_id.server.log
		echo "rig: selftest 2node $_id" >/dev/kmsg 2>/dev/null
		case $_act in
		netem:*) netem_set "$_d" "${_act#netem:}" >"$_log" 2>&1 ;;
		cut:*) _se0=$(send_err "$_d") ;;
		esac
		# shellcheck disable=SC2046 # the command is a word list
		setsid timeout "$SRV_LIMIT" $(cmd_of "$_srv" "$_d" "$_f" "$_port") >>"$_log" 2>&1 &
		_spid=$!
		if wait_listen "$_kind" "$_port" "$_spid" 2>>"$_log"; then
			put "$WIRE/ready.$_id" ok
		else
			put "$WIRE/ready.$_id" fail
		fi
		# Until the server ends, or its client is done (then LINGER
		# more), or b is gone.
		_done=
		while kill -0 "$_spid" 2>/dev/null; do
			if [ -e "$WIRE/b.exited" ]; then
				break
			elif [ -e "$WIRE/cli.$_id" ]; then
				[ -n "$_done" ] || _done=$(date +%s)
				if [ $(($(date +%s) - _done)) -ge "$LINGER" ]; then
					proc_state "$_spid" "$_d" "the server outlived its client by ${LINGER}s" >>"$_log" 2>&1
					break
				fi
			fi
			sleep 0.2
		done
		kill "$_spid" 2>/dev/null
		wait "$_spid"
		_rc=$?
		case $_act in
		netem:*) netem_clear "$_d" ;;
		cut:*)
			echo "rig: $(dev_counters "${_d}1")" >>"$_log"
			echo "rig: ${_d}1 send_err during this test: $(($(send_err "$_d") - _se0))" >>"$_log"
			;;
		esac
		[ "$_rc" = 0 ] || nic_state a "$(wire_nic "$_d")" >>"$_log" 2>&1
		echo "# exit status $_rc" >>"$_log"
		# For b to quote when the test fails.
		cp "$_log" "$WIRE/log.$_id"
		put "$WIRE/srv.$_id" "$_rc"
		[ ! -e "$WIRE/b.exited" ] || break
	done
}

# ------------------------------------------------------------ b: clients

# The figure a table row's client log gives (table()): latency rows the
# median one-way time in us, bandwidth rows MB/s (10^6 B), stream rows
# lchan_wire's MB/s.
value_of() { # ID LOG
	case $1 in
	*.lat.lchan_perf.*) sed -n 's/.*"t_median_us": \([0-9.]*\).*/\1/p' "$2" | head -n 1 ;;
	*.lat.ib_send_lat.*) awk '$1 == 64 && NF >= 9 && $5 ~ /^[0-9.]+$/ { print $5; exit }' "$2" ;;
	*.bw.lchan_perf.*) sed -n 's/.*"bw_MBps": \([0-9.]*\).*/\1/p' "$2" | head -n 1 ;;
	# perftest's MB is 2^20 bytes.
	*.bw.ib_write_bw.*) awk '$1 == 65536 && NF >= 5 && $4 ~ /^[0-9.]+$/ { printf "%.1f\n", $4 * 1.048576; exit }' "$2" ;;
	*.netem.*) sed -n 's/^throughput \([0-9.]*\) MB\/s.*/\1/p' "$2" | head -n 1 ;;
	esac
}

# The two-machine table's figures (lchan beside perftest) and the
# impaired wire's (tool: the wire's state) go to two-machines.tsv, "dev
# test tool value", one line per run that gave one; the host takes their
# medians and ratios (two-node.sh: report two-machines; make bench-2node:
# rig/report/readme.py).
table() {
	_tsv=$LCHAN_OUT/two-machines.tsv
	printf 'dev\ttest\ttool\tvalue\n' >"$_tsv"
	for _d in rxe siw; do
		_v=/tmp/val.$_d.ipv4
		for _f in "$_v".lat.* "$_v".bw.* "$_v".netem.*; do
			# ID lat.TOOL.ROUND, bw.TOOL.ROUND or netem.WIRE
			_k=${_f#"$_v".}
			case $_k in netem.*) _k=$_k.1 ;; esac
			[ ! -s "$_f" ] || printf '%s1\t%s\t%s\n' "$_d" "$(echo "${_k%.*}" | tr . '\t')" "$(cat "$_f")" >>"$_tsv"
		done
	done
}

# Ask the host for NODE's qemu monitor to run COMMAND, and wait until it
# has.
host_do() { # NAME NODE COMMAND...
	_hn=$1
	shift
	# The boot clock, as lchan_wire -i prints it (busybox date has no %N).
	echo "rig: asking for \"$*\" at $(cut -d ' ' -f 1 /proc/uptime) (boot clock)"
	put "$WIRE/req.$_hn" "$*"
	if ! wait_file "$WIRE/done.$_hn" "$HOST_LIMIT"; then
		echo "rig: the host did not carry out \"$*\" within ${HOST_LIMIT}s"
		return 1
	fi
	echo "rig: host did \"$*\" at $(date +%s.%N | cut -c 1-14)"
}

# A wire test's ACTION (plan): cut:W:SECS.
act() { # ID ACTION
	case $2 in
	cut:*)
		_aw=$(echo "$2" | cut -d: -f2)
		_as=$(echo "$2" | cut -d: -f3)
		host_do "$1.off" a set_link "w$_aw" off || return 1
		sleep "$_as"
		host_do "$1.on" a set_link "w$_aw" on
		;;
	*) echo "rig: unknown action $2"; return 1 ;;
	esac
}

# The stream stalled for at least half the cut, or ended with the peer
# lost: the cut hit it.
cut_seen() { # ACTION LOG
	! grep -q '^peer lost: ' "$2" || return 0
	_cs=$(echo "$1" | cut -d: -f3)
	_gap=$(sed -n 's/.*longest silence \([0-9.]*\) s.*/\1/p' "$2" | head -n 1)
	awk -v g="${_gap:-0}" -v c="$_cs" 'BEGIN { exit !(g >= c / 2) }'
}

# A short cut that ended a's channel with a local error (its first error
# that is not a flush, as lchan_wire reports it; on 6.12 flushes only)
# while a's device counted packets its network stack refused: rxe since
# 6.x fails the QP on any refused packet (rxe_requester(): LOC_QP_OP_ERR,
# which 6.12's completer then reports as a flush), and a link that
# goes down refuses them for a moment (the qdisc is deactivated before
# the neighbour entries are flushed).  The channel cannot survive that on
# such a device, whatever lchan does; lchan's part, a clean error on both
# sides, is what the long cut checks.  Prints the evidence.
device_failed_qp() { # ID
	_dl=$WIRE/log.$1
	_dn=$(sed -n 's/^rig: [a-z]*1 send_err during this test: \([0-9]*\)$/\1/p' "$_dl" 2>/dev/null | head -n 1)
	[ "${_dn:-0}" -gt 0 ] || return 1
	if grep -q '^peer lost: .*; cause local QP operation error$' "$_dl"; then
		echo "a's channel failed with a local QP operation error (its first error not a flush), and its device counted $_dn refused sends (send_err) during the cut ($(uname -r))"
	elif grep -q '^peer lost: .*; cause none seen (flushes only)$' "$_dl"; then
		# 6.12's rxe_completer() flushes a QP in error whole, the
		# request whose send was refused included.
		echo "a's channel failed with flushes only, and its device counted $_dn refused sends (send_err) during the cut: the device put the QP in error and reported the refused request as flushed ($(uname -r))"
	else
		return 1
	fi
}

# lchan_wire's "peer lost" line: seconds from the oldest unanswered send
# to the error (what the bound counts), and from the last completion.
lost_after() { # LOG
	sed -n 's/^peer lost: .* after \([0-9.]*\) s without a completion, \([0-9.-]*\) s after the oldest.*/\2 s (\1 s after the last completion)/p' "$1" 2>/dev/null | head -n 1
}

# lchan_wire's findings, for the TAP line: the stall, the detection.
wire_summary() { # CLIENT-LOG SERVER-LOG
	_wc=$(sed -n 's/.*longest silence \([0-9.]*\) s.*/\1/p' "$1" | head -n 1)
	[ -n "$_wc" ] || return 0
	_wd=$(lost_after "$1")
	_ws=$(lost_after "$2")
	_wb=$(sed -n 's/^rc .*: bound \([0-9.]*\) s, judged against \([0-9.]*\) s$/\1 s (judged against \2 s)/p' "$1" | head -n 1)
	_wt=$(sed -n 's/^throughput \([0-9.]*\) MB\/s.*/\1/p' "$1" | head -n 1)
	printf '; longest silence %s s' "$_wc"
	[ -z "$_wt" ] || printf '; %s MB/s received' "$_wt"
	[ -z "$_wd" ] || printf '; peer loss noticed on b after %s, on a after %s; bound %s' "$_wd" "${_ws:-?}" "${_wb:-?}"
}

# A keepalive test: seconds from asking for the cut to b's first error.
keepalive_after() { # LOG
	_ka=$(sed -n 's/^rig: asking for "a set_link w[12] off" at \([0-9.]*\) (boot clock)$/\1/p' "$1.act" | head -n 1)
	_ke=$(sed -n 's/^first error at \([0-9.]*\) (boot clock)$/\1/p' "$1" | head -n 1)
	[ -n "$_ka" ] && [ -n "$_ke" ] || return 1
	awk -v a="$_ka" -v e="$_ke" 'BEGIN { printf "%.3f", e - a }'
}

# The last lines of a test's client log and of its server's (from a).
# After a failed stream: this guest's counters of the NIC under DEV's
# wire, and what qemu says of both guests' NICs and their queues.
wire_state() { # ID DEV LOG
	_wn=$(wire_nic "$2") || return 0
	{
		nic_state b "$_wn"
		host_do "$1.state" b wire_state >/dev/null &&
			sed 's/^/rig: qemu: /' "$WIRE/state.$1.state"
	} >>"$3" 2>&1
	grep '^rig: \(b.s\|qemu: \(==\|.*idx\|.*inuse\|.*type=\)\)' "$3" | sed 's/^/# /' | tee -a "$TAP" >/dev/null
}

show_logs() { # ID CLIENT-LOG
	{
		tail -n 12 "$2" | sed 's/^/# client: /'
		tail -n 12 "$WIRE/log.$1" 2>/dev/null | sed 's/^/# server: /'
	} | tee -a "$TAP"
}

run_clients() { # GROUP FIRST-PORT
	_seq=0
	plan_group "$1" | while IFS='|' read -r _id _d _f _kind _name _srv _cli _act; do
		_port=$(($2 + _seq))
		_seq=$((_seq + 1))
		_log=$LOGS/$_id.client.log
		_what="$_d IPv$_f: $_name"
		if ! wait_file "$WIRE/ready.$_id" "$READY_LIMIT"; then
			tap "not ok - $_what: the server on a was not started within ${READY_LIMIT}s"
			echo "$_id" >>/tmp/2node-failed
			[ ! -e "$WIRE/a.exited" ] || tap "# a's qemu has ended"
			put "$WIRE/cli.$_id" none
			continue
		fi
		if [ "$(cat "$WIRE/ready.$_id")" != ok ]; then
			tap "not ok - $_what: the server on a did not listen (see a/logs/$_id.server.log)"
			echo "$_id" >>/tmp/2node-failed
			put "$WIRE/cli.$_id" none
			continue
		fi
		echo "rig: selftest 2node $_id" >/dev/kmsg 2>/dev/null
		_t0=$(date +%s)
		_lim=$CLI_LIMIT
		case $_id in *.ib_*) _lim=$PERFTEST_LIMIT ;; esac
		case $_act in
		cut:*)
			# shellcheck disable=SC2046 # the command is a word list
			timeout "$CLI_LIMIT" $(cmd_of "$_cli" "$_d" "$_f" "$_port") >"$_log" 2>&1 &
			_cpid=$!
			sleep "$ACT_AFTER"
			# A file of its own: the client, writing from offset 0
			# when it ends, would overwrite what act appended.
			act "$_id" "$_act" >"$_log.act" 2>&1 || echo "rig: $_act failed" >>"$_log.act"
			wait "$_cpid"
			_crc=$?
			cat "$_log.act" >>"$_log"
			;;
		*)
			_crc=0
			: >"$_log.act"
			case $_act in
			netem:*) netem_set "$_d" "${_act#netem:}" >"$_log.act" 2>&1 || _crc=99 ;;
			droprtu) rtu_drop_set "$_d" >"$_log.act" 2>&1 || _crc=99 ;;
			esac
			if [ "$_crc" = 0 ]; then
				# shellcheck disable=SC2046 # the command is a word list
				timeout "$_lim" $(cmd_of "$_cli" "$_d" "$_f" "$_port") >"$_log" 2>&1 &
				_cpid=$!
				# Where it waits, just before the limit ends it.
				_cend=$(($(date +%s) + _lim - 3))
				while kill -0 "$_cpid" 2>/dev/null; do
					if [ "$(date +%s)" -ge "$_cend" ]; then
						proc_state "$_cpid" "$_d" "the client is about to reach its ${_lim}s limit" >>"$_log.act" 2>&1
						break
					fi
					sleep 0.2
				done
				wait "$_cpid"
				_crc=$?
			fi
			cat "$_log.act" >>"$_log"
			case $_act in
			netem:* | droprtu) netem_clear "$_d" ;;
			esac
			;;
		esac
		_secs=$(($(date +%s) - _t0))
		put "$WIRE/cli.$_id" "$_crc"
		if wait_file "$WIRE/srv.$_id" $((SRV_WAIT + LINGER)); then
			_src=$(cat "$WIRE/srv.$_id")
		else
			_src="none (no word from a)"
		fi
		case $_id in *.lat.* | *.bw.* | *.netem.*) value_of "$_id" "$_log" >"/tmp/val.$_id" ;; esac
		if [ "$_crc" = "$ksft_skip" ] && { [ "$_src" = 0 ] || [ "$_src" = 1 ]; }; then
			# lchan_perf's skip (a test the device cannot run); the
			# server ends as the client leaves.
			tap "ok - $_what # SKIP $(grep -m 1 'skipped' "$_log" | sed 's/^lchan_perf: //')"
		elif [ "$_crc" = 0 ] && [ "$_src" = 0 ] &&
			case $_act in cut:*) ! cut_seen "$_act" "$_log" ;; *) false ;; esac; then
			tap "not ok - $_what: the stream did not stall, so the cut missed it"
			show_logs "$_id" "$_log"
			echo "$_id" >>/tmp/2node-failed
		elif [ "${_id##*.}" = cut_short ] && _dev=$(device_failed_qp "$_id"); then
			tap "ok - $_what # SKIP the device failed a's QP itself: $_dev"
			show_logs "$_id" "$_log"
		elif [ "$_crc" = 0 ] && [ "$_src" = 0 ] &&
			[ "${_id##*.}" = cut_long_ka ]; then
			if _kv=$(lost_verdict "$_log" 0); then
				tap "ok - $_what (${_secs}s); b: $_kv"
			else
				tap "not ok - $_what: b: $_kv"
				show_logs "$_id" "$_log"
				echo "$_id" >>/tmp/2node-failed
			fi
		elif [ "$_crc" = 0 ] && [ "$_src" = 0 ] &&
			[ "${_id##*.}" = keepalive ]; then
			_kt=$(keepalive_after "$_log") || _kt=
			if [ -n "$_kt" ] && awk -v t="$_kt" -v l="$KA_LIMIT" 'BEGIN { exit !(t >= 0 && t <= l) }'; then
				tap "ok - $_what (${_secs}s); b's keepalive noticed ${_kt} s after asking for the cut, limit ${KA_LIMIT} s"
			else
				tap "not ok - $_what: b noticed ${_kt:-?} s after asking for the cut, limit ${KA_LIMIT} s"
				show_logs "$_id" "$_log"
				echo "$_id" >>/tmp/2node-failed
			fi
		elif [ "$_crc" = 0 ] && [ "$_src" = 0 ]; then
			tap "ok - $_what (${_secs}s)$(wire_summary "$_log" "$WIRE/log.$_id")"
		elif case $_id in *.ib_*) true ;; *) false ;; esac; then
			# perftest is the yardstick, not the thing tested: its
			# clock calibration fails now and then under emulation
			# ("Correlation coefficient r^2 ... < 0.9"), and its
			# own words say so.
			_pf=$(grep -h -m 1 -e 'Correlation coefficient' -e "Couldn't" "$_log.act" "$_log" 2>/dev/null | head -n 1)
			tap "ok - $_what # SKIP perftest failed: client exit $_crc, server exit $_src${_pf:+: $_pf}"
			show_logs "$_id" "$_log"
		else
			# busybox timeout ends the program with SIGTERM.
			if [ "$_crc" = 143 ] || [ "$_crc" = 124 ]; then
				_why="client timed out after ${CLI_LIMIT}s"
			else
				_why="client exit $_crc"
			fi
			# Where a server that had to be ended waited, in the
			# line itself (a run's tail repeats failed lines only).
			_stuck=$(sed -n -e 's/^rig: thread [0-9]*: \(.*\)/\1/p' -e 's/^lchan_wire: \(ended by signal .*\)/\1/p' "$WIRE/log.$_id" 2>/dev/null | head -n 3 | paste -sd ';' -)
			_why="$_why, server exit $_src"
			[ -z "$_stuck" ] || _why="$_why; a's server outlived its client by ${LINGER}s: $_stuck"
			tap "not ok - $_what ($_why)"
			show_logs "$_id" "$_log"
			wire_state "$_id" "$_d" "$_log"
			echo "$_id" >>/tmp/2node-failed
		fi
	done
}

# The plan on each side: alone (2node_only) or the serial part, then the
# two devices' link cuts side by side.
WIRE_PORT=$((BASE_PORT + 500))	# rxe's wire tests; siw's from +100
servers() {
	if [ -n "$only" ]; then
		serve "" "$BASE_PORT"
		return
	fi
	serve serial "$BASE_PORT"
	serve wire:rxe "$WIRE_PORT" &
	serve wire:siw $((WIRE_PORT + 100))
	wait
}
clients() {
	: >/tmp/2node-failed
	if [ -n "$only" ]; then
		run_clients "" "$BASE_PORT"
	else
		run_clients serial "$BASE_PORT"
		run_clients wire:rxe "$WIRE_PORT" &
		run_clients wire:siw $((WIRE_PORT + 100))
		wait
	fi
	table
	[ ! -s /tmp/2node-failed ]
}

# ------------------------------------------------------------ streams

# The scenarios below run several lchan_wire streams at once, each a line
# of a stream plan (ld_plan, rb_plan, po_plan): ID|DEV|PORT|OPTIONS|WHAT,
# OPTIONS the client's.
streams_plan() { # PLAN
	case $1 in
	ld) ld_plan ;;
	rb) rb_plan ;;
	rb2) rb2_plan ;;
	po) po_plan ;;
	esac
}

# a: a server for every stream of PLAN (lchan_wire -s OPTIONS...), left
# running, their pids in /tmp/PLAN.pids; fails unless all listen.
streams_listen() { # PLAN OPTIONS...
	_sp=$1
	shift
	_sok=0
	: >"/tmp/$_sp.pids"
	streams_plan "$_sp" >"/tmp/$_sp.plan"
	while IFS='|' read -r _id _d _port _opts _what; do
		_slog=$LOGS/$_id.server.log
		echo "rig: selftest 2node $_id" >/dev/kmsg 2>/dev/null
		setsid "$T/lchan_wire" -s -a "$(addr "$_d" 4 1)" -p "$_port" "$@" >"$_slog" 2>&1 &
		echo "$!" >>"/tmp/$_sp.pids"
		wait_listen rdma "$_port" $! 2>>"$_slog" || _sok=1
	done <"/tmp/$_sp.plan"
	return $_sok
}

# a: wait for PLAN's servers; put their status (0: all streamed whole)
# in srv.PLAN for b.
streams_served() { # PLAN
	_src=0
	while read -r _p; do
		wait "$_p" || _src=1
	done <"/tmp/$1.pids"
	put "$WIRE/srv.$1" "$_src"
}

# b: a client for every stream of PLAN (lchan_wire -c, the plan's
# options and OPTIONS...) in the background, its pid in /tmp/ID.pid.
streams_connect() { # PLAN OPTIONS...
	_sp=$1
	shift
	streams_plan "$_sp" >"/tmp/$_sp.plan"
	while IFS='|' read -r _id _d _port _opts _what; do
		echo "rig: selftest 2node $_id" >/dev/kmsg 2>/dev/null
		# shellcheck disable=SC2086 # options are a word list
		timeout 90 "$T/lchan_wire" -c "$(addr "$_d" 4 1)" -p "$_port" $_opts "$@" \
			>"$LOGS/$_id.client.log" 2>&1 &
		echo "$!" >"/tmp/$_id.pid"
	done <"/tmp/$_sp.plan"
}

# a: until the host says b's qemu has ended.
until_b_exited() {
	while [ ! -e "$WIRE/b.exited" ]; do
		sleep 1
	done
}

# b: PLAN's servers listen on a (ready.PLAN), or say why not.
streams_ready() { # PLAN WHAT SECS
	wait_file "$WIRE/ready.$1" "$3" && [ "$(cat "$WIRE/ready.$1")" = ok ] && return 0
	tap "not ok - $2: a's stream servers did not listen"
	return 1
}

# b: PLAN's servers' status from a (streams_served).
streams_a_ok() { # PLAN
	wait_file "$WIRE/srv.$1" $((SRV_WAIT + LINGER)) && [ "$(cat "$WIRE/srv.$1")" = 0 ]
}

# ------------------------------------------------------------ load

# Sixteen streams at once, eight on each wire, 5 s both ways, byte-exact
# (the load across the wire, at a size two 1-vCPU guests carry).
LD_PORT=$((BASE_PORT + 700))
LD_STREAMS=8
ld_plan() {
	for _d in rxe siw; do
		_i=0
		while [ "$_i" -lt "$LD_STREAMS" ]; do
			echo "ld.$_d.$_i|$_d|$((LD_PORT + _i))|-t 5 -L 30|stream $_i"
			_i=$((_i + 1))
		done
		LD_PORT=$((LD_PORT + 20))
	done
}

load_serve() {
	if streams_listen ld -t 5 -L 30; then put "$WIRE/ready.ld" ok; else put "$WIRE/ready.ld" fail; fi
	streams_served ld
}

load() {
	streams_ready ld "load" "$READY_LIMIT" || return 1
	_t0=$(date +%s)
	streams_connect ld
	_lf=0
	for _d in rxe siw; do
		_n=0 _bad='' _mb=0
		while IFS='|' read -r _id _dd _port _opts _what; do
			[ "$_dd" = "$_d" ] || continue
			wait "$(cat "/tmp/$_id.pid")" || _bad="$_bad $_id"
			_n=$((_n + 1))
			_mb=$(awk -v a="$_mb" -v b="$(sed -n 's/^throughput \([0-9.]*\) MB\/s.*/\1/p' "$LOGS/$_id.client.log")" 'BEGIN { printf "%.2f", a + b }')
		done </tmp/ld.plan
		if [ -z "$_bad" ]; then
			tap "ok - $_d: $_n streams at once, 5 s both ways, byte-exact; $_mb MB/s received by b in all"
		else
			tap "not ok - $_d: $_n streams at once, 5 s both ways: failed:$_bad"
			for _id in $_bad; do
				tail -n 8 "$LOGS/$_id.client.log" | sed "s/^/# $_id: /" | tee -a "$TAP"
			done
			_lf=1
		fi
	done
	if streams_a_ok ld; then
		tap "ok - load: a's $((2 * LD_STREAMS)) servers streamed byte-exact ($(($(date +%s) - _t0)) s in all)"
	else
		tap "not ok - load: a's servers: $(cat "$WIRE/srv.ld" 2>/dev/null || echo 'no word')"
		_lf=1
	fi
	return $_lf
}

# ------------------------------------------------------------ lost peers

# Seconds from b's last completion to its first error (lchan_wire).
silent_before_error() { # LOG
	sed -n 's/^peer lost: .* after \([0-9.]*\) s without a completion.*/\1/p' "$1" | head -n 1
}


# b's verdict on a stream that must have lost its peer: the client's
# exit status (lchan_wire -x judges the RC bound), and for a keepalive
# stream (-k) the keepalive's own limit; a watched one (-o) is only
# reported.  Prints the finding.
lost_verdict() { # LOG CLIENT-EXIT OPTIONS
	[ "$2" = 0 ] || { echo "exit $2"; return 1; }
	case " $3 " in
	*" -o "*)
		echo "$(grep -m 1 -E '^(peer lost|nothing for)' "$1"); closed in $(sed -n 's/^closed in \([0-9.]*\) s/\1 s/p' "$1")"
		return 0 ;;
	esac
	_det=$(lost_after "$1")
	_bnd=$(sed -n 's/^rc .*: bound \([0-9.]*\) s, judged against \([0-9.]*\) s$/\1 s (judged against \2 s)/p' "$1")
	_set=$(sed -n 's/.*returned ENOTCONN \([0-9.]*\) s after the error.*/\1 s/p' "$1")
	_cls=$(sed -n 's/^closed in \([0-9.]*\) s/\1 s/p' "$1")
	if grep -q '^keepalive [0-9]* ms' "$1"; then
		_sb=$(silent_before_error "$1")
		echo "error ${_sb:-?} s after the last completion, limit $KA_STREAM_LIMIT s ($(sed -n 's/^keepalive //p' "$1")); a wait without timeout returned ENOTCONN ${_set:-?} later; closed in ${_cls:-?}"
		[ -n "$_sb" ] && awk -v t="$_sb" -v l="$KA_STREAM_LIMIT" 'BEGIN { exit !(t <= l) }'
		return
	fi
	echo "error after ${_det:-?}, bound ${_bnd:-?}; a wait without timeout returned ENOTCONN ${_set:-?} later; closed in ${_cls:-?}"
}

# b: wait for PLAN's clients, whose peer went away (EVENT), and judge
# each (lost_verdict).
streams_lost() { # PLAN EVENT
	_slf=0
	while IFS='|' read -r _id _d _port _opts _what; do
		wait "$(cat "/tmp/$_id.pid")"
		_crc=$?
		if _v=$(lost_verdict "$LOGS/$_id.client.log" "$_crc" "$_opts"); then
			tap "ok - $_d: $2 mid-stream, $_what: $_v"
		else
			tap "not ok - $_d: $2 mid-stream, $_what: $_v"
			sed 's/^/# /' "$LOGS/$_id.client.log" | tee -a "$TAP"
			_slf=1
		fi
	done <"/tmp/$1.plan"
	return $_slf
}

# ------------------------------------------------------------ reboot

# a streams to b on two channels (rxe with rc 16/5, siw with a 1 s
# keepalive) and the host power-cycles a's machine mid-stream (qemu
# quit, no FIN, no disconnect, and a fresh qemu booted in its place).
# b's old channels must fail within their limits.  a boots again and a new process listens on the
# same ports: new channels must connect and stream byte-exact, and b
# hold nothing of the old ones.  a knows its second boot by
# $WIRE/a.boot1 (its first's status).
RB_PORT=$((BASE_PORT + 800))
REBOOT_LIMIT=180	# b waits this long for a to be back and listening
rb_plan() {
	echo "rb.rxe|rxe|$RB_PORT|-T 16 -R 5 -x -L 30|rc 16/5"
	echo "rb.siw|siw|$((RB_PORT + 1))|-X -k $KA_MS -L 30|keepalive $KA_MS ms"
}

# The new channels after a's second boot: same ports, plain streams.
rb2_plan() {
	echo "rb.rxe.new|rxe|$RB_PORT||"
	echo "rb.siw.new|siw|$((RB_PORT + 1))||"
}

# a, first boot: stream servers until the power cycle (or b is gone).
reboot_serve() {
	if streams_listen rb -t 600 -L 600; then _ok=ok; else _ok=fail; fi
	put "$WIRE/a.boot1" "$failed"
	put "$WIRE/ready.rb" "$_ok"
	until_b_exited
}

# a, second boot: new servers on the same ports, one short stream each.
rebooted_serve() {
	if streams_listen rb2 -t 3; then put "$WIRE/ready.rb2" ok; else put "$WIRE/ready.rb2" fail; fi
	streams_served rb2
}

# b: the old channels across the power cycle, then new ones.
reboot() {
	streams_ready rb "reboot" "$READY_LIMIT" || return 1
	streams_connect rb -t 600
	sleep "$ACT_AFTER"
	host_do rb a power_cycle >>"$LOGS/rb.host.log" 2>&1
	_t0=$(date +%s)
	_rf=0
	streams_lost rb "peer machine power-cycled" || _rf=1
	sed 's/^/# /' "$LOGS/rb.host.log" | tee -a "$TAP"
	_left=$(find /sys/kernel/lchan/channels -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	if [ "$_left" = 0 ]; then
		tap "ok - reboot: the old channels closed, none left in sysfs"
	else
		tap "not ok - reboot: $_left channels left in sysfs after closing the old ones"
		_rf=1
	fi
	streams_ready rb2 "reboot: a back up within ${REBOOT_LIMIT}s" "$REBOOT_LIMIT" || return 1
	tap "# reboot: a listened again $(($(date +%s) - _t0)) s after the power cycle was done"
	streams_connect rb2 -t 3
	while IFS='|' read -r _id _d _port _opts _what; do
		_log=$LOGS/$_id.client.log
		if wait "$(cat "/tmp/$_id.pid")"; then
			tap "ok - $_d: a new channel to the rebooted peer's new listener on the same port, stream byte-exact$(wire_summary "$_log" /dev/null)"
		else
			tap "not ok - $_d: a new channel to the rebooted peer's new listener on the same port"
			sed 's/^/# /' "$_log" | tee -a "$TAP"
			_rf=1
		fi
	done </tmp/rb2.plan
	if streams_a_ok rb2; then
		tap "ok - reboot: a's new servers streamed byte-exact"
	else
		tap "not ok - reboot: a's new servers: $(cat "$WIRE/srv.rb2" 2>/dev/null || echo 'no word')"
		_rf=1
	fi
	return $_rf
}

# ------------------------------------------------------------ power-off

# Last, as a does not come back: a streams to b on four channels (rxe
# with rc 16/5, rxe with the defaults, siw with a keepalive, siw with
# none), and the host quits a's qemu mid-stream (no FIN, no disconnect).
# b's channels must fail within their limits, its waiters return, and
# nothing be left behind (sysfs, rdma resource).  siw without a
# keepalive learns only from TCP's retransmission timeout (minutes): b
# watches it 20 s, reports, and closes.
PO_PORT=$((BASE_PORT + 900))
DDC=/sys/kernel/debug/dynamic_debug/control
po_plan() {
	echo "po.rxe.rc|rxe|$PO_PORT|-T 16 -R 5 -x -L 30|rc 16/5"
	echo "po.rxe.default|rxe|$((PO_PORT + 1))|-x -L 30|the default rc"
	echo "po.siw.keepalive|siw|$((PO_PORT + 2))|-X -k $KA_MS -L 30|keepalive $KA_MS ms"
	echo "po.siw|siw|$((PO_PORT + 3))|-o -L 20|TCP (watched 20 s)"
}

poweroff_serve() {
	if streams_listen po -t 600 -L 600; then _ok=ok; else _ok=fail; fi
	if [ "$failed" = 0 ]; then put "$WIRE/a.verdict" pass; else put "$WIRE/a.verdict" fail; fi
	put "$WIRE/ready.po" "$_ok"
	# Until the host pulls the plug (or b is gone without asking).
	until_b_exited
}

# "rdma resource show" of this node's two devices: what channels hold.
po_resources() {
	rdma resource show 2>/dev/null | grep -E ' (rxe1|siw1):' | sort
}

poweroff() {
	streams_ready po "power-off" "$READY_LIMIT" || return 1
	_base=$(po_resources)
	# When rxe's retransmit timer fires (dynamic debug, into the kernel
	# log): what a late detection is made of.
	echo 'func retransmit_timer +p' >"$DDC" 2>/dev/null
	# ... and the state of b's neighbour entries for a (rxe's resends go
	# out through them) every 0.2 s, on the boot clock.
	while :; do
		echo "$(cut -d ' ' -f 1 /proc/uptime) $(/usr/sbin/ip neigh show | awk '$1 ~ /^10\.77\.[12]\.1$/ { printf "%s %s ", $1, $NF }')"
		sleep 0.2
	done >"$LOGS/po.neigh.log" 2>&1 &
	_nsp=$!
	streams_connect po -t 600
	sleep "$ACT_AFTER"
	host_do po a quit >>"$LOGS/po.host.log" 2>&1
	_pf=0
	streams_lost po "peer powered off" || _pf=1
	kill "$_nsp" 2>/dev/null
	sed 's/^/# /' "$LOGS/po.host.log" | tee -a "$TAP"
	tap "# b's neighbour entries for a, as they changed (boot clock): $(awk '{ $1 = $1; t = $1; $1 = ""; if ($0 != last) printf "%s%s;", t, $0; last = $0 }' "$LOGS/po.neigh.log")"
	tap "# rxe1 counters on b: $(cd /sys/class/infiniband/rxe1/ports/1/hw_counters 2>/dev/null && grep -H . retry_exceeded_err completer_retry_err send_err rcvd_seq_err 2>/dev/null | tr '\n' ' ')"
	echo 'func retransmit_timer -p' >"$DDC" 2>/dev/null
	dmesg | grep 'retransmit' >"$LOGS/po.timers.log"
	tap "# rxe retransmit timer on b fired at (kernel log clock): $(sed -n 's/^\[ *\([0-9.]*\)\].*qp#\([0-9]*\).*/\1 (qp#\2)/p' "$LOGS/po.timers.log" | tr '\n' ' ')"
	grep -H '^first error at' "$LOGS"/po.rxe.*.client.log | sed "s|^$LOGS/|# |" | tee -a "$TAP"
	_left=$(find /sys/kernel/lchan/channels -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	_now=$(po_resources)
	if [ "$_left" = 0 ] && [ "$_now" = "$_base" ]; then
		tap "ok - power-off: nothing left behind (no channel in sysfs; rdma resource as before)"
	else
		tap "not ok - power-off: left behind: $_left channels in sysfs; rdma resource before/after:"
		{ echo "$_base"; echo "--"; echo "$_now"; } | sed 's/^/# /' | tee -a "$TAP"
		_pf=1
	fi
	return $_pf
}

if [ -n "$only" ]; then
	if [ "$node" = a ]; then servers; else clients || failed=1; fi
	exit "$failed"
fi
if [ "$node" = a ]; then
	if [ -e "$WIRE/a.boot1" ]; then
		failed=$(cat "$WIRE/a.boot1")
		tap "# a: booted again after the power cycle"
		rebooted_serve
	else
		servers
		load_serve
		reboot_serve
		# b gone before asking for the power cycle: nothing more to serve.
		[ ! -e "$WIRE/b.exited" ] || exit "$failed"
	fi
	poweroff_serve
	exit "$failed"
fi
clients || failed=1
load || failed=1
reboot || failed=1
poweroff || failed=1
exit "$failed"
