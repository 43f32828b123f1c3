# SPDX-License-Identifier: GPL-2.0
"""bench/README.md from the committed data: report readme [--plots] DIR [OUT]

DIR is bench/: a directory per guest kernel (6.1, 6.12, ...) with what the
benchmarks leave there: info.txt, results.json (report bench's, from
rows.tsv, rounds.tsv and sweep.tsv), connect.tsv, fabric.tsv, and from
their own targets poller.tsv, pool.tsv, two-machines.tsv with NAME-info.txt.
Writes OUT (default DIR/README.md); with --plots also DIR/*.png (gnuplot).

The text depends on the data alone: no clock, a fixed order, fixed number
formats, so that it is rebuilt byte for byte (rig/check-bench-readme.sh).
The plots are not compared: they change with gnuplot's version.
"""

import json
import os
import re
import subprocess
import textwrap

from . import apps, connect as conn, fabric as fab, two
from .stats import fmt, median, num, ratio, read_tsv, table, times, values


# ---------------------------------------------------------------- data

def read_info(path):
    """An info file's "key: value" lines as a dict, {} without it."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return dict(x.rstrip("\n").split(": ", 1) for x in f if ": " in x)
    except OSError:
        return {}


class Kernel:
    """One guest kernel's data, in DIR/NAME."""

    def __init__(self, top, name):
        self.name = name
        self.dir = os.path.join(top, name)
        try:
            with open(self.file("results.json"), encoding="utf-8") as f:
                results = json.load(f)
        except OSError:
            results = {"rows": [], "sweep": []}
        self.rows = {(r["device"], r["id"]): r for r in results["rows"]}
        self.devices = sorted({r["device"] for r in results["rows"]})
        self.sweep = results["sweep"]
        self.rounds = max([r["rounds"] or 1 for r in results["rows"]] or [0])
        self.info = read_info(self.file("info.txt"))
        self.connect, self.fabric, self.apps = (
            conn.devices(self.dir, s, c) if os.path.exists(self.file(s + ".tsv")) else []
            for s, c in (("connect", conn.Device), ("fabric", fab.Device),
                         ("apps", apps.Device)))
        self.poller, self.poller_msg, self.pool, self.two = (
            read_tsv(self.file(s + ".tsv"))
            for s in ("poller", "poller-msg", "pool", "two-machines"))

    def file(self, name):
        return os.path.join(self.dir, name)

    def infos(self, stem):
        """What ran for the data stem: its own info file, else the bench's."""
        own = read_info(self.file(stem + "-info.txt"))
        return own or (self.info if stem in ("results", "connect", "fabric") else {})

    def row(self, dev, key):
        return self.rows.get((dev, key))


def kernels(top):
    """The kernel directories of top (those with info.txt), in version order."""
    names = [n for n in os.listdir(top) if os.path.isfile(os.path.join(top, n, "info.txt"))]
    return [Kernel(top, n) for n in sorted(names, key=lambda n: [
        int(x) if x.isdigit() else x for x in re.split(r"(\d+)", n)])]


def each_device(ks):
    return [(k, d) for k in ks for d in k.devices]


# ---------------------------------------------------------------- text

def para(*sentences):
    return textwrap.fill(" ".join(sentences), 76, break_long_words=False,
                         break_on_hyphens=False)


def cell(row, key, scale=1, vs="ratio_peer"):
    """A results row's figure (times scale) and, in brackets, its ratio vs
    (a key of the row); a failed or skipped row says so."""
    if row is None:
        return "-"
    if row["status"] != "ok":
        return row["status"].split(" ")[0]
    text = num(None if row[key] is None else row[key] * scale)
    return text if row.get(vs) is None else f"{text} ({times(row[vs])})"


def results_table(ks, cols, key, scale=1, vs="ratio_peer"):
    """A table of results rows: a line per kernel and device, a column per
    (row id, title) of cols; then the rows that ran fewer rounds."""
    rows = [[k.name, d] + [cell(k.row(d, i), key, scale, vs) for i, _ in cols]
            for k, d in each_device(ks)]
    notes = []
    for k, d in each_device(ks):
        for i, _ in cols:
            r = k.row(d, i)
            if r and r["status"] == "ok" and (r["rounds"] or 1) < k.rounds:
                note = (r["note"] or "").strip(" ;")
                notes.append(f"- {k.name} {d} `{i}`: median of {r['rounds'] or 1} of "
                             f"{k.rounds} rounds" + (f"; {note}" if note else "") + ".")
    return table(["kernel", "device"] + [t for _, t in cols], rows) + [""] + notes + [""]


def runs(ks, stem, key):
    """A line per kernel: what the info file of its data stem says of key."""
    return [f"- {k.name}: {k.infos(stem)[key]}" for k in ks if k.infos(stem).get(key)] + [""]


def size_name(size):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


HEAD = """\
# Benchmarks

<!-- Made by rig/report/readme.py from bench/<kernel>/ (make bench-readme);
     make check fails when this file differs from what it makes. -->

lchan measured beside what an application would use otherwise: raw verbs
(perftest), rsockets, libfabric's verbs provider, rdma_cm's own connection
set-up, and TCP, each on the same device and address as lchan and in the
same guest run, so that every ratio compares two programs that shared a
machine, a kernel and a moment.

**These are emulated figures.** Every benchmark runs in a QEMU guest under
TCG (software emulation, no KVM) with two vCPUs, on the kernel's software
RDMA devices: soft-RoCE (rxe0, on the guest's virtio NIC) and soft-iWARP
(siw0, on a dummy interface), client and server in the same guest.  The
absolute numbers are ten to a hundred times slower than RDMA hardware and
move by tens of percent from run to run; what carries over is the ratio to
the peer measured in the same run.  Compare ratios, not absolute values,
and not values of different runs.
"""

RUNNING = """\
## Running them

Each target boots a guest on `KERNEL` (default 6.1: `make bench
KERNEL=6.12`), leaves its data in `bench/<kernel>/` and writes this file
and its plots again; `make bench-readme` does that from the committed data
alone, and `make check` fails when this file is not what it makes.

| command | what | data in `bench/<kernel>/` |
| --- | --- | --- |
| `make bench` | latency, bandwidth, message API, libfabric, connection set-up and two machines, rxe0 then siw0, every row in three alternating rounds (`LCHAN_BENCH_ROUNDS=N`); about 30 minutes | `rows.tsv`, `rounds.tsv`, `sweep.tsv`, `connect.tsv`, `fabric.tsv`, `two-machines.tsv`, `info.txt`; reports `results.md`, `connect.md`, `fabric.md` (and `.json`) |
| `LCHAN_BENCH_QUICK=1 make bench` | the same with few iterations, to check the bench itself | |
| `LCHAN_BENCH_ONLY=connect make bench` | connection set-up alone | `connect.tsv`, `connect-info.txt` |
| `make bench-fabric` | libfabric alone | `fabric.tsv`, `fabric-info.txt` |
| `make bench-2node` | two guests across a virtual wire alone (about 4 minutes) | `two-machines.tsv` |
| `make bench-poller [ROUNDS=3]` | 64 B SEND latency by mode, direct polling among them (about 10 minutes) | `poller.tsv` |
| `make bench-pool [POOL_ROUNDS=5]` | the poller pool's placement rules side by side | `pool.tsv` |
| `make bench-apps` | unmodified programs (redis, iperf3, nginx) over TCP, `lchan-run` and rsockets' preload, rxe0, three rounds (about 6 minutes) | `apps.tsv`, `apps-info.txt`; report `apps.md` |
| `make latency-path [ROUNDS=3]` | where a 64 B round trip goes on rxe0, by kprobes | `latency-path.md` |
| `make profile [PROFILE=connect\\|send]` | perf profiles of the guest during connects, `send_lat` and `send_bw` | `bench/profile/*.txt` |
| `rig/bench.sh --report` | the reports again from the committed `.tsv` files, no guest | |

`build/tools/lchan_perf` runs on its own as perftest does (`lchan_perf(1)`):
`lchan_perf -s -a ADDR` serves, `lchan_perf -c ADDR -t send_lat -S 64 -n
10000 [--mode poller] [-e]` measures.

## What is measured, against what

| benchmark | lchan | peer on the same device and address |
| --- | --- | --- |
| latency, 64 B (atomics 8 B) | `lchan_perf -t send_lat`, `write_lat`, `read_lat`, `atomic_lat`; doorbell and poller mode; busy polling and events (`-e`) | perftest `ib_send_lat`, `ib_write_lat`, `ib_read_lat`, `ib_atomic_lat` over rdma_cm (`-R`), the same polling style (`-e`); TCP: `sockperf ping-pong` |
| latency by size, 16 B to 64 KiB | `lchan_perf -t send_lat`, doorbell, busy | `ib_send_lat -R`; `sockperf ping-pong` (at most 65507 bytes: its 64 KiB point) |
| bandwidth, message rate | `lchan_perf -t send_bw` 64 B, `write_bw` and `read_bw` 64 KiB and 1 MiB, 16 per submit, one completion in 32 | `ib_send_bw`, `ib_write_bw`, `ib_read_bw -R`; TCP: `qperf tcp_bw` |
| message API | `lchan_msg_perf`: 64 B ping-pong; 1 MiB stream from registered and from plain buffers | `lchan_perf` of the same mode and style; librdmacm's `rstream` over rsockets and over TCP (`-T s`), blocking calls (`-T b`) against events |
| libfabric | `fi_pingpong -e msg` over the `lchan` provider, doorbell and poller mode (`FI_LCHAN_POLLER=1`) | `fi_pingpong` over libfabric's `verbs` and `tcp` providers; `lchan_perf send_lat` |
| connection set-up | `lchan_conntime`: connect and accept until the channel is mapped, one at a time and several in flight; close | `cmtime` (all in flight); `cmtime -c 1` (a fresh process per connection); `cm_seqtime` (rdma_cm one at a time in one warm process, with cmtime's QP or with a default lchan channel's queues) |
| direct polling | `lchan_perf -t send_lat --mode direct` among the other modes, rounds alternating | `ib_send_lat`, `ib_send_lat -e` |
| two machines | `lchan_perf` 64 B `send_lat`, 64 KiB `write_bw`, doorbell, busy | `ib_send_lat`, `ib_write_bw` between the same two guests |
| unmodified programs | `redis-benchmark` against `redis-server`, `iperf3`, `wrk` against `nginx`, both ends under `lchan-run` | the same programs over TCP, and under rsockets' preload (`librspreload`) |

Latency is half the round trip (RTT/2) for SEND and WRITE ping-pong and the
whole operation for READ and atomics, as perftest reports it: the median of
a run, and of a row's rounds.  Where a tool prints only a mean (`rstream`,
`fi_pingpong`), means are compared.  A ratio is lchan over its peer: below
1 lchan is faster in a latency table, above 1 it moves more in a bandwidth
table.  Busy polling is compared with busy polling, events (`poll(2)`) with
events.  Bandwidth is in MB/s (10^6 bytes), message rate in thousand
messages per second.
"""


def machine(ks):
    def libfabric(k):
        return (re.findall(r"libfabric: (\S+)", k.info.get("libfabric", "")) or ["-"])[0]
    rows = [[k.name, k.info.get("kernel", "-"), k.info.get("cpus", "-"),
             k.info.get("qemu", "-").replace("QEMU emulator version ", ""),
             k.info.get("host cpu", "-"), k.info.get("perftest", "-").replace("Version: ", ""),
             libfabric(k), str(k.rounds or "-")] for k in ks]
    return ["## The machine", "",
            *table(["kernel", "guest kernel", "vCPUs", "QEMU (TCG)", "host CPU", "perftest",
                    "libfabric", "rounds of a row"], rows), "",
            para("The host's cores are shared with whatever else ran (each run's "
                 "`info.txt` notes the host's load); the rows of a run alternate, so that a "
                 "disturbance spreads over all of them rather than one.  Iterations per "
                 "run:"), "", *runs(ks, "results", "iterations")]


MODES = [("ib_send_lat.busy", "ib_send_lat"), ("send_lat.doorbell.busy", "doorbell"),
         ("send_lat.poller.busy", "poller"), ("ib_send_lat.event", "ib_send_lat -e"),
         ("send_lat.doorbell.event", "doorbell -e"), ("send_lat.poller.event", "poller -e")]

LATENCY_TEXT = """\
Doorbell mode posts with one `ENTER` system call per batch; poller mode
leaves the posting to the module's poller thread.  Between lchan and
`ib_send_lat` with busy polling lies the way a completion takes to the
application: perftest's user QP reads its completions in place, in memory
the device writes, while a kernel QP's go through the device's completion
handler and ib_core's CQ polling before lchan writes them into the
channel's ring.  On 6.1 rxe's completion tasklet runs behind the rest of
its softirq work; on 6.12 ib_core's poll worker is queued on the CPU where
rxe's worker wrote the completion and waits for it to give that CPU up
(`make latency-path`, below).  siw adds a step on the sending side: it
sends a user QP's work in the posting call but hands a kernel QP's to its
transmit thread, so every lchan send on siw0 pays that thread's wake-up
and a task switch.  Neither driver offers a kernel caller the inline path.

How lchan posts and polls depends on the kernel (`kmod/lchan_compat.h`).
6.1's rxe runs a kernel QP's requester in a tasklet: lchan posts with
bottom halves disabled, so that the tasklet runs on the posting CPU as
they are enabled again, and polls the CQs in softirq context.  Since 6.4
rxe works in a workqueue and reports completions from a kworker, where a
raised softirq waits for ksoftirqd: there lchan posts with bottom halves
enabled and polls rxe's CQs from ib_core's high-priority workqueue, the
faster of the two in a 6.12 guest run with a module whose choice could be
switched (siw's CQs stay in softirq).

With busy-polling applications poller mode shares the guest's two vCPUs
between two spinning applications and the pool's thread: when busy user
code keeps the thread off its CPU it sleeps, and the applications'
doorbells post as in doorbell mode (the `ENTER` counts under "System calls
per operation" show it), so here poller mode with busy polling amounts to
doorbell mode.  With events the applications sleep and the thread posts.

perftest's event mode makes its CQs one entry deep, and 6.12's rxe drops a
completion that finds its CQ full, so `ib_send_lat -e` on 6.12's rxe0 hangs
now and then (the kernel log says `rxe_cq_post: queue full`) and its round
has no figure.
"""

DIRECT_TEXT = """\
Direct polling (`LCHAN_DIRECT_POLL`, `lchan_perf --mode direct`) makes
the channel's CQ `IB_POLL_DIRECT`: no handler or worker polls it, the
application's own `ENTER` does and writes the CQEs there, as a user QP's
completions reach the process that waits for them.  What stays between it
and `ib_send_lat` is the system call itself: ib_core gives a kernel
consumer no way to map a device's CQ into a process.  Its costs: no
completion events (a `poll(2)` or epoll waiter is served by a poll once a
tick from a kernel worker), busy waiting spent in system calls, and no
iWARP, which has no direct polling.
"""


def latency(ks):
    return ["## Latency", "", "### 64 B SEND by mode, `make bench`", "",
            para("Median RTT/2 in us; in brackets lchan over `ib_send_lat` of the same "
                 "polling style in the same run."), "",
            "![64 B SEND latency by mode](latency-mode.png)", "",
            *results_table(ks, MODES + [("tcp_lat.64", "TCP (sockperf)")], "lat_median_us"),
            LATENCY_TEXT, *poller(ks), DIRECT_TEXT, *by_size(ks), *other_ops(ks),
            *latency_path(ks)]


POLLER = [("ib_send_lat.busy", "ib_send_lat", None),
          ("send_lat.doorbell.busy", "doorbell", "ib_send_lat.busy"),
          ("send_lat.poller.busy", "poller", "ib_send_lat.busy"),
          ("send_lat.direct.busy", "direct", "ib_send_lat.busy"),
          ("ib_send_lat.event", "ib_send_lat -e", None),
          ("send_lat.doorbell.event", "doorbell -e", "ib_send_lat.event"),
          ("send_lat.poller.event", "poller -e", "ib_send_lat.event")]


def round_medians(ks, data, col, spec):
    """Rows of a rounds file (data(k) of each kernel): per device the median
    over the rounds of each of spec's rows, with its ratio to its peer."""
    rows = []
    for k in ks:
        tsv = data(k)
        n = max([int(r["round"]) for r in tsv] or [0])
        for dev in sorted({r["dev"] for r in tsv}):
            cells = []
            for i, _, peer in spec:
                v, p = (values(tsv, col, dev=dev, row=x) for x in (i, peer))
                text = num(median(v)) + (f" ({times(ratio(median(v), median(p)))})"
                                         if v and peer else "")
                cells.append(text + (f", {len(v)} of {n} rounds" if v and len(v) < n else ""))
            rows.append([k.name, dev + "0", str(n)] + cells)
    return rows


def poller(ks):
    """make bench-poller's rounds: medians by mode, direct polling's too."""
    out = ["### 64 B SEND by mode with direct polling, `make bench-poller`", ""]
    rows = round_medians(ks, lambda k: k.poller, "median_us", POLLER)
    if rows:
        out += [para("Medians over alternating rounds in one guest run, us; in brackets "
                     "lchan over `ib_send_lat` of the same style."), "",
                *table(["kernel", "device", "rounds"] + [t for _, t, _ in POLLER], rows), ""]
    missing = [k.name for k in ks if not k.poller]
    if missing:
        out += [para(f"No `make bench-poller` run is committed for {', '.join(missing)}; "
                     "its `poller.tsv` brings the direct polling figures."), ""]
    return out + poller_msg(ks)


POLLER_MSG = [("rs_lat.busy", "rsockets (rstream)", None),
              ("msg_lat.doorbell.busy", "doorbell", "rs_lat.busy"),
              ("msg_lat.direct.busy", "direct", "rs_lat.busy")]


def poller_msg(ks):
    """make bench-poller's message rows: lchan_msg_perf beside rstream."""
    rows = round_medians(ks, lambda k: k.poller_msg, "mean_us", POLLER_MSG)
    if not rows:
        return []
    return ["### 64 B messages with direct polling, `make bench-poller`", "",
            para("The message API (`lchan_msg_perf -t lat`) and rsockets (`rstream -C 1`), "
                 "busy polling, in the same rounds as the table above: medians over the "
                 "rounds of each run's mean RTT/2 (rstream reports no median), us; in "
                 "brackets lchan over rstream.  Direct polling "
                 "(`LCHAN_MSG_OPT_DIRECT`) is for InfiniBand and RoCE only."), "",
            *table(["kernel", "device", "rounds"] + [t for _, t, _ in POLLER_MSG], rows), ""]


def by_size(ks):
    sizes = sorted({s["size"] for k in ks for s in k.sweep if s["size"] is not None})
    tools = (("lchan_perf", "lchan"), ("ib_send_lat", "ib_send_lat"),
             ("sockperf", "TCP (sockperf)"))
    rows = []
    for k, d in each_device(ks):
        v = {(s["tool"], s["size"]): s["lat_median_us"] for s in k.sweep
             if s["device"] == d and s["status"] == "ok"}
        rows += [[k.name, d, name] + [num(v.get((t, s))) for s in sizes] for t, name in tools]
        rows.append([k.name, d, "lchan / ib_send_lat"] + [
            times(ratio(v.get(("lchan_perf", s)), v.get(("ib_send_lat", s)))) for s in sizes])
    return ["### SEND by message size, `make bench`", "",
            para("Median RTT/2 in us, one run per size, doorbell mode, busy polling.  "
                 "Small messages show the fixed cost of a round trip, large ones the "
                 "time to move the payload through the emulated device."), "",
            "![SEND latency by message size](latency-size.png)", "",
            *table(["kernel", "device", ""] + [size_name(s) for s in sizes], rows), ""]


def other_ops(ks):
    cols = [("ib_write_lat", "ib_write_lat"), ("write_lat.doorbell.busy", "WRITE"),
            ("ib_read_lat", "ib_read_lat"), ("read_lat.doorbell.busy", "READ"),
            ("ib_atomic_lat", "ib_atomic_lat"), ("atomic_lat.doorbell.busy", "fetch-and-add")]
    return ["### Other operations, `make bench`", "",
            para("64 B (atomics 8 B), doorbell mode, busy polling, median us: RTT/2 of a "
                 "WRITE ping-pong, the whole operation for READ and fetch-and-add.  lchan "
                 "has no atomics on iWARP."), "",
            *results_table(ks, cols, "lat_median_us")]


def latency_path(ks):
    have = [k.name for k in ks if os.path.exists(k.file("latency-path.md"))]
    if not have:
        return []
    return ["### Where a round trip goes, `make latency-path`", "",
            para("A 64 B SEND round trip on rxe0, cut with kprobes at the points lchan and "
                 "`ib_send_lat` both pass (rxe's post and completion, the CQ's handler, "
                 "lchan's CQE write and `ENTER`) and the scheduler's wake-ups and switches: "
                 "two transits (a send enters rxe until rxe writes the peer's receive "
                 "completion) and two reactions (that completion until the peer's next send "
                 "enters rxe).  A transit costs a kernel QP what it costs a user QP; lchan's "
                 "extra time is in the reaction, the completion's way to the application.  "
                 "Reports: " + ", ".join(f"[{n}]({n}/latency-path.md)" for n in have) + "."),
            ""]


def bandwidth(ks):
    small = [("ib_send_bw", "ib_send_bw"), ("send_bw.doorbell", "doorbell"),
             ("send_bw.poller", "poller"), ("tcp_bw.64", "TCP (qperf)")]
    large = [("ib_write_bw", "ib_write_bw"), ("write_bw.doorbell", "WRITE doorbell"),
             ("write_bw.poller", "WRITE poller"), ("ib_read_bw", "ib_read_bw"),
             ("read_bw.doorbell", "READ doorbell"), ("tcp_bw.65536", "TCP (qperf)")]
    return ["## Bandwidth and message rate, `make bench`", "",
            para("lchan posts 16 operations per submit and asks for one completion in "
                 "32; in brackets lchan over perftest of the same operation and size."), "",
            "![bandwidth and message rate](bandwidth.png)", "",
            "64 B SENDs, thousand messages per second:", "",
            *results_table(ks, small, "msg_rate_mpps", 1000),
            "64 KiB, MB/s:", "", *results_table(ks, large, "bw_gbps", 125), *syscalls(ks)]


SYSCALLS = ["send_lat.doorbell.busy", "send_lat.poller.busy", "send_lat.poller.event",
            "send_bw.doorbell", "send_bw.poller", "write_bw.doorbell", "write_bw.poller"]


def syscalls(ks):
    def cell(r):
        if r is None or r["status"] != "ok" or r["syscalls_per_op"] is None:
            return "-"
        # The difference of two strace runs has a little noise around 0.
        return f"{fmt(max(r['syscalls_per_op'], 0.0), 3)} ({fmt(r['enters_per_op'], 3)})"
    rows = [[k.name, d] + [cell(k.row(d, i)) for i in SYSCALLS] for k, d in each_device(ks)]
    return ["### System calls per operation, `make bench`", "",
            para("The client's system calls per operation by `strace -c -f`, the "
                 "difference of two runs of different length so that set-up cancels "
                 "(clock reads, system calls in this guest and vDSO calls on hardware, are "
                 "left out); in brackets the module's exact count of `ENTER` calls per "
                 "operation in the timed loop.  Doorbell mode makes one `ENTER` per batch: "
                 "one per message in a ping-pong, one per 16 in a stream.  Poller mode "
                 "makes none while its thread runs and rings the doorbell when busy "
                 "applications keep the thread off its CPU.  CPU time per operation is in "
                 "each kernel's `results.md`."), "",
            *table(["kernel", "device"] + [f"`{i}`" for i in SYSCALLS], rows), ""]


def message_api(ks):
    lat = [("msg_lat.doorbell.busy", "doorbell"), ("msg_lat.poller.busy", "poller"),
           ("msg_lat.doorbell.event", "doorbell -e"), ("msg_lat.poller.event", "poller -e"),
           ("rs_lat.busy", "rsockets"), ("rs_lat.event", "rsockets -T b"),
           ("tcp_rs_lat.busy", "TCP"), ("tcp_rs_lat.event", "TCP -T b")]
    bw = [("msg_bw.registered.doorbell", "registered, doorbell"),
          ("msg_bw.plain.doorbell", "plain, doorbell"),
          ("msg_bw.registered.poller", "registered, poller"),
          ("msg_bw.plain.poller", "plain, poller"),
          ("msg_bw.registered.poller.event", "registered, poller -e"),
          ("msg_bw.plain.poller.event", "plain, poller -e"),
          ("write_bw.1M.doorbell", "lchan_perf write_bw"), ("rs_bw.1M", "rsockets"),
          ("tcp_rs_bw.1M", "TCP")]
    return ["## Message API against rsockets, `make bench`", "",
            para("`lchan_msg_send` and `lchan_msg_recv` (`liblchan_msg.h`, measured by "
                 "`lchan_msg_perf`) against the same program shape over rsockets and TCP, "
                 "librdmacm's `rstream`.  rstream reports only a mean, so latency here is "
                 "the mean RTT/2 of a 64 B ping-pong in us; in brackets lchan over rsockets "
                 "of the same style (busy with busy, `-e` with blocking calls)."), "",
            *results_table(ks, lat, "lat_avg_us", vs="ratio_rsockets"),
            para("1 MiB messages, MB/s, in brackets lchan over rsockets.  Registered "
                 "buffers are registered once and sent with the `_mr` calls; plain ones are "
                 "ordinary memory, which the library registers for each message above its "
                 "8 KiB buffers.  A busy-polling call sleeps through the bytes of a large "
                 "message after 50 us, since spinning would take the CPU the software "
                 "devices move the bytes with, so a busy stream makes one `poll(2)` per "
                 "message too."), "",
            *results_table(ks, bw, "bw_gbps", 125, vs="ratio_rsockets")]


def libfabric(ks):
    rows = []
    for k in ks:
        for d in k.fabric:
            got = {(r["size"], r["tool"]): r for r in fab.rows(d)}
            for size in d.sizes():
                lc = got.get((size, fab.PP + "lchan"), {})
                rows.append([k.name, d.name, size_name(size)]
                            + [num(got.get((size, t), {}).get("lat_avg_us"))
                               for _, t, _ in fab.TOOLS[:6]]
                            + [times(lc.get(x))
                               for x in ("vs_verbs", "vs_lchan_perf", "bw_vs_verbs")])
    return ["## libfabric: the lchan provider against verbs, `make bench-fabric`", "",
            para("`fi_pingpong -e msg`, medians over alternating rounds of the mean "
                 "RTT/2 in us: fi_pingpong prints only a mean (and MB/s), so `lchan_perf` "
                 "gives its `send_lat` mean here, doorbell mode.  fi_pingpong polls its "
                 "queues with `fi_cq_read` and cannot wait for events, so only busy polling "
                 "is measured.  The lchan_perf column tells how much of the distance to the "
                 "verbs provider is lchan's completion path (above) rather than the "
                 "provider's.  Every figure: `fabric.md` in each kernel's directory.  "
                 "Runs:"), "", *runs(ks, "fabric", "fabric"),
            *table(["kernel", "device", "size", "lchan", "lchan, poller", "lchan, direct",
                    "verbs", "tcp", "lchan_perf", "lchan / verbs", "lchan / lchan_perf",
                    "MB/s: lchan / verbs"],
                   rows), ""]


CONNECT_TEXT = """\
Most of a connect, lchan's and rdma_cm's alike, is the connection
manager's exchange (with the accepting side's wake-up and QP creation in
it) and the two QP creations.  lchan adds the wake-up of the connecting
call and the step from ESTABLISHED to the mapped file, which on iWARP
holds lchan's opening exchange between two lchan ends.  The one-entry
columns show what a default channel's queues cost: their memory, made and
cleared at every set-up (`make profile PROFILE=connect` shows the page
clearing under rxe's queue set-up and lchan's rings).  cmtime's figure
divides the wall time of all its connects in flight, which no connection made
alone can match; `cm_seqtime` with lchan's queues is the like-for-like
peer of lchan's one-at-a-time figure.  Step by step figures from lchan's
tracepoints: `connect.md` in each kernel's directory.
"""


def connect(ks):
    setup, close = [], []
    for k in ks:
        for d in k.connect:
            seq, par, one = (d.med(t, x) for t, x in (
                (conn.LC, "connect_median_us"), (conn.LC, "par_connect_us_per_conn"),
                (conn.LC1, "connect_median_us")))
            cm, same, cmqp = (d.cm_sum(["create_qp", "connect"]),
                              d.med(conn.CSL, "connect_median_us"),
                              d.med(conn.CS, "connect_median_us"))
            setup.append([k.name, d.name, num(seq), num(par), num(cm), times(ratio(seq, cm)),
                          times(ratio(par, cm)), num(same), times(ratio(seq, same)), num(one),
                          num(cmqp), times(ratio(one, cmqp)),
                          num(d.cm_sum(["create_qp", "connect"], conn.CM1))])
            cl, cmc, csc = (d.med(conn.LC, "close_median_us"), d.cm_sum(conn.CM_TEARDOWN),
                            d.med(conn.CSL, "close_median_us"))
            close.append([k.name, d.name, num(cl), num(d.med(conn.LC, "par_close_us_per_conn")),
                          num(cmc), times(ratio(cl, cmc)), num(csc), times(ratio(cl, csc))])
    return ["## Connection set-up, `make bench`", "",
            para("Medians over alternating rounds, us per connection.  `lchan_conntime` "
                 "connects and accepts one at a time (until the channel is mapped) and "
                 "several in flight (wall time per channel).  cmtime gives its create qp and "
                 "connect steps with all of a round's connections in flight, wall time over "
                 "their number.  `cm_seqtime` times rdma_cm one connection at a time in one "
                 "warm "
                 "process, as lchan's first figure is, with a default lchan channel's queues "
                 "(131 WRs of 16 SGEs each way, a CQ of 261) or with cmtime's one-entry QP, "
                 "the peer of lchan with one-entry queues (`lchan_conntime -e 1`).  `cmtime "
                 "-c 1` is a fresh process per connection, its first use of the device "
                 "included.  Runs:"), "", *runs(ks, "connect", "connect"),
            "![connection set-up](connect.png)", "",
            *table(["kernel", "device", "lchan, one at a time", "lchan, in flight", "cmtime",
                    "one at a time / cmtime", "in flight / cmtime",
                    "cm_seqtime, lchan's queues", "lchan / cm_seqtime", "lchan, 1-entry queues",
                    "cm_seqtime, cmtime's QP", "1-entry / cm_seqtime", "cmtime -c 1"], setup),
            "", "Close, us per connection (cmtime: disconnect and destroy):", "",
            *table(["kernel", "device", "lchan, one at a time", "lchan, in flight", "cmtime",
                    "lchan / cmtime", "cm_seqtime, lchan's queues", "lchan / cm_seqtime"],
                   close), "", CONNECT_TEXT]


def programs(ks):
    rows = []
    for k in ks:
        for d in k.apps:
            for r in apps.rows(d):
                rows.append([k.name, d.name, r["row"], apps.UNITS[r["key"]]]
                            + [num(r[t]) for t in apps.TRANSPORTS]
                            + [times(r["vs_tcp"]), times(r["vs_rsocket"]),
                               times(r["p99_vs_tcp"])])
    if not rows:
        return []
    return ["## Unmodified programs, `make bench-apps`", "",
            para("Debian's redis-server with redis-benchmark (50 clients, 64 B values), "
                 "iperf3 and nginx (two workers, a 4 KiB file) with wrk (16 connections), "
                 "server and client in one guest, both under `lchan-run`, beside the same "
                 "programs over plain TCP and under rsockets' preload; medians over "
                 "alternating rounds.  TCP between two processes of one machine never "
                 "reaches a device, while lchan and rsockets go through rxe0, so these "
                 "ratios charge lchan with the device's cost too.  On siw an `lchan-run` "
                 "server stays TCP (iWARP listens in TCP's port space), so siw is not in "
                 "the table.  A \"-\" under rsocket is a program rsockets' preload could "
                 "not carry: Debian 12's (rdma-core 44) leaves redis-server unable to make "
                 "its accept handler, gives iperf3 EOPNOTSUPP from getsockopt or a run "
                 "that receives nothing, and fails wrk's connects to nginx.  Every figure "
                 "and the goals: `apps.md` in each kernel's directory.  Runs:"), "",
            *runs(ks, "apps", "apps"),
            *table(["kernel", "device", "program", "unit", "tcp", "lchan-run", "rsocket",
                    "lchan-run / tcp", "lchan-run / rsocket", "p99: lchan-run / tcp"],
                   rows), ""]


def pool(ks):
    rows = []
    for k in ks:
        for dev in sorted({r["dev"] for r in k.pool}):
            load, device = (median(values(k.pool, "median_us", dev=dev, rule=x))
                            for x in ("load", "device"))
            rows.append([k.name, dev + "0", str(len({r["round"] for r in k.pool})),
                         num(load), num(device), times(ratio(device, load))])
    if not rows:
        return []
    return ["## The poller pool's placement, `make bench-pool`", "",
            para("A pool of two threads serves two concurrent poller-mode ping-pongs of "
                 "64 B SENDs, one over rxe0 and one over siw0, started one after the other: "
                 "by load (`poller_assign=load`, the default) each thread serves one end of "
                 "each ping-pong, by device each serves both ends of one.  The applications "
                 "wait for events: four busy-polling ones on two vCPUs would measure the "
                 "scheduler.  Medians over alternating rounds, us."), "",
            *table(["kernel", "device", "rounds", "by load", "by device", "device / load"],
                   rows), "",
            para("By load needs no knowledge of the devices and keeps the threads evenly "
                 "busy.  By device is for machines whose devices sit on different NUMA "
                 "nodes, with `poller_cpus` keeping the pool near them, which a one-node "
                 "guest cannot show."), ""]


def two_machines(ks):
    rows = []
    for k in ks:
        for dev in sorted({r["dev"] for r in k.two}):
            row = [k.name, dev]
            for test, peer, _, _ in two.TESTS:
                a, b = (two.figures(k.two, dev, test, t) for t in ("lchan_perf", peer))
                row += [num(median(a)), num(median(b)), times(ratio(median(a), median(b))),
                        f"{len(a)}; {len(b)}"]
            rows.append(row)
    if not rows:
        return []
    return ["## Two machines, `make bench-2node`", "",
            para("Two guests (1 vCPU, 1 GiB each) joined by a virtual wire (QEMU "
                 "`-netdev dgram`, one UDP datagram per Ethernet frame on 127.0.0.1), rxe1 "
                 "and siw1 on it in both; `lchan_perf` (doorbell mode, busy polling) and "
                 "perftest alternating, three rounds; medians of the rounds that gave a "
                 "figure (their number: lchan; perftest).  The wire adds a few hundred us "
                 "to every round trip."), "",
            "![two machines](two-machines.png)", "",
            *table(["kernel", "device", "64 B SEND, us: lchan", "ib_send_lat",
                    "lchan / ib_send_lat", "rounds", "64 KiB WRITE, MB/s: lchan",
                    "ib_write_bw", "lchan / ib_write_bw", "rounds"], rows), ""]


SOURCES = [("results", "results.json", "make bench: latency, bandwidth, message API"),
           ("connect", "connect.tsv", "connection set-up"), ("fabric", "fabric.tsv", "libfabric"),
           ("poller", "poller.tsv", "make bench-poller"), ("pool", "pool.tsv", "make bench-pool"),
           ("apps", "apps.tsv", "make bench-apps"),
           ("two-machines", "two-machines.tsv", "make bench-2node")]


def sources(ks):
    rows = []
    for k in ks:
        for stem, name, what in SOURCES:
            if os.path.exists(k.file(name)):
                i = k.infos(stem)
                rows.append([k.name, f"[{name}]({k.name}/{name})", what,
                             i.get("date", "not recorded"), i.get("commit", "not recorded"),
                             i.get("guest run", "").strip() or "-"])
    return ["## Where the figures come from", "",
            para("Each data set with the run that made it, as its info file says; the "
                 "commit is what `git describe --always` printed, `-dirty` meaning "
                 "a tree with changes not committed outside `bench/`."), "",
            *table(["kernel", "data", "from", "date", "commit", "guest run"], rows), ""]


def readme(ks):
    parts = [HEAD, machine(ks), RUNNING, latency(ks), bandwidth(ks), message_api(ks),
             libfabric(ks), connect(ks), programs(ks), pool(ks), two_machines(ks),
             sources(ks)]
    text = "\n".join(p if isinstance(p, str) else "\n".join(p) + "\n" for p in parts if p)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n"


# ---------------------------------------------------------------- plots

PLOT = """\
set terminal pngcairo size 1000,450 font ",9" noenhanced
set datafile missing "-"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set grid ytics
set key below
set logscale y
"""


def block(name, rows, head=None):
    """A gnuplot data block: rows of a label and numbers, "-" for None;
    head, a header line of the series' titles (for columnheader)."""
    def q(v):
        return f'"{v}"' if isinstance(v, str) else "-" if v is None else f"{v:.6g}"
    return ([f"${name} << EOD"] + ([" ".join(map(q, head))] if head else [])
            + [" ".join(map(q, r)) for r in rows] + ["EOD"])


def bars(name, title, ylabel, head, rows):
    return block(name, rows, ["group"] + head) + [
        f'set title "{title}"', f'set ylabel "{ylabel}"',
        f"plot for [i=2:{len(head) + 1}] ${name} using i:xtic(1) title columnheader(i)"]


def figure(row, key, scale=1):
    return row[key] * scale if row and row["status"] == "ok" and row[key] is not None else None


def plots(ks, top):
    """The README's plots, by one gnuplot run."""
    groups = each_device(ks)

    def per_group(ids, key, scale=1):
        return [[f"{k.name} {d}"] + [figure(k.row(d, i), key, scale) for i in ids]
                for k, d in groups]

    def out(name):
        return [f'set output "{os.path.join(top, name)}"']
    s = PLOT.split("\n") + out("latency-mode.png")
    s += bars("m", "64 B SEND latency by mode, median RTT/2 (emulated guest)", "us",
              [t for _, t in MODES], per_group([i for i, _ in MODES], "lat_median_us"))
    s += out("bandwidth.png") + ['set multiplot layout 1,2 title "Bandwidth and message rate '
                                 '(emulated guest)"']
    series = ["perftest", "doorbell", "poller", "TCP (qperf)"]
    s += bars("s", "64 B SEND", "thousand messages/s", series, per_group(
        ["ib_send_bw", "send_bw.doorbell", "send_bw.poller", "tcp_bw.64"], "msg_rate_mpps", 1000))
    s += bars("w", "64 KiB WRITE", "MB/s", series, per_group(
        ["ib_write_bw", "write_bw.doorbell", "write_bw.poller", "tcp_bw.65536"], "bw_gbps", 125))
    s += ["unset multiplot"]

    sizes = sorted({x["size"] for k in ks for x in k.sweep if x["size"]})
    s += out("latency-size.png") + [
        "set style data linespoints", "set logscale xy", "set key inside top left", 'set xlabel "message size"',
        'set ylabel "us"', "set xtics (" + ", ".join(f'"{size_name(x)}" {x}' for x in sizes) + ")",
        f'set multiplot layout {len(ks)},2 title "SEND latency by message size, median RTT/2 '
        '(emulated guest)"']
    for k, d in groups:
        for tool in ("lchan_perf", "ib_send_lat", "sockperf"):
            s += block(tool, [[x["size"], x["lat_median_us"]] for x in k.sweep if x["device"] == d
                              and x["tool"] == tool and x["status"] == "ok"])
        s += [f'set title "{k.name} {d}"', 'plot $lchan_perf lw 2 title "lchan (doorbell, busy)",'
              ' $ib_send_lat lw 2 title "ib_send_lat", $sockperf lw 2 title "TCP (sockperf)"']
    s += ["unset multiplot", "unset logscale", "set logscale y", "unset xlabel", "set xtics auto",
          "set style data histogram", "set key below"]

    s += out("connect.png") + ["unset logscale", "set yrange [0:*]"]
    s += bars("c", "Connection set-up per connection, median (emulated guest)", "us",
              ["lchan, one at a time", "lchan, in flight", "lchan, 1-entry queues",
               "cm_seqtime, lchan's queues", "cm_seqtime, cmtime's QP", "cmtime, all in flight"],
              [[f"{k.name} {d.name}", d.med(conn.LC, "connect_median_us"),
                d.med(conn.LC, "par_connect_us_per_conn"), d.med(conn.LC1, "connect_median_us"),
                d.med(conn.CSL, "connect_median_us"), d.med(conn.CS, "connect_median_us"),
                d.cm_sum(["create_qp", "connect"])] for k in ks for d in k.connect])

    pairs = [(k, dev) for k in ks for dev in sorted({r["dev"] for r in k.two})]
    if pairs:
        s += out("two-machines.png") + [
            "set style histogram errorbars gap 1 lw 1",
            'set multiplot layout 1,2 title "Two guests across a virtual wire: medians, bars '
            'from the lowest to the highest round (emulated)"']
        for test, peer, what, unit in (("lat", "ib_send_lat", "64 B SEND, RTT/2", "us"),
                                       ("bw", "ib_write_bw", "64 KiB WRITE", "MB/s")):
            rows = []
            for k, dev in pairs:
                rows.append([f"{k.name} {dev}"])
                for t in ("lchan_perf", peer):
                    v = two.figures(k.two, dev, test, t)
                    rows[-1] += [median(v), min(v, default=None), max(v, default=None)]
            s += block(test, rows) + [
                f'set title "{what}"', f'set ylabel "{unit}"',
                f"plot ${test} using 2:3:4:xtic(1) title \"lchan_perf\", '' using 5:6:7 "
                f'title "{peer}"']
        s += ["unset multiplot"]
    subprocess.run(["gnuplot"], input="\n".join(s) + "\n", text=True, check=True)



def main(args):
    draw = args[:1] == ["--plots"]
    args = args[1:] if draw else args
    if len(args) not in (1, 2):
        raise SystemExit("usage: report readme [--plots] DIR [OUT]")
    ks = kernels(args[0])
    if not ks:
        raise SystemExit(f"report readme: no kernel directory with an info.txt in {args[0]}")
    with open(args[1] if len(args) == 2 else os.path.join(args[0], "README.md"), "w",
              encoding="utf-8") as f:
        f.write(readme(ks))
    if draw:
        plots(ks, args[0])
