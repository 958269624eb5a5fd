"""A notebook open in JupyterLab, as the tests see it: run, inspect, interact, save, reopen.

Everything waits on events (a command's promise, the notebook model, an element appearing);
nothing sleeps a fixed time. The checks read JupyterLab's own model of the notebook (outputs,
trust) and the rendered page (widgets, maps, sizes).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: how long one notebook may take to run (the embedded model on a shared CPU is slow)
RUN_TIMEOUT_MS = int(float(os.environ.get("ARGNB_BROWSER_RUN_TIMEOUT", "900")) * 1000)
UI_TIMEOUT_MS = 120_000

# the notebook panel for a path, found among JupyterLab's main-area widgets
_PANEL = """
const app = window.jupyterapp;
const panel = Array.from(app.shell.widgets('main')).find(
  w => w.context && w.context.path === path);
"""

_REPORT = (
    "path => {"
    + _PANEL
    + """
if (!panel) return null;
return panel.content.widgets.map((cell, i) => {
  const m = cell.model;
  const code = m.type === 'code';
  const outs = code ? m.outputs.toJSON() : [];
  const nodes = code ? Array.from(cell.outputArea.widgets) : [];
  return {
    index: i, type: m.type, trusted: m.trusted,
    source: m.sharedModel.getSource().slice(0, 300),
    rendered: m.type === 'markdown' ? Boolean(cell.rendered) : null,
    execution_count: code ? m.executionCount : null,
    outputs: outs.map((o, j) => {
      const node = nodes[j] ? nodes[j].node : null;
      const img = node ? node.querySelector('img[src^="data:image/png"]') : null;
      const html = (o.data || {})['text/html'];
      const plain = (o.data || {})['text/plain'];
      return {
        output_type: o.output_type,
        mimes: Object.keys(o.data || {}),
        ename: o.ename || null, evalue: o.evalue || null,
        html: typeof html === 'string' ? html.slice(0, 400)
              : Array.isArray(html) ? html.join('').slice(0, 400) : '',
        plain: typeof plain === 'string' ? plain.slice(0, 300)
               : Array.isArray(plain) ? plain.join('').slice(0, 300) : '',
        is_map: JSON.stringify(o.data || {}).includes('argnb-map'),
        is_note: JSON.stringify(o.data || {}).includes('argnb-static-note'),
        text: node ? node.innerText.slice(0, 600) : '',
        iframes: node ? node.querySelectorAll('iframe').length : 0,
        picture: img ? {complete: img.complete, width: img.naturalWidth} : null,
        widget_rendered: node ? !!node.querySelector('.jupyter-widgets, .widget-box, '
                                + '.widget-inline-hbox, .jupyter-button') : false,
      };
    }),
  };
});
}"""
)

# sizes a learner would notice: content wider than its output, cut-off labels and placeholders
_LAYOUT = (
    "path => {"
    + _PANEL
    + """
const problems = [];
const canvas = document.createElement('canvas').getContext('2d');
const visible = el => el.offsetParent !== null && el.clientWidth > 0;
const cellOf = el => {
  const cells = Array.from(panel.content.node.querySelectorAll('.jp-Cell'));
  return cells.indexOf(el.closest('.jp-Cell'));
};
const clipped = (el, out) => {  // inside a box that clips or scrolls: reported there, if at all
  for (let p = el.parentElement; p && p !== out; p = p.parentElement)
    if (getComputedStyle(p).overflowX !== 'visible') return true;
  return false;
};
const named = el => el.tagName.toLowerCase() + (el.className && typeof el.className === 'string'
  ? '.' + el.className.trim().split(/ +/).slice(0, 2).join('.') : '');
for (const out of panel.content.node.querySelectorAll('.jp-OutputArea-output')) {
  // any output (a table, a trace, a widget): nothing wider than the output's area
  const where = `cell ${cellOf(out)}`;
  if (out.scrollWidth > out.clientWidth + 1)
    problems.push(`${where}: horizontal overflow: content ${out.scrollWidth}px in ${out.clientWidth}px`);
  const edge = out.getBoundingClientRect().right;
  for (const el of out.querySelectorAll('*')) {
    if (!visible(el)) continue;
    const ox = getComputedStyle(el).overflowX;
    if ((ox === 'auto' || ox === 'scroll') && el.scrollWidth > el.clientWidth + 1)
      problems.push(`${where}: horizontal scrollbar in ${named(el)}: ${el.scrollWidth}px in ${el.clientWidth}px`);
    else if (el.getBoundingClientRect().right > edge + 1 && !clipped(el, out))
      problems.push(`${where}: ${named(el)} reaches past the output's right edge`);
  }
  if (!out.querySelector('.jupyter-widgets')) continue;
  for (const b of out.querySelectorAll('button')) {
    if (visible(b) && b.scrollWidth > b.clientWidth + 1)
      problems.push(`button label cut off: "${b.innerText.trim()}"`);
  }
  for (const el of out.querySelectorAll('input[placeholder]')) {
    if (!visible(el) || !el.placeholder) continue;
    const st = getComputedStyle(el);
    canvas.font = st.font;
    const room = el.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
    if (canvas.measureText(el.placeholder).width > room + 1)
      problems.push(`placeholder cut off: "${el.placeholder}"`);
  }
}
return problems;
}"""
)


@dataclass
class Notebook:
    """One notebook in a Playwright page of a running JupyterLab."""

    page: Any
    lab: dict
    path: str  # relative to the server's root, e.g. "notebooks/00_setup.ipynb"
    console_errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.console_errors.append(f"pageerror: {exc}"))

    def _console(self, msg: Any) -> None:
        if msg.type == "error":
            self.console_errors.append(msg.text)

    # -- opening and running ------------------------------------------------------------
    def open(self, *, kernel_idle: bool = True) -> Notebook:
        token = "argnb-browser-suite"
        self.page.goto(f"{self.lab['url']}/lab/tree/{self.path}?reset&token={token}")
        return self._opened(kernel_idle)

    def open_in_page(self) -> Notebook:
        """Open through the JupyterLab already in the page (File > Open does the same): its own
        panel, context, kernel and widget manager, without booting JupyterLab a second time."""
        self.page.evaluate(
            "path => { window.jupyterapp.commands.execute('docmanager:open', {path}); }",
            self.path,
        )
        return self._opened(True)

    def close(self) -> None:
        """Close the panel without asking to save (a live widget may have changed it again)."""
        self.page.evaluate("path => {" + _PANEL + "panel.dispose(); }", self.path)

    def _opened(self, kernel_idle: bool) -> Notebook:
        self.page.wait_for_function(  # the page may not have made the app yet
            "path => { if (!window.jupyterapp || !window.jupyterapp.shell) return false;"
            + _PANEL
            + "return !!panel && panel.context.isReady; }",
            arg=self.path,
            timeout=UI_TIMEOUT_MS,
        )
        if kernel_idle:
            self.page.wait_for_function(
                "path => {"
                + _PANEL
                + "return panel.sessionContext.kernelDisplayStatus === 'idle'; }",
                arg=self.path,
                timeout=UI_TIMEOUT_MS,
            )
        return self

    def command(self, name: str) -> None:
        """Run a JupyterLab command on this notebook (made the current one first)."""
        self.page.evaluate(
            "([path, name]) => {"
            + _PANEL
            + "app.shell.activateById(panel.id); return app.commands.execute(name); }",
            [self.path, name],
        )

    def run_all(self) -> None:
        """Run every cell and wait until the last one has finished (or one failed)."""
        self.page.evaluate(
            "path => {"
            + _PANEL
            + """app.shell.activateById(panel.id);
window.__argnbRun = null;
app.commands.execute('notebook:run-all-cells').then(
  ok => { window.__argnbRun = {ok: ok}; },
  err => { window.__argnbRun = {ok: false, error: String(err)}; });
}""",
            self.path,
        )
        self.page.wait_for_function("() => window.__argnbRun", timeout=RUN_TIMEOUT_MS)
        self.page.wait_for_function(
            "path => {" + _PANEL + "return panel.sessionContext.kernelDisplayStatus === 'idle'; }",
            arg=self.path,
            timeout=UI_TIMEOUT_MS,
        )

    def save(self) -> None:
        """Save and wait for the write itself: a live widget (the roundtable's heartbeat) may mark
        the notebook changed again right after, so "not dirty" is no signal that it was saved."""
        self.page.evaluate(
            "async path => {"
            + _PANEL
            + "app.shell.activateById(panel.id); await panel.context.save(); return true; }",
            self.path,
        )

    def shutdown_kernel(self) -> None:
        self.page.evaluate(
            "path => {" + _PANEL + "return panel.sessionContext.shutdown(); }", self.path
        )

    # -- reading --------------------------------------------------------------------------
    def report(self) -> list[dict]:
        """Every cell with its outputs: what JupyterLab's model holds and what the page shows."""
        cells = self.page.evaluate(_REPORT, self.path)
        assert cells is not None, f"{self.path} is not open"
        return cells

    def layout_problems(self) -> list[str]:
        return self.page.evaluate(_LAYOUT, self.path)

    def visible_notes(self) -> list[str]:
        """The text of every widget's static note the page shows (none while the widgets live)."""
        return self.page.evaluate(
            "path => {"
            + _PANEL
            + """return Array.from(panel.content.node.querySelectorAll('.argnb-static-note'))
                .filter(n => n.offsetParent !== null && n.getBoundingClientRect().height > 0)
                .map(n => n.innerText.slice(0, 120));}""",
            self.path,
        )

    def cell(self, marker: str) -> Any:
        """The code cell whose source contains ``marker`` (exactly one)."""
        cells = self.page.locator(".jp-Notebook .jp-CodeCell").filter(
            has=self.page.locator(".cm-content", has_text=marker)
        )
        assert cells.count() == 1, f"{cells.count()} cells contain {marker!r}"
        return cells.first

    def wait_widgets(self) -> None:
        """Until no widget output is still 'Loading widget...'."""
        self.page.wait_for_function(
            "path => {"
            + _PANEL
            + """return Array.from(panel.content.node.querySelectorAll('.jp-OutputArea-output'))
                .every(n => !n.innerText.includes('Loading widget'));}""",
            arg=self.path,
            timeout=UI_TIMEOUT_MS,
        )

    def map_frames(self) -> list[Any]:
        """The Playwright frames of the live maps (sandboxed iframes) in this notebook's outputs;
        a map inside a widget's panel (the roundtable's analyzer) is the widget's, not an output."""
        frames = []
        for handle in self.page.locator(".jp-Notebook .argnb-map iframe").element_handles():
            if handle.evaluate("n => n.closest('.jupyter-widgets') !== null"):
                continue
            frame = handle.content_frame()
            if frame is not None:
                frames.append(frame)
        return frames

    def screenshot(self, folder: Path, name: str, element: Any = None) -> Path:
        path = folder / f"{name}.png"
        if element is None:
            self.page.screenshot(path=str(path))
            return path
        # JupyterLab scrolls inside a panel, not the page: a cell taller than the viewport would
        # come out with the toolbars drawn over it, so the viewport grows to fit it for the shot
        size = self.page.viewport_size
        box = element.bounding_box()
        tall = box is not None and size is not None and box["height"] + 300 > size["height"]
        if tall:
            height = min(int(box["height"]) + 300, 6000)
            self.page.set_viewport_size({"width": size["width"], "height": height})
        try:
            element.scroll_into_view_if_needed()
            element.screenshot(path=str(path))
        finally:
            if tall:
                self.page.set_viewport_size(size)
        return path


def untrusted_copy(course: Path, path: str) -> str:
    """A changed copy of a saved notebook (as a classmate would send it): JupyterLab does not
    trust it, since its signature no longer matches. Returns its path on the server."""
    src = course / path
    nb = json.loads(src.read_text(encoding="utf-8"))
    nb.setdefault("metadata", {})["argnb_copy"] = "received from a classmate"
    dest = src.with_name(src.stem + "-copy.ipynb")
    dest.write_text(json.dumps(nb, indent=1, ensure_ascii=False), encoding="utf-8")
    return str(Path(path).with_name(dest.name))


def slowest_cells(course: Path, path: str, n: int = 3) -> list[tuple[float, str]]:
    """The ``n`` slowest cells of a saved notebook, from the start and end times JupyterLab
    records (``recordTiming``): seconds and the cell's first line."""
    nb = json.loads((course / path).read_text(encoding="utf-8"))
    times = []
    for cell in nb["cells"]:
        run = cell.get("metadata", {}).get("execution", {})
        start, end = run.get("iopub.execute_input"), run.get("shell.execute_reply")
        if start and end:
            took = _when(end) - _when(start)
            source = "".join(cell["source"]).strip().splitlines() or [""]
            times.append((took.total_seconds(), source[0][:60]))
    return sorted(times, reverse=True)[:n]


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))  # Python 3.10 wants no "Z"


def export_html(notebook: Path) -> Path:
    """``jupyter nbconvert --to html`` of a saved notebook (the same exporter, in process),
    written beside it; returns the HTML file."""
    import nbformat
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(nbformat.read(notebook, as_version=4))
    dest = notebook.with_suffix(".html")
    dest.write_text(body, encoding="utf-8")
    return dest


def html_outputs(notebook: Path) -> list[str]:
    """The ``text/html`` of every output of a saved notebook."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    found = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            html = out.get("data", {}).get("text/html")
            if html:
                found.append("".join(html) if isinstance(html, list) else html)
    return found


# -- time to the first visible text of a widget's reply -------------------------------------------
# Armed on one cell before the click: a capturing click listener notes when the button is clicked
# and a MutationObserver on the cell notes the first DOM change after which ``probe(cell)`` (the
# reply's visible text so far) is not empty. Both times are the page's ``performance.now()``, so
# neither Playwright's polling nor its round trips are in the number; a mutation observer runs
# before the next paint, so the text is on screen within one frame (~16 ms) of the time taken.
_ARM_FIRST_TEXT = """(cell, [button, key]) => {
  const probe = PROBE;
  const state = {clicked: null, shown: null, text: null};
  window.__argnbFirstText = window.__argnbFirstText || {};
  window.__argnbFirstText[key] = state;
  cell.addEventListener('click', ev => {
    const b = ev.target.closest && ev.target.closest('button');
    if (state.clicked === null && b && b.innerText.includes(button))
      state.clicked = performance.now();
  }, true);
  const obs = new MutationObserver(() => {
    if (state.clicked === null || state.shown !== null) return;
    const text = probe(cell);
    if (text) {
      state.shown = performance.now();
      state.text = text.slice(0, 200);
      obs.disconnect();
    }
  });
  obs.observe(cell, {subtree: true, childList: true, characterData: true});
  return probe(cell);
}"""


def time_first_text(nb: Notebook, cell: Any, button: str, probe: str, key: str) -> dict:
    """Click ``button`` in ``cell`` and wait for the first visible text of the reply, as
    ``probe`` (a JavaScript function of the cell's node returning the reply's visible text so
    far, "" while there is none) sees it. Returns the seconds from the click to that text and
    the text. Measures only: no threshold here (targets live in ``benchmarks/``)."""
    before = cell.evaluate(_ARM_FIRST_TEXT.replace("PROBE", probe), [button, key])
    assert not before, f"{key}: the reply's text shows before the click: {before!r}"
    cell.locator("button", has_text=button).click()
    nb.page.wait_for_function(
        "key => window.__argnbFirstText[key].shown !== null", arg=key, timeout=RUN_TIMEOUT_MS
    )
    got = nb.page.evaluate("key => window.__argnbFirstText[key]", key)
    assert got["clicked"] is not None, f"{key}: the click on {button!r} was not seen"
    return {"seconds": round((got["shown"] - got["clicked"]) / 1000, 3), "text": got["text"]}
