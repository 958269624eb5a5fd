"""How a map shows in a notebook: interactive when trusted, a picture everywhere else.

A notebook a learner receives (a classmate's copy, GitHub, nbviewer, a changed file) is not
trusted, and JupyterLab then renders only "safe" mimetypes and sanitizes HTML: scripts, event
handlers and iframes are stripped (``@jupyterlab/rendermime`` ``factories.ts``: ``text/html`` is
safe but sanitized, ``image/png`` safe, ``image/svg+xml`` unsafe; ``preferredMimeType(bundle,
trusted ? "any" : "ensure")`` takes the first safe type by rank, html 50 < png 90 < text 120). So
the bundle of :func:`bundle` holds

``text/html``   the sandboxed iframe with the interactive map, *and* the same picture as a
                ``data:`` PNG ``<img>`` with a caption below it. The iframe's ``onload``
                removes the picture, so a trusted notebook shows only the live map; the
                sanitizer keeps ``<img>`` with a data URI (jupyterlab#5183) and drops the
                iframe and its handler, so an untrusted one shows the picture;
``image/png``   the picture alone, for front ends and exporters that prefer images (PDF, LaTeX);
``text/plain``  an outline of the map (:func:`outline`) — never markup.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from argnb.maps.clean import one_line
from argnb.maps.picture import to_png
from argnb.maps.view import esc, iframe, to_html
from argnb.words import shorten

if TYPE_CHECKING:
    from argnb.maps.graph import ArgumentMap

PNG = "image/png"
CAPTION = (
    "A static picture of the argument map: this notebook is not trusted or was exported. "
    "Run the cell (or trust the notebook) for the interactive map."
)
# Removes the picture once the live map has loaded: only ever runs where the iframe survived.
_ONLOAD = "var s=this.parentNode.querySelector('.argnb-map-static');if(s){s.remove();}"
# Where the iframe survived, the picture lies over it until the map has loaded (a large page
# takes seconds to parse: the learner sees the map at once, not a blank frame); where the iframe
# was stripped (untrusted), the rule matches nothing and the picture stands in its place, with
# its caption.
PICTURE_FIRST = (
    "<style>.argnb-map{position:relative}"
    ".argnb-map>iframe+.argnb-map-static{position:absolute;inset:0;overflow:hidden;"
    "background:#fff;border:1px solid #ddd}"
    ".argnb-map>iframe+.argnb-map-static>div{display:none}</style>"
)


def _short(text: str, n: int = 90) -> str:
    return shorten(one_line(text), n)


def outline(m: ArgumentMap) -> str:
    """The map as plain text: every argument with its premises and conclusion, then the attacks."""
    m = m.cleaned()
    g = m.graph
    c = m.counts()
    nodes = ", ".join(f"{v} {k}{'s' if v != 1 else ''}" for k, v in c["nodes"].items())
    lines = [f"Argument map: {_short(m.title) or '(untitled)'}", f"  {nodes or 'empty'}"]

    def said(n: str) -> str:
        d = g.nodes[n]
        who = ", ".join(one_line(x) for x in (d.get("agent"), d.get("status")) if x)
        return f" [{who}]" if who else ""

    def text(n: str) -> str:
        return f'{n} "{_short(g.nodes[n].get("text", ""))}"'

    arguments = m.nodes("argument")
    if arguments:
        lines.append("Arguments:")
    for a in arguments:
        lines.append(f"  {a}{said(a)}")
        for u, _, d in g.in_edges(a, data=True):
            if d["kind"] in ("premise", "assumption"):
                lines.append(f"    {d['kind']}: {text(u)}")
        lines.append(f"    => {text(m.conclusion_of(a))}{said(m.conclusion_of(a))}")
    relations = [(u, v, d) for u, v, d in g.edges(data=True) if d["kind"] in ("rebut", "undercut")]
    relations += m.edges("support")
    if relations:
        lines.append("Attacks and supports:")
    for u, v, d in relations:
        on = f" (on {d['on']})" if d.get("on") else ""
        lines.append(f"  {text(u)} {d['kind']}s {v}{on}")
    loose = [n for n in m.nodes() if g.degree(n) == 0]
    if loose:
        lines.append("Not connected:")
        lines += [f"  {text(n)}{said(n)}" for n in loose]
    return "\n".join(lines)


def map_html(page: str, png: bytes, *, title: str = "", frame_height: int = 780) -> str:
    """The live map's iframe plus a picture that stays where the iframe is stripped."""
    frame = iframe(page, frame_height)
    head, tail = frame.split("<iframe ", 1)
    live, end = tail.rsplit("</div>", 1)
    data = base64.b64encode(png).decode("ascii")
    alt = esc(f"Argument map: {_short(title)}" if title else "Argument map")
    static = (
        '<div class="argnb-map-static">'
        f'<img src="data:{PNG};base64,{data}" alt="{alt}" style="max-width:100%;height:auto">'
        f'<div style="font:12px sans-serif;color:#666">{esc(CAPTION)}</div></div>'
    )
    return f'{PICTURE_FIRST}{head}<iframe onload="{_ONLOAD}" {live}{static}</div>{end}'


def bundle(
    m: ArgumentMap, *, frame_height: int = 780, color_by: str = "status", **kw: Any
) -> dict[str, Any]:
    """The display bundle: ``text/html`` (live + picture), ``image/png``, ``text/plain``."""
    png = to_png(m, color_by=color_by)  # type: ignore[arg-type]
    # the network takes what the frame has left below the legend: a fixed ``height`` under a
    # legend that wraps to more lines ran past the frame (05's reference map, cut at the bottom)
    kw.setdefault("fill", True)
    page = to_html(m, color_by=color_by, **kw)  # type: ignore[arg-type]
    return {
        "text/html": map_html(page, png, title=m.title, frame_height=frame_height),
        PNG: base64.b64encode(png).decode("ascii"),
        "text/plain": outline(m),
    }


class MapDisplay:
    """What :func:`show` returns: Jupyter displays its bundle (see the module doc)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return self.data

    def __repr__(self) -> str:
        return self.data["text/plain"]


def show(m: ArgumentMap, *, frame_height: int = 780, **kw: Any) -> MapDisplay:
    """Display the map inline in Jupyter (interactive when trusted, a picture otherwise).

    ``frame_height`` is the frame's height in pixels; the network fills what the legend leaves
    of it (``height`` counts only with ``fill=False``)."""
    return MapDisplay(bundle(m, frame_height=frame_height, **kw))
