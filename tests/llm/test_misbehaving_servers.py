"""Servers that misbehave: hang, trickle, fail once, reject the request, answer a web page.

Our protocol server misbehaves on request (``faults``) on 127.0.0.1; every test is bounded in
time (a hanging handler ends when the server stops).
"""

from __future__ import annotations

import asyncio
import time

import pytest
from pydantic import BaseModel

from argnb.errors import (
    BackendError,
    BackendTimeout,
    BadRequest,
    BadResponse,
    ServerError,
)
from argnb.llm import Ledger, OllamaBackend, OpenAIBackend, ScriptedBackend, structured_call
from argnb.llm.testserver import ProtocolServer


class A(BaseModel):
    ok: bool


def _no_wait(b):
    """Retries without the exponential backoff, so tests stay fast."""
    b._retry_args = lambda: {**type(b)._retry_args(b), "wait": lambda rs: 0}
    return b


def _make(kind: str, srv: ProtocolServer, **kw):
    if kind == "ollama":
        b = OllamaBackend("tiny", host=srv.url, ledger=Ledger(), **kw)
    else:
        b = OpenAIBackend("tiny", base_url=srv.url + "/v1", ledger=Ledger(), **kw)
    b._prepare()  # import the client now: the timings below are of requests, not of imports
    return _no_wait(b)


@pytest.fixture
def server():
    engine = ScriptedBackend(lambda req: {"ok": True}, model="tiny")
    with ProtocolServer(engine, models=["tiny"], trickle_s=0.25, hang_s=20) as srv:
        yield srv


KINDS = ["ollama", "openai"]


# -- the timeout is a total deadline ------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fault", ["hang", "trickle"])
def test_the_timeout_bounds_the_whole_request(server, kind, fault):
    """Before: per read, so a trickling server (a byte every 0.25 s here) was never cut off."""
    server.faults = [fault]
    b = _make(kind, server, timeout=1.0, max_retries=0)
    start = time.perf_counter()
    with pytest.raises(BackendTimeout) as err:
        b.chat("q")
    elapsed = time.perf_counter() - start
    assert 0.9 < elapsed < 1.8, f"{fault}: {elapsed:.2f} s against a 1 s timeout"
    assert "within 1 s" in err.value.message and "1 try" in err.value.message
    assert "--timeout" in err.value.hint


@pytest.mark.parametrize("kind", KINDS)
def test_the_error_states_the_worst_case_over_all_tries(server, kind):
    server.faults = ["hang", "trickle"]
    b = _make(kind, server, timeout=0.5, max_retries=1)
    start = time.perf_counter()
    with pytest.raises(BackendTimeout) as err:
        b.chat("q")
    assert time.perf_counter() - start < 2.0
    assert len(server.requests) == 2
    assert "2 tries of at most 0.5 s each: 1.5 s in the worst case" in err.value.message


@pytest.mark.parametrize("kind", KINDS)
def test_async_calls_and_streams_have_the_same_deadline(server, kind):
    b = _make(kind, server, timeout=0.6, max_retries=0)
    for fault in ("hang", "trickle"):
        server.faults = [fault]
        start = time.perf_counter()
        with pytest.raises(BackendTimeout):
            asyncio.run(b.achat("q"))
        assert time.perf_counter() - start < 1.5
    server.faults = ["hang"]
    start = time.perf_counter()
    with pytest.raises(BackendTimeout):
        b.stream("q").read()
    assert time.perf_counter() - start < 1.5


def test_timeout_reaches_the_backend_through_connect(server):
    from argnb.config import connect
    from argnb.errors import ArgnbError

    b = connect("ollama", "tiny", host=server.url, timeout=2.5, make_default=False)
    assert b.timeout == 2.5
    o = connect("openai", "tiny", base_url=server.url + "/v1", timeout=3, make_default=False)
    assert o.timeout == 3.0
    with pytest.raises(ArgnbError, match="positive number"):
        connect("ollama", "tiny", timeout=0, make_default=False)


# -- a transient 500 is retried and downgrades nothing ------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_one_http_500_is_retried_and_the_structured_mode_stays(server, kind):
    """Before: a 500 on a structured request switched the OpenAI backend to a weaker mode for the
    rest of the session, and Ollama's 500 was recorded as an invalid answer."""
    server.faults = ["500"]
    b = _make(kind, server)
    mode = b.structured_mode()
    assert structured_call(b, "q", A).value.ok
    assert b.structured_mode() == mode
    assert len(server.requests) == 2
    bodies = [body for _, body in server.requests]
    assert bodies[0] == bodies[1]  # the same request again, not a weaker one


def test_a_definite_refusal_of_the_schema_still_downgrades(server):
    server.refuse_json_schema = True
    b = _make("openai", server)
    assert b.structured_mode() == "json_schema"
    assert structured_call(b, "q", A).value.ok
    assert b.structured_mode() == "json_object_schema"


@pytest.mark.parametrize("kind", KINDS)
def test_repeated_500s_stop_the_run_after_the_retries(server, kind):
    server.faults = ["500"] * 3
    b = _make(kind, server)
    with pytest.raises(ServerError) as err:
        structured_call(b, "q", A)
    assert "after 3 tries" in err.value.message
    assert b.structured_mode() in ("json_schema", "format")


# -- a 400 stops the run, a non-JSON 200 gives one line ------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_http_400_is_a_run_stopping_error(server, kind):
    """Before: a plain BackendError, which batch runners record as one invalid item."""
    server.faults = ["400"]
    b = _make(kind, server)
    with pytest.raises(BadRequest) as err:
        structured_call(b, "q", A)
    assert type(err.value) is not BackendError  # plain BackendError = per-item failure
    assert "does not support" in err.value.message and len(server.requests) == 1
    assert b.structured_mode() in ("json_schema", "format")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fault", ["bad_json", "html"])
def test_http_200_that_is_not_json_gives_one_line(server, kind, fault):
    """Before: a raw JSONDecodeError (or an AttributeError on the text) escaped."""
    b = _make(kind, server)
    for call in (lambda: b.chat("q"), lambda: asyncio.run(b.achat("q"))):
        server.faults = [fault]
        with pytest.raises(BadResponse) as err:
            call()
        assert "\n" not in err.value.message and "log in" in err.value.message
        assert type(err.value) is not BackendError
    server.faults = [fault]
    with pytest.raises(BadResponse):
        b.stream("q").read()
    server.faults = [fault]
    with pytest.raises(BadResponse):
        b.embed(["x"])


# -- a repair turn quotes a bounded part of the invalid answer ----------------------------------
def test_a_repair_turn_does_not_quote_a_huge_answer_in_full():
    """Before: a 1 MB invalid answer was sent back whole (a 4 MB request)."""
    huge = "x" * 1_000_000
    b = ScriptedBackend([huge, {"ok": True}], ledger=Ledger())
    assert structured_call(b, "q", A).value.ok
    repair = b.requests[1]
    assert sum(len(m.content) for m in repair.messages) < 10_000
    assert repair.messages[-2].content.startswith("x" * 2000)
    assert "998000 more characters" in repair.messages[-2].content


@pytest.mark.parametrize("fault", ["html", "bad_json", "400"])
def test_doctor_reports_a_server_that_is_not_one_in_one_line(server, fault):
    from argnb.doctor import check_ollama, check_openai

    for check, where in ((check_ollama, server.url), (check_openai, server.url + "/v1")):
        server.faults = [fault]
        c = check(where)
        assert c.ok is False and "\n" not in c.detail and c.fix
