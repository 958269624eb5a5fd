"""Ollama and OpenAI backends over real HTTP, against our protocol server on a scripted engine.

These run in the fast suite: no model, only sockets on 127.0.0.1.
"""

import asyncio
import socket
import threading
import time

import pytest
from pydantic import BaseModel

from argnb.errors import (
    AuthenticationError,
    BackendTimeout,
    BackendUnavailable,
    ModelNotFound,
)
from argnb.llm import OllamaBackend, OpenAIBackend, ScriptedBackend, structured_call
from argnb.llm.testserver import ProtocolServer


class A(BaseModel):
    ok: bool


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server():
    engine = ScriptedBackend(lambda req: {"ok": True}, model="tiny")
    with ProtocolServer(engine, models=["tiny"]) as srv:
        yield srv


def test_ollama_chat_with_format_and_listing(server):
    b = OllamaBackend("tiny", host=server.url)
    assert b.list_models() == ["tiny"]
    s = structured_call(b, "q", A)
    assert s.value.ok is True
    path, body = server.requests[-1]
    assert path == "/api/chat" and body["stream"] is False
    assert body["format"]["properties"]["ok"]["type"] == "boolean"
    assert body["options"]["temperature"] == 0.0 and body["options"]["seed"] == 42
    assert asyncio.run(b.achat("q")).text == '{"ok": true}'


def test_ollama_not_running_says_ollama_serve():
    b = OllamaBackend("tiny", host=f"http://127.0.0.1:{free_port()}", max_retries=0)
    with pytest.raises(BackendUnavailable) as info:
        b.chat("q")
    assert "ollama serve" in info.value.hint


def test_ollama_model_not_pulled_says_ollama_pull(server):
    with pytest.raises(ModelNotFound) as info:
        OllamaBackend("llama3.2", host=server.url).chat("q")
    assert info.value.hint == "ollama pull llama3.2"


def test_openai_missing_key_is_explicit(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(AuthenticationError) as info:
        OpenAIBackend("gpt-4o-mini")
    assert "OPENAI_API_KEY" in info.value.hint


def test_openai_wrong_base_url_is_explicit():
    b = OpenAIBackend("tiny", base_url=f"http://127.0.0.1:{free_port()}/v1", max_retries=0)
    with pytest.raises(BackendUnavailable) as info:
        b.chat("q")
    assert "base_url" in info.value.hint


def test_openai_wrong_path_and_wrong_model(server):
    with pytest.raises(BackendUnavailable):  # forgot the /v1
        OpenAIBackend("tiny", base_url=server.url + "/nope").chat("q")
    with pytest.raises(ModelNotFound):
        OpenAIBackend("gpt-9", base_url=server.url + "/v1").chat("q")


def test_openai_falls_back_when_json_schema_is_refused(server):
    server.refuse_json_schema = True
    b = OpenAIBackend("tiny", base_url=server.url + "/v1")
    assert structured_call(b, "q", A).value.ok
    formats = [body.get("response_format", {}).get("type") for _, body in server.requests]
    assert formats == ["json_schema", "json_object"]
    assert b.mode == "json_object_schema"
    assert server.requests[-1][1]["response_format"]["schema"]["title"] == "A"
    structured_call(b, "again", A)  # remembered: no second refusal
    assert len(server.requests) == 3


def test_openai_async_path(server):
    b = OpenAIBackend("tiny", base_url=server.url + "/v1")
    assert asyncio.run(b.achat("q", schema={"type": "object"})).text == '{"ok": true}'


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_timeout_retries_with_backoff_then_fails_clearly(kind):
    slow = ScriptedBackend(lambda req: "late", model="tiny", delay_s=3.0)
    with ProtocolServer(slow, models=["tiny"]) as srv:
        if kind == "ollama":
            b = OllamaBackend("tiny", host=srv.url, timeout=0.3, max_retries=1)
        else:
            b = OpenAIBackend("tiny", base_url=srv.url + "/v1", timeout=0.3, max_retries=1)
        start = time.perf_counter()
        with pytest.raises(BackendTimeout):
            b.chat("q")
        elapsed = time.perf_counter() - start
    assert len(srv.requests) == 2  # first try + one retry
    assert elapsed < 2.5  # never hangs on the slow server


def test_embeddings_over_both_protocols(server):
    o = OllamaBackend("tiny", host=server.url).embed(["a b", "c"])
    v = OpenAIBackend("tiny", base_url=server.url + "/v1").embed(["a b", "c"])
    assert len(o) == len(v) == 2 and o == v


def test_a_client_that_gives_up_leaves_no_traceback_on_stderr(capfd):
    import socket

    class Handled(ProtocolServer):
        """Sets ``done`` once a request's handler has finished (answered, or failed to)."""

        done = threading.Event()

        def process_request_thread(self, request, client_address):
            super().process_request_thread(request, client_address)
            self.done.set()

    slow = ScriptedBackend(lambda req: "late", model="tiny", delay_s=0.4)
    with Handled(slow, models=["tiny"]) as srv:
        body = b'{"model": "tiny", "messages": [{"role": "user", "content": "q"}], "stream": false}'
        head = f"POST /api/chat HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
        with socket.create_connection(srv.server_address) as sock:
            sock.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
            )
            sock.sendall(head.encode() + body)
        assert srv.done.wait(30)  # the handler has answered into the reset connection
    assert len(srv.requests) == 1
    assert "Traceback" not in capfd.readouterr().err


def test_credentials_in_a_url_never_reach_messages_or_reports():
    from argnb.errors import BackendUnavailable
    from argnb.llm.base import public_url

    assert public_url("https://bob:sk-secret@api.example.com:8443/v1?key=sk-q") == (
        "https://***@api.example.com:8443/v1"
    )
    assert public_url("http://127.0.0.1:11434") == "http://127.0.0.1:11434"
    url = "http://bob:sk-secret@127.0.0.1:1/v1?token=sk-q"
    b = OpenAIBackend("m", base_url=url, api_key="k", timeout=0.5, max_retries=0)
    assert "sk-" not in str(b.describe())
    with pytest.raises(BackendUnavailable) as err:
        b.chat("hi")
    assert "sk-" not in str(err.value) and "127.0.0.1:1" in str(err.value)
    o = OllamaBackend("m", host="http://bob:sk-secret@127.0.0.1:1", timeout=0.5)
    assert "sk-" not in str(o.describe())
    with pytest.raises(BackendUnavailable) as err:
        o.chat("hi")
    assert "sk-" not in str(err.value)
