"""A static picture of the map (PNG, drawn with matplotlib's Agg renderer).

Why: an interactive map needs a trusted notebook. Saved and shared notebooks (a classmate's copy,
GitHub, nbviewer, ``nbconvert``) are untrusted, and their iframe is stripped; this picture is
what they show instead (see :mod:`argnb.maps.display`). It uses the view's palette
(:mod:`argnb.maps.style`) and its left-to-right reading order: premises → argument (ellipse) →
conclusion, supports green, rebuts red, undercuts dashed purple, assumptions dashed.

Model text cannot inject anything here: labels are drawn as plain text (matplotlib's mathtext is
switched off, so ``$...$`` stays literal), cleaned (:mod:`argnb.maps.clean`), wrapped and cut
with an ellipsis. matplotlib is imported on first use only.
"""

from __future__ import annotations

import io
import textwrap
import unicodedata
import warnings
from functools import cache
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import networkx as nx

from argnb.maps.clean import one_line
from argnb.maps.style import (
    EDGE_STYLES,
    STATUS_BORDERS,
    STATUS_COLORS,
    ColorBy,
    agent_colors,
    edge_label,
    node_colors,
    statement_text,
)
from argnb.words import shorten

if TYPE_CHECKING:
    from argnb.maps.graph import ArgumentMap

STRUCTURE = ("premise", "assumption", "conclusion", "support")
FONT = 7.5  # points
LINE = FONT * 1.25 / 72  # inches per text line
BOX_W, ARG_W, ARG_H = 1.9, 0.9, 0.42  # inches
COL, GAP = 2.45, 0.16  # column pitch, vertical gap between boxes
WRAP, MAX_LINES = 30, 4
EDGE_FONT = FONT - 0.5  # points: an edge's label, in the gap between two columns
EM = 0.62  # a character's width in ems (DejaVu Sans, generous), to size gaps and title lines
TITLE_FONT, TITLE_LINES = 11, 3
MAX_PIXELS = 4000  # longest side; big maps get a lower resolution, never overlapping text
# DejaVu Sans (matplotlib's own) covers Latin, Greek, Cyrillic, Hebrew, Arabic; CJK text needs a
# system font: used where installed, otherwise such characters are drawn as boxes.
FALLBACK_FONTS = (
    "Noto Sans CJK JP",
    "Noto Sans CJK SC",
    "WenQuanYi Zen Hei",
    "Droid Sans Fallback",
)


def wrapped(text: str, width: int = WRAP, lines: int = MAX_LINES) -> str:
    """Wrapped to ``width`` characters, at most ``lines`` lines, an ellipsis where it was cut.

    Wide characters (CJK) count twice, so a Japanese label fits its box too.
    """
    t = one_line(text)
    cells = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in t)
    width = max(4, width * len(t) // max(cells, 1)) if cells else width
    out = textwrap.wrap(t, width) or [""]
    if len(out) > lines:  # the last line: the rest, cut at a word with an ellipsis
        out = [*out[: lines - 1], shorten(" ".join(out[lines - 1 :]), width)]
    return "\n".join(out)


def layers(m: ArgumentMap, *, split_cycles: bool = False) -> dict[str, int]:
    """Column of every node: longest path along every edge (premise → argument → conclusion,
    attacker → attacked, as the live view sorts them); statements that only feed something sit
    just left of it. A cycle (mutual attacks) shares one column; with ``split_cycles`` (the live
    view, which cannot draw an edge inside a column with its label clear of the boxes) the
    edges of a cycle that go back in the order the nodes were added are left out instead, so
    its nodes get columns of their own."""
    g = nx.DiGraph()
    g.add_nodes_from(m.graph.nodes)
    g.add_edges_from((u, v) for u, v in m.graph.edges())
    if split_cycles:
        order = {n: i for i, n in enumerate(m.graph.nodes)}
        back = [
            (u, v)
            for scc in nx.strongly_connected_components(g)
            if len(scc) > 1
            for u, v in g.subgraph(scc).edges()
            if order[u] > order[v]
        ]
        g.remove_edges_from([*back, *nx.selfloop_edges(g)])  # a statement that attacks itself
        dag = g
        group = {n: n for n in g.nodes}
    else:
        dag = nx.condensation(g)  # cycles (mutual attacks) share one column
        group = dag.graph["mapping"]
    col: dict = {}
    for c in nx.topological_sort(dag):
        col[c] = max((col[p] + 1 for p in dag.predecessors(c)), default=0)
    for c in dag.nodes:  # sources move right, next to what they feed
        succ = list(dag.successors(c))
        if not list(dag.predecessors(c)) and succ:
            col[c] = min(col[s] for s in succ) - 1
    low = min(col.values(), default=0)
    return {n: col[group[n]] - low for n in m.graph.nodes}


def _order(m: ArgumentMap, col: dict[str, int]) -> list[list[str]]:
    """Nodes per column, ordered by the barycentre of their neighbours (fewer crossings)."""
    columns: list[list[str]] = [[] for _ in range(max(col.values(), default=-1) + 1)]
    for n in m.graph.nodes:
        columns[col[n]].append(n)
    nbrs = {n: set(m.graph.predecessors(n)) | set(m.graph.successors(n)) for n in m.graph.nodes}

    def rank() -> dict[str, float]:
        return {n: i / max(1, len(c) - 1) for c in columns for i, n in enumerate(c)}

    for sweep in range(4):
        seq = range(1, len(columns)) if sweep % 2 == 0 else range(len(columns) - 2, -1, -1)
        for k in seq:
            pos = rank()
            side = k - 1 if sweep % 2 == 0 else k + 1

            def key(n: str, pos: dict[str, float] = pos, side: int = side) -> float:
                near = [pos[x] for x in nbrs[n] if col[x] == side]
                return sum(near) / len(near) if near else pos[n]

            columns[k].sort(key=key)
    return columns


def _border(
    c: tuple[float, float], size: tuple[float, float], kind: str, toward: tuple[float, float]
) -> tuple[float, float]:
    """Where the line from the centre ``c`` to ``toward`` leaves the node's box or ellipse."""
    dx, dy = toward[0] - c[0], toward[1] - c[1]
    if dx == 0 and dy == 0:
        return c
    w, h = size[0] / 2 + 0.02, size[1] / 2 + 0.02
    if kind == "argument":
        t = 1 / ((dx / w) ** 2 + (dy / h) ** 2) ** 0.5
    else:
        t = min(w / abs(dx) if dx else float("inf"), h / abs(dy) if dy else float("inf"))
    return c[0] + t * dx, c[1] + t * dy


def _pava(target: list[float]) -> list[float]:
    """Least-squares non-decreasing fit (pool adjacent violators)."""
    blocks: list[list[float]] = []  # [mean, count]
    for t in target:
        blocks.append([t, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            (m2, c2), (m1, c1) = blocks.pop(), blocks.pop()
            blocks.append([(m1 * c1 + m2 * c2) / (c1 + c2), c1 + c2])
    return [m for m, c in blocks for _ in range(int(c))]


def _place(m: ArgumentMap, columns: list[list[str]], h: dict[str, float]) -> dict[str, float]:
    """Depth (inches from the top) of every node's centre: the tallest column packed, the others
    as close as they can get to their neighbours' mean depth without overlapping."""
    structural = {n: set() for n in m.graph.nodes}
    anything = {n: set() for n in m.graph.nodes}
    for u, v, d in m.graph.edges(data=True):
        anything[u].add(v)
        anything[v].add(u)
        if d["kind"] in STRUCTURE:
            structural[u].add(v)
            structural[v].add(u)
    down: dict[str, float] = {}
    for c in columns:  # packed from the top to start with
        y = 0.1
        for n in c:
            down[n] = y + h[n] / 2
            y += h[n] + GAP
    tallest = max(range(len(columns)), key=lambda k: sum(h[n] + GAP for n in columns[k]))
    for _ in range(3):
        for k, c in enumerate(columns):
            if k == tallest:
                continue
            want = []
            for n in c:
                near = structural[n] or anything[n]
                want.append(sum(down[x] for x in near) / len(near) if near else down[n])
            gaps = [0.0]
            for a, b in pairwise(c):
                gaps.append(gaps[-1] + h[a] / 2 + GAP + h[b] / 2)
            fit = _pava([w - g for w, g in zip(want, gaps, strict=True)])
            for n, f, g in zip(c, fit, gaps, strict=True):
                down[n] = f + g
    top = min(down[n] - h[n] / 2 for n in down)
    return {n: y - top + 0.1 for n, y in down.items()}


def figure(m: ArgumentMap, *, color_by: ColorBy = "status") -> Any:
    """The map as a matplotlib ``Figure`` (not attached to pyplot: nothing global changes)."""
    from matplotlib import rc_context
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Ellipse, FancyArrowPatch, FancyBboxPatch, Patch
    from matplotlib.transforms import Bbox, TransformedBbox

    m = m.cleaned()
    agents = agent_colors(m)
    rc = {"text.parse_math": False, "text.usetex": False, "font.size": FONT}
    rc["font.family"] = ["sans-serif"]
    rc["font.sans-serif"] = ["DejaVu Sans", *_installed(FALLBACK_FONTS)]
    with rc_context(rc):
        if m.graph.number_of_nodes() == 0:
            fig = Figure(figsize=(6, 1.2))
            fig.text(0.5, 0.6, wrapped(m.title or "Argument map", 80, 2), ha="center", va="center")
            fig.text(0.5, 0.25, "(this map has no statements yet)", ha="center", color="#666")
            return fig

        columns = _order(m, layers(m))
        edge_text = {
            (u, v, k): edge_label(str(d["label"]))
            for u, v, k, d in m.graph.edges(keys=True, data=True)
            if d.get("label")
        }
        widest = max((len(x) for t in edge_text.values() for x in t.split("\n")), default=0)
        # the gap between two columns holds the widest edge label with air on both sides
        label_w = widest * EDGE_FONT * EM / 72
        pitch = max(COL, BOX_W + label_w + 0.3)
        label: dict[str, str] = {}
        size: dict[str, tuple[float, float]] = {}
        for n, d in m.graph.nodes(data=True):
            if d["kind"] == "argument":
                label[n] = wrapped(d.get("label") or n, 12, 1)
                size[n] = (ARG_W, ARG_H)
            else:
                label[n] = wrapped(statement_text(d))
                size[n] = (BOX_W, 0.14 + LINE * (label[n].count("\n") + 1))
        down = _place(m, columns, {n: h for n, (_, h) in size.items()})
        graph_h = max(down[n] + size[n][1] / 2 for n in down) + 0.15
        width = max(6.5, len(columns) * pitch + 0.3)

        legend = _legend_handles(m, agents, color_by, Patch, Line2D)
        ncol = max(1, int(width // 1.75))
        # the title wrapped to the figure's width (one long line was cut at both sides)
        per_line = max(20, int((width - 0.4) * 72 / (TITLE_FONT * EM)))
        title = wrapped(m.title or "Argument map", per_line, TITLE_LINES)
        title_h = (title.count("\n") + 1) * TITLE_FONT * 1.3 / 72
        head = 0.5 + title_h + 0.2 * (-(-len(legend) // ncol))
        fig = Figure(figsize=(width, graph_h + head))
        ax = fig.add_axes((0, 0, 1, graph_h / (graph_h + head)))
        ax.set_xlim(0, width)
        ax.set_ylim(0, graph_h)
        ax.axis("off")

        x0 = (width - (len(columns) - 1) * pitch) / 2
        pos = {n: (x0 + k * pitch, graph_h - down[n]) for k, c in enumerate(columns) for n in c}

        patch: dict[str, Any] = {}
        for n, d in m.graph.nodes(data=True):
            (x, y), (w, h) = pos[n], size[n]
            fill, border = node_colors(d, color_by, agents)
            kw = {"facecolor": fill, "edgecolor": border, "zorder": 2}
            if d["kind"] == "argument":
                p = Ellipse((x, y), w, h, linewidth=2.5, **kw)
            else:
                p = FancyBboxPatch(
                    (x - w / 2, y - h / 2),
                    w,
                    h,
                    boxstyle="round,pad=0,rounding_size=0.06",
                    linewidth=2.5 if d["kind"] == "claim" else 1.6,
                    linestyle="--" if d["kind"] == "assumption" else "-",
                    **kw,
                )
            ax.add_patch(p)
            patch[n] = p
            t = ax.text(
                x,
                y,
                label[n],
                ha="center",
                va="center",
                fontsize=FONT + (1 if d["kind"] == "argument" else 0),
                fontweight="bold" if d["kind"] == "argument" else "normal",
                linespacing=1.1,
                zorder=3,
                gid=f"node:{n}",
            )
            p.set_gid(f"node:{n}")
            t.set_clip_box(
                TransformedBbox(Bbox.from_bounds(x - w / 2, y - h / 2, w, h), ax.transData)
            )

        kinds = {n: d["kind"] for n, d in m.graph.nodes(data=True)}
        for u, v, key, d in m.graph.edges(keys=True, data=True):
            style = EDGE_STYLES[d["kind"]]
            attack = d["kind"] in ("rebut", "undercut")
            (xu, yu), (xv, yv) = pos[u], pos[v]
            if abs(xu - xv) < 1e-6:  # same column: loop out on the right, in on the right
                a = (xu + size[u][0] / 2, yu)
                b = (xv + size[v][0] / 2, yv)
                bend = "arc,angleA=0,angleB=0,armA=16,armB=16,rad=6"
            else:  # from border to border (computed: matplotlib's patch clipping is slow)
                a = _border(pos[u], size[u], kinds[u], pos[v])
                b = _border(pos[v], size[v], kinds[v], pos[u])
                bend = f"arc3,rad={0.25 if attack else 0.0}"
            ax.add_patch(
                FancyArrowPatch(
                    a,
                    b,
                    arrowstyle="-|>",
                    mutation_scale=12 if attack else 10,
                    color=style["color"],
                    linewidth=style["width"] * (0.7 if attack else 0.55),
                    linestyle="--" if style.get("dashes") else "-",
                    connectionstyle=bend,
                    shrinkA=0,
                    shrinkB=0,
                    zorder=4 if attack else 1,
                )
            )
            if (u, v, key) in edge_text:
                rad = 0.25 if attack and abs(pos[u][0] - pos[v][0]) >= 1e-6 else 0.0
                _edge_label(
                    ax, edge_text[u, v, key], style["color"], (a, b, rad), pos[u], pos[v], pitch
                )

        top = 1 - 0.08 / (graph_h + head)
        fig.text(
            0.5,
            top,
            title,
            ha="center",
            va="top",
            fontsize=TITLE_FONT,
            fontweight="bold",
            linespacing=1.1,
            gid="title",
        )
        fig.legend(
            handles=legend,
            loc="upper center",
            bbox_to_anchor=(0.5, 1 - (0.18 + title_h) / (graph_h + head)),
            ncol=ncol,
            frameon=False,
            fontsize=FONT,
            handlelength=2.2,
            columnspacing=1.2,
            title=(
                "fill: grounded status · border: agent"
                if color_by == "status"
                else "fill: agent · border: grounded status"
            ),
            title_fontsize=FONT,
        )
        return fig


def _edge_label(
    ax: Any,
    text: str,
    color: str,
    curve: tuple[tuple[float, float], tuple[float, float], float],
    pu: tuple[float, float],
    pv: tuple[float, float],
    pitch: float,
) -> None:
    """An edge's label in the gap between columns that the edge crosses last before its target
    (the gap right of the column when both ends share one): no node box reaches into a gap, and
    the gap is as wide as the widest label (see ``pitch``), so the label never lies under a node."""
    if abs(pu[0] - pv[0]) < 1e-6:  # the loop out on the right of the column
        x, y = pu[0] + pitch / 2, (pu[1] + pv[1]) / 2
    else:  # on the drawn curve (matplotlib's arc3: a quadratic Bézier; inches on both axes)
        x = pv[0] - pitch / 2 if pv[0] > pu[0] else pv[0] + pitch / 2
        (ax_, ay), (bx, by), rad = curve
        cx, cy = (ax_ + bx) / 2 + rad * (by - ay), (ay + by) / 2 - rad * (bx - ax_)
        points = [
            (
                (1 - t) ** 2 * ax_ + 2 * t * (1 - t) * cx + t**2 * bx,
                (1 - t) ** 2 * ay + 2 * t * (1 - t) * cy + t**2 * by,
            )
            for t in (i / 100 for i in range(101))
        ]
        y = min(points, key=lambda q: abs(q[0] - x))[1]
    ax.text(
        x,
        y,
        text,
        ha="center",
        va="center",
        fontsize=EDGE_FONT,
        color=color,
        linespacing=1.05,
        zorder=5,
        gid="edge-label",
        bbox={
            "boxstyle": "round,pad=0.15",
            "facecolor": "white",
            "edgecolor": "none",
            "alpha": 0.85,
        },
    )


@cache
def _installed(names: tuple[str, ...]) -> list[str]:
    from matplotlib import font_manager

    have = {f.name for f in font_manager.fontManager.ttflist}
    return [n for n in names if n in have]


def _legend_handles(m: ArgumentMap, agents: dict, color_by: ColorBy, Patch, Line2D) -> list:
    status_fill = color_by == "status"
    handles = []
    for s in ("IN", "OUT", "UNDEC"):
        if status_fill:
            handles.append(Patch(facecolor=STATUS_COLORS[s], edgecolor="#666", label=s))
        else:
            handles.append(Patch(facecolor="white", edgecolor=STATUS_BORDERS[s], lw=2, label=s))
    for a in m.agents():
        name = wrapped(a, 18, 1)
        if status_fill:
            handles.append(Patch(facecolor="white", edgecolor=agents[a], lw=2, label=name))
        else:
            handles.append(Patch(facecolor=agents[a], edgecolor="#666", label=name))
    edges = {d["kind"] for _, _, d in m.graph.edges(data=True)}
    if edges & {"assumption", "conclusion"}:
        edges.add("premise")
    nodes = {d["kind"] for _, d in m.graph.nodes(data=True)}
    for kind in [k for k in ("rebut", "undercut", "support", "premise") if k in edges]:
        st = EDGE_STYLES[kind]
        text = "premise / conclusion" if kind == "premise" else kind
        handles.append(
            Line2D(
                [],
                [],
                color=st["color"],
                lw=st["width"] * 0.6,
                ls="--" if st.get("dashes") else "-",
                label=text,
            )
        )
    if "assumption" in nodes:
        handles.append(Patch(facecolor="white", edgecolor="#666", ls="--", label="assumption"))
    if "argument" in nodes:
        handles.append(
            Line2D(
                [],
                [],
                marker="o",
                ls="",
                markersize=9,
                markerfacecolor="white",
                markeredgecolor="#666",
                label="argument (inference)",
            )
        )
    return handles


def to_png(m: ArgumentMap, *, color_by: ColorBy = "status", dpi: int = 100) -> bytes:
    """PNG bytes of :func:`figure` (at most ``MAX_PIXELS`` on the longest side)."""
    fig = figure(m, color_by=color_by)
    w, h = fig.get_size_inches()
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Glyph ... missing from font": drawn as a box
        fig.savefig(buf, format="png", dpi=min(dpi, MAX_PIXELS / max(w, h)), facecolor="white")
    return buf.getvalue()
