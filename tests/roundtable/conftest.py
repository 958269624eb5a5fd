"""Fixtures for roundtable tests: a scripted table (ScriptedBackend streams word by word)."""

from __future__ import annotations

from typing import Any

import pytest

from argnb.roundtable.session import Session
from argnb.roundtable.testing import table_backend


@pytest.fixture(autouse=True)
def _own_cwd(tmp_path, monkeypatch):
    """A widget autosaves to ``roundtable_session.json`` in the working folder: a test's own."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def make_session():
    """``make_session(**kw)``: a scripted table (two deliberators, an analyzer, human Ann)."""

    def make(**kw: Any) -> Session:
        defaults: dict[str, Any] = {
            "moderator": table_backend(),
            "deliberators": [table_backend(), table_backend()],
            "analyzer": table_backend(),
            "human": "Ann",
            "turns": 6,
            "analyze_every": 3,
        }
        topic = kw.pop("topic", "Should phones be allowed in class?")
        defaults.update(kw)
        return Session(topic, **defaults)

    return make
