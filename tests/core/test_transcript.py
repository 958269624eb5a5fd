"""Typed payloads, costs summed from turns, and transcripts of the first format still loading."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field

from argnb.llm import Usage
from argnb.transcript import Cost, Payload, Rejected, Transcript, Turn, payload_class

FIXTURES = Path(__file__).parent / "fixtures"


class Note(Payload):
    kind: str = "test.note"
    score: float
    tags: list[str] = Field(default_factory=list)


def test_payloads_are_typed_and_read_like_their_json():
    t = Turn(speaker="A", payload={"kind": "test.note", "score": 0.5, "tags": ["x"]})
    assert isinstance(t.payload, Note) and t.payload.score == 0.5
    assert t.payload["tags"] == ["x"] and set(t.payload) == {"score", "tags"}
    with pytest.raises(KeyError):
        t.payload["nope"]
    assert Turn(speaker="A", payload={"vote": 1}).payload["vote"] == 1  # an untyped note


def test_a_kind_is_registered_once():
    with pytest.raises(TypeError):

        class Other(Payload):  # the same kind as Note, from another class
            kind: str = "test.note"


def test_round_trip_keeps_types_and_costs(tmp_path):
    tr = Transcript(kind="test", title="t")
    tr.add(speaker="A", payload=Note(score=1.0), usage=Usage(prompt_tokens=3), calls=2, backend="b")
    tr.add(speaker="B", payload=Rejected(problems=["p"]), valid=False, latency_s=0.5)
    back = Transcript.load(tr.save(tmp_path / "t.json"))
    assert back == tr and isinstance(back.turns[0].payload, Note)
    assert back.cost == Cost(usage=Usage(prompt_tokens=3), calls=2, latency_s=0.5)


def test_a_turn_that_names_a_backend_counts_one_call_unless_it_says_otherwise():
    assert Turn(speaker="A", backend="local").calls == 1
    assert Turn(speaker="A", backend="local", calls=3).calls == 3
    assert Turn(speaker="protocol").calls == 0


@given(st.dictionaries(st.text(min_size=1).filter(lambda k: k != "kind"), st.integers()))
def test_any_untyped_payload_survives_a_round_trip(data):
    tr = Transcript(kind="test", turns=[Turn(speaker="A", payload=data)])
    back = Transcript.from_json(tr.to_json())
    assert dict(back.turns[0].payload.items()) == data


def test_a_first_format_dialogue_loads_typed_and_gives_the_same_labelling():
    from argnb.dialectic.payloads import ArgumentMove, AttackMove
    from argnb.dialectic.protocol import Dialogue
    from argnb.dialectic.record import DialogueRecord

    d = Dialogue.load(str(FIXTURES / "dialectic_camera_v1.json"))
    kinds = {type(t.payload) for t in d.transcript.turns}
    assert {ArgumentMove, AttackMove} <= kinds
    record = DialogueRecord.of(d.transcript)
    assert (
        record.labelling()
        == d.labelling
        == {"A1": "OUT", "A2": "IN", "A3": "OUT", "A4": "IN", "A5": "IN"}
    )
    assert d.transcript.calls == d.transcript.outcome["model_calls"] == 9
    assert len(d.to_map().graph) > 0


def test_a_first_format_ensemble_loads_as_the_same_result():
    from argnb.fallacy.ensemble import EnsembleResult
    from argnb.fallacy.payloads import BaselineAnswer, DeliberationTurn

    tr = Transcript.load(FIXTURES / "fallacy_ensemble_v1.json")
    assert [type(t.payload) for t in tr.turns] == [BaselineAnswer] * 2 + [DeliberationTurn] * 2
    r = EnsembleResult(tr)
    assert (r.label, r.resolution, r.calls, r.rounds) == (1, "consensus", 4, 1)
    assert [m.label for m in r.members] == [1, 0] and r.disagree


def test_unknown_kinds_fall_back_to_plain_notes():
    assert payload_class("nosuchmodule.thing") is Payload
