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
#                     where lchan is loaded; cm_seqtime does not use
#                     lchan, tcp_echo only with -L)
#   the provider      FI_LOG_LEVEL=warn fi_info -p lchan: the provider's
#                     own warning that lchan is not loaded
CHECK=tools
# shellcheck source-path=SCRIPTDIR source=checklib.sh
. "$(dirname "$0")/checklib.sh"

# The exit statuses of tools/cli.h.
EXIT_USAGE=2
EXIT_NO_MODULE=3

# Per tool: whether it takes -p (p) and -S (S), then the arguments of a
# run that opens nothing before /dev/lchan (a server, mostly).  A tool of
# the Makefile missing here fails the check.
declare -A tools=(
	[lchan_perf]="pS -s" [lchan_msg_perf]="pS -s" [lchan_pingpong]="pS -s"
	[lchan_echo]="pS -s" [tcp_echo]="pS -s -L" [lchan_conntime]="p -s -a 127.0.0.1"
	[lchan_wire]="pS -s" [lchanctl]="-" [cm_seqtime]="p -a 127.0.0.1"
	[lchan_interop]="pS rping -s -a 127.0.0.1"
)
declare -A no_lchan=([cm_seqtime]="rdma_cm alone")

t=$(check_dir tools-check)
bin=$t/tools
# The library where the tools link it (lib/), the tools with the bench's
# own (tools/'s bench target) and the provider into $t.
check_run "$t/build-lib.log" "lib/ does not build" make --no-print-directory -j2 -C lib
check_run "$t/build-tools.log" "tools/ does not build" make --no-print-directory -j2 -C tools OUT="$t/tools" all bench
check_run "$t/build-fabric.log" "fabric/ does not build" make --no-print-directory -j2 -C fabric OUT="$t/fabric"
export LD_LIBRARY_PATH=$REPO/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# A case: passed without WHY, else failed, with the tool's output.
result() { # WHAT WHY
	[ -n "$2" ] || { ok "$1"; return; }
	local lines=()
	[ -z "$out" ] || mapfile -t lines < <(head -n 5 <<<"$out" | sed 's/^/stdout: /')
	[ -z "$err" ] || mapfile -t -O "${#lines[@]}" lines < <(head -n 5 <<<"$err" | sed 's/^/stderr: /')
	notok "$1: $2" "${lines[@]}"
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
	result "$1 $2: the usage on stdout, exit 0" "$why"
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
	result "$tool $*: $what, exit $EXIT_USAGE" "$why"
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
	result "$tool${*:+ $*}: no lchan module: one line, exit $EXIT_NO_MODULE" "$why"
}

progs=$(check_progs PROGS BENCH_PROGS)
[ -n "$progs" ] || check_fail "no PROGS in tools/Makefile"
module=
[ -e /dev/lchan ] && module=loaded
ntools=0
for tool in $progs; do
	ntools=$((ntools + 1))
	if [ -z "${tools[$tool]:-}" ]; then
		out='' err=''
		result "$tool: listed in this check" "a tool of tools/Makefile without an entry here"
		continue
	fi
	read -r takes args <<<"${tools[$tool]}"
	read -ra args <<<"$args"
	check_help "$tool" --help
	check_help "$tool" -h
	check_usage "$tool" "an unknown option" "--no-such-option" --no-such-option "${args[@]}"
	if [[ $takes == *p* ]]; then
		check_usage "$tool" "a missing value" "'p'" "${args[@]}" -p
		check_usage "$tool" "a bad port" "-p" "${args[@]}" -p 0
		check_usage "$tool" "a bad port" "-p" "${args[@]}" -p 70000
	fi
	if [[ $takes == *S* ]]; then
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
	result "fi_info -p lchan" "fi_info is not installed (rig/setup.sh: libfabric-bin)"
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
	result "FI_LOG_LEVEL=warn fi_info -p lchan: the provider says lchan is not loaded" "$why"
fi
tap_done "$ntools tools, $tap_n cases: --help, usage errors, ports, sizes, no module${module:+ (module loaded: not run)}, provider log" "$tap_failed of $tap_n cases"
