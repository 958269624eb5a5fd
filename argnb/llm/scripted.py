"""ScriptedBackend: a test double that replays replies, like httpx's MockTransport.

Protocol tests must not depend on a model: they say what the "model" answers and check that the
rules hold. A script is either a list of answers (consumed in order) or a function of the
request. An answer may be a string, a dict or pydantic object (sent as JSON), or an exception
instance (raised, to simulate a failing server).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from argnb.errors import ScriptExhausted
from argnb.llm.base import Backend, Message, Options, Reply, Usage, to_messages

Answer = str | dict | BaseModel | BaseException


@dataclass(frozen=True)
class Request:
    """What the backend was asked, kept for assertions."""

    messages: list[Message]
    schema: dict | None
    options: Options

    @property
    def prompt(self) -> str:
        """All message contents joined, handy for ``assert "x" in req.prompt``."""
        return "\n".join(m.content for m in self.messages)

    @property
    def last(self) -> str:
        return self.messages[-1].content if self.messages else ""


def _render(answer: Answer) -> str:
    if isinstance(answer, BaseException):
        raise answer
    if isinstance(answer, BaseModel):
        return answer.model_dump_json()
    if isinstance(answer, dict):
        return json.dumps(answer)
    return str(answer)


def chunks_of(text: str) -> list[str]:
    """``text`` cut into words that keep their trailing whitespace (joined back, it is ``text``)."""
    return re.findall(r"\s*\S+\s*", text) or ([text] if text else [])


class ScriptedBackend(Backend):
    """Answers from a script; records every request in ``requests``."""

    name = "scripted"

    def __init__(
        self,
        script: Iterable[Answer] | Callable[[Request], Answer],
        *,
        model: str = "script",
        delay_s: float = 0.0,
        chunk_delay_s: float = 0.0,
        **kw: Any,
    ) -> None:
        super().__init__(model, **kw)
        self._fn = script if callable(script) else None
        self._queue = [] if callable(script) else list(script)
        self.delay_s = delay_s  # before the reply (or its first chunk)
        self.chunk_delay_s = chunk_delay_s  # between streamed chunks
        self.requests: list[Request] = []
        #: what :meth:`prefill` was handed, in order (a test checks it is the next request's start)
        self.prefilled: list[list[Message]] = []
        self._lock = threading.Lock()

    def _next(self, req: Request) -> str:
        with self._lock:
            self.requests.append(req)
            if self._fn is None:
                if not self._queue:
                    raise ScriptExhausted(
                        f"scripted backend got request #{len(self.requests)} but has no answer left",
                        hint="add answers to the script or use a function of the request",
                    )
                answer = self._queue.pop(0)
        if self._fn is not None:
            answer = self._fn(req)
        return _render(answer)

    def prefill(self, messages: Any) -> int:
        """Recorded only (no model to warm); the word count stands in for the tokens."""
        msgs = to_messages(list(messages))
        with self._lock:
            self.prefilled.append(msgs)
        return sum(len(m.content.split()) for m in msgs)

    def _reply(self, text: str, req: Request) -> Reply:
        usage = Usage(
            prompt_tokens=sum(len(m.content.split()) for m in req.messages),
            completion_tokens=len(text.split()),
        )
        return Reply(text=text, usage=usage, model=self.model, backend=self.name)

    def _chat(self, messages: list[Message], schema: dict | None, options: Options) -> Reply:
        req = Request(messages, schema, options)
        if self.delay_s:
            time.sleep(self.delay_s)
        return self._reply(self._next(req), req)

    async def _achat(self, messages: list[Message], schema: dict | None, options: Options) -> Reply:
        req = Request(messages, schema, options)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return self._reply(self._next(req), req)

    def _stream(
        self, messages: list[Message], options: Options, schema: dict | None = None
    ) -> Iterator[str | Reply]:
        """The answer word by word (each word with its trailing space); a schema's JSON too."""
        req = Request(messages, schema, options)
        if self.delay_s:
            time.sleep(self.delay_s)
        text = self._next(req)
        for k, chunk in enumerate(chunks_of(text)):
            if k and self.chunk_delay_s:
                time.sleep(self.chunk_delay_s)
            yield chunk
        yield self._reply(text, req)

    async def _astream(
        self, messages: list[Message], options: Options, schema: dict | None = None
    ) -> AsyncIterator[str | Reply]:
        req = Request(messages, schema, options)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        text = self._next(req)
        for k, chunk in enumerate(chunks_of(text)):
            if k and self.chunk_delay_s:
                await asyncio.sleep(self.chunk_delay_s)
            yield chunk
        yield self._reply(text, req)

    def structured_mode(self) -> str:
        return "scripted"

    def embed(self, texts: Iterable[str]) -> list[list[float]]:
        """Deterministic bag-of-letters vectors: enough for retrieval tests, not for meaning."""
        out = []
        for t in texts:
            v = [0.0] * 26
            for ch in t.lower():
                if "a" <= ch <= "z":
                    v[ord(ch) - 97] += 1.0
            norm = sum(x * x for x in v) ** 0.5 or 1.0
            out.append([x / norm for x in v])
        return out

    @property
    def remaining(self) -> int:
        """Answers not yet consumed (list scripts only)."""
        return len(self._queue)
