"""Walkthrough item 1: only a backend that answered becomes the default; stale errors clear."""

from __future__ import annotations

import socket

from argnb.config import default_backend, set_default_backend
from argnb.llm import ScriptedBackend
from argnb.llm.testserver import ProtocolServer
from argnb.widgets.backend_picker import BackendPicker


def _nobody_listens() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_failed_connect_keeps_the_previous_default():
    before = ScriptedBackend(lambda r: "hi", model="before")
    set_default_backend(before)
    p = BackendPicker()
    p.kind.value = "ollama"
    p.host.value = _nobody_listens()  # "Ollama not running"
    p.go.click()
    assert default_backend() is before
    assert p.backend is None and not p.go.disabled
    assert "could not connect" in p.status.value and "unchanged" in p.status.value
    assert p.note.result_html == ""  # nothing to record


def test_only_a_backend_that_answered_becomes_the_default():
    engine = ScriptedBackend(lambda r: "hi", model="m1")
    p = BackendPicker()
    p.kind.value = "ollama"
    with ProtocolServer(engine, models=["m1", "m2"]) as srv:
        p.host.value = srv.url
        assert p.list_ollama_models() == ["m1", "m2"]
        assert p.ollama_model.value == "m1"  # listing picks a model the server has
        p.ollama_model.value = "m2"
        p.go.click()
        chosen = default_backend()
        assert chosen is p.backend and chosen.model == "m2" and "connected" in p.status.value
        assert "Connected to ollama / m2" in p.note.result_html
    p.go.click()  # the server is gone: the answer that worked stays the default
    assert default_backend() is chosen
    assert "could not connect" in p.status.value and "Still using ollama / m2" in p.status.value


def test_a_model_the_server_does_not_have_is_refused():
    before = ScriptedBackend(lambda r: "hi", model="before")
    set_default_backend(before)
    with ProtocolServer(ScriptedBackend(lambda r: "hi", model="m1"), models=["m1"]) as srv:
        p = BackendPicker()
        p.kind.value = "ollama"
        p.host.value = srv.url
        p.ollama_model.options = ["llama3.2"]
        p.go.click()
    assert default_backend() is before
    assert "ollama pull llama3.2" in p.status.value


def test_the_stale_error_clears_when_the_choice_changes():
    p = BackendPicker()
    p.kind.value = "openai"
    p.base_url.value = _nobody_listens() + "/v1"
    p.api_key.value = "none"
    p.go.click()
    error = "color:#a11"  # how the picker shows an error
    assert error in p.status.value and "could not connect" in p.status.value
    p.base_url.value = "http://127.0.0.1:8000/v1"  # another choice: the old error is not about it
    assert error not in p.status.value
    p.api_key.value = "none"
    p.go.click()
    assert error in p.status.value
    p.kind.value = "local"
    assert error not in p.status.value


def test_the_embedded_model_connects_without_a_model_call():
    p = BackendPicker()
    b = p.connect()
    assert b is not None and default_backend() is b and b.name == "local"
    assert "connected: local / smollm2-135m" in p.status.value


def test_placeholders_have_room():
    """The base URL placeholder was cut off at the default width (checked for real in the
    browser suite; here: every text box that shows a placeholder is given room for it)."""
    p = BackendPicker()
    for box in (p.host, p.base_url, p.api_key):
        width = int(str(box.layout.width).removesuffix("px"))
        assert width >= 100 + 8 * len(box.placeholder), box.placeholder
