"""Argdown text (https://argdown.org): statements ``[title]``, arguments ``<title>``, and relations
``+`` support, ``-`` attack, ``_`` undercut (``<+``, ``<-``, ``<_`` when incoming).

Layout of the export:

1. front matter with the map's title, and the title as a heading;
2. every statement once with its text, tagged with its agent (``#(AG1)``) and status, assumptions
   tagged ``#(assumption)``; under it the statements that support (``<+``) or rebut (``<-``) it.
   A statement without text is written as ``[title]: #(tags)``, or as the bare ``[title]``;
3. every argument with a short description and its tags (agent, grounded status); under it the
   statements that undercut it (``<_``);
4. every argument's premise–conclusion structure: numbered premises and assumptions, ``----``,
   its conclusion (an argument without premises is written as ``<A>`` supporting its conclusion).

**Text is untrusted**, so it is escaped per the Argdown lexer (``@argdown/core``'s ``lexer.ts``:
a backslash makes the next character literal, ``\\x`` → ``x``):

- first :func:`argnb.maps.clean.one_line`: forbidden characters → U+FFFD, whitespace runs → one
  space (a statement is one line);
- always escaped: ``\\`` (escape), ``[ ] < >`` (statement/argument titles, references, links,
  ``<!--`` comments), ``@`` (mentions), ``#`` (tags, headings), ``* _`` (bold, italic),
  ``{ }`` (inline YAML data), ``=`` (``===`` front matter), ``` ` ~``;
- ``/`` only before ``/`` or ``*`` (``//`` and ``/*`` start comments): ``http:\\//x.org``;
- ``.`` and ``:`` only where they would open a special-character shortcode (``.A.``, ``:smile:``,
  any ``.text.`` / ``:text:`` without spaces): ``e\\.g.``; commas, hyphens and parentheses need no
  escape in statement text.

Titles (from node ids) cannot be escaped in Argdown: ``[`` ``]`` ``<`` ``>`` become ``_``, a
leading ``-``, ``+`` or ``_`` becomes ``~`` (``<+``, ``<-``, ``<_`` open relations); whitespace runs
become one space; clashes get a ``~2`` suffix. Tags cannot hold
``)``: agent names are written with ``(`` ``)`` as ``[`` ``]``. The front-matter title is a YAML
double-quoted string with every non-ASCII character and ``=`` written as ``\\uXXXX``, so no
``===`` can end the front matter early. The test ``tests/maps/test_roundtrip.py`` reads random
maps back with the reference parser ``@argdown/cli``.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from argnb.maps.clean import one_line

if TYPE_CHECKING:
    from argnb.maps.graph import ArgumentMap

ALWAYS = frozenset("\\[]<>@#*_{}=`~")
_TITLE_BAD = re.compile(r"[\[\]<>]")


def escape(text: str) -> str:
    r"""One line of untrusted text that the Argdown parser reads back as exactly ``one_line(text)``.

    >>> print(escape(r"see http://x.org, e.g. [this] #tag C:\new"))
    see http:\//x.org, e\.g. \[this\] \#tag C:\\new
    """
    # Built right to left: whether "/", "." or ":" needs an escape depends on what follows it in
    # the *escaped* output. State of that output S: its first character, and which of "." and
    # ":" occur at index >= 1 of its first run of non-space characters (the lexer's ``\S``).
    pieces: list[str] = []
    first = ""
    later: set[str] = set()
    for c in reversed(one_line(text)):
        if c in ALWAYS or (c == "/" and first in ("/", "*")):
            piece = "\\" + c
        elif c in ".:" and first and not _space(first) and c in later:
            piece = "\\" + c  # c + S would open the shortcode token c\S+?c
        else:
            piece = c
        if _space(piece):
            later = set()
        else:
            run = {first, *later} if first and not _space(first) else set()
            later = (set(piece[1:]) | run) & {".", ":"}
        first = piece[0]
        pieces.append(piece)
    return "".join(reversed(pieces))


def _space(c: str) -> bool:
    """Whitespace as the Argdown lexer (JavaScript's ``\\s``) sees it, after :func:`one_line`."""
    return c in (" ", "\ufeff")


def title(node_id: str) -> str:
    """A node id usable inside ``[...]`` or ``<...>`` (not unique; see :func:`titles`)."""
    t = " ".join(_TITLE_BAD.sub("_", one_line(node_id)).split())
    if t[:1] in ("-", "+", "_"):  # "<+", "<-", "<_" open relations; "[-" is no reference
        t = "~" + t[1:]
    return t or "~"


def titles(ids: list[str]) -> dict[str, str]:
    """Distinct Argdown titles for node ids (``~2``, ``~3``... on clashes)."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for n in ids:
        t, k = title(n), 2
        while t in used:
            t, k = f"{title(n)}~{k}", k + 1
        used.add(t)
        out[n] = t
    return out


def tag(text: str) -> str | None:
    """``#(text)``, or None when nothing is left to tag."""
    t = one_line(text).replace("(", "[").replace(")", "]")
    return f"#({t})" if t else None


def front_matter_string(text: str) -> str:
    """A YAML double-quoted scalar that holds no ``=`` and no non-ASCII character."""
    return json.dumps(one_line(text), ensure_ascii=True).replace("=", "\\u003d")


def _define(ref: str, text: str, tags: list[str]) -> str:
    """``[t]: text #(tag)``; without text ``[t]: #(tag)``; without either the bare ``[t]``."""
    content = " ".join(x for x in (text, *tags) if x)
    return f"{ref}: {content}" if content else ref


def to_argdown(m: ArgumentMap) -> str:
    """The map as Argdown source text."""
    m = m.cleaned()
    g = m.graph
    out: list[str] = []
    if one_line(m.title):
        out += ["===", f"title: {front_matter_string(m.title)}", "===", ""]
        out += [f"# {escape(m.title)}", ""]
    name = titles(list(g.nodes))

    incoming: dict[str, list[tuple[str, str]]] = {n: [] for n in g.nodes}
    for u, v, d in g.edges(data=True):
        if d["kind"] in ("support", "rebut", "undercut"):
            incoming[v].append((d["kind"], u))
    for n, rel in incoming.items():  # @argdown/cli 1.7 drops a self-relation listed after others
        rel.sort(key=lambda r, n=n: r[1] != n)
    symbol = {"support": "<+", "rebut": "<-", "undercut": "<_"}

    def ref(n: str) -> str:
        return f"<{name[n]}>" if g.nodes[n]["kind"] == "argument" else f"[{name[n]}]"

    def tags(d: dict, *extra: str) -> list[str]:
        found = [tag(x) for x in (d.get("agent"), d.get("status"), *extra) if x]
        return [t for t in found if t]

    statements = [n for n, d in g.nodes(data=True) if d["kind"] != "argument"]
    arguments = [n for n, d in g.nodes(data=True) if d["kind"] == "argument"]

    if statements:
        out += ["## Statements", ""]
    for n in statements:
        d = g.nodes[n]
        extra = ("assumption",) if d["kind"] == "assumption" else ()
        out.append(_define(f"[{name[n]}]", escape(d.get("text", "")), tags(d, *extra)))
        out += [f"  {symbol[k]} {ref(src)}" for k, src in incoming[n]]
        out.append("")

    if arguments:
        out += ["## Arguments", ""]
    for n in arguments:
        d = g.nodes[n]
        desc = escape(d.get("text") or d.get("label") or n)
        out.append(_define(f"<{name[n]}>", desc, tags(d)))
        out += [f"  {symbol[k]} {ref(src)}" for k, src in incoming[n]]
        out.append("")

    for n in arguments:
        premises = [
            u for u, _, d in g.in_edges(n, data=True) if d["kind"] in ("premise", "assumption")
        ]
        conclusion = m.conclusion_of(n)
        if not premises:  # Argdown has no premise-less inference: say it as a support
            out += [f"<{name[n]}>", f"  +> [{name[conclusion]}]", ""]
            continue
        out += [f"<{name[n]}>", ""]
        for i, p in enumerate(premises, start=1):
            out.append(f"({i}) [{name[p]}]")
        out.append("----")
        out.append(f"({len(premises) + 1}) [{name[conclusion]}]")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
