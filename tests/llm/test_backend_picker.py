from argnb.config import default_backend
from argnb.llm import ScriptedBackend
from argnb.llm.testserver import ProtocolServer
from argnb.widgets.backend_picker import BackendPicker


def test_picker_lists_ollama_models_and_connects():
    engine = ScriptedBackend(lambda r: "hi", model="m1")
    with ProtocolServer(engine, models=["m1", "m2"]) as srv:
        p = BackendPicker()
        p.kind.value = "ollama"
        assert p.ollama_box.layout.display == "" and p.openai_box.layout.display == "none"
        p.host.value = srv.url
        assert p.list_ollama_models() == ["m1", "m2"]
        p.ollama_model.value = "m2"
        b = p.connect()
        assert b is default_backend() and b.model == "m2" and "connected" in p.status.value


def test_picker_reports_errors_escaped_and_forgets_the_key():
    p = BackendPicker()
    p.kind.value = "openai"
    p.base_url.value = "http://127.0.0.1:1/<b>v1"
    p.api_key.value = "sk-secret-value"
    assert p.connect() is None
    assert "<b>" not in p.status.value and "&lt;b&gt;" in p.status.value
    assert p.api_key.value == ""
