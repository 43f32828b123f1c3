# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Job "profile": where the time of a channel's set-up and of a 64-byte send
# ping-pong goes, lchan against cmtime and perftest on rxe0 (or siw0),
# sampled system-wide with perf (cpu-clock: the emulated CPU has no hardware
# counters).  Writes out/profile/:
#   <row>.txt   top symbols (kernel and user) with their share of samples
#   <row>.log   the benchmark's own output
# (on siw0, lchan.profile_dev=siw, the rows are named siw0.<row>).
# rig/profile.sh copies them to bench/profile/.
# shellcheck source=lib.sh
. "$LCHAN_SHARE/guest/lib.sh"

OUT=$LCHAN_OUT/profile
mkdir -p "$OUT"
PERF=$LCHAN_TOOLS/lchan_perf
PORT=18515
N=${LCHAN_PROFILE_N:-3000}
ADDR=$LCHAN_RXE_ADDR
ROW=
failed=0

if ! load_ko "$LCHAN_KO"; then
	tap "not ok - insmod lchan"
	exit 1
fi
# Kernel and module symbols for perf report.
echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid

listening() { # PORT
	_i=0
	while [ $_i -lt 150 ]; do
		rdma resource show cm_id 2>/dev/null | grep -q "LISTEN.*:$1 " &&
			return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

report() { # DATA PERF-REPORT-OPTIONS...
	_d=$1
	shift
	/usr/bin/perf report -i "$_d" --stdio --no-children -g none "$@" \
		2>/dev/null |
		grep -v '^#' | grep -v '^$'
}

# profile NAME "SERVER..." CLIENT...: the client runs under perf record -a,
# so the server, softirqs and kernel threads are in the samples too.
profile() {
	_name=$ROW$1 _srv=$2
	shift 2
	# shellcheck disable=SC2086 # the server command is a word list
	timeout 300 $_srv >"$OUT/$_name.server.log" 2>&1 &
	_spid=$!
	if ! listening "$PORT"; then
		tap "not ok - profile: $_name: no server"
		failed=1
		kill "$_spid" 2>/dev/null
		return
	fi
	timeout 300 /usr/bin/perf record -a $CALLS -F 1000 -o "/tmp/$_name.data" \
		-- "$@" >"$OUT/$_name.log" 2>&1
	_rc=$?
	# cmtime's server serves until it is stopped; the others are done.
	_i=0
	while kill -0 "$_spid" 2>/dev/null && [ $_i -lt 100 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	kill "$_spid" 2>/dev/null
	wait "$_spid"
	if [ $_rc != 0 ]; then
		tap "not ok - profile: $_name: exit status $_rc"
		failed=1
		return
	fi
	_data=/tmp/$_name.data
	{
		echo "# $*"
		echo "# perf record -a${CALLS:+ $CALLS} -F 1000 (cpu-clock), both processes, 2 vCPUs"
		echo "## samples by program and object"
		report "$_data" --sort comm,dso --percent-limit 1
		echo "## by symbol"
		report "$_data" --sort comm,sym --percent-limit 0.7
		# A busy-polling client spends most samples waiting; the kernel
		# work per operation is what differs between the two.
		echo "## kernel symbols only, as a share of kernel samples"
		report "$_data" --sort sym --dsos '[kernel.kallsyms],[lchan]' \
			--percentage relative --percent-limit 1
		# With call chains: each function with what it calls, as a
		# share of all samples (idle included).
		[ -z "$CALLS" ] || {
			echo "## functions with their callees, share of all samples"
			/usr/bin/perf report -i "$_data" --stdio --children \
				-g none --sort sym --percent-limit 0.5 2>/dev/null |
				grep -v '^#' | grep -v '^$'
		}
	} >"$OUT/$_name.txt"
	tap "ok - profile: $_name ($(grep -c . "$OUT/$_name.txt") lines)"
	rm -f "/tmp/$_name.data"
}

# lchan.profile_only=connect (or send) on the kernel command line: only
# those rows; lchan.profile_dev=siw: on siw0.
only=
read -r _cmdline </proc/cmdline
for _arg in $_cmdline; do
	case $_arg in
	lchan.profile_only=*) only=${_arg#*=} ;;
	lchan.profile_dev=siw) ADDR=$LCHAN_SIW_ADDR ROW=siw0. ;;
	esac
done

CALLS=
# Connection set-up: lchan_conntime's two phases with one connect in
# flight (400 connects, one at a time) beside cmtime (which connects all
# of its 200 at once), both sides of each in the samples.
if [ "$only" != send ]; then
	CONN=$LCHAN_TOOLS/lchan_conntime
	CALLS=-g
	profile connect.lchan "$CONN -s -a $ADDR -p $PORT -n 200 -P 1" \
		"$CONN" -c "$ADDR" -p "$PORT" -n 200 -P 1
	profile connect.cmtime "cmtime -b $ADDR -p $PORT -c 200" \
		cmtime -s "$ADDR" -p "$PORT" -c 200
	# The same connects over a link (Documentation/link.md): made by the
	# first connect, used by the rest.
	echo 1 >/sys/module/lchan/parameters/links
	profile connect.lchan.link "$CONN -s -a $ADDR -p $PORT -n 200 -P 1" \
		"$CONN" -c "$ADDR" -p "$PORT" -n 200 -P 1
	echo 0 >/sys/module/lchan/parameters/links
	CALLS=
fi
if [ "$only" != connect ]; then
	profile send_lat.doorbell.busy "$PERF -s -a $ADDR -p $PORT" \
		"$PERF" -c "$ADDR" -p "$PORT" -t send_lat -S 64 -n "$N"
	profile send_lat.poller.busy "$PERF -s -a $ADDR -p $PORT --mode poller" \
		"$PERF" -c "$ADDR" -p "$PORT" -t send_lat -S 64 -n $((N / 10)) \
		--mode poller
	profile ib_send_lat.busy "ib_send_lat -R -p $PORT -s 64 -n $N" \
		ib_send_lat -R -p "$PORT" -s 64 -n "$N" "$ADDR"
	profile send_bw.doorbell "$PERF -s -a $ADDR -p $PORT" \
		"$PERF" -c "$ADDR" -p "$PORT" -t send_bw -S 64 -n $((N * 5))
	profile ib_send_bw "ib_send_bw -R -p $PORT -s 64 -n $((N * 5))" \
		ib_send_bw -R -p "$PORT" -s 64 -n $((N * 5)) "$ADDR"
fi

rmmod lchan || failed=1
exit $failed
