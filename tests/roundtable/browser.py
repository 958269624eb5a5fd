"""Drive the roundtable widget in real JupyterLab with headless Chromium (Playwright).

Used by ``test_browser.py`` (scripted models with XSS payloads) and, by hand, to look at the
widget on the embedded model::

    PYTHONPATH=$PWD python -m tests.roundtable.browser --local --shot screenshots/roundtable.png
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import nbformat

from tests.serve import unix_socket_kernels

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"

SCRIPTED_CELL = """
import argnb.roundtable.widget
from argnb.roundtable import RoundtableWidget, Session
argnb.roundtable.widget.GONE_AFTER_S = 4  # the kernel-gone notice's delay: see NOTICE_S
from tests.roundtable.test_views import evil_backend
session = Session(
    "Phones in class? <img src=x onerror=\\"window.__xss=(window.__xss||0)+1\\">",
    moderator=evil_backend(), deliberators=[evil_backend(), evil_backend()],
    analyzer=evil_backend(), human="Ann <svg onload=\\"window.__xss=9\\">", turns=6,
    analyze_every=3, autosave=None,
)
RoundtableWidget(session=session, autosave=None)
"""

LOCAL_CELL = """
import argnb
from argnb.roundtable import RoundtableWidget, Session
backend = argnb.connect("local", cache=False)
session = Session(
    "Should students be allowed to use AI tools like ChatGPT for homework?",
    moderator=backend, deliberators=[backend, backend], analyzer=backend, human="Ann",
    turns=6, analyze_every=3, autosave="session.json",
)
RoundtableWidget(session=session)
"""

#: the kernel-gone notice's delay in SCRIPTED_CELL (the widget's default, 10 s, in LOCAL_CELL):
#: the waits of :func:`drive` follow it (the page beats every 2 s)
NOTICE_S = 4

HUMAN_XSS = (
    'I think <img src=x onerror="window.__xss=(window.__xss||0)+1"> and '
    "<script>window.__xss=2</script> are just text."
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_notebook(folder: Path, cell: str, name: str = "roundtable.ipynb") -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
    }
    nb.cells = [nbformat.v4.new_code_cell(cell.strip())]
    path = folder / name
    nbformat.write(nb, path)
    return path


@contextlib.contextmanager
def jupyter_lab(folder: Path, timeout: float = 120) -> Iterator[tuple[str, str]]:
    """A JupyterLab server on a free port serving ``folder``; yields (base URL, token)."""
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    env["JUPYTER_CONFIG_DIR"] = str(folder / ".jupyter")  # no user settings leak in
    sockets, runtime = unix_socket_kernels(env)  # kernels not on TCP ports (tests/serve.py)
    settings = folder / ".settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)  # no "news?" pop-up over the widget
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    widgets = folder / ".settings" / "@jupyter-widgets" / "jupyterlab-manager"
    widgets.mkdir(parents=True, exist_ok=True)  # widget state is saved with the notebook
    (widgets / "plugin.jupyterlab-settings").write_text('{"saveState": true}')
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            f"--port={port}",
            "--ServerApp.ip=127.0.0.1",
            "--allow-root",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={folder}",
            "--LabApp.news_url=",
            f"--LabApp.user_settings_dir={folder / '.settings'}",
            "--ServerApp.disable_check_xsrf=True",
            "--LabApp.expose_app_in_browser=True",  # run_first_cell runs JupyterLab's command
            *sockets,
        ],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "JupyterLab did not start: " + proc.stderr.read().decode()[-2000:]
                    ) from None
                time.sleep(0.5)
        yield base, token
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(runtime, ignore_errors=True)


def api(base: str, token: str, path: str, method: str = "GET") -> object:
    req = urllib.request.Request(f"{base}{path}?token={token}", method=method)
    with urllib.request.urlopen(req, timeout=10) as r:
        body = r.read()
    return json.loads(body) if body else None


def _dialog(d, seen: dict) -> None:
    """An alert from the page (a payload that ran) is recorded and dismissed. "Leave site?" is
    not one: JupyterLab asks it on reload when a late output marked the saved notebook as
    changed, and dismissing it cancelled the reload (a 90 s timeout under load); leave."""
    if d.type == "beforeunload":
        seen["left_unsaved"] = True
        d.accept()
    else:
        seen["dialogs"].append(d.message)
        d.dismiss()


_PANEL = """const app = window.jupyterapp;
const panel = app && app.shell ? Array.from(app.shell.widgets('main')).find(
  w => w.context && w.context.path === path) : undefined;"""


def lab_dialogs(page, seen: list[str]) -> None:
    """JupyterLab's own dialogs (not the page's alerts): each one's text is kept in ``seen`` and
    it is answered with its default button. A CI run went red on one that covered the cell,
    and nobody could tell which it was; now a failing test names it."""
    for _ in range(5):
        box = page.locator(".jp-Dialog")
        if not box.count():
            return
        seen.append(" ".join(box.first.inner_text().split())[:300])
        accept = box.first.locator(".jp-Dialog-button.jp-mod-accept")
        (accept if accept.count() else box.first.locator("button").last).first.click()
        page.wait_for_timeout(300)


def run_first_cell(page, path: str, ready, dialogs: list[str], attempts: int = 6) -> None:
    """Run the notebook's first cell and wait for ``ready`` (a locator of what the cell shows).

    With JupyterLab's app object in the page (``expose_app_in_browser``), through its own
    command: no click into the editor, which a dialog can cover. Without it (a hub user's
    server), as a learner does: the cell, then Ctrl+Enter, each JupyterLab dialog answered and
    named first. A run sent while the kernel is still connecting can get lost: sent again."""
    try:
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
        app = bool(page.evaluate("() => !!window.jupyterapp"))
        if app:
            page.wait_for_function(
                "path => {" + _PANEL + "return !!panel && panel.context.isReady"
                " && panel.sessionContext.kernelDisplayStatus === 'idle'; }",
                arg=path,
                timeout=120_000,
            )
        else:
            page.wait_for_selector("text=Kernel status: Idle", state="attached", timeout=120_000)
    except Exception as e:
        lab_dialogs(page, dialogs)
        shown = " ".join(page.locator("body").inner_text().split())[:400]
        raise AssertionError(
            f"{path} never opened with an idle kernel at {page.url} (JupyterLab's dialogs: "
            f"{dialogs}; the page shows: {shown!r})"
        ) from e
    for _ in range(attempts):
        lab_dialogs(page, dialogs)
        if app:
            page.evaluate(
                "path => {"
                + _PANEL
                + """app.shell.activateById(panel.id);
panel.content.activeCellIndex = 0;
return app.commands.execute('notebook:run-cell');}""",
                path,
            )
        else:
            page.locator(".jp-Cell .jp-InputArea-editor").first.click()
            page.keyboard.press("Control+Enter")
        try:
            ready.wait_for(timeout=40_000)
            return
        except Exception:
            continue
    lab_dialogs(page, dialogs)
    try:
        ready.wait_for(timeout=5_000)
    except Exception as e:
        raise AssertionError(f"the cell never showed its widget; JupyterLab said: {dialogs}") from e


def drive(
    base: str,
    token: str,
    notebook: str,
    *,
    human_text: str,
    shot: Path | None = None,
    turn_timeout: float = 120,
    check_gone: bool = True,
    reopen: Path | None = None,
    notice_s: float = NOTICE_S,
) -> dict:
    """Open the notebook, run it, start the session, take one human turn, look at the panels;
    then shut the kernel down (the notice must appear) and, with ``reopen`` (the notebook's
    path), save and open the notebook again (the saved panels and the notice must be there)."""
    from playwright.sync_api import sync_playwright

    seen: dict = {"dialogs": [], "lab_dialogs": []}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1500, "height": 1150})
        page.on("dialog", lambda d: _dialog(d, seen))
        page.goto(f"{base}/lab/tree/{notebook}?token={token}")
        start = page.locator(".argnb-roundtable button", has_text="Start")
        run_first_cell(page, notebook, start, seen["lab_dialogs"])
        page.evaluate(BEAT_COUNTER)
        t0 = time.monotonic()
        start.click()
        box = page.locator(".argnb-rt-input textarea")
        page.wait_for_function(
            "() => { const t = document.querySelector('.argnb-rt-input textarea'); return t && !t.disabled; }",
            timeout=turn_timeout * 1000 * 4,
        )
        seen["first_human_turn_s"] = round(time.monotonic() - t0, 1)
        box.fill(human_text)
        page.locator(".argnb-roundtable button", has_text="Send").click()
        page.wait_for_function(
            "() => document.querySelector('.argnb-rt-input textarea').disabled", timeout=10_000
        )
        seen["input_disabled_after_send"] = True
        t1 = time.monotonic()
        page.wait_for_function(
            "() => { const t = document.querySelector('.argnb-rt-input textarea'); "
            "const done = document.body.innerText.includes('The session has ended');"
            "return done || (t && !t.disabled); }",
            timeout=turn_timeout * 1000 * 4,
        )
        seen["next_human_turn_s"] = round(time.monotonic() - t1, 1)
        for frame in page.frames[1:]:  # the map's frame: every node placed
            frame.wait_for_function(DRAWN, timeout=30_000)
        if shot is not None:
            shot.parent.mkdir(parents=True, exist_ok=True)
            page.locator(".argnb-roundtable").screenshot(path=str(shot))
        seen["xss"] = page.evaluate("() => window.__xss === undefined ? null : window.__xss")
        seen["frame_xss"] = [
            f.evaluate("() => window.__xss === undefined ? null : window.__xss")
            for f in page.frames[1:]
        ]
        seen["raw_img"] = page.evaluate(
            "() => document.querySelectorAll('.argnb-roundtable img[src=\"x\"], .argnb-roundtable svg[onload]').length"
        )
        seen["dialogue_text"] = page.locator(".argnb-rt-dialogue").inner_text()
        seen["analysis_text"] = page.locator(".argnb-rt-analysis").inner_text()
        seen["map_frames"] = page.locator(".argnb-rt-map iframe").count()
        # longer than the notice waits: the beats must keep it hidden (a wait for something
        # that must not happen)
        page.wait_for_timeout((notice_s + 2) * 1000)
        seen["gone_visible_before"] = _gone_visible(page)
        seen["beats"] = page.evaluate("() => window.__beats")
        if check_gone:
            for k in api(base, token, "/api/kernels"):  # type: ignore[union-attr]
                api(base, token, f"/api/kernels/{k['id']}", method="DELETE")
            seen["gone_visible_after"] = _wait_gone_visible(page, notice_s)
            seen["gone_text"] = page.locator("[class^='argnb-rt-gone-']").inner_text()
            if shot is not None:
                page.locator("[class^='argnb-rt-gone-']").screenshot(
                    path=str(shot.with_name(shot.stem + "_kernel_gone.png"))
                )
        if reopen is not None:
            # save (with widget state), then open the notebook again: the old kernel is gone
            page.locator(".jp-Notebook").first.click()
            page.keyboard.press("Control+s")
            deadline = time.monotonic() + 30
            while WIDGET_STATE not in (saved := reopen.read_text()) and time.monotonic() < deadline:
                page.wait_for_timeout(100)  # JupyterLab writes the file on its own time
            seen["saved_widget_state"] = WIDGET_STATE in saved
            page.reload(timeout=90_000)  # JupyterLab again, on a busy machine
            page.wait_for_selector(".argnb-rt-dialogue", timeout=90_000)
            for _ in range(3):  # JupyterLab may ask what to do about the dead kernel
                for label in ("Select", "Keep", "Ok", "OK"):
                    btn = page.locator(".jp-Dialog button", has_text=label)
                    if btn.count():
                        btn.first.click()
                page.wait_for_timeout(1000)
            seen["gone_visible_reopened"] = _wait_gone_visible(page, notice_s)
            seen["reopened_dialogue_text"] = page.locator(".argnb-rt-dialogue").inner_text()
            seen["xss_reopened"] = page.evaluate(
                "() => window.__xss === undefined ? null : window.__xss"
            )
            if shot is not None:
                page.locator(".argnb-roundtable").screenshot(
                    path=str(shot.with_name(shot.stem + "_reopened.png"))
                )
        browser.close()
    return seen


BEAT_COUNTER = """() => { window.__beats = 0;
  const d = document.querySelector("[class^='argnb-rt-gone-']").parentElement;
  new MutationObserver(() => { window.__beats += 1; }).observe(d, {childList: true, subtree: true});
}"""


WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
DRAWN = """() => typeof network === 'undefined' || (network !== null && nodes.length > 0
    && Object.keys(network.getPositions()).length === nodes.length)"""
GONE_VISIBLE = """() => { const d = document.querySelector("[class^='argnb-rt-gone-']");
    return !!d && getComputedStyle(d).visibility === 'visible'; }"""


def _wait_gone_visible(page, notice_s: float) -> bool:
    """Whether the kernel-gone notice shows within its delay and two missed beats."""
    try:
        page.wait_for_function(GONE_VISIBLE, timeout=(notice_s + 10) * 1000)
    except Exception:  # playwright's TimeoutError: reported as "not visible"
        return False
    return True


def _gone_visible(page) -> bool:
    return page.evaluate(GONE_VISIBLE)


def main() -> None:  # pragma: no cover - used by hand
    import argparse
    import tempfile

    p = argparse.ArgumentParser()
    p.add_argument("--local", action="store_true", help="the embedded model instead of scripts")
    p.add_argument("--shot", type=Path, default=ROOT / "screenshots" / "roundtable.png")
    p.add_argument(
        "--text",
        default="I use AI to get maths explained, but some friends just copy answers. <b>bold?</b>",
    )
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_notebook(folder, LOCAL_CELL if args.local else SCRIPTED_CELL)
        with jupyter_lab(folder) as (base, token):
            seen = drive(
                base,
                token,
                "roundtable.ipynb",
                human_text=args.text,
                shot=args.shot,
                turn_timeout=600,
                reopen=folder / "roundtable.ipynb",
                notice_s=10 if args.local else NOTICE_S,
            )
        if (folder / "session.json").exists():
            (args.shot.parent / "session.json").write_text((folder / "session.json").read_text())
    print(
        json.dumps(
            {k: v for k, v in seen.items() if k not in ("dialogue_text", "analysis_text")}, indent=1
        )
    )
    print(seen["dialogue_text"][:3000])
    print("---- analysis\n" + seen["analysis_text"][:1500])


if __name__ == "__main__":
    main()
