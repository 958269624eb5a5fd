"""A deliberator: proposes, argues, counters and collaborates -- in at most 150 words.

The word limit holds in code: a longer reply gets one revision turn (the agent turn's repair,
quoting the count); a revision that is still too long is cut at the last sentence boundary
within the limit. The transcript keeps the rejected first reply and says whether the final one
was revised or cut, and how long it was before the cut.

    >>> cut_to_words("One two three. Four five six. Seven.", 6)
    'One two three. Four five six.'
    >>> cut_to_words("A very long first sentence without any end", 4)
    'A very long first…'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from argnb.agents import Agent, Response
from argnb.llm.base import Options
from argnb.roundtable.live import LiveBackend
from argnb.roundtable.seat import Seat

WORD_LIMIT = 150


def token_budget(limit: int) -> int:
    """Tokens a reply may use: about 1.3 tokens a word, plus room to overshoot the limit (so the
    revision rule can be seen at work) -- and a stop for a model that loops."""
    return int(limit * 1.7) + 20


_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|(?<=[.!?…][\"')\]])\s+")


def count_words(text: str) -> int:
    return len(text.split())


def too_long(limit: int) -> Callable[[str], list[str]]:
    """A rule check for the agent turn: the problem, when a reply exceeds ``limit`` words."""

    def check(text: str) -> list[str]:
        n = count_words(text)
        return [f"{n} words, but the limit is {limit}"] if n > limit else []

    return check


def cut_to_words(text: str, limit: int) -> str:
    """The longest run of whole sentences within ``limit`` words (or the first ``limit`` words
    and an ellipsis, when even the first sentence is longer)."""
    text = " ".join(text.split())
    if count_words(text) <= limit:
        return text
    kept, n = [], 0
    for sentence in _SENTENCE_END.split(text):
        w = count_words(sentence)
        if n + w > limit:
            break
        kept.append(sentence)
        n += w
    if kept:
        return " ".join(kept)
    return " ".join(text.split()[:limit]).rstrip(",;:") + "…"


@dataclass
class Deliberator(Seat):
    """An agent in a deliberator's seat. ``label`` is its role ("Deliberator 1"); a
    ``perspective`` (optional) gives two copies of one model something different to bring."""

    ROLE: ClassVar[str] = "deliberator"

    label: str = ""
    perspective: str = ""
    options: Options | None = None

    def seat(self, topic: str, others: str, limit: int) -> None:
        """Write the system prompt for this table."""
        view = f"The perspective you bring: {self.perspective}" if self.perspective else ""
        self.agent.system = self.template.render(
            "system", name=self.name, topic=topic, perspective=view, others=others, limit=limit
        )

    async def aspeak(
        self,
        context: str,
        limit: int = WORD_LIMIT,
        *,
        on_chunk: Callable[[str], None] | None = None,
        on_start: Callable[[int], None] | None = None,
        **kw: Any,
    ) -> tuple[Response[Any], LiveBackend]:
        """One reply, streamed to ``on_chunk``; revised once when too long (not yet cut).

        Returns the agent's response and the streaming wrapper (its ``first_chunk_s``).
        """
        tpl = self.template
        live = LiveBackend(self.agent.backend, on_chunk, on_start)
        speaker = Agent(self.agent.name, live, self.agent.options, system=self.agent.system)  # type: ignore[arg-type]
        resp = await speaker.arespond(
            tpl.render("user", context=context, name=self.name, limit=limit),
            None,
            role="contribution",
            check=too_long(limit),
            repair=tpl.render("revise", limit=limit, problems="$problems"),
            strict=False,
            options=self.options or self.agent.options or Options(max_tokens=token_budget(limit)),
            **kw,
        )
        return resp, live
