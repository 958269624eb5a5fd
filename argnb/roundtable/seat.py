"""What every roundtable role has: an agent (name, backend, system prompt) and its prompt file.

The moderator, the deliberators and the analyzer differ in what they ask and how their answers
are recorded; reading ``prompts/<role>.md`` (or an adapted copy in ``prompt_dir``) is shared, and
so is ``prompts/table.md``: the system text and the context every seat's message starts with
(the same bytes for every seat, so a local model evaluates them once per step).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from argnb.agents import Agent
from argnb.gate import Gate
from argnb.prompts import Prompt, load


@dataclass
class Seat:
    """An agent in one role, with that role's templates (``prompts/<ROLE>.md``)."""

    ROLE: ClassVar[str] = ""
    #: what this role's answers are checked against besides the table (argnb.gate)
    GATE: ClassVar[Gate] = Gate()

    agent: Agent
    prompt_dir: str | Path | None = None

    @property
    def name(self) -> str:
        return self.agent.name

    @property
    def template(self) -> Prompt:
        return load("argnb.roundtable", self.ROLE, self.prompt_dir, sectioned=True)


def table(prompt_dir: str | Path | None = None) -> Prompt:
    """``prompts/table.md``: the system text and shared context of every seat."""
    return load("argnb.roundtable", "table", prompt_dir, sectioned=True)
