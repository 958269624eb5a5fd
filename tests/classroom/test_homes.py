"""collect and return, one learner at a time, with real local users (no hub): a hostile learner's
FIFO, folder, sparse giants and a newline in a file name cost that learner's entries only, within
seconds, and an honest classmate beside them is collected and gets their page."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.classroom.learners import add_system_user, remove_system_user

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("useradd"),
    reason="needs root and useradd (real local users)",
)
STUDENT = ("argnb-course", "exercises", "02_dialectic", "student")


@pytest.fixture(scope="module")
def two_homes():
    tag = secrets.token_hex(2)
    names = [f"argnbh{tag}0", f"argnbh{tag}1"]
    try:
        for n in names:
            add_system_user(n)
        yield names
    finally:
        for n in names:
            remove_system_user(n)


def _own(home: Path, name: str) -> None:
    subprocess.run(["chown", "-R", "-h", f"{name}:{name}", str(home)], check=True)


def _cli(*args: str) -> tuple[str, float]:
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "argnb.cli", "class", *args], capture_output=True,
                       text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout, time.monotonic() - t0


def test_a_hostile_home_costs_only_its_own_entries_and_never_stalls_the_class(two_homes, tmp_path):
    hostile, honest = two_homes
    notebook = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    for name in two_homes:
        folder = Path("/home", name, *STUDENT)
        folder.mkdir(parents=True)
        (folder / "ex2_grounded.ipynb").write_text(notebook)
    bad = Path("/home", hostile, *STUDENT)
    (bad / "folder.ipynb").mkdir()
    os.mkfifo(bad / "fifo.ipynb")
    (bad / f"evil\n{honest}: forged.ipynb").write_text(notebook)
    for i in range(3):  # 3 x 19.9 MB that take no disk: past the 50 MB a learner hands in
        with open(bad / f"sparse{i}.ipynb", "wb") as f:
            f.truncate(19_900_000)
    feedback = Path("/home", hostile, "argnb-course", "feedback")
    feedback.mkdir(parents=True)
    os.mkfifo(feedback / "02_dialectic.html")  # the page's place: a FIFO that nobody reads
    for name in two_homes:
        _own(Path("/home", name), name)

    subs = tmp_path / "subs"
    out, _ = _cli("collect", "02_dialectic", "--to", str(subs), "--only", ",".join(two_homes))
    got = json.loads((subs / "collected.json").read_text())
    assert got["taken"][honest] == ["ex2_grounded.ipynb"]
    taken = set(got["taken"][hostile])
    assert {"ex2_grounded.ipynb", "sparse0.ipynb", "sparse1.ipynb"} <= taken  # the good ones
    assert f"evil\n{honest}: forged.ipynb" in taken
    why = " | ".join(got["refused"][hostile])
    for entry in ("folder.ipynb: not a regular file", "fifo.ipynb: not a regular file",
                  "sparse2.ipynb: past the 50,000,000 bytes"):  # fmt: skip
        assert entry in why, why
    # a name with a line break stays on its learner's line: no line starts with the classmate
    assert not any(line.startswith(f"{honest}: forged") for line in out.splitlines()), out

    pages = tmp_path / "feedback"
    pages.mkdir()
    from argnb.exercises.submissions import page_name

    for name in two_homes:
        (pages / f"{page_name(name)}.html").write_text(f"<p>{name}'s page</p>")
    out, seconds = _cli("return", "02_dialectic", "--feedback", str(pages), "--submissions",
                        str(subs), "--only", ",".join(two_homes))  # fmt: skip
    assert seconds < 30, seconds  # was: hung until killed, and nobody's page written
    lines = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    assert lines[hostile].startswith("not returned") and "FIFO" in lines[hostile], out
    page = Path("/home", honest, "argnb-course", "feedback", "02_dialectic.html")
    assert page.read_text() == f"<p>{honest}'s page</p>"
