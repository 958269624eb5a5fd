"""The rules of deliberation and of the agreement ensemble, in plain Python (no model, no prompt).

Keeping the rules here, apart from prompts and model calls, means they hold with any model --
even one that ignores its instructions -- and can be tested with hand-written votes.

Deliberation (two or more agents, rounds):

1. In round 1 the agents speak in the given order; every later round reverses the order of the
   round before, so each agent gets to answer the others.
2. After each round: if every agent gave a valid vote and the votes agree, that is the answer
   (``consensus``). If some outputs were invalid and the valid ones agree, they stand
   (``single_valid`` when only one vote was valid, ``consensus`` otherwise). If no output in the
   round was valid, the item is ``invalid`` (and counted incorrect).
3. Otherwise another round follows, until ``max_rounds``. Then the valid vote with the highest
   confidence wins (``confidence``); when the highest confidence is shared by votes for both
   labels, a seeded random generator picks among them (``random``).

Agreement ensemble (two baseline predictions): agree -> ``agreement``; one invalid -> the other
stands (``single_valid``); both invalid -> ``invalid``; disagree -> hand over to a resolver
(deliberation, or a seeded coin flip for the paper's comparison).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from argnb.fallacy.schemas import INVALID

Resolution = Literal["agreement", "consensus", "single_valid", "confidence", "random", "invalid"]
RESOLUTIONS: tuple[str, ...] = (
    "agreement",
    "consensus",
    "single_valid",
    "confidence",
    "random",
    "invalid",
)


@dataclass(frozen=True)
class Vote:
    """One agent's vote in one round; ``vote=None`` marks an output that could not be read."""

    agent: str
    vote: int | None
    confidence: float | None = None

    @property
    def valid(self) -> bool:
        return self.vote in (0, 1)


@dataclass(frozen=True)
class Decision:
    """How an item was settled: the label (0, 1 or ``"invalid"``) and by which rule."""

    label: int | str
    resolution: str
    round: int = 0


def seeded_rng(seed: int | str, item_id: str = "") -> random.Random:
    """A generator that depends only on the seed and the item (not on run order or concurrency)."""
    return random.Random(f"{seed}:{item_id}")


def speaking_order(agents: Sequence[str], round_no: int) -> list[str]:
    """Who speaks when in round ``round_no`` (1-based): as given, then reversed every round.

    >>> speaking_order(["A", "B"], 1), speaking_order(["A", "B"], 2), speaking_order(["A", "B"], 3)
    (['A', 'B'], ['B', 'A'], ['A', 'B'])
    """
    if round_no < 1:
        raise ValueError("rounds are numbered from 1")
    return list(agents) if round_no % 2 == 1 else list(reversed(agents))


def round_outcome(votes: Sequence[Vote], round_no: int) -> Decision | None:
    """What one finished round settles, or ``None`` when the valid votes still disagree.

    >>> round_outcome([Vote("A", 1, 0.9), Vote("B", 1, 0.6)], 1)
    Decision(label=1, resolution='consensus', round=1)
    >>> round_outcome([Vote("A", 0, 0.9), Vote("B", None)], 1)
    Decision(label=0, resolution='single_valid', round=1)
    >>> round_outcome([Vote("A", 0, 0.9), Vote("B", 1, 0.8)], 1) is None
    True
    """
    valid = [v for v in votes if v.valid]
    if not valid:
        return Decision(INVALID, "invalid", round_no)
    labels = {v.vote for v in valid}
    if len(labels) > 1:
        return None
    label = labels.pop()
    if len(valid) == 1 and len(votes) > 1:
        return Decision(label, "single_valid", round_no)
    return Decision(label, "consensus", round_no)


def tie_break(votes: Sequence[Vote], rng: random.Random, round_no: int = 0) -> Decision:
    """After the last round without agreement: highest confidence wins; an exact tie between
    labels is broken at random with ``rng`` (seeded, so a re-run gives the same answer).

    >>> tie_break([Vote("A", 1, 0.9), Vote("B", 0, 0.7)], seeded_rng(0))
    Decision(label=1, resolution='confidence', round=0)
    """
    valid = [v for v in votes if v.valid]
    if not valid:
        return Decision(INVALID, "invalid", round_no)
    top = max(float(v.confidence or 0.0) for v in valid)
    best = sorted({v.vote for v in valid if float(v.confidence or 0.0) == top})
    if len(best) == 1:
        return Decision(best[0], "confidence", round_no)
    return Decision(rng.choice(best), "random", round_no)


def decide(
    votes: Sequence[Vote], round_no: int, max_rounds: int, rng: random.Random
) -> Decision | None:
    """The rule applied after each round: settle it, tie-break at the last round, or go on."""
    outcome = round_outcome(votes, round_no)
    if outcome is not None:
        return outcome
    if round_no >= max_rounds:
        return tie_break(votes, rng, round_no)
    return None


def combine(a: int | str, b: int | str) -> Decision | None:
    """The agreement ensemble's first step; ``None`` means the two members disagree.

    >>> combine(1, 1), combine("invalid", 0), combine("invalid", "invalid")
    (Decision(label=1, resolution='agreement', round=0), Decision(label=0, resolution='single_valid', round=0), Decision(label='invalid', resolution='invalid', round=0))
    >>> combine(0, 1) is None
    True
    """
    valid = [x for x in (a, b) if x in (0, 1)]
    if not valid:
        return Decision(INVALID, "invalid")
    if len(valid) == 1:
        return Decision(valid[0], "single_valid")
    if a == b:
        return Decision(a, "agreement")
    return None


def random_pick(a: int, b: int, rng: random.Random) -> Decision:
    """The paper's comparison resolver: pick one of two conflicting labels at random."""
    return Decision(rng.choice(sorted({a, b})), "random")
