"""Argument maps: one graph model (networkx) with an interactive view and three exports.

The API, in full::

    m = ArgumentMap("title")
    m.add_claim(id, text, agent=..., status=..., move=...)      # also add_premise, add_assumption
    m.add_argument(id, premises=[...], assumptions=[...], conclusion=id, agent=..., status=...)
    m.add_support(src, dst); m.add_rebut(src, dst); m.add_undercut(src, argument_id, on=assumption)
    m.add_move(id, speaker, text)                                # dialogue turns → AIF locutions
    m.set_status({id: "IN" | "OUT" | "UNDEC"})

    m.show(color_by="status" | "agent")      # inline in Jupyter: interactive when trusted,
                                             # a static picture in untrusted/exported notebooks
    m.to_html() / m.save_html(path)          # standalone page, works offline, all text escaped
    m.to_png() → bytes;  m.to_text() → str   # static picture and plain-text outline
    m.to_aif() → dict;  ArgumentMap.from_aif(doc);  validate_aif(doc)
    m.to_argdown() → str;  m.to_graphml(path) → str
    m.graph                                   # the networkx.MultiDiGraph itself

Every export reads back: texts pass one documented normalisation first (``argnb.maps.clean``).

Protocols build maps from their transcripts (``argnb.dialectic.mapping.dialogue_map``); maps never
call a model.
"""

from __future__ import annotations

from argnb.errors import AIFError, MapError
from argnb.maps.aif import aif_schema, to_aif, validate_aif
from argnb.maps.argdown import to_argdown
from argnb.maps.clean import clean_text
from argnb.maps.exports import to_graphml
from argnb.maps.graph import ATTACK_KINDS, EDGE_KINDS, NODE_KINDS, STATUSES, ArgumentMap
from argnb.maps.view import to_html, to_pyvis

from_aif = ArgumentMap.from_aif

__all__ = [
    "ATTACK_KINDS",
    "EDGE_KINDS",
    "NODE_KINDS",
    "STATUSES",
    "AIFError",
    "ArgumentMap",
    "MapError",
    "aif_schema",
    "clean_text",
    "from_aif",
    "to_aif",
    "to_argdown",
    "to_graphml",
    "to_html",
    "to_pyvis",
    "validate_aif",
]
