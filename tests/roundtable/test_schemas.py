"""The answer schemas the roles send are bounded (a small model cannot run away) and the
module docstrings' examples run."""

from __future__ import annotations

import doctest
import importlib

import pytest

from argnb.llm.answer import unbounded
from argnb.roundtable.schemas import AgendaAnswer, analysis_schema, step_schema

NAMES = ("Deliberator 1", "Deliberator 2", "Ann")


@pytest.mark.parametrize(
    "schema", [AgendaAnswer, step_schema(NAMES), analysis_schema(NAMES)], ids=lambda s: s.__name__
)
def test_every_answer_schema_is_bounded_and_flat(schema) -> None:
    assert unbounded(schema) == []
    js = schema.model_json_schema()
    assert "$defs" not in js and "description" not in js


def test_the_moderator_can_only_name_people_at_the_table() -> None:
    js = step_schema(NAMES).model_json_schema()
    assert js["properties"]["next_speaker"]["enum"] == list(NAMES)
    by = analysis_schema(NAMES).model_json_schema()["properties"]["argument_map"]["items"]
    assert by["properties"]["by"]["enum"] == [*NAMES, "unclear"]


@pytest.mark.parametrize(
    "module",
    ["__init__", "rules", "analyzer", "session"],
)
def test_doctests(module: str) -> None:
    name = "argnb.roundtable" if module == "__init__" else f"argnb.roundtable.{module}"
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0


def test_every_public_name_resolves() -> None:
    import argnb.roundtable as rt

    for name in rt.__all__:
        assert getattr(rt, name) is not None, name
