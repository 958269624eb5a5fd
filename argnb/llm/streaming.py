"""What :meth:`Backend.stream` and :meth:`Backend.astream` return: text chunks, then a Reply.

A widget shows the chunks as they arrive and then records the whole reply (text, usage, latency,
time to the first chunk) like any other call, so the stream object hands out both: iterate it
for the chunks, read ``.reply`` once it is exhausted.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

from argnb.llm.types import Reply


@dataclass
class StreamState:
    """What a running stream has received; filled by the backend's generator."""

    chunks: list[str] = field(default_factory=list)
    start: float = 0.0
    first_chunk_s: float | None = None
    meta: Reply | None = None  # usage and model, from the backend's last item
    reply: Reply | None = None  # set once the stream is complete

    @property
    def text(self) -> str:
        return "".join(self.chunks)

    def take(self, item: str | Reply) -> str | None:
        """Record one item of a backend's ``_stream``; the text to hand on, if any."""
        if isinstance(item, Reply):
            self.meta = item
            return None
        if not item:
            return None
        if self.first_chunk_s is None:
            self.first_chunk_s = time.perf_counter() - self.start
        self.chunks.append(item)
        return item


class _Stream:
    def __init__(self, state: StreamState) -> None:
        self._state = state

    @property
    def text(self) -> str:
        """The text received so far."""
        return self._state.text

    @property
    def done(self) -> bool:
        return self._state.reply is not None

    @property
    def reply(self) -> Reply:
        """The whole reply; raises RuntimeError before the stream is exhausted."""
        if self._state.reply is None:
            raise RuntimeError(
                "the stream has not finished: iterate it to the end before reading .reply"
            )
        return self._state.reply


class ChatStream(_Stream):
    """Iterate for text chunks (``str``); ``reply`` is the whole :class:`Reply` afterwards.

    Nothing is sent until the first chunk is asked for. ``with backend.stream(...) as s:``
    closes an abandoned stream at once (the local model is locked while a stream is open).
    """

    def __init__(self, chunks: Iterator[str], state: StreamState) -> None:
        super().__init__(state)
        self._chunks = chunks

    def __iter__(self) -> ChatStream:
        return self

    def __next__(self) -> str:
        return next(self._chunks)

    def read(self) -> Reply:
        """Consume the remaining chunks and return the reply."""
        for _ in self:
            pass
        return self.reply

    def close(self) -> None:
        """Stop early: the request is cancelled and nothing is cached."""
        self._chunks.close()  # type: ignore[attr-defined]

    def __enter__(self) -> ChatStream:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class AsyncChatStream(_Stream):
    """Async twin of :class:`ChatStream`: ``async for chunk in stream`` then ``stream.reply``."""

    def __init__(self, chunks: AsyncIterator[str], state: StreamState) -> None:
        super().__init__(state)
        self._chunks = chunks

    def __aiter__(self) -> AsyncChatStream:
        return self

    async def __anext__(self) -> str:
        return await self._chunks.__anext__()

    async def read(self) -> Reply:
        async for _ in self:
            pass
        return self.reply

    async def aclose(self) -> None:
        await self._chunks.aclose()  # type: ignore[attr-defined]

    async def __aenter__(self) -> AsyncChatStream:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
