"""A damaged cache database or config file: one clear line, and the commands that fix it work."""

from __future__ import annotations

import json
import os

import pytest

from argnb.cli import main
from argnb.config import connect, read_config, resolve
from argnb.errors import ArgnbError, ConfigError
from argnb.llm.cache import ResponseCache, default_cache_path

GARBAGE = bytes(range(256)) * 20


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    first, *rest = err.strip().splitlines()
    assert first.startswith("error: ") and all(r.startswith("  fix: ") for r in rest)
    return err


def test_a_corrupt_cache_gives_one_line_and_cache_clear_removes_it(capsys, monkeypatch):
    """Before: sqlite3.DatabaseError from every command, `argnb cache clear` included."""
    path = default_cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(GARBAGE)
    with pytest.raises(ConfigError) as err:
        ResponseCache()
    assert str(path) in err.value.message and "argnb cache clear" in err.value.hint
    assert main(["cache", "info"]) == 2
    assert "argnb cache clear" in _one_line_error(capsys)
    monkeypatch.setenv("ARGNB_CACHE", "1")
    assert main(["ask", "q", "--backend", "ollama", "--host", "http://127.0.0.1:1"]) == 2
    _one_line_error(capsys)
    assert main(["cache", "clear"]) == 0
    assert "removed the unreadable cache file" in capsys.readouterr().out
    assert not path.exists()
    assert main(["cache", "info"]) == 0 and "0 cached replies" in capsys.readouterr().out


def test_a_cache_path_that_is_a_directory_is_explained(tmp_path):
    (tmp_path / "c.sqlite").mkdir()
    with pytest.raises(ConfigError):
        ResponseCache(tmp_path / "c.sqlite")
    from argnb.llm.cache import remove_cache_file

    with pytest.raises(ConfigError, match="is a directory"):
        remove_cache_file(tmp_path / "c.sqlite")


def _write_config(text: str | bytes) -> str:
    path = os.environ["ARGNB_CONFIG"]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(text.encode() if isinstance(text, str) else text)
    return path


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('backend = "ollama"\nmodel = qwen3\n', "line 2"),
        (b'model = "caf\xe9"\n', "UTF-8"),
        ("backend = 3\n", "'backend'"),
        ('timeout = "soon"\n', "'timeout'"),
    ],
)
def test_a_malformed_config_names_the_file_and_what_is_wrong(content, words):
    path = _write_config(content)
    with pytest.raises(ConfigError) as err:
        read_config()
    assert path in err.value.message and words in err.value.message
    assert "\n" not in err.value.message
    with pytest.raises(ArgnbError):
        resolve()


def test_doctor_reports_a_malformed_config_instead_of_crashing(capsys, monkeypatch):
    """Before: TOMLDecodeError from `argnb doctor`, the command meant to diagnose it."""
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = _write_config('backend = "ollama"\nmodel = qwen3\n')
    main(["doctor", "--json"])
    checks = {c["backend"]: c for c in json.loads(capsys.readouterr().out)}
    assert checks["config"]["ok"] is False and "line 2" in checks["config"]["detail"]
    assert checks["local"]["ok"] is True  # the rest is still diagnosed
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert f"-- config  {path}" in out and "current choice is invalid" in out


def test_config_timeout_is_used_and_checked():
    _write_config("timeout = 7\n")
    assert connect("ollama", "m", make_default=False).timeout == 7.0
    assert connect("ollama", "m", timeout=2, make_default=False).timeout == 2.0  # argument wins
    for bad in (-1, float("nan"), True):
        with pytest.raises(ArgnbError, match="positive number"):
            connect("openai", "m", base_url="http://127.0.0.1:1/v1", timeout=bad)
