"""Structured calls: ask a model for an answer that validates against a pydantic model.

The backend asks the server to enforce the JSON schema where it can (Ollama ``format``,
OpenAI ``response_format``, llama.cpp grammar). We still validate, because servers differ and
small models drift: on failure we send exactly one repair turn that quotes the validation error,
and if that fails too we raise :class:`~argnb.errors.InvalidOutput` carrying the raw text.
Given ``on_chunk``, the first request streams (its JSON text goes to the callback as it is
written, for a view to show while the model works); the reply is validated all the same, and a
repair turn is an ordinary call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Generic, TypeVar, overload

from pydantic import BaseModel, ValidationError

from argnb.errors import InvalidOutput
from argnb.llm.base import Backend, Message, Messages, Options, Reply, Usage, to_messages
from argnb.prompts import TASK_MARK

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)


@lru_cache(maxsize=256)
def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent to servers (cached: building it is not free)."""
    return model.model_json_schema()


def extract_json(text: str) -> Any:
    """Parse the JSON object in ``text``, tolerating code fences and chatter around it."""
    stripped = _FENCE.sub("", text.strip())
    try:
        return json.loads(stripped, strict=False)  # raw newlines in strings: common, harmless
    except json.JSONDecodeError:
        pass
    start = stripped.find("{")
    if start < 0:
        raise ValueError("no JSON object found in the answer")
    obj, _ = json.JSONDecoder(strict=False).raw_decode(stripped[start:])
    return obj


def validate(model: type[T], text: str) -> tuple[T | None, str]:
    """Return (object, "") or (None, error message a model can act on)."""
    try:
        return model.model_validate(extract_json(text)), ""
    except (ValueError, ValidationError) as exc:
        return None, _short_error(exc)


def _short_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        parts = [
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()
        ]
        return "; ".join(parts[:8])
    return str(exc)[:300]


def with_instructions(messages: list[Message], schema: dict[str, Any]) -> list[Message]:
    """Tell the model the expected shape in words too (helps servers that ignore the schema).

    The note goes into the system message, except after a task laid out by
    :func:`argnb.prompts.context_first`: there it ends the task (the first such message, so a
    repair conversation keeps it where the first attempt had it), and agents that share a
    system text and a context keep sharing that prefix whatever shape each of them answers in.
    """
    note = (
        "Answer with a single JSON object and nothing else. It must match this JSON schema:\n"
        + json.dumps(schema, separators=(",", ":"))
    )
    for i, m in enumerate(messages):
        if m.role == "user" and TASK_MARK in m.content:  # also when a repair turn follows it
            task = Message(role="user", content=f"{m.content}\n\n{note}")
            return [*messages[:i], task, *messages[i + 1 :]]
    if messages and messages[0].role == "system":
        first = Message(role="system", content=messages[0].content + "\n\n" + note)
        return [first, *messages[1:]]
    return [Message(role="system", content=note), *messages]


def repair_turn(
    messages: list[Message], raw: str, error: str, *, quote_chars: int = 2000
) -> list[Message]:
    """The conversation extended by one turn that quotes (the start of) what was wrong.

    At most ``quote_chars`` of the invalid answer are repeated: enough for the model to see its
    mistake, while a runaway answer (1 MB was seen) does not become a request four times that size.
    """

    def cap(text: str, limit: int) -> str:
        if len(text) <= limit:
            return text
        return f"{text[:limit]}\n[... {len(text) - limit} more characters not repeated here]"

    return [
        *messages,
        Message(role="assistant", content=cap(raw, quote_chars)),
        Message(
            role="user",
            content=(
                f"That answer is not valid: {cap(error, 1000)}. "
                "Reply again with only the corrected JSON object."
            ),
        ),
    ]


@dataclass
class Structured(Generic[T]):
    """A validated answer plus what it cost."""

    value: T
    replies: list[Reply] = field(default_factory=list)

    @property
    def raw(self) -> str:
        return self.replies[-1].text if self.replies else ""

    @property
    def repaired(self) -> bool:
        return len(self.replies) > 1

    @property
    def usage(self) -> Usage:
        total = Usage()
        for r in self.replies:
            total = total + r.usage
        return total

    @property
    def latency_s(self) -> float:
        return sum(r.latency_s for r in self.replies)


def _prepare(messages: Messages | str, model: type[T]) -> tuple[list[Message], dict[str, Any]]:
    schema = schema_of(model)
    return with_instructions(to_messages(messages), schema), schema


def _fail(model: type[BaseModel], replies: list[Reply], error: str) -> InvalidOutput:
    return InvalidOutput(
        f"{model.__name__}: the model's answer did not validate after one repair turn ({error})",
        raw=replies[-1].text,
        errors=error,
        replies=replies,
    )


def structured_call(
    backend: Backend,
    messages: Messages | str,
    schema: type[T],
    *,
    options: Options | None = None,
) -> Structured[T]:
    """Ask for an answer of type ``schema``; one repair turn; raise InvalidOutput after that."""
    msgs, js = _prepare(messages, schema)
    first = backend.chat(msgs, schema=js, options=options)
    value, error = validate(schema, first.text)
    if value is not None:
        first.parsed = value
        return Structured(value, [first])
    second = backend.chat(repair_turn(msgs, first.text, error), schema=js, options=options)
    value, error2 = validate(schema, second.text)
    if value is None:
        raise _fail(schema, [first, second], error2)
    second.parsed = value
    return Structured(value, [first, second])


async def _afirst(
    backend: Backend,
    msgs: list[Message],
    js: dict[str, Any],
    options: Options | None,
    on_chunk: Callable[[str], None] | None,
) -> Reply:
    """The first reply: one call, or a stream whose chunks go to ``on_chunk`` (a backend
    without ``astream`` hands its whole reply over as one chunk)."""
    astream = getattr(backend, "astream", None) if on_chunk is not None else None
    if astream is None:
        reply = await backend.achat(msgs, schema=js, options=options)
        if on_chunk is not None and reply.text:
            on_chunk(reply.text)
        return reply
    stream = astream(msgs, schema=js, options=options)
    async for chunk in stream:
        on_chunk(chunk)  # type: ignore[misc]
    return stream.reply


async def astructured_call(
    backend: Backend,
    messages: Messages | str,
    schema: type[T],
    *,
    options: Options | None = None,
    on_chunk: Callable[[str], None] | None = None,
) -> Structured[T]:
    """Async twin of :func:`structured_call`; ``on_chunk`` streams the first reply's JSON text
    (the repair turn, if any, does not stream)."""
    msgs, js = _prepare(messages, schema)
    first = await _afirst(backend, msgs, js, options, on_chunk)
    value, error = validate(schema, first.text)
    if value is not None:
        first.parsed = value
        return Structured(value, [first])
    second = await backend.achat(repair_turn(msgs, first.text, error), schema=js, options=options)
    value, error2 = validate(schema, second.text)
    if value is None:
        raise _fail(schema, [first, second], error2)
    second.parsed = value
    return Structured(value, [first, second])


@overload
def ask(backend: Backend, messages: Messages | str, schema: type[T], **kw: Any) -> T: ...
@overload
def ask(backend: Backend, messages: Messages | str, schema: None = None, **kw: Any) -> str: ...
def ask(backend, messages, schema=None, **kw):
    """The short form: a validated object (or plain text when no schema is given)."""
    if schema is None:
        return backend.chat(messages, **kw).text
    return structured_call(backend, messages, schema, **kw).value


async def aask(backend: Backend, messages: Messages | str, schema: Any = None, **kw: Any) -> Any:
    """Async twin of :func:`ask`."""
    if schema is None:
        return (await backend.achat(messages, **kw)).text
    return (await astructured_call(backend, messages, schema, **kw)).value
