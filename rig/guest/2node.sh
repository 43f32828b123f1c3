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
#             w1 off, quit: what only a wire can break)
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

node=
read -r _cmdline </proc/cmdline
for _arg in $_cmdline; do
	case $_arg in lchan.node=*) node=${_arg#*=} ;; esac
done
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

wire_up() { # DEV W
	_nic=$(nic_of_mac "52:54:00:4c:0$2:0$me") || {
		echo "no NIC with MAC 52:54:00:4c:0$2:0$me" >&2
		return 1
	}
	/usr/sbin/ip addr add "$(addr "$1" 4 "$me")/24" dev "$_nic" &&
		/usr/sbin/ip addr add "$(addr "$1" 6 "$me")/64" dev "$_nic" nodad &&
		/usr/sbin/ip link set "$_nic" up &&
		rdma link add "${1}1" type "$1" netdev "$_nic" &&
		echo "$_nic"
}

mkdir -p "$LOGS" "$WIRE"
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
		echo "$_d.ipv4.lat.lchan_perf|$_d|4|rdma|latency row: lchan_perf send_lat 64 B x 1000|$T/lchan_perf -s -a @A@ -p @P@|$T/lchan_perf -c @A@ -p @P@ -t send_lat -S 64 -n 1000 --json"
		# perftest over rdma_cm (-R) between the guests on rxe was
		# rejected now and then (no listener, reason 8), and the client
		# then crashed in librdmacm: on rxe it exchanges over TCP and
		# names its RoCEv2 GID.  iWARP has rdma_cm only.
		if [ "$_d" = rxe ]; then
			_pk=tcp _px="-d rxe1 -x @X@"
		else
			_pk=rdma _px="-R -d siw1"
		fi
		echo "$_d.ipv4.lat.ib_send_lat|$_d|4|$_pk|latency row: ib_send_lat 64 B x 1000|ib_send_lat $_px -p @P@ -s 64 -n 1000|ib_send_lat $_px -p @P@ -s 64 -n 1000 @A@"
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
	# An idle channel sends nothing, so only its keepalive can notice
	# that the peer vanished: the link cut 8 s, both ends must fail
	# with the keepalive's CQE, b within KA_LIMIT of asking for the cut.
	_w="$T/lchan_wire -i -x -k $KA_MS -L 30"
	echo "rxe.ipv4.keepalive|rxe|4|rdma|idle channel, keepalive $KA_MS ms, link cut 8 s: both ends fail, b within ${KA_LIMIT} s|$_w -s -a @A@ -p @P@|$_w -c @A@ -p @P@|cut:1:8"
	echo "siw.ipv4.keepalive|siw|4|rdma|idle channel, keepalive $KA_MS ms, link cut 8 s: both ends fail, b within ${KA_LIMIT} s|$_w -s -a @A@ -p @P@|$_w -c @A@ -p @P@|cut:2:8"
	echo "siw.ipv4.after_keepalive|siw|4|rdma|a new channel after the link returned, stream byte-exact|$T/lchan_wire -t 3 -s -a @A@ -p @P@|$T/lchan_wire -t 3 -c @A@ -p @P@"
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

serve() {
	_seq=0
	plan | while IFS='|' read -r _id _d _f _kind _name _srv _cli _act; do
		_port=$((BASE_PORT + _seq))
		_seq=$((_seq + 1))
		_log=$LOGS/$_id.server.log
		echo "rig: selftest 2node $_id" >/dev/kmsg 2>/dev/null
		# shellcheck disable=SC2046 # the command is a word list
		setsid timeout "$SRV_LIMIT" $(cmd_of "$_srv" "$_d" "$_f" "$_port") >"$_log" 2>&1 &
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
				[ $(($(date +%s) - _done)) -lt "$LINGER" ] || break
			fi
			sleep 0.2
		done
		kill "$_spid" 2>/dev/null
		wait "$_spid"
		_rc=$?
		echo "# exit status $_rc" >>"$_log"
		# For b to quote when the test fails.
		cp "$_log" "$WIRE/log.$_id"
		put "$WIRE/srv.$_id" "$_rc"
		[ ! -e "$WIRE/b.exited" ] || break
	done
}

# ------------------------------------------------------------ b: clients

# Median latency of a latency row's client log.
lat_of() { # ID LOG
	case $1 in
	*.lchan_perf) sed -n 's/.*"t_median_us": \([0-9.]*\).*/\1/p' "$2" | head -n 1 ;;
	*.ib_send_lat) awk '$1 == 64 && NF >= 9 && $5 ~ /^[0-9.]+$/ { print $5; exit }' "$2" ;;
	esac
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
	_wb=$(sed -n 's/^rc .*: bound \([0-9.]*\) s/\1/p' "$1" | head -n 1)
	printf '; longest silence %s s' "$_wc"
	[ -z "$_wd" ] || printf '; peer loss noticed on b after %s, on a after %s; bound %s s' "$_wd" "${_ws:-?}" "${_wb:-?}"
}

# A keepalive test: seconds from asking for the cut to b's first error.
keepalive_after() { # LOG
	_ka=$(sed -n 's/^rig: asking for "a set_link w[12] off" at \([0-9.]*\) (boot clock)$/\1/p' "$1.act" | head -n 1)
	_ke=$(sed -n 's/^first error at \([0-9.]*\) (boot clock)$/\1/p' "$1" | head -n 1)
	[ -n "$_ka" ] && [ -n "$_ke" ] || return 1
	awk -v a="$_ka" -v e="$_ke" 'BEGIN { printf "%.3f", e - a }'
}

# The last lines of a test's client log and of its server's (from a).
show_logs() { # ID CLIENT-LOG
	{
		tail -n 12 "$2" | sed 's/^/# client: /'
		tail -n 12 "$WIRE/log.$1" 2>/dev/null | sed 's/^/# server: /'
	} | tee -a "$TAP"
}

run_clients() {
	_seq=0
	: >/tmp/2node-failed
	plan | while IFS='|' read -r _id _d _f _kind _name _srv _cli _act; do
		_port=$((BASE_PORT + _seq))
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
		if [ -n "$_act" ]; then
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
		else
			# shellcheck disable=SC2046 # the command is a word list
			timeout "$CLI_LIMIT" $(cmd_of "$_cli" "$_d" "$_f" "$_port") >"$_log" 2>&1
			_crc=$?
		fi
		_secs=$(($(date +%s) - _t0))
		put "$WIRE/cli.$_id" "$_crc"
		if wait_file "$WIRE/srv.$_id" $((SRV_WAIT + LINGER)); then
			_src=$(cat "$WIRE/srv.$_id")
		else
			_src="none (no word from a)"
		fi
		case $_id in *.lat.*) lat_of "$_id" "$_log" >"/tmp/lat.$_id" ;; esac
		if [ "$_crc" = 4 ] && { [ "$_src" = 0 ] || [ "$_src" = 1 ]; }; then
			# lchan_perf's skip (a test the device cannot run); the
			# server ends as the client leaves.
			tap "ok - $_what # SKIP $(grep -m 1 'skipped' "$_log" | sed 's/^lchan_perf: //')"
		elif [ "$_crc" = 0 ] && [ "$_src" = 0 ] && [ -n "$_act" ] &&
			! cut_seen "$_act" "$_log"; then
			tap "not ok - $_what: the stream did not stall, so the cut missed it"
			show_logs "$_id" "$_log"
			echo "$_id" >>/tmp/2node-failed
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
		elif [ "${_id##*.}" = ib_send_lat ]; then
			# perftest is the yardstick, not the thing tested (its
			# clock calibration fails now and then under emulation).
			tap "ok - $_what # SKIP perftest failed: client exit $_crc, server exit $_src"
			show_logs "$_id" "$_log"
		else
			# busybox timeout ends the program with SIGTERM.
			if [ "$_crc" = 143 ] || [ "$_crc" = 124 ]; then
				_why="client timed out after ${CLI_LIMIT}s"
			else
				_why="client exit $_crc"
			fi
			tap "not ok - $_what ($_why, server exit $_src)"
			show_logs "$_id" "$_log"
			echo "$_id" >>/tmp/2node-failed
		fi
	done
	# The latency rows side by side: a ratio, not a bound.
	for _d in rxe siw; do
		_l=$(cat "/tmp/lat.$_d.ipv4.lat.lchan_perf" 2>/dev/null)
		_p=$(cat "/tmp/lat.$_d.ipv4.lat.ib_send_lat" 2>/dev/null)
		_r=$(awk -v l="$_l" -v p="$_p" 'BEGIN { if (l > 0 && p > 0) printf "%.2f", l / p; else print "?" }')
		tap "# latency $_d IPv4 a<->b, 64 B SEND, median one way: lchan_perf ${_l:-?} us, ib_send_lat ${_p:-?} us, lchan/perftest $_r"
	done
	[ ! -s /tmp/2node-failed ]
}

# ------------------------------------------------------------ power-off

# Last, as a does not come back: a streams to b on three channels (rxe
# with rc 16/5, rxe with the defaults, siw), and the host quits a's qemu
# mid-stream (no FIN, no disconnect).  b's rxe channels must fail within
# their bounds, its waiters return, and nothing be left behind (sysfs,
# rdma resource).  siw learns only from TCP's retransmission timeout
# (minutes): b watches 20 s, reports, and closes.
PO_PORT=$((BASE_PORT + 900))
po_plan() {
	echo "po.rxe.rc|rxe|$PO_PORT|-T 16 -R 5 -x -L 30|rc 16/5"
	echo "po.rxe.default|rxe|$((PO_PORT + 1))|-x -L 30|the default rc"
	echo "po.siw|siw|$((PO_PORT + 2))|-o -L 20|TCP (watched 20 s)"
}

poweroff_serve() {
	_ok=ok
	po_plan >/tmp/po.plan
	while IFS='|' read -r _id _d _port _opts _what; do
		echo "rig: selftest 2node $_id" >/dev/kmsg 2>/dev/null
		setsid "$T/lchan_wire" -s -a "$(addr "$_d" 4 1)" -p "$_port" -t 600 -L 600 \
			>"$LOGS/$_id.server.log" 2>&1 &
		wait_listen rdma "$_port" $! 2>>"$LOGS/$_id.server.log" || _ok=fail
	done </tmp/po.plan
	put "$WIRE/a.verdict" pass
	put "$WIRE/ready.po" "$_ok"
	# Until the host pulls the plug (or b is gone without asking).
	while [ ! -e "$WIRE/b.exited" ]; do
		sleep 1
	done
}

# "rdma resource show" of this node's two devices: what channels hold.
po_resources() {
	rdma resource show 2>/dev/null | grep -E ' (rxe1|siw1):' | sort
}

poweroff() {
	if ! wait_file "$WIRE/ready.po" "$READY_LIMIT" || [ "$(cat "$WIRE/ready.po")" != ok ]; then
		tap "not ok - power-off: a's stream servers did not listen"
		return 1
	fi
	_base=$(po_resources)
	po_plan >/tmp/po.plan
	_pids=
	while IFS='|' read -r _id _d _port _opts _what; do
		echo "rig: selftest 2node $_id" >/dev/kmsg 2>/dev/null
		# shellcheck disable=SC2086 # options are a word list
		timeout 90 "$T/lchan_wire" -c "$(addr "$_d" 4 1)" -p "$_port" -t 600 $_opts \
			>"$LOGS/$_id.client.log" 2>&1 &
		_pids="$_pids $!"
		echo "$!" >"/tmp/$_id.pid"
	done </tmp/po.plan
	sleep "$ACT_AFTER"
	host_do po a quit >>"$LOGS/po.host.log" 2>&1
	_pf=0
	while IFS='|' read -r _id _d _port _opts _what; do
		wait "$(cat "/tmp/$_id.pid")"
		_crc=$?
		_log=$LOGS/$_id.client.log
		_det=$(lost_after "$_log")
		_bnd=$(sed -n 's/^rc .*: bound \([0-9.]*\) s/\1 s/p' "$_log")
		_cls=$(sed -n 's/^closed in \([0-9.]*\) s/\1 s/p' "$_log")
		_set=$(sed -n 's/.*returned ENOTCONN \([0-9.]*\) s after the error/\1 s/p' "$_log")
		if [ "$_crc" = 0 ] && [ "$_d" = siw ]; then
			tap "ok - $_d: peer powered off mid-stream, $_what: $(grep -m 1 -E '^(peer lost|nothing for)' "$_log"); closed in ${_cls:-?}"
		elif [ "$_crc" = 0 ]; then
			tap "ok - $_d: peer powered off mid-stream, $_what: error after ${_det:-?}, bound ${_bnd:-?}; a wait without timeout returned ENOTCONN ${_set:-?} later; closed in ${_cls:-?}"
		else
			tap "not ok - $_d: peer powered off mid-stream, $_what (exit $_crc)"
			sed 's/^/# /' "$_log" | tee -a "$TAP"
			_pf=1
		fi
	done </tmp/po.plan
	sed 's/^/# /' "$LOGS/po.host.log" | tee -a "$TAP"
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

if [ "$node" = a ]; then
	serve
	poweroff_serve
	exit $failed
fi
run_clients || failed=1
poweroff || failed=1
exit $failed
