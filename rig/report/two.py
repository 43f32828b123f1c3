# SPDX-License-Identifier: GPL-2.0
"""Two machines (check-2node's guest b, make bench-2node):
report two-machines TSV

TSV is b's two-machines.tsv, "dev test tool value", one line per run that
gave a figure: lat (64 B SEND, median RTT/2 in us) and bw (64 KiB WRITE,
MB/s) of lchan_perf and perftest in alternating rounds, and netem (lchan_wire
4 KiB both ways, MB/s received; tool the wire's state, clean or impaired).
Prints its medians and ratios as TAP comments, for the run's log."""

from .stats import median, num, ratio, read_tsv, times, values

# (test, the perftest peer of lchan_perf, what, unit)
TESTS = (("lat", "ib_send_lat", "64 B SEND latency, median one way", "us"),
         ("bw", "ib_write_bw", "64 KiB WRITE bandwidth", "MB/s"))
NETEM = ("loss1", "loss5", "dup5", "reorder")


def figures(rows, dev, test, tool):
    """The figures of every round of tool's test on dev."""
    return values(rows, "value", dev=dev, test=test, tool=tool)


def main(args):
    if len(args) != 1:
        raise SystemExit("usage: report two-machines TSV")
    rows = read_tsv(args[0])
    for dev in sorted({r["dev"] for r in rows}):
        for test, peer, what, unit in TESTS:
            a, b = (figures(rows, dev, test, t) for t in ("lchan_perf", peer))
            print(f"# two machines, {dev} IPv4, {what} (medians of {len(a)}; {len(b)} "
                  f"rounds): lchan_perf {num(median(a))} {unit}, {peer} {num(median(b))} "
                  f"{unit}, lchan/perftest {times(ratio(median(a), median(b)))}")
        clean = median(figures(rows, dev, "netem", "clean"))
        wire = [(n, median(figures(rows, dev, "netem", n))) for n in NETEM]
        if clean is not None or any(v is not None for _, v in wire):
            print(f"# impaired wire, {dev} IPv4, lchan_wire 4 KiB both ways, MB/s received "
                  f"(ratio to clean): clean {num(clean)}" + "".join(
                      f", {n} {num(v)} ({times(ratio(v, clean))})" for n, v in wire))
