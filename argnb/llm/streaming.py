"""What :meth:`Backend.stream` and :meth:`Backend.astream` return: text chunks, then a Reply.

A widget shows the chunks as they arrive and then records the whole reply (text, usage, latency,
time to the first chunk) like any other call, so the stream object hands out both: iterate it
for the chunks, read ``.reply`` once it is exhausted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

from argnb.llm.types import Reply


@dataclass
class StreamState:
    """Filled by the backend's generator while a stream runs."""

    chunks: list[str] = field(default_factory=list)
    reply: Reply | None = None


def _not_finished() -> RuntimeError:
    return RuntimeError("the stream has not finished: iterate it to the end before reading .reply")


class ChatStream:
    """Iterate for text chunks (``str``); ``reply`` is the whole :class:`Reply` afterwards.

    Nothing is sent until the first chunk is asked for. ``with backend.stream(...) as s:``
    closes an abandoned stream at once (the local model is locked while a stream is open).
    """

    def __init__(self, chunks: Iterator[str], state: StreamState) -> None:
        self._chunks = chunks
        self._state = state

    def __iter__(self) -> ChatStream:
        return self

    def __next__(self) -> str:
        return next(self._chunks)

    @property
    def text(self) -> str:
        """The text received so far."""
        return "".join(self._state.chunks)

    @property
    def done(self) -> bool:
        return self._state.reply is not None

    @property
    def reply(self) -> Reply:
        """The whole reply; raises RuntimeError before the stream is exhausted."""
        if self._state.reply is None:
            raise _not_finished()
        return self._state.reply

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


class AsyncChatStream:
    """Async twin of :class:`ChatStream`: ``async for chunk in stream`` then ``stream.reply``."""

    def __init__(self, chunks: AsyncIterator[str], state: StreamState) -> None:
        self._chunks = chunks
        self._state = state

    def __aiter__(self) -> AsyncChatStream:
        return self

    async def __anext__(self) -> str:
        return await self._chunks.__anext__()

    @property
    def text(self) -> str:
        return "".join(self._state.chunks)

    @property
    def done(self) -> bool:
        return self._state.reply is not None

    @property
    def reply(self) -> Reply:
        if self._state.reply is None:
            raise _not_finished()
        return self._state.reply

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
