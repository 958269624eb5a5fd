"""The answers code acts on, as bounded pydantic models.

Every string and list has a length limit: the schema becomes a decoding grammar on llama.cpp and
Ollama, and a small model without limits keeps writing until it runs out of tokens. Free-text
fields carry no ``description``: small models copy a description into the field instead of
answering (the prompts explain each step instead).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from argnb.llm.answer import Answer

#: what a prediction is when the model's answer cannot be mapped to 0 or 1
INVALID = "invalid"
Label = Literal[0, 1, "invalid"]

Action = Literal["propose", "argue", "counter", "collaborate"]
ACTIONS: tuple[str, ...] = ("propose", "argue", "counter", "collaborate")
#: actions open to a speaker who has nothing to respond to yet
OPENING_ACTIONS: tuple[str, ...] = ("propose", "argue")


class Verdict(Answer):
    """Zero- and few-shot answer: the label alone."""

    label: Literal[0, 1] = Field(description="1 = fallacious, 0 = not fallacious")


class CotVerdict(Answer):
    """Chain-of-thought answer: the reasoning steps in order, the label last."""

    restatement: str = Field(max_length=300)
    conclusion: str = Field(max_length=200)
    premises: list[Annotated[str, Field(max_length=200)]] = Field(max_length=3)
    follows: bool
    fallacy: str = Field(max_length=60)
    label: Literal[0, 1] = Field(description="1 = fallacious, 0 = not fallacious")


class Contribution(Answer):
    """One deliberation turn: what the agent says, which action that was, its vote and confidence.

    The contribution comes first and the vote last, as in the paper's format; asked for the action
    first, small models tend to repeat the action's name as their whole contribution.
    """

    reasoning: str = Field(max_length=400)
    action: Action
    vote: Literal[0, 1] = Field(description="1 = fallacious, 0 = not fallacious")
    confidence: float = Field(ge=0.0, le=1.0, description="how sure you are of the vote, 0 to 1")


class OpeningContribution(Contribution):
    """The same turn for a speaker with nobody to answer yet: only propose or argue."""

    model_config = ConfigDict(title="Contribution")
    action: Literal["propose", "argue"]


_DIGIT = re.compile(r"(?<![\d.])([01])(?![\d.])")
_VOTE_TAG = re.compile(r"<vote>\s*([01])\s*</vote>", re.IGNORECASE)


def parse_label(text: str) -> int | str:
    """Map a free-text answer to 0, 1 or ``"invalid"`` (the paper's plain-text answer format).

    Accepted: a ``<vote>1</vote>`` tag; a lone digit ``0``/``1`` (possibly with punctuation or
    quotes); an answer that *starts* with a lone 0/1 (``"1 - it is a slippery slope"``). Anything
    else -- both digits, no digit, prose -- is invalid: guessing would hide formatting failures.

    >>> parse_label("1"), parse_label(" '0'. "), parse_label("<vote>1</vote> because ...")
    (1, 0, 1)
    >>> parse_label("It is fallacious"), parse_label("0 or 1"), parse_label("10")
    ('invalid', 'invalid', 'invalid')
    """
    tag = _VOTE_TAG.search(text)
    if tag:
        return int(tag.group(1))
    stripped = text.strip().strip("\"'`*.").strip()
    if stripped in ("0", "1"):
        return int(stripped)
    digits = _DIGIT.findall(stripped)
    first = _DIGIT.match(stripped)
    if first and len(set(digits)) == 1:
        return int(first.group(1))
    return INVALID
