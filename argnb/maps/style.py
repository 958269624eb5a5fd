"""Colours, shapes and labels shared by the interactive view and the static picture.

One palette, so a learner who switches between the live map and its picture (an untrusted or
exported notebook) reads the same colours: fill by grounded status, border by agent (or the
reverse), rebuts red, undercuts dashed purple, supports green.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any, Literal

from argnb.maps.clean import one_line
from argnb.words import shorten

if TYPE_CHECKING:
    from argnb.maps.graph import ArgumentMap

ColorBy = Literal["status", "agent"]

STATUS_COLORS = {"IN": "#a6dba0", "OUT": "#f4a582", "UNDEC": "#fee08b", None: "#eeeeee"}
STATUS_BORDERS = {"IN": "#1b7837", "OUT": "#b2182b", "UNDEC": "#b8860b", None: "#9e9e9e"}
AGENT_COLORS = ["#4393c3", "#e08214", "#8073ac", "#35978f", "#c51b7d", "#7f7f7f"]
NO_AGENT = "#bdbdbd"
EDGE_STYLES: dict[str, dict[str, Any]] = {
    "premise": {"color": "#8c8c8c", "width": 1.5},
    "assumption": {"color": "#8c8c8c", "width": 1.5, "dashes": True},
    "conclusion": {"color": "#555555", "width": 2.5},
    "support": {"color": "#1a9641", "width": 2.5, "label": "support"},
    "rebut": {"color": "#d7191c", "width": 3.5, "label": "rebut"},
    "undercut": {"color": "#7b3294", "width": 3.5, "dashes": [8, 4], "label": "undercut"},
}
SHAPES = {"claim": "box", "premise": "box", "assumption": "box", "argument": "ellipse"}


def short_label(text: str, width: int = 22, max_chars: int = 80) -> str:
    """A wrapped, truncated label (an ellipsis marks the cut)."""
    t = shorten(one_line(text), max_chars)
    return "\n".join(textwrap.wrap(t, width)) or " "


def statement_text(data: dict[str, Any]) -> str:
    """What a statement node shows: its text, after its label when it has one ("C1: …"), so
    the map names a statement as the notebook prints it (04's debate: P1, C1, P2, C2)."""
    text, label = str(data.get("text") or ""), data.get("label")
    return f"{label}: {text}" if label else text


#: an edge label is wrapped to this many characters a line (and at most 3 lines), so it fits in
#: the gap between two columns of nodes instead of running under them
EDGE_WRAP, EDGE_LINES = 16, 3


def edge_label(text: str) -> str:
    """An edge's label, wrapped (lines joined by newlines) and cut with an ellipsis."""
    lines = textwrap.wrap(one_line(text), EDGE_WRAP, break_long_words=False) or [""]
    if len(lines) > EDGE_LINES:
        lines = [*lines[: EDGE_LINES - 1], shorten(" ".join(lines[EDGE_LINES - 1 :]), EDGE_WRAP)]
    wide = EDGE_WRAP + 8  # one long word keeps its line, up to a point
    return "\n".join(x if len(x) <= wide else x[: wide - 1] + "…" for x in lines)


def agent_colors(m: ArgumentMap) -> dict[str | None, str]:
    """Agent → colour, in order of first appearance (None: no agent)."""
    colors: dict[str | None, str] = {None: NO_AGENT}
    for i, a in enumerate(m.agents()):
        colors[a] = AGENT_COLORS[i % len(AGENT_COLORS)]
    return colors


def node_colors(
    data: dict[str, Any], color_by: ColorBy, agents: dict[str | None, str]
) -> tuple[str, str]:
    """(fill, border) of a node: status fill and agent border, or the reverse."""
    if color_by not in ("status", "agent"):
        raise ValueError("color_by must be 'status' or 'agent'")
    status, agent = data.get("status"), data.get("agent")
    if color_by == "status":
        return STATUS_COLORS.get(status, STATUS_COLORS[None]), agents.get(agent, "#9e9e9e")
    return agents.get(agent, NO_AGENT), STATUS_BORDERS.get(status, STATUS_BORDERS[None])
