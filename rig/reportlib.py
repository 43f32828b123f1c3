# SPDX-License-Identifier: GPL-2.0
"""What the rig's reports share (bench_report, conn_report, fabric_report,
latpath_report): medians, ratios, number formats and Markdown table rows,
each in one place, so that every report rounds and compares the same way."""

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


def table_row(cells):
    return "| " + " | ".join(cells) + " |"

