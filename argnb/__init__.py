"""argnb: teach argumentation with LLMs in Jupyter.

``import argnb`` stays fast: model clients and llama.cpp load on first use.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "connect": "argnb.config",
    "default_backend": "argnb.config",
    "set_default_backend": "argnb.config",
    "ask": "argnb.llm.structured",
    "structured_call": "argnb.llm.structured",
    "usage": "argnb.llm.ledger",
    "Transcript": "argnb.transcript",
    "Turn": "argnb.transcript",
    "run_batch": "argnb.batch",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'argnb' has no attribute {name!r}")


__all__ = [*_LAZY, "__version__"]
