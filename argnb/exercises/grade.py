"""Grade a folder of submissions against an exercise's solution notebooks.

``SUBMISSIONS`` holds one folder per student (``ana/ex1_tie_break.ipynb``) or flat files named
``NAME__notebook.ipynb`` (``ana__ex1_tie_break.ipynb``). Every submitted notebook goes through
four steps, each in its own place:

1. **build** (:mod:`.build`): the student's cells, then the solution's checks (hidden tests
   included), each with a secret token, after the kernel's machinery is restored;
2. **run** (:mod:`.sandbox`, :mod:`.jail`, :mod:`.runner`): a fresh kernel in its own bubblewrap
   sandbox, within ``timeout`` seconds and the limits, its client outside;
3. **score** (:func:`score`): a check earns its points when its cell raised nothing and its token
   came back; whatever did not run (a time-out, a crashed kernel) earns nothing, and the other
   notebooks are graded as usual;
4. **feedback** (:func:`write`): one row per (student, notebook, check) in the CSV, neutralised
   for spreadsheets (:mod:`argnb.csvsafe`), and one escaped feedback page per student.
"""

from __future__ import annotations

import ast
import contextlib
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from argnb.errors import GradingError, MarkerError, MissingDependency
from argnb.exercises import sandbox
from argnb.exercises.build import SKIP, graded_notebook, mark_hidden, suspicious
from argnb.exercises.markers import Check, checks
from argnb.exercises.release import student_files

__all__ = ["SKIP", "GradingError", "graded_notebook", "mark_hidden"]

COLUMNS = ["student", "notebook", "check", "points", "max_points", "passed", "status", "message"]
#: seconds a notebook may take beyond its execution limit (kernel start and shutdown)
GRACE = 60.0
MESSAGE_LIMIT = 500
#: times a notebook runs again without a student cell that hung or crashed before the checks
RETRIES = 2


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


# -- running in the sandbox ----------------------------------------------------------------------


def _kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def run_notebook(
    nb: Any,
    exercise: Path,
    *,
    timeout: float,
    level: str,
    limits: sandbox.Limits | None = None,
) -> tuple[list[dict], float, str]:
    """Run ``nb`` with its kernel in a fresh sandbox; the runner's events, seconds, stderr tail.

    The scratch folder (see :mod:`.sandbox`) is removed afterwards, whatever happened.
    """
    import nbformat

    scratch = sandbox.Scratch.create()
    try:
        copy_to = scratch.box / exercise.name
        for rel in student_files(exercise):
            (copy_to / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(exercise / rel, copy_to / rel)
        cwd = copy_to / "student"  # where the student's copy sat
        cwd.mkdir(parents=True, exist_ok=True)
        spec = sandbox.write_spec(scratch, level, limits or sandbox.Limits(), cwd)
        scratch.hand_over()
        notebook = scratch.private / "graded.ipynb"
        nbformat.write(nb, notebook)
        log = scratch.private / "events.jsonl"
        cmd = [sys.executable, "-m", "argnb.exercises.runner", str(notebook), str(log), str(spec),
               str(scratch.box), "--timeout", str(timeout)]  # fmt: skip
        t0 = time.monotonic()
        with (scratch.private / "stderr.txt").open("wb") as err:
            proc = subprocess.Popen(
                cmd,
                cwd=scratch.private,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
            )
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=timeout + GRACE)
            events = _events(log)
            if proc.poll() is None:  # the kernel dies with the runner (--die-with-parent)
                _kill_group(proc)
                events = _events(log)
                if not any(e["event"] in ("stop", "end") for e in events):
                    last = max((e["index"] for e in events if e["event"] == "cell"), default=0)
                    events.append({"event": "stop", "index": last + 1, "reason": "timeout"})
        seconds = time.monotonic() - t0
        tail = (scratch.private / "stderr.txt").read_text(encoding="utf-8", errors="replace")
        return events, seconds, tail[-2000:]
    finally:
        scratch.remove()


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
        elif ev["status"] == "ok" and ev.get("proof"):
            row.points, row.passed, row.status = check.points, True, "passed"
            row.message = _plain(ev.get("text", ""))
        elif ev["status"] == "ok":  # no error shown, but the check never reached its end
            row.message = "the check did not finish (its result never came back to the grader)"
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
    student: str,
    path: Path | None,
    solution: Solution,
    exercise: Path,
    timeout: float,
    level: str,
    limits: sandbox.Limits | None = None,
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
    flags = suspicious(submitted)
    if flags:  # what the sandbox and the restore stop is no reason to trust the rest
        notes.append("flagged for the instructor to review by hand: uses " + ", ".join(flags))
    first_check = min(where, default=len(nb.cells))
    seconds, first_stop = 0.0, ""
    for attempt in range(RETRIES + 1):
        events, spent, stderr = run_notebook(
            nb, exercise, timeout=timeout, level=level, limits=limits
        )
        seconds += spent
        stop = next((e for e in events if e["event"] == "stop"), None)
        # a student cell (not the grader's, not a check) hung or crashed: the checks never ran.
        # Skip that cell and run again, so it costs only what depends on it
        if not stop or not 0 < stop["index"] < first_check - 1 or attempt == RETRIES:
            break
        cell = nb.cells[stop["index"]]
        status = "timeout" if stop["reason"] == "timeout" else "crashed"
        first_stop = first_stop or status
        why = f"hit the {timeout:g} s limit" if status == "timeout" else "crashed Python"
        notes.append(
            f"the cell starting `{_first_line(cell.source)}` {why}; "
            "the grader skipped it and ran the notebook again"
        )
        cell.source = f"# skipped by the grader: this cell {why}"
    if not events:  # the runner never started a kernel: say why (sandbox, environment)
        last = next((ln for ln in reversed(stderr.splitlines()) if ln.strip()), "no output")
        return zero("crashed", f"the grader could not run the notebook: {last}"[:MESSAGE_LIMIT])
    rows, status, note = score(student, solution, nb, where, events, timeout)
    if status == "ok" and first_stop:
        status = first_stop
    note = "; ".join(n for n in [*notes, note] if n)
    return Outcome(student, solution.name, rows, seconds, status, note, flags)


def grade(
    submissions: Path,
    exercise: Path,
    *,
    timeout: float = 120.0,
    jobs: int = 1,
    level: str = "bwrap",
    trusted: bool = False,
    limits: sandbox.Limits | None = None,
    progress: Callable[[Outcome], None] | None = None,
) -> Grades:
    """Grade every submission, each in its own sandbox (``level`` ``"bwrap"``).

    ``level="none"`` (no sandbox) needs ``trusted=True``; without a working bubblewrap the
    grader refuses instead of running student code unconfined.
    """
    import importlib.util

    if level not in sandbox.MODES:
        raise GradingError(f"unknown sandbox {level!r}", hint="use --sandbox bwrap (or none)")
    if level == "none" and not trusted:
        raise GradingError(
            "--sandbox none runs student code with your permissions, files and network",
            hint="add --i-understand if you trust every submission, else install bubblewrap",
        )
    if level == "bwrap":
        why = sandbox.unavailable()
        if why:
            raise GradingError(f"cannot grade safely: {why}", hint=sandbox.INSTALL_HINT)

    if importlib.util.find_spec("nbclient") is None:
        raise MissingDependency(
            "grading runs notebooks with nbclient, which is not installed",
            hint="pip install 'argnb[classroom]'",
        )
    t0 = time.monotonic()
    solutions = load_solutions(exercise)
    found, warnings = find_submissions(submissions, solutions)
    tasks = [
        (student, found[student].get(name), sol)
        for student in sorted(found)
        for name, sol in solutions.items()
    ]

    def work(task: tuple[str, Path | None, Solution]) -> Outcome:
        outcome = grade_one(*task, exercise, timeout, level, limits)
        if progress:
            progress(outcome)
        return outcome

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        outcomes = list(pool.map(work, tasks))
    warnings += [
        f"{o.student}/{o.notebook}: review by hand, it uses {', '.join(o.flags)}"
        for o in outcomes
        if o.flags
    ]
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
    from argnb.csvsafe import safe_frame

    out.parent.mkdir(parents=True, exist_ok=True)
    safe_frame(grades.frame()).to_csv(out, index=False)
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
