"""What a critique judge records in a transcript turn, as a typed payload."""

from __future__ import annotations

from pydantic import Field

from argnb.transcript import Payload


class JudgeRating(Payload):
    """A judge's scores for one critique (empty, with ``error``, when the answer never validated)."""

    kind: str = "critique.rating"
    critique_id: str
    judge: str
    ratings: dict[str, float] = Field(default_factory=dict)
    reasoning_by_dimension: dict[str, str] = Field(default_factory=dict)
    error: str = ""
