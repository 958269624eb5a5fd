"""A deliberator: proposes, argues, counters and collaborates -- in at most 150 words.

A sentence said twice in one reply is dropped (small models loop; the one rule of
:func:`argnb.words.drop_repeats`); what is left goes through the gate (:mod:`argnb.gate`: no
echoed instructions, loops or copies of another speaker). The word limit holds in code: a longer reply gets one
revision turn (the agent turn's repair, quoting the count); a revision that is still too long is
cut at the last sentence boundary within the limit. The transcript keeps the rejected first reply and says whether the final one
was revised or cut, and how long it was before the cut (the word tools: :mod:`argnb.words`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from argnb.agents import Agent, Response
from argnb.gate import Gate, Held
from argnb.llm.base import Options
from argnb.llm.live import LiveBackend
from argnb.prompts import context_first
from argnb.roundtable.seat import Seat
from argnb.words import drop_repeats, token_budget, too_long

WORD_LIMIT = 150


@dataclass
class Deliberator(Seat):
    """An agent in a deliberator's seat. ``label`` is its role ("Deliberator 1"); a
    ``perspective`` (optional) gives two copies of one model something different to bring."""

    ROLE: ClassVar[str] = "deliberator"

    label: str = ""
    perspective: str = ""
    options: Options | None = None

    #: who else is at the table, as this deliberator's task names them (set by the session)
    others: str = ""

    def task(self, limit: int = WORD_LIMIT) -> str:
        """What this deliberator is asked after the shared context: who it is, its part and the
        word limit (everything that differs from the other seats comes after the shared prefix)."""
        view = self.perspective.strip().rstrip(".")
        return self.template.render(
            "task",
            name=self.name,
            perspective=f" The perspective you bring: {view}." if view else "",
            others=self.others,
            limit=limit,
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
        """One reply to the shared ``context``, streamed to ``on_chunk``; revised once when too
        long (not yet cut).

        Returns the agent's response and the streaming wrapper (its ``first_chunk_s``).
        """
        tpl = self.template
        # over the limit it is cut at a sentence end: the gate's cut rule waits for that
        gate = Gate(limit=limit) + kw.pop("gate", None)
        prompt = context_first(context, self.task(limit))
        held = None
        if on_chunk is not None:  # what streams stops where the gate would stop the answer
            held = Held(on_chunk, (self.agent.gate + gate).seen(self.agent.messages(prompt)))

        def start(attempt: int) -> None:
            if held is not None:
                held.restart(attempt)
            if on_start is not None:
                on_start(attempt)

        live = LiveBackend(self.agent.backend, held, start)
        speaker = Agent(
            self.agent.name,
            live,  # type: ignore[arg-type]
            self.agent.options,
            system=self.agent.system,
            gate=self.agent.gate,
        )
        resp = await speaker.arespond(
            prompt,
            None,
            role="contribution",
            parse=drop_repeats,
            check=too_long(limit),
            gate=gate,
            repair=tpl.render("revise", limit=limit, problems="$problems"),
            strict=False,
            options=self.options or self.agent.options or Options(max_tokens=token_budget(limit)),
            **kw,
        )
        return resp, live
