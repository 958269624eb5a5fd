"""The notebook display: a live map when trusted, a picture and an outline everywhere else."""

from __future__ import annotations

import base64
import io
from html.parser import HTMLParser

import nbformat
import pytest
from IPython.core.formatters import DisplayFormatter

from argnb.maps import ArgumentMap
from argnb.maps.clean import FORBIDDEN
from argnb.maps.display import CAPTION, PICTURE_FIRST, MapDisplay

from .conftest import XSS, build_small_map

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class Elements(HTMLParser):
    """Top-level structure of the bundle's HTML (the iframe's page is one attribute value)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> Elements:
    p = Elements()
    p.feed(html)
    return p


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(PNG_SIGNATURE)
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.fixture(scope="module")
def bundle() -> dict:
    """The small map's display bundle, drawn once for the tests of this module."""
    data, _ = DisplayFormatter().format(build_small_map())
    return data


def test_bundle_holds_the_live_map_a_picture_and_an_outline(bundle):
    data = bundle
    assert set(data) == {"text/html", "image/png", "text/plain"}
    png = base64.b64decode(data["image/png"])
    w, h = png_size(png)
    assert 600 <= w <= 4000 and 200 <= h <= 4000
    tags = parse(data["text/html"]).tags
    assert [t for t, _ in tags].count("iframe") == 1 and [t for t, _ in tags].count("img") == 1
    frame = next(a for t, a in tags if t == "iframe")
    assert frame["sandbox"] == "allow-scripts" and "argnb-map-static" in frame["onload"]
    assert "vis.Network" in frame["srcdoc"]  # the interactive page, inlined
    img = next(a for t, a in tags if t == "img")
    assert img["src"] == "data:image/png;base64," + data["image/png"]  # the same picture
    # the picture sits outside the iframe, in a container the iframe's onload removes
    static = next(a for t, a in tags if a.get("class") == "argnb-map-static")
    assert tags.index(("img", img)) > tags.index(("div", static))
    # ... and lies over the iframe until the map has loaded (no blank frame while it parses);
    # the rule needs the iframe, so where the iframe is stripped the picture stays in the flow
    assert data["text/html"].startswith(PICTURE_FIRST)
    assert ".argnb-map>iframe+.argnb-map-static{position:absolute" in PICTURE_FIRST
    assert tags.index(("div", static)) > tags.index(("iframe", frame))
    plain = data["text/plain"]
    assert "Argument map: Should students clean the school?" in plain
    assert "A1 [Students, OUT]" in plain and "assumption: a1" in plain
    assert 'c3 "Staff should clean." rebuts c1' in plain and "undercuts A1 (on a1)" in plain


def test_show_gives_the_same_bundle_in_either_colouring(small_map, bundle):
    data, _ = DisplayFormatter().format(small_map.show(color_by="agent"))
    assert set(data) == set(bundle)
    assert data["text/plain"] == bundle["text/plain"] and data["image/png"] != bundle["image/png"]
    assert repr(MapDisplay(bundle)) == bundle["text/plain"]  # what a plain console prints


def test_picture_and_outline_carry_no_markup_or_control_characters():
    m = ArgumentMap(f"Title {XSS} \x00 $x^2$")
    m.add_claim("c1", f"{XSS} \x1b[31m red \ud800", agent=f"<b>{XSS}</b>", status="IN")
    m.add_claim("c2", "$5 and $10 \\(x\\)", agent="B")
    m.add_rebut("c2", "c1")
    data = m._repr_mimebundle_()
    assert not FORBIDDEN.search(data["text/plain"])
    assert "\ufffd" in data["text/plain"]  # the replacement character shows where it was
    outside = data["text/html"].split("<iframe", 1)[0] + data["text/html"].split("</iframe>", 1)[1]
    assert "<img src=x" not in outside and "<b>" not in outside
    img = next(a for t, a in parse(data["text/html"]).tags if t == "img")
    assert img["alt"].startswith(f"Argument map: Title {XSS}")  # escaped in the file, intact here
    assert CAPTION in "".join(parse(data["text/html"]).text)
    png_size(base64.b64decode(data["image/png"]))  # mathtext is off: "$...$" does not break it


def test_empty_map_draws_a_sentence_not_a_blank():
    data = ArgumentMap("Nothing yet")._repr_mimebundle_()
    png_size(base64.b64decode(data["image/png"]))
    assert "empty" in data["text/plain"]


def test_nbconvert_html_of_a_saved_notebook_shows_the_picture(bundle, tmp_path):
    """An executed notebook exported with ``jupyter nbconvert --to html`` keeps the map's picture
    (outside the iframe, so it shows wherever scripts and iframes are stripped)."""
    from nbconvert import HTMLExporter

    data, metadata = bundle, {}
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("m.show()", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("display_data", data=data, metadata=metadata)]
    nb.cells = [cell]
    path = tmp_path / "map.ipynb"
    nbformat.write(nb, path)  # saved and read back, as a shared file would be
    body, _ = HTMLExporter().from_notebook_node(nbformat.read(path, as_version=4))
    pictures = [a["src"] for t, a in parse(body).tags if t == "img"]
    assert pictures == ["data:image/png;base64," + data["image/png"]]
    assert body.count('class="argnb-map-static"') == 1


@pytest.mark.parametrize("color_by", ["status", "agent"])
def test_picture_of_the_camera_dialogue(camera_map, color_by):
    png = camera_map.to_png(color_by=color_by)
    w, h = png_size(png)
    assert w >= 600 and h >= 600  # 25 nodes in three columns: tall, not squeezed
    from matplotlib.image import imread

    pixels = imread(io.BytesIO(png))
    # status fill: IN green and OUT salmon both appear (as in the live view)
    colors = {
        tuple((pixels[y, x, :3] * 255).round().astype(int))
        for y in range(0, h, 3)
        for x in range(0, w, 3)
    }
    if color_by == "status":
        assert (166, 219, 160) in colors and (244, 165, 130) in colors
    else:
        assert (67, 147, 195) in colors and (224, 130, 20) in colors  # AG1 blue, AG2 orange
