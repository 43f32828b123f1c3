# SPDX-License-Identifier: GPL-2.0
"""The report of `make bench`: report bench DIR

Reads the guest's raw data in DIR: rows.tsv (one line per measurement),
sweep.tsv (latency against message size) and info.txt (what ran where).
Writes into DIR:

  results.md    the goals of issues 4 and 7; per device the rows with their
                lchan/peer and lchan/TCP ratios, and the message API rows
                with theirs; the sweep
  results.json  the same, machine-readable

Number formats and the handling of empty, failed and missing cells are
fixed: a report rebuilt from committed data comes out byte for byte the same.
The files are read as UTF-8; bytes that are not go into results.md as they
are and into results.json as "?".
"""

import json
import math
import os
import re
import textwrap

from .stats import cformat, fmt, median, ratio, sig, table_row

COLUMNS = ("dev id peer tool test mode completions size iters status lat_median_us "
           "lat_p99_us bw_gbps msg_rate_mpps syscalls_per_op cpu_us_per_op "
           "poller_cpu_us_per_op enters_per_op loop_cpu_us_per_op note lat_avg_us").split()
NUMBERS = COLUMNS[10:19] + ["lat_avg_us"]
# The tools that measure lchan (every other tool is a peer).
LCHAN_TOOLS = ("lchan_perf", "lchan_msg_perf")
# rounds.tsv: every round's figures of a row.
ROUND_COLUMNS = ("dev id round status lat_median_us lat_p99_us bw_gbps "
                 "msg_rate_mpps lat_avg_us").split()
# A row that is not there: empty text, no numbers.
NO_ROW = {c: None if c in NUMBERS else "" for c in COLUMNS}

# The leading number of a cell, as C's strtod reads it.
LEADING_NUMBER = re.compile(r"""[ \t\n\v\f\r]*([-+]?(?:
      0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[-+]?[0-9]+)?
    | (?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[-+]?[0-9]+)? | inf(?:inity)? | nan(?:\(\w*\))? ))""",
                            re.I | re.X | re.A)
# How the files are read and results.md is written: any bytes pass through.
TEXT = {"encoding": "utf-8", "errors": "surrogateescape", "newline": ""}
# What a ratio of the message API's goals compares.
HOW = {"median": "lat_median_us", "mean": "lat_avg_us", "rate": "msg_rate_mpps"}

GOAL_DEVICE = "rxe0"
# The latency and rate goals, on GOAL_DEVICE: (goal, target, row, peer, comparison, limit).
# Without a peer the goal is on the row's system calls per operation; those
# allow 0.01/op above the target for the noise of strace differences.
ISSUE4_GOALS = [
    ("64 B send latency, poller mode (busy polling) vs ib_send_lat", "<= 0.90x",
     "send_lat.poller.busy", "ib_send_lat.busy", "<=", 0.9),
    ("64 B send latency, doorbell mode (busy polling) vs ib_send_lat", "<= 1.00x",
     "send_lat.doorbell.busy", "ib_send_lat.busy", "<=", 1.0),
    ("64 B send latency, poller mode (events) vs ib_send_lat -e", "<= 0.90x",
     "send_lat.poller.event", "ib_send_lat.event", "<=", 0.9),
    ("64 B send latency, doorbell mode (events) vs ib_send_lat -e", "<= 1.00x",
     "send_lat.doorbell.event", "ib_send_lat.event", "<=", 1.0),
    ("64 B batched message rate, doorbell mode, vs ib_send_bw", ">= 1.20x",
     "send_bw.doorbell", "ib_send_bw", ">=", 1.2),
    ("64 B batched message rate, poller mode, vs ib_send_bw", ">= 1.20x",
     "send_bw.poller", "ib_send_bw", ">=", 1.2),
    ("64 KiB RDMA WRITE bandwidth, doorbell mode, vs ib_write_bw", ">= 0.95x",
     "write_bw.doorbell", "ib_write_bw", ">=", 0.95),
    ("64 KiB RDMA WRITE bandwidth, poller mode, vs ib_write_bw", ">= 0.95x",
     "write_bw.poller", "ib_write_bw", ">=", 0.95),
    ("System calls per operation, poller mode, send_lat", "0",
     "send_lat.poller.busy", "", "<=", 0.01),
    ("System calls per operation, poller mode, send_bw", "0",
     "send_bw.poller", "", "<=", 0.01),
    ("System calls per operation, poller mode, write_bw", "0",
     "write_bw.poller", "", "<=", 0.01),
    ("System calls per operation, doorbell mode, send_lat (batch 1)", "<= 1 per batch (1/op)",
     "send_lat.doorbell.busy", "", "<=", 1.01),
    ("System calls per operation, doorbell mode, send_bw (batch 16)",
     "<= 1 per batch (0.0625/op)", "send_bw.doorbell", "", "<=", 1 / 16 + 0.01),
    ("System calls per operation, doorbell mode, write_bw (batch 16)",
     "<= 1 per batch (0.0625/op)", "write_bw.doorbell", "", "<=", 1 / 16 + 0.01),
]


# The poller pool's goals, on each device: (goal, target, row, peer, how,
# comparison, limit), as the message API's.
ISSUE16_GOALS = [
    ("64 B send latency, poller mode (busy polling) vs doorbell mode (busy polling)",
     "<= 1.00x", "send_lat.poller.busy", "send_lat.doorbell.busy", "median", "<=", 1.0),
    ("64 B send latency, poller mode (events) vs ib_send_lat -e", "<= 0.90x",
     "send_lat.poller.event", "ib_send_lat.event", "median", "<=", 0.9),
    ("64 B send latency, doorbell mode (busy polling) vs ib_send_lat", "<= 1.00x",
     "send_lat.doorbell.busy", "ib_send_lat.busy", "median", "<=", 1.0),
]


def issue7_goals():
    """The message API's goals, on each device: (goal, target, row, peer, how,
    comparison, limit), how a key of HOW; without a peer the goal is on the
    row's system calls per message."""
    styles = {"busy": "busy polling", "event": "events"}
    modes = [(m, s) for m in ("doorbell", "poller") for s in ("busy", "event")]
    buffers = [(m, b) for m in ("doorbell", "poller") for b in ("registered", "plain")]
    goals = [(f"64 B message latency, {m} mode ({styles[s]}), vs lchan_perf send_lat", "<= 1.10x",
              f"msg_lat.{m}.{s}", f"send_lat.{m}.{s}", "median", "<=", 1.1) for m, s in modes]
    goals += [(f"64 B message latency, {m} mode ({styles[s]}), vs rsockets "
               f"(rstream{'' if s == 'busy' else ' -T b'})", "<= 1.00x",
               f"msg_lat.{m}.{s}", f"rs_lat.{s}", "mean", "<=", 1.0) for m, s in modes]
    goals += [(f"1 MiB message throughput, {m} mode, {b} buffers, vs lchan_perf write_bw 1 MiB",
               ">= 0.90x", f"msg_bw.{b}.{m}", f"write_bw.1M.{m}", "rate", ">=", 0.9)
              for m, b in buffers]
    goals += [(f"1 MiB message throughput, poller mode (events), {b} buffers, "
               "vs lchan_perf write_bw 1 MiB (events)", ">= 0.90x",
               f"msg_bw.{b}.poller.event", "write_bw.1M.poller.event", "rate", ">=", 0.9)
              for b in ("registered", "plain")]
    goals += [(f"System calls per message, poller mode, {what}", "0", row, "", "", "<=", 0.01)
              for what, row in [("msg_lat (busy polling)", "msg_lat.poller.busy"),
                                ("msg_bw 1 MiB, registered buffers", "msg_bw.registered.poller"),
                                ("msg_bw 1 MiB, plain buffers", "msg_bw.plain.poller")]]
    return goals


# ------------------------------------------------------------- numbers

def to_number(cell):
    """A cell's leading number (C's strtod), 0 if there is none."""
    m = LEADING_NUMBER.match(cell)
    if not m:
        return 0.0
    if re.match(r"[-+]?0x", m.group(1), re.I):
        return float.fromhex(m.group(1))
    return float(m.group(1).split("(")[0])


def is_number(cell):
    """Whether a whole cell is a number (blanks around it allowed)."""
    m = LEADING_NUMBER.match(cell)
    return bool(m) and not cell[m.end():].strip(" \t\n\v\f\r")


# ---------------------------------------------------------------- data

def read_lines(path):
    """A file's lines without their newlines; None if it cannot be read."""
    try:
        with open(path, **TEXT) as f:
            lines = f.read().split("\n")
    except OSError:
        return None
    if lines[-1] == "":
        lines.pop()
    return lines


def cells(line, count):
    fields = line.split("\t")
    return fields + [""] * (count - len(fields))


def is_lat(row):
    return row["test"].endswith("_lat")


class Bench:
    """rows.tsv by (device, row id), and the ratios between its rows.  With
    rounds.tsv, a row's latency and rate are the medians of its rounds that
    ran (status ok); its CPU and system calls stay those of the first."""

    def __init__(self, lines, rounds_lines=None):
        self.rows, self.order, self.devices = {}, [], []
        for line in lines[1:]:
            row = dict(zip(COLUMNS, cells(line, len(COLUMNS))))
            row.update({c: None if row[c] == "" else to_number(row[c]) for c in NUMBERS})
            row["rounds"] = None
            key = (row["dev"], row["id"])
            self.rows[key] = row
            self.order.append(key)
            if row["dev"] not in self.devices:
                self.devices.append(row["dev"])
        self.max_rounds = 0
        if rounds_lines:
            self.take_rounds(rounds_lines)

    def take_rounds(self, lines):
        """Medians over the rounds of each row that is ok."""
        per = {}
        for line in lines[1:]:
            r = dict(zip(ROUND_COLUMNS, cells(line, len(ROUND_COLUMNS))))
            if r["status"] == "ok":
                per.setdefault((r["dev"], r["id"]), []).append(r)
        for key, rounds in per.items():
            row = self.rows.get(key)
            if row is None:
                continue
            if row["status"] != "ok":
                # A peer's failed first round (perftest's clock gave "inf",
                # a connect refused) leaves the rounds that ran; lchan's
                # own tools failing fails the bench and stays failed here.
                if row["tool"] in LCHAN_TOOLS or row["status"] == "skipped":
                    continue
                row["note"] = f"round 1 {row['status']}; {row['note'] or ''}".strip()
                row["status"] = "ok"
            for c in ROUND_COLUMNS[4:]:
                values = [to_number(r[c]) for r in rounds if r[c] != ""]
                if values:
                    row[c] = median(values)
            row["rounds"] = len(rounds)
            self.max_rounds = max(self.max_rounds, len(rounds))

    def row(self, key):
        return self.rows.get(key, NO_ROW)

    def ok(self, key):
        return self.row(key)["status"] == "ok"

    def is_msg(self, key):
        """A message API row: those have a table of their own."""
        row = self.row(key)
        return row["tool"] in ("lchan_msg_perf", "rstream") or row["id"].startswith("write_bw.1M.")

    def metric(self, key):
        """What ratio() compares: median latency or message rate."""
        row = self.row(key)
        return row["lat_median_us" if is_lat(row) else "msg_rate_mpps"]

    def ratio(self, a, b):
        """a's metric over b's, None unless both rows are ok."""
        if not self.ok(a) or not self.ok(b):
            return None
        return ratio(self.metric(a), self.metric(b))

    def ratio_by(self, a, b, how):
        """a over b by how (a key of HOW), None unless both rows are ok."""
        if not self.ok(a) or not self.ok(b):
            return None
        return ratio(self.row(a)[HOW[how]], self.row(b)[HOW[how]])

    def tcp_of(self, key):
        """The TCP row an lchan_perf row is compared with, or None."""
        row = self.row(key)
        if row["tool"] != "lchan_perf" or self.is_msg(key):
            return None
        if is_lat(row):
            return (key[0], "tcp_lat.64")
        small = is_number(row["size"]) and to_number(row["size"]) == 64
        return (key[0], "tcp_bw.64" if small else "tcp_bw.65536")

    def vs_rstream(self, key, prefix):
        """A message API row over rstream's, prefix rs_ (rsockets) or
        tcp_rs_ (TCP); None for other rows."""
        row = self.row(key)
        if row["tool"] == "rstream" or not self.is_msg(key):
            return None
        if is_lat(row):
            return self.ratio_by(key, (key[0], f"{prefix}lat.{row['completions']}"), "mean")
        return self.ratio_by(key, (key[0], f"{prefix}bw.1M"), "rate")

    def syscalls(self, key):
        """System calls per operation of an ok row."""
        value = self.row(key)["syscalls_per_op"] if self.ok(key) else None
        # The difference of two strace runs has a little noise (set-up
        # differs by a call or two); the ENTER count in the detail is exact.
        return 0.0 if value is not None and value < 0 else value


# --------------------------------------------------------------- goals

def goal4(bench, goal, target, row, peer, cmp, limit):
    """A latency or rate goal: a dict of its cells."""
    key, other = (GOAL_DEVICE, row), (GOAL_DEVICE, peer)
    a, b = bench.row(key), bench.row(other)
    value = bench.ratio(key, other) if peer else bench.syscalls(key)
    if not peer:
        detail = (f"{a['id']}: {fmt(a['syscalls_per_op'], 4)} syscalls/op by strace, "
                  f"{fmt(a['enters_per_op'], 4)} ENTER/op by the kernel counter")
    elif is_lat(a):
        detail = f"median {fmt(a['lat_median_us'], 1)} us vs {fmt(b['lat_median_us'], 1)} us"
    else:
        detail = (f"{sig(a['msg_rate_mpps'])} vs {sig(b['msg_rate_mpps'])} Mpps "
                  f"({sig(a['bw_gbps'])} vs {sig(b['bw_gbps'])} Gb/s)")
    return goal_cells(goal, target, value, "%.2fx" if peer else "%.3f/op", cmp, limit,
                   "not measured", detail)


def goal7(bench, dev, goal, target, row, peer, how, cmp, limit):
    """A message API or pool goal on device dev: a dict of its cells."""
    key, other = (dev, row), (dev, peer)
    a, b = bench.row(key), bench.row(other)
    if not peer:
        value = bench.syscalls(key)
        detail = (f"{fmt(a['syscalls_per_op'], 4)} syscalls/msg by strace, "
                  f"{fmt(a['enters_per_op'], 4)} ENTER/msg by the kernel counter")
    else:
        value = bench.ratio_by(key, other, how)
        if how == "rate":
            detail = f"{sig(a['bw_gbps'])} vs {sig(b['bw_gbps'])} Gb/s ({peer})"
        else:
            detail = f"{how} {fmt(a[HOW[how]], 1)} us vs {peer} {fmt(b[HOW[how]], 1)} us"
    missing = "not measured (" + goal7_reason(bench, key, other if peer else None) + ")"
    return dict(goal_cells(goal, target, value, "%.2fx" if peer else "%.3f/msg", cmp, limit,
                        missing, detail), device=dev)


def goal7_reason(bench, key, other):
    """Why a message API goal on key (over other) has no value, if any."""
    if key not in bench.rows:
        return "no row"
    if not bench.ok(key):
        return f"{key[1]} {bench.row(key)['status']}"
    if other and not bench.ok(other):
        if other in bench.rows:
            return f"{other[1]} {bench.row(other)['status']}"
        return "no row for the peer"
    return "no value"


def goal_cells(goal, target, value, spec, cmp, limit, missing, detail):
    """A goal's cells; a value that is None or NaN is not measured."""
    if value is None or math.isnan(value):
        measured, result = missing, "missed"
    else:
        measured = cformat(spec, value)
        result = "met" if (value <= limit if cmp == "<=" else value >= limit) else "missed"
    return {"goal": goal, "target": target, "value": value, "measured": measured,
            "result": result, "detail": detail}


# ------------------------------------------------------------ markdown

# results.md; each {part} is lines that end in a newline.
REPORT = """\
# lchan benchmark results

Produced by `make bench` (rig/bench.sh): one run of the QEMU guest, rxe0
(soft-RoCE) and then siw0 (soft-iWARP), lchan_perf against perftest and TCP on
the same device and address.  The guest is emulated (TCG, 2 vCPUs): absolute
numbers are far below real hardware; the ratios are what this is for.  How to
read it: bench/README.md.
{rounds}

```
{info}```

## Goals (issue 4, on rxe0)

| goal | target | measured | | detail |
|---|---|---|---|---|
{goals4}
Latency and rate goals compare busy polling with busy polling and events with
events.  System-call goals allow 0.01/op above the target for the noise of
the difference of two strace runs; the detail adds the exact count of ENTER
calls in the timed loop.

## Goals (issue 7, message API)

| device | goal | target | measured | | detail |
|---|---|---|---|---|---|
{goals7}
Against lchan_perf the medians are compared; rstream reports only the mean of
RTT/2, so against rsockets the means are.  Throughput is compared at the same
size, so Gb/s and messages per second give the same ratio.  "plain" buffers
are unregistered memory given to lchan_msg_send/recv: at 1 MiB (above the
8 KiB buffers of the library) the library registers them for each message;
"registered" ones are registered once and sent with the _mr calls.
System-call goals are for the busy-polling rows: a blocking receive sleeps in
poll(2) by design (its count is in the table).  A busy-polling call also
sleeps through the bytes of a large message after 50 us (one poll(2) per
1 MiB message), also by design: spinning there would take the CPU that rxe
and siw move the bytes with, and on an adapter burn a CPU for nothing.

## Goals (issue 16, poller pool and doorbell path)

| device | goal | target | measured | | detail |
|---|---|---|---|---|---|
{goals16}
{rounds16}

{devices}## Latency against message size (send ping-pong, median us)

| device | size | lchan_perf | ib_send_lat | TCP (sockperf) |
|---|---|---|---|---|
{sweep}
sockperf sends 14 to 65507 bytes over TCP: its 65536 point is 65507 bytes.
"""

ROWS_HEAD = """\
Latency rows: median and 99th percentile in microseconds (RTT/2 for send and
write ping-pong, the whole operation for read and atomic, as perftest reports).
Bandwidth rows: Gb/s and million messages per second.  Ratios compare median
latency (below 1 is better for lchan) or message rate (above 1 is better).

| row | tool | mode | completions | size | iters | median us | p99 us | Gb/s | Mpps \
| syscalls/op | CPU us/op | lchan/peer | lchan/TCP | status |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"""

MSG_ROWS_HEAD = """\
Latency rows: RTT/2 of a 64 B ping-pong; rstream reports only the mean.  Bandwidth
rows: 1 MiB messages.  syscalls/op and CPU us/op: per round trip (latency) or per
message (bandwidth; rstream sends N and receives N back, both count).  vs lchan_perf:
median or rate over the lchan_perf row of the same mode and completion style;
vs rsockets and vs TCP: mean or rate over the rstream row (busy with busy, events
with events).

| row | tool | mode | completions | size | iters | median us | mean us | p99 us | Gb/s \
| Mpps | syscalls/op | CPU us/op | vs lchan_perf | vs rsockets | vs TCP | status |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"""

def ratio_cell(value, peer=""):
    if value is None:
        return "-"
    return cformat("%.2fx", value) + (f" vs {peer}" if peer else "")


def row_cells(row, middle, ratios):
    """A row's line: its identity, the measurement columns in middle, then
    syscalls, CPU, the ratios and the status."""
    syscalls = fmt(row["syscalls_per_op"], 3)
    if row["enters_per_op"] is not None:
        syscalls += f" (ENTER {fmt(row['enters_per_op'], 3)})"
    cpu = fmt(row["cpu_us_per_op"], 1)
    if row["poller_cpu_us_per_op"] is not None:
        cpu += f" (poller {fmt(row['poller_cpu_us_per_op'], 1)})"
    status, note = row["status"], row["note"]
    if note:
        status += f": {note}" if status != "ok" else f" ({note})"
    return table_row([row[c] for c in ("id", "tool", "mode", "completions", "size", "iters")]
                      + middle + [syscalls, cpu] + ratios + [status])


def row_line(bench, key):
    row, tcp = bench.row(key), bench.tcp_of(key)
    peer = row["peer"]
    vs_peer = ratio_cell(bench.ratio(key, (key[0], peer)), peer) if peer else ""
    vs_tcp = ratio_cell(bench.ratio(key, tcp)) if tcp else ""
    middle = [fmt(row["lat_median_us"], 1), fmt(row["lat_p99_us"], 1),
              sig(row["bw_gbps"]), sig(row["msg_rate_mpps"])]
    return row_cells(row, middle, [vs_peer, vs_tcp])


def msg_row_line(bench, key):
    row = bench.row(key)
    peer = row["peer"]
    vs_peer = vs_rs = vs_tcp = ""
    if peer:
        how = "median" if is_lat(row) else "rate"
        vs_peer = ratio_cell(bench.ratio_by(key, (key[0], peer), how), peer)
    if row["tool"] != "rstream":
        vs_rs = ratio_cell(bench.vs_rstream(key, "rs_"))
        vs_tcp = ratio_cell(bench.vs_rstream(key, "tcp_rs_"))
    middle = [fmt(row["lat_median_us"], 1), fmt(row["lat_avg_us"], 1),
              fmt(row["lat_p99_us"], 1), sig(row["bw_gbps"]), sig(row["msg_rate_mpps"])]
    return row_cells(row, middle, [vs_peer, vs_rs, vs_tcp])


def device_tables(bench, dev):
    keys = [k for k in bench.order if k[0] == dev]
    out = [f"## {dev}\n", ROWS_HEAD]
    out += [row_line(bench, k) for k in keys if not bench.is_msg(k)] + [""]
    msg_keys = [k for k in keys if bench.is_msg(k)]
    if msg_keys:
        out += [f"### {dev}: message API (lchan_msg_perf), rsockets and TCP (rstream)\n",
                MSG_ROWS_HEAD] + [msg_row_line(bench, k) for k in msg_keys] + [""]
    return out


def sweep_table(devices, sweep):
    """One line per device and size, a cell per tool."""
    value, sizes = {}, {}
    for dev, tool, size, lat, status in (f[:5] for f in sweep):
        value[dev, tool, size] = cformat("%.1f", to_number(lat)) if status == "ok" else status
        if size not in sizes.setdefault(dev, []):
            sizes[dev].append(size)
    return [table_row([dev, size] + [value.get((dev, tool, size), "")
                                      for tool in ("lchan_perf", "ib_send_lat", "sockperf")])
            for dev in devices for size in sizes.get(dev, [])]


def markdown(bench, goals4, goals7, goals16, info, sweep):
    def text(lines):
        return "".join(line + "\n" for line in lines)

    def per_device(goals):
        return text(table_row([g["device"], g["goal"], g["target"], g["measured"],
                                f"**{g['result']}**", g["detail"]]) for g in goals)
    if bench.max_rounds > 1:
        rounds = (f"Latency and rate are the medians of each row's rounds (up to "
                  f"{bench.max_rounds}, the rows alternating; rounds.tsv), CPU and system "
                  "calls those of the first.")
        rounds = textwrap.fill(rounds, 78)
        rounds16 = "Medians of the rounds, as every row here."
    else:
        rounds = "Every row is one run."
        rounds16 = ("One run per row, as every row here; `make bench-poller` measures these "
                    "rows\nin alternating rounds and reports their medians (bench/README.md).")
    return REPORT.format(
        rounds=rounds, rounds16=rounds16,
        info=text(info),
        goals4=text(table_row([g["goal"], g["target"], g["measured"], f"**{g['result']}**",
                                g["detail"]]) for g in goals4),
        goals7=per_device(goals7),
        goals16=per_device(goals16),
        devices=text(line for dev in bench.devices for line in device_tables(bench, dev)),
        sweep=text(sweep_table(bench.devices, sweep)))


# ---------------------------------------------------------------- JSON

def json_number(value):
    """value for results.json: 6 significant digits, None if it is missing
    or not finite."""
    return float(f"{value:.6g}") if value is not None and math.isfinite(value) else None


def cell_number(cell):
    """A size or latency cell for results.json: a number or None."""
    try:
        return int(cell)
    except ValueError:
        return json_number(to_number(cell)) if is_number(cell) else None


def row_json(bench, key):
    row, tcp = bench.row(key), bench.tcp_of(key)
    peer = row["peer"]
    if bench.is_msg(key):
        vs_tcp = bench.vs_rstream(key, "tcp_rs_")
    else:
        vs_tcp = bench.ratio(key, tcp) if tcp else None
    obj = {"device": key[0], "id": key[1], "peer": peer or None}
    obj.update({c: row[c] for c in ("tool", "test", "mode", "completions")})
    obj.update(size=cell_number(row["size"]), iters=row["iters"], status=row["status"],
               rounds=row["rounds"])
    obj.update({c: json_number(row[c]) for c in NUMBERS})
    obj.update(ratio_peer=json_number(bench.ratio(key, (key[0], peer)) if peer else None),
               ratio_rsockets=json_number(bench.vs_rstream(key, "rs_")),
               ratio_tcp=json_number(vs_tcp), note=row["note"])
    return obj


def goal_json(goal, names):
    return {n: json_number(goal[n]) if n == "value" else goal[n] for n in names}


def results_json(bench, goals4, goals7, goals16, info, sweep):
    return {
        "info": info,
        "goals": [goal_json(g, ("goal", "target", "value", "result", "detail"))
                  for g in goals4],
        "goals_msg": [goal_json(g, ("device", "goal", "target", "value", "result", "measured",
                                    "detail")) for g in goals7],
        "goals_poller": [goal_json(g, ("device", "goal", "target", "value", "result",
                                       "measured", "detail")) for g in goals16],
        "rows": [row_json(bench, k) for k in bench.order],
        "sweep": [{"device": dev, "tool": tool, "size": cell_number(size),
                   "lat_median_us": cell_number(lat), "status": status}
                  for dev, tool, size, lat, status in (f[:5] for f in sweep)],
    }


def main(args):
    if len(args) != 1:
        raise SystemExit("usage: report bench DIR")
    directory = args[0]
    rows = read_lines(os.path.join(directory, "rows.tsv"))
    if not rows:
        raise SystemExit(f"report bench: no {directory}/rows.tsv")
    bench = Bench(rows, read_lines(os.path.join(directory, "rounds.tsv")))
    info = read_lines(os.path.join(directory, "info.txt")) or []
    sweep = [f for f in (cells(line, 5) for line in read_lines(
        os.path.join(directory, "sweep.tsv")) or []) if f[0] != "dev"]
    goals4 = [goal4(bench, *g) for g in ISSUE4_GOALS]
    goals7 = [goal7(bench, dev, *g) for dev in bench.devices for g in issue7_goals()]
    goals16 = [goal7(bench, dev, *g) for dev in bench.devices for g in ISSUE16_GOALS]
    with open(os.path.join(directory, "results.md"), "w", **TEXT) as f:
        f.write(markdown(bench, goals4, goals7, goals16, info, sweep))
    with open(os.path.join(directory, "results.json"), "w", encoding="utf-8",
              errors="replace") as f:
        json.dump(results_json(bench, goals4, goals7, goals16, info, sweep), f, indent=2,
                  ensure_ascii=False, allow_nan=False)
        f.write("\n")
