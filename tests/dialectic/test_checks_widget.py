"""Exercise graders (right answers pass, wrong ones get a hint) and the stance editor widget."""

from __future__ import annotations

import pytest

from argnb.dialectic import Argument, Case, Stance, camera_reference_backend, load_example
from argnb.dialectic.widget import StanceEditor, parse_stance, stance_text
from argnb.exercises.checks import dialectic as checks


def reference_admissible(target: Argument, on: str) -> str:
    from argnb.dialectic.novelty import normalise

    for rule in target.rules:
        if normalise(on) == normalise(rule.consequent):
            return "rebut" if rule.antecedent.strong else "neither"
    if any(normalise(on) == normalise(a) for a in target.Ass):
        return "undercut"
    return "neither"


def test_check_admissible():
    assert "all 9 cases right" in checks.check_admissible(reference_admissible)
    with pytest.raises(AssertionError, match=r"case 2: .* is 'neither'"):
        checks.check_admissible(lambda t, on: "rebut" if on not in t.Ass else "undercut")
    with pytest.raises(AssertionError, match="answer 'rebut', 'undercut' or 'neither'"):
        checks.check_admissible(lambda t, on: "maybe")


def test_check_grounded():
    assert "['a', 'c']" in checks.check_grounded({"a", "c"})
    full = {"a": "IN", "b": "OUT", "c": "IN", "d": "OUT", "e": "UNDEC", "f": "UNDEC", "g": "UNDEC"}
    checks.check_grounded(["a", "c"], full)
    with pytest.raises(AssertionError, match="should not be in"):
        checks.check_grounded({"a", "c", "e"})
    with pytest.raises(AssertionError, match="missing"):
        checks.check_grounded({"a"})
    with pytest.raises(AssertionError, match="1 label"):
        checks.check_grounded({"a", "c"}, {**full, "g": "OUT"})


def picnic():
    case = Case(
        issue="Should the class picnic be held in the park on Friday?",
        agents=[
            Stance(
                name="Planner",
                facts=["The park has a large lawn."],
                rules=[
                    "If a place has a large lawn and there is no evidence of rain, hold the picnic there."
                ],
            ),
            Stance(name="Caretaker", facts=["The forecast for Friday is heavy rain."]),
        ],
    )
    main = Argument.simple(
        [
            "The park has a large lawn.",
            "If a place has a large lawn and there is no evidence of rain, hold the picnic there.",
        ],
        "We should hold the picnic in the park.",
        ["There is no evidence of rain on Friday."],
    )
    undercut = Argument.simple(
        ["The forecast for Friday is heavy rain."], "It will rain on Friday."
    )
    return case, main, undercut, "There is no evidence of rain on Friday."


def test_check_undercut_case():
    case, main, undercut, on = picnic()
    assert "Caretaker undercuts Planner" in checks.check_undercut_case(case, main, undercut, on)
    with pytest.raises(AssertionError, match="needs an assumption"):
        checks.check_undercut_case(case, Argument.simple(main.premises(), main.claim), undercut, on)
    alien = Argument.simple(["Umbrellas are cheap."], "It will rain on Friday.")
    with pytest.raises(AssertionError, match="must come from its stance"):
        checks.check_undercut_case(case, main, alien, on)
    with pytest.raises(AssertionError, match="not admissible"):
        checks.check_undercut_case(case, main, undercut, "The park has a large lawn.")
    with pytest.raises(AssertionError, match="new issue"):
        checks.check_undercut_case(load_example("camera"), main, undercut, on)
    d = checks.undercut_dialogue(case, main, undercut, on)
    assert [a.kind for a in d.attacks] == ["undercut"] and d.labelling["A1"] == "OUT"
    assert len(d.to_map().edges("undercut")) == 1


def test_stance_text_round_trip():
    for stance in load_example("camera").agents + load_example("camera_values").agents:
        assert parse_stance(stance.name, stance_text(stance)) == stance
    assert parse_stance("X", "I care about price.").values == "I care about price."
    with pytest.raises(ValueError):
        parse_stance("X", "- just\n- a list")


def test_editor_runs_the_edited_case():
    editor = StanceEditor(load_example("camera"), camera_reference_backend())
    seen = []
    d = editor.run(on_turn=seen.append)
    assert d.outcome == "synthesis" and len(seen) == len(d.transcript.turns)
    assert "synthesis" in editor.status.value
    # a broken edit is reported in the widget, not raised
    editor.boxes[0].value = "facts: [unclosed"
    assert editor.run() is None and "color:#b00" in editor.status.value
    # editing a stance changes what the agents are told
    editor.boxes[0].value = "values: I only care about the price."
    backend = camera_reference_backend()
    editor.backend = lambda: backend
    editor.run()
    assert "I only care about the price." in backend.requests[0].messages[0].content
