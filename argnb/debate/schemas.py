"""Every answer a debate agent fills in, in one place: what a model must answer is changed here.

The annotation agents (schemes used, a label per scheme, keywords), the logic agent (predicates,
chain, flaws), the generation loop's summary and verdict, the stance judge, and the two
evaluation judges. Every string and list is bounded (small models loop without limits).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Literal

from pydantic import Field, create_model

from argnb.errors import ArgnbError
from argnb.llm.answer import Answer

REASON_CHARS = 150
MAX_PREDICATES = 8
MAX_FLAWS = 4
FLAW_KINDS = (
    "contradiction",
    "unsupported assumption",
    "circular reasoning",
    "overgeneralization",
    "false dichotomy",
    "causal leap",
    "equivocation",
    "other",
)


# -- annotation (argnb.debate.annotate) --------------------------------------------------
@lru_cache(maxsize=32)
def annotation_schema(ids: tuple[str, ...]) -> type[Answer]:
    """``{"schemes": [{"scheme": <one of ids>, "reason": ...}, ...]}``, bounded."""
    use = create_model(
        "SchemeUseAnswer",
        __base__=Answer,
        scheme=(Literal[ids], ...),  # type: ignore[valid-type]
        reason=(str, Field(max_length=REASON_CHARS)),
    )
    return create_model(
        "SchemeAnnotationAnswer",
        __base__=Answer,
        schemes=(list[use], Field(max_length=len(ids))),  # type: ignore[valid-type]
    )


class LabelAnswer(Answer):
    reason: str = Field(max_length=REASON_CHARS)
    label: Literal["poor", "general", "good", "excellent"]


@lru_cache(maxsize=256)
def scoring_schema(ids: tuple[str, ...]) -> type[Answer]:
    """One required ``{"reason", "label"}`` field per used scheme (in this order)."""
    if not ids:
        raise ArgnbError("the scoring schema needs at least one scheme")
    return create_model(
        "SchemeScoresAnswer",
        __base__=Answer,
        **{sid: (LabelAnswer, ...) for sid in ids},  # type: ignore[call-overload]
    )


class KeywordsAnswer(Answer):
    keywords: list[Annotated[str, Field(max_length=40)]] = Field(max_length=12)


# -- logic agent (argnb.debate.logic) ----------------------------------------------------
class PredicatesAnswer(Answer):
    predicates: list[Annotated[str, Field(max_length=140)]] = Field(max_length=MAX_PREDICATES)


class ChainAnswer(Answer):
    chain: str = Field(max_length=1000)


class FlawAnswer(Answer):
    kind: Literal[FLAW_KINDS]  # type: ignore[valid-type]
    text: str = Field(max_length=400)
    claims: list[Annotated[str, Field(max_length=140)]] = Field(max_length=4)


class FlawsAnswer(Answer):
    flaws: list[FlawAnswer] = Field(max_length=MAX_FLAWS)


# -- generation loop (argnb.debate.generate) ---------------------------------------------
Line = Annotated[str, Field(max_length=200)]


class SummaryAnswer(Answer):
    overview: str = Field(max_length=500)
    supporting: list[Line] = Field(max_length=2)
    opposing: list[Line] = Field(max_length=2)
    divergence: list[Line] = Field(max_length=2)


class VerdictAnswer(Answer):
    stance_faithful: bool
    relevant: bool
    follows_schemes: bool
    feedback: str = Field(max_length=400)


# -- stance judge (argnb.debate.stance) --------------------------------------------------
class StanceAnswer(Answer):
    supports_motion: bool
    supports_opposition: bool
    attacks_motion: bool
    attacks_opposition: bool
    reason: str = Field(max_length=300)


# -- evaluation judges (argnb.debate.evaluate) -------------------------------------------
Rating = Annotated[int, Field(ge=1, le=10)]


class ClaimAnswer(Answer):
    claim: str = Field(max_length=300)
    status: Literal["supported", "contradicted", "unverifiable"]
    evidence: str = Field(max_length=80)


class InspireAnswer(Answer):
    emotional_appeal: Rating
    clarity: Rating
    arrangement: Rating
    relevance: Rating
    validity: Rating
    stance_consistency: Rating
    claims: list[ClaimAnswer] = Field(max_length=5)


class SideAnswer(Answer):
    argument: Rating
    source: Rating
    language: Rating
    overall: Rating


class DebatrixAnswer(Answer):
    side_a: SideAnswer
    side_b: SideAnswer
    winner: Literal["A", "B", "tie"]
    reason: str = Field(max_length=400)
