"""The interactive map: pyvis (vis-network) HTML, safe with untrusted text, shown inline in Jupyter.

Model and user text is untrusted, and pyvis is not careful with it: it writes the page heading
into the HTML unescaped and, as soon as any node title contains the string ``href``, shows titles
with ``innerHTML``. So this module

- escapes every text with :func:`argnb.views.esc` *before* it reaches pyvis (hover titles are small
  HTML fragments we build from escaped pieces; the heading and legend are ours);
- always uses pyvis's ``innerHTML`` popup, so escaped text is displayed as the text it was;
- leaves node labels as plain text: vis-network draws them on a canvas (never parsed as HTML)
  and pyvis embeds them with Jinja's ``tojson``, which writes ``<``, ``>``, ``&`` and ``'`` as
  ``\\u003c``-style escapes, so no markup from a label ever appears in the page;
- inlines vis-network (``resources="inline"``, the default) and drops pyvis's unused Bootstrap
  links, so the page works offline; in Jupyter it is shown in a sandboxed ``<iframe srcdoc>``
  that cannot touch the notebook page.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from argnb.maps.clean import clean_text
from argnb.maps.style import (
    AGENT_COLORS,
    EDGE_STYLES,
    SHAPES,
    STATUS_BORDERS,
    STATUS_COLORS,
    ColorBy,
    agent_colors,
    edge_label,
    node_colors,
    short_label,
    statement_text,
)
from argnb.views import esc as _esc

if TYPE_CHECKING:
    from argnb.maps.graph import ArgumentMap

__all__ = [
    "AGENT_COLORS",
    "EDGE_STYLES",
    "SHAPES",
    "STATUS_BORDERS",
    "STATUS_COLORS",
    "ColorBy",
    "agent_colors",
    "esc",
    "hover_title",
    "iframe",
    "legend_html",
    "short_label",
    "to_html",
    "to_pyvis",
]

_BOOTSTRAP = re.compile(
    r"<link[^>]*bootstrap[^>]*/?>\s*|<script[^>]*bootstrap[^>]*>\s*</script>\s*", re.IGNORECASE
)
_TEMPLATE_LEFTOVERS = re.compile(
    r"<!-- <link rel=\"stylesheet\" href=\"\.\./node_modules.*?-->|<center>\s*<h1>\s*</h1>\s*</center>",
    re.S,
)


def esc(text: Any) -> str:
    """HTML-escape anything (quotes too, so it is safe in attributes as well), after
    :func:`~argnb.maps.clean.clean_text` (the map's own cleaning of model text)."""
    return _esc(None if text is None else clean_text(text))


def hover_title(data: dict[str, Any]) -> str:
    """The hover text of a node: an HTML fragment built only from escaped pieces."""
    head = " · ".join(
        esc(x) for x in (data.get("kind"), data.get("agent"), data.get("status")) if x
    )
    body = esc(data.get("text") or data.get("label") or "")
    return (
        "<div style='max-width:360px;padding:4px;font:13px sans-serif;white-space:normal'>"
        f"<b>{head}</b><br>{body}</div>"
    )


def to_pyvis(
    m: ArgumentMap,
    *,
    color_by: ColorBy = "status",
    height: str = "640px",
    resources: Literal["inline", "remote"] = "inline",
    layout: Literal["hierarchical", "physics"] = "hierarchical",
):
    """A ``pyvis.network.Network`` of the map with escaped titles.

    ``color_by="status"`` fills nodes by IN / OUT / UNDEC and draws the border in the agent's
    colour; ``color_by="agent"`` does the opposite.
    """
    from pyvis.network import Network

    if color_by not in ("status", "agent"):
        raise ValueError("color_by must be 'status' or 'agent'")
    m = m.cleaned()
    net = Network(
        height=height,
        width="100%",
        directed=True,
        cdn_resources="in_line" if resources == "inline" else "remote",
        heading="",
    )
    agents = agent_colors(m)
    # a map with a cycle (mutual attacks) gets our own columns (the picture's, the cycle spread
    # over columns): vis-network's levels put a mutual attack's two ends a dozen columns apart
    # and shrank the map to a line. Without one, vis-network's own levels place the rows better.
    import networkx as nx

    from argnb.maps.picture import layers

    cyclic = layout == "hierarchical" and not nx.is_directed_acyclic_graph(m.graph)
    level = layers(m, split_cycles=True) if cyclic else {}
    for n, d in m.graph.nodes(data=True):
        kind = d["kind"]
        fill, border = node_colors(d, color_by, agents)
        label = str(d.get("label") or n) if kind == "argument" else short_label(statement_text(d))
        node: dict[str, Any] = {
            "label": label,
            "title": hover_title(d),
            "shape": SHAPES[kind],
            "color": {
                "background": fill,
                "border": border,
                "highlight": {"background": fill, "border": "#000"},
            },
            "borderWidth": 3 if kind in ("claim", "argument") else 2,
            "font": {"size": 16, "face": "sans-serif"},
            "margin": 8,
        }
        if kind == "argument":
            node["font"]["bold"] = True
        if kind == "assumption":
            node["shapeProperties"] = {"borderDashes": [6, 4]}
        if n in level:
            node["level"] = level[n]
        net.add_node(str(n), **node)
    for u, v, d in m.graph.edges(data=True):
        style = dict(EDGE_STYLES[d["kind"]])
        if "label" in style:  # canvas text, like node labels; wrapped to fit between columns
            style["label"] = edge_label(str(d.get("label") or style["label"]))
        if "label" in style:
            # above the line, not on it: the arrowhead of a short edge covered the label ("rebu▶")
            style["font"] = {
                "color": style["color"],
                "strokeWidth": 4,
                "size": 16,
                "bold": True,
                "align": "top",
                "vadjust": -2,
            }
        if level and level[u] > level[v]:  # an edge back (a cycle): bowed, clear of the one out
            style["smooth"] = {"type": "curvedCW", "roundness": 0.35}
            if "font" in style:  # on the bow itself ("top" lost it on a curved edge)
                style["font"] = {**style["font"], "align": "horizontal", "vadjust": 0}
        net.add_edge(str(u), str(v), arrows="to", **style)
    options: dict[str, Any] = {
        "interaction": {"hover": True, "tooltipDelay": 100},
        "edges": {"smooth": {"type": "cubicBezier", "forceDirection": "horizontal"}},
    }
    if layout == "hierarchical":
        options["layout"] = {
            "hierarchical": {
                "enabled": True,
                "direction": "LR",
                "sortMethod": "directed",
                "levelSeparation": level_separation(m),
                "nodeSpacing": 75,
                "treeSpacing": 110,
                "shakeTowards": "leaves",
            }
        }
        options["physics"] = {"enabled": False}
    else:
        options["physics"] = {"enabled": True, "solver": "forceAtlas2Based"}
    net.set_options(_json(options))
    return net


#: the widest node box (``short_label``'s 22 characters at 16 px, with its margins), and the
#: width of one character of a bold 16 px edge label, in canvas pixels (generous for sans-serif)
NODE_PX, LABEL_CHAR_PX = 215, 10.5


def level_separation(m: ArgumentMap) -> int:
    """Pixels between the centres of two columns (levels): one node box plus the widest edge
    label with some air, so a label drawn at its edge's middle never lies under a node
    (vis-network puts it there whatever its length: 04's flaw labels sat under the boxes)."""
    widest = 0
    for _, _, d in m.graph.edges(data=True):
        style = EDGE_STYLES[d["kind"]]
        if "label" in style:
            text = edge_label(str(d.get("label") or style["label"]))
            widest = max(widest, *(len(x) for x in text.split("\n")))
    return max(250, int(NODE_PX + widest * LABEL_CHAR_PX + 50))


def _json(obj: Any) -> str:
    import json

    return json.dumps(obj)


def legend_html(m: ArgumentMap, color_by: ColorBy) -> str:
    """A static legend (our own markup; the title and agent names are escaped)."""
    m = m.cleaned()
    agents = agent_colors(m)

    def swatch(color: str, text: str, border: str = "#666", dashed: bool = False) -> str:
        style = "dashed" if dashed else "solid"
        return (
            f"<span style='display:inline-block;width:14px;height:14px;background:{color};"
            f"border:2px {style} {border};vertical-align:middle;margin:0 4px 0 10px'></span>"
            f"{esc(text)}"
        )

    if color_by == "status":
        fills = "".join(swatch(STATUS_COLORS[s], s) for s in ("IN", "OUT", "UNDEC"))
        borders = "".join(swatch("#fff", f"{a}", agents[a]) for a in m.agents())
        what = f"fill: grounded status {fills} &nbsp;|&nbsp; border: agent {borders}"
    else:
        fills = "".join(swatch(agents[a], a) for a in m.agents())
        borders = "".join(swatch("#fff", s, STATUS_BORDERS[s]) for s in ("IN", "OUT", "UNDEC"))
        what = f"fill: agent {fills} &nbsp;|&nbsp; border: status {borders}"
    edges = (
        "<span style='color:#d7191c;margin-left:10px'>━ rebut</span>"
        "<span style='color:#7b3294;margin-left:10px'>╍ undercut</span>"
        "<span style='color:#1a9641;margin-left:10px'>━ support</span>"
        "<span style='color:#555;margin-left:10px'>━ premise/conclusion</span>"
        "<span style='display:inline-block;width:22px;height:13px;border:2px solid #666;"
        "border-radius:50%;vertical-align:middle;margin:0 4px 0 10px'></span>argument (inference)"
        + swatch("#fff", "assumption", dashed=True)
    )
    return (
        "<style>html,body{overflow-x:hidden}</style>"
        "<div style='font:13px sans-serif;padding:6px 8px;line-height:1.9'>"
        f"<div style='font-size:16px;font-weight:bold'>{esc(m.title)}</div>"
        f"<div>{what}</div><div>{edges}</div></div>"
    )


def to_html(
    m: ArgumentMap,
    *,
    color_by: ColorBy = "status",
    height: str = "640px",
    resources: Literal["inline", "remote"] = "inline",
    layout: Literal["hierarchical", "physics"] = "hierarchical",
    legend: bool = True,
    fill: bool = False,
) -> str:
    """A standalone HTML page of the map (works offline with ``resources="inline"``).

    ``fill``: the network takes the height the page has left below the legend (``height`` is
    ignored), so a map in a small frame -- the roundtable's side panel, where the legend wraps to
    more lines -- is never pushed below the frame's bottom edge."""
    net = to_pyvis(m, color_by=color_by, height=height, resources=resources, layout=layout)
    nodes, edges, _heading, height_, width, options = net.get_network_data()
    template = net.templateEnv.get_template(net.path)
    page = template.render(
        height=height_,
        width=width,
        nodes=nodes,
        edges=edges,
        heading="",  # pyvis writes the heading unescaped: ours goes into the escaped legend
        options=options,
        physics_enabled=layout == "physics",
        use_DOT=False,
        dot_lang=[],
        widget=False,
        bgcolor="#ffffff",
        conf=False,
        tooltip_link=True,  # innerHTML popup: our titles are escaped HTML fragments
        neighborhood_highlight=False,
        select_menu=False,
        filter_menu=False,
        notebook=False,
        cdn_resources=net.cdn_resources,
    )
    page = _BOOTSTRAP.sub("", page)
    page = _TEMPLATE_LEFTOVERS.sub("", page)
    if legend:
        page = page.replace("<body>", "<body>\n" + legend_html(m, color_by), 1)
    if fill:
        page = page.replace("</head>", _FILL + "</head>", 1)
    return page.replace("</body>", _REFIT + "</body>", 1)


# the page as a column: the legend, then the network in all the height that is left
_FILL = (
    "<style>html,body{height:100%;margin:0;overflow:hidden}"
    "body{display:flex;flex-direction:column}"
    "body>.card{flex:1 1 auto;min-height:0;display:flex;flex-direction:column}"
    "#mynetwork{flex:1 1 auto;height:auto!important;min-height:60px;float:none!important;"
    "box-sizing:border-box}</style>"
)

# In JupyterLab the iframe often gets its final size only after vis-network's first fit, which
# leaves the map zoomed into one corner; fit again once loaded and whenever the frame resizes.
_REFIT = """<script>
(function () {
  function refit() { if (window.network) { window.network.redraw(); window.network.fit(); } }
  window.addEventListener("load", function () { setTimeout(refit, 100); setTimeout(refit, 800); });
  window.addEventListener("resize", refit);
})();
</script>
"""


def iframe(page: str, height: int = 760) -> str:
    """``page`` in a sandboxed iframe (scripts run, but cannot reach the notebook)."""
    return (
        f'<div class="argnb-map"><iframe srcdoc="{esc(page)}" '
        'sandbox="allow-scripts" '
        f'style="width:100%;height:{int(height)}px;border:1px solid #ddd;box-sizing:border-box;'
        'display:block"></iframe></div>'
    )
