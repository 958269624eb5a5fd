"""Shared bits of the benchmarks: a table printer and the machine description."""

from __future__ import annotations

import os
import platform
import statistics
import sys
from collections.abc import Sequence


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}"


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


def table(title: str, rows: list[dict], note: str = "") -> str:
    """A plain-text table (one dict per row, same keys)."""
    if not rows:
        return f"{title}: no rows"
    cols = list(rows[0])
    cells = [[str(r.get(c, "")) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    line = "  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True))
    out = [f"\n## {title}  ({machine()})", line, "-" * len(line)]
    out += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    if note:
        out.append(note)
    return "\n".join(out)
