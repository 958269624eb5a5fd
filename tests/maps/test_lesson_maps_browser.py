"""Every map of lessons 02, 04 and 05 fits its frame and no edge label lies under a node, as
Chromium lays them out (issue 29, item 4): the maps are built from the authored reference
sessions (no model) and shown as their notebook cells show them; vis-network's own layout is
read back from the frame (node boxes, edge-label boxes, the frame's size). The roundtable's
"Open the full map" view is checked too, with a minimum text size, and a map with long labels
and a mutual attack. Screenshots go to
``$ARGNB_SCREENSHOTS`` (default ``screenshots/browser``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.conftest import CHROMIUM, FLAGS, screenshots

from .lessons import lesson_maps

pytestmark = pytest.mark.browser

#: where a notebook's output area puts a map: about this wide in JupyterLab on a laptop
WIDTH = 900
#: the smallest text (pixels) the full map may draw its node labels at
MIN_TEXT_PX = 9

# node boxes, edge-label boxes (as vis-network laid them out, in the frame's pixels), the
# network's box and the frame's viewport
GEOMETRY = """() => {
  const net = window.network;
  const c = document.getElementById('mynetwork').getBoundingClientRect();
  const d = (p) => { const q = net.canvasToDOM(p); return [q.x + c.left, q.y + c.top]; };
  const nodes = {};
  for (const id of net.body.nodeIndices) {
    const b = net.getBoundingBox(id);
    nodes[id] = [...d({x: b.left, y: b.top}), ...d({x: b.right, y: b.bottom})];
  }
  const labels = [];
  for (const id of net.body.edgeIndices) {
    const e = net.body.edges[id];
    if (!e.options.label) continue;
    const s = e.labelModule.size;
    labels.push({text: e.options.label, box: [...d({x: s.left, y: s.top}),
                 ...d({x: s.left + s.width, y: s.top + s.height})]});
  }
  const doc = document.documentElement;
  return {nodes, labels, network: [c.left, c.top, c.right, c.bottom],
          view: [innerWidth, innerHeight], scroll: [doc.scrollWidth, doc.scrollHeight],
          font: 16 * net.getScale()};
}"""


def _playwright():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install playwright)")
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return sync_playwright


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _inside(a, b, slack: float = 1.0) -> bool:
    return (
        a[0] >= b[0] - slack
        and a[1] >= b[1] - slack
        and a[2] <= b[2] + slack
        and a[3] <= b[3] + slack
    )


def pages() -> dict[str, str]:
    """name → the HTML a notebook cell shows (the map's bundle), plus 05's full analyzer map."""
    from argnb.maps.view import iframe
    from argnb.roundtable import record
    from argnb.roundtable.analyzer import analysis_map
    from argnb.roundtable.reference import replay_session
    from argnb.roundtable.widget import FULL_MAP_HEIGHT

    from .test_geometry import long_labels

    out = {}
    for name, (m, kw) in lesson_maps().items():
        out[name] = m.show(**kw).data["text/html"]
    # long labels, an attack over a column and a mutual attack (vis-network's own levels put
    # its two ends a dozen columns apart)
    out["cycle"] = long_labels().show(frame_height=500).data["text/html"]
    tr = replay_session().transcript
    a = record.latest_analysis(tr)
    page = analysis_map(a, tr.title, record.spoken(tr, a.upto)).to_html(color_by="agent", fill=True)
    out["05-analyzer-full"] = iframe(page, FULL_MAP_HEIGHT)
    return out


def test_every_lesson_map_fits_its_frame_and_no_label_lies_under_a_node() -> None:
    sync_playwright = _playwright()
    shots = screenshots()
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": WIDTH + 40, "height": 900})
            for name, html in pages().items():
                page.set_content(f"<body style='margin:8px;width:{WIDTH}px'>{html}</body>")
                (frame,) = [f for f in page.frames if f != page.main_frame]
                frame.wait_for_function(
                    "() => window.network && window.network.body", timeout=15000
                )
                page.wait_for_timeout(1000)  # the page fits the map again 800 ms after load
                g = frame.evaluate(GEOMETRY)
                page.screenshot(path=str(shots / f"map-{name}.png"), full_page=True)
                view = [0, 0, *g["view"]]
                if g["scroll"][0] > g["view"][0] + 1 or g["scroll"][1] > g["view"][1] + 1:
                    problems.append(f"{name}: the page scrolls ({g['scroll']} in {g['view']})")
                if not _inside(g["network"], view):
                    problems.append(f"{name}: the network {g['network']} runs past {view}")
                for node, box in g["nodes"].items():
                    if not _inside(box, g["network"]):
                        problems.append(f"{name}: node {node} is cut by the frame")
                for label in g["labels"]:
                    if not _inside(label["box"], g["network"]):
                        problems.append(f"{name}: label {label['text']!r} is cut by the frame")
                    hit = [n for n, box in g["nodes"].items() if _overlap(label["box"], box)]
                    if hit:
                        problems.append(f"{name}: label {label['text']!r} lies under {hit}")
                if name in ("05-analyzer-full", "cycle") and g["font"] < MIN_TEXT_PX:
                    problems.append(f"{name}: text drawn at {g['font']:.1f} px")
                assert g["nodes"], name
        finally:
            browser.close()
    assert not problems, "\n".join(problems)
