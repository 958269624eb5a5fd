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

from argnb.errors import ArgnbError
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


# -- issue 9: exports that did not read back ------------------------------------------------------


def _parse_argdown(text: str, tmp_path) -> dict:
    src = tmp_path / "m.argdown"
    src.write_text(text, encoding="utf-8")
    out = subprocess.run(
        [_argdown_cli(), "json", str(src), "--stdout", "--silent"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0 and out.stdout.strip(), out.stdout[-2000:] + out.stderr[-2000:]
    return json.loads(out.stdout[: out.stdout.rindex("}") + 1])


HOSTILE = {
    "url": "see http://x.org now",
    "comment": "a /* b */ c <!-- d --> e // f",
    "backslashes": "C:\\Users\\new \\[x\\] \\",
    "shortcodes": "e.g. .A. :A: :smile: a.b.c 1:2:3",
    "front": "=== not front matter ===",
    "data": "{not: data} #(not a tag) @[not] <not>",
}


def test_argdown_escapes_comments_backslashes_and_shortcodes():
    m = ArgumentMap("t")
    m.add_claim("c", HOSTILE["url"], agent="AG1")
    m.add_claim("d", HOSTILE["backslashes"])
    text = m.to_argdown()
    assert "[c]: see http:\\//x.org now #(AG1)" in text  # "//" no longer starts a comment
    assert r"[d]: C:\\Users\\new \\\[x\\\] \\" in text  # every backslash doubled


@pytest.mark.skipif(
    _argdown_cli() is None, reason="@argdown/cli is not installed (set ARGDOWN_CLI)"
)
def test_argdown_hostile_texts_and_title_read_back(tmp_path):
    m = ArgumentMap("Title === with === equals")
    for key, text in HOSTILE.items():
        m.add_claim(key, text, agent="AG (1)")
    m.add_rebut("url", "comment")
    data = _parse_argdown(m.to_argdown(), tmp_path)
    assert len(data["statements"]) == len(HOSTILE)  # the title no longer ends the front matter
    for key, text in HOSTILE.items():
        member = data["statements"][key]["members"][0]
        assert member["text"] == f"{text} #(AG [1])", key  # nothing lost, agent tag kept
        assert member["tags"] == ["AG [1]"]
    assert data["sections"][0]["title"] == "Title === with === equals"
    assert ("url", "attack", "comment") in {
        (r["from"], r["relationType"], r["to"]) for r in data["relations"]
    }


CONTROL = "a\x00b\x0bc\x1bd\ufffee\uffff\ud800f\r\ng\rh\ti"
CLEANED = "a\ufffdb\ufffdc\ufffdd\ufffde\ufffd\ufffdf\ng\nh\ti"


def test_graphml_with_control_characters_parses(tmp_path):
    import xml.etree.ElementTree as ET

    m = ArgumentMap(CONTROL)
    m.add_claim("c1", CONTROL, agent=CONTROL)
    path = tmp_path / "m.graphml"
    m.to_graphml(path)
    ET.parse(path)  # well-formed XML 1.0
    g = nx.read_graphml(path)
    assert g.nodes["c1"]["text"] == CLEANED and g.nodes["c1"]["agent"] == CLEANED
    assert g.graph["title"] == CLEANED


def test_aif_with_control_characters_writes_utf8_and_reads_back():
    m = ArgumentMap()
    m.add_move("m1", CONTROL, CONTROL)
    m.add_claim("c1", CONTROL, move="m1")
    raw = json.dumps(m.to_aif(), ensure_ascii=False).encode("utf-8")  # no UnicodeEncodeError
    back = ArgumentMap.from_aif(json.loads(raw))
    assert [back.node(n)["text"] for n in back.nodes()] == [CLEANED]
    assert list(back.moves.values()) == [{"speaker": CLEANED, "text": CLEANED}]


def test_html_page_with_control_characters_encodes(tmp_path):
    m = ArgumentMap(CONTROL)
    m.add_claim("c1", CONTROL, agent=CONTROL)
    page = m.save_html(tmp_path / "m.html").read_text(encoding="utf-8")
    assert "\x00" not in page and "\ud800" not in page


def test_a_premise_less_argument_exports_valid_aif():
    m = ArgumentMap()
    m.add_claim("c", "A fact.")
    m.add_claim("x", "No, it is not.")
    m.add_argument("A", conclusion="c")  # a rule with no antecedent (a model can write one)
    m.add_undercut("x", "A")
    back = ArgumentMap.from_aif(validate_aif(m.to_aif()))
    assert back.counts() == {"nodes": {"premise": 2}, "edges": {"rebut": 1}}  # documented


def test_bad_ids_are_refused_and_map_errors_join_the_argnb_tree():
    from argnb.errors import ArgnbError, MapError

    m = ArgumentMap()
    for bad in ("", "a\x00b", "\ud800", 3):
        with pytest.raises(MapError, match="invalid id") as err:
            m.add_claim(bad, "text")
        assert err.value.hint
    assert issubclass(MapError, ArgnbError) and issubclass(MapError, ValueError)
    assert issubclass(AIFError, MapError)
    with pytest.raises(ArgnbError, match="invalid AIF"):
        validate_aif({"AIF": {}})


def test_maps_modules_have_no_import_cycle():
    """No module of argnb.maps imports (even inside a function) a module that imports it back."""
    import ast
    from pathlib import Path

    import argnb.maps

    folder = Path(argnb.maps.__file__).parent
    imports: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        name = f"argnb.maps.{path.stem}" if path.stem != "__init__" else "argnb.maps"
        found = set()
        tree = ast.parse(path.read_text())
        guarded = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for n in ast.walk(node)
        }
        for node in ast.walk(tree):
            if id(node) in guarded:
                continue
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
        imports[name] = {x for x in found if x.startswith("argnb.maps")}
    assert len(imports) >= 10
    cycles = [(a, b) for a, deps in imports.items() for b in deps if a in imports.get(b, ())]
    assert not cycles, cycles


def test_argdown_docstring_examples():
    import doctest

    import argnb.maps.argdown

    result = doctest.testmod(argnb.maps.argdown)
    assert result.attempted > 0 and result.failed == 0


def test_save_chooses_the_format_by_suffix_and_refuses_an_unknown_one(camera_map, tmp_path):
    from argnb.maps.graph import SAVE_FORMATS

    written = {s: camera_map.save(tmp_path / f"m{s}") for s in SAVE_FORMATS if s != ".png"}
    validate_aif(json.loads(written[".json"].read_text(encoding="utf-8")))
    assert written[".argdown"].read_text(encoding="utf-8") == camera_map.to_argdown()
    assert nx.read_graphml(written[".graphml"]).number_of_nodes() > 0
    assert "<html" in written[".html"].read_text(encoding="utf-8").lower()
    assert camera_map.save(tmp_path / "x.txt", "argdown").read_text(encoding="utf-8")
    with pytest.raises(ArgnbError, match="cannot tell the map format"):
        camera_map.save(tmp_path / "m.svg")
