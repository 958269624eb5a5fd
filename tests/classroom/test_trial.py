"""``argnb class try`` (issue 36): it starts, a demo learner logs in, finds the course in their
home and runs a lesson cell on the class model, and Ctrl-C leaves no process and no demo user.

Real JupyterHub, proxy, gateway, llama.cpp server and local users, like ``test_hub.py``; marker
``full`` (``make test-all``): ``make test`` already runs the same pieces in ``test_hub.py``."""

from __future__ import annotations

import json
import pwd
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.classroom.learners import Learner
from tests.classroom.test_hub import REPORT, _skip_reason, lesson_cells

pytestmark = [pytest.mark.server, pytest.mark.model, pytest.mark.full]


def _lines_until(proc: subprocess.Popen, pattern: str, timeout: float) -> list[str]:
    assert proc.stdout is not None
    seen, end = [], time.monotonic() + timeout
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line.rstrip("\n"))
        if re.search(pattern, line):
            return seen
    raise AssertionError(f"no {pattern!r} in: {seen}")


def test_a_trial_class_runs_a_lesson_cell_and_ctrl_c_leaves_nothing():
    why = _skip_reason()
    if why:
        pytest.skip(why)
    proc = subprocess.Popen(
        [sys.executable, "-m", "argnb.cli", "class", "try", "--learners", "1", "--yes"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        said = _lines_until(proc, r"Ctrl-C stops everything", 300)
        url = re.search(r"the class is at (\S+)", "\n".join(said)).group(1)  # type: ignore[union-attr]
        name, password = re.search(
            r"^\s+(argnbtry1)\s+password (\S+)", "\n".join(said), re.M
        ).groups()  # type: ignore[union-attr]
        work = next(p for p in proc_cmdlines() if "argnb-try-" in p)  # the hub runs from its folder
        learner = Learner(url, name, password)
        learner.login()
        learner.spawn()
        kernel = learner.open_notebook("argnb-course/notebooks/01_fallacy_deliberation.ipynb")
        out = learner.run(kernel, lesson_cells() + "\n" + REPORT)
        assert out.status == "ok", out.traceback[-2000:]
        report = json.loads(out.stdout.strip().splitlines()[-1])
        assert report["backend"]["backend"] == "class" and report["calls"] >= 1, report
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        rest, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "stopped: no process or demo user is left" in rest, rest
    with pytest.raises(KeyError):
        pwd.getpwnam("argnbtry1")
    folder = re.search(r"(/\S*argnb-try-[^/\s]+)", work).group(1)  # type: ignore[union-attr]
    assert not [p for p in proc_cmdlines() if folder in p]
    assert not leftovers(folder)  # the model server, hub, proxy and gateway ran in that folder


def proc_cmdlines() -> list[str]:
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    return out.splitlines()[1:]


def leftovers(folder: str) -> list[str]:
    """Processes whose working folder is ``folder`` (or below it)."""
    import os

    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if cwd == folder or cwd.startswith(folder + "/"):
            found.append(pid)
    return found
