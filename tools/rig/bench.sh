#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: lchan against raw verbs (perftest) and TCP (sockperf,
# qperf) on the same device and address, in one guest run (job "bench",
# tools/rig/guest/bench.sh), on rxe0 and then siw0; and liblchan's message
# API against lchan itself, rsockets and TCP (rstream).  Then the report, in
# bench/<kernel>/ (the guest kernel, tools/rig/kernels: KERNEL= of make):
#
#   results.md    tables with lchan/peer ratios, the issues' goals
#   results.json  the same, machine-readable
#   latency.png   latency against message size (lchan, verbs, TCP)
#   rows.tsv, sweep.tsv, info.txt   the guest's raw data
#
#   tools/rig/bench.sh            build, boot, measure, report
#   tools/rig/bench.sh --report   report again from the .tsv files (no guest)
#
# LCHAN_BENCH_DIR: where the report goes (default bench/<kernel>/).
# LCHAN_BENCH_TIMEOUT: guest time limit in seconds (default 1500).
# LCHAN_BENCH_QUICK=1: few iterations (a smoke test of the bench itself).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$REPO"

dest=${LCHAN_BENCH_DIR:-$REPO/bench/$(rig_kernel)}
report_only=0
case ${1:-} in
--report) report_only=1 ;;
'') ;;
*) rig_die "usage: $0 [--report]" ;;
esac

# ------------------------------------------------------------- measuring

measure() {
	local rc=0 run
	run=$(rig_run_dir bench)
	"$RIG_DIR/setup.sh"
	KVER=$("$RIG_DIR/kver.sh")
	export KVER
	make -s KVER="$KVER" KDIR="/usr/src/linux-headers-$KVER" module lib tools
	local append=${LCHAN_APPEND:-} load sampler
	[ "${LCHAN_BENCH_QUICK:-0}" != 1 ] || append="$append lchan.bench_quick=1"
	# The guest shares the host: note how busy the host was meanwhile.
	load=$(mktemp)
	while sleep 10; do
		echo "$(cut -d ' ' -f 1 /proc/loadavg) $(pgrep -c -x qemu-system-x86 || true)"
	done >"$load" &
	sampler=$!
	LCHAN_APPEND=$append "$RIG_DIR/run-vm.sh" bench "${LCHAN_BENCH_TIMEOUT:-1500}" || rc=$?
	kill "$sampler" 2>/dev/null || true
	wait "$sampler" 2>/dev/null || true
	if [ ! -s "$run/bench/rows.tsv" ]; then
		rig_log "the guest wrote no results; see $run"
		rm -f "$load"
		return 1
	fi
	mkdir -p "$dest"
	cp "$run/bench/rows.tsv" "$run/bench/sweep.tsv" "$run/bench/info.txt" "$dest/"
	{
		echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "commit: $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)"
		echo "host cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1) x $(nproc)"
		echo "qemu: $(qemu-system-x86_64 --version | head -n1)"
		echo "guest run: $(tr "\n" " " <"$run/summary" 2>/dev/null)"
		awk '{ s += $1; if ($1 > m) m = $1; if ($2 > q) q = $2 }
			END { if (NR) printf "host load (1-min average, every 10 s): mean %.2f, max %.2f on %d cores; qemu guests at once: up to %d\n",
				s / NR, m, '"$(nproc)"', q }' "$load"
		echo "logs: ${run#"$REPO"/}/bench/logs"
	} >>"$dest/info.txt"
	rm -f "$load"
	return "$rc"
}

# ---------------------------------------------------------------- report

# rows.tsv -> results.md and results.json.  Ratios: lchan over the peer
# named in the row (median latency for latency rows, message rate for
# bandwidth rows) and over TCP on the same address.
report() {
	local rows=$dest/rows.tsv sweep=$dest/sweep.tsv info=$dest/info.txt
	[ -s "$rows" ] || rig_die "no $rows: run make bench first"

	awk -F '\t' -v info="$info" -v sweepf="$sweep" -v json="$dest/results.json" '
	function num(v) { return v == "" ? "" : v + 0 }
	function fmt(v, d) { return v == "" ? "-" : sprintf("%." d "f", v) }
	function jnum(v) { return v ~ /^-?[0-9]+\.?[0-9]*([eE][-+]?[0-9]+)?$/ ? sprintf("%.6g", v) : "null" }
	function sig(v) { return v == "" ? "-" : sprintf("%.3g", v) }
	# The status, CPU and system-call cells, alike in every table.
	function status_cell(k,  s) {
		s = st[k]
		if (s != "ok" && note[k] != "") s = s ": " note[k]
		else if (note[k] != "") s = s " (" note[k] ")"
		return s
	}
	function cpu_cell(k,  c) {
		c = fmt(cpu[k], 1)
		if (pcpu[k] != "") c = c " (poller " fmt(pcpu[k], 1) ")"
		return c
	}
	function sys_cell(k,  y) {
		y = fmt(sys[k], 3)
		if (ent[k] != "") y = y " (ENTER " fmt(ent[k], 3) ")"
		return y
	}
	function jstr(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
	function islat(t) { return t ~ /_lat$/ }
	# The metric a ratio compares: median latency or message rate.
	function metric(k) { return islat(test[k]) ? lat[k] : mpps[k] }
	function ratio(a, b) {
		if (a == "" || b == "" || st[a] != "ok" || st[b] != "ok" || metric(b) == 0 ||
		    metric(a) == "" || metric(b) == "")
			return ""
		return metric(a) / metric(b)
	}
	function tcp_of(k,   t) {
		t = test[k]
		if (tool[k] != "lchan_perf" || ismsg(k)) return ""
		if (islat(t)) return dev[k] SUBSEP "tcp_lat.64"
		if (size[k] == 64) return dev[k] SUBSEP "tcp_bw.64"
		return dev[k] SUBSEP "tcp_bw.65536"
	}
	NR == 1 { next }
	{
		k = $1 SUBSEP $2
		order[++n] = k
		dev[k] = $1; id[k] = $2; peer[k] = $3; tool[k] = $4; test[k] = $5
		mode[k] = $6; compl[k] = $7; size[k] = $8; iters[k] = $9; st[k] = $10
		lat[k] = num($11); p99[k] = num($12); gbps[k] = num($13)
		mpps[k] = num($14); sys[k] = num($15); cpu[k] = num($16)
		pcpu[k] = num($17); ent[k] = num($18); lcpu[k] = num($19); note[k] = $20
		avg[k] = num($21)
		if (!(($1) in seen)) { seen[$1] = 1; devs[++nd] = $1 }
	}
	function goal(name, target, key, other, cmp, limit, label,   r, v, ok) {
		ng++
		gname[ng] = name; gtarget[ng] = target
		if (other != "") {
			r = ratio(key, other)
			v = r
		} else {
			v = (key in st && st[key] == "ok") ? sys[key] : ""
			# The difference of two strace runs has a little noise
			# (set-up differs by a call or two); the ENTER count
			# of the timed loop (lchan_perf) is exact.
			if (v != "" && v < 0) v = 0
		}
		if (v == "") {
			gres[ng] = "not measured"; gval[ng] = ""; gmet[ng] = "missed"
		} else {
			ok = cmp == "<=" ? v <= limit : v >= limit
			gval[ng] = v
			gres[ng] = label == "ratio" ? sprintf("%.2fx", v) : sprintf("%.3f/op", v)
			gmet[ng] = ok ? "met" : "missed"
		}
		gdetail[ng] = other == "" ? "" : sprintf("%s %s us/Mpps vs %s %s", id[key], fmt(metric(key), 4), id[other], fmt(metric(other), 4))
		if (other == "")
			gdetail[ng] = sprintf("%s: %s syscalls/op by strace, %s ENTER/op by the kernel counter", id[key], fmt(sys[key], 4), fmt(ent[key], 4))
		else if (islat(test[key]))
			gdetail[ng] = sprintf("median %s us vs %s us", fmt(lat[key], 1), fmt(lat[other], 1))
		else
			gdetail[ng] = sprintf("%s vs %s Mpps (%s vs %s Gb/s)", sig(mpps[key]), sig(mpps[other]), sig(gbps[key]), sig(gbps[other]))
	}
	# The message API rows (issue 7) have a table of their own.
	function ismsg(k) { return tool[k] == "lchan_msg_perf" || tool[k] == "rstream" || id[k] ~ /^write_bw\.1M\./ }
	function okrow(k) { return (k in st) && st[k] == "ok" }
	# a over b: "median" and "mean" latency, "rate" messages per second.
	function ratio7(a, b, how,   x, y) {
		if (!okrow(a) || !okrow(b)) return ""
		x = how == "median" ? lat[a] : how == "mean" ? avg[a] : mpps[a]
		y = how == "median" ? lat[b] : how == "mean" ? avg[b] : mpps[b]
		if (x == "" || y == "" || y == 0) return ""
		return x / y
	}
	function show7(a, b, bname, how) {
		if (how == "median" || how == "mean") return sprintf("%s %s us vs %s %s us", how, fmt(how == "median" ? lat[a] : avg[a], 1), bname, fmt(how == "median" ? lat[b] : avg[b], 1))
		return sprintf("%s vs %s Gb/s (%s)", sig(gbps[a]), sig(gbps[b]), bname)
	}
	# A goal of issue 7: a ratio (how: median, mean, rate) or, with
	# b == "", the system calls per message of row a.
	# A message API row over rstream (pre "rs_" or "tcp_rs_"), or "".
	function vs7(k, pre,   o) {
		if (tool[k] == "rstream" || !ismsg(k)) return ""
		o = islat(test[k]) ? pre "lat." compl[k] : pre "bw.1M"
		return ratio7(k, dev[k] SUBSEP o, islat(test[k]) ? "mean" : "rate")
	}
	function goal7(d, name, target, a, b, how, cmp, limit,   v, why) {
		nh++
		hdev[nh] = d; hname[nh] = name; htarget[nh] = target
		a = d SUBSEP a
		if (b != "") {
			hdetail[nh] = show7(a, d SUBSEP b, b, how)
			b = d SUBSEP b
			v = ratio7(a, b, how)
		} else {
			v = okrow(a) ? sys[a] : ""
			# As for issue 4: the difference of two strace runs.
			if (v != "" && v < 0) v = 0
			hdetail[nh] = sprintf("%s syscalls/msg by strace, %s ENTER/msg by the kernel counter", fmt(sys[a], 4), fmt(ent[a], 4))
		}
		if (v == "") {
			why = !(a in st) ? "no row" : !okrow(a) ? id[a] " " st[a] : b != "" && !okrow(b) ? ((b in st) ? id[b] " " st[b] : "no row for the peer") : "no value"
			hres[nh] = "not measured (" why ")"; hval[nh] = ""; hmet[nh] = "missed"
		} else {
			hval[nh] = v
			hres[nh] = b != "" ? sprintf("%.2fx", v) : sprintf("%.3f/msg", v)
			hmet[nh] = (cmp == "<=" ? v <= limit : v >= limit) ? "met" : "missed"
		}
	}
	END {
		print "# lchan benchmark results"
		print ""
		print "Produced by `make bench` (tools/rig/bench.sh): one run of the QEMU guest, rxe0"
		print "(soft-RoCE) and then siw0 (soft-iWARP), lchan_perf against perftest and TCP on"
		print "the same device and address.  The guest is emulated (TCG, 2 vCPUs): absolute"
		print "numbers are far below real hardware; the ratios are what this is for.  How to"
		print "read it: README.md, section \"Benchmarks\"."
		print ""
		print "```"
		while ((getline line < info) > 0) print line
		print "```"
		print ""

		r = "rxe0"
		goal("64 B send latency, poller mode (busy polling) vs ib_send_lat", "<= 0.90x", r SUBSEP "send_lat.poller.busy", r SUBSEP "ib_send_lat.busy", "<=", 0.9, "ratio")
		goal("64 B send latency, doorbell mode (busy polling) vs ib_send_lat", "<= 1.00x", r SUBSEP "send_lat.doorbell.busy", r SUBSEP "ib_send_lat.busy", "<=", 1.0, "ratio")
		goal("64 B send latency, poller mode (events) vs ib_send_lat -e", "<= 0.90x", r SUBSEP "send_lat.poller.event", r SUBSEP "ib_send_lat.event", "<=", 0.9, "ratio")
		goal("64 B send latency, doorbell mode (events) vs ib_send_lat -e", "<= 1.00x", r SUBSEP "send_lat.doorbell.event", r SUBSEP "ib_send_lat.event", "<=", 1.0, "ratio")
		goal("64 B batched message rate, doorbell mode, vs ib_send_bw", ">= 1.20x", r SUBSEP "send_bw.doorbell", r SUBSEP "ib_send_bw", ">=", 1.2, "ratio")
		goal("64 B batched message rate, poller mode, vs ib_send_bw", ">= 1.20x", r SUBSEP "send_bw.poller", r SUBSEP "ib_send_bw", ">=", 1.2, "ratio")
		goal("64 KiB RDMA WRITE bandwidth, doorbell mode, vs ib_write_bw", ">= 0.95x", r SUBSEP "write_bw.doorbell", r SUBSEP "ib_write_bw", ">=", 0.95, "ratio")
		goal("64 KiB RDMA WRITE bandwidth, poller mode, vs ib_write_bw", ">= 0.95x", r SUBSEP "write_bw.poller", r SUBSEP "ib_write_bw", ">=", 0.95, "ratio")
		# strace differences: within 0.01/op of the target counts.
		goal("System calls per operation, poller mode, send_lat", "0", r SUBSEP "send_lat.poller.busy", "", "<=", 0.01, "calls")
		goal("System calls per operation, poller mode, send_bw", "0", r SUBSEP "send_bw.poller", "", "<=", 0.01, "calls")
		goal("System calls per operation, poller mode, write_bw", "0", r SUBSEP "write_bw.poller", "", "<=", 0.01, "calls")
		goal("System calls per operation, doorbell mode, send_lat (batch 1)", "<= 1 per batch (1/op)", r SUBSEP "send_lat.doorbell.busy", "", "<=", 1.01, "calls")
		goal("System calls per operation, doorbell mode, send_bw (batch 16)", "<= 1 per batch (0.0625/op)", r SUBSEP "send_bw.doorbell", "", "<=", 1 / 16 + 0.01, "calls")
		goal("System calls per operation, doorbell mode, write_bw (batch 16)", "<= 1 per batch (0.0625/op)", r SUBSEP "write_bw.doorbell", "", "<=", 1 / 16 + 0.01, "calls")

		print "## Goals (issue 4, on rxe0)"
		print ""
		print "| goal | target | measured | | detail |"
		print "|---|---|---|---|---|"
		for (g = 1; g <= ng; g++)
			printf "| %s | %s | %s | **%s** | %s |\n", gname[g], gtarget[g], gres[g], gmet[g], gdetail[g]
		print ""
		print "Latency and rate goals compare busy polling with busy polling and events with"
		print "events.  System-call goals allow 0.01/op above the target for the noise of"
		print "the difference of two strace runs; the detail adds the exact count of ENTER"
		print "calls in the timed loop."
		print ""

		for (d = 1; d <= nd; d++) {
			r = devs[d]
			for (c = 1; c <= 4; c++) {
				mo = c <= 2 ? "doorbell" : "poller"; co = c % 2 ? "busy" : "event"
				goal7(r, sprintf("64 B message latency, %s mode (%s), vs lchan_perf send_lat", mo, co == "busy" ? "busy polling" : "events"),
					"<= 1.10x", "msg_lat." mo "." co, "send_lat." mo "." co, "median", "<=", 1.1)
			}
			for (c = 1; c <= 4; c++) {
				mo = c <= 2 ? "doorbell" : "poller"; co = c % 2 ? "busy" : "event"
				goal7(r, sprintf("64 B message latency, %s mode (%s), vs rsockets (rstream%s)", mo, co == "busy" ? "busy polling" : "events", co == "busy" ? "" : " -T b"),
					"<= 1.00x", "msg_lat." mo "." co, "rs_lat." co, "mean", "<=", 1.0)
			}
			for (c = 1; c <= 4; c++) {
				mo = c <= 2 ? "doorbell" : "poller"; bu = c % 2 ? "registered" : "plain"
				goal7(r, sprintf("1 MiB message throughput, %s mode, %s buffers, vs lchan_perf write_bw 1 MiB", mo, bu),
					">= 0.90x", "msg_bw." bu "." mo, "write_bw.1M." mo, "rate", ">=", 0.9)
			}
			for (c = 1; c <= 2; c++) {
				bu = c % 2 ? "registered" : "plain"
				goal7(r, sprintf("1 MiB message throughput, poller mode (events), %s buffers, vs lchan_perf write_bw 1 MiB (events)", bu),
					">= 0.90x", "msg_bw." bu ".poller.event", "write_bw.1M.poller.event", "rate", ">=", 0.9)
			}
			goal7(r, "System calls per message, poller mode, msg_lat (busy polling)", "0", "msg_lat.poller.busy", "", "", "<=", 0.01)
			goal7(r, "System calls per message, poller mode, msg_bw 1 MiB, registered buffers", "0", "msg_bw.registered.poller", "", "", "<=", 0.01)
			goal7(r, "System calls per message, poller mode, msg_bw 1 MiB, plain buffers", "0", "msg_bw.plain.poller", "", "", "<=", 0.01)
		}
		print "## Goals (issue 7, message API)"
		print ""
		print "| device | goal | target | measured | | detail |"
		print "|---|---|---|---|---|---|"
		for (g = 1; g <= nh; g++)
			printf "| %s | %s | %s | %s | **%s** | %s |\n", hdev[g], hname[g], htarget[g], hres[g], hmet[g], hdetail[g]
		print ""
		print "Against lchan_perf the medians are compared; rstream reports only the mean of"
		print "RTT/2, so against rsockets the means are.  Throughput is compared at the same"
		print "size, so Gb/s and messages per second give the same ratio.  \"plain\" buffers"
		print "are unregistered memory given to lchan_msg_send/recv: at 1 MiB (above the"
		print "8 KiB buffers of the library) the library registers them for each message;"
		print "\"registered\" ones are registered once and sent with the _mr calls."
		print "System-call goals are for the busy-polling rows: a blocking receive sleeps in"
		print "poll(2) by design (its count is in the table).  A busy-polling call also"
		print "sleeps through the bytes of a large message after 50 us (one poll(2) per"
		print "1 MiB message), also by design: spinning there would take the CPU that rxe"
		print "and siw move the bytes with, and on an adapter burn a CPU for nothing."
		print ""

		for (d = 1; d <= nd; d++) {
			printf "## %s\n\n", devs[d]
			print "Latency rows: median and 99th percentile in microseconds (RTT/2 for send and"
			print "write ping-pong, the whole operation for read and atomic, as perftest reports)."
			print "Bandwidth rows: Gb/s and million messages per second.  Ratios compare median"
			print "latency (below 1 is better for lchan) or message rate (above 1 is better)."
			print ""
			print "| row | tool | mode | completions | size | iters | median us | p99 us | Gb/s | Mpps | syscalls/op | CPU us/op | lchan/peer | lchan/TCP | status |"
			print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
			for (i = 1; i <= n; i++) {
				k = order[i]
				if (dev[k] != devs[d] || ismsg(k)) continue
				rp = ""; rt = ""
				if (peer[k] != "") {
					rp = ratio(k, dev[k] SUBSEP peer[k])
					rp = rp == "" ? "-" : sprintf("%.2fx vs %s", rp, peer[k])
				}
				t = tcp_of(k)
				if (t != "") {
					rt = ratio(k, t)
					rt = rt == "" ? "-" : sprintf("%.2fx", rt)
				}
				s = status_cell(k)
				c = cpu_cell(k)
				y = sys_cell(k)
				printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
					id[k], tool[k], mode[k], compl[k], size[k], iters[k],
					fmt(lat[k], 1), fmt(p99[k], 1), sig(gbps[k]), sig(mpps[k]),
					y, c, rp == "" ? "" : rp, rt, s
			}
			print ""

			nm = 0
			for (i = 1; i <= n; i++) if (dev[order[i]] == devs[d] && ismsg(order[i])) nm++
			if (!nm) continue
			printf "### %s: message API (lchan_msg_perf), rsockets and TCP (rstream)\n\n", devs[d]
			print "Latency rows: RTT/2 of a 64 B ping-pong; rstream reports only the mean.  Bandwidth"
			print "rows: 1 MiB messages.  syscalls/op and CPU us/op: per round trip (latency) or per"
			print "message (bandwidth; rstream sends N and receives N back, both count).  vs lchan_perf:"
			print "median or rate over the lchan_perf row of the same mode and completion style;"
			print "vs rsockets and vs TCP: mean or rate over the rstream row (busy with busy, events"
			print "with events)."
			print ""
			print "| row | tool | mode | completions | size | iters | median us | mean us | p99 us | Gb/s | Mpps | syscalls/op | CPU us/op | vs lchan_perf | vs rsockets | vs TCP | status |"
			print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
			for (i = 1; i <= n; i++) {
				k = order[i]
				if (dev[k] != devs[d] || !ismsg(k)) continue
				rp = ""
				rr = tool[k] == "rstream" ? "" : vs7(k, "rs_")
				rt = tool[k] == "rstream" ? "" : vs7(k, "tcp_rs_")
				if (tool[k] != "rstream") {
					rr = rr == "" ? "-" : sprintf("%.2fx", rr)
					rt = rt == "" ? "-" : sprintf("%.2fx", rt)
				}
				if (peer[k] != "") {
					rp = ratio7(k, dev[k] SUBSEP peer[k], islat(test[k]) ? "median" : "rate")
					rp = rp == "" ? "-" : sprintf("%.2fx vs %s", rp, peer[k])
				}
				s = status_cell(k)
				c = cpu_cell(k)
				y = sys_cell(k)
				printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
					id[k], tool[k], mode[k], compl[k], size[k], iters[k],
					fmt(lat[k], 1), fmt(avg[k], 1), fmt(p99[k], 1), sig(gbps[k]), sig(mpps[k]),
					y, c, rp, rr, rt, s
			}
			print ""
		}

		# The sweep as a table too.
		print "## Latency against message size (send ping-pong, median us)"
		print ""
		print "![latency against message size](latency.png)"
		print ""
		ns = 0
		while ((getline line < sweepf) > 0) {
			split(line, f, "\t")
			if (f[1] == "dev") continue
			sk = f[1] SUBSEP f[2] SUBSEP f[3]
			sv[sk] = f[5] == "ok" ? sprintf("%.1f", f[4]) : f[5]
			if (!((f[1] SUBSEP f[3]) in sz)) { sz[f[1] SUBSEP f[3]] = 1; sizes[f[1], ++nsz[f[1]]] = f[3] }
			sw[++ns] = line
		}
		print "| device | size | lchan_perf | ib_send_lat | TCP (sockperf) |"
		print "|---|---|---|---|---|"
		for (d = 1; d <= nd; d++)
			for (j = 1; j <= nsz[devs[d]]; j++) {
				z = sizes[devs[d], j]
				printf "| %s | %s | %s | %s | %s |\n", devs[d], z,
					sv[devs[d] SUBSEP "lchan_perf" SUBSEP z], sv[devs[d] SUBSEP "ib_send_lat" SUBSEP z],
					sv[devs[d] SUBSEP "sockperf" SUBSEP z]
			}
		print ""
		print "sockperf sends 14 to 65507 bytes over TCP: its 65536 point is 65507 bytes."

		# JSON.
		printf "{\n  \"info\": [" > json
		first = 1
		while ((getline line < info) > 0) { printf "%s%s", first ? "" : ", ", jstr(line) > json; first = 0 }
		printf "],\n  \"goals\": [" > json
		for (g = 1; g <= ng; g++)
			printf "%s\n    {\"goal\": %s, \"target\": %s, \"value\": %s, \"result\": %s, \"detail\": %s}", (g > 1 ? "," : ""),
				jstr(gname[g]), jstr(gtarget[g]), jnum(gval[g]), jstr(gmet[g]), jstr(gdetail[g]) > json
		printf "\n  ],\n  \"goals_msg\": [" > json
		for (g = 1; g <= nh; g++)
			printf "%s\n    {\"device\": %s, \"goal\": %s, \"target\": %s, \"value\": %s, \"result\": %s, \"measured\": %s, \"detail\": %s}", (g > 1 ? "," : ""),
				jstr(hdev[g]), jstr(hname[g]), jstr(htarget[g]), jnum(hval[g]), jstr(hmet[g]), jstr(hres[g]), jstr(hdetail[g]) > json
		printf "\n  ],\n  \"rows\": [" > json
		for (i = 1; i <= n; i++) {
			k = order[i]
			rp = peer[k] == "" ? "" : ratio(k, dev[k] SUBSEP peer[k])
			t = tcp_of(k); rt = t == "" ? "" : ratio(k, t)
			if (ismsg(k)) rt = vs7(k, "tcp_rs_")
			printf "%s\n    {\"device\": %s, \"id\": %s, \"peer\": %s, \"tool\": %s, \"test\": %s, \"mode\": %s, \"completions\": %s, \"size\": %s, \"iters\": %s, \"status\": %s, \"lat_median_us\": %s, \"lat_p99_us\": %s, \"bw_gbps\": %s, \"msg_rate_mpps\": %s, \"syscalls_per_op\": %s, \"cpu_us_per_op\": %s, \"poller_cpu_us_per_op\": %s, \"enters_per_op\": %s, \"loop_cpu_us_per_op\": %s, \"lat_avg_us\": %s, \"ratio_peer\": %s, \"ratio_rsockets\": %s, \"ratio_tcp\": %s, \"note\": %s}",
				(i > 1 ? "," : ""), jstr(dev[k]), jstr(id[k]), (peer[k] == "" ? "null" : jstr(peer[k])),
				jstr(tool[k]), jstr(test[k]), jstr(mode[k]), jstr(compl[k]), size[k],
				jstr(iters[k]), jstr(st[k]), jnum(lat[k]), jnum(p99[k]), jnum(gbps[k]),
				jnum(mpps[k]), jnum(sys[k]), jnum(cpu[k]), jnum(pcpu[k]), jnum(ent[k]), jnum(lcpu[k]), jnum(avg[k]), jnum(rp), jnum(vs7(k, "rs_")), jnum(rt),
				jstr(note[k]) > json
		}
		printf "\n  ],\n  \"sweep\": [" > json
		for (j = 1; j <= ns; j++) {
			split(sw[j], f, "\t")
			printf "%s\n    {\"device\": %s, \"tool\": %s, \"size\": %s, \"lat_median_us\": %s, \"status\": %s}",
				(j > 1 ? "," : ""), jstr(f[1]), jstr(f[2]), f[3], jnum(f[4]), jstr(f[5]) > json
		}
		printf "\n  ]\n}\n" > json
	}' "$rows" >"$dest/results.md"

	plot
	rig_log "report: $dest/results.md, results.json, latency.png"
}

# latency.png: one panel per device, log-log.
plot() {
	local tmp d t
	if ! command -v gnuplot >/dev/null; then
		rig_log "warning: no gnuplot (tools/rig/setup.sh installs gnuplot-nox): no plot"
		return 0
	fi
	tmp=$(mktemp -d)
	for d in rxe0 siw0; do
		for t in lchan_perf ib_send_lat sockperf; do
			awk -F '\t' -v d="$d" -v t="$t" '$1 == d && $2 == t && $5 == "ok" && $4 != "" { print $3, $4 }' \
				"$dest/sweep.tsv" >"$tmp/$d.$t"
		done
	done
	gnuplot <<EOF || rig_log "warning: gnuplot failed: no plot"
set terminal pngcairo size 1200,500 font ",10" noenhanced
set output "$dest/latency.png"
set multiplot layout 1,2 title "Send ping-pong latency (median, RTT/2) against message size; emulated guest"
set logscale xy
set xlabel "message size [bytes]"
set ylabel "latency [us]"
set grid
set key top left
set format x "%.0s%cB"
do for [d in "rxe0 siw0"] {
	set title d
	plot "$tmp/".d.".lchan_perf" using 1:2 with linespoints lw 2 title "lchan (doorbell, busy poll)", \
	     "$tmp/".d.".ib_send_lat" using 1:2 with linespoints lw 2 title "verbs (ib_send_lat)", \
	     "$tmp/".d.".sockperf" using 1:2 with linespoints lw 2 title "TCP (sockperf)"
}
unset multiplot
EOF
	rm -rf "$tmp"
}

rc=0
if [ "$report_only" = 0 ]; then
	measure || rc=$?
	[ -s "$dest/rows.tsv" ] || exit 1
fi
report
exit "$rc"
