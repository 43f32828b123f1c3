#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: lchan against raw verbs (perftest), TCP (sockperf, qperf),
# rsockets (rstream) and libfabric on rxe0 and siw0, in one guest run (job
# "bench", rig/guest/bench.sh), then the two-machine table (rig/two-node.sh
# with LCHAN_2NODE_ONLY=table); the guest's raw data (rows.tsv, rounds.tsv,
# sweep.tsv, connect.tsv, fabric.tsv, info.txt) is kept in bench/<kernel>/
# (LCHAN_BENCH_DIR) and rig/report/ makes the reports from it, then
# bench/README.md and its plots over every kernel's data.
#   rig/bench.sh            build, boot, measure, report
#   rig/bench.sh --report   the reports again from the kept data (no guest)
#   rig/bench.sh --keep JOB NAME   after a guest run of JOB (pollbench,
#                 poolbench): its rows.tsv as NAME.tsv (msg.tsv, if any,
#                 as NAME-msg.tsv), what ran in NAME-info.txt, then
#                 bench/README.md again
# Knobs (bench/README.md, "Running them"): LCHAN_BENCH_TIMEOUT (guest time
# limit, default 2400 s), LCHAN_BENCH_QUICK=1, LCHAN_BENCH_ROUNDS=N,
# LCHAN_BENCH_ONLY=connect|fabric|2node (those rows alone; a whole run
# makes them too) or apps (unmodified programs, only this way).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO"

dest=${LCHAN_BENCH_DIR:-$REPO/bench/$(rig_kernel)}
report_only=0
case ${1:-} in
--report) report_only=1 ;;
--keep) [ $# = 3 ] || rig_die "usage: $0 --keep JOB NAME" ;;
'') ;;
*) rig_die "usage: $0 [--report | --keep JOB NAME]" ;;
esac

# The commit the measured code came from; -dirty when the tree has changes
# outside bench/ (the figures being written there are not the code's).
commit_of_tree() {
	local c
	c=$(git -C "$REPO" describe --always 2>/dev/null) || { echo unknown; return; }
	[ -z "$(git -C "$REPO" status --porcelain -- . ':(exclude)bench' 2>/dev/null)" ] ||
		c=$c-dirty
	echo "$c"
}

# What ran where, for the info file of a guest run RUN kept in $dest.
provenance() { # RUN
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit: $(commit_of_tree)"
	echo "host cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1) x $(nproc)"
	echo "qemu: $(qemu-system-x86_64 --version | head -n1)"
	echo "guest run: $(tr "\n" " " <"$1/summary" 2>/dev/null)"
}

# ------------------------------------------------------------- measuring

measure() {
	local rc=0 run
	run=$(rig_run_dir bench)
	rig_build_for_guest module lib tools bench-tools fabric
	local append=${LCHAN_APPEND:-} load sampler
	[ "${LCHAN_BENCH_QUICK:-0}" != 1 ] || append="$append lchan.bench_quick=1"
	[ -z "${LCHAN_BENCH_ONLY:-}" ] || append="$append lchan.bench_only=$LCHAN_BENCH_ONLY"
	[ -z "${LCHAN_BENCH_ROUNDS:-}" ] || append="$append lchan.bench_rounds=$LCHAN_BENCH_ROUNDS"
	# The guest shares the host: note how busy the host was meanwhile.
	load=$(mktemp)
	while sleep 10; do
		echo "$(cut -d ' ' -f 1 /proc/loadavg) $(pgrep -c -x qemu-system-x86 || true)"
	done >"$load" &
	sampler=$!
	LCHAN_APPEND=$append "$RIG_DIR/run-vm.sh" bench "${LCHAN_BENCH_TIMEOUT:-2400}" || rc=$?
	kill "$sampler" 2>/dev/null || true
	wait "$sampler" 2>/dev/null || true
	if [ ! -s "$run/bench/rows.tsv" ]; then
		rig_log "the guest wrote no results; see $run"
		rm -f "$load"
		return 1
	fi
	mkdir -p "$dest"
	info=$dest/info.txt
	case ${LCHAN_BENCH_ONLY:-} in
	connect | fabric | apps)
		info=$dest/$LCHAN_BENCH_ONLY-info.txt
		cp "$run/bench/info.txt" "$info"
		;;
	*)
		cp "$run/bench/rows.tsv" "$run/bench/rounds.tsv" "$run/bench/sweep.tsv" \
			"$run/bench/info.txt" "$dest/"
		# The connect and fabric tables of this run replace a partial
		# run's; its own info.txt then describes them.
		[ ! -s "$run/bench/connect.tsv" ] || rm -f "$dest/connect-info.txt"
		[ ! -s "$run/bench/fabric.tsv" ] || rm -f "$dest/fabric-info.txt"
		;;
	esac
	# Each table from a run that made it: a whole run, or that table's.
	case ${LCHAN_BENCH_ONLY:-} in
	'' | connect) cp "$run/bench/connect.tsv" "$dest/" ;;
	esac
	case ${LCHAN_BENCH_ONLY:-} in
	'' | fabric) cp "$run/bench/fabric.tsv" "$dest/" ;;
	esac
	[ "${LCHAN_BENCH_ONLY:-}" != apps ] || cp "$run/bench/apps.tsv" "$dest/"
	{
		provenance "$run"
		awk '{ s += $1; if ($1 > m) m = $1; if ($2 > q) q = $2 }
			END { if (NR) printf "host load (1-min average, every 10 s): mean %.2f, max %.2f on %d cores; qemu guests at once: up to %d\n",
				s / NR, m, '"$(nproc)"', q }' "$load"
		echo "logs: ${run#"$REPO"/}/bench/logs"
	} >>"$info"
	rm -f "$load"
	return "$rc"
}

# ---------------------------------------------------------------- report

# rows.tsv, sweep.tsv, info.txt -> results.md, results.json; connect.tsv
# and fabric.tsv -> theirs; then bench/README.md.
report() {
	if [ -z "${LCHAN_BENCH_ONLY:-}" ]; then
		[ -s "$dest/rows.tsv" ] || rig_die "no $dest/rows.tsv: run make bench first"
		rig_report bench "$dest"
		rig_log "report: $dest/results.md, results.json"
	fi
	if [ -s "$dest/connect.tsv" ]; then
		rig_report connect "$dest"
		rig_log "report: $dest/connect.md, connect.json"
	fi
	if [ -s "$dest/fabric.tsv" ]; then
		rig_report fabric "$dest"
		rig_log "report: $dest/fabric.md, fabric.json"
	fi
	if [ -s "$dest/apps.tsv" ]; then
		rig_report apps "$dest"
		rig_log "report: $dest/apps.md, apps.json"
	fi
	readme
}

# bench/README.md and its plots, from every kernel's data.
readme() {
	rig_report readme --plots "${dest%/*}"
	rig_log "report: ${dest%/*}/README.md"
}

# A guest's table SRC kept as $dest/NAME.tsv, what ran (guest run RUN) in
# NAME-info.txt.
keep() { # SRC NAME RUN
	[ -s "$1" ] || { rig_log "no $1: the guest wrote no rows"; return 1; }
	mkdir -p "$dest"
	cp "$1" "$dest/$2.tsv"
	{
		echo "kernel: $("$RIG_DIR/kver.sh")"
		provenance "$3"
	} >"$dest/$2-info.txt"
	rig_log "kept: $dest/$2.tsv"
}

# The two-machine table (guest/2node.sh, in guest b).
two_machines() {
	local run
	run=$(LCHAN_KERNEL=${LCHAN_KERNEL:-$(rig_kernel)} rig_run_dir 2node)
	LCHAN_2NODE_ONLY=table LCHAN_2NODE_TABLE_ROUNDS=${LCHAN_BENCH_ROUNDS:-3} \
		"$RIG_DIR/two-node.sh" || return 1
	keep "$run/b/two-machines.tsv" two-machines "$run/b"
}

rc=0
if [ "${1:-}" = --keep ]; then
	run=$(rig_run_dir "$2")
	keep "$run/$2/rows.tsv" "$3" "$run" || exit 1
	# The message rows of a job that has them (pollbench).
	if [ -s "$run/$2/msg.tsv" ]; then
		cp "$run/$2/msg.tsv" "$dest/$3-msg.tsv"
		rig_log "kept: $dest/$3-msg.tsv"
	fi
	readme
	exit
fi
if [ "$report_only" = 0 ] && [ "${LCHAN_BENCH_ONLY:-}" = 2node ]; then
	two_machines || exit 1
	readme
	exit
fi
if [ "$report_only" = 0 ]; then
	measure || rc=$?
	[ -s "$dest/rows.tsv" ] || [ -s "$dest/connect.tsv" ] || [ -s "$dest/fabric.tsv" ] ||
		[ -s "$dest/apps.tsv" ] || exit 1
	[ -n "${LCHAN_BENCH_ONLY:-}" ] || two_machines || rc=1
fi
report
exit "$rc"
