"""The real embedded model, and the real servers that speak to it. Slower: marked."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from pydantic import BaseModel, Field

from argnb.llm import OllamaBackend, OpenAIBackend, structured_call
from argnb.llm.local import embedded_gguf
from argnb.llm.testserver import ProtocolServer


class Verdict(BaseModel):
    is_argument: bool
    conclusion: str = Field(max_length=80)


PROMPT = "Text: 'We should ban cars because they pollute.' Is it an argument? Give its conclusion."


@pytest.mark.model
def test_embedded_model_answers_schema_valid_and_reproducibly(local):
    a = structured_call(local, PROMPT, Verdict)
    b = structured_call(local, PROMPT, Verdict)
    assert isinstance(a.value, Verdict)
    assert a.raw == b.raw  # byte-identical at temperature 0 with a seed
    assert a.usage.prompt_tokens > 20 and a.usage.completion_tokens > 3
    assert a.replies[0].backend == "local" and a.replies[0].model == "smollm2-135m"


@pytest.mark.model
def test_embedded_embeddings_are_real_vectors(local):
    v = local.embed(["cats purr", "dogs bark"])
    assert len(v) == 2 and len(v[0]) > 100 and v[0] != v[1]


@pytest.mark.model
@pytest.mark.server
def test_ollama_backend_through_official_client_over_embedded_model(local):
    with ProtocolServer(local, models=["smollm2-135m"]) as srv:
        b = OllamaBackend("smollm2-135m", host=srv.url)
        assert b.list_models() == ["smollm2-135m"]
        s = structured_call(b, PROMPT, Verdict)
        assert isinstance(s.value, Verdict) and s.usage.completion_tokens > 0
        assert len(b.embed(["one", "two"])) == 2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """Start ``python -m llama_cpp.server`` on a free port with the embedded GGUF."""
    pytest.importorskip("uvicorn", reason="needs llama-cpp-python[server]")
    port = _free_port()
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(embedded_gguf()),
        "--model_alias",
        "smollm2-135m",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
        "--seed",
        "42",
    ]
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    logf = log.open("wb")  # a file, not a pipe: a full pipe would block the server
    proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama_cpp.server exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            urllib.request.urlopen(url + "/v1/models", timeout=1)
            break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail(f"llama_cpp.server did not start: {log.read_text(errors='replace')[-2000:]}")
    yield url + "/v1"
    proc.terminate()
    proc.wait(timeout=10)
    logf.close()


@pytest.mark.server
@pytest.mark.model
def test_openai_backend_against_real_llama_cpp_server(llama_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    b = OpenAIBackend("smollm2-135m", base_url=llama_server)
    assert "smollm2-135m" in b.list_models()
    s = structured_call(b, PROMPT, Verdict)
    assert isinstance(s.value, Verdict)
    # the real server refuses json_schema (HTTP 500); we fell back and remembered it
    assert b.mode in ("json_object_schema", "json_object", "plain")
    assert b.mode == "json_object_schema", f"unexpected fallback depth: {b.mode}"
    assert os.environ.get("OPENAI_API_KEY") is None
