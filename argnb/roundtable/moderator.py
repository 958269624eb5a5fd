"""The moderator: opens with an agenda, then at every step may say something and names who
speaks next (structured output). What it names is only a proposal: :mod:`.rules` decides.

Its answers are schemas built for the table at hand, so ``next_speaker`` is one of the
participants' names (a grammar on llama.cpp and Ollama; a validation everywhere). The choice may
still break a rule -- the model is told who is allowed, and small models ignore it -- and the
session then records the override.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, create_model

from argnb.agents import Response
from argnb.llm.answer import Answer
from argnb.llm.base import Options
from argnb.roundtable.seat import Seat

INTENTS = ("invite", "clarify", "summarise", "flag_reasoning", "steer", "deadlock")

#: a moderator message is short; this bounds what a small model can write
OPTIONS = Options(max_tokens=200)


class AgendaAnswer(Answer):
    scope: str = Field(max_length=200)
    criteria: list[Annotated[str, Field(max_length=80)]] = Field(max_length=3)
    welcome: str = Field(max_length=300)


@lru_cache(maxsize=32)
def step_schema(names: tuple[str, ...]) -> type[Answer]:
    """The answer of one moderator step, ``next_speaker`` restricted to ``names``."""
    return create_model(
        "ModeratorStep",
        __base__=Answer,
        intent=(Literal[INTENTS], ...),
        message=(str, Field(max_length=300)),
        next_speaker=(Literal[tuple(names)], ...),
    )


def _listing(names: Sequence[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


@dataclass
class Moderator(Seat):
    """An agent in the moderator's role; ``agent.system`` is filled by :meth:`seat` once the
    table is known."""

    ROLE: ClassVar[str] = "moderator"

    options: Options = field(default_factory=lambda: OPTIONS)

    def seat(self, topic: str, participants: str, human: str, every: int) -> None:
        """Write the system prompt for this table."""
        self.agent.system = self.template.render(
            "system", topic=topic, participants=participants, human=human, every=every
        )

    async def aopen(self, turns: int, **kw: Any) -> Response[Any]:
        """Ask for the agenda (scope, criteria, a welcome)."""
        prompt = self.template.render("agenda", turns=turns)
        return await self.agent.arespond(prompt, AgendaAnswer, options=self.options, **kw)

    async def astep(
        self, context: str, names: Sequence[str], allowed: Sequence[str], flag: str = "", **kw: Any
    ) -> Response[Any]:
        """One step: an optional message and the proposed next speaker."""
        prompt = self.template.render(
            "step",
            context=context,
            flag=f"\nNote for you: {flag}\n" if flag else "",
            allowed=_listing(allowed),
        )
        return await self.agent.arespond(
            prompt, step_schema(tuple(names)), options=self.options, **kw
        )
