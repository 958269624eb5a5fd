"""Argdown text (https://argdown.org): statements ``[title]``, arguments ``<title>``, and relations
``+`` support, ``-`` attack, ``_`` undercut (``<+``, ``<-``, ``<_`` when incoming).

Layout of the export:

1. every statement once with its text, tagged with its agent (``#(AG1)``), assumptions tagged
   ``#(assumption)``; under it the statements that support (``<+``) or rebut (``<-``) it;
2. every argument with a short description and its tags (agent, grounded status); under it the
   statements that undercut it (``<_``);
3. every argument's premise–conclusion structure: numbered premises and assumptions, ``----``,
   its conclusion.

Text is untrusted, so Argdown's special characters in it are backslash-escaped (the Argdown parser
reads ``\\[`` as a literal ``[``; checked with ``@argdown/cli``); line breaks become spaces.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from argnb.maps.graph import ArgumentMap

_SPECIAL = re.compile(r"([\[\]<>#@*_{}`~=])")
_TITLE_BAD = re.compile(r"[\[\]<>\n\r]")


def escape(text: str) -> str:
    """Backslash-escape Argdown markup characters; one line."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def title(node_id: str) -> str:
    """A node id usable inside ``[...]`` or ``<...>``."""
    return _TITLE_BAD.sub("_", str(node_id)).strip() or "_"


def _tag(text: str) -> str:
    return "#(" + re.sub(r"[()\n\r#]", " ", str(text)).strip() + ")"


def to_argdown(m: ArgumentMap) -> str:
    """The map as Argdown source text."""
    g = m.graph
    out: list[str] = []
    if m.title:
        front = json.dumps(" ".join(m.title.split()), ensure_ascii=False)  # a YAML string
        out += ["===", f"title: {front}", "===", "", f"# {escape(m.title)}", ""]

    incoming: dict[str, list[tuple[str, str]]] = {n: [] for n in g.nodes}
    for u, v, d in g.edges(data=True):
        if d["kind"] in ("support", "rebut", "undercut"):
            incoming[v].append((d["kind"], u))
    symbol = {"support": "<+", "rebut": "<-", "undercut": "<_"}

    def ref(n: str) -> str:
        return f"<{title(n)}>" if g.nodes[n]["kind"] == "argument" else f"[{title(n)}]"

    statements = [n for n, d in g.nodes(data=True) if d["kind"] != "argument"]
    arguments = [n for n, d in g.nodes(data=True) if d["kind"] == "argument"]

    if statements:
        out += ["## Statements", ""]
    for n in statements:
        d = g.nodes[n]
        tags = [_tag(x) for x in (d.get("agent"), d.get("status")) if x]
        if d["kind"] == "assumption":
            tags.append(_tag("assumption"))
        out.append(f"[{title(n)}]: {escape(d.get('text', ''))} {' '.join(tags)}".rstrip())
        out += [f"  {symbol[k]} {ref(src)}" for k, src in incoming[n]]
        out.append("")

    if arguments:
        out += ["## Arguments", ""]
    for n in arguments:
        d = g.nodes[n]
        tags = [_tag(x) for x in (d.get("agent"), d.get("status")) if x]
        desc = escape(d.get("text") or d.get("label") or n)
        out.append(f"<{title(n)}>: {desc} {' '.join(tags)}".rstrip())
        out += [f"  {symbol[k]} {ref(src)}" for k, src in incoming[n]]
        out.append("")

    for n in arguments:
        premises = [
            u for u, _, d in g.in_edges(n, data=True) if d["kind"] in ("premise", "assumption")
        ]
        conclusion = m.conclusion_of(n)
        out += [f"<{title(n)}>", ""]
        for i, p in enumerate(premises, start=1):
            out.append(f"({i}) [{title(p)}]")
        out.append("----")
        out.append(f"({len(premises) + 1}) [{title(conclusion)}]")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
