# SPDX-License-Identifier: GPL-2.0
"""The report of `make latency-path`: report latpath --kernel K DIR

DIR holds the guest job latpath's output (rig/guest/latpath.sh): for each
row (ROWS below) and round, <row>.<round>.log (an untraced run) and
<row>.traced.<round>.trace with .log (a run under the kprobes).
Prints the Markdown report: per row the round trip, and the round trip cut
at the points both tools pass, as medians over every message of a round and
then over the rounds.

The cut, for a side P (each process is both a sender and a receiver):
  transit    P's send enters rxe (post_send) -> rxe writes the peer's
             receive completion (cq_post on a CQ the peer created)
  reaction   rxe writes P's receive completion -> P's next send enters rxe
A round trip is two transits and two reactions.  A reaction is cut again
where its completion goes (SEGMENTS: cq_post -> comp, the CQ's handler
called; comp -> wr_done, ib_core polled and lchan wrote the CQE; wr_done
-> post_send, and for doorbell mode through the application's ENTER;
comp -> post_send for a user CQ's event).
"""

import argparse
import bisect
import collections
import os
import re

from .stats import fmt, median

LINE = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+"
                  r"(?:\S+\s+)?(?P<ts>\d+\.\d+): (?P<ev>\w+): (?:\([^)]*\))?"
                  r"(?P<args>.*)$")
ARG = re.compile(r"(\w+)=(\S+)")
RECV_OPS = {128, 129}           # IB_WC_RECV, IB_WC_RECV_RDMA_WITH_IMM
ROWS = ("ib_send_lat", "doorbell", "poller", "ib_send_lat.event", "poller.event")
SEGMENTS = ("cq_post>comp", "comp>wr_done", "comp>post_send", "wr_done>post_send",
            "wr_done>enter", "enter>post_send")

Event = collections.namedtuple("Event", "ts pid comm cpu ev args raw")


def parse(path):
    events = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            args = dict(ARG.findall(m["args"]))
            ev = "comp" if m["ev"] in ("comp_wq", "comp_user") else m["ev"]
            events.append(Event(float(m["ts"]) * 1e6, int(m["pid"]), m["comm"],
                                int(m["cpu"]), ev, args, m["args"]))
    events.sort(key=lambda e: e.ts)
    return events


class Timeline:
    """Events in time order, searchable from a given time."""

    def __init__(self, events):
        self.events = events
        self.ts = [e.ts for e in events]

    def first_after(self, t, pred, limit):
        """The first event at or after t and before limit matching pred."""
        for e in self.events[bisect.bisect_left(self.ts, t):]:
            if e.ts >= limit:
                return None
            if pred(e):
                return e
        return None


def cpu_waits(events):
    """Each wakeup with the time its task waited to be switched in:
    sorted (wake time, switch-in time)."""
    pending = {}
    waits = []
    for e in events:
        if e.ev == "sched_wakeup":
            pending.setdefault(e.args.get("pid"), e.ts)
        elif e.ev == "sched_switch":
            t = pending.pop(e.args.get("next_pid"), None)
            if t is not None:
                waits.append((t, e.ts))
    waits.sort()
    return waits


def holder_name(comm, work):
    """A task as the report names it: an application, or a kworker by the
    work function it was running."""
    if comm.startswith("kworker"):
        return work or "kworker"
    if comm.startswith("ksoftirqd"):
        return "ksoftirqd"
    return re.sub(r"[/:].*", "", comm)


class Windows:
    """Scheduler figures of a time window: how long tasks woken in it
    waited for a CPU (up to the window's end), and how many switches."""

    def __init__(self, events):
        self.waits = cpu_waits(events)
        self.wake_ts = [w[0] for w in self.waits]
        self.switch_ts = [e.ts for e in events if e.ev == "sched_switch"]

    def wait(self, a, b):
        i = bisect.bisect_left(self.wake_ts, a)
        j = bisect.bisect_left(self.wake_ts, b)
        return sum(min(t_in, b) - t for t, t_in in self.waits[i:j])

    def switches(self, a, b):
        return bisect.bisect_left(self.switch_ts, b) - bisect.bisect_left(self.switch_ts, a)


def switch_ins(events):
    """Per pid, the sorted times it was switched in, with the task it
    displaced (a name, as holder_name gives it)."""
    work = {}
    ins = collections.defaultdict(list)
    for e in events:
        if e.ev == "workqueue_execute_start":
            m = re.search(r"function (\S+)", e.raw)
            work[str(e.pid)] = m.group(1) if m else None
        elif e.ev == "sched_switch":
            prev = e.args.get("prev_pid")
            ins[e.args.get("next_pid")].append(
                (e.ts, holder_name(e.args.get("prev_comm", "?"), work.get(prev))))
    return ins


def displaced(ins, pid, a, b):
    """Who the task pid displaced when it was last switched in within
    [a, b], or None when it kept its CPU."""
    lst = ins.get(str(pid), [])
    i = bisect.bisect_right(lst, (b, "~")) - 1
    if i >= 0 and lst[i][0] >= a:
        return lst[i][1]
    return None


def analyse(events):
    win = Windows(events)
    ins = switch_ins(events)
    owner = {e.args["cq"]: e.pid for e in events if e.ev == "cq_create"}
    sides = sorted({p for p in owner.values()})
    # A send belongs to the side whose CQs its QP completes to (in poller
    # mode the pool's thread posts it, not the application).
    qp_side = {}
    for e in events:
        if e.ev == "qp_create":
            side = owner.get(e.args.get("rcq")) or owner.get(e.args.get("scq"))
            if side is not None:
                qp_side[e.args["qp"]] = side
    sends = {p: [e for e in events if e.ev == "post_send" and
                 qp_side.get(e.args["qp"], e.pid) == p] for p in sides}
    recvs = {p: [e for e in events if e.ev == "cq_post" and
                 owner.get(e.args["cq"]) == p and
                 int(e.args.get("op", "0")) in RECV_OPS] for p in sides}
    by_cq = collections.defaultdict(list)
    for e in events:
        if "cq" in e.args and e.ev in ("comp", "wr_done"):
            by_cq[e.args["cq"]].append(e)
    by_cq = collections.defaultdict(lambda: Timeline([]),
                                    {cq: Timeline(lst) for cq, lst in by_cq.items()})
    enters = {p: Timeline([e for e in events if e.ev == "enter" and e.pid == p])
              for p in sides}

    out = {"interval": [], "transit": [], "reaction": [],
           "transit_wait": [], "reaction_wait": [], "transit_sw": [],
           "reaction_sw": [], "comp_wait": [],
           "poll_displaced": collections.Counter(),
           "app_displaced": collections.Counter(),
           "segments": {s: [] for s in SEGMENTS},
           "done_same_cpu": 0, "done_n": 0, "reactions": 0}
    for p in sides:
        others = [q for q in sides if q != p]
        s = sends[p]
        r = recvs[p]
        ri = 0
        for j in range(1, len(s)):
            out["interval"].append(s[j].ts - s[j - 1].ts)
            # P's receive that released this send: the last in between.
            last = None
            while ri < len(r) and r[ri].ts < s[j].ts:
                if r[ri].ts > s[j - 1].ts:
                    last = r[ri]
                ri += 1
            if last is None:
                continue
            out["reaction"].append(s[j].ts - last.ts)
            out["reactions"] += 1
            out["reaction_wait"].append(win.wait(last.ts, s[j].ts))
            out["reaction_sw"].append(win.switches(last.ts, s[j].ts))
            out["app_displaced"][displaced(ins, p, last.ts, s[j].ts)
                                 or "(none: it kept its CPU)"] += 1
            cq = last.args["cq"]
            comp = by_cq[cq].first_after(last.ts, lambda e: e.ev == "comp", s[j].ts)
            done = by_cq[cq].first_after(last.ts, lambda e: e.ev == "wr_done" and
                                         int(e.args.get("op", "0")) in RECV_OPS, s[j].ts)
            seg = out["segments"]
            if comp is not None:
                seg["cq_post>comp"].append(comp.ts - last.ts)
                if done is None:
                    seg["comp>post_send"].append(s[j].ts - comp.ts)
            if done is None:
                continue
            seg["wr_done>post_send"].append(s[j].ts - done.ts)
            out["done_n"] += 1
            out["poll_displaced"][displaced(ins, done.pid, last.ts, done.ts)
                                  or "(none: it was running)"] += 1
            if done.cpu == s[j].cpu:
                out["done_same_cpu"] += 1
            if comp is not None and comp.ts <= done.ts:
                seg["comp>wr_done"].append(done.ts - comp.ts)
                out["comp_wait"].append(win.wait(comp.ts, done.ts))
            enter = enters[p].first_after(done.ts, lambda e: True, s[j].ts)
            if enter is not None:
                seg["wr_done>enter"].append(enter.ts - done.ts)
                seg["enter>post_send"].append(s[j].ts - enter.ts)
        for q in others:
            rq = recvs[q]
            k = 0
            for j, send in enumerate(s):
                limit = s[j + 1].ts if j + 1 < len(s) else float("inf")
                while k < len(rq) and rq[k].ts < send.ts:
                    k += 1
                if k < len(rq) and rq[k].ts < limit:
                    out["transit"].append(rq[k].ts - send.ts)
                    out["transit_wait"].append(win.wait(send.ts, rq[k].ts))
                    out["transit_sw"].append(win.switches(send.ts, rq[k].ts))
    return out


def plain_median(path, row):
    """The untraced run's median round trip... as the tool reports it."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    if row.startswith("ib_send_lat"):
        # perftest prints the one-way latency (half the round trip).
        for line in text.splitlines():
            w = line.split()
            if len(w) >= 9 and w[0] == "64" and w[1].isdigit():
                try:
                    return 2 * float(w[4])
                except ValueError:
                    return None
        return None
    m = re.search(r'"t_median_us":\s*([0-9.]+)', text)
    return 2 * float(m.group(1)) if m else None


def main(args):
    ap = argparse.ArgumentParser(prog="report latpath")
    ap.add_argument("--kernel", required=True)
    ap.add_argument("dir")
    a = ap.parse_args(args)
    rounds = sorted({int(m.group(1)) for n in os.listdir(a.dir)
                     for m in [re.match(r".*\.(\d+)\.log$", n)] if m})
    if not rounds:
        raise SystemExit("report latpath: no runs in " + a.dir)

    per = {row: [] for row in ROWS}
    for row in ROWS:
        for r in rounds:
            res = {"round": r,
                   "plain": plain_median(os.path.join(a.dir, f"{row}.{r}.log"), row)}
            tr = os.path.join(a.dir, f"{row}.traced.{r}.trace")
            if os.path.exists(tr):
                res["an"] = analyse(parse(tr))
            per[row].append(res)

    def over_rounds(row, key):
        return median([x for x in (pick(res, key) for res in per[row]) if x is not None])

    def pick(res, key):
        if key == "plain":
            return res["plain"]
        an = res.get("an")
        if not an:
            return None
        if key in SEGMENTS:
            return median(an["segments"][key])
        return median(an[key])

    p = print
    names = {r: r.replace(".event", " -e") for r in ROWS}
    p(f"# Where a 64-byte SEND round trip goes on rxe0 ({a.kernel})")
    p()
    p("`make latency-path KERNEL=" + a.kernel + f" ROUNDS={len(rounds)}` "
      "(rig/guest/latpath.sh, rig/report/latpath.py): `lchan_perf -t send_lat` in doorbell "
      "mode and in poller mode with busy-polling applications and in poller mode with "
      "events (`-e`), against `ib_send_lat` (perftest, user QPs) with busy polling and with"
      " events, on rxe0, 2,000 round trips a run, the rows alternating in every round; each"
      " round runs every row once untraced and once under kprobes at the points they share."
      " Figures are medians over every message of a run, then the median over the rounds, "
      "in microseconds of the guest's monotonic clock (two emulated vCPUs). A side is one "
      "process and its QP; a round trip is two transits and two reactions.")
    p()
    p("| | " + " | ".join(names[r] for r in ROWS) + " |")
    p("|---|" + "---:|" * len(ROWS))
    lines = [
        ("round trip, untraced (the tool's median x 2)", "plain"),
        ("round trip, traced (a side's send to its next send)", "interval"),
        ("transit: a send enters rxe -> rxe writes the peer's receive completion", "transit"),
        ("  of it, woken tasks waiting for a CPU", "transit_wait"),
        ("  context switches (count)", "transit_sw"),
        ("reaction: rxe writes a side's receive completion -> its next send enters rxe",
         "reaction"),
        ("  of it, woken tasks waiting for a CPU", "reaction_wait"),
        ("  context switches (count)", "reaction_sw"),
        ("reaction, cut: rxe's completion -> the CQ's handler (cq_post>comp)",
         "cq_post>comp"),
        ("  the handler -> ib_core's poll gives it to lchan (comp>wr_done)",
         "comp>wr_done"),
        ("    of it, the poll's worker waiting for a CPU", "comp_wait"),
        ("  lchan wrote the CQE -> the send enters rxe (wr_done>post_send)",
         "wr_done>post_send"),
        ("    of it, to the application's ENTER (wr_done>enter)", "wr_done>enter"),
        ("    of it, ENTER -> the send enters rxe (enter>post_send)", "enter>post_send"),
        ("  user CQ: the handler (uverbs' event) -> the send enters rxe "
         "(comp>post_send)", "comp>post_send"),
    ]
    for label, key in lines:
        if key in ("wr_done>enter", "enter>post_send"):
            cells = [fmt(over_rounds(r, key)) if r == "doorbell" else "" for r in ROWS]
        else:
            cells = [fmt(over_rounds(r, key)) for r in ROWS]
        p(f"| {label} | " + " | ".join(cells) + " |")
    p()

    def gap(a_row, b_row, key):
        x, y = over_rounds(a_row, key), over_rounds(b_row, key)
        return None if x is None or y is None else x - y

    p("The goals' pairs, differences (us):")
    p()
    p("| pair | round trip (traced) | 2 x transit | 2 x reaction |")
    p("|---|---:|---:|---:|")
    for x, y in (("doorbell", "ib_send_lat"), ("poller", "doorbell"),
                 ("poller.event", "ib_send_lat.event")):
        t = gap(x, y, "transit")
        r = gap(x, y, "reaction")
        p(f"| {names[x]} - {names[y]} | {fmt(gap(x, y, 'interval'))} | "
          f"{fmt(None if t is None else 2 * t)} | {fmt(None if r is None else 2 * r)} |")
    p()

    def shares(row, key, total):
        c = collections.Counter()
        n = 0
        for res in per[row]:
            an = res.get("an")
            if an:
                c.update(an[key])
                n += an[total]
        text = ", ".join(f"{k} {100 * v / n:.0f}%" for k, v in c.most_common(4)
                         if 100 * v >= n)
        return n, text if n else "-"

    p("Who had the CPU (a kworker is named by the work it ran: `do_work` is "
      "rxe's requester, responder and completer, `ib_cq_poll_work` "
      "ib_core's CQ poll):")
    p()
    whose = (("poll_displaced", "done_n",
              "the task that handed lchan a receive completion "
              "(`lchan_post_wr_done`), at its last switch-in before that"),
             ("app_displaced", "reactions",
              "the application, at its last switch-in between its receive "
              "completion and its next send"))
    for key, total, who in whose:
        for row in ROWS:
            n, text = shares(row, key, total)
            if n:
                p(f"- {names[row]}: {who}, took the CPU from: {text} ({n} messages).")
    for row in ROWS:
        same = sum(res["an"]["done_same_cpu"] for res in per[row] if res.get("an"))
        n = sum(res["an"]["done_n"] for res in per[row] if res.get("an"))
        if n:
            p(f"- {names[row]}: receive completions handed to lchan on the "
              f"CPU of the send that followed: {100 * same / n:.0f}% of {n}.")
    p()
    p("Per round (us):")
    p()
    p("| row | round | untraced | traced | transit | reaction |")
    p("|---|---:|---:|---:|---:|---:|")
    for row in ROWS:
        for res in per[row]:
            cells = [fmt(pick(res, k)) for k in
                     ("plain", "interval", "transit", "reaction")]
            if set(cells) == {"-"}:
                continue
            p(f"| {names[row]} | {res['round']} | " + " | ".join(cells) + " |")

