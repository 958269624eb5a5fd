"""The markers an instructor writes in a solution notebook, and how to read them.

Solution notebooks are the source of truth. Four kinds of marker, nbgrader-style:

* ``### BEGIN SOLUTION`` / ``### END SOLUTION`` (code) and ``<!-- BEGIN SOLUTION -->`` /
  ``<!-- END SOLUTION -->`` (markdown): the answer; replaced by a stub in the student version.
* ``### CHECK <id>: <n> points`` on a line of a code cell: the cell is a graded check worth ``n``
  points. It passes when it runs without an error. Students see the line (and so the points).
* ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS`` inside a check cell: asserts that only the
  grader runs. The student version drops the lines and the markers.
* ``### NOT AVAILABLE: module.function, ...`` on a line of any code cell: library functions the
  answer must not use. While the notebook is graded they are stubs in the student's kernel that
  raise "not available in this exercise" (the checker keeps the real ones for its comparisons).
* nbgrader's own cell metadata (``"nbgrader": {"grade": true, "grade_id": ..., "points": ...}``)
  is read as a check too, so notebooks brought from nbgrader keep their points.

At grading time every check cell of the student's notebook is replaced by the solution's (hidden
tests included), so editing a check cannot change what it tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from argnb.errors import MarkerError

CODE_BEGIN, CODE_END = "### BEGIN SOLUTION", "### END SOLUTION"
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
MD_SOLUTION = re.compile(r"<!--\s*BEGIN SOLUTION\s*-->.*?<!--\s*END SOLUTION\s*-->", re.DOTALL)
CHECK_LINE = re.compile(
    r"^\s*###\s*CHECK\s+(?P<id>[A-Za-z0-9_.-]+)\s*:\s*(?P<points>\d+(?:\.\d+)?)\s*points?\s*$",
    re.MULTILINE,
)
#: what a malformed check line looks like, so a typo is an error instead of a silent 0-point cell
_CHECK_ANY = re.compile(r"^\s*###\s*CHECK\b.*$", re.MULTILINE)
STUB = 'raise NotImplementedError("your code here")'
NOT_AVAILABLE = re.compile(r"^\s*###\s*NOT AVAILABLE\s*:\s*(?P<names>.*)$", re.MULTILINE)
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")


@dataclass(frozen=True)
class Check:
    """One graded check cell of a solution notebook."""

    id: str
    points: float
    index: int  # cell index in the solution notebook
    source: str  # the full source, hidden tests included
    hidden: bool  # whether the cell holds hidden tests


def check_of(cell: Any) -> tuple[str, float] | None:
    """``(id, points)`` when ``cell`` is a check cell, else ``None``."""
    if cell.get("cell_type") != "code":
        return None
    source = cell.get("source", "")
    m = CHECK_LINE.search(source)
    if m:
        return m["id"], float(m["points"])
    if _CHECK_ANY.search(source):
        bad = _CHECK_ANY.search(source)[0].strip()  # type: ignore[index]
        raise MarkerError(f"malformed check line {bad!r}: write '### CHECK name: 2 points'")
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if meta.get("grade") and not meta.get("solution"):
        return str(meta.get("grade_id") or "check"), float(meta.get("points", 0) or 0)
    own = cell.get("metadata", {}).get("argnb", {})
    if "check" in own:
        return str(own["check"]), float(own.get("points", 0))
    return None


def strip_region(source: str, begin: str, end: str, replacement: str | None) -> str:
    """Drop the lines between ``begin`` and ``end`` markers (markers included).

    ``replacement`` (indented like the begin marker) takes the region's place when given.
    """
    out: list[str] = []
    inside = False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped == begin:
            if inside:
                raise MarkerError(f"{begin} inside another {begin}")
            inside = True
            if replacement is not None:
                out.append(line[: len(line) - len(line.lstrip())] + replacement)
        elif stripped == end:
            if not inside:
                raise MarkerError(f"{end} without {begin}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise MarkerError(f"{begin} without {end}")
    return "\n".join(out)


def checks(nb: Any) -> list[Check]:
    """The check cells of a solution notebook, validated.

    Check ids are unique; a check cell holds no solution region (the grader runs the solution's
    check cell, so a solution inside it would hand the answer to every student); hidden tests
    appear only in check cells (elsewhere nobody would grade them).
    """
    found: list[Check] = []
    seen: set[str] = set()
    for index, cell in enumerate(nb.cells):
        source = cell.get("source", "")
        marked = check_of(cell)
        has_hidden = HIDDEN_BEGIN in source
        if marked is None:
            if has_hidden:
                raise MarkerError(
                    f"cell {index}: hidden tests outside a check cell would never be graded; "
                    "add a '### CHECK name: n points' line to the cell"
                )
            continue
        cid, points = marked
        if cid in seen:
            raise MarkerError(f"cell {index}: check id {cid!r} is used twice")
        if CODE_BEGIN in source:
            raise MarkerError(
                f"cell {index}: check {cid!r} contains a solution; put the solution in its own cell"
            )
        strip_region(source, HIDDEN_BEGIN, HIDDEN_END, None)  # validates the pairs
        seen.add(cid)
        found.append(Check(cid, points, index, source, has_hidden))
    return found


def not_available(nb: Any) -> list[str]:
    """The ``module.function`` names the notebook's ``### NOT AVAILABLE:`` lines withhold."""
    out: list[str] = []
    for index, cell in enumerate(nb.cells):
        if cell.get("cell_type") != "code":
            continue
        for m in NOT_AVAILABLE.finditer(cell.get("source", "")):
            for name in (n.strip() for n in m["names"].split(",")):
                if not _DOTTED.match(name):
                    raise MarkerError(
                        f"cell {index}: {name!r} in '### NOT AVAILABLE:' is not module.function"
                    )
                out.append(name)
    return list(dict.fromkeys(out))
