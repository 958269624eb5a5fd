"""Streaming: chunks as they come, then the whole Reply; cached whole, counted in the ledger.

Fast: a scripted engine, and the official ``ollama`` / ``openai`` clients over real HTTP against our
protocol server (Ollama NDJSON, OpenAI server-sent events).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from argnb.errors import ServerError
from argnb.llm import Ledger, OllamaBackend, OpenAIBackend, ScriptedBackend
from argnb.llm.base import Message, Options, Reply
from argnb.llm.cache import ResponseCache
from argnb.llm.testserver import ProtocolServer

ANSWER = "Premise one holds, premise two does not, so the conclusion fails."


def _collect(stream) -> list[str]:
    return list(stream)


async def _acollect(stream) -> list[str]:
    return [chunk async for chunk in stream]


def test_scripted_stream_yields_words_then_the_whole_reply():
    led = Ledger()
    b = ScriptedBackend([ANSWER], ledger=led, delay_s=0.05, chunk_delay_s=0.02)
    s = b.stream("why?")
    with pytest.raises(RuntimeError, match="not finished"):
        _ = s.reply
    chunks = _collect(s)
    assert len(chunks) == len(ANSWER.split()) and "".join(chunks) == ANSWER
    r = s.reply
    assert r.text == ANSWER and r.backend == "scripted" and r.usage.completion_tokens == 11
    assert 0.05 <= r.first_chunk_s < r.latency_s  # the wait before the first word, then the rest
    assert led.calls() == 1 and led.entries[0].completion_tokens == 11


def test_async_stream_and_its_reply():
    b = ScriptedBackend([ANSWER], ledger=Ledger(), chunk_delay_s=0.01)
    s = b.astream([{"role": "user", "content": "why?"}])
    chunks = asyncio.run(_acollect(s))
    assert "".join(chunks) == ANSWER == s.reply.text and s.reply.first_chunk_s is not None


def test_a_streamed_reply_is_cached_whole_and_a_hit_yields_it_in_one_chunk(tmp_path):
    led = Ledger()
    cache = ResponseCache(tmp_path / "c.sqlite")
    b = ScriptedBackend([ANSWER], ledger=led, cache=cache)
    first = b.stream("q")
    assert len(_collect(first)) > 1
    again = b.stream("q")
    assert _collect(again) == [ANSWER]  # no model call: the script had one answer only
    assert again.reply.cached and again.reply.text == ANSWER
    assert b.chat("q").text == ANSWER  # same key as a plain call with the same messages
    assert led.calls() == 1 and led.calls(include_cached=True) == 3
    hit = b.astream("q")
    assert asyncio.run(_acollect(hit)) == [ANSWER]


def test_an_abandoned_stream_is_not_cached_but_its_call_is_counted(tmp_path):
    led = Ledger()
    cache = ResponseCache(tmp_path / "c.sqlite")
    b = ScriptedBackend([ANSWER, ANSWER], ledger=led, cache=cache)
    with b.stream("q") as s:
        assert next(s) == "Premise "
    assert not s.done and len(cache) == 0 and led.calls() == 1
    assert b.stream("q").read().text == ANSWER  # asked again: a real call, then cached
    assert len(cache) == 1


class Flaky(ScriptedBackend):
    """Fails before its first chunk ``fail_before`` times, or after the first chunk always."""

    def __init__(self, *, fail_before: int = 0, fail_after: bool = False) -> None:
        super().__init__(lambda req: ANSWER, ledger=Ledger(), max_retries=2)
        self.fail_before, self.fail_after, self.opened = fail_before, fail_after, 0

    def _stream(self, messages: list[Message], options: Options) -> Iterator[str | Reply]:
        self.opened += 1
        if self.opened <= self.fail_before:
            raise ServerError("busy")
        yield "Premise "
        if self.fail_after:
            raise ServerError("connection lost")
        yield "done."


def _no_wait(b):
    b._retry_args = lambda: {**type(b)._retry_args(b), "wait": lambda rs: 0}
    return b


def test_failures_before_the_first_chunk_are_retried_after_it_they_propagate():
    b = _no_wait(Flaky(fail_before=2))
    assert b.stream("q").read().text == "Premise done." and b.opened == 3
    b = Flaky(fail_after=True)
    s = b.stream("q")
    assert next(s) == "Premise "
    with pytest.raises(ServerError):
        next(s)
    assert b.opened == 1  # text was already shown: a retry would repeat it


# -- the official clients over HTTP --------------------------------------------------------------
@pytest.fixture
def server():
    engine = ScriptedBackend(lambda req: ANSWER, model="tiny", chunk_delay_s=0.01)
    with ProtocolServer(engine, models=["tiny"]) as srv:
        yield srv


def _backends(srv: ProtocolServer, led: Ledger):
    return [
        OllamaBackend("tiny", host=srv.url, ledger=led),
        OpenAIBackend("tiny", base_url=srv.url + "/v1", ledger=led),
    ]


def test_both_official_clients_stream_from_the_test_server(server):
    led = Ledger()
    for b in _backends(server, led):
        s = b.stream("Explain.")
        chunks = _collect(s)
        assert len(chunks) == 11 and "".join(chunks) == ANSWER, b.name
        assert s.reply.usage.completion_tokens == 11 and s.reply.usage.prompt_tokens == 1
        assert s.reply.model == "tiny" and s.reply.backend == b.name
        a = b.astream("Explain.")
        assert "".join(asyncio.run(_acollect(a))) == ANSWER and a.reply.usage.total_tokens == 12
    assert led.calls() == 4
    ollama_body = next(body for path, body in server.requests if path == "/api/chat")
    openai_body = next(body for path, body in server.requests if path.startswith("/v1"))
    assert ollama_body["stream"] is True
    assert openai_body["stream"] is True and openai_body["stream_options"]["include_usage"]


def test_ollama_streams_by_default_on_the_wire(server):
    """Ollama's ``stream`` defaults to true: the server streams NDJSON when it is absent."""
    import httpx

    body = {"model": "tiny", "messages": [{"role": "user", "content": "q"}]}
    lines = httpx.post(server.url + "/api/chat", json=body).text.strip().split("\n")
    assert len(lines) == 12 and '"done": true' in lines[-1]


@pytest.mark.parametrize("policy", ["ignore", "refuse"])
def test_servers_that_ignore_or_refuse_stream_usage(server, policy):
    server.stream_usage = policy
    b = OpenAIBackend("tiny", base_url=server.url + "/v1", ledger=Ledger())
    s = b.stream("q")
    assert "".join(s) == ANSWER and s.reply.usage.total_tokens == 0  # the server reports none
    assert b.stream_usage is (policy == "ignore")  # refused once: not asked again
    n = len(server.requests)
    assert b.stream("q2").read().text == ANSWER
    assert len(server.requests) == n + 1


def test_a_stream_is_retried_when_the_server_fails_before_the_first_chunk(server):
    for b in _backends(server, Ledger()):
        server.faults = ["500"]
        n = len(server.requests)
        assert _no_wait(b).stream("q").read().text == ANSWER
        assert len(server.requests) == n + 2
