"""Text that shows while it is written: the one place protocols stream a reply to a view.

:func:`astream_reply` streams a plain-text reply through ``backend.astream`` when the backend has
it (every argnb backend does) and otherwise falls back to one whole reply, shown as a single
chunk -- so sessions and widgets (roundtable, debate) are written for streaming either way.

:class:`LiveBackend` wraps a backend for one agent turn: plain-text requests go through
:func:`astream_reply` and report their chunks; structured requests pass through untouched. An
:class:`~argnb.agents.Agent` given the wrapper records the turn as usual (usage, calls, latency
of every reply, the word-limit revision included), so streaming changes what the learner sees,
never what the transcript says.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from argnb.llm.base import Backend, Messages, Options, Reply, to_messages

Chunk = Callable[[str], None]


async def astream_reply(
    backend: Backend, messages: Messages | str, on_chunk: Chunk, *, options: Options | None = None
) -> Reply:
    """Send ``messages``; call ``on_chunk`` with each piece of text; return the whole reply."""
    astream = getattr(backend, "astream", None)
    if astream is None:  # a backend without streaming: one whole reply, one chunk
        reply = await backend.achat(messages, options=options)
        on_chunk(reply.text)
        return reply
    stream = astream(to_messages(messages), options=options)
    async for chunk in stream:
        on_chunk(chunk)
    return stream.reply


class LiveBackend:
    """``backend`` whose plain-text replies stream to callbacks (see the module docstring).

    ``on_start(attempt)`` is called before each request (attempt 2 is the word-limit revision),
    ``on_chunk(text)`` for every piece; ``first_chunk_s`` keeps, per attempt, the seconds from
    the request to its first non-empty chunk.
    """

    def __init__(
        self,
        backend: Backend,
        on_chunk: Chunk | None = None,
        on_start: Callable[[int], None] | None = None,
    ) -> None:
        self.inner = backend
        self.on_chunk = on_chunk
        self.on_start = on_start
        self.first_chunk_s: list[float | None] = []

    def __getattr__(self, name: str) -> Any:  # name, model, options, describe, ...
        return getattr(self.inner, name)

    async def achat(
        self,
        messages: Messages | str,
        *,
        schema: dict | None = None,
        options: Options | None = None,
    ) -> Reply:
        if schema is not None:
            return await self.inner.achat(messages, schema=schema, options=options)
        self.first_chunk_s.append(None)
        if self.on_start is not None:
            self.on_start(len(self.first_chunk_s))
        start = time.perf_counter()

        def chunk(text: str) -> None:
            if text and self.first_chunk_s[-1] is None:
                self.first_chunk_s[-1] = time.perf_counter() - start
            if text and self.on_chunk is not None:
                self.on_chunk(text)

        return await astream_reply(self.inner, messages, chunk, options=options)
