"""Argument and stance shapes: bounded, validated, and the example data."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from argnb.dialectic import EXAMPLES, Argument, AttackAnswer, Case, load_example
from argnb.dialectic.schemas import MAX_TEXT, MainArgumentAnswer
from argnb.errors import ArgnbError


def test_conc_and_ass_are_derived_and_serialised():
    arg = Argument.simple(["p"], "q", ["no evidence of r"])
    assert arg.Conc == ["q"] and arg.Ass == ["no evidence of r"]
    dumped = arg.model_dump()
    assert dumped["Conc"] == ["q"] and dumped["Ass"] == ["no evidence of r"]
    # a dump validates again (Conc/Ass are ignored on input)
    assert Argument.model_validate(dumped) == arg


def test_lengths_are_bounded():
    with pytest.raises(ValidationError):
        Argument.simple(["x" * (MAX_TEXT + 1)], "q")
    with pytest.raises(ValidationError):
        Argument.simple([f"p{i}" for i in range(6)], "q")
    with pytest.raises(ValidationError):
        Argument(rules=[])


def test_model_facing_schemas_are_plain_and_bounded():
    for model in (MainArgumentAnswer, AttackAnswer):
        schema = model.model_json_schema()
        text = str(schema)
        assert "$ref" not in text and "$defs" not in text and "description" not in text
        assert schema["title"] == model.__name__
        assert "'maxLength': 200" in text and "'maxItems'" in text


def test_examples_load():
    for name in EXAMPLES:
        case = load_example(name)
        assert len(case.agents) == 2 and case.issue
    camera = load_example("camera")
    assert "a is out of stock." in camera.agents[1].facts
    assert camera.agents[0].rules[1] == "If something is over budget, we should not buy it."


def test_case_yaml_round_trip_and_errors(tmp_path):
    case = load_example("school_cleaning")
    again = Case.from_yaml(case.to_yaml())
    assert again == case
    bad = tmp_path / "bad.yaml"
    bad.write_text("issue: x\nagents: [{name: A, facts: [f]}]\n")
    with pytest.raises(ArgnbError, match="not a valid stances file"):
        Case.load(bad)
    with pytest.raises(ArgnbError, match="no stances file"):
        Case.load(tmp_path / "missing.yaml")
    with pytest.raises(ValidationError, match="different names"):
        Case.model_validate({"issue": "x", "agents": [{"name": "A", "values": "v"}] * 2})
