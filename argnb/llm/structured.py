"""Structured calls: ask a model for an answer that validates against a pydantic model.

The backend asks the server to enforce the JSON schema where it can (Ollama ``format``,
OpenAI ``response_format``, llama.cpp grammar). We still validate, because servers differ and
small models drift: on failure we send exactly one repair turn that quotes the validation error,
and if that fails too we raise :class:`~argnb.errors.InvalidOutput` carrying the raw text.
"""

from __future__ import annotations

import json
import re
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
    """Tell the model the expected shape in words too (helps servers that ignore the schema)."""
    note = (
        "Answer with a single JSON object and nothing else. It must match this JSON schema:\n"
        + json.dumps(schema, separators=(",", ":"))
    )
    last = messages[-1] if messages else None
    if last is not None and last.role == "user" and TASK_MARK in last.content:
        # a context-first message (argnb.prompts.context_first): the note joins the task, so the
        # system text and the shared context stay a prefix common to every agent of the turn
        return [*messages[:-1], Message(role="user", content=last.content + "\n\n" + note)]
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


async def astructured_call(
    backend: Backend,
    messages: Messages | str,
    schema: type[T],
    *,
    options: Options | None = None,
) -> Structured[T]:
    """Async twin of :func:`structured_call`."""
    msgs, js = _prepare(messages, schema)
    first = await backend.achat(msgs, schema=js, options=options)
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
