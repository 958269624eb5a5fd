"""What the dialectic protocol records in a transcript turn, as typed payloads.

The argument an agent gave is stored as an :class:`~argnb.dialectic.schemas.Argument`, so record
readers, views and the map builder use it directly. Item access gives the JSON form, where an
argument also shows its derived ``Conc`` and ``Ass``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from argnb.dialectic.schemas import Argument, Characterized
from argnb.transcript import Payload


class ArgumentMove(Payload):
    """Phase 1: a main argument."""

    kind: str = "dialectic.argument"
    phase: str = "argument"
    line: int | None = None
    arg_id: str
    argument: Argument


class AttackMove(Payload):
    """Phase 2: an accepted attack on the opponent's last argument."""

    kind: str = "dialectic.attack"
    phase: str = "rebuttal"
    line: int | None = None
    target_id: str
    arg_id: str
    can_defeat: str = "YES"
    attack: str
    target: str
    argument: Argument
    defeats: bool


class Pass(Payload):
    """Phase 2: the side cannot (or may not) counter the target."""

    kind: str = "dialectic.pass"
    phase: str = "rebuttal"
    line: int | None = None
    target_id: str
    can_defeat: str = "NO"
    reason: str


class LineVerdict(Payload):
    """The protocol's verdict on one line of dispute (no model involved)."""

    kind: str = "dialectic.verdict"
    line: int
    main_id: str | None
    proponent: str = ""
    status: str
    reason: str = ""
    chain: list[str] = Field(default_factory=list)

    def sentence(self) -> str:
        """The verdict as a learner reads it (no ids of arguments that do not exist)."""
        who = self.proponent or "the agent"
        if self.main_id is None:
            return (
                f"line {self.line}: {who} gave no main argument that passed the checks, "
                "so there is nothing to dispute"
            )
        verdict = "stands (justified)" if self.status == "justified" else "is defeated"
        why = f" — {self.reason}" if self.reason else ""
        return f"line {self.line}: {who}'s main argument {self.main_id} {verdict}{why}"


class Characterization(Payload):
    """Synthesis step 1: both warrants as properties."""

    kind: str = "dialectic.characterize"
    phase: str = "synthesis"
    C1: Characterized
    C2: Characterized
    problems: list[str] = Field(default_factory=list)


class Generalization(Payload):
    """Synthesis step 2: the consensus core E."""

    kind: str = "dialectic.generalize"
    phase: str = "synthesis"
    E: Characterized
    problems: list[str] = Field(default_factory=list)


class SynthesisAnswer(Payload):
    """Synthesis step 3: the final answer, recorded as an argument from E."""

    kind: str = "dialectic.answer"
    phase: str = "synthesis"
    arg_id: str
    final_answer: str
    argument: Argument
    problems: list[str] = Field(default_factory=list)


#: payloads that carry an argument of the dialogue
ARGUMENT_KINDS = (ArgumentMove, AttackMove, SynthesisAnswer)

_V1_ROLES = {
    "argue": ArgumentMove,
    "attack": AttackMove,
    "pass": Pass,
    "verdict": LineVerdict,
    "characterize": Characterization,
    "generalize": Generalization,
    "answer": SynthesisAnswer,
}


def migrate_v1(kind: str, role: str, payload: dict[str, Any], valid: bool) -> str | None:
    """The payload kind of a first-format dialectic turn (see :func:`argnb.transcript.migrate_v1`)."""
    if not valid:
        return "rejected"
    cls = _V1_ROLES.get(role)
    return None if cls is None else cls.model_fields["kind"].default
