"""AIF JSON in the shape OVA writes (``{"AIF": {...}, "text": ...}``), and back.

Mapping from the argument map:

- every statement (claim, premise, assumption) → an **I** node;
- every argument (inference) → an **RA** node: premise I → RA → conclusion I;
- a support edge → a fresh RA between the two statements;
- a rebut → a **CA** node: attacker I → CA → attacked I; an undercut → attacker I → CA → RA;
- every dialogue move → an **L** node (``"speaker: text"``) with a locution and a participant; it is
  anchored by **YA** nodes to what it put forward: "Asserting" → I, "Arguing" → RA,
  "Disagreeing" → CA.

AIF has no node type for an *assumption* or for a grounded status, so reading a file back gives
premises for assumptions and no statuses; the structure, the texts and who said what survive.
Nor has it an inference without premises: such an argument is written as its conclusion (an I
node asserted by the argument's move), and an undercut of it as a conflict with that conclusion.
Texts are written as :mod:`argnb.maps.clean` normalises them (as in every export), so a file
always encodes as UTF-8 and reads back to the same strings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from argnb.errors import AIFError

if TYPE_CHECKING:
    from argnb.maps.graph import ArgumentMap

RA_TEXT = "Default Inference"
CA_TEXT = "Default Conflict"
YA_TEXT = {"I": "Asserting", "RA": "Arguing", "CA": "Disagreeing"}


@cache
def aif_schema() -> dict[str, Any]:
    """Our JSON schema for OVA-shaped AIF."""
    text = resources.files("argnb.maps").joinpath("aif_schema.json").read_text("utf-8")
    return json.loads(text)


def to_aif(m: ArgumentMap, *, timestamp: str | None = None) -> dict[str, Any]:
    """The map as an OVA-shaped AIF document (a dict ready for ``json.dump``)."""
    m = m.cleaned()
    ts = timestamp or datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    ids: dict[str, str] = {}

    def node(kind: str, text: str, **extra: Any) -> str:
        nid = str(len(nodes) + 1)
        nodes.append({"nodeID": nid, "text": text, "type": kind, "timestamp": ts, **extra})
        return nid

    def edge(a: str, b: str) -> None:
        edges.append({"edgeID": str(len(edges) + 1), "fromID": a, "toID": b, "formEdgeID": None})

    # AIF has no inference without premises: such an argument is its conclusion, asserted
    bare = {
        n
        for n in m.nodes("argument")
        if not any(
            d["kind"] in ("premise", "assumption") for _, _, d in m.graph.in_edges(n, data=True)
        )
    }
    anchors: list[tuple[str, str, str]] = []  # (move, AIF type, node id)
    for n, d in m.graph.nodes(data=True):
        if n in bare:
            continue
        if d["kind"] == "argument":
            ids[n] = node("RA", RA_TEXT, scheme=RA_TEXT)
            typ = "RA"
        else:
            ids[n] = node("I", d.get("text", ""))
            typ = "I"
        if d.get("move"):
            anchors.append((d["move"], typ, ids[n]))
    for n in bare:
        ids[n] = ids[m.conclusion_of(n)]
        if m.graph.nodes[n].get("move"):
            anchors.append((m.graph.nodes[n]["move"], "I", ids[n]))
    for u, v, d in m.graph.edges(data=True):
        kind = d["kind"]
        if kind == "conclusion" and u in bare:
            continue
        if kind in ("premise", "assumption", "conclusion"):
            edge(ids[u], ids[v])
        elif kind == "support":
            ra = node("RA", RA_TEXT, scheme=RA_TEXT)
            edge(ids[u], ra)
            edge(ra, ids[v])
            if d.get("move"):
                anchors.append((d["move"], "RA", ra))
        else:  # rebut, undercut
            ca = node("CA", CA_TEXT, scheme=CA_TEXT)
            edge(ids[u], ca)
            edge(ca, ids[v])
            if d.get("move"):
                anchors.append((d["move"], "CA", ca))

    participants: list[dict[str, Any]] = []
    person: dict[str, str] = {}
    locutions: list[dict[str, Any]] = []
    lnode: dict[str, str] = {}
    for mid, mv in m.moves.items():
        speaker = mv["speaker"]
        if speaker not in person:
            person[speaker] = str(len(participants) + 1)
            participants.append(
                {"participantID": person[speaker], "firstname": speaker, "surname": ""}
            )
        lnode[mid] = node("L", f"{speaker}: {mv.get('text', '')}")
        locutions.append(
            {
                "nodeID": lnode[mid],
                "personID": person[speaker],
                "timestamp": ts,
                "start": None,
                "end": None,
                "source": None,
            }
        )
    for mid, typ, target in dict.fromkeys(anchors):
        if mid in lnode:
            ya = node("YA", YA_TEXT[typ])
            edge(lnode[mid], ya)
            edge(ya, target)
    text = "\n".join(f"{mv['speaker']}: {mv.get('text', '')}" for mv in m.moves.values())
    return {
        "AIF": {
            "nodes": nodes,
            "edges": edges,
            "schemefulfillments": [],
            "descriptorfulfillments": [],
            "participants": participants,
            "locutions": locutions,
        },
        "text": text or m.title,
    }


def validate_aif(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Check ``doc`` against our schema and AIF's wiring rules; return it or raise AIFError.

    Wiring: edge ends exist; an RA has at least one premise (I → RA) and exactly one conclusion
    (RA → I); a CA has one attacker I and one target (I or RA); a YA comes from an L
    and points to an I, RA or CA; every L node has a locution whose person is a participant.
    """
    import jsonschema

    validator = jsonschema.Draft202012Validator(aif_schema())
    problems = [
        f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}"
        for e in validator.iter_errors(doc)
    ]
    if problems:
        raise AIFError(problems)
    aif = doc["AIF"]
    types = {n["nodeID"]: n["type"] for n in aif["nodes"]}
    if len(types) != len(aif["nodes"]):
        problems.append("duplicate nodeID")
    ins: dict[str, list[str]] = {k: [] for k in types}
    outs: dict[str, list[str]] = {k: [] for k in types}
    for e in aif["edges"]:
        a, b = e["fromID"], e["toID"]
        if a not in types or b not in types:
            problems.append(f"edge {e['edgeID']} joins unknown node(s) {a!r} → {b!r}")
            continue
        outs[a].append(types[b])
        ins[b].append(types[a])
    for nid, t in types.items():
        i, o = ins[nid], outs[nid]
        if t == "RA":
            if not [x for x in i if x == "I"]:
                problems.append(f"RA {nid} has no premise (I → RA)")
            if [x for x in o if x != "YA"].count("I") != 1:
                problems.append(f"RA {nid} needs exactly one conclusion (RA → I)")
        elif t == "CA":
            if [x for x in i if x != "YA"] != ["I"]:
                problems.append(f"CA {nid} needs exactly one attacker (I → CA)")
            if len(o) != 1 or o[0] not in ("I", "RA"):
                problems.append(f"CA {nid} needs exactly one target (CA → I or RA)")
        elif t == "YA":
            if "L" not in i:
                problems.append(f"YA {nid} is not anchored in a locution (L → YA)")
            if not any(x in ("I", "RA", "CA") for x in o):
                problems.append(f"YA {nid} anchors nothing (YA → I/RA/CA)")
    people = {str(p["participantID"]) for p in aif["participants"]}
    spoken = {loc["nodeID"]: str(loc["personID"]) for loc in aif["locutions"]}
    for nid, t in types.items():
        if t == "L":
            if nid not in spoken:
                problems.append(f"L {nid} has no locution entry")
            elif spoken[nid] not in people:
                problems.append(f"L {nid} is spoken by unknown participant {spoken[nid]!r}")
    if problems:
        raise AIFError(problems)
    return dict(doc)


def read_aif(doc: Mapping[str, Any], into: ArgumentMap) -> ArgumentMap:
    """Read an OVA-shaped AIF document into the empty map ``into`` and return it.

    ``ArgumentMap.from_aif(doc)`` (also ``argnb.maps.from_aif``) is the usual way in; the map is
    passed in so that this module never imports the graph module back.

    I nodes that some RA concludes become claims, the other I nodes premises; RA → arguments;
    CA → rebut (onto an I) or undercut (onto an RA); L nodes → moves, and the YA anchors tell
    which statements and arguments each speaker put forward.
    """
    validate_aif(doc)
    aif = doc["AIF"]
    nodes = {n["nodeID"]: n for n in aif["nodes"]}
    ins: dict[str, list[str]] = {k: [] for k in nodes}
    outs: dict[str, list[str]] = {k: [] for k in nodes}
    for e in aif["edges"]:
        outs[e["fromID"]].append(e["toID"])
        ins[e["toID"]].append(e["fromID"])
    people = {str(p["participantID"]): p["firstname"] for p in aif["participants"]}
    speaker = {loc["nodeID"]: people.get(str(loc["personID"]), "") for loc in aif["locutions"]}
    move_of: dict[str, str] = {}
    for nid, n in nodes.items():
        if n["type"] == "YA":
            src = next((x for x in ins[nid] if nodes[x]["type"] == "L"), None)
            for t in outs[nid]:
                if src is not None:
                    move_of[t] = f"L{src}"

    m = into
    for nid, n in nodes.items():
        if n["type"] == "L":
            who = speaker.get(nid, "")
            text = n["text"][len(who) + 2 :] if n["text"].startswith(f"{who}: ") else n["text"]
            m.add_move(f"L{nid}", who, text)

    def agent_of(nid: str) -> str | None:
        mv = move_of.get(nid)
        return m.moves[mv]["speaker"] if mv in m.moves else None

    concluded = {t for nid, n in nodes.items() if n["type"] == "RA" for t in outs[nid]}
    for nid, n in nodes.items():
        if n["type"] == "I":
            kind = "claim" if nid in concluded else "premise"
            m.add_statement(
                f"I{nid}", n["text"], kind=kind, agent=agent_of(nid), move=move_of.get(nid)
            )
    for nid, n in nodes.items():
        if n["type"] == "RA":
            prem = [f"I{x}" for x in ins[nid] if nodes[x]["type"] == "I"]
            concl = next(f"I{x}" for x in outs[nid] if nodes[x]["type"] == "I")
            m.add_argument(
                f"RA{nid}",
                premises=prem,
                conclusion=concl,
                agent=agent_of(nid),
                move=move_of.get(nid),
                label=f"RA{nid}",
            )
    for nid, n in nodes.items():
        if n["type"] == "CA":
            src = next(f"I{x}" for x in ins[nid] if nodes[x]["type"] == "I")
            tgt = outs[nid][0]
            if nodes[tgt]["type"] == "RA":
                m.add_undercut(src, f"RA{tgt}", move=move_of.get(nid))
            else:
                m.add_rebut(src, f"I{tgt}", move=move_of.get(nid))
    return m
