"""Maps whole and labelled (issue 29, item 4), from the picture's own geometry and the live
view's layout options: no edge label under a node, every text inside the figure (the title
too: 05's was cut at both sides), and the ids the notebook prints on the nodes (04's C1/P1).
tests/maps/test_lesson_maps_browser.py checks the same on the live maps in Chromium."""

from __future__ import annotations

import pytest

from argnb.maps import ArgumentMap
from argnb.maps.picture import figure
from argnb.maps.view import LABEL_CHAR_PX, NODE_PX, level_separation, to_pyvis

from .lessons import lesson_maps


@pytest.fixture(scope="module")
def lessons():
    return lesson_maps()


def long_labels() -> ArgumentMap:
    """Long flaw labels, an attack that skips a column, and one inside a column."""
    m = ArgumentMap("A title long enough to be cut at both sides of a narrow picture " * 3)
    for i in range(4):
        m.add_claim(f"C{i}", f"Claim number {i} with some words to wrap in its box", label=f"C{i}")
    m.add_rebut("C1", "C0", label="causal leap, overgeneralization, false dichotomy")
    m.add_rebut("C2", "C1", label="unsupported assumption")
    m.add_rebut("C3", "C1", label="a label made of a singlewordthatneverends")
    m.add_claim("X", "Mutual attack", label="X")
    m.add_rebut("X", "C3", label="mutual")
    m.add_rebut("C3", "X", label="mutual too")
    return m


def boxes(m: ArgumentMap, **kw):
    """(figure box, title box, node boxes, edge-label boxes) in pixels, as drawn."""
    fig = figure(m, **kw)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    ax = fig.axes[0]
    nodes = {
        p.get_gid(): p.get_window_extent(renderer)
        for p in ax.patches
        if (p.get_gid() or "").startswith("node:")
    }
    labels = [
        (t.get_text(), t.get_window_extent(renderer))
        for t in ax.texts
        if t.get_gid() == "edge-label"
    ]
    (title,) = [t for t in fig.texts if t.get_gid() == "title"]
    return fig.bbox, title.get_window_extent(renderer), nodes, labels, fig, renderer


def inside(inner, outer) -> bool:
    return (
        inner.x0 >= outer.x0 - 0.5
        and inner.y0 >= outer.y0 - 0.5
        and inner.x1 <= outer.x1 + 0.5
        and inner.y1 <= outer.y1 + 0.5
    )


def check_picture(m: ArgumentMap, **kw) -> None:
    frame, title, nodes, labels, fig, renderer = boxes(m, **kw)
    assert inside(title, frame), (title, frame)
    for text, box in labels:
        assert inside(box, frame), text
        for node, nb in nodes.items():
            assert not box.overlaps(nb), f"label {text!r} lies under {node}"
    for node, nb in nodes.items():
        assert inside(nb, frame), node
    legend = fig.legends[0].get_window_extent(renderer)
    assert inside(legend, frame) and not legend.overlaps(title)
    for nb in nodes.values():
        assert not nb.overlaps(legend)


@pytest.mark.parametrize("name", ["02", "04", "05"])
def test_a_lesson_picture_is_whole_and_no_label_lies_under_a_node(lessons, name) -> None:
    m, kw = lessons[name]
    check_picture(m, color_by=kw.get("color_by", "status"))


def test_the_picture_draws_every_edge_label(lessons) -> None:
    m, _ = lessons["04"]
    _, _, _, labels, _, _ = boxes(m)
    drawn = {" ".join(t.split()) for t, _ in labels}
    assert drawn == {d["label"] for _, _, d in m.edges("rebut")}  # 04 dropped the flaws


def test_long_titles_and_labels_stay_inside_and_off_the_nodes() -> None:
    m = long_labels()
    check_picture(m)
    _, _, _, labels, fig, _ = boxes(m)
    assert len(labels) == 5
    assert "\n" in fig.texts[0].get_text()  # the title wrapped, not cut


def test_the_nodes_show_the_ids_the_notebook_prints(lessons) -> None:
    """04's cell prints "C1 attacks P1 (…)": the map names the boxes the same way."""
    m, _ = lessons["04"]
    ids = {u for u, _, _ in m.edges("rebut")} | {v for _, v, _ in m.edges("rebut")}
    assert ids == {"P1", "C1", "P2", "C2"}
    net = to_pyvis(m)
    shown = {n["id"]: n["label"] for n in net.nodes}
    for n in ids:
        assert shown[n].startswith(f"{n}:"), shown[n]
    fig = figure(m)
    drawn = [t.get_text() for t in fig.axes[0].texts if (t.get_gid() or "").startswith("node:")]
    assert sorted(t.split(":")[0] for t in drawn) == sorted(ids)


@pytest.mark.parametrize("name", ["02", "04", "05"])
def test_the_live_columns_leave_room_for_the_widest_label(lessons, name) -> None:
    m, _ = lessons[name]
    net = to_pyvis(m)
    widest = max(
        (len(x) for e in net.edges if e.get("label") for x in e["label"].split("\n")), default=0
    )
    sep = level_separation(m)
    assert sep - NODE_PX >= widest * LABEL_CHAR_PX  # the gap between two boxes holds it
    assert net.options["layout"]["hierarchical"]["levelSeparation"] == sep


def test_a_mutual_attack_gets_two_columns_in_the_live_view() -> None:
    """vis-network's own levels put a mutual attack's two ends a dozen columns apart (the map
    shrank to a line); a cyclic map gets the picture's columns with the cycle spread out."""
    m = long_labels()
    level = {n["id"]: n.get("level") for n in to_pyvis(m).nodes}
    assert level["C3"] is not None and level["X"] == level["C3"] + 1
    assert max(level.values()) - min(level.values()) <= 3
    m.add_rebut("C0", "C0")  # a statement that attacks itself still gets a column
    assert all(n.get("level") is not None for n in to_pyvis(m).nodes)
    acyclic = lesson_maps()["04"][0]
    assert all("level" not in n for n in to_pyvis(acyclic).nodes)  # vis-network's own rows
