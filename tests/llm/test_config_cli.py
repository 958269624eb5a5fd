import json
import subprocess
import sys

import pytest

import argnb
from argnb.cli import main
from argnb.config import connect, default_backend, read_config, resolve
from argnb.errors import ArgnbError


def test_resolution_order(monkeypatch, tmp_path):
    assert resolve() == ("local", "smollm2-135m")
    cfg = tmp_path / "config.toml"
    cfg.write_text('backend = "ollama"\nmodel = "qwen3"\napi_key = "sk-never"\n')
    monkeypatch.setenv("ARGNB_CONFIG", str(cfg))
    assert resolve() == ("ollama", "qwen3")
    assert "api_key" not in read_config()  # keys are never taken from files
    monkeypatch.setenv("ARGNB_BACKEND", "openai")
    assert resolve() == ("openai", "qwen3")
    monkeypatch.setenv("ARGNB_MODEL", "gpt-x")
    assert resolve("ollama") == ("ollama", "gpt-x")
    assert resolve("ollama", "m") == ("ollama", "m")


def test_unknown_backend_is_a_clear_error():
    with pytest.raises(ArgnbError) as info:
        resolve("olama")
    assert "local, ollama, openai" in info.value.hint


def test_connect_sets_the_default_and_caches_when_asked(monkeypatch):
    b = connect("ollama", "m", host="http://127.0.0.1:1", cache=True)
    assert default_backend() is b and b.cache is not None
    assert connect("ollama", "m", cache=False, make_default=False).cache is None
    assert default_backend() is b


def test_import_argnb_is_light():
    code = (
        "import sys, argnb, argnb.llm;"
        "heavy=[m for m in ('llama_cpp','openai','ollama','pandas','torch') if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_cli_doctor_json_and_cache_commands(capsys, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    main(["doctor", "--json"])
    checks = {c["backend"]: c for c in json.loads(capsys.readouterr().out)}
    assert checks["ollama"]["ok"] is False and "ollama serve" in checks["ollama"]["fix"]
    assert checks["openai"]["ok"] is False and "OPENAI_API_KEY" in checks["openai"]["fix"]
    assert main(["cache", "clear"]) == 0
    assert "removed 0" in capsys.readouterr().out


def test_cli_reports_argnb_errors_without_traceback(capsys):
    assert main(["ask", "hi", "--backend", "ollama", "--host", "http://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert "ollama serve" in err and "Traceback" not in err


def test_lazy_attributes():
    assert argnb.Transcript.__name__ == "Transcript"
    with pytest.raises(AttributeError):
        argnb.nope  # noqa: B018
