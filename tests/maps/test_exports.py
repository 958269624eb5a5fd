"""AIF (OVA shape, read back and validated), Argdown and GraphML exports."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess

import jsonschema
import networkx as nx
import pytest

from argnb.maps import AIFError, ArgumentMap, aif_schema, validate_aif

from .conftest import XSS


def types_of(doc):
    return {n["nodeID"]: n["type"] for n in doc["AIF"]["nodes"]}


def test_camera_aif_reads_back_and_validates(camera_map, tmp_path):
    path = tmp_path / "camera.json"
    path.write_text(json.dumps(camera_map.to_aif(), indent=2))
    doc = json.loads(path.read_text())  # read back from disk
    jsonschema.validate(doc, aif_schema())  # our own schema of OVA's shape
    validate_aif(doc)  # ... plus the wiring rules
    assert set(doc) == {"AIF", "text"}
    aif = doc["AIF"]
    assert {"nodes", "edges", "locutions", "participants"} <= set(aif)
    kinds = [n["type"] for n in aif["nodes"]]
    assert {k: kinds.count(k) for k in set(kinds)} == {
        "I": 20,
        "RA": 5,
        "CA": 2,
        "L": 5,
        "YA": 27,
    }  # a YA per I, RA, CA
    assert [p["firstname"] for p in aif["participants"]] == ["AG1", "AG2"]
    t = types_of(doc)
    text = {n["nodeID"]: n["text"] for n in aif["nodes"]}
    # premise I → RA → conclusion I, e.g. "a is out of stock." → RA → "We should not buy a."
    into_ra = [
        (e["fromID"], e["toID"])
        for e in aif["edges"]
        if t[e["toID"]] == "RA" and t[e["fromID"]] == "I"
    ]
    ra = next(r for src, r in into_ra if text[src] == "a is out of stock.")
    out_of_ra = [e["toID"] for e in aif["edges"] if e["fromID"] == ra]
    assert [text[c] for c in out_of_ra if t[c] == "I"] == ["We should not buy a."]
    # attacker I → CA → target I: "We should not buy a." attacks "We should buy a."
    ca = [n for n, k in t.items() if k == "CA"]
    pairs = set()
    for c in ca:
        src = next(e["fromID"] for e in aif["edges"] if e["toID"] == c)
        dst = next(e["toID"] for e in aif["edges"] if e["fromID"] == c)
        pairs.add((text[src], text[dst]))
    assert pairs == {
        ("We should not buy a.", "We should buy a."),
        ("We should not buy camera b.", "We should buy camera b."),
    }
    # every L node is a locution of a participant, anchored by YA nodes
    assert all(text[loc["nodeID"]].startswith(("AG1: ", "AG2: ")) for loc in aif["locutions"])
    ya_texts = {text[n] for n, k in t.items() if k == "YA"}
    assert ya_texts == {"Asserting", "Arguing", "Disagreeing"}


def test_aif_round_trip_keeps_structure_texts_and_speakers(small_map):
    doc = small_map.to_aif()
    back = ArgumentMap.from_aif(json.loads(json.dumps(doc)))
    assert back.counts()["edges"]["undercut"] == 1 and back.counts()["edges"]["rebut"] == 1
    # AIF has no "assumption" node type: assumptions come back as premises (documented)
    assert back.counts()["nodes"]["premise"] == 3
    texts = {
        back.node(n)["text"]: back.node(n)["agent"]
        for n in back.nodes()
        if back.node(n)["kind"] != "argument"
    }
    assert texts["Detergents can harm children."] == "Staff"
    again = back.to_aif()
    assert sorted(types_of(again).values()) == sorted(types_of(doc).values())


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        (lambda d: d.pop("text"), "'text' is a required property"),
        (lambda d: d["AIF"].pop("locutions"), "'locutions' is a required property"),
        (lambda d: d["AIF"]["nodes"][0].update(type="XX"), "is not one of"),
        (
            lambda d: d["AIF"]["edges"].append({"edgeID": "99", "fromID": "1", "toID": "nope"}),
            "unknown node",
        ),
        (lambda d: d["AIF"]["locutions"].clear(), "has no locution entry"),
    ],
)
def test_invalid_aif_is_rejected_with_reasons(small_map, breakage, message):
    doc = copy.deepcopy(small_map.to_aif())
    validate_aif(doc)
    breakage(doc)
    with pytest.raises(AIFError) as err:
        validate_aif(doc)
    assert any(message in p for p in err.value.problems), err.value.problems


def test_a_ca_with_two_targets_is_rejected(small_map):
    doc = small_map.to_aif()
    t = types_of(doc)
    ca = next(n for n, k in t.items() if k == "CA")
    some_i = next(n for n, k in t.items() if k == "I")
    doc["AIF"]["edges"].append({"edgeID": "x", "fromID": ca, "toID": some_i})
    with pytest.raises(AIFError, match="exactly one target"):
        validate_aif(doc)


def test_camera_argdown(camera_map):
    text = camera_map.to_argdown()
    assert text.startswith('===\ntitle: "Which camera should we buy?"\n===')
    assert "[A1.c1]: We should buy a. #(AG1) #(OUT)\n  <- [A2.c1]" in text
    assert "[A4.c1]: We should not buy camera b. #(AG1) #(IN)" in text
    assert "<A2>: A2 (attack) by AG2 #(AG2) #(IN)" in text
    assert (
        "<A1>\n\n(1) [A1.r1.p1]\n(2) [A1.r1.p2]\n(3) [A1.r1.p3]\n(4) [A1.r1.p4]\n----\n(5) [A1.c1]"
        in text
    )


def test_argdown_support_undercut_and_escaping(small_map):
    small_map.add_premise("evil", f"{XSS} [x] #tag")
    text = small_map.to_argdown()
    assert "[c3]: Staff should clean. #(Staff)\n  <+ [c2]" in text
    assert "[c1]: Students should clean. #(Students) #(OUT)\n  <- [c3]" in text
    assert "<A1>: A1 #(Students) #(OUT)\n  <_ [c2]" in text
    assert "[a1]: No evidence that cleaning is unsafe. #(Students) #(assumption)" in text
    assert r"[evil]: \<img src\=x onerror\=alert(1)\> \[x\] \#tag" in text


def _argdown_cli() -> str | None:
    return os.environ.get("ARGDOWN_CLI") or shutil.which("argdown")


@pytest.mark.skipif(
    _argdown_cli() is None, reason="@argdown/cli is not installed (set ARGDOWN_CLI)"
)
def test_argdown_parses_with_the_reference_parser(camera_map, small_map, tmp_path):
    small_map.add_premise("evil", f"{XSS} [x] #tag @me *b* _i_")
    for name, m in (("camera", camera_map), ("small", small_map)):
        src = tmp_path / f"{name}.argdown"
        src.write_text(m.to_argdown())
        out = subprocess.run(
            [_argdown_cli(), "json", str(src), "--stdout", "--silent"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
        data = json.loads(out.stdout[: out.stdout.rindex("}") + 1])
        relations = {(r["from"], r["relationType"], r["to"]) for r in data["relations"]}
        if name == "camera":
            assert len(data["arguments"]) == 5 and len(data["statements"]) == 20
            assert relations == {("A2.c1", "attack", "A1.c1"), ("A4.c1", "attack", "A3.c1")}
        else:
            assert ("c2", "undercut", "A1") in relations and ("c2", "support", "c3") in relations
            assert data["statements"]["evil"]["members"][0]["text"].startswith(
                f"{XSS} [x] #tag @me"
            )


def test_graphml_reads_back(camera_map, tmp_path):
    path = tmp_path / "camera.graphml"
    text = camera_map.to_graphml(path)
    assert text.startswith("<?xml") and path.read_text() == text
    g = nx.read_graphml(path)
    assert g.number_of_nodes() == 25 and g.number_of_edges() == 22
    assert g.nodes["A1"]["kind"] == "argument" and g.nodes["A1"]["status"] == "OUT"
    assert g.nodes["A1.c1"]["text"] == "We should buy a."
    kinds = sorted(d["kind"] for _, _, d in g.edges(data=True))
    assert kinds.count("rebut") == 2 and kinds.count("premise") == 15
