"""Model backends and structured calls.

Nothing here imports a client library at import time; ``OllamaBackend``, ``OpenAIBackend`` and
``LocalBackend`` load theirs on first use.
"""

from __future__ import annotations

from argnb._lazy import lazy_getattr
from argnb.llm.base import Backend, Message, Options, Reply, Usage
from argnb.llm.ledger import Ledger, default_ledger, usage
from argnb.llm.scripted import Request, ScriptedBackend
from argnb.llm.streaming import AsyncChatStream, ChatStream
from argnb.llm.structured import Structured, aask, ask, astructured_call, structured_call

_LAZY = {
    "OllamaBackend": "argnb.llm.ollama",
    "OpenAIBackend": "argnb.llm.openai",
    "LocalBackend": "argnb.llm.local",
    "ResponseCache": "argnb.llm.cache",
}

__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = [
    "AsyncChatStream",
    "Backend",
    "ChatStream",
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
