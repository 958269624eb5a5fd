"""Every answer a roundtable role fills in: the moderator's agenda and steps, the analyzer's map.

The schemas are built for the table at hand (``lru_cache`` per set of names), so a name the
model returns is always one of the people at the table; every string and list is bounded.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Literal

from pydantic import Field, create_model

from argnb.llm.answer import Answer

INTENTS = ("invite", "clarify", "summarise", "flag_reasoning", "steer", "deadlock")

#: summary sentences at most (the paper leaves the number open)
SENTENCES = 3
UNCLEAR = "unclear"


# -- the moderator (argnb.roundtable.moderator) ------------------------------------------
class AgendaAnswer(Answer):
    scope: str = Field(max_length=200)
    criteria: list[Annotated[str, Field(max_length=80)]] = Field(max_length=3)
    welcome: str = Field(max_length=300)


class StatementsAnswer(Answer):
    """The closing's candidate group statements (the room keeps the first distinct ones)."""

    statements: list[Annotated[str, Field(max_length=300)]] = Field(min_length=2, max_length=4)


class RevisionAnswer(Answer):
    statement: str = Field(max_length=400)


@lru_cache(maxsize=32)
def step_schema(names: tuple[str, ...]) -> type[Answer]:
    """The answer of one moderator step, ``next_speaker`` restricted to ``names``."""
    return create_model(
        "ModeratorStep",
        __base__=Answer,
        intent=(Literal[INTENTS], ...),
        message=(str, Field(max_length=300)),
        next_speaker=(Literal[tuple(names)], ...),
    )


# -- the analyzer (argnb.roundtable.analyzer) --------------------------------------------
Short = Annotated[str, Field(max_length=140)]


@lru_cache(maxsize=32)
def analysis_schema(names: tuple[str, ...], sentences: int = SENTENCES) -> type[Answer]:
    """The analyzer's answer for a table of ``names`` (``by`` is one of them or "unclear")."""
    who = Literal[(*names, UNCLEAR)]  # type: ignore[valid-type]
    counter = create_model(
        "Counterargument",
        __base__=Answer,
        objection=(Short, ...),
        by=(who, ...),
        rebuttal=(Short, ...),
        rebuttal_by=(Literal[(*names, UNCLEAR, "")], ...),  # type: ignore[valid-type]
    )
    argument = create_model(
        "MapArgument",
        __base__=Answer,
        claim=(Short, ...),
        by=(who, ...),
        premises=(list[Short], Field(max_length=2)),
        counterarguments=(list[counter], Field(max_length=2)),  # type: ignore[valid-type]
    )
    return create_model(
        "RoundtableAnalysis",
        __base__=Answer,
        summary=(list[Short], Field(min_length=1, max_length=sentences)),
        agreements=(list[Short], Field(max_length=3)),
        open_questions=(list[Short], Field(max_length=3)),
        argument_map=(list[argument], Field(max_length=3)),  # type: ignore[valid-type]
    )
