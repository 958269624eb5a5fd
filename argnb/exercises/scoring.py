"""Score one graded run: a check earns its points only when the checker (:mod:`.checker`), a
process of ours, ran its cell to the end without an error; whatever did not run earns nothing
and says why.

Also the records of a grading run: :class:`Row` (one line of the grades CSV), :class:`Outcome`
(one notebook), :class:`Grades` (the run).
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass, field
from typing import Any

from argnb.exercises.markers import Check

COLUMNS = ["student", "notebook", "check", "points", "max_points", "passed", "status", "message"]
MESSAGE_LIMIT = 500


@dataclass
class Row:
    """One check of one student's notebook: a row of the grades CSV."""

    student: str
    notebook: str
    check: str
    points: float
    max_points: float
    passed: bool
    status: str  # passed | failed | timeout | crashed | not run | missing | unreadable
    message: str = ""


@dataclass
class Solution:
    """A solution notebook and its checks."""

    name: str
    nb: Any
    checks: list[Check]

    @property
    def max_points(self) -> float:
        return sum(c.points for c in self.checks)


@dataclass
class Outcome:
    """What happened to one submitted notebook."""

    student: str
    notebook: str
    rows: list[Row]
    seconds: float
    status: str  # ok | timeout | crashed | missing | unreadable
    note: str = ""
    flags: list[str] = field(default_factory=list)  # see build.SUSPICIOUS
    runner_mb: int = 0  # the runner's peak memory (what the notebook's output cost outside)


@dataclass
class Grades:
    """Everything a grading run found; :meth:`frame` is the CSV's table."""

    exercise: str
    outcomes: list[Outcome]
    seconds: float
    sandbox: str
    warnings: list[str] = field(default_factory=list)

    @property
    def rows(self) -> list[Row]:
        return [r for o in self.outcomes for r in o.rows]

    def frame(self) -> Any:
        import pandas as pd

        return pd.DataFrame([asdict(r) for r in self.rows], columns=COLUMNS)

    def summary(self) -> Any:
        """One row per student: points per notebook (with what went wrong) and the total."""
        import pandas as pd

        table: dict[str, dict[str, str]] = {}
        totals: dict[str, list[float]] = {}
        for o in self.outcomes:
            got = sum(r.points for r in o.rows)
            best = sum(r.max_points for r in o.rows)
            tag = "" if o.status == "ok" else f" {o.status}"
            table.setdefault(o.student, {})[o.notebook] = f"{got:g}/{best:g}{tag}"
            t = totals.setdefault(o.student, [0.0, 0.0])
            t[0] += got
            t[1] += best
        df = pd.DataFrame.from_dict(table, orient="index").sort_index()
        df["total"] = [f"{totals[s][0]:g}/{totals[s][1]:g}" for s in df.index]
        df.index.name = "student"
        return df


def _plain(text: str) -> str:
    """A check's returned string shows as its repr (``'right: ...'``); show the text."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text
        return value if isinstance(value, str) else text
    return text


def _first_line(source: str) -> str:
    for line in source.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return line.strip()[:80]
    return "(an empty cell)"


def _why(reason: str, timeout: float, cell: Any, check: Check | None = None) -> tuple[str, str]:
    """(status, message) for checks that never ran."""
    if check is not None:
        at = f"check {check.id}"
    elif cell is not None:
        at = f"the cell starting `{_first_line(cell.source)}`"
    else:
        at = "a cell"
    if reason == "timeout":
        return "timeout", (
            f"did not run: the notebook hit its {timeout:g} s limit while running {at} "
            "(a loop that never ends, or a cell waiting for input or a widget?)"
        )
    if reason == "dead kernel":
        return "crashed", (
            f"did not run: Python crashed while running {at} "
            "(os._exit, a segmentation fault, or out of memory)"
        )
    return "crashed", f"did not run: {reason}"


def score(
    student: str,
    solution: Solution,
    nb: Any,
    where: dict[int, Check],
    events: list[dict],
    timeout: float,
) -> tuple[list[Row], str, str]:
    """Rows for one run, its status and a note."""
    cells = {e["index"]: e for e in events if e["event"] == "cell"}
    stop = next((e for e in events if e["event"] == "stop"), None)
    setup = cells.get(0)
    rows = []
    for index, check in sorted(where.items()):
        row = Row(student, solution.name, check.id, 0.0, check.points, False, "failed")
        ev = cells.get(index)
        if ev is None and setup is not None and setup["status"] == "error":
            row.status, row.message = "crashed", f"the grader's setup failed: {setup['evalue']}"
        elif ev is None:
            at = nb.cells[stop["index"]] if stop and stop["index"] < len(nb.cells) else None
            reason = stop["reason"] if stop else "no result"
            row.status, row.message = _why(
                reason, timeout, at, where.get(stop["index"] if stop else -1)
            )
        elif ev["status"] == "ok" and ev.get("checked"):
            row.points, row.passed, row.status = check.points, True, "passed"
            row.message = _plain(ev.get("text", ""))
        elif ev["status"] == "ok":  # no error shown, but the check never reached its end
            row.message = "the check was not decided by the grader's checker"
        else:
            row.message = f"{ev.get('ename', 'Error')}: {ev.get('evalue', '')}".strip()
        row.message = row.message[:MESSAGE_LIMIT]
        rows.append(row)
    status, note = "ok", ""
    if stop:
        status = "timeout" if stop["reason"] == "timeout" else "crashed"
        note = _why(stop["reason"], timeout, None)[1].removeprefix("did not run: ")
    return rows, status, note
