# SPDX-License-Identifier: GPL-2.0
"""The connection set-up report of `make bench`: report connect DIR

Reads DIR/connect.tsv ("dev round tool key value": lchan_conntime's JSON
members and cmtime's microseconds per connection of each step, one line per
figure and round) and writes DIR/connect.md and DIR/connect.json: per
device the median of each figure over the rounds, lchan against cmtime with
ratios, and the set-up goal on rxe0.

cmtime resolves, connects and disconnects all its connections at once and
creates their QPs one after the other; its "us per conn" is a step's wall
time over the number of connections.  lchan_conntime's sequential figures
are one connection at a time, its parallel ones a wall time per connection
with a few in flight: both are set beside cmtime's.  cmtime's QPs have one
entry per queue; lchan's default rings far more, whose memory is made and
cleared at each set-up: where the bench ran lchan_conntime with one-entry
queues too (tool lchan_conntime_e1), those rows are reported beside, not
judged.  So is rdma_cm one connection at a time (tool cmtime_c1: runs of
"cmtime -c 1", each a fresh process, every run a round of its own), the
peer of lchan's sequential figures; and rdma_cm one connection at a time
in one warm process (tools cm_seqtime, with cmtime's QP, and
cm_seqtime_lchan, with a default lchan channel's queues), whose steps carry
lchan's step names.
"""

from .rounds import Rounds, devices, judged, verdict, write_report
from .stats import fmt, median, ratio, table

GOAL_DEVICE = "rxe0"
GOAL_LIMIT = 0.5
CM = "cmtime"
LC = "lchan_conntime"
# lchan_conntime -e 1: queues of one entry, as cmtime makes its QPs.
LC1 = "lchan_conntime_e1"
# cmtime -c 1: one connection a run.
CM1 = "cmtime_c1"
# build/tools/cm_seqtime: one at a time, warm; cmtime's QP, lchan's queues.
CS = "cm_seqtime"
CSL = "cm_seqtime_lchan"
# cmtime's steps, as its output names them (spaces made underscores).
CM_SETUP = ["create_id", "bind_addr", "resolve_addr", "resolve_route",
            "create_qp", "connect"]
CM_TEARDOWN = ["disconnect", "destroy"]
# lchan's steps (tracepoints) beside cmtime's nearest ones.
STEPS = [
    ("resolve_addr", ["create_id", "bind_addr", "resolve_addr"]),
    ("resolve_route", ["resolve_route"]),
    ("wake", []),
    ("create_qp", ["create_qp"]),
    ("connect", ["connect"]),
    ("open", []),
    ("disconnect", ["disconnect"]),
    ("drain", []),
    ("destroy", ["destroy"]),
]


class Device(Rounds):
    def cm_sum(self, steps, tool=CM):
        """The per-round sum of @tool's (cmtime's) @steps, then its median."""
        per = None
        for s in steps:
            r = self.rounds(tool, s + "_us_per_conn")
            if not r:
                continue    # a step this cmtime does not time
            per = dict(r) if per is None else {k: per[k] + r[k] for k in per if k in r}
        return median(list(per.values())) if per else None


def rows(d):
    """(figure, lchan key, lchan value, cmtime figure, cmtime value)."""
    seq, par = "connect+accept, sequential", "connect+accept, parallel, per connection"
    qp_conn, setup, teardown = (d.cm_sum(x) for x in (["create_qp", "connect"], CM_SETUP,
                                                       CM_TEARDOWN))
    out = [(f"{seq} median", "connect_median_us", "create qp + connect", qp_conn),
           (par, "par_connect_us_per_conn", "create qp + connect", qp_conn),
           (f"{seq} median", "connect_median_us", "every set-up step", setup),
           (f"{seq} p99", "connect_p99_us", None, None),
           (par, "par_connect_us_per_conn", "every set-up step", setup),
           ("close, sequential median", "close_median_us", "disconnect + destroy", teardown),
           ("close, sequential p99", "close_p99_us", None, None),
           ("close, parallel, per connection", "par_close_us_per_conn", "disconnect + destroy",
            teardown)]
    got = [(f, k, d.med(LC, k), cf, cv) for f, k, cf, cv in out]
    e1 = bool(d.rounds(LC1, "connect_median_us"))
    if e1:
        got += [(f + ", 1-entry queues", "entries1." + k, d.med(LC1, k), cf, cv)
                for f, k, cf, cv in out[:2]]
    one = d.cm_sum(["create_qp", "connect"], CM1)
    if one is not None:
        what = "create qp + connect, one connection a run (cmtime -c 1)"
        got.append((f"{seq} median", "connect_median_us", d.med(LC, "connect_median_us"),
                    what, one))
        if e1:
            got.append((f"{seq} median, 1-entry queues", "entries1.connect_median_us",
                        d.med(LC1, "connect_median_us"), what, one))
    for lc, suffix, cs, qp in ((LC, "", CSL, "lchan's queues"),
                               (LC1, ", 1-entry queues", CS, "cmtime's QP")):
        if not d.rounds(cs, "connect_median_us") or not d.rounds(lc, "connect_median_us"):
            continue
        key = "entries1." if lc == LC1 else ""
        got += [(f"{seq} median{suffix}", key + "connect_median_us",
                 d.med(lc, "connect_median_us"), f"every set-up step, one at a time, {qp} ({cs})",
                 d.med(cs, "connect_median_us")),
                (f"close, sequential median{suffix}", key + "close_median_us",
                 d.med(lc, "close_median_us"), f"disconnect + destroy, one at a time, {qp} ({cs})",
                 d.med(cs, "close_median_us"))]
    return got


def device_md(d):
    n = len(d.rounds(LC, "connect_median_us"))
    m = len(d.rounds(CM, "connect_us_per_conn"))
    runs1 = len(d.rounds(CM1, "connect_us_per_conn"))
    failed1 = sum(d.rounds(CM1, "failed_runs").values())
    one_runs = (f", cmtime -c 1 {runs1} runs ({failed1:.0f} more failed)"
                if runs1 or failed1 else "")
    lines = [f"### {d.name}", "",
             f"Rounds: lchan_conntime {n}, cmtime {m}{one_runs}; "
             f"{fmt(d.med(LC, 'conns'), 0)} connections a run, lchan's parallel phase "
             f"with {fmt(d.med(LC, 'parallel'), 0)} in flight; medians over the rounds, us "
             "per connection.", "",
             "| lchan | us | cmtime | us | lchan/cmtime |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {f} | {fmt(v)} | {cf or '-'} | {fmt(cv)} | {fmt(ratio(v, cv), 2)} |"
              for f, _, v, cf, cv in rows(d)]
    lines += ["", f"lchan set-up rate, parallel: {fmt(d.med(LC, 'par_conns_per_s'), 0)} "
              "channels/s.", "", "Steps, sequential, median us (lchan from its tracepoints, "
              "cmtime's nearest steps per connection):", ""]
    one = bool(d.rounds(LC1, "step_create_qp_us"))
    cm1 = bool(d.rounds(CM1, "connect_us_per_conn"))
    seq = [t for t in (CS, CSL) if d.rounds(t, "connect_median_us")]
    names = {CS: "cm_seqtime", CSL: "cm_seqtime, lchan's queues"}
    cols = (["step", "lchan"] + (["lchan, 1-entry queues"] if one else [])
            + [names[t] for t in seq] + ["cmtime"] + (["cmtime -c 1"] if cm1 else [])
            + ["cmtime's steps"])
    body = []
    for name, cm in STEPS:
        key = f"step_{name}_us"
        cells = [name, fmt(d.med(LC, key))] + ([fmt(d.med(LC1, key))] if one else [])
        cells += [fmt(d.med(t, key)) for t in seq] + [fmt(d.cm_sum(cm) if cm else None)]
        if cm1:
            cells.append(fmt(d.cm_sum(cm, CM1) if cm else None))
        body.append(cells + [" + ".join(s.replace("_", " ") for s in cm) or "-"])
    return lines + table(cols, body) + [""]


def goals(devs):
    out = []
    for d in devs:
        for what, key in (("sequential", "connect_median_us"),
                          ("parallel", "par_connect_us_per_conn")):
            r = ratio(d.med(LC, key), d.cm_sum(["create_qp", "connect"]))
            out.append({"device": d.name, "what": what, "ratio": r,
                        "goal": d.name == GOAL_DEVICE, "verdict": verdict(r, GOAL_LIMIT)})
    return out


def main(args):
    if len(args) != 1:
        raise SystemExit("usage: report connect DIR")
    devs = devices(args[0], "connect", Device)
    head = ["# Connection set-up: lchan_conntime beside cmtime", "",
            f"Issue 17's goal: lchan connect+accept <= {GOAL_LIMIT}x "
            f"cmtime's create qp + connect per connection on "
            f"{GOAL_DEVICE}, sequential and parallel (other devices "
            "reported, not judged).", ""]
    write_report(
        args[0], "connect", head,
        ["device", "lchan", "lchan/cmtime", "verdict"], goals(devs),
        lambda x: [x["device"], x["what"], fmt(x["ratio"], 2), judged(x)],
        [device_md(d) for d in devs],
        {d.name: {"rows": [{"lchan": f, "key": k, "lchan_us": v, "cmtime": cf,
                            "cmtime_us": cv, "ratio": ratio(v, cv)}
                           for f, k, v, cf, cv in rows(d)],
                  "rounds": d.tools} for d in devs})
