"""What the fallacy protocols record in a transcript turn, as typed payloads.

Views and reports read these fields; protocols fill them. Kinds: ``fallacy.verdict`` (one
baseline answer) and ``fallacy.contribution`` (one deliberation turn).
"""

from __future__ import annotations

from typing import Any

from argnb.transcript import Payload

#: the chain-of-thought steps a CoT verdict records besides the label
COT_FIELDS = ("restatement", "conclusion", "premises", "follows", "fallacy")


class BaselineAnswer(Payload):
    """A baseline's answer: the label (0, 1 or "invalid"), its reasoning steps, why it failed."""

    kind: str = "fallacy.verdict"
    label: int | str
    method: str = ""
    restatement: str | None = None
    conclusion: str | None = None
    premises: list[str] | None = None
    follows: bool | None = None
    fallacy: str | None = None
    error: str = ""
    #: an answer that was never usable: the gate's reason when the gate stopped it
    #: (:mod:`argnb.gate`), and what the model wrote (views show it muted, one click away)
    gate: str = ""
    raw: str = ""

    def reasoning(self) -> dict[str, Any]:
        """The reasoning steps that were given (CoT only)."""
        return {k: getattr(self, k) for k in COT_FIELDS if getattr(self, k) is not None}

    def data(self) -> dict[str, Any]:
        return {k: v for k, v in super().data().items() if v is not None and v != ""}


class DeliberationTurn(Payload):
    """One deliberation turn: position in the round's order, action, vote and confidence."""

    kind: str = "fallacy.contribution"
    position: int
    order: list[str]
    action: str | None = None
    vote: int | None = None
    confidence: float | None = None
    error: str = ""
    #: as in :class:`BaselineAnswer`: why the gate stopped the answer, and what the model wrote
    gate: str = ""
    raw: str = ""

    def data(self) -> dict[str, Any]:
        return {k: v for k, v in super().data().items() if v is not None and v != ""}


def migrate_v1(kind: str, role: str, payload: dict[str, Any], valid: bool) -> str | None:
    """The payload kind of a first-format fallacy turn (see :func:`argnb.transcript.migrate_v1`)."""
    if "order" in payload:
        return DeliberationTurn.model_fields["kind"].default
    if "label" in payload:
        return BaselineAnswer.model_fields["kind"].default
    return None
