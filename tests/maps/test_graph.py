"""The generic map model."""

from __future__ import annotations

import pytest

from argnb.maps import ArgumentMap, MapError


def test_small_map_has_every_kind(small_map):
    c = small_map.counts()
    assert c["nodes"] == {"premise": 2, "assumption": 1, "claim": 3, "argument": 2}
    assert c["edges"] == {
        "premise": 2,
        "assumption": 1,
        "conclusion": 2,
        "undercut": 1,
        "rebut": 1,
        "support": 1,
    }
    assert small_map.agents() == ["Students", "Staff"]
    # an argument as the source of an attack stands for its conclusion
    [(u, v, d)] = small_map.edges("undercut")
    assert (u, v, d["on"]) == ("c2", "A1", "a1")
    assert small_map.conclusion_of("A1") == "c1"


def test_inconsistent_operations_are_refused():
    m = ArgumentMap()
    m.add_premise("p", "x")
    with pytest.raises(MapError, match="no node 'c'"):
        m.add_argument("a", premises=["p"], conclusion="c")
    m.add_claim("c", "y")
    m.add_argument("a", premises=["p"], conclusion="c")
    with pytest.raises(MapError, match="expected one of"):
        m.add_undercut("p", "c")  # an undercut targets an inference
    with pytest.raises(MapError, match="status"):
        m.set_status({"c": "MAYBE"})
    with pytest.raises(MapError, match="statement kind"):
        m.add_statement("z", "z", kind="argument")
    m.set_status({"c": "IN", "a": "IN"})
    assert m.node("c")["status"] == "IN"


def test_dialogue_map_shape_and_colours(camera_map):
    c = camera_map.counts()
    assert c["nodes"] == {"premise": 15, "claim": 5, "argument": 5}
    assert c["edges"] == {"premise": 15, "conclusion": 5, "rebut": 2}
    status = {n: camera_map.node(n)["status"] for n in camera_map.nodes("argument")}
    assert status == {"A1": "OUT", "A2": "IN", "A3": "OUT", "A4": "IN", "A5": "IN"}
    rebuts = {(u, v) for u, v, _ in camera_map.edges("rebut")}
    assert rebuts == {("A2.c1", "A1.c1"), ("A4.c1", "A3.c1")}
    assert camera_map.node("A5.c1")["label"] == "final answer"
    assert len(camera_map.moves) == 5


def test_dialogue_map_of_an_undercut():
    from argnb.dialectic import Argument, Case, Stance, run_dialogue
    from argnb.llm.scripted import ScriptedBackend

    clean = Argument.simple(
        ["Cleaning teaches responsibility."],
        "Students should clean.",
        ["There is no evidence that cleaning is unsafe for students."],
    )
    unsafe = Argument.simple(["Detergents can harm children."], "Cleaning is unsafe for students.")

    def script(req):
        if req.schema["title"] == "MainArgumentAnswer":
            return {"argument": clean.model_dump()}
        if "You are Staff" in req.messages[0].content:
            return {
                "can_defeat": "YES",
                "attack": "undercut",
                "target": "evidence that cleaning is unsafe",
                "argument": unsafe.model_dump(),
            }
        return {"can_defeat": "NO", "attack": "none", "target": "", "argument": None}

    case = Case(
        issue="Who cleans?",
        agents=[Stance(name="Students", values="v"), Stance(name="Staff", values="w")],
    )
    d = run_dialogue(ScriptedBackend(script), case)
    m = d.to_map()
    [(u, v, e)] = m.edges("undercut")
    assert (u, v) == ("A2.c1", "A1") and m.node(e["on"])["kind"] == "assumption"
    assert d.labelling["A1"] == "OUT"
