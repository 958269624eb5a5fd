"""``make lab`` starts JupyterLab, also as root (containers, classroom VMs), where JupyterLab
refuses to run without ``--allow-root``: the real Makefile target, serving, then stopped."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.serve import accepting

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "argnb-make-lab"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.server
@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_lab_serves_the_course_also_as_root(tmp_path):
    """``make lab`` with this Python's venv (``-o``: its setup is not redone), JupyterLab's own
    folders in ``tmp_path``; as root the target says it passes ``--allow-root``."""
    venv = Path(sys.prefix)
    if not (venv / "bin" / "jupyter").exists():
        pytest.skip("this Python has no jupyter command (not a venv with JupyterLab)")
    port = _free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    lab_args = (
        f"--no-browser --ip=127.0.0.1 --port={port} --ServerApp.port_retries=0 "
        f"--IdentityProvider.token={TOKEN} "
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"
    )
    cmd = ["make", "--no-print-directory", "-C", str(ROOT), "lab", f"VENV={venv}",
           "-o", f"{venv}/.installed", f"LAB_ARGS={lab_args}"]  # fmt: skip
    # its own process group: make does not pass a SIGTERM on to JupyterLab
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    lines: list[str] = []
    up = threading.Event()

    def pump() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if "is running at" in line:
                up.set()
        up.set()  # the output ended: make or JupyterLab exited

    threading.Thread(target=pump, daemon=True).start()
    try:
        assert up.wait(180) and accepting(proc, port, 60), "".join(lines[-30:])
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/contents/START_HERE.ipynb?content=0",
            headers={"Authorization": f"token {TOKEN}"},
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            assert json.load(r)["type"] == "notebook", "JupyterLab serves the course home"
    finally:
        _stop(proc)
    out = "".join(lines)
    as_root = os.geteuid() == 0
    assert ("running as root, so JupyterLab starts with --allow-root" in out) == as_root, out
    assert ("--allow-root" in out) == as_root
    assert "Running as root is not recommended" not in out
    assert _closed(port, 30), "JupyterLab stopped with make"


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM to make and JupyterLab (the group this test started), SIGKILL after 30 s."""
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError):  # the whole group is gone already
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _closed(port: int, timeout: float) -> bool:
    """Whether nothing accepts connections on ``port`` within ``timeout`` seconds (a server
    stopping with SIGTERM closes its port when its shutdown is done)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return True
        time.sleep(0.2)
    return False
