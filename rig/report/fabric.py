# SPDX-License-Identifier: GPL-2.0
"""The libfabric report of `make bench`: report fabric DIR

Reads DIR/fabric.tsv ("dev round tool key value", one line per figure and
round) and writes DIR/fabric.md and DIR/fabric.json: per device the median
of each figure over the rounds, fi_pingpong over the lchan provider against
fi_pingpong over libfabric's verbs and tcp providers and against lchan_perf,
with ratios, and the provider's goals on rxe0.

fi_pingpong polls its completion queues with fi_cq_read and prints only the
mean time of a transfer (RTT/2) and MB/s (bytes over that time); the
lchan_perf rows are its send_lat in the same terms, so means are compared
with means.
"""

from .rounds import Rounds, devices, verdict, write_target_report
from .stats import fmt, ratio, table

GOAL_DEVICE = "rxe0"
GOAL_SIZE = "64"
PP = "fi_pingpong."
# (row, tool) in table order; the lchan rows name their lchan_perf peer.
TOOLS = [
    ("fi_pingpong, lchan (doorbell)", PP + "lchan", "lchan_perf.doorbell"),
    ("fi_pingpong, lchan (poller)", PP + "lchan.poller", "lchan_perf.poller"),
    ("fi_pingpong, lchan (direct)", PP + "lchan.direct", "lchan_perf.direct"),
    ("fi_pingpong, verbs", PP + "verbs", None),
    ("fi_pingpong, tcp", PP + "tcp", None),
    ("lchan_perf send_lat, doorbell", "lchan_perf.doorbell", None),
    ("lchan_perf send_lat, poller", "lchan_perf.poller", None),
    ("lchan_perf send_lat, direct", "lchan_perf.direct", None),
]


class Device(Rounds):
    def sizes(self):
        keys = {k for t in self.tools.values() for k in t}
        return sorted({int(k.split("_")[1]) for k in keys
                       if k.startswith("lat_") and k.endswith("_avg_us")})


def rows(d):
    """Per size and tool: latency, bandwidth and the ratios."""
    out = []
    for size in d.sizes():
        lat, bw = f"lat_{size}_avg_us", f"bw_{size}_mbps"
        verbs, tcp = d.med(PP + "verbs", lat), d.med(PP + "tcp", lat)
        verbs_bw = d.med(PP + "verbs", bw)
        for label, tool, perf in TOOLS:
            if not d.rounds(tool, lat):
                continue  # not run on this device (direct polling on iWARP)
            v, lchan = d.med(tool, lat), tool.startswith(PP + "lchan")
            out.append({"size": size, "row": label, "tool": tool,
                        "rounds": len(d.rounds(tool, lat)), "lat_avg_us": v,
                        "lat_median_us": d.med(tool, f"lat_{size}_median_us"),
                        "bw_mbps": d.med(tool, bw),
                        "vs_verbs": ratio(v, verbs) if tool != PP + "verbs" else None,
                        "vs_tcp": ratio(v, tcp) if lchan else None,
                        "vs_lchan_perf": ratio(v, d.med(perf, lat)) if perf else None,
                        "bw_vs_verbs": ratio(d.med(tool, bw), verbs_bw) if lchan else None})
    return out


def goals(devs):
    lat = f"lat_{GOAL_SIZE}_avg_us"
    out = []
    for d in devs:
        lc = d.med(PP + "lchan", lat)
        for what, target, r, limit in (
                ("fi_pingpong latency, lchan (doorbell) / verbs, busy polling", "<= 1.00x",
                 ratio(lc, d.med(PP + "verbs", lat)), 1.0),
                ("fi_pingpong latency, lchan (doorbell) / lchan_perf send_lat doorbell (means)",
                 "<= 1.10x", ratio(lc, d.med("lchan_perf.doorbell", lat)), 1.1)):
            out.append({"device": d.name, "what": what, "target": target, "ratio": r,
                        "goal": d.name == GOAL_DEVICE, "verdict": verdict(r, limit)})
        if d.rounds(PP + "lchan.direct", lat):
            r = ratio(d.med(PP + "lchan.direct", lat), d.med(PP + "verbs", lat))
            out.append({"device": d.name,
                        "what": "fi_pingpong latency, lchan (direct, FI_LCHAN_DIRECT) / verbs",
                        "target": "<= 1.25x", "ratio": r, "goal": d.name == GOAL_DEVICE,
                        "verdict": verdict(r, 1.25)})
        out.append({"device": d.name, "what": "fi_pingpong latency, lchan / verbs, with events",
                    "target": "<= 1.00x", "ratio": None, "goal": d.name == GOAL_DEVICE,
                    "verdict": "not measured: fi_pingpong has no event mode"})
    return out


def device_md(d):
    return [f"### {d.name}", "",
            "Medians over the rounds of the mean one-way time of a transfer (RTT/2, us) "
            "and of MB/s; lchan_perf's median RTT/2 beside its mean. Ratios: latency of "
            "the row over the peer's (lower is better); bandwidth of the row over verbs' "
            "(higher is better).", "",
            *table(["size", "tool", "rounds", "mean us", "median us", "MB/s", "/verbs", "/tcp",
                    "/lchan_perf", "MB/s /verbs"],
                   [[str(r["size"]), r["row"], str(r["rounds"]), fmt(r["lat_avg_us"]),
                     fmt(r["lat_median_us"]), fmt(r["bw_mbps"], 2)]
                    + [fmt(r[k], 2) for k in ("vs_verbs", "vs_tcp", "vs_lchan_perf",
                                              "bw_vs_verbs")] for r in rows(d)]), ""]


def main(args):
    if len(args) != 1:
        raise SystemExit("usage: report fabric DIR")
    devs = devices(args[0], "fabric", Device)
    head = ["# libfabric: fi_pingpong over lchan, verbs and tcp", "",
            f"Issue 18's goals on {GOAL_DEVICE}, {GOAL_SIZE} B (other "
            "devices reported, not judged): the lchan provider's latency "
            "<= 1.0x the verbs provider's with events, and no worse than "
            "lchan_perf + 10%. fi_pingpong (libfabric-bin) polls its "
            "completion queues with fi_cq_read and has no option to wait "
            "for events, so only busy polling is measured.", ""]
    write_target_report(args[0], "fabric", head, devs, goals(devs), device_md, rows)
