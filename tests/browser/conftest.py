"""JupyterLab in headless Chromium, driven by Playwright, for the notebook tests.

One JupyterLab server (from this Python environment, on a free port, with a token) serves a
temporary copy of the course: ``notebooks/`` copied, ``assets/`` linked, its own Jupyter folders
(settings, trust database, runtime) and the run's response cache (``ARGNB_CACHE_DIR``, shared
with nbval and the site build: tests/conftest.py), so nothing of the developer's is read or written. Playwright drives Debian's Chromium through
``executable_path`` (no browser download works on CI). Everything skips cleanly when Chromium
or Playwright is missing.

JupyterLab is started with ``expose_app_in_browser`` so the tests can run commands
(``notebook:run-all-cells``, ``docmanager:save``) and read the notebook model instead of
clicking through menus and sleeping; notebook windowing is off so every cell is in the page.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import RUN_CACHE
from tests.serve import serve as _serve
from tests.serve import unix_socket_kernels

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("ARGNB_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TOKEN = "argnb-browser-suite"
SETTINGS = {  # JupyterLab user settings for a quiet, fully rendered notebook
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        "windowingMode": "none",
        "recordTiming": True,  # each cell's start and end go into the saved notebook
    },
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def screenshots() -> Path:
    """Where screenshots go (CI keeps this folder): ``$ARGNB_SCREENSHOTS`` or
    ``screenshots/browser`` in the checkout (git-ignored)."""
    folder = Path(os.environ.get("ARGNB_SCREENSHOTS") or ROOT / "screenshots" / "browser")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def playwright_api():
    """The Playwright sync API, or a clean skip."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install playwright)")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    return sync_playwright


@pytest.fixture(scope="session")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary copy of the course: notebooks copied (they get run and saved), assets linked."""
    home = tmp_path_factory.mktemp("course")
    shutil.copytree(ROOT / "notebooks", home / "notebooks")
    (home / "assets").symlink_to(ROOT / "assets", target_is_directory=True)
    return home


@pytest.fixture(scope="session")
def lab(playwright_api, course: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """JupyterLab serving ``course``; yields its URL, folders and environment."""
    state = tmp_path_factory.mktemp("jupyter")
    env = {
        **os.environ,
        "JUPYTER_DATA_DIR": str(state / "data"),
        "JUPYTER_CONFIG_DIR": str(state / "config"),
        # the run's response cache (tests/conftest.py), never the user's: a lesson's model calls
        # are made once per run, here or by nbval or the site build; widget turns are new prompts
        "ARGNB_CACHE_DIR": os.environ[RUN_CACHE],
        "ARGNB_CONFIG": str(state / "argnb-config.toml"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        ),
    }
    for var in ("ARGNB_BACKEND", "ARGNB_MODEL", "ARGNB_CACHE"):
        env.pop(var, None)
    sockets, runtime = unix_socket_kernels(env)  # kernels on Unix sockets, as nbval's
    for name, value in SETTINGS.items():
        path = state / "config" / "lab" / "user-settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    port = _free_port()
    log = state / "lab.log"
    cmd = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={course}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", *sockets,
    ]  # fmt: skip
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # CI containers run as root
    proc = _serve(cmd, env, log, "is running at", "JupyterLab", 120, cwd=course, port=port)
    url = f"http://127.0.0.1:{port}"
    try:
        yield {"url": url, "course": course, "env": env, "log": log, "runtime": runtime}
    finally:
        _stop(proc)
        shutil.rmtree(runtime, ignore_errors=True)


@pytest.fixture(scope="module")
def chromium(playwright_api) -> Iterator[object]:
    """One headless Chromium for the module (a fresh page per notebook). Not for the session:
    Playwright's sync API keeps an event loop running in the main thread while it is open, and
    every later test that calls ``asyncio.run`` would fail."""
    with playwright_api() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def ollama_server(lab: dict, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The repo's protocol-faithful Ollama server (``python -m argnb.llm.testserver``) over the
    embedded model, as a separate process; yields its URL."""
    port = _free_port()
    log = tmp_path_factory.mktemp("testserver") / "server.log"
    cmd = [sys.executable, "-m", "argnb.llm.testserver", "--port", str(port)]
    proc = _serve(cmd, lab["env"], log, "serving", "the Ollama test server", 60, port=port)
    url = f"http://127.0.0.1:{port}"
    try:
        yield url
    finally:
        _stop(proc)
