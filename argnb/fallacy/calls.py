"""One model call as the fallacy protocols see it: a value or "invalid", never an exception.

A malformed answer must never stop a benchmark: it becomes an invalid output that the metrics
count. Only failures a re-run can fix (server down, wrong model, missing key, timeouts) propagate,
so a benchmark stops, keeps what it finished, and resumes later.

Usage is metered by wrapping the backend for the duration of the call, so the tokens of answers
that failed validation (and of the repair turn) are counted too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from argnb.errors import BackendError, InvalidOutput
from argnb.llm.base import Backend, Messages, Options, Reply, Usage
from argnb.llm.structured import astructured_call

T = TypeVar("T", bound=BaseModel)


@dataclass
class Outcome(Generic[T]):
    """What one (possibly repaired) call produced and cost."""

    value: T | str | None
    raw: str = ""
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    calls: int = 0
    error: str = ""
    model: str = ""
    backend: str = ""

    @property
    def valid(self) -> bool:
        return self.value is not None


class _Meter:
    """Duck-typed stand-in for a backend that remembers every reply it passed through."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.replies: list[Reply] = []

    def chat(self, messages: Any, **kw: Any) -> Reply:
        reply = self.backend.chat(messages, **kw)
        self.replies.append(reply)
        return reply

    async def achat(self, messages: Any, **kw: Any) -> Reply:
        reply = await self.backend.achat(messages, **kw)
        self.replies.append(reply)
        return reply


def _recoverable(exc: BaseException) -> bool:
    """Errors that belong to this input, not to the server: record them and carry on.

    ``InvalidOutput`` (the answer did not validate) and a plain ``BackendError`` (e.g. the text
    does not fit the local context window). Subclasses -- unavailable, timeout, auth, model not
    found -- would hit every item alike, so they stop the run instead.
    """
    return isinstance(exc, InvalidOutput) or type(exc) is BackendError


def _finish(meter: _Meter, start: float, **kw: Any) -> Outcome:
    usage = Usage()
    for r in meter.replies:
        usage = usage + r.usage
    return Outcome(
        usage=usage,
        latency_s=time.perf_counter() - start,
        calls=len(meter.replies),
        model=meter.backend.model,
        backend=meter.backend.name,
        **kw,
    )


async def acall(
    backend: Backend,
    messages: Messages,
    schema: type[T],
    *,
    options: Options | None = None,
) -> Outcome[T]:
    """A structured call (schema + one repair turn); invalid answers come back as ``value=None``."""
    meter, start = _Meter(backend), time.perf_counter()
    try:
        got = await astructured_call(meter, messages, schema, options=options)  # type: ignore[arg-type]
    except Exception as exc:
        if not _recoverable(exc):
            raise
        raw = getattr(exc, "raw", "") or (meter.replies[-1].text if meter.replies else "")
        return _finish(meter, start, value=None, raw=raw, error=_short(exc))
    return _finish(meter, start, value=got.value, raw=got.raw)


async def acall_text(
    backend: Backend,
    messages: Messages,
    parse: Any,
    *,
    options: Options | None = None,
) -> Outcome:
    """A plain-text call mapped by ``parse`` (returns a value or ``"invalid"``); no repair turn."""
    meter, start = _Meter(backend), time.perf_counter()
    try:
        reply = await meter.achat(messages, options=options)
    except Exception as exc:
        if not _recoverable(exc):
            raise
        return _finish(meter, start, value=None, error=_short(exc))
    value = parse(reply.text)
    if value == "invalid":
        return _finish(meter, start, value=None, raw=reply.text, error="answer is not a 0/1 label")
    return _finish(meter, start, value=value, raw=reply.text)


def _short(exc: BaseException) -> str:
    msg = getattr(exc, "message", None) or str(exc)
    return f"{type(exc).__name__}: {msg}"[:300]
