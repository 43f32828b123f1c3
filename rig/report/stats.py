# SPDX-License-Identifier: GPL-2.0
"""What every report shares: medians, ratios, number formats, Markdown
tables and the reading of the guests' tables, each in one place, so that
every report rounds and compares the same way."""

import math
import statistics


def median(values):
    """The median of values, None without any."""
    values = list(values)
    return statistics.median(values) if values else None


def ratio(a, b):
    """a / b, None without both values or with b 0 or NaN."""
    if a is None or b is None or b == 0 or math.isnan(b):
        return None
    return a / b


def cformat(spec, value):
    """spec % value as C's printf writes it (spec starts with the number)."""
    text = spec % value
    # C shows the sign of a NaN, Python does not.
    if math.isnan(value) and math.copysign(1.0, value) < 0 and text[0] != "-":
        text = "-" + text
    return text


def fmt(value, digits=1):
    """value with digits decimals, "-" for None."""
    return "-" if value is None else cformat(f"%.{digits}f", value)


def sig(value):
    """value to 3 significant digits (%g), "-" for None."""
    return "-" if value is None else cformat("%.3g", value)


def num(value):
    """A figure for people: 3 significant digits, whole from 100 up, never
    an exponent for the units the reports use; "-" for None."""
    if value is None or not math.isfinite(value):
        return "-"
    if abs(value) >= 99.95:
        return f"{value:.0f}"
    return f"{value:#.3g}"


def times(value):
    """A ratio as "1.23x", "-" for None."""
    return "-" if value is None else f"{value:.2f}x"


def table_row(cells):
    return "| " + " | ".join(cells) + " |"


def table(head, rows):
    """A Markdown table: the head's cells, then one line per row."""
    return [table_row(head), table_row(["---"] * len(head))] + [table_row(r) for r in rows]


def read_tsv(path):
    """A TSV file with a header line as dicts, [] without the file."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    return [dict(zip(lines[0].split("\t"), x.split("\t"))) for x in lines[1:] if x]


def values(rows, col, **want):
    """The numbers in column col of the rows (read_tsv's) that match want."""
    out = []
    for r in rows:
        if all(r.get(k) == v for k, v in want.items()):
            try:
                out.append(float(r[col]))
            except ValueError:
                pass
    return out
