"""The pure rules: speaking order, round outcomes, tie-breaks, the ensemble's first step."""

from __future__ import annotations

import pytest

from argnb.fallacy.protocol import (
    Decision,
    Vote,
    combine,
    decide,
    random_pick,
    round_outcome,
    seeded_rng,
    speaking_order,
    tie_break,
)


def test_speaking_order_reverses_every_round():
    agents = ["A", "B", "C"]
    assert speaking_order(agents, 1) == ["A", "B", "C"]
    assert speaking_order(agents, 2) == ["C", "B", "A"]
    assert speaking_order(agents, 3) == ["A", "B", "C"]
    with pytest.raises(ValueError):
        speaking_order(agents, 0)


def test_round_outcome_cases():
    assert round_outcome([Vote("A", 1, 0.9), Vote("B", 1, 0.2)], 2) == Decision(1, "consensus", 2)
    assert round_outcome([Vote("A", None), Vote("B", 0, 0.7)], 1) == Decision(0, "single_valid", 1)
    assert round_outcome([Vote("A", None), Vote("B", None)], 1) == Decision("invalid", "invalid", 1)
    assert round_outcome([Vote("A", 1, 0.9), Vote("B", 0, 0.9)], 1) is None
    # three agents: two valid agreeing votes and one invalid is agreement among the valid ones
    three = [Vote("A", 1, 0.5), Vote("B", None), Vote("C", 1, 0.6)]
    assert round_outcome(three, 1) == Decision(1, "consensus", 1)


def test_tie_break_prefers_confidence_and_ignores_invalid_votes():
    votes = [Vote("A", 0, 0.55), Vote("B", 1, 0.95), Vote("C", None)]
    assert tie_break(votes, seeded_rng(1), 3) == Decision(1, "confidence", 3)
    # confidence tie between votes for the SAME label is not random
    same = [Vote("A", 1, 0.8), Vote("B", 1, 0.8), Vote("C", 0, 0.4)]
    assert tie_break(same, seeded_rng(1)).resolution == "confidence"


def test_equal_confidence_is_random_but_reproducible():
    votes = [Vote("A", 0, 0.8), Vote("B", 1, 0.8)]
    labels = [tie_break(votes, seeded_rng(7, f"item{i}")).label for i in range(40)]
    assert set(labels) == {0, 1}, "a fair tie-break must be able to pick either label"
    again = [tie_break(votes, seeded_rng(7, f"item{i}")).label for i in range(40)]
    assert labels == again, "the same seed and item must give the same pick"
    assert all(tie_break(votes, seeded_rng(7, "x")).resolution == "random" for _ in range(3))


def test_decide_only_tie_breaks_at_the_last_round():
    split = [Vote("A", 0, 0.6), Vote("B", 1, 0.9)]
    assert decide(split, 1, 3, seeded_rng(0)) is None
    assert decide(split, 3, 3, seeded_rng(0)) == Decision(1, "confidence", 3)


def test_combine_and_random_pick():
    assert combine(1, 1) == Decision(1, "agreement")
    assert combine(0, "invalid") == Decision(0, "single_valid")
    assert combine("invalid", "invalid") == Decision("invalid", "invalid")
    assert combine(1, 0) is None
    picks = {random_pick(0, 1, seeded_rng(3, f"i{k}")).label for k in range(30)}
    assert picks == {0, 1}
