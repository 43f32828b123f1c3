# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Job "pollbench": the 64-byte SEND latency rows that judge poller mode,
# in one guest run, as medians of ROUNDS alternating rounds: each round
# runs ib_send_lat, lchan_perf in doorbell mode and in poller mode, with
# busy polling and with events, and with direct polling (busy; rxe0 only:
# iWARP has none), one after the other, on rxe0 and siw0.
# Each round also runs the 64-byte message rows: lchan_msg_perf in
# doorbell and direct mode (busy polling) beside rsockets (rstream).
# Prints one TAP comment per measurement and writes out/pollbench/rows.tsv
# (dev round row median_us) and msg.tsv (dev round row mean_us: rstream
# reports only a mean) and logs/; the host keeps them as
# bench/<kernel>/poller.tsv and poller-msg.tsv and takes the medians over
# the rounds and their ratios (make bench-poller: rig/report/readme.py).
#
# Kernel command line: lchan.pollbench_rounds=N (default 3),
# lchan.pollbench_iters=N (default 1000).
# shellcheck source=lib.sh
. "$LCHAN_SHARE/guest/lib.sh"

OUT=$LCHAN_OUT/pollbench
LOGS=$OUT/logs
mkdir -p "$LOGS"
PERF=$LCHAN_TOOLS/lchan_perf
PORT=18515
ROUNDS=$(kernel_arg pollbench_rounds 3)
ITERS=$(kernel_arg pollbench_iters 1000)
ROWS="ib_send_lat.busy send_lat.doorbell.busy send_lat.poller.busy send_lat.direct.busy ib_send_lat.event send_lat.doorbell.event send_lat.poller.event rs_lat.busy msg_lat.doorbell.busy msg_lat.direct.busy"
MSG_PERF=$LCHAN_TOOLS/lchan_msg_perf

if ! load_ko "$LCHAN_KO"; then
	tap "not ok - pollbench: insmod lchan"
	exit 1
fi
printf 'dev\tround\trow\tmedian_us\n' >"$OUT/rows.tsv"
printf 'dev\tround\trow\tmean_us\n' >"$OUT/msg.tsv"
failed=0

# One measurement: server in the background, client in the foreground;
# prints the median in microseconds or nothing.
measure() { # LOG SERVER-CMD -- CLIENT-CMD...
	_log=$1 _srv=$2
	shift 3
	# shellcheck disable=SC2086 # a word list
	timeout 120 $_srv >"$_log.server" 2>&1 &
	_spid=$!
	if ! wait_listen rdma "$PORT" "$_spid" 2>>"$_log.server"; then
		kill "$_spid" 2>/dev/null
		wait "$_spid"
		return 0
	fi
	timeout 120 "$@" >"$_log" 2>&1
	_rc=$?
	[ "$_rc" = 0 ] || kill "$_spid" 2>/dev/null
	wait "$_spid"
	[ "$_rc" = 0 ] || return 0
	case $1 in
	ib_send_lat)
		# perftest's typical latency (its median), as make bench reads it.
		awk '$1 == 64 && NF >= 9 && $2 ~ /^[0-9]+$/ { print $5; exit }' "$_log" ;;
	rstream)
		# "custom SIZE XFERS ITERS TOTAL TIME Gb/sec usec/xfer": the mean.
		awk '$1 == "custom" && NF >= 8 { print $8; exit }' "$_log" ;;
	"$MSG_PERF")
		sed -n 's/.*"t_avg_us": \([^,}]*\).*/\1/p' "$_log" | head -n 1 ;;
	*)
		sed -n 's/.*"t_median_us": \([^,}]*\).*/\1/p' "$_log" | head -n 1 ;;
	esac
}

row() { # DEV ADDR ROUND ROW
	_d=$1 _a=$2 _r=$3 _row=$4
	_l=$LOGS/$_d.$_row.$_r.log
	_tsv=rows.tsv
	case $_row in
	rs_lat.busy)
		_tsv=msg.tsv
		_x="-p $PORT -S 64 -C 1 -I $ITERS"
		# shellcheck disable=SC2086
		_v=$(measure "$_l" "rstream -b $_a $_x" -- rstream -s "$_a" $_x) ;;
	msg_lat.*)
		_tsv=msg.tsv
		_m=${_row#msg_lat.}
		_m=${_m%.busy}
		_v=$(measure "$_l" "$MSG_PERF -s -a $_a -p $PORT --mode $_m" -- \
			"$MSG_PERF" -c "$_a" -p "$PORT" -t lat -S 64 -n "$ITERS" \
			--mode "$_m" --json) ;;
	ib_send_lat.*)
		_x="-R -p $PORT -s 64 -n $ITERS"
		[ "$_row" = ib_send_lat.event ] && _x="$_x -e"
		# shellcheck disable=SC2086
		_v=$(measure "$_l" "ib_send_lat $_x" -- ib_send_lat $_x "$_a") ;;
	*)
		_m=${_row#send_lat.}
		_e=
		case $_m in *.event) _e=-e ;; esac
		_m=${_m%.*}
		# shellcheck disable=SC2086
		_v=$(measure "$_l" "$PERF -s -a $_a -p $PORT --mode $_m" -- \
			"$PERF" -c "$_a" -p "$PORT" -t send_lat -S 64 -n "$ITERS" \
			--mode "$_m" $_e --json) ;;
	esac
	if [ -z "$_v" ]; then
		tap "# pollbench: $_d round $_r $_row: failed (see logs/${_l##*/})"
		failed=1
		return 0
	fi
	case $_v in
	*[!0-9.]*)
		# perftest's "inf": its clock, not the transport, failed.
		tap "# pollbench: $_d round $_r $_row: no number ($_v), left out of the median (see logs/${_l##*/})"
		return 0 ;;
	esac
	printf '%s\t%s\t%s\t%s\n' "$_d" "$_r" "$_row" "$_v" >>"$OUT/$_tsv"
	tap "# pollbench: $_d round $_r $_row: $([ "$_tsv" = msg.tsv ] && echo mean || echo median) $_v us"
}

for _dev in rxe siw; do
	case $_dev in
	rxe) _addr=$LCHAN_RXE_ADDR ;;
	siw) _addr=$LCHAN_SIW_ADDR ;;
	esac
	[ -n "$_addr" ] || continue
	_r=1
	while [ "$_r" -le "$ROUNDS" ]; do
		for _row in $ROWS; do
			# Direct polling is IB/RoCE only.
			case $_dev$_row in siw*.direct.busy) continue ;; esac
			row "$_dev" "$_addr" "$_r" "$_row"
		done
		_r=$((_r + 1))
	done
done

bench_job_end pollbench "$failed"
