"""The one agent turn: what it returns, what it records, what it counts, what it lets through."""

from __future__ import annotations

import pytest
from pydantic import Field

from argnb.agents import RAW_LIMIT, Agent, parse_spec
from argnb.errors import (
    ArgnbError,
    AuthenticationError,
    BackendError,
    BackendTimeout,
    BackendUnavailable,
    ModelNotFound,
)
from argnb.llm import ScriptedBackend
from argnb.llm.answer import Answer
from argnb.transcript import Payload, Rejected


class Vote(Answer):
    vote: int = Field(ge=0, le=1)
    reason: str = Field(max_length=40)


class VotePayload(Payload):
    kind: str = "test.vote"
    vote: int


def ok(vote: int = 1) -> dict:
    return {"vote": vote, "reason": "because"}


def odd_only(v: Vote) -> list[str]:
    return [] if v.vote == 1 else ["vote 1 here"]


def test_a_valid_answer_is_one_turn_with_its_payload_text_and_cost():
    agent = Agent("Ada", ScriptedBackend([ok()]), system="You vote.")
    r = agent.respond("Vote.", Vote, role="vote", payload=lambda v: VotePayload(vote=v.vote))
    assert r.valid and r.value.vote == 1 and len(r.turns) == 1
    t = r.turn
    assert (t.speaker, t.role, t.valid, t.calls) == ("Ada", "vote", True, 1)
    assert t.payload.vote == 1 and t.payload["vote"] == 1 and t.backend == "scripted"
    assert t.usage.prompt_tokens > 0 and r.cost.calls == 1
    assert agent.backend.requests[0].messages[0].content.startswith("You vote.")


def test_a_schema_repair_is_counted_on_the_same_turn():
    b = ScriptedBackend(['{"vote": 5, "reason": "x"}', ok()])
    r = Agent("Ada", b).respond("Vote.", Vote)
    assert r.valid and len(r.turns) == 1 and r.turn.calls == 2 and len(b.requests) == 2


def test_a_rule_check_gets_one_repair_and_every_attempt_is_a_turn():
    b = ScriptedBackend([ok(0), ok(1)])
    r = Agent("Ada", b).respond("Vote.", Vote, check=odd_only, role="vote")
    assert r.valid and [t.role for t in r.turns] == ["rejected vote", "vote"]
    first = r.turns[0]
    assert not first.valid and isinstance(first.payload, Rejected)
    assert first.payload.problems == ["vote 1 here"] and first.payload.attempt == 1
    assert "vote 1 here" in b.requests[1].last, "the repair turn quotes the problems"
    assert b.requests[1].messages[-2].role == "assistant"
    assert r.cost.calls == 2 == sum(t.calls for t in r.turns)


def test_a_rule_broken_twice_is_invalid_and_costs_everything():
    b = ScriptedBackend([ok(0), "not json", "still not json"])
    r = Agent("Ada", b).respond("Vote.", Vote, check=odd_only)
    assert not r.valid and r.value is None and len(r.turns) == 2
    assert [t.calls for t in r.turns] == [1, 2], "the schema repair of the second try counts"
    assert r.cost.usage.completion_tokens > 0 and "did not validate" in r.error


def test_strict_false_keeps_a_valid_answer_with_its_problems():
    r = Agent("Ada", ScriptedBackend([ok(0), ok(0)])).respond(
        "Vote.", Vote, check=odd_only, strict=False
    )
    assert r.valid and r.value.vote == 0 and r.problems == ("vote 1 here",)


def test_repair_may_be_a_function_of_the_problems():
    b = ScriptedBackend([ok(0), ok(1)])
    Agent("Ada", b).respond("Vote.", Vote, check=odd_only, repair=lambda ps: f"FIX: {ps[0]}")
    assert b.requests[1].last == "FIX: vote 1 here"


def test_a_per_item_backend_error_is_an_invalid_turn():
    r = Agent("Ada", ScriptedBackend([BackendError("prompt too long")])).respond("x", Vote)
    assert not r.valid and r.turn.role == "invalid" and "prompt too long" in r.error
    assert r.turn.calls == 0


@pytest.mark.parametrize(
    "exc",
    [
        BackendUnavailable("down"),
        BackendTimeout("slow"),
        AuthenticationError("key"),
        ModelNotFound("m"),
    ],
)
def test_run_stopping_errors_propagate(exc):
    def fail(request):
        raise exc

    with pytest.raises(type(exc)):
        Agent("Ada", ScriptedBackend(fail, max_retries=0)).respond("x", Vote)


def test_plain_text_answers_and_parse():
    r = Agent("Ada", ScriptedBackend(["hello"])).respond("Say hi.")
    assert r.value == "hello" and r.turn.text == "hello"

    def parse(text: str) -> int:
        if text not in ("0", "1"):
            raise ValueError("not a label")
        return int(text)

    bad = Agent("Ada", ScriptedBackend(["maybe"])).respond("0 or 1?", parse=parse)
    assert not bad.valid and "not a label" in bad.error and bad.turn.text == "maybe"


def test_a_runaway_answer_is_capped_in_the_record():
    huge = "x" * (RAW_LIMIT * 50)
    r = Agent("Ada", ScriptedBackend([huge, huge])).respond("x", Vote)
    assert len(r.turn.payload.raw) <= RAW_LIMIT and len(r.turn.text) <= RAW_LIMIT


def test_role_may_depend_on_the_answer():
    r = Agent("Ada", ScriptedBackend([ok(1)])).respond("x", Vote, role=lambda v: f"v{v.vote}")
    assert r.turn.role == "v1"


def test_backend_model_specs():
    assert parse_spec("ollama:qwen2.5:7b") == ("ollama", "qwen2.5:7b")
    assert parse_spec(" OpenAI : gpt-4o-mini ") == ("openai", "gpt-4o-mini")
    with pytest.raises(ArgnbError):
        parse_spec(" : ")
