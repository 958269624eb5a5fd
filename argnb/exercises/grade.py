"""Grade a folder of submissions against an exercise's solution notebooks.

``SUBMISSIONS`` holds one folder per student (``ana/ex1_tie_break.ipynb``) or flat files named
``NAME__notebook.ipynb`` (``ana__ex1_tie_break.ipynb``). Every submitted notebook goes through
four steps, each in its own place:

1. **build** (:mod:`.build`): the student's cells, then the solution's checks (hidden tests
   included), after the kernel's machinery is restored;
2. **run** (:mod:`.execute`, :mod:`.sandbox`, :mod:`.jail`, :mod:`.runner`): a fresh kernel in
   its own bubblewrap sandbox runs the student's cells, within ``timeout`` seconds and the
   limits; the checks run in the checker (:mod:`.checker`), a second sandbox without the
   student's files, which calls the student's functions over plain data (:mod:`.codec`,
   :mod:`.serve`);
3. **score** (:mod:`.scoring`): a check earns its points when the checker ran it to the end;
   whatever did not run (a time-out, a crashed kernel) earns nothing, and the other notebooks
   are graded as usual;
4. **feedback** (:mod:`.pages`): one row per (student, notebook, check) in the CSV, neutralised
   for spreadsheets (:mod:`argnb.csvsafe`), and one escaped feedback page per student.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from argnb.errors import GradingError, GradingStopped, MarkerError, MissingDependency
from argnb.exercises import execute, sandbox, submissions
from argnb.exercises.build import SKIP, graded_notebook, mark_hidden, suspicious
from argnb.exercises.checker import GRADER_FAULT
from argnb.exercises.execute import run_notebook
from argnb.exercises.markers import checks
from argnb.exercises.pages import feedback_html, safe_name, write
from argnb.exercises.runner import OUTPUT_LIMIT
from argnb.exercises.scoring import (
    COLUMNS,
    MESSAGE_LIMIT,
    Grades,
    Outcome,
    Row,
    Solution,
    _first_line,
    score,
)

__all__ = [
    "COLUMNS",
    "SKIP",
    "Grades",
    "GradingError",
    "Outcome",
    "Row",
    "Solution",
    "feedback_html",
    "grade",
    "graded_notebook",
    "mark_hidden",
    "require_sandbox",
    "run_notebook",
    "safe_name",
    "score",
    "write",
]  # fmt: skip

#: times a notebook runs again without a student cell that hung or crashed before the checks
RETRIES = 2


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
    folder: Path, names: Iterable[str], unpack_to: Path | None = None
) -> tuple[dict[str, dict[str, Path | str]], list[str]]:
    """``{student: {notebook name: path or why it is refused}}`` and warnings (see
    :mod:`.submissions`); archives are unpacked under ``unpack_to`` (without it: warnings)."""
    return submissions.find(folder, names, unpack_to)


def grade_one(
    student: str,
    path: Path | str | None,
    solution: Solution,
    exercise: Path,
    timeout: float,
    level: str,
    limits: sandbox.Limits | None = None,
) -> Outcome:
    """Grade one submitted notebook (``path`` None: not submitted; a text: why it is refused)."""

    def zero(status: str, message: str) -> Outcome:
        rows = [
            Row(student, solution.name, c.id, 0.0, c.points, False, status, message)
            for c in solution.checks
        ]
        return Outcome(student, solution.name, rows, 0.0, status, message)

    if path is None:
        return zero("missing", f"not submitted (expected {solution.name})")
    if isinstance(path, str):
        return zero("unreadable", path[:MESSAGE_LIMIT])
    try:
        submitted = submissions.read_notebook(path)
        nb, where, notes = graded_notebook(submitted, solution)
    except GradingError as exc:
        return zero("unreadable", str(exc)[:MESSAGE_LIMIT])
    except Exception as exc:  # not JSON, not a notebook: the student's file, not our bug
        line = _first_line(str(exc))
        return zero("unreadable", f"cannot read {solution.name}: {line}"[:MESSAGE_LIMIT])
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
        if stop and str(stop.get("reason", "")).startswith(GRADER_FAULT):
            if attempt < RETRIES:  # the grader's own failure: never the student's points
                notes.append(f"the grader failed once and graded again: {stop['reason']}")
                continue
            break
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
    for e in events:
        if e["event"] == "cell" and e.get("cut") and e["index"] < len(nb.cells):
            notes.append(
                f"the cell starting `{_first_line(nb.cells[e['index']].source)}` printed more "
                f"than {OUTPUT_LIMIT} characters; the grader kept those and cut the rest"
            )
    peak = max((e.get("mb", 0) for e in events if e["event"] == "peak"), default=0)
    rows, status, note = score(student, solution, nb, where, events, timeout)
    if status == "ok" and first_stop:
        status = first_stop
    note = "; ".join(n for n in [*notes, note] if n)
    return Outcome(student, solution.name, rows, seconds, status, note, flags, peak)


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """In the main thread, SIGTERM raises ``GradingStopped`` (SIGINT: KeyboardInterrupt)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise GradingStopped(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def require_sandbox(level: str, trusted: bool = False) -> None:
    """Refuse (``GradingError``) unless ``level`` can run here: ``bwrap`` working, or ``none``
    with ``trusted`` (the instructor's explicit ``--i-understand``)."""
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

    require_sandbox(level, trusted)

    if importlib.util.find_spec("nbclient") is None:
        raise MissingDependency(
            "grading runs notebooks with nbclient, which is not installed",
            hint="pip install 'argnb[classroom]'",
        )
    t0 = time.monotonic()
    solutions = load_solutions(exercise)
    unpacked = Path(tempfile.mkdtemp(prefix="argnb-unpack-"))
    try:
        with _stopped_by_signals():
            found, warnings = find_submissions(submissions, solutions, unpacked)
            tasks = [
                (student, found[student].get(name), sol)
                for student in sorted(found)
                for name, sol in solutions.items()
            ]

            def work(task: tuple[str, Path | str | None, Solution]) -> Outcome:
                try:
                    outcome = grade_one(*task, exercise, timeout, level, limits)
                except Exception as exc:  # this submission alone: every other row is written
                    student, _, sol = task
                    why = f"the grader failed on this notebook: {type(exc).__name__}: {exc}"
                    rows = [
                        Row(student, sol.name, c.id, 0.0, c.points, False, "crashed", why[:200])
                        for c in sol.checks
                    ]
                    outcome = Outcome(student, sol.name, rows, 0.0, "crashed", why[:MESSAGE_LIMIT])
                if progress:
                    progress(outcome)
                return outcome

            pool = ThreadPoolExecutor(max_workers=max(1, jobs))
            try:
                outcomes = list(pool.map(work, tasks))
            except BaseException:  # SIGTERM, Ctrl+C, a crash: end every run, then give up
                execute.stop_all()
                pool.shutdown(wait=True, cancel_futures=True)
                raise
            pool.shutdown()
    finally:
        shutil.rmtree(unpacked, ignore_errors=True)
    warnings += [
        f"{o.student}/{o.notebook}: review by hand, it uses {', '.join(o.flags)}"
        for o in outcomes
        if o.flags
    ]
    return Grades(exercise.name, outcomes, time.monotonic() - t0, level, warnings)
