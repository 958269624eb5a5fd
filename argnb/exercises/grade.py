"""Grade a folder of submissions against an exercise's solution notebooks.

``SUBMISSIONS`` holds one folder per student (``ana/ex1_tie_break.ipynb``) or flat files named
``NAME__notebook.ipynb`` (``ana__ex1_tie_break.ipynb``). For every submitted notebook:

1. the student's check cells are replaced by the solution's (hidden tests included; a check the
   student deleted runs at the end), and a socket guard goes first;
2. the notebook runs in a temporary copy of the exercise folder, in a fresh kernel, in its own
   sandboxed process (:mod:`.sandbox`, :mod:`.runner`), within ``timeout`` seconds of execution;
3. a check earns its points when its cell ran without an error. Whatever did not run (a time-out,
   a crashed kernel) earns nothing, and the other notebooks are graded as usual.

One row per (student, notebook, check) goes to the CSV; each student gets a feedback page.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from argnb.errors import ArgnbError, MissingDependency
from argnb.exercises import sandbox
from argnb.exercises.markers import (
    HIDDEN_BEGIN,
    HIDDEN_END,
    Check,
    MarkerError,
    check_of,
    checks,
)
from argnb.exercises.release import student_files

COLUMNS = ["student", "notebook", "check", "points", "max_points", "passed", "status", "message"]
#: seconds a notebook may take beyond its execution limit (kernel start and shutdown)
GRACE = 60.0
MESSAGE_LIMIT = 500
#: cells the notebook itself marks as not for automatic runs (nbval's marker) are not run
SKIP = "NBVAL_SKIP"


class GradingError(ArgnbError):
    """The grader cannot start (no such exercise, empty submissions folder, bad markers)."""


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


# -- finding solutions and submissions --------------------------------------------------------


def load_solutions(exercise: Path) -> dict[str, Solution]:
    """The solution notebooks of an exercise folder, by file name."""
    import nbformat

    folder = exercise / "solutions"
    found = sorted(p for p in folder.glob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    if not found:
        raise GradingError(
            f"no solution notebooks in {folder}",
            hint="pass the exercise folder name (e.g. 01_fallacy) and --root if it is elsewhere",
        )
    out = {}
    for path in found:
        nb = nbformat.read(path, as_version=4)
        try:
            cs = checks(nb)
        except MarkerError as exc:
            raise GradingError(f"{path}: {exc}") from None
        out[path.name] = Solution(path.name, nb, cs)
    return out


def find_submissions(
    folder: Path, names: Iterable[str]
) -> tuple[dict[str, dict[str, Path]], list[str]]:
    """``{student: {notebook name: path}}`` and warnings about files that match no notebook."""
    if not folder.is_dir():
        raise GradingError(f"no submissions folder {folder}")
    names = set(names)
    found: dict[str, dict[str, Path]] = {}
    warnings = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            nbs = [p for p in sorted(entry.rglob("*.ipynb")) if ".ipynb_checkpoints" not in p.parts]
            mine = found.setdefault(entry.name, {})
            for p in nbs:
                if p.name in names and p.name not in mine:
                    mine[p.name] = p
                else:
                    warnings.append(f"{entry.name}: ignored {p.relative_to(entry)}")
        elif entry.suffix == ".ipynb" and "__" in entry.stem:
            student, _, name = entry.name.partition("__")
            if name in names:
                found.setdefault(student, {})[name] = entry
            else:
                warnings.append(f"ignored {entry.name}: no solution notebook {name}")
        else:
            warnings.append(f"ignored {entry.name}: neither a student folder nor NAME__file.ipynb")
    if not found:
        raise GradingError(
            f"no submissions in {folder}",
            hint="one folder per student, or files named STUDENT__notebook.ipynb",
        )
    return found, warnings


# -- building the notebook that runs -----------------------------------------------------------


def _mark_hidden(source: str) -> str:
    """Wrap top-level hidden tests so a failure there says it was a hidden test."""
    out, inside = [], False
    for line in source.splitlines():
        if line.strip() == HIDDEN_BEGIN and not line.startswith((" ", "\t")):
            inside = True
            out.append("try:")
        elif line.strip() == HIDDEN_END and inside:
            inside = False
            out += [
                "    pass",
                "except Exception as _argnb_hidden:",
                "    raise AssertionError(",
                "        'hidden test: ' + (str(_argnb_hidden) or type(_argnb_hidden).__name__)",
                "    ) from None",
            ]
        elif inside:
            out.append("    " + line if line.strip() else line)
        else:
            out.append(line)
    return "\n".join(out)


def _student_check(cell: Any) -> str | None:
    try:
        marked = check_of(cell)
    except MarkerError:
        return None
    return marked[0] if marked else None


def graded_notebook(student: Any, solution: Solution) -> tuple[Any, dict[int, Check], list[str]]:
    """The notebook to run: the student's cells, the solution's checks, a guard first.

    Returns the notebook, ``{cell index: check}`` and notes for the feedback.
    """
    import nbformat

    nb = copy.deepcopy(student)
    wanted = {c.id: c for c in solution.checks}
    where: dict[int, Check] = {}
    notes: list[str] = []
    seen: set[str] = set()
    for cell in nb.cells:
        if cell.get("cell_type") == "code":
            cell.outputs, cell.execution_count = [], None
    cells = [nbformat.v4.new_code_cell(sandbox.SOCKET_GUARD), *nb.cells]
    for index, cell in enumerate(cells[1:], start=1):
        cid = _student_check(cell) if cell.get("cell_type") == "code" else None
        if cid is None and cell.get("cell_type") == "code" and SKIP in cell.source:
            cell.source = f"# {SKIP}: not run while grading"
        if cid in wanted:
            cell.source = _mark_hidden(wanted[cid].source)
            if cid not in seen:
                where[index] = wanted[cid]
                seen.add(cid)
    for c in solution.checks:
        if c.id not in seen:
            notes.append(f"check {c.id!r} was missing from your notebook; it ran at the end")
            where[len(cells)] = c
            cells.append(nbformat.v4.new_code_cell(_mark_hidden(c.source)))
    nb.cells = cells
    return nb, where, notes


# -- running -----------------------------------------------------------------------------------


def _kill(proc: subprocess.Popen, kernel_pid: int | None) -> None:
    for pid in (proc.pid, kernel_pid):
        if not pid:
            continue
        try:
            if sys.platform == "win32":
                os.kill(pid, signal.SIGTERM)
            else:
                os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def run_notebook(
    nb: Any, exercise: Path, *, timeout: float, level: str, name: str = "submission.ipynb"
) -> tuple[list[dict], float, str]:
    """Run ``nb`` in a temporary copy of ``exercise``; the runner's events, seconds, stderr tail."""
    import nbformat

    work = Path(tempfile.mkdtemp(prefix="argnb-grade-")).resolve()
    try:
        copy_to = work / exercise.name
        for rel in student_files(exercise):
            (copy_to / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(exercise / rel, copy_to / rel)
        target = copy_to / "student" / name  # where the student's copy sat
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        log = work / "events.jsonl"
        cmd = [
            sys.executable,
            "-m",
            "argnb.exercises.runner",
            str(target),
            str(log),
            "--timeout",
            str(timeout),
        ]
        t0 = time.monotonic()
        with (work / "stderr.txt").open("wb") as err:
            proc = subprocess.Popen(
                sandbox.wrap(cmd, work, level),
                cwd=target.parent,
                env=sandbox.clean_env(work),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
            )
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=timeout + GRACE)
            events = _events(log)
            if proc.poll() is None:
                pid = next((e.get("kernel_pid") for e in events if e["event"] == "start"), None)
                _kill(proc, pid if level == "guard" else None)
                events = _events(log)
                if not any(e["event"] in ("stop", "end") for e in events):
                    last = max((e["index"] for e in events if e["event"] == "cell"), default=0)
                    events.append({"event": "stop", "index": last + 1, "reason": "timeout"})
        seconds = time.monotonic() - t0
        tail = (work / "stderr.txt").read_text(encoding="utf-8", errors="replace")[-2000:]
        return events, seconds, tail
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _events(log: Path) -> list[dict]:
    if not log.exists():
        return []
    out = []
    for line in log.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a line cut off by a kill
    return out


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
    guard = cells.get(0)
    rows = []
    for index, check in sorted(where.items()):
        row = Row(student, solution.name, check.id, 0.0, check.points, False, "failed")
        ev = cells.get(index)
        if ev is None and guard is not None and guard["status"] == "error":
            row.status, row.message = "crashed", f"the grader's setup failed: {guard['evalue']}"
        elif ev is None:
            at = nb.cells[stop["index"]] if stop and stop["index"] < len(nb.cells) else None
            reason = stop["reason"] if stop else "no result"
            row.status, row.message = _why(
                reason, timeout, at, where.get(stop["index"] if stop else -1)
            )
        elif ev["status"] == "ok":
            row.points, row.passed, row.status = check.points, True, "passed"
            row.message = _plain(ev.get("text", ""))
        else:
            row.message = f"{ev.get('ename', 'Error')}: {ev.get('evalue', '')}".strip()
        row.message = row.message[:MESSAGE_LIMIT]
        rows.append(row)
    status, note = "ok", ""
    if stop:
        status = "timeout" if stop["reason"] == "timeout" else "crashed"
        note = _why(stop["reason"], timeout, None)[1].removeprefix("did not run: ")
    return rows, status, note


def grade_one(
    student: str, path: Path | None, solution: Solution, exercise: Path, timeout: float, level: str
) -> Outcome:
    """Grade one submitted notebook (``path`` None: not submitted)."""
    import nbformat

    def zero(status: str, message: str) -> Outcome:
        rows = [
            Row(student, solution.name, c.id, 0.0, c.points, False, status, message)
            for c in solution.checks
        ]
        return Outcome(student, solution.name, rows, 0.0, status, message)

    if path is None:
        return zero("missing", f"not submitted (expected {solution.name})")
    try:
        submitted = nbformat.read(path, as_version=4)
        nb, where, notes = graded_notebook(submitted, solution)
    except Exception as exc:  # not JSON, not a notebook: the student's file, not our bug
        return zero("unreadable", f"cannot read {path.name}: {exc}"[:MESSAGE_LIMIT])
    events, seconds, stderr = run_notebook(
        nb, exercise, timeout=timeout, level=level, name=solution.name
    )
    if not events:  # the runner never started a kernel: say why (sandbox, environment)
        last = next((ln for ln in reversed(stderr.splitlines()) if ln.strip()), "no output")
        return zero("crashed", f"the grader could not run the notebook: {last}"[:MESSAGE_LIMIT])
    rows, status, note = score(student, solution, nb, where, events, timeout)
    return Outcome(student, solution.name, rows, seconds, status, "; ".join([*notes, note][:3]))


def grade(
    submissions: Path,
    exercise: Path,
    *,
    timeout: float = 120.0,
    jobs: int = 1,
    level: str | None = None,
    progress: Callable[[Outcome], None] | None = None,
) -> Grades:
    """Grade every submission; ``level`` forces a sandbox level (default: the strongest here)."""
    import importlib.util

    if importlib.util.find_spec("nbclient") is None:
        raise MissingDependency(
            "grading runs notebooks with nbclient, which is not installed",
            hint="pip install 'argnb[classroom]'",
        )
    t0 = time.monotonic()
    solutions = load_solutions(exercise)
    found, warnings = find_submissions(submissions, solutions)
    level = level or sandbox.available()
    tasks = [
        (student, found[student].get(name), sol)
        for student in sorted(found)
        for name, sol in solutions.items()
    ]

    def work(task: tuple[str, Path | None, Solution]) -> Outcome:
        outcome = grade_one(*task, exercise, timeout, level)
        if progress:
            progress(outcome)
        return outcome

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        outcomes = list(pool.map(work, tasks))
    return Grades(exercise.name, outcomes, time.monotonic() - t0, level, warnings)


# -- writing results ---------------------------------------------------------------------------

_HINTS = {
    "NotImplementedError": "this part is not written yet: replace the `raise NotImplementedError` line",
    "NameError": "a name is not defined: run the cells above, or check the spelling",
    "timeout": "look for a loop that never ends, or a cell waiting for input or a widget",
    "crashed": "the notebook's Python process died; run it top to bottom yourself to see where",
}


def _hint(row: Row) -> str:
    if row.passed:
        return ""
    if row.status in _HINTS:
        return _HINTS[row.status]
    if row.message.startswith("AssertionError: hidden test"):
        return "an extra test the instructor keeps hidden: check the cases your own tests skip"
    return _HINTS.get(row.message.split(":", 1)[0], "")


def safe_name(student: str) -> str:
    """A file name for a student's feedback page (no path tricks)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", student).strip("._") or "student"


def feedback_html(student: str, outcomes: list[Outcome], exercise: str) -> str:
    """A self-contained feedback page: every check, its points, what failed and a hint."""
    e = html.escape
    got = sum(r.points for o in outcomes for r in o.rows)
    best = sum(r.max_points for o in outcomes for r in o.rows)
    parts = [
        "<!doctype html><meta charset='utf-8'>",
        f"<title>{e(exercise)}: feedback for {e(student)}</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
        "td,th{border-bottom:1px solid #ddd;padding:.3em .6em;text-align:left;vertical-align:top}"
        ".ok{color:#14733a}.no{color:#b3261e}pre{white-space:pre-wrap;margin:0}</style>",
        f"<h1>{e(exercise)} — {e(student)}</h1>",
        f"<p><b>{got:g} of {best:g} points.</b></p>",
    ]
    for o in outcomes:
        parts.append(f"<h2>{e(o.notebook)}</h2>")
        if o.note:
            parts.append(f"<p>{e(o.note)}</p>")
        parts.append("<table><tr><th>check</th><th>points</th><th>result</th></tr>")
        for r in o.rows:
            mark = "<span class='ok'>✓</span>" if r.passed else "<span class='no'>✗</span>"
            hint = _hint(r)
            detail = f"<pre>{e(r.message)}</pre>" if r.message else ""
            if hint:
                detail += f"<p><i>hint: {e(hint)}</i></p>"
            parts.append(
                f"<tr><td>{e(r.check)}</td><td>{r.points:g}/{r.max_points:g}</td>"
                f"<td>{mark} {e(r.status)}{detail}</td></tr>"
            )
        parts.append("</table>")
    return "\n".join(parts) + "\n"


def write(grades: Grades, out: Path, feedback_dir: Path | None = None) -> Path:
    """Write the grades CSV and one feedback page per student; return the feedback folder."""
    out.parent.mkdir(parents=True, exist_ok=True)
    grades.frame().to_csv(out, index=False)
    folder = feedback_dir or out.with_name(out.stem + "_feedback")
    folder.mkdir(parents=True, exist_ok=True)
    by_student: dict[str, list[Outcome]] = {}
    for o in grades.outcomes:
        by_student.setdefault(o.student, []).append(o)
    used: set[str] = set()
    for student, outcomes in by_student.items():
        name, n = safe_name(student), 1
        while name in used:  # "a b" and "a_b" must not share a page
            n += 1
            name = f"{safe_name(student)}-{n}"
        used.add(name)
        page = feedback_html(student, outcomes, grades.exercise)
        (folder / f"{name}.html").write_text(page, encoding="utf-8")
    return folder
