"""Lazy attribute loading for package ``__init__`` modules.

``import argnb`` must stay fast (no pandas, llama_cpp or openai at import), yet learners expect
``argnb.connect`` or ``argnb.fallacy.deliberate`` to just work. A table maps each public name to
the module that defines it; the module is imported on first access (PEP 562).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` that imports ``table[name]`` on first use."""

    def __getattr__(name: str) -> Any:
        if name in table:
            module = importlib.import_module(table[name])
            # a submodule listed under its own name is the module itself (argnb.prompts)
            return module if table[name] == f"{package}.{name}" else getattr(module, name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
