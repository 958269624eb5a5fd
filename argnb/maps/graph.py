"""The argument map: a small, generic graph model every protocol can fill and every view can read.

Nodes have a ``kind``:

``claim``        a statement someone concludes or puts forward as a position
``premise``      a statement given as a reason
``assumption``   a statement taken for granted for lack of evidence against it (weak negation)
``argument``     an inference: premises and assumptions → a conclusion (AIF's RA node)

Edges have a ``kind``:

``premise`` / ``assumption``   statement → argument it feeds
``conclusion``                 argument → the statement it concludes
``support``                    statement → statement (a support without spelling out the inference)
``rebut``                      statement → statement it contradicts (an attack on a conclusion)
``undercut``                   statement → argument whose inference it blocks

Every node may carry ``agent`` (who said it), ``status`` (``IN``/``OUT``/``UNDEC`` from some
semantics) and ``move`` (the turn of a dialogue that put it forward; see :meth:`add_move`), used
for colouring and for the locutions of the AIF export. Views: :meth:`to_html` / :meth:`show`
(pyvis), exports: :meth:`to_aif`, :meth:`to_argdown`, :meth:`to_graphml`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import networkx as nx

from argnb.errors import MapError
from argnb.maps.clean import FORBIDDEN, clean_text

NodeKind = Literal["claim", "premise", "assumption", "argument"]
EdgeKind = Literal["premise", "assumption", "conclusion", "support", "rebut", "undercut"]
Status = Literal["IN", "OUT", "UNDEC"]

STATEMENT_KINDS = ("claim", "premise", "assumption")
NODE_KINDS = (*STATEMENT_KINDS, "argument")
EDGE_KINDS = ("premise", "assumption", "conclusion", "support", "rebut", "undercut")
ATTACK_KINDS = ("rebut", "undercut")
STATUSES = ("IN", "OUT", "UNDEC")
#: file suffix -> the format :meth:`ArgumentMap.save` writes
SAVE_FORMATS = {
    ".json": "aif",
    ".argdown": "argdown",
    ".graphml": "graphml",
    ".html": "html",
    ".png": "png",
}


class ArgumentMap:
    """Claims, premises, assumptions, arguments and the support / attack edges between them.

    >>> m = ArgumentMap("Umbrella?")
    >>> m.add_premise("p1", "The forecast says rain.", agent="Ann")
    'p1'
    >>> m.add_claim("c1", "Take an umbrella.", agent="Ann")
    'c1'
    >>> m.add_argument("a1", premises=["p1"], conclusion="c1", agent="Ann", status="IN")
    'a1'
    >>> m.add_claim("c2", "The forecast is often wrong here.", agent="Bob")
    'c2'
    >>> m.add_undercut("c2", "a1")
    >>> m.counts()
    {'nodes': {'premise': 1, 'claim': 2, 'argument': 1}, 'edges': {'premise': 1, 'conclusion': 1, 'undercut': 1}}
    """

    def __init__(self, title: str = "") -> None:
        self.graph: nx.MultiDiGraph = nx.MultiDiGraph(title=title)
        self.moves: dict[str, dict[str, str]] = {}

    @property
    def title(self) -> str:
        return self.graph.graph.get("title", "")

    # -- building ------------------------------------------------------------------------
    def add_statement(
        self,
        id: str,
        text: str,
        *,
        kind: str = "claim",
        agent: str | None = None,
        status: str | None = None,
        move: str | None = None,
        label: str | None = None,
    ) -> str:
        """Add (or update) a statement node; return its id."""
        if kind not in STATEMENT_KINDS:
            raise MapError(f"statement kind must be one of {STATEMENT_KINDS}, not {kind!r}")
        self._check_id(id)
        self._check_status(status)
        self.graph.add_node(
            id,
            kind=kind,
            text=str(text),
            agent=agent,
            status=status,
            move=move,
            label=label,
        )
        return id

    def add_claim(self, id: str, text: str, **kw: Any) -> str:
        return self.add_statement(id, text, kind="claim", **kw)

    def add_premise(self, id: str, text: str, **kw: Any) -> str:
        return self.add_statement(id, text, kind="premise", **kw)

    def add_assumption(self, id: str, text: str, **kw: Any) -> str:
        return self.add_statement(id, text, kind="assumption", **kw)

    def add_argument(
        self,
        id: str,
        *,
        conclusion: str,
        premises: Iterable[str] = (),
        assumptions: Iterable[str] = (),
        agent: str | None = None,
        status: str | None = None,
        move: str | None = None,
        text: str = "",
        label: str | None = None,
    ) -> str:
        """Add an inference from existing statements to an existing conclusion; return its id."""
        self._check_id(id)
        self._check_status(status)
        for s in [conclusion, *premises, *assumptions]:
            self._require(s, STATEMENT_KINDS)
        self.graph.add_node(
            id,
            kind="argument",
            text=text,
            agent=agent,
            status=status,
            move=move,
            label=label if label is not None else id,
        )
        for p in premises:
            self.graph.add_edge(p, id, kind="premise", move=move)
        for a in assumptions:
            self.graph.add_edge(a, id, kind="assumption", move=move)
        self.graph.add_edge(id, conclusion, kind="conclusion", move=move)
        return id

    def add_support(self, source: str, target: str, *, move: str | None = None) -> None:
        """``source`` supports ``target`` (two statements)."""
        self._require(source, STATEMENT_KINDS)
        self._require(target, STATEMENT_KINDS)
        self.graph.add_edge(source, target, kind="support", move=move)

    def add_rebut(
        self, source: str, target: str, *, move: str | None = None, label: str = "rebut"
    ) -> None:
        """``source`` contradicts the statement ``target``.

        An argument as ``source`` stands for its conclusion.
        """
        src = self._as_statement(source)
        self._require(target, STATEMENT_KINDS)
        self.graph.add_edge(src, target, kind="rebut", move=move, label=label)

    def add_undercut(
        self,
        source: str,
        target: str,
        *,
        move: str | None = None,
        on: str | None = None,
        label: str = "undercut",
    ) -> None:
        """``source`` blocks the inference ``target`` (an argument node).

        ``on`` names the assumption of ``target`` it shows false, when there is one. An argument
        as ``source`` stands for its conclusion.
        """
        src = self._as_statement(source)
        self._require(target, ("argument",))
        if on is not None:
            self._require(on, ("assumption", "premise"))
        self.graph.add_edge(src, target, kind="undercut", move=move, on=on, label=label)

    def add_move(self, id: str, speaker: str, text: str = "") -> str:
        """Register a dialogue move (a turn): AIF exports it as a locution (L node)."""
        self._check_id(id)
        self.moves[id] = {"speaker": speaker, "text": text}
        return id

    def set_status(self, statuses: Mapping[str, str | None]) -> None:
        """Set IN / OUT / UNDEC (or None) on nodes by id."""
        for node, status in statuses.items():
            self._check_status(status)
            if node not in self.graph:
                raise MapError(f"no node {node!r}")
            self.graph.nodes[node]["status"] = status

    # -- reading -------------------------------------------------------------------------
    def nodes(self, kind: str | None = None) -> list[str]:
        return [n for n, d in self.graph.nodes(data=True) if kind is None or d["kind"] == kind]

    def edges(self, kind: str | None = None) -> list[tuple[str, str, dict[str, Any]]]:
        return [
            (u, v, d)
            for u, v, d in self.graph.edges(data=True)
            if kind is None or d["kind"] == kind
        ]

    def node(self, id: str) -> dict[str, Any]:
        return dict(self.graph.nodes[id])

    def conclusion_of(self, argument: str) -> str:
        """The statement an argument node concludes."""
        for _, v, d in self.graph.out_edges(argument, data=True):
            if d["kind"] == "conclusion":
                return v
        raise MapError(f"{argument!r} has no conclusion")

    def agents(self) -> list[str]:
        """Agents in order of first appearance (moves first, then nodes)."""
        seen = [m["speaker"] for m in self.moves.values()]
        seen += [d.get("agent") for _, d in self.graph.nodes(data=True)]
        return [a for a in dict.fromkeys(seen) if a]

    def counts(self) -> dict[str, dict[str, int]]:
        """How many nodes and edges of each kind (handy in tests and notebooks)."""
        nodes: dict[str, int] = {}
        edges: dict[str, int] = {}
        for _, d in self.graph.nodes(data=True):
            nodes[d["kind"]] = nodes.get(d["kind"], 0) + 1
        for _, _, d in self.graph.edges(data=True):
            edges[d["kind"]] = edges.get(d["kind"], 0) + 1
        return {"nodes": nodes, "edges": edges}

    def to_networkx(self) -> nx.MultiDiGraph:
        """A copy of the underlying graph."""
        return self.graph.copy()

    def cleaned(self) -> ArgumentMap:
        """A copy whose texts every export can write and read back (:mod:`argnb.maps.clean`).

        Every export and view starts from this copy, so they all show the same text.
        """
        m = type(self)()
        m.graph = nx.MultiDiGraph(**{k: _clean(v) for k, v in self.graph.graph.items()})
        for n, d in self.graph.nodes(data=True):
            m.graph.add_node(n, **{k: _clean(v) for k, v in d.items()})
        for u, v, k, d in self.graph.edges(keys=True, data=True):
            m.graph.add_edge(u, v, key=k, **{a: _clean(x) for a, x in d.items()})
        m.moves = {i: {k: _clean(v) for k, v in mv.items()} for i, mv in self.moves.items()}
        return m

    # -- views and exports (sibling modules; none of them imports this one back) ---------
    def to_pyvis(self, **kw: Any):
        from argnb.maps.view import to_pyvis

        return to_pyvis(self, **kw)

    def to_html(self, **kw: Any) -> str:
        """A standalone, escaped HTML page with the interactive map."""
        from argnb.maps.view import to_html

        return to_html(self, **kw)

    def save_html(self, path: str | Path, **kw: Any) -> Path:
        p = Path(path)
        p.write_text(self.to_html(**kw), encoding="utf-8")
        return p

    def save(self, path: str | Path, format: str | None = None) -> Path:
        """Write the map in ``format`` (``aif``, ``argdown``, ``graphml``, ``html``, ``png``),
        by default the one its file suffix names (:data:`SAVE_FORMATS`); AIF is validated
        first. Every CLI saves maps through here."""
        p = Path(path)
        kind = format or SAVE_FORMATS.get(p.suffix.lower())
        if kind == "aif":
            import json

            from argnb.maps.aif import validate_aif

            doc = validate_aif(self.to_aif())
            p.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
        elif kind == "argdown":
            p.write_text(self.to_argdown(), encoding="utf-8")
        elif kind == "graphml":
            self.to_graphml(p)
        elif kind == "html":
            self.save_html(p)
        elif kind == "png":
            p.write_bytes(self.to_png())
        else:
            raise MapError(
                f"cannot tell the map format from {p.name!r}",
                hint="end the file name in " + ", ".join(SAVE_FORMATS),
            )
        return p

    def to_png(self, **kw: Any) -> bytes:
        """A static picture of the map (PNG bytes, drawn with matplotlib)."""
        from argnb.maps.picture import to_png

        return to_png(self, **kw)

    def to_text(self) -> str:
        """A plain-text outline of the map (what a notebook shows where HTML cannot render)."""
        from argnb.maps.display import outline

        return outline(self)

    def show(self, **kw: Any):
        """Display the map inline in Jupyter: interactive when trusted, a picture otherwise."""
        from argnb.maps.display import show

        return show(self, **kw)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from argnb.maps.display import bundle

        return bundle(self)

    def _repr_html_(self) -> str:
        """For front ends that ask for HTML only: the live map and its picture."""
        from argnb.maps.display import bundle

        return bundle(self)["text/html"]

    def to_aif(self, **kw: Any) -> dict[str, Any]:
        from argnb.maps.aif import to_aif

        return to_aif(self, **kw)

    @classmethod
    def from_aif(cls, doc: Mapping[str, Any]) -> ArgumentMap:
        """Read an OVA-shaped AIF document (see :func:`argnb.maps.aif.read_aif`)."""
        from argnb.maps.aif import read_aif

        return read_aif(doc, cls())

    def to_argdown(self) -> str:
        from argnb.maps.argdown import to_argdown

        return to_argdown(self)

    def to_graphml(self, path: str | Path | None = None) -> str:
        from argnb.maps.exports import to_graphml

        return to_graphml(self, path)

    def __repr__(self) -> str:
        c = self.counts()
        return f"ArgumentMap({self.title!r}, nodes={c['nodes']}, edges={c['edges']})"

    # -- internals -----------------------------------------------------------------------
    def _require(self, id: str, kinds: Iterable[str]) -> None:
        kinds = tuple(kinds)
        if id not in self.graph:
            raise MapError(f"no node {id!r}; add it first")
        kind = self.graph.nodes[id]["kind"]
        if kind not in kinds:
            raise MapError(f"{id!r} is a {kind}, expected one of {kinds}")

    def _as_statement(self, id: str) -> str:
        if id in self.graph and self.graph.nodes[id]["kind"] == "argument":
            return self.conclusion_of(id)
        self._require(id, STATEMENT_KINDS)
        return id

    @staticmethod
    def _check_id(id: object) -> None:
        if not isinstance(id, str) or not id or FORBIDDEN.search(id):
            raise MapError(
                f"invalid id {id!r}",
                hint="ids are non-empty strings without control characters, e.g. 'c1' or 'A2.p1'",
            )

    @staticmethod
    def _check_status(status: str | None) -> None:
        if status is not None and status not in STATUSES:
            raise MapError(f"status must be one of {STATUSES} or None, not {status!r}")


def _clean(value: Any) -> Any:
    return clean_text(value) if isinstance(value, str) else value
