# SPDX-License-Identifier: GPL-2.0
"""The report of unmodified programs, `make bench-apps`: report apps DIR

Reads DIR/apps.tsv ("dev round tool key value", the tool being
PROGRAM.TRANSPORT: tcp, lchan for lchan-run, rsocket for rsockets'
preload) and writes DIR/apps.md and DIR/apps.json: per device and program
the median of each figure over the rounds, lchan-run against TCP and
against rsockets, and lchan-run's goals on rxe0.
"""

from .rounds import Rounds, devices, write_target_report
from .stats import fmt, ratio, table

GOAL_DEVICE = "rxe0"
TRANSPORTS = ["tcp", "lchan", "rsocket"]
# (program, label, key of its figure, higher is better, goal over TCP,
# goal over rsocket), in table order.
PROGRAMS = [
    ("redis-get", "redis-benchmark GET, 50 clients, 64 B", "rps", 1.2, 1.0),
    ("redis-set", "redis-benchmark SET, 50 clients, 64 B", "rps", 1.2, 1.0),
    ("redis-p16-get", "redis-benchmark GET, -P 16", "rps", 1.2, 1.0),
    ("redis-p16-set", "redis-benchmark SET, -P 16", "rps", 1.2, 1.0),
    ("iperf3-p1", "iperf3, one stream", "mbps", None, 1.0),
    ("iperf3-p4", "iperf3, -P 4", "mbps", None, 1.0),
    ("nginx-keepalive", "nginx + wrk, keep-alive, 4 KiB", "rps", 1.2, None),
    ("nginx-close", "nginx + wrk, a request per connection", "rps", 1.0, None),
]
UNITS = {"rps": "requests/s", "mbps": "Mbit/s"}


class Device(Rounds):
    def fig(self, prog, transport, key):
        return self.med(f"{prog}.{transport}", key)

    def nrounds(self, prog, transport, key):
        return len(self.rounds(f"{prog}.{transport}", key))


def rows(d):
    """Per program: each transport's figure and p99, the ratios, and how
    lchan-run's connections went."""
    out = []
    for prog, label, key, _, _ in PROGRAMS:
        got = {t: d.fig(prog, t, key) for t in TRANSPORTS}
        if all(v is None for v in got.values()):
            continue
        p99 = {t: d.fig(prog, t, "p99_ms") for t in TRANSPORTS}
        ways = f"{prog.replace('-set', '-get')}.lchan"
        out.append({"program": prog, "row": label, "key": key, **{t: got[t] for t in TRANSPORTS},
                    "rounds": [d.nrounds(prog, t, key) for t in TRANSPORTS],
                    "p99_ms": p99,
                    "vs_tcp": ratio(got["lchan"], got["tcp"]),
                    "vs_rsocket": ratio(got["lchan"], got["rsocket"]),
                    "p99_vs_tcp": ratio(p99["lchan"], p99["tcp"]),
                    "lchan_connects": d.med(ways, "lchan_connects"),
                    "tcp_connects": d.med(ways, "tcp_connects")})
    return out


def at_least(value, limit):
    return "no data" if value is None else ("met" if value >= limit else "missed")


def goals(devs):
    out = []
    for d in devs:
        by = {r["program"]: r for r in rows(d)}
        for prog, label, key, over_tcp, over_rs in PROGRAMS:
            r = by.get(prog, {})
            for peer, limit in (("tcp", over_tcp), ("rsocket", over_rs)):
                if limit is None:
                    continue
                v = r.get("vs_" + peer)
                out.append({"device": d.name, "what": f"{label}: lchan-run / {peer}",
                            "target": f">= {limit:.2f}x", "ratio": v,
                            "goal": d.name == GOAL_DEVICE, "verdict": at_least(v, limit)})
            if key == "rps":
                v = r.get("p99_vs_tcp")
                out.append({"device": d.name, "what": f"{label}: p99, lchan-run / tcp",
                            "target": "<= 1.00x", "ratio": v, "goal": d.name == GOAL_DEVICE,
                            "verdict": "no data" if v is None else
                            ("met" if v <= 1.0 else "missed")})
    return out


def device_md(d):
    return [f"### {d.name}", "",
            "Medians over the rounds. Ratios are lchan-run's figure over the peer's "
            "(higher is better); p99 in ms, lower is better. Connects: lchan-run's "
            "client connections per run over lchan and over TCP.", "",
            *table(["program", "unit", "tcp", "lchan-run", "rsocket", "/tcp", "/rsocket",
                    "p99 tcp", "p99 lchan-run", "p99 rsocket", "rounds", "connects lchan; TCP"],
                   [[r["row"], UNITS[r["key"]]] + [fmt(r[t]) for t in TRANSPORTS]
                    + [fmt(r["vs_tcp"], 2), fmt(r["vs_rsocket"], 2)]
                    + [fmt(r["p99_ms"][t], 2) for t in TRANSPORTS]
                    + ["; ".join(map(str, r["rounds"])),
                       f"{fmt(r['lchan_connects'], 0)}; {fmt(r['tcp_connects'], 0)}"]
                    for r in rows(d)]), ""]


def main(args):
    if len(args) != 1:
        raise SystemExit("usage: report apps DIR")
    devs = devices(args[0], "apps", Device)
    head = ["# Unmodified programs: TCP, lchan-run and rsockets' preload", "",
            f"Goals on {GOAL_DEVICE} (other devices reported, not judged): "
            "redis-benchmark's requests per second at least 1.2x TCP's and 1.0x "
            "rsockets'; iperf3 at least 1.0x rsockets'; nginx with wrk at least 1.2x "
            "TCP's with keep-alive and 1.0x with a request per connection; p99 no "
            "worse than TCP's. Server and client run in one guest, so TCP never "
            "reaches a device while lchan-run and rsockets go through rxe.", ""]
    write_target_report(args[0], "apps", head, devs, goals(devs), device_md, rows)
