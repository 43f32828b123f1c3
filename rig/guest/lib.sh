# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# Helpers for the guest jobs (busybox sh), sourced from the 9p share.
# /etc/lchan.env is written by the guest /init.

# shellcheck disable=SC1091 # written by the guest /init
. /etc/lchan.env

TAP=$LCHAN_OUT/tap.txt
# kselftest's KSFT_SKIP: a test program that skipped as a whole.
ksft_skip=4
mkdir -p "$LCHAN_OUT/logs"

# The value of lchan.NAME=VALUE on the kernel command line, else DEFAULT.
kernel_arg() { # NAME DEFAULT
	_ka=$2
	read -r _kcmd </proc/cmdline
	for _kw in $_kcmd; do
		case $_kw in
		"lchan.$1="*) _ka=${_kw#*=} ;;
		esac
	done
	echo "$_ka"
}

# The end of a benchmark job: unload lchan, the job's verdict line, and
# its exit status (FAILED, or 1 when rmmod fails).
bench_job_end() { # NAME FAILED
	_bf=$2
	rmmod lchan || { tap "not ok - $1: rmmod lchan"; _bf=1; }
	if [ "$_bf" = 0 ]; then
		tap "ok - $1"
	else
		tap "not ok - $1: a run failed"
	fi
	exit "$_bf"
}

# DEV's counters that are not zero, on one line (rxe has them: send_err
# counts the packets its network stack refused, e.g. while the link is
# down, completer_retry_err its retransmits).
dev_counters() { # DEV
	echo "$1 counters: $(cd "/sys/class/infiniband/$1/ports/1/hw_counters" 2>/dev/null && grep -H . -- * 2>/dev/null | grep -v ':0$' | tr '\n' ' ')"
}

# Print a TAP line to the console and append it to out/tap.txt.
tap() {
	echo "$*" | tee -a "$TAP"
}

# Load the modules a .ko file depends on, then insmod it (insmod alone does
# not resolve dependencies; busybox modinfo only looks modules up by name).
load_ko() {
	_ko=$1
	shift
	[ -f "$_ko" ] || { echo "load_ko: $_ko does not exist" >&2; return 1; }
	for _d in $(strings "$_ko" | sed -n 's/^depends=//p' | tr ',' ' '); do
		modprobe "$_d" || {
			echo "load_ko: cannot load $_d, needed by $_ko: add it to MODULES in rig/initramfs.sh" >&2
			return 1
		}
	done
	insmod "$_ko" "$@"
}

# The per-binary timeout: kselftest's "settings" file (timeout=N) in the test
# directory wins over lchan.test_timeout from the kernel command line.
test_timeout() {
	_t=$(sed -n 's/^timeout=\([0-9][0-9]*\)$/\1/p' "$1/settings" 2>/dev/null | tail -n1)
	echo "${_t:-${LCHAN_TEST_TIMEOUT:-600}}"
}

# Run one test program in its own process group, so that a timeout or the
# end of the test also ends whatever it left running (a leftover holding
# the output pipe would stall the job).  Sets /tmp/rig-rc, and creates
# /tmp/rig-timedout when the time limit hit.
run_one() { # PROG LIMIT
	setsid "$1" 2>&1 &
	_pid=$!
	(
		# Killed when the program ends: its sleep goes with it.
		trap 'kill "$_sl" 2>/dev/null; exit 0' TERM
		sleep "$2" &
		_sl=$!
		wait "$_sl" || exit 0
		: >/tmp/rig-timedout
		kill -s TERM -- "-$_pid"
		sleep 10
		kill -s KILL -- "-$_pid"
	) >/dev/null 2>&1 &
	_wd=$!
	wait "$_pid"
	echo $? >/tmp/rig-rc
	kill "$_wd" 2>/dev/null
	kill -s KILL -- "-$_pid" 2>/dev/null
	return 0
}

# Run every executable file in DIR (sorted), each under its own time limit,
# with its output (TAP on stdout, diagnostics on stderr) going to the
# console, out/tap.txt and out/logs/NAME.log.  A program that crashes, times
# out or exits non-zero without a "not ok" line of its own gets one here.
# Returns non-zero when anything failed.  SUFFIX (optional) goes into the
# log names (a soak keeps each run's logs) and the failed programs are
# listed in /tmp/rig-failed.
# Each test's time, behind its result line (where a lane's minutes go).
stamp() {
	awk '
	function now(u) { getline u <"/proc/uptime"; close("/proc/uptime"); split(u, f, " "); return f[1] }
	/^#  RUN / { t0 = now() }
	{ print; fflush() }
	/^(ok|not ok) [0-9]/ && t0 != "" { printf "#   took %.1f s\n", now() - t0; fflush(); t0 = "" }'
}

run_tests() { # DIR [SUFFIX]
	_dir=$1
	_sfx=${2:-}
	: >/tmp/rig-failed
	_limit=$(test_timeout "$_dir")
	_failed=0
	_ran=0
	for _t in "$_dir"/*; do
		[ -f "$_t" ] && [ -x "$_t" ] || continue
		_name=${_t##*/}
		_log=$LCHAN_OUT/logs/$_name$_sfx.log
		_ran=$((_ran + 1))
		tap "# selftest: $_name (timeout ${_limit}s)"
		# Lets the host tell which program a kernel complaint came under.
		echo "rig: selftest $_name" >/dev/kmsg 2>/dev/null
		_start=$(date +%s)
		rm -f /tmp/rig-timedout /tmp/rig-rc
		(cd "$_dir" && run_one "$_t" "$_limit") | stamp | tee "$_log" | tee -a "$TAP"
		_rc=$(cat /tmp/rig-rc 2>/dev/null || echo 255)
		_secs=$(($(date +%s) - _start))
		_results=$(grep -cE '^(ok|not ok)( |$)' "$_log")
		_notok=$(grep -cE '^not ok( |$)' "$_log")
		if [ -e /tmp/rig-timedout ]; then
			tap "not ok - $_name: timed out after ${_limit}s"
			_failed=1
		elif [ "$_rc" = "$ksft_skip" ] && [ "$_results" = 0 ]; then
			tap "ok - $_name # SKIP whole program skipped (exit status $ksft_skip)"
		elif [ "$_rc" != 0 ] && [ "$_rc" != "$ksft_skip" ]; then
			[ "$_notok" != 0 ] ||
				tap "not ok - $_name: exit status $_rc$( [ "$_rc" -gt 128 ] && echo " (signal $((_rc - 128)))")"
			_failed=1
		elif [ "$_results" = 0 ]; then
			tap "not ok - $_name: printed no TAP result"
			_failed=1
		elif [ "$_notok" != 0 ]; then
			_failed=1
		fi
		if [ -e /tmp/rig-timedout ] || [ "$_notok" != 0 ] ||
			{ [ "$_rc" != 0 ] && [ "$_rc" != "$ksft_skip" ]; } ||
			{ [ "$_rc" = 0 ] && [ "$_results" = 0 ]; }; then
			echo "$_name" >>/tmp/rig-failed
		fi
		tap "# selftest: $_name exit status $_rc after ${_secs}s"
	done
	if [ "$_ran" = 0 ]; then
		tap "not ok - no test programs in $_dir"
		return 1
	fi
	return $_failed
}

# Wait (150 looks, 0.1 s apart) for a listener on PORT: rdma_cm (lchan,
# perftest -R) or TCP.  Gives up early when the server PID (if given) is gone.
wait_listen() { # rdma|tcp PORT [PID]
	_i=0
	while [ $_i -lt 150 ]; do
		if [ "$1" = rdma ]; then
			rdma resource show cm_id 2>/dev/null | grep -q "LISTEN.*:$2 " && return 0
		else
			ss -ltn 2>/dev/null | grep -q ":$2 " && return 0
		fi
		if [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null; then
			echo "rig: the server ended before it listened" >&2
			return 1
		fi
		sleep 0.1
		_i=$((_i + 1))
	done
	echo "rig: nothing listens on $1 port $2" >&2
	return 1
}

# Print a sysfs tree with its values, one "path = value" line per file.
show_sysfs() {
	find "$1" | sort | while read -r _p; do
		if [ -L "$_p" ]; then
			echo "$_p -> $(readlink "$_p")"
		elif [ -d "$_p" ]; then
			echo "$_p/"
		else
			echo "$_p = $(sed '2,$s/^/    /' "$_p" 2>&1)"
		fi
	done
}
