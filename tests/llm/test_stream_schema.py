"""A schema-bound request streams its JSON as it is written, and ends in the reply ``chat`` gives.

Fast: the scripted backend, and the official ``ollama`` / ``openai`` clients over real HTTP
against our protocol server. One ``model`` test: the embedded model, byte for byte.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import Field

from argnb.llm import Ledger, OllamaBackend, OpenAIBackend, ScriptedBackend
from argnb.llm.answer import Answer
from argnb.llm.base import Options
from argnb.llm.cache import ResponseCache
from argnb.llm.partial import FieldStream
from argnb.llm.scripted import Request
from argnb.llm.structured import astructured_call, schema_of
from argnb.llm.testserver import ProtocolServer


class Step(Answer):
    intent: str = Field(max_length=20)
    message: str = Field(max_length=120)
    next_speaker: str = Field(max_length=20)


SCHEMA = schema_of(Step)
STEP = {
    "intent": "invite",
    "message": 'Bo, what do you say to "Ann"?\nBriefly.',
    "next_speaker": "Bo",
}
PLAIN = "Plain words, no schema."


def answer(req: Request) -> str:
    return json.dumps(STEP) if req.schema is not None else PLAIN


async def _acollect(stream) -> list[str]:
    return [chunk async for chunk in stream]


def test_a_scripted_schema_stream_is_the_chat_reply_in_pieces():
    b = ScriptedBackend(answer, ledger=Ledger())
    s = b.stream("Who next?", schema=SCHEMA)
    chunks = list(s)
    plain = b.chat("Who next?", schema=SCHEMA)
    assert len(chunks) > 3 and "".join(chunks) == plain.text == s.reply.text == json.dumps(STEP)
    assert s.reply.usage == plain.usage and s.reply.model == plain.model
    assert b.requests[0].schema == SCHEMA  # the stream asked with the schema
    a = b.astream("Who next?", schema=SCHEMA)
    assert "".join(asyncio.run(_acollect(a))) == plain.text and a.reply.usage == plain.usage
    assert b.requests[2].schema == SCHEMA
    # without a schema nothing changed: the plain text, asked without one
    assert b.stream("Who next?").read().text == PLAIN and b.requests[3].schema is None


def test_streamed_and_plain_schema_calls_share_one_cache_key(tmp_path):
    led = Ledger()
    b = ScriptedBackend(answer, ledger=led, cache=ResponseCache(tmp_path / "c.sqlite"))
    first = b.stream("Who next?", schema=SCHEMA).read()
    assert not first.cached and len(b.requests) == 1
    assert b.chat("Who next?", schema=SCHEMA).text == first.text  # a hit: no new request
    again = b.astream("Who next?", schema=SCHEMA)
    assert asyncio.run(_acollect(again)) == [first.text] and again.reply.cached
    assert len(b.requests) == 1 and led.calls() == 1 and led.calls(include_cached=True) == 3
    # a plain call with the same messages, or a stream without the schema, is another request
    assert b.stream("Who next?").read().text == PLAIN and len(b.requests) == 2
    c = ScriptedBackend(answer, ledger=Ledger(), cache=ResponseCache(tmp_path / "d.sqlite"))
    c.chat("Who next?", schema=SCHEMA)
    assert list(c.stream("Who next?", schema=SCHEMA)) == [json.dumps(STEP)]  # chat first: a hit
    assert len(c.requests) == 1


def test_the_streamed_first_reply_validates_like_a_plain_one():
    got_chunks: list[str] = []
    b = ScriptedBackend(answer, ledger=Ledger())
    streamed = asyncio.run(astructured_call(b, "Who next?", Step, on_chunk=got_chunks.append))
    plain = asyncio.run(astructured_call(b, "Who next?", Step))
    assert streamed.value == plain.value and streamed.raw == plain.raw
    assert "".join(got_chunks) == plain.raw and len(got_chunks) > 3
    assert b.requests[0].messages == b.requests[1].messages  # the same request, schema note too


# -- the official clients over HTTP --------------------------------------------------------------
@pytest.fixture
def server():
    engine = ScriptedBackend(answer, model="tiny", chunk_delay_s=0.005)
    with ProtocolServer(engine, models=["tiny"]) as srv:
        yield srv


def _backends(srv: ProtocolServer):
    return [
        OllamaBackend("tiny", host=srv.url, ledger=Ledger()),
        OpenAIBackend("tiny", base_url=srv.url + "/v1", ledger=Ledger()),
    ]


def test_both_official_clients_stream_a_schema_answer_equal_to_chat(server):
    opts = Options(max_tokens=64, seed=3)
    for b in _backends(server):
        n = len(server.requests)
        s = b.stream("Who next?", schema=SCHEMA, options=opts)
        chunks = list(s)
        streamed_body = server.requests[n][1]
        plain = b.chat("Who next?", schema=SCHEMA, options=opts)
        plain_body = server.requests[n + 1][1]
        assert len(chunks) > 3 and "".join(chunks) == plain.text == json.dumps(STEP), b.name
        assert s.reply.text == plain.text and s.reply.usage == plain.usage, b.name
        assert s.reply.usage.completion_tokens > 0 and s.reply.backend == plain.backend == b.name
        assert streamed_body["stream"] is True and not plain_body.get("stream")
        # the same schema parameters as the plain call sends
        for field in ("format", "response_format"):
            assert streamed_body.get(field) == plain_body.get(field), (b.name, field)
        assert (streamed_body.get("format") or streamed_body["response_format"]) is not None
        a = b.astream("Who next?", schema=SCHEMA, options=opts)
        assert "".join(asyncio.run(_acollect(a))) == plain.text and a.reply.usage == plain.usage


def test_a_stream_steps_down_when_the_server_refuses_json_schema(server):
    server.refuse_json_schema = True  # like llama.cpp's server
    b = OpenAIBackend("tiny", base_url=server.url + "/v1", ledger=Ledger())
    n = len(server.requests)
    s = b.stream("Who next?", schema=SCHEMA)
    assert "".join(s) == json.dumps(STEP) and b.structured_mode() == "json_object_schema"
    bodies = [body for _, body in server.requests[n:]]
    assert [body["response_format"]["type"] for body in bodies] == ["json_schema", "json_object"]
    assert bodies[1]["response_format"]["schema"] == SCHEMA and bodies[1]["stream"] is True


def test_the_message_field_streams_out_of_the_servers_chunks(server):
    for b in _backends(server):
        f = FieldStream("message")
        pieces = [p for c in b.stream("Who next?", schema=SCHEMA) if (p := f.feed(c))]
        assert len(pieces) > 1 and "".join(pieces) == STEP["message"], b.name


# -- the embedded model ------------------------------------------------------------------------
@pytest.mark.model
def test_the_embedded_model_streams_the_same_bytes_as_its_constrained_chat(local):
    opts = Options(max_tokens=48)
    prompt = "Ann and Bo discuss homework. As the moderator, invite Bo to speak. Answer in JSON."
    s = local.stream(prompt, schema=SCHEMA, options=opts)
    chunks = list(s)
    plain = local.chat(prompt, schema=SCHEMA, options=opts)
    assert len(chunks) > 5 and "".join(chunks) == s.reply.text
    assert s.reply.text == plain.text and s.reply.text.lstrip().startswith("{")
    assert s.reply.usage == plain.usage
    assert s.reply.first_chunk_s < s.reply.latency_s
