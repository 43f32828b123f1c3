# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Job "poolbench": how the poller pool's placement rule (poller_assign)
# changes latency when two ping-pongs share the pool.  A pool of two
# threads serves both ends of two concurrent 64-byte SEND ping-pongs in
# poller mode, one over rxe0 and one over siw0, so four poller channels:
# by load each thread serves one end of each ping-pong, by device each
# serves both ends of one.  Each round runs both rules (their order
# alternating from round to round), with applications that wait for
# events.  Busy-polling applications can be asked for, but four of them
# on the guest's two CPUs measure the scheduler, not the rule: whichever
# pair holds both CPUs runs at full speed while the other waits, and in
# runs where the scheduler alternates them every round trip waits for a
# tick (about 5 ms; 20,000 round trips then outlast the time limit).
# Prints one TAP comment per measurement and each channel's thread as
# sysfs showed it during the run, and writes out/poolbench/rows.tsv (dev
# round rule wait median_us) and logs/; the host keeps rows.tsv as
# bench/<kernel>/pool.tsv and takes the medians over the rounds and the
# ratio device/load (make bench-pool: rig/report/readme.py).
#
# Kernel command line: lchan.poolbench_rounds=N (default 5),
# lchan.poolbench_iters=N (default 20000; siw's busy rows half),
# lchan.poolbench_waits=event (the default), busy, or busy,event.
# shellcheck source=lib.sh
. "$LCHAN_SHARE/guest/lib.sh"

OUT=$LCHAN_OUT/poolbench
LOGS=$OUT/logs
mkdir -p "$LOGS"
PERF=$LCHAN_TOOLS/lchan_perf
PARAMS=/sys/module/lchan/parameters
ROUNDS=$(kernel_arg poolbench_rounds 5)
ITERS=$(kernel_arg poolbench_iters 20000)
WAITS=$(kernel_arg poolbench_waits event | tr , " ")

if [ -z "$LCHAN_RXE_ADDR" ] || [ -z "$LCHAN_SIW_ADDR" ]; then
	tap "not ok - poolbench: needs rxe0 and siw0"
	exit 1
fi
if ! load_ko "$LCHAN_KO" pollers=2; then
	tap "not ok - poolbench: insmod lchan"
	exit 1
fi
printf 'dev\tround\trule\twait\tmedian_us\n' >"$OUT/rows.tsv"
failed=0

# Each poller channel's device and thread, one line.
placement() {
	for _c in /sys/kernel/lchan/channels/*; do
		[ "$(cat "$_c/mode" 2>/dev/null)" = poller ] || continue
		printf '%s:%s ' "$(cat "$_c/device")" "$(cat "$_c/poller")"
	done
}

# Wait (at most 5 s) until N poller channels exist.
wait_chans() { # N
	_i=0
	while [ "$_i" -lt 250 ]; do
		[ "$(placement | wc -w)" -ge "$1" ] && return 0
		sleep 0.02
		_i=$((_i + 1))
	done
	echo "poolbench: fewer than $1 poller channels after 5 s" >&2
	return 1
}

# What a stalled run leaves: channels, pool, the threads' kernel stacks.
stall_report() { # FILE
	{
		echo "== pool: $(cat "$PARAMS/pollers") threads, $(cat "$PARAMS/poller_assign"), sleeps $(cat "$PARAMS/poller_sleeps")"
		"$LCHAN_TOOLS/lchanctl" show
		for _t in /proc/[0-9]*; do
			_comm=$(cat "$_t/comm" 2>/dev/null) || continue
			case $_comm in
			lchan-poll/*|lchan_perf|siw_tx*|rxe*|ksoftirqd*|kworker*)
				echo "== ${_t#/proc/} $_comm $(sed -n 's/^State:[[:space:]]*//p' "$_t/status")"
				cat "$_t/stack" 2>/dev/null ;;
			esac
		done
		for _c in /sys/kernel/lchan/channels/*; do
			echo "== ${_c##*/}: held $(cat "$_c/sq_held") $(cat "$_c/rq_held") outstanding $(cat "$_c/sq_outstanding") $(cat "$_c/rq_outstanding") inflight $(cat "$_c/cq_inflight") enters $(cat "$_c/enters")"
		done
	} >"$1" 2>&1
	tap "# poolbench: round $_r $_rule $_w stalled: state in logs/${1##*/}"
}

# The median RTT/2 lchan_perf's JSON in LOG gives.
t_median() { sed -n 's/.*"t_median_us": \([^,}]*\).*/\1/p' "$1" | head -n 1; }

# Both ping-pongs at once under RULE; one row per device.
pair_run() { # ROUND RULE WAIT
	_r=$1 _rule=$2 _w=$3
	_e=
	[ "$_w" = event ] && _e=-e
	echo "$_rule" >"$PARAMS/poller_assign"
	_pids=
	for _d in rxe siw; do
		_a=$LCHAN_RXE_ADDR _p=18601
		[ "$_d" = siw ] && _a=$LCHAN_SIW_ADDR _p=18602
		timeout 120 "$PERF" -s -a "$_a" -p "$_p" --mode poller \
			>"$LOGS/$_d.$_rule.$_w.$_r.log.server" 2>&1 &
		_pids="$_pids $!"
		wait_listen rdma "$_p" "$!" || failed=1
	done
	# One ping-pong after the other, so that by load each thread takes
	# one end of each; siw's busy round trip is about twice rxe's, so it
	# makes half as many and both run about as long.
	_n=2
	for _d in rxe siw; do
		_a=$LCHAN_RXE_ADDR _p=18601 _i=$ITERS
		[ "$_d" = siw ] && _a=$LCHAN_SIW_ADDR _p=18602
		[ "$_d$_w" = siwbusy ] && _i=$((ITERS / 2))
		# shellcheck disable=SC2086 # $_e is empty or one word
		timeout 120 "$PERF" -c "$_a" -p "$_p" -t send_lat -S 64 \
			-n "$_i" --mode poller $_e --json \
			>"$LOGS/$_d.$_rule.$_w.$_r.log" 2>&1 &
		_pids="$_pids $!"
		wait_chans "$_n" || failed=1
		_n=4
	done
	tap "# poolbench: round $_r $_rule $_w: device:thread $(placement)"
	# A ping-pong that has not ended in 30 s has stalled: its state.
	_t=0
	while [ "$_t" -lt 300 ]; do
		_alive=0
		# shellcheck disable=SC2086 # a list of pids
		for _pid in $_pids; do
			kill -0 "$_pid" 2>/dev/null && _alive=$((_alive + 1))
		done
		[ "$_alive" = 0 ] && break
		sleep 0.1
		_t=$((_t + 1))
	done
	[ "$_t" -lt 300 ] || stall_report "$LOGS/stall.$_rule.$_w.$_r.txt"
	# shellcheck disable=SC2086 # a list of pids
	wait $_pids
	for _d in rxe siw; do
		_v=$(t_median "$LOGS/$_d.$_rule.$_w.$_r.log")
		if [ -z "$_v" ]; then
			tap "# poolbench: $_d round $_r $_rule $_w: failed (see logs/$_d.$_rule.$_w.$_r.log)"
			failed=1
			continue
		fi
		printf '%s\t%s\t%s\t%s\t%s\n' "$_d" "$_r" "$_rule" "$_w" "$_v" \
			>>"$OUT/rows.tsv"
		tap "# poolbench: $_d round $_r $_rule $_w: median $_v us"
	done
}

_r=1
while [ "$_r" -le "$ROUNDS" ]; do
	_rules="load device"
	[ $((_r % 2)) = 0 ] && _rules="device load"
	for _w in $WAITS; do
		for _rule in $_rules; do
			pair_run "$_r" "$_rule" "$_w"
		done
	done
	_r=$((_r + 1))
done
tap "# poolbench: pool sleeps $(cat "$PARAMS/poller_sleeps")"

bench_job_end poolbench "$failed"
