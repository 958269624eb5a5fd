"""argnb: teach argumentation with LLMs in Jupyter.

``import argnb`` stays fast: model clients and llama.cpp load on first use.
"""

from __future__ import annotations

from argnb._lazy import lazy_getattr

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
    "prompts": "argnb.prompts",  # argnb.prompts.show("fallacy", "deliberate")
}

__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = [*_LAZY, "__version__"]
