# SPDX-License-Identifier: GPL-2.0
"""The tables of figures by round that connect.tsv and fabric.tsv are
("dev round tool key value", one line per figure and round), their medians
over the rounds, and the goal-and-devices report both are written as."""

import json
import math
import os

from .stats import fmt, median, table_row


def read(path):
    """dev -> tool -> key -> round -> value, the finite numbers of path."""
    data = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f):
            cells = line.rstrip("\n").split("\t")
            if n == 0 or len(cells) != 5:
                continue
            dev, rnd, tool, key, value = cells
            try:
                v = float(value)
            except ValueError:
                continue
            if math.isfinite(v):
                data.setdefault(dev, {}).setdefault(tool, {}).setdefault(key, {})[rnd] = v
    return data


class Rounds:
    """One device's figures: tool -> key -> round -> value."""

    def __init__(self, name, tools):
        self.name = name
        self.tools = tools

    def rounds(self, tool, key):
        return self.tools.get(tool, {}).get(key, {})

    def med(self, tool, key):
        return median(list(self.rounds(tool, key).values()))


def devices(directory, stem, cls):
    """DIR/stem.tsv's devices, as cls (a Rounds), by name."""
    data = read(os.path.join(directory, stem + ".tsv"))
    return [cls(n, t) for n, t in sorted(data.items())]


def verdict(value, limit):
    return "no data" if value is None else ("met" if value <= limit else "missed")


def judged(goal):
    """A goal's verdict, or on another device than the goal's, a remark."""
    v = goal["verdict"]
    return v if goal["goal"] else f"({v}, not judged)"


def write_report(directory, stem, head, columns, goals, goal_cells, sections, per_device):
    """DIR/@stem.md: @head (title and goal text), the goal table (@columns,
    goal_cells(goal) a row), the devices' @sections, the run's description;
    DIR/@stem.json: the goals and @per_device."""
    md = head + [table_row(columns), table_row(["---"] * len(columns))]
    md += [table_row(goal_cells(x)) for x in goals] + [""]
    for section in sections:
        md += section
    info = os.path.join(directory, stem + "-info.txt")
    if not os.path.exists(info):
        info = os.path.join(directory, "info.txt")
    if os.path.exists(info):
        md += ["## Run", "", "```"]
        with open(info, encoding="utf-8", errors="replace") as f:
            md += [line.rstrip("\n") for line in f]
        md += ["```", ""]
    with open(os.path.join(directory, stem + ".md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    with open(os.path.join(directory, stem + ".json"), "w", encoding="utf-8") as f:
        json.dump({"goals": goals, "devices": per_device}, f, indent=2, sort_keys=True)
        f.write("\n")


def write_target_report(directory, stem, head, devs, goals, device_md, rows):
    """write_report for goals that each name their target (fabric, apps):
    the goal table "device goal target ratio verdict", each device's
    section, and its rows and rounds in the JSON."""
    write_report(
        directory, stem, head,
        ["device", "goal", "target", "ratio", "verdict"], goals,
        lambda x: [x["device"], x["what"], x["target"], fmt(x["ratio"], 2), judged(x)],
        [device_md(d) for d in devs],
        {d.name: {"rows": rows(d), "rounds": d.tools} for d in devs})
