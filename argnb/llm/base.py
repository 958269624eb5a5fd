"""The one interface every model backend implements.

A backend only talks to a model. Protocols (deliberation, dialectic, ...) never import a client
library; they call :func:`argnb.llm.structured.ask` with a backend. The base class owns the parts
that must behave the same for every backend -- cache lookup, retries with backoff, the usage
ledger -- so a concrete backend implements only ``_chat`` / ``_achat`` (one request, one reply).
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from tenacity import (
    AsyncRetrying,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from argnb.errors import BackendTimeout, BackendUnavailable


def public_url(url: str) -> str:
    """``url`` without credentials (``user:token@``) or query string, for messages, reports and
    result files: a key pasted into a base URL must not end up in a notebook or a log."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    if parts.username or parts.password:
        host = f"***@{host}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


Role = Literal["system", "user", "assistant"]


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True)
    role: Role
    content: str


class Usage(BaseModel):
    """Token counts reported by the server (0 when it reports none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class Options(BaseModel):
    """Generation options understood by every backend.

    Defaults favour reproducibility (temperature 0, fixed seed) because a lesson should show
    the same answer when a learner re-runs a cell.
    """

    model_config = ConfigDict(frozen=True)
    temperature: float = 0.0
    seed: int | None = 42
    max_tokens: int = 512
    num_ctx: int | None = None  # Ollama / llama.cpp context window


class Reply(BaseModel):
    """What a backend returns for one request."""

    text: str
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    model: str = ""
    backend: str = ""
    cached: bool = False
    parsed: Any = None  # filled by structured calls with the validated object


Messages = Sequence[Message | dict[str, str]]


def to_messages(messages: Messages | str) -> list[Message]:
    """Accept a plain prompt, dicts or Message objects."""
    if isinstance(messages, str):
        return [Message(role="user", content=messages)]
    return [m if isinstance(m, Message) else Message(**m) for m in messages]


class Backend(ABC):
    """A chat model behind one uniform, sync + async interface.

    Subclasses set ``name`` and implement ``_chat`` (and ``_achat`` when they have a native
    async client; otherwise the sync call runs in a worker thread).
    """

    name: str = "base"
    #: errors worth retrying: the server may recover (timeouts, overload)
    retry_on: tuple[type[BaseException], ...] = (BackendTimeout,)

    def __init__(
        self,
        model: str,
        *,
        options: Options | None = None,
        cache: Any = None,
        ledger: Any = None,
        max_retries: int = 2,
    ) -> None:
        from argnb.llm.ledger import default_ledger

        self.model = model
        self.options = options or Options()
        self.cache = cache
        self.ledger = ledger if ledger is not None else default_ledger()
        self.max_retries = max_retries

    # -- to implement -------------------------------------------------------------------
    @abstractmethod
    def _chat(self, messages: list[Message], schema: dict | None, options: Options) -> Reply:
        """Send one request and return the reply (no cache, no retries)."""

    async def _achat(self, messages: list[Message], schema: dict | None, options: Options) -> Reply:
        return await asyncio.to_thread(self._chat, messages, schema, options)

    def _loop_client(self, factory: Any) -> Any:
        """One async client per running event loop (clients are bound to the loop that made them;
        building one per call costs tens of milliseconds of CPU)."""
        import weakref

        loop = asyncio.get_running_loop()
        if not hasattr(self, "_async_clients"):
            self._async_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        client = self._async_clients.get(loop)
        if client is None:
            client = self._async_clients[loop] = factory()
        return client

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts (one vector each)."""
        raise NotImplementedError(f"{self.name} backend does not provide embeddings")

    def list_models(self) -> list[str]:
        """Models this backend can serve."""
        return [self.model]

    def describe(self) -> dict[str, Any]:
        """Identity used in cache keys and reports; never includes secrets."""
        return {"backend": self.name, "model": self.model}

    # -- public API ---------------------------------------------------------------------
    def chat(
        self,
        messages: Messages | str,
        *,
        schema: dict | None = None,
        options: Options | None = None,
    ) -> Reply:
        """Send messages; return the reply, from the cache when it has it."""
        msgs, opts = to_messages(messages), options or self.options
        key = self._cache_key(msgs, schema, opts)
        hit = self._cache_get(key)
        if hit is not None:
            return hit
        start = time.perf_counter()
        for attempt in Retrying(**self._retry_args()):
            with attempt:
                reply = self._chat(msgs, schema, opts)
        return self._finish(key, reply, start)

    async def achat(
        self,
        messages: Messages | str,
        *,
        schema: dict | None = None,
        options: Options | None = None,
    ) -> Reply:
        """Async twin of :meth:`chat`, used by the batch runner for bounded concurrency."""
        msgs, opts = to_messages(messages), options or self.options
        key = self._cache_key(msgs, schema, opts)
        hit = self._cache_get(key)
        if hit is not None:
            return hit
        start = time.perf_counter()
        async for attempt in AsyncRetrying(**self._retry_args()):
            with attempt:
                reply = await self._achat(msgs, schema, opts)
        return self._finish(key, reply, start)

    # -- shared machinery ---------------------------------------------------------------
    def _retry_args(self) -> dict[str, Any]:
        return {
            "stop": stop_after_attempt(self.max_retries + 1),
            "wait": wait_exponential(multiplier=0.5, max=8),
            "retry": retry_if_exception_type(self.retry_on),
            "reraise": True,
        }

    def _cache_key(self, msgs: list[Message], schema: dict | None, opts: Options) -> str | None:
        if self.cache is None:
            return None
        return self.cache.key(self.describe(), msgs, schema, opts)

    def _cache_get(self, key: str | None) -> Reply | None:
        if key is None:
            return None
        hit = self.cache.get(key)
        if hit is not None:
            self.ledger.record(self.name, self.model, hit.usage, 0.0, cached=True)
        return hit

    def _finish(self, key: str | None, reply: Reply, start: float) -> Reply:
        reply.latency_s = time.perf_counter() - start
        reply.backend = reply.backend or self.name
        reply.model = reply.model or self.model
        self.ledger.record(self.name, self.model, reply.usage, reply.latency_s, cached=False)
        if key is not None:
            self.cache.put(key, reply)
        return reply

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"


def unreachable(what: str, hint: str) -> BackendUnavailable:
    """Build the error for a server that is not there."""
    return BackendUnavailable(f"cannot reach {what}", hint=hint)
