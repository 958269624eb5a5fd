"""Model backends and structured calls.

Nothing here imports a client library at import time; ``OllamaBackend``, ``OpenAIBackend`` and
``LocalBackend`` load theirs on first use.
"""

from __future__ import annotations

from typing import Any

from argnb.llm.base import Backend, Message, Options, Reply, Usage
from argnb.llm.ledger import Ledger, default_ledger, usage
from argnb.llm.scripted import Request, ScriptedBackend
from argnb.llm.structured import Structured, aask, ask, astructured_call, structured_call

_LAZY = {
    "OllamaBackend": "argnb.llm.ollama",
    "OpenAIBackend": "argnb.llm.openai",
    "LocalBackend": "argnb.llm.local",
    "ResponseCache": "argnb.llm.cache",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)


__all__ = [
    "Backend",
    "Ledger",
    "LocalBackend",
    "Message",
    "OllamaBackend",
    "OpenAIBackend",
    "Options",
    "Reply",
    "Request",
    "ResponseCache",
    "ScriptedBackend",
    "Structured",
    "Usage",
    "aask",
    "ask",
    "astructured_call",
    "default_ledger",
    "structured_call",
    "usage",
]
