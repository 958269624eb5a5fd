"""What a critique judge answers: reasoning before the score, scores on a 0.05 grid.

The reasoning fields come first, so schema-constrained decoding writes them first; the grid is an
``enum`` because JSON-schema grammars cannot enforce a numeric range but do enforce an enum.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, create_model

from argnb.critique.rubric import DIMENSIONS, LABELS
from argnb.llm.answer import Answer

#: the scores a judge may give: 0, 0.05, ..., 1
GRID: tuple[float, ...] = tuple(round(k * 0.05, 2) for k in range(21))
Score = Literal[GRID]  # type: ignore[valid-type]


class BaselineAnswer(Answer):
    """The baseline judge's answer: think step by step, then one overall score."""

    reasoning: str = Field(max_length=1000, description="step-by-step thinking, written first")
    overall: Score = Field(description="all things considered, from 0 to 1")


class DimensionAnswer(Answer):
    """Reasoning about one dimension, then its score."""

    reasoning: str = Field(max_length=400)
    score: Score


#: the full-rubric judge's answer: one (reasoning, score) per dimension, in rubric order
RubricAnswer = create_model(  # type: ignore[call-overload]
    "RubricAnswer",
    __base__=Answer,
    __doc__="Reasoning and a score for each of the seven dimensions, in rubric order.",
    **{d: (DimensionAnswer, Field(description=LABELS[d])) for d in DIMENSIONS},
)
