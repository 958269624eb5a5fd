"""The one interface every model backend implements.

A backend only talks to a model. Protocols (deliberation, dialectic, ...) never import a client
library; they call :func:`argnb.llm.structured.ask` with a backend. The base class owns the parts
that must behave the same for every backend -- cache lookup, retries with backoff, the usage
ledger, streaming -- so a concrete backend implements only ``_chat`` (one request, one reply) and
``_stream`` (the same request, yielding text chunks), plus their async twins when it has a native
async client. A stream may carry a schema too: the constrained JSON then arrives as it is
written (a view shows one field of it growing; :mod:`argnb.llm.partial`), and the finished reply
is the one :meth:`Backend.chat` gives for the same request, cached under the same key.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeVar

from tenacity import (
    AsyncRetrying,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from argnb.errors import BackendError, BackendTimeout, ServerError
from argnb.llm.deadline import acall_within, aiterate_within, call_within, iterate_within
from argnb.llm.ledger import default_ledger
from argnb.llm.streaming import AsyncChatStream, ChatStream, StreamState
from argnb.llm.types import Message, Messages, Options, Reply, Role, Usage, to_messages

__all__ = [
    "Backend",
    "Message",
    "Messages",
    "Options",
    "Reply",
    "Role",
    "Usage",
    "public_url",
    "to_messages",
]

T = TypeVar("T")
_END = object()
#: what ``_stream`` yields: text chunks, and once (usually last) a Reply carrying usage and model
Item = str | Reply


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


def backoff_s(retry: int) -> float:
    """Seconds waited before retry number ``retry`` (1-based): 0.5, 1, 2, 4, 8, 8, ..."""
    return min(8.0, 0.5 * 2 ** (retry - 1))


class Backend(ABC):
    """A chat model behind one uniform, sync + async interface.

    Subclasses set ``name`` and implement ``_chat`` (and ``_achat`` when they have a native
    async client; otherwise the sync call runs in a worker thread). ``_stream`` defaults to one
    chunk holding the whole reply; backends that can stream override it.
    """

    name: str = "base"
    #: errors worth retrying: the server may recover (timeouts, overload, HTTP 5xx)
    retry_on: tuple[type[BaseException], ...] = (BackendTimeout, ServerError)
    #: total seconds one try of a request may take (None: no deadline, e.g. an in-process model)
    timeout: float | None = None

    def __init__(
        self,
        model: str,
        *,
        options: Options | None = None,
        cache: Any = None,
        ledger: Any = None,
        max_retries: int = 2,
    ) -> None:
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

    def _stream(
        self, messages: list[Message], options: Options, schema: dict | None = None
    ) -> Iterator[Item]:
        """Send one request; yield text chunks as they come, and a Reply with usage and model
        (its text is ignored). With a ``schema``, the same constrained request ``_chat`` sends.
        Default: the whole reply as one chunk."""
        reply = self._chat(messages, schema, options)
        if reply.text:
            yield reply.text
        yield reply

    def _stream_of(
        self, messages: list[Message], options: Options, schema: dict | None
    ) -> Iterator[Item]:
        """``_stream`` called the way it was before schemas streamed, when there is none (a
        subclass written for that signature keeps working for plain text)."""
        if schema is None:
            return self._stream(messages, options)
        return self._stream(messages, options, schema)

    async def _astream(
        self, messages: list[Message], options: Options, schema: dict | None = None
    ) -> AsyncIterator[Item]:
        """Default: the sync ``_stream`` driven from a worker thread, chunk by chunk."""
        it = self._stream_of(messages, options, schema)
        try:
            while (item := await asyncio.to_thread(next, it, _END)) is not _END:
                yield item  # type: ignore[misc]
        finally:
            with contextlib.suppress(ValueError):  # still running in its thread if we were
                await asyncio.to_thread(it.close)  # cancelled; it closes once collected

    def _prepare(self) -> None:
        """Slow one-off set-up (importing a client library takes seconds on a busy machine),
        run before a request's deadline starts so it never counts against the timeout."""
        return None

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

    def embed_identity(self) -> dict[str, Any]:
        """What determines an embedding, for cache keys: :meth:`describe` and the embedding
        model (never a secret)."""
        return {**self.describe(), "embed_model": getattr(self, "embed_model", None) or self.model}

    def cached_embed(self, texts: Sequence[str]) -> list[list[float]]:
        """:meth:`embed` through the response cache (when there is one): only the texts it does
        not hold reach the model, in one call, and their vectors are stored for next time."""
        texts = list(texts)
        cache = self.cache
        if cache is None or not texts or not hasattr(cache, "get_vectors"):
            return self.embed(texts)
        from argnb.llm.cache import as_float32, embed_key

        identity = self.embed_identity()
        keys = [embed_key(identity, t) for t in texts]
        found = cache.get_vectors(keys)
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if todo:
            vectors = self.embed(list(todo.values()))
            if len(vectors) != len(todo):
                raise BackendError(
                    f"{self._where()} returned {len(vectors)} embeddings for {len(todo)} texts"
                )
            fresh = {k: as_float32(v) for k, v in zip(todo, vectors, strict=True)}
            cache.put_vectors(fresh)
            found.update(fresh)
        return [list(found[k]) for k in keys]

    def list_models(self) -> list[str]:
        """Models this backend can serve."""
        return [self.model]

    def prefill(self, messages: Sequence[Message | dict[str, str]]) -> int:
        """Read the start of a request that is coming (while a learner types), so that request
        only evaluates what follows; ``messages`` are its first messages. Returns the prompt
        tokens kept; 0 where there is nothing to do (here: a server keeps its own prefix cache).
        The request's reply is the same with or without it."""
        return 0

    def describe(self) -> dict[str, Any]:
        """Identity used in cache keys and reports; never includes secrets."""
        return {"backend": self.name, "model": self.model}

    def structured_mode(self) -> str:
        """How a schema is enforced right now (e.g. ``grammar``, ``format``, ``json_schema``,
        ``plain``). Worth recording next to results; not part of :meth:`describe` because it can
        change during a session and must not change cache keys."""
        return "native"

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
        reply = self._with_retries(lambda: self._bounded(lambda: self._chat(msgs, schema, opts)))
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
        reply = await self._awith_retries(lambda: self._abounded(self._achat(msgs, schema, opts)))
        return self._finish(key, reply, start)

    def stream(
        self,
        messages: Messages | str,
        *,
        schema: dict | None = None,
        options: Options | None = None,
    ) -> ChatStream:
        """Send messages; iterate the result for text chunks as the model writes them::

        >>> from argnb.llm import ScriptedBackend
        >>> s = ScriptedBackend(["Premises first, then the claim."]).stream("Say it")
        >>> [chunk for chunk in s]
        ['Premises ', 'first, ', 'then ', 'the ', 'claim.']
        >>> s.reply.text, s.reply.first_chunk_s is not None
        ('Premises first, then the claim.', True)

        ``s.reply`` (after the last chunk) is the whole :class:`Reply`: text, usage, latency
        (``latency_s``, the whole call) and ``first_chunk_s`` (from the call to the first chunk).
        It is cached whole and recorded in the ledger like a :meth:`chat` reply; a cache hit
        yields the whole text as one chunk. Failures before the first chunk are retried like
        :meth:`chat`; once text has been shown, an error propagates (a retry would repeat it).
        A server's ``timeout`` bounds the whole stream, like a whole :meth:`chat` request.

        With a ``schema`` the chunks are the constrained JSON as it is written (the same request
        :meth:`chat` sends with it), and ``s.reply`` is what ``chat(..., schema=...)`` returns
        for the same messages -- the same cache key, too.
        """
        msgs, opts = to_messages(messages), options or self.options
        state = StreamState()
        return ChatStream(self._stream_chunks(msgs, schema, opts, state), state)

    def astream(
        self,
        messages: Messages | str,
        *,
        schema: dict | None = None,
        options: Options | None = None,
    ) -> AsyncChatStream:
        """Async twin of :meth:`stream`: ``async for chunk in backend.astream(...)``."""
        msgs, opts = to_messages(messages), options or self.options
        state = StreamState()
        return AsyncChatStream(self._astream_chunks(msgs, schema, opts, state), state)

    # -- shared machinery ---------------------------------------------------------------
    def _where(self) -> str:
        """Who did not answer, for error messages (e.g. "Ollama at http://...")."""
        return f"the {self.name} backend"

    def _expired(self) -> BackendTimeout:
        return BackendTimeout(f"{self._where()} did not answer within {self.timeout:g} s")

    def _bounded(self, fn: Callable[[], T]) -> T:
        """``fn()`` within ``self.timeout`` seconds in all (not per read: see deadline.py)."""
        if self.timeout is None:
            return fn()
        self._prepare()
        return call_within(fn, self.timeout, self._expired)

    async def _abounded(self, aw: Awaitable[T]) -> T:
        if self.timeout is None:
            return await aw
        self._prepare()
        return await acall_within(aw, self.timeout, self._expired)

    def _open_stream(
        self, msgs: list[Message], schema: dict | None, opts: Options
    ) -> Iterator[Item]:
        if self.timeout is None:
            return self._stream_of(msgs, opts, schema)
        self._prepare()
        return iterate_within(
            lambda: self._stream_of(msgs, opts, schema), self.timeout, self._expired
        )

    def _aopen_stream(
        self, msgs: list[Message], schema: dict | None, opts: Options
    ) -> AsyncIterator[Item]:
        it = self._astream(msgs, opts) if schema is None else self._astream(msgs, opts, schema)
        if self.timeout is None:
            return it
        self._prepare()
        return aiterate_within(it, self.timeout, self._expired)

    def _retry_args(self) -> dict[str, Any]:
        return {
            "stop": stop_after_attempt(self.max_retries + 1),
            "wait": wait_exponential(multiplier=0.5, max=8),
            "retry": retry_if_exception_type(self.retry_on),
            "reraise": True,
        }

    def _with_retries(self, fn: Callable[[], T]) -> T:
        try:
            for attempt in Retrying(**self._retry_args()):
                with attempt:
                    result = fn()
        except self.retry_on as exc:
            raise self._gave_up(exc) from exc
        return result

    async def _awith_retries(self, fn: Callable[[], Awaitable[T]]) -> T:
        try:
            async for attempt in AsyncRetrying(**self._retry_args()):
                with attempt:
                    result = await fn()
        except self.retry_on as exc:
            raise self._gave_up(exc) from exc
        return result

    def _gave_up(self, exc: BaseException) -> BaseException:
        """The last retryable error, saying how many tries it took and the worst case in time."""
        if not isinstance(exc, BackendError):
            return exc
        tries = self.max_retries + 1
        if tries == 1 and not (isinstance(exc, BackendTimeout) and self.timeout):
            return exc
        what = "1 try" if tries == 1 else f"{tries} tries"
        if isinstance(exc, BackendTimeout) and self.timeout:
            worst = tries * self.timeout + sum(backoff_s(r) for r in range(1, tries))
            return type(exc)(
                f"{exc.message} ({what} of at most {self.timeout:g} s each: "
                f"{worst:g} s in the worst case)",
                hint="allow more time with --timeout SECONDS (connect(timeout=...)), "
                "or use a smaller model",
            )
        return type(exc)(f"{exc.message} (after {what})", hint=exc.hint)

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

    def _stream_hit(self, key: str | None, state: StreamState) -> str | None:
        """The cached text for a stream (None on a miss)."""
        hit = self._cache_get(key)
        if hit is None:
            return None
        state.reply = hit
        if hit.text:
            state.chunks.append(hit.text)
        return hit.text

    def _stream_end(self, key: str | None, state: StreamState, done: bool) -> None:
        if done:
            reply = Reply(
                text=state.text,
                usage=state.meta.usage if state.meta else Usage(),
                first_chunk_s=state.first_chunk_s,
                model=(state.meta.model if state.meta else "") or self.model,
                backend=self.name,
            )
            state.reply = self._finish(key, reply, state.start)
        else:  # abandoned or failed mid-way: not cached, but the model did the work
            usage = state.meta.usage if state.meta else Usage()
            elapsed = time.perf_counter() - state.start
            self.ledger.record(self.name, self.model, usage, elapsed, cached=False)

    def _stream_chunks(
        self, msgs: list[Message], schema: dict | None, opts: Options, state: StreamState
    ):
        key = self._cache_key(msgs, schema, opts)
        hit = self._stream_hit(key, state)
        if hit is not None:
            if hit:
                yield hit
            return
        state.start = time.perf_counter()

        def opening() -> tuple[Iterator[Item], Any]:
            it = self._open_stream(msgs, schema, opts)
            return it, next(it, _END)

        it, item = self._with_retries(opening)
        try:
            while item is not _END:
                if (text := state.take(item)) is not None:
                    yield text
                item = next(it, _END)
        finally:
            it.close()
            self._stream_end(key, state, done=item is _END)

    async def _astream_chunks(
        self, msgs: list[Message], schema: dict | None, opts: Options, state: StreamState
    ):
        key = self._cache_key(msgs, schema, opts)
        hit = self._stream_hit(key, state)
        if hit is not None:
            if hit:
                yield hit
            return
        state.start = time.perf_counter()

        async def opening() -> tuple[AsyncIterator[Item], Any]:
            it = self._aopen_stream(msgs, schema, opts)
            return it, await anext_or(it)

        it, item = await self._awith_retries(opening)
        try:
            while item is not _END:
                if (text := state.take(item)) is not None:
                    yield text
                item = await anext_or(it)
        finally:
            await it.aclose()  # type: ignore[attr-defined]
            self._stream_end(key, state, done=item is _END)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"


async def anext_or(it: AsyncIterator[T]) -> T | Any:
    """The next item of ``it``, or the end marker (no StopAsyncIteration to catch)."""
    try:
        return await it.__anext__()
    except StopAsyncIteration:
        return _END
