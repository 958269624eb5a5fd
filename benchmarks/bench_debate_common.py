"""Shared bits of the debate benchmarks: where the real data and the cached memories live."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
#: memories built by the benchmarks are kept here, so embedding runs once (and resumes)
CACHE = Path(os.environ.get("ARGNB_BENCH_CACHE", Path(tempfile.gettempdir()) / "argnb-bench"))


def have_data() -> bool:
    return DATA.is_dir()


def minilm():
    """The MiniLM embedder, or None when the optional extra is not installed."""
    from argnb.debate.embed import MiniLMEmbedder
    from argnb.errors import MissingDependency

    e = MiniLMEmbedder()
    try:
        e.model  # noqa: B018 -- loads it, or says it is missing
    except MissingDependency:
        return None
    return e


def local():
    """The embedded SmolLM2 backend, or None without llama.cpp / the GGUF."""
    from argnb.errors import ArgnbError

    try:
        from argnb.llm import LocalBackend

        b = LocalBackend()
        b.llm  # noqa: B018
        return b
    except (ArgnbError, ImportError):
        return None


def skipped(name: str, why: str) -> list[dict]:
    return [{"benchmark": name, "result": f"skipped: {why}"}]
