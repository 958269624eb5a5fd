"""GraphML export (for yEd, Gephi, Cytoscape or ``networkx.read_graphml``).

GraphML attributes must be strings, numbers or booleans, so empty values become ``""``; the edge
``kind`` and node ``kind``/``text``/``agent``/``status``/``move`` survive a round trip through
``networkx.read_graphml``. Texts are written as :mod:`argnb.maps.clean` normalises them: XML 1.0
cannot hold ``\x00`` and other control characters at all (the file would not parse), and every
XML parser reads ``\r`` as ``\n``.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

import networkx as nx

if TYPE_CHECKING:
    from argnb.maps.graph import ArgumentMap


def graphml_graph(m: ArgumentMap) -> nx.MultiDiGraph:
    """A copy of the map's graph with GraphML-safe attribute values."""
    m = m.cleaned()
    g = nx.MultiDiGraph()
    g.graph["title"] = m.title
    for n, d in m.graph.nodes(data=True):
        g.add_node(str(n), **{k: ("" if v is None else v) for k, v in d.items()})
    for u, v, d in m.graph.edges(data=True):
        g.add_edge(str(u), str(v), **{k: ("" if x is None else x) for k, x in d.items()})
    return g


def to_graphml(m: ArgumentMap, path: str | Path | None = None) -> str:
    """GraphML text of the map; also written to ``path`` when given."""
    buf = io.BytesIO()
    nx.write_graphml(graphml_graph(m), buf, encoding="utf-8")
    text = buf.getvalue().decode("utf-8")
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text
