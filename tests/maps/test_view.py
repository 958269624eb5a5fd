"""The pyvis view: untrusted text comes out inert, the page works offline."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from argnb.maps import ArgumentMap
from argnb.maps.view import iframe

from .conftest import XSS

ALLOWED_TAGS = {"div", "b", "br"}


def evil_map() -> ArgumentMap:
    """Untrusted text everywhere: title, statements, agents, argument labels, moves.

    One text contains "href", which makes pyvis switch its tooltips to innerHTML.
    """
    m = ArgumentMap(f"Issue {XSS}</script><script>alert(2)</script>")
    m.add_move("m1", f"AG{XSS}", XSS)
    m.add_premise("p1", f"{XSS} <a href='javascript:alert(3)'>x</a>", agent=f"AG{XSS}", move="m1")
    m.add_claim("c1", f"</script>{XSS}", agent=f"AG{XSS}", status="IN")
    m.add_argument("A1", premises=["p1"], conclusion="c1", label=XSS, text=XSS, status="IN")
    m.add_claim("c2", 'Tom & Jerry\'s "quoted" claim', agent="B")
    m.add_rebut("c2", "c1")
    return m


def vis_nodes(page: str) -> list[dict]:
    m = re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", page, re.S)
    assert m, "no node data in the page"
    return json.loads(m.group(1))


class TagCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))


def test_xss_label_comes_out_inert_in_the_html():
    page = evil_map().to_html()
    # the payloads never appear as markup anywhere in the file
    for raw in ("<img", "<a href", "<script>alert", "</script><img", "<img src=x"):
        assert raw not in page, raw
    # no script block was opened or closed by the text: same counts as a harmless map's page
    plain = ArgumentMap("plain")
    plain.add_claim("c", "harmless")
    benign = plain.to_html()
    for tag in ("<script", "</script>", "<img", "<iframe"):
        assert page.count(tag) == benign.count(tag), tag
    # hover titles (shown with innerHTML) are our own markup around escaped text
    nodes = vis_nodes(page)
    for n in nodes:
        parser = TagCollector()
        parser.feed(n["title"])
        for tag, attrs in parser.tags:
            assert tag in ALLOWED_TAGS, (tag, n["title"])
            assert all(not k.startswith("on") and k != "href" for k, _ in attrs)
    titles = " ".join(n["title"] for n in nodes)
    assert "&lt;img src=x onerror=alert(1)&gt;" in titles
    assert "Tom &amp; Jerry&#x27;s &quot;quoted&quot; claim" in titles
    # labels are plain text for the canvas; in the file they are JSON-escaped (\u003c...)
    assert any(n["label"].startswith(XSS[:10]) for n in nodes)
    assert "\\u003cimg src=x" in page
    # the title and agent names in the legend are escaped
    assert "Issue &lt;img src=x onerror=alert(1)&gt;&lt;/script&gt;" in page
    assert "AG&lt;img" in page


def test_page_is_offline_and_uses_the_inner_html_popup_for_escaped_titles(small_map):
    page = small_map.to_html()
    assert re.search(r"<script[^>]+src=", page) is None  # nothing loaded from elsewhere
    assert re.search(r"<link[^>]+href=\"http", page) is None
    assert "popup.innerHTML = nodeData[0].title" in page
    assert "vis.Network" in page and len(page) > 400_000  # vis-network is inlined
    remote = small_map.to_html(resources="remote")
    assert "cdnjs.cloudflare.com" in remote and len(remote) < 100_000


def test_colour_modes_and_edge_styles(small_map):
    by_status = {n["id"]: n for n in vis_nodes(small_map.to_html(color_by="status"))}
    by_agent = {n["id"]: n for n in vis_nodes(small_map.to_html(color_by="agent"))}
    assert (
        by_status["c1"]["color"]["background"] != by_status["c2"]["color"]["background"]
    )  # OUT vs IN
    assert (
        by_agent["c2"]["color"]["background"] == by_agent["c3"]["color"]["background"]
    )  # same agent
    assert by_status["a1"]["shapeProperties"] == {"borderDashes": [6, 4]}
    net = small_map.to_pyvis()
    kinds = {e.get("label"): e for e in net.edges if e.get("label")}
    assert set(kinds) == {"rebut", "undercut", "support"}
    assert kinds["undercut"]["dashes"] and kinds["rebut"]["color"] != kinds["undercut"]["color"]
    with pytest.raises(ValueError):
        small_map.to_html(color_by="mood")
    # labels ride above their edge, where the arrowhead of a short edge cannot cover them
    assert all(e["font"]["align"] == "top" for e in kinds.values())


def test_a_filling_page_gives_the_network_the_height_below_the_legend(small_map):
    """In a small frame (the roundtable's panel) the legend wraps; a fixed network height then
    ran below the frame's edge. ``fill=True`` lays the page out as a column instead."""
    fixed = small_map.to_html(height="240px")
    filled = small_map.to_html(fill=True)
    assert "flex-direction:column" not in fixed and "height: 240px" in fixed
    head = filled[: filled.index("</head>")]
    assert "body{display:flex;flex-direction:column}" in head
    assert "#mynetwork{flex:1 1 auto;height:auto!important" in head


def test_notebook_iframe_is_sandboxed_and_escaped():
    frame = iframe(evil_map().to_html())
    assert frame.startswith('<div class="argnb-map"><iframe srcdoc="')
    assert 'sandbox="allow-scripts"' in frame
    inner = frame[frame.index('srcdoc="') + 8 : frame.index('" sandbox=')]
    assert '"' not in inner and "<" not in inner  # the whole page is one escaped attribute
    assert "<iframe" in evil_map()._repr_html_()


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_headless_chromium_renders_the_page_without_running_the_payload(tmp_path):
    m = evil_map()
    m.add_claim("c9", "<img src=x onerror=\"document.title='pwned'\">", agent="B")
    page = tmp_path / "map.html"
    m.save_html(page)
    out = subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=3000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    dom = out.stdout
    assert "<canvas" in dom, out.stderr[-2000:]  # vis-network drew the graph
    assert "pwned" not in dom.split("<title>")[-1][:40] if "<title>" in dom else True
    assert "<img" not in dom
