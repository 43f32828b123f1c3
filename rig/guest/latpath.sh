# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Job "latpath": where a 64-byte SEND ping-pong's round trip goes on rxe0,
# lchan (doorbell mode with busy polling, poller mode with busy polling and
# with events) against ib_send_lat (busy, and with events), timed at the
# points they share.  Kprobes (ftrace-based, at function entry) mark:
#   cq_create   rxe_create_cq: which process a CQ belongs to
#   qp_create   rxe_create_qp: which CQs a QP completes to
#   post_send   rxe_post_send: a send enters rxe (user QP and kernel QP)
#   cq_post     rxe_cq_post: rxe writes a completion (op 128: a receive)
#   comp        the CQ's handler: ib_core's (softirq or workqueue flavour)
#               for a kernel CQ, uverbs' (the event channel) for a user CQ
#   wr_done     lchan_post_wr_done: ib_core handed the completion to lchan,
#               which writes the CQE into the ring
#   enter       lchan_ioctl_enter: the application rang the doorbell
# and the scheduler's wakeups and switches, and the work items kworkers run.
# Each row runs once untraced (its plain round trip) and once traced;
# ROUNDS (lchan.latpath_rounds, default 3) rounds alternate the rows.
# Writes out/latpath/<row>.<round>.trace (the trace, mono clock) and
# <row>.<round>.log (the tool's output); rig/report/latpath.py reads them.
# shellcheck source=lib.sh
. "$LCHAN_SHARE/guest/lib.sh"

OUT=$LCHAN_OUT/latpath
mkdir -p "$OUT"
PERF=$LCHAN_TOOLS/lchan_perf
PORT=18515
N=2000
ROUNDS=$(kernel_arg latpath_rounds 3)
T=/sys/kernel/tracing
failed=0
if ! load_ko "$LCHAN_KO"; then
	tap "not ok - latpath: insmod lchan"
	exit 1
fi
[ -n "$LCHAN_RXE_ADDR" ] || { tap "not ok - latpath: no rxe0"; exit 1; }
[ -d $T/events ] || mount -t tracefs nodev $T
# perftest's verbs, loaded now so that its event handler can be probed.
modprobe ib_uverbs

# A probe whose function this kernel lacks (each kernel has one flavour of
# ib_core's handler) is left out; every other must be there.
probe() { # NAME SPEC [optional]
	if ! echo "p:latpath/$1 $2" >>$T/kprobe_events 2>/dev/null; then
		[ -n "${3:-}" ] && return 0
		tap "not ok - latpath: kprobe $1 ($2)"
		exit 1
	fi
	echo 1 >"$T/events/latpath/$1/enable"
}
echo 0 >$T/tracing_on
echo mono >$T/trace_clock
echo 32768 >$T/buffer_size_kb
# The opcode is the fourth 32-bit word of both a kernel (struct ib_wc) and
# a user (struct ib_uverbs_wc) completion.
probe cq_create 'rxe_create_cq cq=%di:x64'
probe qp_create 'rxe_create_qp qp=%di:x64 scq=+16(%si):x64 rcq=+24(%si):x64'
probe post_send 'rxe_post_send qp=%di:x64'
probe cq_post 'rxe_cq_post cq=%di:x64 op=+12(%si):u32'
probe comp 'ib_cq_completion_softirq cq=%di:x64' optional
probe comp_wq 'ib_cq_completion_workqueue cq=%di:x64' optional
probe comp_user 'ib_uverbs_comp_handler cq=%di:x64' optional
probe wr_done 'lchan_post_wr_done cq=%di:x64 op=+12(%si):u32'
probe enter 'lchan_ioctl_enter'
# Who waited for a CPU, and for how long: a wakeup to the task's switch-in.
echo 1 >$T/events/sched/sched_wakeup/enable
echo 1 >$T/events/sched/sched_switch/enable
# What a kworker runs (rxe's tasks, ib_core's CQ poll).
echo 1 >$T/events/workqueue/workqueue_execute_start/enable

# run NAME TRACED "SERVER..." CLIENT...: one ping-pong; with TRACED=1 under
# the probes.
run() {
	_name=$1 _traced=$2 _srv=$3
	shift 3
	# shellcheck disable=SC2086 # the server command is a word list
	timeout 120 $_srv >"$OUT/$_name.server.log" 2>&1 &
	_spid=$!
	if ! wait_listen rdma "$PORT" "$_spid" 2>>"$OUT/$_name.server.log"; then
		tap "not ok - latpath: $_name: no server"
		failed=1
		kill "$_spid" 2>/dev/null
		wait "$_spid"
		return
	fi
	if [ "$_traced" = 1 ]; then
		echo >$T/trace
		echo 1 >$T/tracing_on
	fi
	timeout 30 "$@" >"$OUT/$_name.log" 2>&1
	_rc=$?
	echo 0 >$T/tracing_on
	[ "$_rc" = 0 ] || kill "$_spid" 2>/dev/null
	wait "$_spid"
	if [ "$_rc" != 0 ]; then
		# perftest's failures are its own (ib_send_lat -e hangs on
		# 6.12's rxe: bench/README.md); the report leaves them out.
		case $_name in
		ib_send_lat*) tap "# latpath: $_name: exit status $_rc, left out" ;;
		*) tap "not ok - latpath: $_name: exit status $_rc"; failed=1 ;;
		esac
		return
	fi
	[ "$_traced" = 1 ] && cp $T/trace "$OUT/$_name.trace"
	tap "ok - latpath: $_name"
}

# row NAME TRACED: one ping-pong of the row NAME.
row() {
	_ib="ib_send_lat -R -p $PORT -s 64 -n $N"
	_srv="$PERF -s -a $LCHAN_RXE_ADDR -p $PORT"
	_cli="$PERF -c $LCHAN_RXE_ADDR -p $PORT -t send_lat -S 64 -n $N --json"
	_n=$1
	[ "$2" = 1 ] && _n=$1.traced
	# shellcheck disable=SC2086 # word lists
	case $1 in
	ib_send_lat) run "$_n.$_r" "$2" "$_ib" $_ib "$LCHAN_RXE_ADDR" ;;
	ib_send_lat.event) run "$_n.$_r" "$2" "$_ib -e" $_ib -e "$LCHAN_RXE_ADDR" ;;
	doorbell) run "$_n.$_r" "$2" "$_srv" $_cli ;;
	poller) run "$_n.$_r" "$2" "$_srv --mode poller" $_cli --mode poller ;;
	poller.event) run "$_n.$_r" "$2" "$_srv --mode poller" $_cli --mode poller -e ;;
	esac
}

_r=1
while [ "$_r" -le "$ROUNDS" ]; do
	for _row in ib_send_lat doorbell poller ib_send_lat.event poller.event; do
		row "$_row" 0
		row "$_row" 1
	done
	_r=$((_r + 1))
done

echo 0 >$T/events/latpath/enable
echo 0 >$T/events/sched/enable
echo 0 >$T/events/workqueue/enable
echo >$T/kprobe_events
rmmod lchan || failed=1
exit $failed
