#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
# Host check: every program of tools/Makefile (PROGS and BENCH_PROGS)
# keeps the command-line conventions of tools/cli.h, and the provider
# says why it offers no fabric.  Built from the sources into
# build/tools-check, run with a time limit each:
#
#   -h, --help        the usage on stdout ("usage: TOOL ..."), nothing on
#                     stderr, exit 0
#   usage errors      an unknown option, a missing value (-p), and where
#                     the tool takes them a bad port (-p 0, -p 70000) and
#                     a bad size (-S x): nothing on stdout, one line on
#                     stderr "TOOL: ..." naming the option, at most a
#                     second "Try 'TOOL --help'.", exit 2
#   no module         run for real where /dev/lchan is absent (as on
#                     this host): one line "TOOL: PATH: ...: is the lchan
#                     module loaded? (modprobe lchan)", exit 3 (skipped
#                     where lchan is loaded; tcp_echo and cm_seqtime do
#                     not use lchan)
#   the provider      FI_LOG_LEVEL=warn fi_info -p lchan: the provider's
#                     own warning that lchan is not loaded
#
# One TAP line per case.  The last line of output is the summary; exit
# status 0 pass, 1 fail.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO" || exit 1

t=$B/tools-check
bin=$t/tools
fail() { echo "tools: FAIL: $*"; exit 1; }

# The exit statuses of tools/cli.h.
EXIT_USAGE=2
EXIT_NO_MODULE=3

# Per tool: the arguments of a run that opens nothing before /dev/lchan
# (a server, mostly), whether it takes -p and -S, and whether it uses
# lchan.  A tool of the Makefile missing here fails the check.
declare -A run_args=(
	[lchan_perf]="-s" [lchan_msg_perf]="-s" [lchan_pingpong]="-s"
	[lchan_echo]="-s" [tcp_echo]="-s" [lchan_conntime]="-s -a 127.0.0.1"
	[lchan_wire]="-s" [lchanctl]="" [cm_seqtime]="-a 127.0.0.1"
	[lchan_interop]="rping -s -a 127.0.0.1"
)
declare -A has_port=(
	[lchan_perf]=1 [lchan_msg_perf]=1 [lchan_pingpong]=1 [lchan_echo]=1
	[tcp_echo]=1 [lchan_conntime]=1 [lchan_wire]=1 [lchanctl]=0
	[cm_seqtime]=1 [lchan_interop]=1
)
declare -A has_size=(
	[lchan_perf]=1 [lchan_msg_perf]=1 [lchan_pingpong]=1 [lchan_echo]=1
	[tcp_echo]=1 [lchan_conntime]=0 [lchan_wire]=1 [lchanctl]=0
	[cm_seqtime]=0 [lchan_interop]=1
)
declare -A no_lchan=([tcp_echo]="plain TCP" [cm_seqtime]="rdma_cm alone")

rm -rf "$t"
mkdir -p "$t"
# The library where the tools link it (lib/), the tools with the bench's
# own (tools/'s bench target) and the provider into $t.
for d in lib tools fabric; do
	o=()
	[ "$d" = lib ] || o=(OUT="$t/$d")
	[ "$d" = tools ] && o+=(all bench)
	if ! make --no-print-directory -j2 -C "$d" "${o[@]}" >"$t/build-$d.log" 2>&1; then
		tail -n 20 "$t/build-$d.log" | sed 's/^/#   /'
		fail "$d/ does not build (log: $t/build-$d.log)"
	fi
done
export LD_LIBRARY_PATH=$REPO/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

n=0
bad=0
tap() { # OK? WHAT [WHY]
	n=$((n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $n - $2"
	else
		bad=$((bad + 1))
		echo "not ok $n - $2: $3"
		[ -z "$out" ] || printf '%s\n' "$out" | head -n 5 | sed 's/^/#   stdout: /'
		[ -z "$err" ] || printf '%s\n' "$err" | head -n 5 | sed 's/^/#   stderr: /'
	fi
}
skip() { # WHAT WHY
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

# TOOL ARGS...: its stdout, stderr and exit status, within 10 s.
run() {
	local tool=$1
	shift
	out=$(timeout -k 2 10 "$bin/$tool" "$@" 2>"$t/stderr" </dev/null)
	rc=$?
	err=$(cat "$t/stderr")
}

lines() { [ -z "$1" ] && echo 0 || printf '%s\n' "$1" | wc -l; }

# Exit 0, the usage on stdout, nothing on stderr.
check_help() { # TOOL FLAG
	local why=
	run "$1" "$2"
	if [ "$rc" != 0 ]; then
		why="exit status $rc, not 0"
	elif [ -n "$err" ]; then
		why="output on stderr"
	elif [[ $out != "usage: $1 "* ]]; then
		why="stdout does not start with 'usage: $1 '"
	fi
	tap "$([ -z "$why" ] && echo 1)" "$1 $2: the usage on stdout, exit 0" "$why"
}

# Exit 2, nothing on stdout, "TOOL: ...WANT..." and at most the hint.
check_usage() { # TOOL WHAT WANT ARGS...
	local tool=$1 what=$2 want=$3 why='' first second nl
	shift 3
	run "$tool" "$@"
	nl=$(lines "$err")
	first=$(printf '%s\n' "$err" | sed -n 1p)
	second=$(printf '%s\n' "$err" | sed -n 2p)
	if [ "$rc" != "$EXIT_USAGE" ]; then
		why="exit status $rc, not $EXIT_USAGE"
	elif [ -n "$out" ]; then
		why="output on stdout"
	elif [ "$nl" -lt 1 ] || [ "$nl" -gt 2 ]; then
		why="$nl lines on stderr, not 1 or 2"
	elif [[ $first != "$tool: "* ]]; then
		why="the message does not start with '$tool: '"
	elif [[ $first != *"$want"* ]]; then
		why="the message does not name '$want'"
	elif [ "$nl" = 2 ] && [ "$second" != "Try '$tool --help'." ]; then
		why="the second line is not \"Try '$tool --help'.\""
	fi
	tap "$([ -z "$why" ] && echo 1)" "$tool $*: $what, exit $EXIT_USAGE" "$why"
}

# Without the module: one line saying so, exit 3.
check_no_module() { # TOOL ARGS...
	local tool=$1 why=
	shift
	run "$tool" "$@"
	if [ "$rc" != "$EXIT_NO_MODULE" ]; then
		why="exit status $rc, not $EXIT_NO_MODULE"
	elif [ -n "$out" ]; then
		why="output on stdout"
	elif [ "$(lines "$err")" != 1 ]; then
		why="$(lines "$err") lines on stderr, not 1"
	elif ! [[ $err =~ ^"$tool: /".*": is the lchan module loaded? (modprobe lchan)"$ ]]; then
		why="not '$tool: PATH: ...: is the lchan module loaded? (modprobe lchan)'"
	fi
	tap "$([ -z "$why" ] && echo 1)" "$tool${*:+ $*}: no lchan module: one line, exit $EXIT_NO_MODULE" "$why"
}

progs=$(sed -n 's/^\(BENCH_\)\?PROGS *:\?= *//p' tools/Makefile | tr '\n' ' ')
[ -n "$progs" ] || fail "no PROGS in tools/Makefile"
module=
[ -e /dev/lchan ] && module=loaded
ntools=0
for tool in $progs; do
	ntools=$((ntools + 1))
	if [ -z "${run_args[$tool]+set}" ]; then
		out='' err=''
		tap 0 "$tool: listed in this check" "a tool of tools/Makefile without an entry here"
		continue
	fi
	read -ra args <<<"${run_args[$tool]}"
	check_help "$tool" --help
	check_help "$tool" -h
	check_usage "$tool" "an unknown option" "--no-such-option" --no-such-option "${args[@]}"
	if [ "${has_port[$tool]}" = 1 ]; then
		check_usage "$tool" "a missing value" "'p'" "${args[@]}" -p
		check_usage "$tool" "a bad port" "-p" "${args[@]}" -p 0
		check_usage "$tool" "a bad port" "-p" "${args[@]}" -p 70000
	fi
	if [ "${has_size[$tool]}" = 1 ]; then
		check_usage "$tool" "a bad size" "-S" "${args[@]}" -S x
	fi
	if [ -n "${no_lchan[$tool]:-}" ]; then
		skip "$tool: no lchan module" "it uses ${no_lchan[$tool]}, not lchan"
	elif [ -n "$module" ]; then
		skip "$tool: no lchan module" "/dev/lchan is there"
	else
		check_no_module "$tool" "${args[@]}"
	fi
done

# The provider: why fi_info -p lchan finds nothing.
if [ -n "$module" ]; then
	skip "fi_info -p lchan: the provider says lchan is not loaded" "/dev/lchan is there"
elif ! command -v fi_info >/dev/null; then
	out='' err=''
	tap 0 "fi_info -p lchan" "fi_info is not installed (rig/setup.sh: libfabric-bin)"
else
	out=$(FI_PROVIDER_PATH=$t/fabric FI_LOG_LEVEL=warn timeout -k 2 10 fi_info -p lchan 2>"$t/stderr")
	rc=$?
	err=$(grep ':lchan:' "$t/stderr")
	why=
	if [ "$rc" = 0 ]; then
		why="fi_info found a fabric without /dev/lchan"
	elif ! grep -q ':lchan:.*<warn> /dev/lchan: no such device: is the lchan module loaded? (modprobe lchan)$' <<<"$err"; then
		why="no warning of the provider's that lchan is not loaded"
		err=$(cat "$t/stderr")
	fi
	tap "$([ -z "$why" ] && echo 1)" "FI_LOG_LEVEL=warn fi_info -p lchan: the provider says lchan is not loaded" "$why"
fi
echo "1..$n"

if [ "$bad" != 0 ]; then
	echo "tools: FAIL: $bad of $n cases"
	exit 1
fi
echo "tools: $ntools tools, $n cases: --help, usage errors, ports, sizes, no module${module:+ (module loaded: not run)}, provider log"
