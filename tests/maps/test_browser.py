"""A saved notebook with a map, opened in JupyterLab in headless Chromium: untrusted it shows the
picture, trusted the live map. Screenshots go to ``$ARGNB_SCREENSHOTS`` (default ``screenshots/``).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from IPython.core.formatters import DisplayFormatter

from tests.serve import serve, unix_socket_kernels

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
TOKEN = "argnb-browser-test"


def _playwright():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install playwright)")
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return sync_playwright


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _notebook(path: Path, m) -> None:
    """A saved notebook with the map's output (trust is per content: the file name is in it)."""
    data, metadata = DisplayFormatter().format(m.show())
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    cell = nbformat.v4.new_code_cell("dialogue_map.show()", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("display_data", data=data, metadata=metadata)]
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"## The camera dialogue as a map ({path.stem})"),
        cell,
    ]
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on a free port, with its own Jupyter dirs (trust database included)."""
    _playwright()
    home = tmp_path_factory.mktemp("lab")
    env = {
        **os.environ,
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
    }
    sockets, runtime = unix_socket_kernels(env)  # not TCP ports (tests/serve.py)
    news = home / "config/lab/user-settings/@jupyterlab/apputils-extension"
    news.mkdir(parents=True)  # no "get notified about Jupyter news?" toast over the screenshots
    (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    port = _free_port()
    log = home / "lab.log"
    cmd = [
        sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
        "--ip=127.0.0.1", "--allow-root", f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={home}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", *sockets,
    ]  # fmt: skip
    proc = serve(cmd, env, log, "is running at", "JupyterLab", 90, port=port)
    url = f"http://127.0.0.1:{port}"
    yield {"url": url, "home": home, "env": env}
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    shutil.rmtree(runtime, ignore_errors=True)


def _shots() -> Path:
    folder = Path(os.environ.get("ARGNB_SCREENSHOTS", ROOT / "screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_saved_map_shows_a_picture_untrusted_and_the_live_map_trusted(lab, camera_map):
    home = lab["home"]
    _notebook(home / "untrusted.ipynb", camera_map)
    _notebook(home / "trusted.ipynb", camera_map)
    subprocess.run(
        [sys.executable, "-m", "jupyter", "trust", str(home / "trusted.ipynb")],
        env=lab["env"], check=True, capture_output=True,
    )  # fmt: skip
    errors: list[str] = []
    with _playwright()() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1300, "height": 1100})
        page.on("pageerror", lambda e: errors.append(str(e)))

        page.goto(f"{lab['url']}/lab/tree/untrusted.ipynb?reset&token={TOKEN}")
        out = page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output").first
        picture = out.locator("img[src^='data:image/png']")
        picture.wait_for(state="visible", timeout=90_000)
        assert out.get_attribute("data-mime-type") == "text/html"  # sanitized HTML won the rank
        assert out.locator("iframe").count() == 0  # the sanitizer stripped the live map ...
        assert picture.evaluate("e => e.complete && e.naturalWidth") > 500  # ... the picture drew
        assert "not trusted" in out.inner_text()
        page.screenshot(path=str(_shots() / "map_untrusted.png"))

        page.goto(f"{lab['url']}/lab/tree/trusted.ipynb?reset&token={TOKEN}")
        out = page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output").first
        out.locator("iframe").wait_for(state="visible", timeout=90_000)
        frame = out.frame_locator("iframe").first
        frame.locator("canvas").first.wait_for(state="visible", timeout=60_000)
        out.locator(".argnb-map-static").wait_for(state="detached", timeout=30_000)
        frame.locator("body").evaluate(  # every node placed (vis-network lays them out)
            """() => new Promise(done => { const t = setInterval(() => {
                 if (network && Object.keys(network.getPositions()).length === nodes.length) {
                   clearInterval(t); done(); } }, 50); })"""
        )
        page.screenshot(path=str(_shots() / "map_trusted.png"))
        browser.close()
    assert not errors, errors
