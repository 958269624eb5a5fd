"""The data every backend and every record share: messages, options, usage, replies.

Kept apart from :mod:`argnb.llm.base` so low modules (the ledger, the cache) can use them without
importing the backend machinery that in turn uses them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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
    #: of ``prompt_tokens``, how many the server reused from an earlier request's shared prefix
    #: instead of evaluating them (the embedded model's prefix cache, OpenAI's ``cached_tokens``)
    reused_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def evaluated_tokens(self) -> int:
        """Prompt tokens the model actually had to read."""
        return self.prompt_tokens - self.reused_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            reused_tokens=self.reused_tokens + other.reused_tokens,
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
    """What a backend returns for one request.

    ``latency_s`` is the wall time of the whole call (retries included). ``first_chunk_s`` is set
    only for streamed calls: the time from the call to the first text chunk, the wait a reader
    actually feels.
    """

    text: str
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    first_chunk_s: float | None = None
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
