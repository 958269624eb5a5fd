"""Run one graded notebook in a fresh sandbox (:mod:`.sandbox`) through the runner
(:mod:`.runner`), and read back what it logged; the scratch folder never outlives the run."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from argnb.exercises import cgroups, sandbox
from argnb.exercises.release import student_files

#: seconds a notebook may take beyond its execution limit (kernel start and shutdown)
GRACE = 60.0

#: the runners of this process that are still going, so a stopped grader can end them all
_LIVE: set[subprocess.Popen] = set()
_LOCK = threading.Lock()
_STOPPING = threading.Event()


def stop_all() -> None:
    """End every runner (and with it its sandboxes) and start no new one: the grader is
    stopping (SIGTERM, Ctrl+C, a crash). Each run's own ``finally`` removes its scratch."""
    _STOPPING.set()
    with _LOCK:
        live = list(_LIVE)
    for proc in live:
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(proc.pid, signal.SIGKILL)


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
    group: cgroups.Cgroup | None = None
    try:
        limits = limits or sandbox.Limits()
        for base in (scratch.box, scratch.check):  # the kernel's copy, and the checker's own
            for rel in student_files(exercise):
                (base / exercise.name / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(exercise / rel, base / exercise.name / rel)
            (base / exercise.name / "student").mkdir(parents=True, exist_ok=True)
        cwd = scratch.box / exercise.name / "student"  # where the student's copy sat
        group = cgroups.create(limits.total_memory_mb, limits.processes)
        withheld = list(nb.metadata.get("argnb", {}).get("withheld", []))
        spec = sandbox.write_spec(
            scratch, level, limits, cwd, cgroup=group.procs if group else [], withheld=withheld
        )
        checker_cwd = scratch.check / exercise.name / "student"
        checker_spec = sandbox.write_spec(scratch, level, limits, checker_cwd, checker=True)
        job = scratch.check / "job.json"
        job.write_text(json.dumps(_job(nb, timeout)), encoding="utf-8")
        scratch.hand_over()
        notebook = scratch.private / "graded.ipynb"
        nbformat.write(nb, notebook)
        log = scratch.private / "events.jsonl"
        cmd = [sys.executable, "-m", "argnb.exercises.runner", str(notebook), str(log), str(spec),
               str(scratch.box), "--checker", str(checker_spec), str(job),
               "--timeout", str(timeout)]  # fmt: skip
        if group is None:  # no control group here: the runner's watchdog sums the memory
            cmd += ["--watchdog-mb", str(limits.total_memory_mb)]
        t0 = time.monotonic()
        with (scratch.private / "stderr.txt").open("wb") as err, _LOCK:
            if _STOPPING.is_set():
                raise RuntimeError("the grader is stopping")
            proc = subprocess.Popen(
                cmd,
                cwd=scratch.private,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
            )
            _LIVE.add(proc)
        try:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=timeout + GRACE)
            events = _events(log)
            if proc.poll() is None:  # the kernel dies with the runner (--die-with-parent)
                _kill_group(proc)
                events = _events(log)
                if not any(e["event"] in ("stop", "end") for e in events):
                    last = max((e["index"] for e in events if e["event"] == "cell"), default=0)
                    events.append({"event": "stop", "index": last + 1, "reason": "timeout"})
        finally:
            if proc.poll() is None:
                _kill_group(proc)
            with _LOCK:
                _LIVE.discard(proc)
        seconds = time.monotonic() - t0
        tail = (scratch.private / "stderr.txt").read_text(encoding="utf-8", errors="replace")
        if group is not None and group.oom_killed():
            tail += f"\nthe notebook went over its {limits.total_memory_mb} MB memory limit"
        return events, seconds, tail[-2000:]
    finally:
        if group is not None:
            group.remove()
        scratch.remove()


def _job(nb: Any, timeout: float) -> dict[str, Any]:
    """What the checker runs: the solution's imports and check cells (in its folder only)."""
    meta = nb.metadata.get("argnb", {})
    checks = [
        {"index": i, "source": c.source}
        for i, c in enumerate(nb.cells)
        if "check" in c.metadata.get("argnb", {})
    ]
    return {"imports": list(meta.get("imports", [])), "checks": checks, "timeout": timeout}


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
