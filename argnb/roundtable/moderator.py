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
from typing import Any, ClassVar

from argnb.agents import Response
from argnb.llm.base import Options
from argnb.roundtable.schemas import AgendaAnswer, step_schema
from argnb.roundtable.seat import Seat

#: a moderator message is short; this bounds what a small model can write
OPTIONS = Options(max_tokens=200)


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
