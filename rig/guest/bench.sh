# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Job "bench": lchan_perf against perftest (raw verbs) and TCP on the same
# device and address, on rxe0 and then on siw0; then the message API
# (lchan_msg_perf) against lchan_perf, rsockets and TCP (both by rstream).
# Writes out/bench/:
#   rows.tsv    one line per measurement (see ROW_HEADER)
#   sweep.tsv   latency against message size (send_lat, ib_send_lat, TCP)
#   info.txt    what ran where
#   logs/       every program's own output
# rig/report/bench.py turns these into bench/<kernel>/results.{md,json},
# rig/report/readme.py into bench/README.md.
#
# Each row is measured four times in the first round: the run whose
# numbers are reported, a shorter one (CPU time per operation is the
# difference of the two, so set-up cancels out), and two runs of different
# length under strace -c -f (system calls per operation, the same way).
# BENCH_ROUNDS - 1 more rounds (lchan.bench_rounds=N, default 3) run every
# row's reported run again, in the same order, so that each row is measured
# in alternation with the others; rounds.tsv holds every round's figures
# and the report takes their medians.  Only the client process is
# measured, as perftest reports; for lchan's poller mode the kernel thread's
# CPU time is added from lchan_perf's (lchan_msg_perf's) own report.
#
# LCHAN_BENCH_QUICK=1 (kernel command line via LCHAN_APPEND=lchan.bench_quick=1
# or the environment) runs everything with few iterations: a smoke test of
# the job itself.
# shellcheck disable=SC2317 # METRICS functions are called by name
# shellcheck source=lib.sh
. "$LCHAN_SHARE/guest/lib.sh"

OUT=$LCHAN_OUT/bench
LOGS=$OUT/logs
ROWS=$OUT/rows.tsv
SWEEP=$OUT/sweep.tsv
mkdir -p "$LOGS"
PERF=$LCHAN_TOOLS/lchan_perf
MSG_PERF=$LCHAN_TOOLS/lchan_msg_perf
PORT=18515
TCP_PORT=11211
QPERF_PORT=19765

quick=${LCHAN_BENCH_QUICK:-0}
[ "$(kernel_arg bench_quick 0)" = 1 ] && quick=1
if [ "$quick" = 1 ]; then
	N_LAT=200 N_BW_SMALL=1000 N_BW_LARGE=40 N_BW_MIB=20 N_SWEEP=50 T_TCP=1
	SWEEP_SIZES="16 1024 65536"
else
	N_LAT=1000 N_BW_SMALL=10000 N_BW_LARGE=300 N_BW_MIB=150 N_SWEEP=300 T_TCP=3
	SWEEP_SIZES="16 128 1024 8192 65536"
fi
# Shorter runs: CPU time by difference, system calls by difference.
# (perftest wants at least 5 iterations.)
div() { echo $(($1 / $2 > 5 ? $1 / $2 : 5)); }
RUN_TIMEOUT=240
NOT_CLOCKS='!clock_gettime,clock_gettime64,gettimeofday,time,clock_getres'

BENCH_ROUNDS=3
ROUNDS_TSV=$OUT/rounds.tsv
printf 'dev\tid\tround\tstatus\tlat_median_us\tlat_p99_us\tbw_gbps\tmsg_rate_mpps\tlat_avg_us\n' >"$ROUNDS_TSV"
ROW_HEADER="dev	id	peer	tool	test	mode	completions	size	iters	status	lat_median_us	lat_p99_us	bw_gbps	msg_rate_mpps	syscalls_per_op	cpu_us_per_op	poller_cpu_us_per_op	enters_per_op	loop_cpu_us_per_op	note	lat_avg_us"
printf '%s\n' "$ROW_HEADER" >"$ROWS"
printf 'dev\ttool\tsize\tlat_median_us\tstatus\n' >"$SWEEP"

if ! load_ko "$LCHAN_KO"; then
	tap "not ok - bench: insmod lchan ($LCHAN_KO; did make module run?)"
	exit 1
fi

{
	echo "kernel: $(uname -r)"
	echo "cpus: $(grep -c ^processor /proc/cpuinfo)"
	echo "quick: $quick"
	echo "iterations: latency $N_LAT, bw 64 B $N_BW_SMALL, bw 64 KiB $N_BW_LARGE, bw 1 MiB $N_BW_MIB, sweep $N_SWEEP, TCP ${T_TCP}s"
	echo "perftest: $(ib_send_lat --version 2>&1 | head -n1)"
	echo "sockperf: $(sockperf --version 2>&1 | head -n1)"
	# rstream has no --version; the library's file name carries it.
	for _f in /usr/lib/x86_64-linux-gnu/librdmacm.so.1.*; do
		echo "rstream: ${_f##*/}"
	done
	rdma link show
} >"$OUT/info.txt" 2>&1

failed=0

# ---------------------------------------------------------------- helpers

# Number arithmetic (busybox sh has integers only).
calc() { awk "BEGIN { v = $1; if (v != v) print \"\"; else printf \"%.4f\", v }" 2>/dev/null; }

# Run one client/server pair.  The server command is in $SRV (empty: a
# server that is already running; SRV_KIND: how it listens, rdma or tcp),
# the client in "$@".  WRAP: "", time
# (CPU time of the client into WRAPOUT, in ms resolution: bash's time),
# strace (strace -c -f summary into WRAPOUT).  Output of the client in LOG,
# of the server in LOG.server.  Sets rc; a failed run is tried once more
# (perftest's clock calibration fails now and then under emulation) and
# then "retried" is set.  A run that hit its time limit is not: a hang
# (ib_send_lat -e on 6.12's rxe hung once, while rxe logged "rxe_cq_post:
# queue full") would only cost the limit twice.
pair() { # LOG WRAP WRAPOUT -- CLIENT...
	_try=0
	retried=
	while :; do
		pair_once "$@"
		case $rc in 0 | "$ksft_skip" | 124) return 0 ;; esac
		_try=$((_try + 1))
		[ $_try -lt 2 ] || return 0
		retried=1
		cp "$1" "$1.try$_try" 2>/dev/null
	done
}

# Whether the server PID listens (rdma|tcp) on PORT; if not, it is ended
# and LOG says so, and rc is 98.
server_up() { # PID LOG KIND PORT
	wait_listen "$3" "$4" "$1" 2>>"$2.server" && return 0
	kill "$1" 2>/dev/null
	wait "$1"
	echo "bench: no server (see $2.server)" >"$2"
	rc=98
	return 1
}

pair_once() {
	_log=$1 _wrap=$2 _wout=$3
	shift 4
	_spid=
	if [ -n "$SRV" ]; then
		# shellcheck disable=SC2086 # the server command is a word list
		timeout $((RUN_TIMEOUT + 20)) $SRV >"$_log.server" 2>&1 &
		_spid=$!
		server_up "$_spid" "$_log" "${SRV_KIND:-rdma}" "$PORT" || return 0
	fi
	case $_wrap in
	time)
		# shellcheck disable=SC2016 # for the inner shell
		bash -c 'o=$1 l=$2; shift 2; TIMEFORMAT="%3R %3U %3S"
			{ time "$@" >"$l" 2>&1; } 2>"$o"' bench "$_wout" "$_log" \
			timeout "$RUN_TIMEOUT" "$@"
		;;
	strace)
		# Clock reads are vDSO calls on real hardware but system
		# calls here (the guest's clocksource is hpet): not counted,
		# and not stopped at (seccomp), so that perftest's clock
		# calibration keeps working under strace.
		timeout "$RUN_TIMEOUT" strace -c -f --seccomp-bpf -e "trace=$NOT_CLOCKS" \
			-o "$_wout" "$@" >"$_log" 2>&1
		;;
	*) timeout "$RUN_TIMEOUT" "$@" >"$_log" 2>&1 ;;
	esac
	rc=$?
	if [ -n "$_spid" ]; then
		# A server whose client failed may wait for ever: end it.
		[ "$rc" = 0 ] || [ "$rc" = "$ksft_skip" ] || kill "$_spid" 2>/dev/null
		wait "$_spid"
		_src=$?
		if [ "$rc" = 0 ] && [ "$_src" != 0 ]; then
			echo "bench: server exit status $_src" >>"$_log"
			rc=99
		fi
	fi
	return 0
}

status_of() { # RC
	case $1 in
	0) echo ok ;;
	4) echo skipped ;;
	124 | 143) echo timeout ;;
	98) echo "failed (no server)" ;;
	99) echo "failed (server)" ;;
	*) echo "failed (exit $1)" ;;
	esac
}

# Why a run failed, in a line: the error lines of client and server.
why() { # LOG
	{
		grep -h -i -E 'error|fail|unable|couldn|cannot|invalid|not supported|refused|timed out' \
			"$1" "$1.server" 2>/dev/null | grep -v -i 'correlation' | head -n 3
	} | tr '\t\n' '  ' | sed 's/  */ /g' | cut -c 1-240
}

cpu_of() { tail -n 1 "$1" 2>/dev/null | awk 'NF >= 3 { print $2 + $3 }'; }
calls_of() { awk '$NF == "total" { print $4 }' "$1" 2>/dev/null; }

# The value of a "-" placeholder is empty.
val() { [ "$1" = - ] || printf '%s' "$1"; }

# Four runs of a row.  Needs: SRV_T (the server, @N@ for the iterations;
# empty for the TCP tools, whose servers run for the whole device), CMD
# (the client, the same), and METRICS: a function that prints, for a
# client log, "lat_median lat_p99 gbps mpps ops poller_cpu enters
# loop_cpu lat_avg" ("-" where a value does not apply; ops: operations
# done, for the per-operation differences).
measure() { # DEV ID PEER TOOL TEST MODE COMPL SIZE N NSHORT NS1 NS2
	if [ "${BENCH_ROUND:-1}" -gt 1 ]; then
		measure_again "$1" "$2" "$9" "$4"
		return
	fi
	_dev=$1 _id=$2 _peer=$3 _tool=$4 _test=$5 _mode=$6 _compl=$7 _size=$8
	_n=$9 _ns=${10} _s1=${11} _s2=${12}
	_base=$LOGS/$_dev.$_id
	_note='' _sys='' _cpu=''
	echo "rig: bench $_dev $_id" >/dev/kmsg 2>/dev/null
	reported_run "$_base.log" time "$_base.time" "$_n"
	[ -z "$retried" ] || _note="failed once, retried;"
	if [ "$_st" = ok ]; then
		# CPU time per operation: against a run of a tenth the length.
		_cpu1=$(cpu_of "$_base.time")
		SRV=$(echo "$SRV_T" | sed "s/@N@/${_ns%s}/g")
		# shellcheck disable=SC2046
		pair "$_base.short.log" time "$_base.short.time" -- $(expand "$_ns")
		# shellcheck disable=SC2046
		set -- $($METRICS "$_base.short.log")
		if [ "$rc" = 0 ] && [ $# -ge 5 ] && [ "$5" != - ]; then
			_cpu=$(calc "(${_cpu1:-0} - $(cpu_of "$_base.short.time")) * 1e6 / ($_ops1 - $5)")
		else
			_note="$_note short run: $(status_of "$rc");"
		fi
		# System calls per operation: two runs under strace.
		SRV=$(echo "$SRV_T" | sed "s/@N@/${_s1%s}/g")
		# shellcheck disable=SC2046
		pair "$_base.strace1.log" strace "$_base.strace1" -- $(expand "$_s1")
		_r1=$rc
		# shellcheck disable=SC2046
		set -- $($METRICS "$_base.strace1.log")
		_o1=${5:--}
		SRV=$(echo "$SRV_T" | sed "s/@N@/${_s2%s}/g")
		# shellcheck disable=SC2046
		pair "$_base.strace2.log" strace "$_base.strace2" -- $(expand "$_s2")
		# shellcheck disable=SC2046
		set -- $($METRICS "$_base.strace2.log")
		_o2=${5:--}
		if [ "$_r1" = 0 ] && [ "$rc" = 0 ] && [ "$_o1" != - ] && [ "$_o2" != - ]; then
			_sys=$(calc "($(calls_of "$_base.strace2") - $(calls_of "$_base.strace1")) / ($_o2 - $_o1)")
		elif [ "$_r1" = 0 ] && [ "$rc" = 0 ]; then
			_note="$_note a run under strace printed no result;"
		else
			_note="$_note runs under strace: $(status_of "$_r1"), $(status_of "$rc");"
		fi
		# The poller thread works for this process too.
		if [ -n "$_pcpu" ] && [ -n "$_cpu" ]; then
			_cpu=$(calc "$_cpu + $_pcpu")
		fi
	elif [ "$_st" = skipped ]; then
		_note=$(sed -n 's/.*"skipped": "\([^"]*\)".*/\1/p; s/.*skipped: //p' "$_base.log" | head -n 1)
	else
		_note="$_note $(why "$_base.log")"
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$_dev" "$_id" "$_peer" "$_tool" "$_test" "$_mode" "$_compl" \
		"$_size" "$_n" "$_st" "$_lat" "$_p99" "$_gbps" "$_mpps" "$_sys" \
		"$_cpu" "$_pcpu" "$_ent" "$_lcpu" "$_note" "$_avg" >>"$ROWS"
	round_row "$_dev" "$_id" 1 "$_st" "$_lat" "$_p99" "$_gbps" "$_mpps" "$_avg"
	case $_st in
	ok) tap "ok - bench: $_dev $_id: median ${_lat:--} us, mean ${_avg:--} us, ${_gbps:--} Gb/s, ${_mpps:--} Mpps, ${_sys:-?} syscalls/op, ${_cpu:-?} us CPU/op" ;;
	skipped) tap "ok - bench: $_dev $_id # SKIP $_note" ;;
	*)
		if [ "$_tool" = lchan_perf ] || [ "$_tool" = lchan_msg_perf ]; then
			tap "not ok - bench: $_dev $_id: $_st"
			failed=1
		else
			# A peer that fails is a row of the table, not a failed bench.
			tap "ok - bench: $_dev $_id: peer $_st (reported in the table)"
		fi
		;;
	esac
}

# The run whose figures a row reports: N iterations, the client's output
# in LOG (WRAP and WRAPOUT as pair's).  Sets _st, and _lat _p99 _gbps
# _mpps _ops1 _pcpu _ent _lcpu _avg (empty where the tool gives none).
reported_run() { # LOG WRAP WRAPOUT N
	_lat='' _p99='' _gbps='' _mpps='' _ops1='' _pcpu='' _ent='' _lcpu='' _avg=''
	SRV=$(echo "$SRV_T" | sed "s/@N@/${4%s}/g")
	# shellcheck disable=SC2046 # the client command is a word list
	pair "$1" "$2" "$3" -- $(expand "$4")
	_st=$(status_of "$rc")
	[ "$rc" = 0 ] || return 0
	# shellcheck disable=SC2046 # fields
	set -- $($METRICS "$1")
	if [ $# -lt 5 ] || [ "$5" = - ]; then
		_st="failed (no result in the output)"
	else
		_lat=$(val "$1") _p99=$(val "$2") _gbps=$(val "$3")
		_mpps=$(val "$4") _ops1=$5 _pcpu=$(val "${6:--}")
		_ent=$(val "${7:--}") _lcpu=$(val "${8:--}")
		_avg=$(val "${9:--}")
	fi
}

round_row() { # DEV ID ROUND STATUS LAT P99 GBPS MPPS AVG
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$ROUNDS_TSV"
}

# A later round of a row: its reported run alone, into rounds.tsv.  A
# failure of lchan's own tools fails the bench, as in the first round.
measure_again() { # DEV ID N TOOL
	_tool=$4
	echo "rig: bench $1 $2 round $BENCH_ROUND" >/dev/kmsg 2>/dev/null
	reported_run "$LOGS/$1.$2.r$BENCH_ROUND.log" "" "" "$3"
	round_row "$1" "$2" "$BENCH_ROUND" "$_st" "$_lat" "$_p99" "$_gbps" "$_mpps" "$_avg"
	case $_st in
	ok | skipped) tap "# bench: $1 $2 round $BENCH_ROUND: $_st, median ${_lat:--} us, ${_mpps:--} Mpps" ;;
	*)
		if [ "$_tool" = lchan_perf ] || [ "$_tool" = lchan_msg_perf ]; then
			tap "not ok - bench: $1 $2 round $BENCH_ROUND: $_st"
			failed=1
		else
			tap "# bench: $1 $2 round $BENCH_ROUND: peer $_st (left out of the median)"
		fi
		;;
	esac
}

# ---------------------------------------------------------- tool parsers

# lchan_perf and lchan_msg_perf --json: the first result ("-" for what is
# missing).
jget() {
	_v=$(sed -n "s/.*\"$2\": \\([^,}]*\\).*/\\1/p" "$1" | head -n 1)
	case $_v in '' | null) echo - ;; *) echo "$_v" ;; esac
}
metrics_lchan() {
	case $(jget "$1" tool) in '"lchan_perf"' | '"lchan_msg_perf"') ;; *) return 0 ;; esac
	_it=$(jget "$1" iters)
	_tail="$(jget "$1" poller_cpu_us_per_op) $(jget "$1" enters_per_op) $(jget "$1" cpu_us_per_op)"
	if [ "$(jget "$1" latency)" != '"none"' ]; then
		echo "$(jget "$1" t_median_us) $(jget "$1" t_p99_us) - - $_it $_tail $(jget "$1" t_avg_us)"
	else
		echo "- - $(jget "$1" bw_gbps) $(jget "$1" msg_rate_mpps) $_it $_tail -"
	fi
}

# perftest: the result line starts with the size.
metrics_perftest_lat() {
	awk -v s="$PT_SIZE" -v n="$PT_N" '$1 == s && NF >= 9 && $2 ~ /^[0-9]+$/ && $5 ~ /^[0-9.]+$/ {
		printf "%s %s - - %s - - - %s\n", $5, $8, n, $6; exit }' "$1"
}
metrics_perftest_bw() {
	# BW average is in MiB/s; the message rate follows from it.
	awk -v s="$PT_SIZE" -v n="$PT_N" '$1 == s && NF >= 5 && $2 ~ /^[0-9]+$/ && $4 ~ /^[0-9.]+$/ {
		b = $4 * 1048576
		printf "- - %.4f %.6f %s -\n", b * 8 / 1e9, b / s / 1e6, n; exit }' "$1"
}

# sockperf ping-pong: one-way latency (RTT/2) percentiles; sent messages.
metrics_sockperf() {
	_m=$(sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p' "$1" | head -n 1)
	_p=$(sed -n 's/.*percentile 99.000 = *\([0-9.]*\).*/\1/p' "$1" | head -n 1)
	_o=$(sed -n 's/.*\[Total Run\].*SentMessages=\([0-9]*\).*/\1/p' "$1" | head -n 1)
	[ -n "$_m" ] && echo "$_m $_p - - $_o -"
}

# qperf -vv tcp_bw: messages sent in the -t seconds.
metrics_qperf() {
	_o=$(sed -n 's/^ *send_msgs *= *\([0-9,]*\).*/\1/p' "$1" | tr -d ,)
	[ -n "$_o" ] && awk -v o="$_o" -v s="$QP_SIZE" -v t="$QP_T" 'BEGIN {
		printf "- - %.4f %.6f %s -\n", o * s * 8 / t / 1e9, o / t / 1e6, o }'
}

# ------------------------------------------------------------------- rows

# A row of lchan_perf or lchan_msg_perf, which take the same options.
tool_row() { # PROG NAME DEV ADDR ID PEER TEST SIZE N MODE COMPL [FLAGS]
	_p=$1 _name=$2
	shift 2
	_e=${10:-}
	[ "$9" = event ] && _e="$_e -e"
	SRV_KIND=rdma
	SRV_T="$_p -s -a $2 -p $PORT --mode $8"
	CMD="$_p -c $2 -p $PORT -t $5 -S $6 -n @N@ --mode $8 $_e --json"
	METRICS=metrics_lchan
	measure "$1" "$3" "$4" "${_p##*/}" "$_name" "$8" "$9" "$6" "$7" \
		"$(div "$7" 10)" "$(div "$7" 10)" "$(div "$7" 2)"
}

lchan_row() { # DEV ADDR ID PEER TEST SIZE N MODE COMPL
	tool_row "$PERF" "$5" "$@"
}

perftest_row() { # DEV ADDR ID TOOL SIZE N KIND(lat|bw) COMPL [ARGS]
	_d=$1 _a=$2 _i=$3 _t=$4 _s=$5 _n=$6 _k=$7 _c=$8
	shift 8
	_x="-R -p $PORT -s $_s -n @N@ $*"
	[ "$_c" = event ] && _x="$_x -e"
	SRV_KIND=rdma
	SRV_T="$_t $_x"
	CMD="$_t $_x $_a"
	PT_SIZE=$_s
	METRICS=metrics_perftest_$_k
	_ns=$(div "$_n" 10) _s1=$(div "$_n" 10) _s2=$(div "$_n" 2)
	measure_perftest "$_d" "$_i" "" "$_t" "${_t#ib_}" verbs "$_c" "$_s" "$_n" "$_ns" "$_s1" "$_s2"
}

# perftest prints no count: the n of each run comes from the log name.
measure_perftest() {
	_pt_metrics=$METRICS
	METRICS=metrics_perftest_dispatch
	PT_LIST="$9 ${10} ${11} ${12}"
	measure "$@"
	METRICS=$_pt_metrics
}
metrics_perftest_dispatch() {
	# shellcheck disable=SC2086
	set -- "$1" $PT_LIST
	case $1 in
	*.short.log) PT_N=$3 ;;
	*.strace1.log) PT_N=$4 ;;
	*.strace2.log) PT_N=$5 ;;
	*) PT_N=$2 ;;
	esac
	$_pt_metrics "$1"
}

# The message API; BUFS: plain (lchan_msg_send/recv) or registered
# (--zero-copy: buffers registered up front, the _mr calls).
msg_row() { # DEV ADDR ID PEER TEST(lat|bw) SIZE N MODE COMPL BUFS
	_z=
	[ "${10}" = registered ] && _z=-z
	tool_row "$MSG_PERF" "msg_$5" "$1" "$2" "$3" "$4" "$5" "$6" "$7" \
		"$8" "$9" "$_z"
}

# rstream (librdmacm's example) over rsockets, or with -T s over TCP
# sockets: the same program on both.  Its client and server both need the
# test's parameters.  Latency: -C 1 -I N, N ping-pongs of one transfer
# each.  Bandwidth: -C N -I 1, N transfers one way, then N back.  Busy:
# rstream's default, non-blocking calls in a loop; event: -T b, blocking
# calls (which sleep).
rstream_row() { # DEV ADDR ID KIND(rsockets|tcp) TEST(lat|bw) SIZE N COMPL
	_x="-p $PORT -S $6"
	if [ "$5" = lat ]; then
		_x="$_x -C 1 -I @N@"
		RS_MULT=1
	else
		_x="$_x -C @N@ -I 1"
		RS_MULT=2
	fi
	SRV_KIND=rdma
	[ "$4" = tcp ] && _x="$_x -T s" && SRV_KIND=tcp
	[ "$8" = event ] && _x="$_x -T b"
	SRV_T="rstream -b $2 $_x"
	CMD="rstream -s $2 $_x"
	RS_SIZE=$6
	RS_LIST="$7 $(div "$7" 10) $(div "$7" 10) $(div "$7" 2)"
	METRICS=metrics_rstream_dispatch
	measure "$1" "$3" "" rstream "rstream_$5" "$4" "$8" "$6" "$7" \
		"$(div "$7" 10)" "$(div "$7" 10)" "$(div "$7" 2)"
	SRV_KIND=rdma
}

# rstream prints "custom SIZE XFERS ITERS TOTAL TIME Gb/sec usec/xfer",
# usec/xfer being the time over 2 x transfers x iterations: for -C 1 the
# mean of RTT/2 (no percentiles), for bandwidth the mean time of one
# transfer.  Its counts are rounded ("1k"), so ours come from RS_LIST.
metrics_rstream() { # LOG N
	awk -v s="$RS_SIZE" -v n="$2" -v k="$RS_MULT" '$1 == "custom" && NF >= 8 && $8 ~ /^[0-9.]+$/ {
		u = $8
		if (k == 1) { printf "- - - - %s - - - %s\n", n, u; exit }
		# %g: 1 MiB transfers run at a few per millisecond here.
		if (u > 0) printf "- - %.6g %.6g %s - - - -\n", s * 8 / u / 1e3, 1 / u, n * k
		exit }' "$1"
}
metrics_rstream_dispatch() {
	# shellcheck disable=SC2086
	set -- "$1" $RS_LIST
	case $1 in
	*.short.log) metrics_rstream "$1" "$3" ;;
	*.strace1.log) metrics_rstream "$1" "$4" ;;
	*.strace2.log) metrics_rstream "$1" "$5" ;;
	*) metrics_rstream "$1" "$2" ;;
	esac
}

tcp_lat_row() { # DEV ADDR SIZE T
	SRV_T=
	CMD="sockperf ping-pong --tcp -i $2 -p $TCP_PORT -m $3 -t @N@"
	METRICS=metrics_sockperf
	measure "$1" "tcp_lat.$3" "" sockperf tcp_lat tcp event "$3" "$4s" 1 1 2
}

tcp_bw_row() { # DEV ADDR SIZE T
	SRV_T=
	QP_SIZE=$3
	CMD="qperf -lp $QPERF_PORT -vv -t @N@ -m $3 $2 tcp_bw"
	METRICS=metrics_qperf_dispatch
	QP_LIST="$4 1 1 2"
	measure "$1" "tcp_bw.$3" "" qperf tcp_bw tcp event "$3" "$4s" 1 1 2
}
metrics_qperf_dispatch() {
	# shellcheck disable=SC2086
	set -- "$1" $QP_LIST
	case $1 in
	*.short.log) QP_T=$3 ;;
	*.strace1.log) QP_T=$4 ;;
	*.strace2.log) QP_T=$5 ;;
	*) QP_T=$2 ;;
	esac
	metrics_qperf "$1"
}

# The client command for N iterations: "$CMD" with @N@ replaced.  The
# time-based TCP tools take seconds instead: their first run is T seconds
# (N = "Ts"), the short one 1 s, the strace runs 1 s and 2 s.
expand() { # N
	echo "$CMD" | sed "s/@N@/${1%s}/g"
}

sweep_row() { # DEV TOOL SIZE VALUE STATUS
	_v=$4 _w=$5
	[ "$_w" != ok ] || [ -n "$_v" ] || _w="failed (no result in the output)"
	[ "$_w" = ok ] || _v=
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$_v" "$_w" >>"$SWEEP"
}

sweep() { # DEV ADDR
	_d=$1 _a=$2
	_list=$(echo "$SWEEP_SIZES" | tr ' ' ,)
	echo "rig: bench $_d sweep" >/dev/kmsg 2>/dev/null
	SRV="$PERF -s -a $_a -p $PORT"
	SRV_KIND=rdma
	pair "$LOGS/$_d.sweep.lchan.log" "" "" -- \
		"$PERF" -c "$_a" -p "$PORT" -t send_lat -S "$_list" -n "$N_SWEEP" --json
	_st=$(status_of "$rc")
	for _s in $SWEEP_SIZES; do
		_v=$(tr '{' '\n' <"$LOGS/$_d.sweep.lchan.log" |
			sed -n "s/^\"size\": $_s, .*\"t_median_us\": \\([^,]*\\),.*/\\1/p" | head -n 1)
		sweep_row "$_d" lchan_perf "$_s" "$_v" "$_st"
	done
	for _s in $SWEEP_SIZES; do
		SRV="ib_send_lat -R -p $PORT -s $_s -n $N_SWEEP"
		pair "$LOGS/$_d.sweep.ib_send_lat.$_s.log" "" "" -- \
			ib_send_lat -R -p "$PORT" -s "$_s" -n "$N_SWEEP" "$_a"
		_st=$(status_of "$rc")
		PT_SIZE=$_s PT_N=$N_SWEEP
		_v=$(metrics_perftest_lat "$LOGS/$_d.sweep.ib_send_lat.$_s.log" | cut -d ' ' -f 1)
		sweep_row "$_d" ib_send_lat "$_s" "$_v" "$_st"
	done
	SRV=
	for _s in $SWEEP_SIZES; do
		# sockperf sends 14 to 65507 bytes.
		_m=$((_s > 65507 ? 65507 : _s < 14 ? 14 : _s))
		pair "$LOGS/$_d.sweep.sockperf.$_s.log" "" "" -- \
			sockperf ping-pong --tcp -i "$_a" -p "$TCP_PORT" -m "$_m" -t 1
		_st=$(status_of "$rc")
		_v=$(metrics_sockperf "$LOGS/$_d.sweep.sockperf.$_s.log" | cut -d ' ' -f 1)
		sweep_row "$_d" sockperf "$_s" "$_v" "$_st"
	done
}

device() { # DEV ADDR
	_dv=$1 _ad=$2
	tap "# bench: $_dv ($_ad)"
	# TCP servers for the whole device.
	sockperf server --tcp -i "$_ad" -p "$TCP_PORT" >"$LOGS/$_dv.sockperf-server.log" 2>&1 &
	_sp=$!
	qperf -lp "$QPERF_PORT" >"$LOGS/$_dv.qperf-server.log" 2>&1 &
	_qp=$!
	wait_listen tcp "$TCP_PORT"
	wait_listen tcp "$QPERF_PORT"

	BENCH_ROUND=1
	while [ "$BENCH_ROUND" -le "$BENCH_ROUNDS" ]; do
		device_rows "$_dv" "$_ad"
		BENCH_ROUND=$((BENCH_ROUND + 1))
	done
	BENCH_ROUND=1

	sweep "$_dv" "$_ad"

	kill "$_sp" "$_qp" 2>/dev/null
	wait "$_sp" "$_qp" 2>/dev/null
}

# Every row of the tables, in order; a round of them.
device_rows() { # DEV ADDR
	_dv=$1 _ad=$2
	# 64-byte SEND latency: both lchan modes, busy polling and events.
	perftest_row "$_dv" "$_ad" ib_send_lat.busy ib_send_lat 64 "$N_LAT" lat busy
	perftest_row "$_dv" "$_ad" ib_send_lat.event ib_send_lat 64 "$N_LAT" lat event
	lchan_row "$_dv" "$_ad" send_lat.doorbell.busy ib_send_lat.busy send_lat 64 "$N_LAT" doorbell busy
	lchan_row "$_dv" "$_ad" send_lat.poller.busy ib_send_lat.busy send_lat 64 "$N_LAT" poller busy
	lchan_row "$_dv" "$_ad" send_lat.doorbell.event ib_send_lat.event send_lat 64 "$N_LAT" doorbell event
	lchan_row "$_dv" "$_ad" send_lat.poller.event ib_send_lat.event send_lat 64 "$N_LAT" poller event
	tcp_lat_row "$_dv" "$_ad" 64 "$T_TCP"

	# One-sided latency (busy polling, doorbell).
	perftest_row "$_dv" "$_ad" ib_write_lat ib_write_lat 64 "$N_LAT" lat busy
	lchan_row "$_dv" "$_ad" write_lat.doorbell.busy ib_write_lat write_lat 64 "$N_LAT" doorbell busy
	perftest_row "$_dv" "$_ad" ib_read_lat ib_read_lat 64 "$N_LAT" lat busy
	lchan_row "$_dv" "$_ad" read_lat.doorbell.busy ib_read_lat read_lat 64 "$N_LAT" doorbell busy
	perftest_row "$_dv" "$_ad" ib_atomic_lat ib_atomic_lat 8 "$N_LAT" lat busy
	lchan_row "$_dv" "$_ad" atomic_lat.doorbell.busy ib_atomic_lat atomic_lat 8 "$N_LAT" doorbell busy

	# Message rate with 64-byte SENDs, batched; 64 KiB bandwidth.
	perftest_row "$_dv" "$_ad" ib_send_bw ib_send_bw 64 "$N_BW_SMALL" bw busy
	lchan_row "$_dv" "$_ad" send_bw.doorbell ib_send_bw send_bw 64 "$N_BW_SMALL" doorbell busy
	lchan_row "$_dv" "$_ad" send_bw.poller ib_send_bw send_bw 64 "$N_BW_SMALL" poller busy
	tcp_bw_row "$_dv" "$_ad" 64 "$T_TCP"
	perftest_row "$_dv" "$_ad" ib_write_bw ib_write_bw 65536 "$N_BW_LARGE" bw busy
	lchan_row "$_dv" "$_ad" write_bw.doorbell ib_write_bw write_bw 65536 "$N_BW_LARGE" doorbell busy
	lchan_row "$_dv" "$_ad" write_bw.poller ib_write_bw write_bw 65536 "$N_BW_LARGE" poller busy
	perftest_row "$_dv" "$_ad" ib_read_bw ib_read_bw 65536 "$N_BW_LARGE" bw busy
	lchan_row "$_dv" "$_ad" read_bw.doorbell ib_read_bw read_bw 65536 "$N_BW_LARGE" doorbell busy
	tcp_bw_row "$_dv" "$_ad" 65536 "$T_TCP"

	# The message API, against lchan_perf's rows of the same
	# mode and completion style, rsockets and TCP (rstream for both).
	msg_row "$_dv" "$_ad" msg_lat.doorbell.busy send_lat.doorbell.busy lat 64 "$N_LAT" doorbell busy plain
	msg_row "$_dv" "$_ad" msg_lat.poller.busy send_lat.poller.busy lat 64 "$N_LAT" poller busy plain
	msg_row "$_dv" "$_ad" msg_lat.doorbell.event send_lat.doorbell.event lat 64 "$N_LAT" doorbell event plain
	msg_row "$_dv" "$_ad" msg_lat.poller.event send_lat.poller.event lat 64 "$N_LAT" poller event plain
	rstream_row "$_dv" "$_ad" rs_lat.busy rsockets lat 64 "$N_LAT" busy
	rstream_row "$_dv" "$_ad" rs_lat.event rsockets lat 64 "$N_LAT" event
	rstream_row "$_dv" "$_ad" tcp_rs_lat.busy tcp lat 64 "$N_LAT" busy
	rstream_row "$_dv" "$_ad" tcp_rs_lat.event tcp lat 64 "$N_LAT" event
	lchan_row "$_dv" "$_ad" write_bw.1M.doorbell "" write_bw 1048576 "$N_BW_MIB" doorbell busy
	lchan_row "$_dv" "$_ad" write_bw.1M.poller "" write_bw 1048576 "$N_BW_MIB" poller busy
	msg_row "$_dv" "$_ad" msg_bw.registered.doorbell write_bw.1M.doorbell bw 1048576 "$N_BW_MIB" doorbell busy registered
	msg_row "$_dv" "$_ad" msg_bw.plain.doorbell write_bw.1M.doorbell bw 1048576 "$N_BW_MIB" doorbell busy plain
	msg_row "$_dv" "$_ad" msg_bw.registered.poller write_bw.1M.poller bw 1048576 "$N_BW_MIB" poller busy registered
	msg_row "$_dv" "$_ad" msg_bw.plain.poller write_bw.1M.poller bw 1048576 "$N_BW_MIB" poller busy plain
	# Poller mode with the applications asleep: two spinning threads, not
	# four, on the two CPUs.
	lchan_row "$_dv" "$_ad" write_bw.1M.poller.event "" write_bw 1048576 "$N_BW_MIB" poller event
	msg_row "$_dv" "$_ad" msg_bw.registered.poller.event write_bw.1M.poller.event bw 1048576 "$N_BW_MIB" poller event registered
	msg_row "$_dv" "$_ad" msg_bw.plain.poller.event write_bw.1M.poller.event bw 1048576 "$N_BW_MIB" poller event plain
	rstream_row "$_dv" "$_ad" rs_bw.1M rsockets bw 1048576 "$N_BW_MIB" busy
	rstream_row "$_dv" "$_ad" tcp_rs_bw.1M tcp bw 1048576 "$N_BW_MIB" busy
}

# ------------------------------------------------------ connection set-up

# Set-up: lchan_conntime beside librdmacm's cmtime on the same address,
# CONN_ROUNDS rounds, the two alternating, CONN_N connections a run (and
# CONN_PAR in flight in lchan's parallel phase; cmtime connects all of its
# N at once).  Every figure goes to connect.tsv as "dev round tool key
# value"; rig/report/connect.py takes the medians over the rounds.
CONN_TSV=$OUT/connect.tsv
if [ "$quick" = 1 ]; then
	CONN_ROUNDS=2 CONN_N=20 CONN_PAR=4 CONN_ONE=3
else
	CONN_ROUNDS=5 CONN_N=100 CONN_PAR=8 CONN_ONE=10
fi
printf 'dev\tround\ttool\tkey\tvalue\n' >"$CONN_TSV"

# cmtime's client prints per step "name: total_ms max_ms min_us us_per_conn".
# cmtime's server on ADDR, serving until it is stopped (its pid in _spid);
# 1, with a TAP line, if it never listens.
conn_cmtime_server() { # DEV ADDR ROUND LABEL LOG
	cmtime -b "$2" -p "$PORT" -c "$CONN_N" >"$5.server" 2>&1 &
	_spid=$!
	wait_listen rdma "$PORT" "$_spid" 2>>"$5.server" && return 0
	kill "$_spid" 2>/dev/null
	wait "$_spid"
	tap "ok - bench: $1 connect round $3: $4: no server (reported in the table)"
	return 1
}

# cmtime's step lines in LOG as connect.tsv lines of TOOL.
conn_cmtime_rows() { # DEV ROUND TOOL LOG
	awk -v d="$1" -v r="$2" -v t="$3" -F ':' 'NF == 2 && $2 ~ /^[ 0-9.]+$/ {
		k = $1; gsub(/^ +| +$/, "", k); gsub(/ +/, "_", k)
		n = split($2, f, " ")
		if (n >= 4) printf "%s\t%s\t%s\t%s_us_per_conn\t%s\n", d, r, t, k, f[n] }' \
		"$4" >>"$CONN_TSV"
}

conn_cmtime() { # DEV ADDR ROUND
	_log=$LOGS/$1.connect.cmtime.$3.log
	conn_cmtime_server "$1" "$2" "$3" cmtime "$_log" || return 0
	timeout "$RUN_TIMEOUT" cmtime -s "$2" -p "$PORT" -c "$CONN_N" >"$_log" 2>&1
	_rc=$?
	kill "$_spid" 2>/dev/null
	wait "$_spid" 2>/dev/null
	conn_cmtime_rows "$1" "$3" cmtime "$_log"
	if [ "$_rc" = 0 ] && grep -q '^connect' "$_log"; then
		tap "ok - bench: $1 connect round $3: cmtime"
	else
		tap "ok - bench: $1 connect round $3: cmtime $(status_of "$_rc") (reported in the table)"
	fi
}

# The numeric members of a tool's one-line JSON report in LOG as
# connect.tsv lines.
conn_json_rows() { # DEV ROUND TOOL LOG
	tr -d '{}"' <"$4" | tr ',' '\n' | awk -v d="$1" -v r="$2" -v t="$3" -F ': ' \
		'NF == 2 && $2 ~ /^[0-9.e+-]+$/ { k = $1; gsub(/ /, "", k)
		printf "%s\t%s\t%s\t%s\t%s\n", d, r, t, k, $2 }' >>"$CONN_TSV"
}

# cmtime one connection a run (tool cmtime_c1): CONN_ONE runs of "cmtime
# -c 1" against one server, each a fresh process, so that rdma_cm's own
# set-up is timed one connection at a time, as lchan's sequential phase is,
# and not as a wall time shared by N in flight.  Each run is a "round" of
# its own (ROUND.RUN), so the report takes the median over all of them.
conn_cmtime_one() { # DEV ADDR ROUND
	_log=$LOGS/$1.connect.cmtime_c1.$3.log
	conn_cmtime_server "$1" "$2" "$3" "cmtime -c 1" "$_log" || return 0
	: >"$_log"
	_k=1 _bad=0
	while [ "$_k" -le "$CONN_ONE" ]; do
		echo "== run $_k" >>"$_log"
		timeout 60 cmtime -s "$2" -p "$PORT" -c 1 >"$_log.run" 2>&1
		_rc=$?
		cat "$_log.run" >>"$_log"
		if [ "$_rc" = 0 ] && grep -q '^connect' "$_log.run"; then
			conn_cmtime_rows "$1" "$3.$_k" cmtime_c1 "$_log.run"
		else
			_bad=$((_bad + 1))
		fi
		_k=$((_k + 1))
	done
	rm -f "$_log.run"
	printf '%s\t%s\tcmtime_c1\tfailed_runs\t%s\n' "$1" "$3" "$_bad" >>"$CONN_TSV"
	kill "$_spid" 2>/dev/null
	wait "$_spid" 2>/dev/null
	if [ "$_bad" = 0 ]; then
		tap "ok - bench: $1 connect round $3: cmtime -c 1 x $CONN_ONE"
	else
		tap "ok - bench: $1 connect round $3: cmtime -c 1: $_bad of $CONN_ONE runs failed (left out of the table)"
	fi
}

# rdma_cm one connection at a time in one warm process (build/tools/
# cm_seqtime, both sides in it): with cmtime's QP (tool cm_seqtime) or with
# a default lchan channel's queues, 131 WRs of 16 SGEs each way and a CQ of
# 261 (tool cm_seqtime_lchan).
conn_cmseq() { # DEV ADDR ROUND [lchan]
	_tool=cm_seqtime${4:+_lchan}
	_log=$LOGS/$1.connect.$_tool.$3.log
	_sizes=
	[ -n "${4:-}" ] && _sizes="-e 131 -g 16 -q 261"
	# shellcheck disable=SC2086 # the sizes are words
	timeout "$RUN_TIMEOUT" "$LCHAN_TOOLS/cm_seqtime" -a "$2" -p "$PORT" \
		-n "$CONN_N" $_sizes --json >"$_log" 2>&1
	_rc=$?
	conn_json_rows "$1" "$3" "$_tool" "$_log"
	if [ "$_rc" = 0 ] && grep -q connect_median_us "$_log"; then
		tap "ok - bench: $1 connect round $3: $_tool"
	else
		tap "ok - bench: $1 connect round $3: $_tool $(status_of "$_rc") (reported in the table): $(why "$_log")"
	fi
}

# lchan_conntime with lchan's default rings (tool lchan_conntime), or with
# ENTRIES-entry queues as cmtime makes its QPs (tool lchan_conntime_eENTRIES).
conn_lchan() { # DEV ADDR ROUND [ENTRIES]
	_tool=lchan_conntime${4:+_e$4}
	_log=$LOGS/$1.connect.$_tool.$3.log
	SRV="$LCHAN_TOOLS/lchan_conntime -s -a $2 -p $PORT -n $CONN_N -P $CONN_PAR${4:+ -e $4}"
	SRV_KIND=rdma
	pair_once "$_log" "" "" -- "$LCHAN_TOOLS/lchan_conntime" -c "$2" -p "$PORT" \
		-n "$CONN_N" -P "$CONN_PAR" ${4:+-e "$4"} --steps --json
	SRV=
	conn_json_rows "$1" "$3" "$_tool" "$_log"
	if [ "$rc" = 0 ] && grep -q connect_median_us "$_log"; then
		tap "ok - bench: $1 connect round $3: $_tool"
	else
		tap "not ok - bench: $1 connect round $3: $_tool $(status_of "$rc"): $(why "$_log")"
		failed=1
	fi
}

connect_rows() { # DEV ADDR
	echo "rig: bench $1 connect" >/dev/kmsg 2>/dev/null
	_r=1
	while [ "$_r" -le "$CONN_ROUNDS" ]; do
		conn_cmtime "$1" "$2" "$_r"
		conn_cmtime_one "$1" "$2" "$_r"
		conn_cmseq "$1" "$2" "$_r"
		conn_cmseq "$1" "$2" "$_r" lchan
		conn_lchan "$1" "$2" "$_r"
		conn_lchan "$1" "$2" "$_r" 1
		_r=$((_r + 1))
	done
}

# ------------------------------------------------------------- libfabric

# Issue 18: fi_pingpong (libfabric-bin) over the lchan provider beside
# fi_pingpong over libfabric's own verbs and tcp providers, all with
# FI_EP_MSG endpoints on the same device and address, and lchan_perf's
# send_lat of the same size and mode; FAB_ROUNDS rounds, the tools
# alternating within each.  fi_pingpong polls its CQs with fi_cq_read (it
# has no option to wait for events) and prints the mean time per transfer
# (RTT/2) and MB/s; lchan_perf the mean and median of RTT/2.  Every figure
# goes to fabric.tsv as "dev round tool key value"; rig/report/fabric.py
# takes the medians over the rounds.  fi_pingpong's control connection
# (TCP) listens on FAB_PORT, below the ephemeral port range.
FAB_TSV=$OUT/fabric.tsv
FAB_PORT=18600
FAB_TIMEOUT=90
FAB_SIZES="64 65536"
if [ "$quick" = 1 ]; then
	FAB_ROUNDS=2 FAB_N_SMALL=200 FAB_N_LARGE=20
else
	FAB_ROUNDS=5 FAB_N_SMALL=2000 FAB_N_LARGE=200
fi
printf 'dev\tround\ttool\tkey\tvalue\n' >"$FAB_TSV"

fab_iters() { # SIZE
	if [ "$1" -ge 65536 ]; then echo "$FAB_N_LARGE"; else echo "$FAB_N_SMALL"; fi
}

# fi_pingpong's result row: "bytes #sent #ack total time MB/sec usec/xfer
# Mxfers/sec", after its header.
fab_pingpong() { # DEV ADDR ROUND TOOL SIZE PROVIDER DOMAIN [VAR=VALUE...]
	_d=$1 _a=$2 _r=$3 _t=$4 _s=$5 _pv=$6 _dm=$7
	shift 7
	_n=$(fab_iters "$_s")
	_log=$LOGS/$_d.fabric.$_t.$_s.$_r.log
	_x="-p $_pv -e msg -d $_dm -S $_s -I $_n"
	# shellcheck disable=SC2086 # option and environment lists
	env FI_PROVIDER_PATH="$LCHAN_FABRIC" "$@" timeout "$FAB_TIMEOUT" \
		fi_pingpong $_x -B "$FAB_PORT" >"$_log.server" 2>&1 &
	_spid=$!
	if ! wait_listen tcp "$FAB_PORT" "$_spid" 2>>"$_log.server"; then
		kill "$_spid" 2>/dev/null
		wait "$_spid"
		tap "ok - bench: $_d fabric round $_r: $_t $_s: no server (reported in the table)"
		return 0
	fi
	# shellcheck disable=SC2086
	env FI_PROVIDER_PATH="$LCHAN_FABRIC" "$@" timeout "$FAB_TIMEOUT" \
		fi_pingpong $_x -P "$FAB_PORT" "$_a" >"$_log" 2>&1
	_rc=$?
	[ "$_rc" = 0 ] || kill "$_spid" 2>/dev/null
	wait "$_spid"
	_src=$?
	awk -v d="$_d" -v r="$_r" -v t="$_t" -v s="$_s" \
		'$1 == "bytes" { h = 1; next }
		h && NF >= 8 && $6 ~ /^[0-9.]+$/ && $7 ~ /^[0-9.]+$/ {
		printf "%s\t%s\t%s\tlat_%s_avg_us\t%s\n", d, r, t, s, $7
		printf "%s\t%s\t%s\tbw_%s_mbps\t%s\n", d, r, t, s, $6; exit }' \
		"$_log" >>"$FAB_TSV"
	if [ "$_rc" = 0 ] && [ "$_src" = 0 ] && grep -q '^bytes' "$_log"; then
		tap "ok - bench: $_d fabric round $_r: $_t $_s"
	elif [ "${_t#fi_pingpong.lchan}" != "$_t" ]; then
		tap "not ok - bench: $_d fabric round $_r: $_t $_s: client $(status_of "$_rc"), server $(status_of "$_src"): $(why "$_log")"
		failed=1
	else
		# A peer that fails is a row of the table, not a failed bench.
		tap "ok - bench: $_d fabric round $_r: $_t $_s: client $(status_of "$_rc"), server $(status_of "$_src") (reported in the table)"
	fi
}

# lchan_perf send_lat in the same terms: mean and median of RTT/2, and
# MB/s as fi_pingpong counts them (bytes over the mean time of a transfer).
fab_perf() { # DEV ADDR ROUND MODE SIZE
	_n=$(fab_iters "$5")
	_log=$LOGS/$1.fabric.lchan_perf.$4.$5.$3.log
	SRV="$PERF -s -a $2 -p $PORT --mode $4"
	SRV_KIND=rdma
	pair_once "$_log" "" "" -- "$PERF" -c "$2" -p "$PORT" -t send_lat -S "$5" \
		-n "$_n" --mode "$4" --json
	SRV=
	_avg=$(jget "$_log" t_avg_us) _med=$(jget "$_log" t_median_us)
	if [ "$rc" = 0 ] && [ "$_avg" != - ]; then
		{
			printf '%s\t%s\tlchan_perf.%s\tlat_%s_avg_us\t%s\n' "$1" "$3" "$4" "$5" "$_avg"
			printf '%s\t%s\tlchan_perf.%s\tlat_%s_median_us\t%s\n' "$1" "$3" "$4" "$5" "$_med"
			printf '%s\t%s\tlchan_perf.%s\tbw_%s_mbps\t%s\n' "$1" "$3" "$4" "$5" \
				"$(calc "$5 / $_avg")"
		} >>"$FAB_TSV"
		tap "ok - bench: $1 fabric round $3: lchan_perf $4 $5"
	else
		tap "not ok - bench: $1 fabric round $3: lchan_perf $4 $5: $(status_of "$rc"): $(why "$_log")"
		failed=1
	fi
}

fabric_rows() { # DEV ADDR NETDEV
	echo "rig: bench $1 fabric" >/dev/kmsg 2>/dev/null
	_fr=1
	while [ "$_fr" -le "$FAB_ROUNDS" ]; do
		for _fs in $FAB_SIZES; do
			fab_pingpong "$1" "$2" "$_fr" fi_pingpong.lchan "$_fs" lchan "$1"
			fab_pingpong "$1" "$2" "$_fr" fi_pingpong.verbs "$_fs" verbs "$1"
			fab_pingpong "$1" "$2" "$_fr" fi_pingpong.tcp "$_fs" tcp "$3"
			fab_perf "$1" "$2" "$_fr" doorbell "$_fs"
			fab_pingpong "$1" "$2" "$_fr" fi_pingpong.lchan.poller "$_fs" lchan "$1" FI_LCHAN_POLLER=1
			fab_perf "$1" "$2" "$_fr" poller "$_fs"
			# Direct polling is IB/RoCE only.
			case $1 in siw*) continue ;; esac
			fab_pingpong "$1" "$2" "$_fr" fi_pingpong.lchan.direct "$_fs" lchan "$1" FI_LCHAN_DIRECT=1
			fab_perf "$1" "$2" "$_fr" direct "$_fs"
		done
		_fr=$((_fr + 1))
	done
}

# ---------------------------------------------------- unmodified programs

# lchan.bench_only=apps (make bench-apps): programs as Debian ships them,
# server and client alike over plain TCP, under lchan-run and under
# rsockets' preload (librdmacm's librspreload), on rxe0's address, the
# three alternating in each of APPS_ROUNDS rounds.  Each program checks
# its own run: redis-benchmark prints no error, iperf3 reports what it
# received, wrk sees no socket error and no status but 2xx.  How lchan-run's
# connections went is counted from the decisions LCHAN_RUN_DEBUG prints.
# Figures to apps.tsv as "dev round tool key value", the tool being
# PROGRAM.TRANSPORT; rig/report/apps.py takes the medians.  Only rxe0:
# iWARP listens in TCP's port space, so under lchan-run a siw address's
# servers stay TCP (lchan-run(1)) and its rows would measure TCP.
APPS_TSV=$OUT/apps.tsv
APPS_DIR=/tmp/bench-apps
RSPRELOAD=/usr/lib/x86_64-linux-gnu/rsocket/librspreload.so
if [ "$quick" = 1 ]; then
	APPS_ROUNDS=1 APPS_SECS=2 REDIS_N=2000
else
	APPS_ROUNDS=3 APPS_SECS=5 REDIS_N=20000
fi
APPS_TRANSPORTS="tcp lchan rsocket"
apps_port=18700

# PROGRAM... over TRANSPORT, in the place of the calling (sub)shell, so
# that the caller's $! is the program's own pid.
over() { # TRANSPORT PROGRAM...
	_ot=$1
	shift
	case $_ot in
	lchan)
		export LCHAN_RUN_DEBUG=1
		exec "$LCHAN_TOOLS/lchan-run" "$@"
		;;
	rsocket)
		export LD_PRELOAD="$RSPRELOAD"
		exec "$@"
		;;
	*) exec "$@" ;;
	esac
}

# The server SRV (a word list, @P@ its port) and then the client (@P@
# too) over TRANSPORT, on a port of their own: the client's output in LOG,
# the server's in LOG.server, the client's status in rc.
apps_pair() { # TRANSPORT LOG SRV -- CLIENT...
	_at=$1 _al=$2 _as=$3
	shift 4
	apps_port=$((apps_port + 1))
	_ak=tcp
	[ "$_at" = rsocket ] && _ak=rdma
	# shellcheck disable=SC2046 # the server command is a word list
	(over "$_at" timeout $((APPS_SECS * 8 + 40)) \
		$(echo "$_as" | sed "s/@P@/$apps_port/g")) >"$_al.server" 2>&1 &
	_asp=$!
	server_up "$_asp" "$_al" "$_ak" "$apps_port" || return 0
	_aa=
	for _x in "$@"; do
		_aa="$_aa$(printf '%s' "$_x" | sed "s/@P@/$apps_port/g")
"
	done
	# The client's words, one a line: its arguments may hold spaces.
	_ifs=$IFS
	IFS='
'
	# shellcheck disable=SC2086 # split at newlines only
	set -- $_aa
	IFS=$_ifs
	(over "$_at" timeout $((APPS_SECS * 8 + 20)) "$@") >"$_al" 2>&1
	rc=$?
	kill "$_asp" 2>/dev/null
	wait "$_asp" 2>/dev/null
	return 0
}

# A figure of a run that passed its own checks (_ok 1); a failed run's
# would be its program's error path, not a measurement.
apps_fig() { # DEV ROUND TOOL KEY VALUE
	[ "$_ok" = 1 ] && [ -n "$5" ] || return 0
	printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$APPS_TSV"
}

# Under lchan-run: how many of the client's connects went over lchan and
# how many fell back to TCP.
apps_ways() { # DEV ROUND TOOL TRANSPORT LOG
	[ "$4" = lchan ] || return 0
	apps_fig "$1" "$2" "$3.$4" lchan_connects "$(grep -c ': lchan$' "$5")"
	apps_fig "$1" "$2" "$3.$4" tcp_connects "$(grep -c ': TCP (' "$5")"
}

# A row's verdict: lchan's own failing fails the bench; a peer's (rsocket's
# preload with a program it cannot carry) is a row of the table, and is
# not run again in later rounds.
apps_broken=
apps_tap() { # DEV ROUND TOOL TRANSPORT OK LOG
	if [ "$5" = 1 ]; then
		tap "ok - bench: $1 apps round $2: $3 over $4"
	elif [ "$4" = lchan ]; then
		tap "not ok - bench: $1 apps round $2: $3 over $4: $(apps_status): $(why "$6")"
		failed=1
	else
		tap "ok - bench: $1 apps round $2: $3 over $4: $(apps_status) (reported in the table, not run again): $(why "$6")"
		apps_broken="$apps_broken $3.$4"
	fi
}

apps_status() {
	if [ "$rc" = 0 ]; then echo "errors in its report"; else status_of "$rc"; fi
}

# Whether TOOL over TRANSPORT failed as a peer before.
apps_skip() { # TOOL TRANSPORT
	case " $apps_broken " in *" $1.$2 "*) return 0 ;; esac
	return 1
}

# redis-benchmark, 50 clients, 64 B values, GET and SET, without
# pipelining and with -P 16: requests per second and p99 latency (ms).
apps_redis() { # DEV ADDR ROUND TRANSPORT
	for _rp in 1 16; do
		_tool=redis
		[ "$_rp" = 1 ] || _tool=redis-p$_rp
		_log=$LOGS/$1.apps.$_tool.$4.$3.log
		apps_skip "$_tool" "$4" && continue
		apps_pair "$4" "$_log" "$APPS_DIR/redis-server $APPS_DIR/redis.conf --port @P@ --bind $2" -- \
			redis-benchmark -h "$2" -p @P@ -c 50 -n "$REDIS_N" -d 64 -t get,set -P "$_rp" --csv
		_ok=0
		[ "$rc" = 0 ] && grep -q '^"GET",' "$_log" && grep -q '^"SET",' "$_log" &&
			! grep -q rror "$_log" && _ok=1
		for _op in set get; do
			_line=$(grep -i "^\"$_op\"," "$_log" | head -n 1)
			apps_fig "$1" "$3" "$_tool-$_op.$4" rps \
				"$(echo "$_line" | awk -F'"' '{ print $4 }')"
			apps_fig "$1" "$3" "$_tool-$_op.$4" p99_ms \
				"$(echo "$_line" | awk -F'"' '{ print $14 }')"
		done
		apps_ways "$1" "$3" "$_tool-get" "$4" "$_log"
		apps_tap "$1" "$3" "$_tool" "$4" "$_ok" "$_log"
	done
}

# iperf3, one stream and four: what the server received, Mbit/s.
apps_iperf() { # DEV ADDR ROUND TRANSPORT
	for _ip in 1 4; do
		_tool=iperf3-p$_ip
		_log=$LOGS/$1.apps.$_tool.$4.$3.log
		apps_skip "$_tool" "$4" && continue
		apps_pair "$4" "$_log" "iperf3 -s -1 -B $2 -p @P@" -- \
			iperf3 -c "$2" -p @P@ -t "$APPS_SECS" -P "$_ip" -J
		_bps=$(awk '/"sum_received"/ { f = 1 }
			f && /"bits_per_second"/ { gsub(/[^0-9.e+]/, "", $2); print $2; exit }' "$_log")
		_ok=0
		# rsockets' preload can end a run with nothing received.
		[ "$rc" = 0 ] && [ -n "$_bps" ] &&
			awk -v b="$_bps" 'BEGIN { exit !(b > 0) }' && _ok=1
		apps_fig "$1" "$3" "$_tool.$4" mbps "$(calc "$_bps / 1000000")"
		apps_ways "$1" "$3" "$_tool" "$4" "$_log"
		apps_tap "$1" "$3" "$_tool" "$4" "$_ok" "$_log"
	done
}

# wrk's p99 in ms ("99%   12.34ms", in us, ms or s).
wrk_p99() { # LOG
	awk '$1 == "99%" { v = $2; u = v; gsub(/[0-9.]/, "", u); sub(/[a-z]+$/, "", v)
		print (u == "us" ? v / 1000 : u == "s" ? v * 1000 : v); exit }' "$1"
}

# nginx (two workers) and wrk, 16 connections, a 4 KiB file: keep-alive,
# and one request per connection.
apps_nginx() { # DEV ADDR ROUND TRANSPORT
	for _nk in keepalive close; do
		_tool=nginx-$_nk
		_log=$LOGS/$1.apps.$_tool.$4.$3.log
		apps_skip "$_tool" "$4" && continue
		if [ "$_nk" = close ]; then
			apps_pair "$4" "$_log" "$APPS_DIR/nginx.sh $2 @P@" -- \
				wrk -t2 -c16 -d"${APPS_SECS}s" --latency -H "Connection: close" "http://$2:@P@/f4k"
		else
			apps_pair "$4" "$_log" "$APPS_DIR/nginx.sh $2 @P@" -- \
				wrk -t2 -c16 -d"${APPS_SECS}s" --latency "http://$2:@P@/f4k"
		fi
		_ok=0
		[ "$rc" = 0 ] && grep -q '^Requests/sec:' "$_log" &&
			! grep -q 'Socket errors\|Non-2xx' "$_log" && _ok=1
		apps_fig "$1" "$3" "$_tool.$4" rps \
			"$(awk '$1 == "Requests/sec:" { print $2 }' "$_log")"
		apps_fig "$1" "$3" "$_tool.$4" p99_ms "$(wrk_p99 "$_log")"
		apps_ways "$1" "$3" "$_tool" "$4" "$_log"
		apps_tap "$1" "$3" "$_tool" "$4" "$_ok" "$_log"
	done
}

apps_rows() { # DEV ADDR
	echo "rig: bench $1 apps" >/dev/kmsg 2>/dev/null
	printf 'dev\tround\ttool\tkey\tvalue\n' >"$APPS_TSV"
	mkdir -p "$APPS_DIR"
	# Debian's redis-server is redis-check-rdb by that name.
	ln -sf /usr/bin/redis-check-rdb "$APPS_DIR/redis-server"
	printf 'save ""\nappendonly no\nprotected-mode no\ndir %s\n' "$APPS_DIR" >"$APPS_DIR/redis.conf"
	head -c 4096 /dev/urandom >"$APPS_DIR/f4k"
	_run=
	[ "$(id -u)" = 0 ] && _run="user root root;"
	# nginx.sh ADDR PORT: nginx listening there.
	cat >"$APPS_DIR/nginx.sh" <<EOF
#!/bin/sh
sed "s/@A@/\$1/; s/@P@/\$2/" $APPS_DIR/nginx.conf.in >$APPS_DIR/nginx.conf
exec /usr/sbin/nginx -e stderr -c $APPS_DIR/nginx.conf
EOF
	chmod +x "$APPS_DIR/nginx.sh"
	cat >"$APPS_DIR/nginx.conf.in" <<EOF
daemon off;
worker_processes 2;
$_run
pid $APPS_DIR/nginx.pid;
error_log $APPS_DIR/error.log warn;
events { worker_connections 256; }
http {
  access_log off; sendfile on; tcp_nodelay on;
  client_body_temp_path $APPS_DIR/tb; proxy_temp_path $APPS_DIR/tp;
  fastcgi_temp_path $APPS_DIR/tf; uwsgi_temp_path $APPS_DIR/tu;
  scgi_temp_path $APPS_DIR/ts;
  server { listen @A@:@P@; root $APPS_DIR; }
}
EOF
	_ar=1
	while [ "$_ar" -le "$APPS_ROUNDS" ]; do
		for _at in $APPS_TRANSPORTS; do apps_redis "$1" "$2" "$_ar" "$_at"; done
		for _at in $APPS_TRANSPORTS; do apps_iperf "$1" "$2" "$_ar" "$_at"; done
		for _at in $APPS_TRANSPORTS; do apps_nginx "$1" "$2" "$_ar" "$_at"; done
		_ar=$((_ar + 1))
	done
}

# lchan.bench_only=connect (or fabric, or apps) on the kernel command
# line: only those rows; lchan.bench_rounds=N: rounds of the tables' rows.
only=$(kernel_arg bench_only "")
BENCH_ROUNDS=$(kernel_arg bench_rounds "$BENCH_ROUNDS")
{
	[ -n "$only" ] || echo "rounds: $BENCH_ROUNDS of every row of the tables (medians in the report)"
	echo "connect: $CONN_ROUNDS rounds of $CONN_N connections, $CONN_PAR in flight (lchan parallel), $CONN_ONE runs of cmtime -c 1, cm_seqtime $CONN_N one at a time"
	echo "fabric: $FAB_ROUNDS rounds; sizes $FAB_SIZES; $FAB_N_SMALL round trips below 64 KiB, $FAB_N_LARGE from 64 KiB"
	echo "libfabric: $(fi_info --version 2>&1 | tr '\n' ' ')"
} >>"$OUT/info.txt"

start=$(date +%s)
if [ "$only" = apps ]; then
	{
		echo "apps: $APPS_ROUNDS rounds on $LCHAN_RXE_DEV, ${APPS_SECS}s a run, redis-benchmark -n $REDIS_N; transports $APPS_TRANSPORTS"
		echo "programs: $(redis-benchmark --version 2>&1 | head -n 1); $(iperf3 --version 2>&1 | head -n 1); $(/usr/sbin/nginx -v 2>&1); $(wrk -v 2>&1 | head -n 1)"
	} >>"$OUT/info.txt"
	apps_rows "$LCHAN_RXE_DEV" "$LCHAN_RXE_ADDR"
	echo "rxe seconds: $(($(date +%s) - start))" >>"$OUT/info.txt"
	# A stream a killed server closed sends what it had for up to 10 s
	# (lchan(7)), and holds the module meanwhile.
	_w=0
	while [ "$(cat /sys/module/lchan/refcnt 2>/dev/null)" != 0 ] && [ $_w -lt 30 ]; do
		sleep 1
		_w=$((_w + 1))
	done
	echo "lchan unused ${_w}s after the last program" >>"$OUT/info.txt"
	if rmmod lchan; then
		tap "ok - bench: rmmod lchan (${_w}s after the last program)"
	else
		tap "not ok - bench: rmmod lchan: refcnt $(cat /sys/module/lchan/refcnt) 30 s after the last program"
		failed=1
	fi
	exit $failed
fi
[ -n "$only" ] || device "$LCHAN_RXE_DEV" "$LCHAN_RXE_ADDR"
[ -n "$only" ] && [ "$only" != connect ] || connect_rows "$LCHAN_RXE_DEV" "$LCHAN_RXE_ADDR"
[ -n "$only" ] && [ "$only" != fabric ] || fabric_rows "$LCHAN_RXE_DEV" "$LCHAN_RXE_ADDR" "$LCHAN_RXE_NETDEV"
echo "rxe seconds: $(($(date +%s) - start))" >>"$OUT/info.txt"
mid=$(date +%s)
[ -n "$only" ] || device "$LCHAN_SIW_DEV" "$LCHAN_SIW_ADDR"
[ -n "$only" ] && [ "$only" != connect ] || connect_rows "$LCHAN_SIW_DEV" "$LCHAN_SIW_ADDR"
[ -n "$only" ] && [ "$only" != fabric ] || fabric_rows "$LCHAN_SIW_DEV" "$LCHAN_SIW_ADDR" "$LCHAN_SIW_NETDEV"
echo "siw seconds: $(($(date +%s) - mid))" >>"$OUT/info.txt"

if rmmod lchan; then
	tap "ok - bench: rmmod lchan"
else
	tap "not ok - bench: rmmod lchan"
	failed=1
fi
exit $failed
