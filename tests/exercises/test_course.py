"""``argnb course open``: what is copied, what is kept, and the real thing from a built wheel."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pytest

from argnb import course
from argnb.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_course_files_are_notebooks_student_exercises_and_assets():
    files = {p.as_posix() for p in course.course_files(ROOT)}
    assert {p.relative_to(ROOT).as_posix() for p in (ROOT / "notebooks").glob("*.ipynb")} <= files
    assert {
        p.relative_to(ROOT).as_posix() for p in (ROOT / "exercises").glob("*/student/*.ipynb")
    } <= files
    assert "assets/critique/examples.jsonl" in files
    assert not [f for f in files if "solutions" in f or "checkpoint" in f]


def test_copy_keeps_the_learners_files(tmp_path):
    first = course.copy_course(tmp_path / "c", root=ROOT)
    assert first.written and not first.kept
    mine = tmp_path / "c" / "notebooks" / "00_setup.ipynb"
    mine.write_text("my edits")
    again = course.copy_course(tmp_path / "c", root=ROOT)
    assert not again.written and len(again.kept) == len(first.written)
    assert mine.read_text() == "my edits"


def test_cli_no_lab_only_copies(tmp_path, capsys):
    assert main(["course", "open", str(tmp_path / "c"), "--no-lab"]) == 0
    assert "files copied" in capsys.readouterr().out
    assert (
        tmp_path / "c" / "exercises" / "02_dialectic" / "student" / "ex2_grounded.ipynb"
    ).exists()
    (tmp_path / "f").write_text("x")
    assert main(["course", "open", str(tmp_path / "f"), "--no-lab"]) == 2


def test_assets_are_found_in_a_checkout():
    assert course.asset_dir("critique").joinpath("examples.jsonl").exists()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.server
def test_course_open_from_a_built_wheel_in_a_fresh_venv(tmp_path):
    """Build the wheel, install it (no deps) into a fresh venv that borrows the shared venv's
    dependencies through a .pth line, copy the course and start JupyterLab; then ask it for the
    notebooks over HTTP and stop it."""
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
         "-q", "-w", str(wheels)],
        check=True, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    (wheel,) = wheels.glob("argnb-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "argnb/_course/notebooks/00_setup.ipynb" in names
    assert "argnb/_course/exercises/02_dialectic/student/ex2_grounded.ipynb" in names
    assert not [n for n in names if "solutions" in n]

    # no PYTHONPATH: this checkout must not be what the fresh venv imports (or what pip sees)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    venv = tmp_path / "fresh"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    py = venv / "bin" / "python"
    site = Path(
        subprocess.check_output(
            [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
        ).strip()
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", str(wheel)],
        check=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    (site / "shared-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    where = subprocess.check_output(
        [py, "-c", "import argnb; print(argnb.__file__)"], env=env, text=True, cwd=tmp_path
    )
    assert where.startswith(str(venv))

    learner = tmp_path / "learner"
    port = _free_port()
    proc = subprocess.Popen(
        [venv / "bin" / "argnb", "course", "open", str(learner), "--no-browser", "--port", str(port)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
    )  # fmt: skip
    try:
        url, lines, deadline = None, [], time.monotonic() + 180
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(rf"http://127\.0\.0\.1:{port}/lab\?token=(\w+)", line)
            url = m and m.group(0)
        assert url, "".join(lines[-20:])
        assert (learner / "notebooks" / "02_dialectic_synthesis.ipynb").exists()
        token = url.rsplit("=", 1)[1]
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/contents/exercises/02_dialectic/student",
            headers={"Authorization": f"token {token}"},
        )
        for _ in range(60):  # the server prints its URL a moment before it listens
            try:
                listing = json.load(urllib.request.urlopen(req, timeout=30))
                break
            except ConnectionRefusedError:
                time.sleep(0.5)
            except urllib.error.URLError as exc:
                if not isinstance(exc.reason, ConnectionRefusedError):
                    raise
                time.sleep(0.5)
        assert {c["name"] for c in listing["content"]} == {
            "ex1_attack_kinds.ipynb", "ex2_grounded.ipynb", "ex3_undercut_stances.ipynb"
        }  # fmt: skip
        assert urllib.request.urlopen(url, timeout=30).status == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/api", timeout=5)  # no orphan server
