import asyncio

import pytest
from pydantic import BaseModel, Field

from argnb.errors import InvalidOutput
from argnb.llm import ScriptedBackend, aask, ask, structured_call
from argnb.llm.structured import extract_json


class Vote(BaseModel):
    vote: int = Field(ge=0, le=1)
    reason: str = Field(max_length=50)


def test_valid_first_answer_needs_one_call():
    b = ScriptedBackend([{"vote": 1, "reason": "ok"}])
    s = structured_call(b, "is it fallacious?", Vote)
    assert s.value == Vote(vote=1, reason="ok")
    assert not s.repaired and len(b.requests) == 1
    # the schema is sent to the server and described in the prompt
    assert b.requests[0].schema["properties"]["vote"]["maximum"] == 1
    assert '"vote"' in b.requests[0].messages[0].content


def test_repair_turn_quotes_the_validation_error():
    b = ScriptedBackend(['{"vote": 7, "reason": "x"}', '{"vote": 0, "reason": "fixed"}'])
    s = structured_call(b, "q", Vote)
    assert s.value.vote == 0 and s.repaired
    repair = b.requests[1]
    assert repair.messages[-2].role == "assistant"
    assert repair.messages[-2].content == '{"vote": 7, "reason": "x"}'
    assert "vote" in repair.last and "less than or equal to 1" in repair.last
    assert s.usage.total_tokens == sum(r.usage.total_tokens for r in s.replies)


def test_second_failure_raises_with_raw_text():
    b = ScriptedBackend(["no json here", "still {not json"])
    with pytest.raises(InvalidOutput) as info:
        structured_call(b, "q", Vote)
    assert info.value.raw == "still {not json"
    assert len(b.requests) == 2


def test_missing_field_is_reported_by_name():
    b = ScriptedBackend(['{"vote": 1}', '{"vote": 1, "reason": "r"}'])
    ask(b, "q", Vote)
    assert "reason" in b.requests[1].last and "Field required" in b.requests[1].last


@pytest.mark.parametrize(
    "text",
    ['```json\n{"a": 1}\n```', 'Sure! {"a": 1} hope this helps', '  {"a": 1}  '],
)
def test_extract_json_tolerates_wrapping(text):
    assert extract_json(text) == {"a": 1}


def test_extract_json_rejects_text_without_object():
    with pytest.raises(ValueError):
        extract_json("I think it is a fallacy.")


def test_ask_without_schema_returns_text_and_async_twin():
    b = ScriptedBackend(["plain answer", {"vote": 0, "reason": "r"}])
    assert ask(b, "hello") == "plain answer"
    assert asyncio.run(aask(b, "q", Vote)).vote == 0


def test_scripted_backend_raises_given_exceptions_and_runs_out_clearly():
    from argnb.errors import BackendTimeout, ScriptExhausted

    b = ScriptedBackend([BackendTimeout("slow")], max_retries=0)
    with pytest.raises(BackendTimeout):
        b.chat("q")
    with pytest.raises(ScriptExhausted):
        b.chat("q")


def test_raw_control_characters_inside_strings_are_accepted():
    # llama.cpp's JSON grammar lets a raw newline or tab into a string; strict JSON forbids it
    assert extract_json('{"reason": "line one\nline\ttwo"}') == {"reason": "line one\nline\ttwo"}
