"""The moderator: opens with an agenda, then at every step may say something and names who
speaks next (structured output). What it names is only a proposal: :mod:`.rules` decides.

Its answers are schemas built for the table at hand, so ``next_speaker`` is one of the
participants' names (a grammar on llama.cpp and Ollama; a validation everywhere). The choice may
still break a rule -- the model is told who is allowed, and small models ignore it -- and the
session then records the override.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from argnb.agents import Response
from argnb.gate import Gate
from argnb.llm.base import Options
from argnb.prompts import context_first
from argnb.roundtable.schemas import (
    AgendaAnswer,
    RevisionAnswer,
    StatementsAnswer,
    step_schema,
)
from argnb.roundtable.seat import Seat

#: a moderator message is short; this bounds what a small model can write
OPTIONS = Options(max_tokens=200)


def listing(names: Sequence[str]) -> str:
    """``A, B or C``: the allowed speakers as a sentence names them."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


@dataclass
class Moderator(Seat):
    """An agent in the moderator's role; ``agent.system`` is the table's shared system text
    (set by the session), its own instructions are the task after the shared context."""

    ROLE: ClassVar[str] = "moderator"
    #: what it says to the group is prose: a message or welcome cut mid-sentence is stopped
    GATE: ClassVar[Gate] = Gate(prose=("message", "welcome", "statement", "statements"))

    options: Options = field(default_factory=lambda: OPTIONS)

    def _task(self, section: str, **values: Any) -> str:
        tpl = self.template
        return tpl.render("role") + "\n\n" + tpl.render(section, **values)

    async def aopen(self, context: str, turns: int, **kw: Any) -> Response[Any]:
        """Ask for the agenda (scope, criteria, a welcome)."""
        prompt = context_first(context, self._task("agenda", turns=turns))
        return await self.agent.arespond(prompt, AgendaAnswer, options=self.options, **kw)

    def _step_head(self, context: str, allowed: Sequence[str], latest: bool) -> dict[str, str]:
        """The step's first message: the shared context and the task (which, when the newest
        line comes in a message of its own, says so)."""
        task = self._task("step", allowed=listing(allowed))
        if latest:
            task += "\n\n" + self.template.render("latest")
        return {"role": "user", "content": context_first(context, task)}

    async def astep(
        self,
        context: str,
        names: Sequence[str],
        allowed: Sequence[str],
        *,
        latest: str = "",
        on_text: Callable[[str], None] | None = None,
        **kw: Any,
    ) -> Response[Any]:
        """One step: an optional message and the proposed next speaker (a flag of the fallacy
        check is a note at the end of ``context``, or of ``latest``). ``latest``: the newest line(s)
        of the discussion, sent after the task in a message of their own (see :meth:`prefill`).
        ``on_text`` hears the message as the model writes it, before the choice that follows
        it in the answer is known."""
        prompt = [self._step_head(context, allowed, bool(latest))]
        if latest:
            prompt.append({"role": "user", "content": latest})
        if on_text is not None:
            kw.update(stream_field="message", on_text=on_text)
        return await self.agent.arespond(
            prompt, step_schema(tuple(names)), options=self.options, **kw
        )

    def prefill(self, context: str, names: Sequence[str], allowed: Sequence[str]) -> int:
        """Have the backend read the coming step's request up to its ``latest`` message now:
        the shared context, the task and the schema note (tokens kept; 0 where the backend has
        nothing to do). The step after the learner's turn then reads only their line."""
        head = self._step_head(context, allowed, latest=True)
        msgs = self.agent.request([head], step_schema(tuple(names)))
        return self.agent.backend.prefill(msgs)

    async def adraft(self, context: str, count: int, **kw: Any) -> Response[Any]:
        """The closing: ``count`` candidate group statements for the humans to rank."""
        prompt = context_first(context, self._task("statements", count=count))
        return await self.agent.arespond(prompt, StatementsAnswer, options=self.options, **kw)

    async def arevise(
        self, context: str, statement: str, critiques: Sequence[str], **kw: Any
    ) -> Response[Any]:
        """Rewrite the statement the ranking chose after the humans' critiques. The statement
        and the critiques stand in the task, but they are the group's words, not instructions:
        a revision that keeps the chosen wording (as it is asked to) quotes them."""
        listed = "\n".join(f"- {c}" for c in critiques)
        task = self._task("revise", statement=statement, critiques=listed)
        prompt = context_first(context, task)
        kw["gate"] = Gate(material=(statement, *critiques)) + kw.get("gate")
        return await self.agent.arespond(prompt, RevisionAnswer, options=self.options, **kw)
