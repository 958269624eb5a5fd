"""``arespond(..., stream_field=, on_text=)``: one field shows while it is written; the response
and its turns are the ones the plain call gives."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import Field

from argnb.agents import Agent
from argnb.errors import ArgnbError
from argnb.llm import ScriptedBackend
from argnb.llm.answer import Answer


class Step(Answer):
    intent: str = Field(max_length=20)
    message: str = Field(max_length=80)
    next_speaker: str = Field(max_length=20)


GOOD = {
    "intent": "invite",
    "message": 'Bo, your "view" please \u2014 briefly.',
    "next_speaker": "Bo",
}
#: over the schema's length, and not a loop (a word said 30 times is the gate's: argnb.gate.Held
#: stops streaming it)
TOO_LONG = {**GOOD, "message": " ".join(f"point{i}" for i in range(60)) + " "}


def both(script: list, **kw) -> tuple:
    """The same turn asked plainly and streamed (each on its own copy of the script)."""
    plain = Agent("Mod", ScriptedBackend(list(script)), system="S").respond("Next?", Step, **kw)
    pieces: list[str] = []
    backend = ScriptedBackend(list(script))
    streamed = Agent("Mod", backend, system="S").respond(
        "Next?", Step, stream_field="message", on_text=pieces.append, **kw
    )
    return plain, streamed, pieces, backend


def _same(a, b) -> None:
    assert a.value == b.value and a.problems == b.problems
    keep = lambda t: t.model_dump(exclude={"latency_s"})  # noqa: E731
    assert [keep(t) for t in a.turns] == [keep(t) for t in b.turns]


def test_the_field_streams_and_the_response_is_the_plain_one():
    plain, streamed, pieces, _ = both([GOOD])
    _same(plain, streamed)
    assert len(pieces) > 2 and "".join(pieces) == GOOD["message"] == streamed.value.message


def test_a_schema_repair_is_recorded_alike_and_only_the_first_reply_streams():
    plain, streamed, pieces, backend = both([TOO_LONG, GOOD])
    _same(plain, streamed)
    assert streamed.value.message == GOOD["message"] and streamed.turn.calls == 2
    assert "".join(pieces) == TOO_LONG["message"]  # the repair was a plain call
    assert len(backend.requests) == 2


def test_a_rule_repair_is_recorded_alike():
    check = lambda v: [] if v.next_speaker == "Ann" else ["Ann is due"]  # noqa: E731
    plain, streamed, pieces, _ = both([GOOD, {**GOOD, "next_speaker": "Ann"}], check=check)
    _same(plain, streamed)
    assert [t.role for t in streamed.turns] == ["rejected answer", "answer"]
    assert "".join(pieces) == GOOD["message"]


def test_an_answer_that_never_validates_is_invalid_alike():
    plain, streamed, pieces, _ = both(["not json", "still {not"])
    _same(plain, streamed)
    assert streamed.value is None and pieces == []


def test_a_backend_without_streams_hands_the_field_over_whole():
    class Whole:  # a duck-typed backend: achat only
        name, model = "whole", "m"

        def __init__(self) -> None:
            self.inner = ScriptedBackend([GOOD])

        async def achat(self, messages, *, schema=None, options=None):
            return await self.inner.achat(messages, schema=schema, options=options)

    pieces: list[str] = []
    r = asyncio.run(
        Agent("Mod", Whole()).arespond("Next?", Step, stream_field="message", on_text=pieces.append)  # type: ignore[arg-type]
    )
    assert r.valid and pieces == [GOOD["message"]]


def test_stream_field_needs_a_schema_and_a_callback():
    a = Agent("Mod", ScriptedBackend([json.dumps(GOOD)]))
    with pytest.raises(ArgnbError, match="stream_field"):
        a.respond("Next?", None, stream_field="message", on_text=print)
    with pytest.raises(ArgnbError, match="stream_field"):
        a.respond("Next?", Step, stream_field="message")
