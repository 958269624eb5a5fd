"""Every notebook in a real browser: run it all, check what a learner sees, use its widget, save
it, and reopen a changed (untrusted) copy in a fresh kernel.

For each notebook in :data:`NOTEBOOKS` (notebook → the one interaction a learner would try):

1. run all cells in JupyterLab on the embedded model (the run's response cache: a lesson's model
   calls are made once per run, here or by nbval or the site build; widget turns are live);
2. no cell fails, nothing is logged as an error in the browser console;
3. every widget rendered as a widget (not as text or an error), every live map drew all its
   nodes, no widget has a horizontal scrollbar, a cut-off button label or placeholder;
4. the interaction, through the page as a learner does it;
5. save; ``nbconvert --to html`` of it, opened without JavaScript, shows every map's picture,
   every table and the widget's last result;
6. a changed copy opens *untrusted* in a new kernel — exactly what a classmate's copy or a
   restarted kernel gives: no live map survives the sanitizer, so each map shows its static
   picture; no widget model exists, so beside each widget a static line says to run the cell
   again and keeps the widget's last result.

Adding a notebook (04, 05, ...) is one line in :data:`NOTEBOOKS`: ``"04_x.ipynb": Case()`` gets
every check but the interaction; an interaction is a function beside the others.
Screenshots go to ``screenshots/browser/`` (see :func:`conftest.screenshots`).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT, screenshots
from .lab import (
    UI_TIMEOUT_MS,
    WIDGET_MIME,
    Notebook,
    export_html,
    html_outputs,
    slowest_cells,
    time_first_text,
    untrusted_copy,
)

pytestmark = pytest.mark.browser

RESTART_HINT = "run this cell again"
LIVE = "a live widget: run this cell to use it"  # the text form of every argnb widget
PROGRESS = re.compile(r"\d+%\|")  # a tqdm bar's text form: it needs no note
# Console errors JupyterLab itself logs in a healthy session (each with its reason). Widgets
# without a kernel model log one error each -- expected only in the reopened copy.
UNTRUSTED_CONSOLE = ("Error: widget model not found", "Could not create a view for model id")


# -- the interactions -------------------------------------------------------------------------
def kept(cell: Any, text: str) -> str:
    """Wait until the widget's static line holds ``text`` (hidden while the widget is live, so
    waited for in the page's model, not on screen); returns the line's text."""
    result = cell.locator(".argnb-static-result", has_text=text)
    result.wait_for(state="attached", timeout=UI_TIMEOUT_MS)
    return result.text_content() or ""


def connect_picker(nb: Notebook, ctx: dict) -> str:
    """00: a failed Connect (nothing listens), then connect to the Ollama test server."""
    cell = nb.cell("picker = BackendPicker()")
    cell.locator("button", has_text="openai").click()
    problems = nb.layout_problems()
    assert problems == [], problems  # the base URL and API key placeholders fit
    cell.locator("button", has_text="ollama").click()
    host = cell.locator("input[placeholder*='OLLAMA_HOST']")
    host.fill("http://127.0.0.1:9")  # the discard port: nothing answers
    cell.locator("button", has_text="Connect").click()
    status = cell.locator(".widget-html", has_text="could not connect")
    status.wait_for(timeout=UI_TIMEOUT_MS)
    assert "unchanged" in status.inner_text()
    host.fill(ctx["ollama"])  # another choice: the old error goes
    cell.locator(".widget-html", has_text="could not connect").wait_for(
        state="detached", timeout=UI_TIMEOUT_MS
    )
    cell.locator("button", has_text="List models").click()
    cell.locator(".widget-html", has_text="1 models").wait_for(timeout=UI_TIMEOUT_MS)
    cell.locator("button", has_text="Connect").click()
    done = cell.locator(".widget-html", has_text="connected: ollama / smollm2-135m")
    done.wait_for(timeout=UI_TIMEOUT_MS)
    kept(cell, "Connected to ollama")
    return "Connected to ollama / smollm2-135m"


def classify_argument(nb: Notebook, ctx: dict) -> str:
    """01: an empty box cannot be classified; a typed argument gets an answer."""
    from playwright.sync_api import expect  # here: the module must load without playwright

    cell = nb.cell("classify_widget(backend)")
    box = cell.locator("textarea")
    button = cell.locator("button", has_text="Classify")
    box.fill("   ")
    expect(button).to_be_disabled(timeout=UI_TIMEOUT_MS)  # after the kernel's round trip
    box.fill("My cousin got sick after the vaccine, so vaccines make people sick.")
    button.click()
    cell.locator(".widget-html", has_text="→").wait_for(timeout=UI_TIMEOUT_MS)
    kept(cell, "Last answer")
    return "My cousin got sick"


def edit_stance(nb: Notebook, ctx: dict) -> str:
    """02: change a stance in the editor and run the dialogue on the embedded model."""
    cell = nb.cell("editor = StanceEditor(")
    first = cell.locator("textarea").first
    first.fill("values: I care most that the cleaning takes little time from lessons.")
    cell.locator("button", has_text="Run dialogue").click()
    status = (
        cell.locator(".widget-html b", has_text="none")
        .or_(cell.locator(".widget-html b", has_text="synthesis"))
        .or_(cell.locator(".widget-html b", has_text="justified"))
    )
    status.first.wait_for(timeout=10 * UI_TIMEOUT_MS)  # a whole dialogue on the CPU
    assert "None" not in cell.locator(".widget-html").first.inner_text()
    kept(cell, "Last run")
    return "Last run"


def rate_critique(nb: Notebook, ctx: dict) -> str:
    """03: move the overall slider (by typing into its readout) and compare with the experts."""
    cell = nb.cell("widget = RatingWidget(")
    slider = cell.locator(".widget-slider", has_text="Overall")
    readout = slider.locator(".widget-readout")
    readout.click()
    readout.press("Control+a")
    readout.type("0.8")
    readout.press("Enter")
    cell.locator("button", has_text="Compare with experts").click()
    cell.locator(".widget-html", has_text="Your custom loss").wait_for(timeout=UI_TIMEOUT_MS)
    assert "0.80" in kept(cell, "Your ratings so far (1")
    return "Your ratings so far (1"


def debate_the_agent(nb: Notebook, ctx: dict) -> str:
    """04: start a debate for the motion, send a turn (with markup that must stay text), and
    read the agent's streamed reply and its steps."""
    cell = nb.cell("DebateWidget(agent")
    cell.locator("button", has_text="Start").click()
    box = cell.locator(".argnb-debate-input textarea")
    from playwright.sync_api import expect

    expect(box).to_be_enabled(timeout=UI_TIMEOUT_MS)
    box.fill(
        "Cars fill our streets with noise and fumes, and children pay for it. "
        '<img src=x onerror="window.__argnbXss=1">'
    )
    ctx["first_text"]["04 debate widget: Send"] = time_first_text(
        nb, cell, "Send", DEBATE_REPLY, "04"
    )
    cell.locator(".argnb-debate-steps details").first.wait_for(timeout=10 * UI_TIMEOUT_MS)
    dialogue = cell.locator(".argnb-debate-dialogue").inner_text()
    assert "<img src=x" in dialogue, "the learner's markup should show as text"
    assert nb.page.evaluate("() => window.__argnbXss") is None, "markup from the learner ran"
    kept(cell, "Last reply")
    return "Last reply"


def roundtable_panel(nb: Notebook, ctx: dict) -> str:
    """05: the replayed reference session's panels -- the analyzer map whole inside its side
    panel, the network whole inside the map's frame, the feedback form's button label whole."""
    cell = nb.cell(REFERENCE_REPLAY)
    cell.locator(".widget-html", has_text="replayed all").wait_for(timeout=UI_TIMEOUT_MS)
    frame_el = cell.locator(".argnb-rt-map iframe")
    frame_el.wait_for(timeout=UI_TIMEOUT_MS)
    frame = frame_el.element_handle().content_frame()
    frame.wait_for_function(
        "() => typeof network !== 'undefined' && network !== null && nodes.length > 0",
        timeout=UI_TIMEOUT_MS,
    )
    inner = frame.evaluate(
        """() => { const r = document.getElementById('mynetwork').getBoundingClientRect();
                   return {bottom: r.bottom, right: r.right, height: r.height,
                           h: window.innerHeight, w: window.innerWidth}; }"""
    )
    assert inner["height"] >= 120, f"the network is squeezed: {inner}"
    assert inner["bottom"] <= inner["h"] + 1 and inner["right"] <= inner["w"] + 1, (
        f"the network runs past its frame: {inner}"
    )
    side = cell.locator(".argnb-rt-side").bounding_box()
    box = frame_el.bounding_box()
    assert side is not None and box is not None
    assert box["y"] + box["height"] <= side["y"] + side["height"] + 1, (box, side)
    assert box["x"] + box["width"] <= side["x"] + side["width"] + 1, (box, side)
    header = cell.locator(".jupyter-widget-Collapse-header", has_text="Feedback form")
    header.click()
    cell.locator("button", has_text="Save my answers").wait_for(timeout=UI_TIMEOUT_MS)
    problems = nb.layout_problems()
    assert problems == [], problems  # the form's button label is whole
    nb.screenshot(screenshots(), "05_roundtable-panel", cell.locator(".argnb-roundtable"))
    # the live widget on the embedded model: Start, and time its first words
    live = nb.cell("RoundtableWidget(")
    ctx["first_text"]["05 roundtable widget: Start"] = time_first_text(
        nb, live, "Start", ROUNDTABLE_REPLY, "05"
    )
    # the replay's final state: what a saved copy keeps (argnb.roundtable.widget.note_text)
    return "ended (turns); last, Sam:"


# what a learner sees of the reply after Send (04) or Start (05), for time_first_text: the
# visible text of the messages the click brings, "" while there is none. 04: the agent's
# streaming draft in the live box (its body reads "(no text)" until the first chunk) or, should
# it land before a repaint, the agent's finished turn in the dialogue; 05: the body of any message
# in the dialogue panel (empty before Start), without the streaming cursor.
DEBATE_REPLY = """cell => {
  const shown = el => el.offsetParent !== null;
  const parts = [];
  for (const body of cell.querySelectorAll('.argnb-debate-live .widget-html-content > div > div'))
    if (shown(body)) parts.push(body.innerText);
  for (const box of cell.querySelectorAll('.argnb-debate-dialogue .widget-html-content > div'))
    if (shown(box) && box.innerText.includes(' · Agent') && box.lastElementChild)
      parts.push(box.lastElementChild.innerText);
  return parts.map(t => t.replace('(no text)', '').trim()).join(' ').trim();
}"""
ROUNDTABLE_REPLY = """cell => Array.from(
    cell.querySelectorAll('.argnb-rt-dialogue .argnb-rt-msg > div:nth-child(2)'))
  .filter(body => body.offsetParent !== null)
  .map(body => body.innerText.replace('\u258d', '').trim()).join(' ').trim()"""

Interaction = Callable[[Notebook, dict], str]
REFERENCE_REPLAY = 'RoundtableWidget.replay(workdir / "reference.json"'


@dataclass(frozen=True)
class Case:
    """What the suite does with one notebook."""

    widget: str | None = None  # a text of the widget cell the interaction uses
    interact: Interaction | None = None  # returns text the widget's static line must keep
    show: tuple[str, ...] = ()  # texts of further cells to photograph, live and reopened


#: one line per notebook
NOTEBOOKS: dict[str, Case] = {
    "00_setup.ipynb": Case("picker = BackendPicker()", connect_picker, ("again = argnb",)),
    "01_fallacy_deliberation.ipynb": Case(
        "classify_widget(backend)",
        classify_argument,
        (
            "session = load_reference()",
            "replay_reference(session",
            "result = deliberate(",
            "Report(report)",
        ),
    ),
    "02_dialectic_synthesis.ipynb": Case(
        "editor = StanceEditor(", edit_stance, ("dialogue_map.show()", "tiny = run_dialogue(")
    ),
    "03_critique_rating.ipynb": Case(
        "widget = RatingWidget(", rate_critique, ("demo.preview(", "board = score_many(")
    ),
    "04_retrieval_debate.ipynb": Case(
        "DebateWidget(agent",
        debate_the_agent,
        (
            'load_reference("turn")',
            "reference_turn = replay_turn(",
            "reference_debate = replay_debate()",
            "reference_debate_map.show(",
            "debate_map(debate).show(",
            "trace.priors_frame()",
        ),
    ),
    # the widget's own interaction (human turns, XSS, kernel notice): tests/roundtable/test_browser.py
    "05_roundtable.ipynb": Case(
        REFERENCE_REPLAY,
        roundtable_panel,
        show=(
            "load_reference()",
            "reference = replay_session(",
            "reference.to_map().show(",
            'RoundtableWidget.replay(workdir / "reference.json"',
        ),
    ),
}


# -- the checks ---------------------------------------------------------------------------------
def failed_cells(cells: list[dict]) -> list[str]:
    bad = []
    for c in cells:
        if c["type"] != "code" or not c["source"].strip():
            continue
        if c["execution_count"] is None:
            bad.append(f"cell {c['index']} did not run: {c['source'][:60]!r}")
        for o in c["outputs"]:
            if o["output_type"] == "error":
                bad.append(f"cell {c['index']}: {o['ename']}: {o['evalue']}")
    return bad


def widget_outputs(cells: list[dict]) -> list[tuple[dict, dict]]:
    return [(c, o) for c in cells for o in c["outputs"] if WIDGET_MIME in o["mimes"]]


OBJECTIVES = "After this lesson you can"


def check_live(nb: Notebook, name: str, shots: Path) -> None:
    cells = nb.report()
    assert failed_cells(cells) == []
    goals = [c for c in cells[:3] if c["type"] == "markdown" and OBJECTIVES in c["source"]]
    assert len(goals) == 1 and goals[0]["rendered"], "the learning objectives, rendered, on top"
    nb.wait_widgets()
    cells = nb.report()
    for c, o in widget_outputs(cells):
        assert o["widget_rendered"], f"cell {c['index']}: widget not rendered: {o['text'][:200]}"
        assert "Error displaying widget" not in o["text"]
    # the static notes (how to get a widget back, its last result) are for copies without it
    assert nb.visible_notes() == [], "a widget's fallback note shows while the kernel is live"
    maps = [o for c in cells for o in c["outputs"] if o["is_map"]]
    frames = nb.map_frames()
    assert len(frames) == len(maps), f"{len(maps)} maps in the model, {len(frames)} in the page"
    for i, frame in enumerate(frames):
        frame.wait_for_function(
            "() => typeof network !== 'undefined' && network !== null"
            " && Object.keys(network.getPositions()).length === nodes.length"
            " && nodes.length > 0",
            timeout=UI_TIMEOUT_MS,
        )
        drawn = frame.evaluate("() => [nodes.length, Object.keys(network.getPositions()).length]")
        assert drawn[0] == drawn[1] > 0, f"map {i} drew {drawn[1]} of {drawn[0]} nodes"
    problems = nb.layout_problems()
    assert problems == [], problems
    photograph(nb, name, shots, "live")


def check_untrusted(nb: Notebook, name: str, shots: Path, kept: str | None) -> None:
    """The reopened copy: untrusted, new kernel, no widget models."""
    nb.page.wait_for_function(
        "() => document.querySelectorAll('.jp-Notebook .jp-OutputArea-output').length > 0"
    )
    cells = nb.report()
    code = [c for c in cells if c["type"] == "code" and c["outputs"]]
    assert code and not any(c["trusted"] for c in code), "the changed copy should be untrusted"
    for c in cells:
        for o in c["outputs"]:
            assert o["iframes"] == 0, f"cell {c['index']}: an iframe survived the sanitizer"
            if o["is_map"]:
                pic = o["picture"]
                assert pic and pic["complete"] and pic["width"] > 0, (
                    f"cell {c['index']}: the map shows no static picture (untrusted)"
                )
    for c in cells:  # every widget says how to get it back, or is a progress bar
        notes = [o for o in c["outputs"] if o["is_note"]]
        for o in c["outputs"]:
            if WIDGET_MIME not in o["mimes"] or PROGRESS.search(o["plain"]):
                continue
            assert LIVE in o["plain"], f"cell {c['index']}: widget text form {o['plain']!r}"
            assert any(RESTART_HINT in n["text"] for n in notes), (
                f"cell {c['index']}: a widget without its static line: {c['source'][:80]!r}"
            )
    case = NOTEBOOKS[name]
    if case.widget is None or kept is None:
        photograph(nb, name, shots, "untrusted")
        return
    marker_cell = nb.cell(case.widget)
    # untrusted: the widget's text form (not its view) shows; either way it says what to do
    assert LIVE in marker_cell.inner_text()
    note = marker_cell.locator(".argnb-static-note")
    note.wait_for(timeout=UI_TIMEOUT_MS)
    assert RESTART_HINT in note.inner_text()
    assert kept in note.inner_text(), "the widget's last result was not kept in the saved notebook"
    nb.screenshot(shots, f"{Path(name).stem}-untrusted-widget", marker_cell)
    photograph(nb, name, shots, "untrusted")


def check_export(browser: Any, notebook: Path, shots: Path, kept: str | None) -> None:
    """``nbconvert --to html`` of the saved notebook, opened with JavaScript off (as a mail
    client, a learning platform's preview or GitHub's viewer would): every map shows its
    picture, every table is there, and the widget's last result with it."""
    outputs = html_outputs(notebook)
    maps = sum("argnb-map-static" in h for h in outputs)
    tables = sum(h.count("<table") for h in outputs)
    exported = export_html(notebook)
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 1000}
    )
    try:
        page = context.new_page()
        page.goto(exported.as_uri(), wait_until="load", timeout=UI_TIMEOUT_MS)
        pictures = page.evaluate(
            """() => Array.from(document.querySelectorAll('.argnb-map-static img'))
                 .map(i => i.complete && i.naturalWidth > 0)"""
        )
        assert pictures == [True] * maps, f"{maps} maps, pictures shown: {pictures}"
        assert page.locator("table").count() >= tables
        text = page.inner_text("body")
        if kept is not None:  # the widget's text form, its run-again line and its last result
            assert LIVE in text and RESTART_HINT in text and kept in text
        if maps:
            first = page.locator(".argnb-map-static").first
            first.screenshot(path=str(shots / f"{notebook.stem}-export-map.png"))
    finally:
        context.close()


#: the backend the notebooks connect to (their first code cell: ``argnb.connect()``, no class hub in the tests)
NOTEBOOK_BACKEND = {"backend": "local", "model": "smollm2-135m"}


def record_first_text(found: dict[str, dict], shots: Path) -> None:
    """Time to the first visible reply text: into ``timings.txt`` beside the screenshots and,
    when ``$ARGNB_BENCH_OUT`` names a JSON file, merged into it for the benchmarks table
    (``benchmarks/bench_widget_first_text.py``)."""
    if not found:
        return
    with (shots / "timings.txt").open("a", encoding="utf-8") as log:
        for what, m in found.items():
            log.write(f"{time.strftime('%Y-%m-%d %H:%M')} {what}: first text {m['seconds']} s\n")
    out = os.environ.get("ARGNB_BENCH_OUT")
    if out:
        path = Path(out)
        rows = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        from argnb.llm.local import default_threads  # the kernel has this environment too

        threads = default_threads()
        rows.update({k: {**NOTEBOOK_BACKEND, "threads": threads, **m} for k, m in found.items()})
        path.write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")


def photograph(nb: Notebook, name: str, shots: Path, phase: str) -> None:
    """The cells worth looking at: those listed for the notebook (maps are among them)."""
    for i, marker in enumerate(NOTEBOOKS[name].show):
        nb.screenshot(shots, f"{Path(name).stem}-{phase}-{i}", nb.cell(marker))


def check_writes_only_to_work(folder: Path) -> None:
    """A lesson writes its files (sessions, feedback, exports) into ``work/`` beside it or a
    temporary folder, never among the course's own files (issue 35: running every lesson left
    ``git status`` with new files in ``notebooks/``). Saved outputs and the checkpoints
    JupyterLab keeps are the notebooks' own; ``-copy`` notebooks and HTML exports are this
    suite's."""
    own = {p.relative_to(ROOT / "notebooks") for p in (ROOT / "notebooks").rglob("*")}
    written = [
        str(rel)
        for p in folder.rglob("*")
        if p.is_file()
        and (rel := p.relative_to(folder)) not in own
        and rel.parts[0] not in ("work", ".ipynb_checkpoints")
        and not p.name.endswith("-copy.ipynb")
        and not (p.suffix == ".html" and (folder / f"{p.stem}.ipynb").exists())  # check_export's
    ]
    assert written == [], f"written beside the lessons, not into work/: {written}"


# under pytest-xdist (make test) each notebook is a unit of its own (tests/conftest.py): a worker
# runs the notebooks it is given against its one JupyterLab (session-scoped)
@pytest.mark.parametrize("name", list(NOTEBOOKS))
def test_notebook_in_the_browser(name: str, lab: dict, chromium: Any, ollama_server: str) -> None:
    if not (ROOT / "notebooks" / name).exists():
        pytest.skip(f"notebooks/{name} does not exist yet")
    shots = screenshots()
    case = NOTEBOOKS[name]
    context = chromium.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    try:
        started = time.monotonic()
        nb = Notebook(page, lab, f"notebooks/{name}").open()
        nb.run_all()
        ran = time.monotonic()
        kernels = [json.loads(f.read_text()) for f in Path(lab["runtime"]).glob("kernel-*.json")]
        assert kernels and {k["transport"] for k in kernels} == {"ipc"}, "no kernel on TCP ports"
        check_live(nb, name, shots)
        assert nb.console_errors == [], nb.console_errors
        kept = None
        if case.interact is not None and case.widget is not None:
            ctx: dict = {"ollama": ollama_server, "first_text": {}}
            kept = case.interact(nb, ctx)
            record_first_text(ctx["first_text"], shots)
            nb.screenshot(shots, f"{Path(name).stem}-interaction", nb.cell(case.widget))
            problems = nb.layout_problems()
            assert problems == [], problems  # the widget's answer did not squeeze it
            assert nb.console_errors == [], nb.console_errors
        used = time.monotonic()
        nb.save()
        nb.shutdown_kernel()
        nb.close()
        check_writes_only_to_work(lab["course"] / "notebooks")
        check_export(chromium, lab["course"] / "notebooks" / name, shots, kept)

        copy = untrusted_copy(lab["course"], f"notebooks/{name}")
        reopened = Notebook(page, lab, copy).open_in_page()
        check_untrusted(reopened, name, shots, kept)
        unexpected = [
            e for e in reopened.console_errors if not any(s in e for s in UNTRUSTED_CONSOLE)
        ]
        assert unexpected == [], unexpected
        reopened.shutdown_kernel()
        slow = slowest_cells(lab["course"], f"notebooks/{name}")
        with (shots / "timings.txt").open("a", encoding="utf-8") as log:
            log.write(
                f"{time.strftime('%Y-%m-%d %H:%M')} {name}: open+run all {ran - started:.0f} s, "
                f"checks+interaction {used - ran:.0f} s, save+export+reopen "
                f"{time.monotonic() - used:.0f} s; slowest cells: "
                + "; ".join(f"{t:.0f} s {src!r}" for t, src in slow)
                + "\n"
            )
    except Exception:
        if not page.is_closed():  # what the page showed when it failed
            page.screenshot(path=str(shots / f"FAILED-{Path(name).stem}.png"))
        raise
    finally:
        context.close()
