"""The shared start of every prompt of one debate turn (``prompts/context.md``).

Why: llama.cpp reuses only a token-identical prompt prefix, and one ``rdebater`` turn asks up to
a dozen agents about the same motion, history, flaws and evidence. So every agent of a turn gets
the same system text and a message that starts with the same context, byte for byte, and ends
with its own task (:func:`argnb.prompts.context_first`). The context only ever grows by
appending (``with_block``), so each step's prompt starts with the previous step's context.

    >>> c = TurnContext.of("Ban homework", "con", [("pro", "Homework causes stress.")])
    >>> a, b = c.ask("Judge it."), c.with_block("candidate", candidate="No.").ask("Revise it.")
    >>> a.split("## Your task")[0] in b, b.endswith("Revise it.")
    (True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from argnb.debate.record import SIDE_WORDS, as_history, render
from argnb.prompts import Prompt, context_first, load

PACKAGE = "argnb.debate"
#: what the context shows of the history: the last turns, each cut to this many words
HISTORY_TURNS = 6
HISTORY_WORDS = 120


def template(prompt_dir: str | None = None) -> Prompt:
    return load(PACKAGE, "context", prompt_dir, sectioned=True)


@dataclass(frozen=True)
class TurnContext:
    """The system text and the context every agent of one turn starts with."""

    system: str
    text: str
    prompt_dir: str | None = None

    @classmethod
    def of(
        cls, topic: str, side: str, history: Sequence[Any], prompt_dir: str | None = None
    ) -> TurnContext:
        """Motion, side and the last turns of the history (the same for every agent)."""
        t = template(prompt_dir)
        hist = render(as_history(history), words=HISTORY_WORDS, last=HISTORY_TURNS)
        text = t.render(
            "context", topic=topic, side=SIDE_WORDS[side], history=hist or "(no turns yet)"
        )
        return cls(t.render("system"), text, prompt_dir)

    @classmethod
    def of_history(cls, history: str, prompt_dir: str | None = None) -> TurnContext:
        """Only a history text (the keyword agent called without a debater)."""
        t = template(prompt_dir)
        return cls(t.render("system"), t.render("history_only", history=history), prompt_dir)

    def with_block(self, section: str, **values: object) -> TurnContext:
        """This context with one more section of ``context.md`` appended."""
        block = template(self.prompt_dir).render(section, **values)
        return replace(self, text=f"{self.text.rstrip()}\n\n{block}")

    def ask(self, task: str) -> str:
        """The user message for one agent: this context, then its task."""
        return context_first(self.text, task)
