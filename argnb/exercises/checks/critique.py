"""Graders for ``exercises/03_critique``: no model needed, helpful messages when something is off.

Each check runs the learner's function or answer on cases made by hand, raises ``AssertionError``
with a hint at the likely mistake, and returns a short success message.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from argnb.critique.metrics import (
    custom_weighted_loss,
    ranking_pairs,
    weighted_pairwise_ranking_error,
)

# (positions, human overall, model overall) -- ties, single-critique positions, human ties
RANKING_CASES: list[tuple[list[str], list[float], list[float]]] = [
    (["p", "p"], [0.8, 0.2], [0.7, 0.1]),  # agree
    (["p", "p"], [0.8, 0.2], [0.1, 0.7]),  # disagree: costs 0.6
    (["p", "p"], [0.8, 0.2], [0.5, 0.5]),  # model tie: costs 0.3
    (["p", "p", "p"], [0.9, 0.5, 0.1], [0.8, 0.8, 0.2]),
    (["a", "a", "b", "b", "b"], [0.3, 0.6, 0.9, 0.1, 0.5], [0.7, 0.4, 0.2, 0.3, 0.9]),
    (["a", "a", "solo", "b", "b"], [0.2, 0.7, 0.5, 0.4, 0.4], [0.6, 0.1, 0.9, 0.1, 0.9]),
]


def _pooled(positions: list[str], human: list[float], pred: list[float]) -> float:
    """A common slip: averaging over all pairs at once instead of within positions first."""
    pairs = ranking_pairs(positions, human, pred)
    return sum(p.weighted_loss for p in pairs) / len(pairs) if pairs else math.nan


def _full_tie(positions: list[str], human: list[float], pred: list[float]) -> float:
    """Another: charging a model tie the whole difference."""
    per: dict[str, list[float]] = {}
    for p in ranking_pairs(positions, human, pred):
        per.setdefault(str(p.position), []).append(p.human_diff if p.verdict != "agree" else 0.0)
    return sum(sum(v) / len(v) for v in per.values()) / len(per) if per else math.nan


def _counting_human_ties(positions: list[str], human: list[float], pred: list[float]) -> float:
    """And another: counting pairs the human rated equally, or positions without pairs, as 0."""
    groups: dict[str, list[int]] = {}
    for k, p in enumerate(positions):
        groups.setdefault(p, []).append(k)
    means = []
    for idx in groups.values():
        n_all = len(idx) * (len(idx) - 1) // 2
        pairs = ranking_pairs(
            [positions[k] for k in idx], [human[k] for k in idx], [pred[k] for k in idx]
        )
        means.append(sum(p.weighted_loss for p in pairs) / n_all if n_all else 0.0)
    return sum(means) / len(means)


def _unweighted(positions: list[str], human: list[float], pred: list[float]) -> float:
    from argnb.critique.metrics import pairwise_ranking_error

    return pairwise_ranking_error(positions, human, pred)


def _close(a: Any, b: float, tol: float = 1e-6) -> bool:
    try:
        return abs(float(a) - b) <= tol
    except (TypeError, ValueError):
        return False


def check_weighted_pairwise(fn: Callable[[list[str], list[float], list[float]], float]) -> str:
    """Grade an implementation of the weighted pairwise ranking error."""
    for positions, human, pred in RANKING_CASES:
        want = weighted_pairwise_ranking_error(positions, human, pred)
        got = fn(list(positions), list(human), list(pred))
        if _close(got, want):
            continue
        case = f"positions={positions}, human={human}, model={pred}"
        hint = "compare each pair of critiques of the same position"
        if _close(got, _unweighted(positions, human, pred)):
            hint = "a wrong order should cost the human's score difference, not 1"
        elif _close(got, _pooled(positions, human, pred)):
            hint = "average the losses within each position first, then across positions"
        elif _close(got, _full_tie(positions, human, pred)):
            hint = "when the model gives two critiques the same score, charge half the difference"
        elif _close(got, _counting_human_ties(positions, human, pred)):
            hint = (
                "skip pairs the human rated equally, and positions with no such pair "
                "(a single critique) contribute nothing"
            )
        raise AssertionError(f"for {case} expected {want:.4f}, got {got!r}: {hint}")
    return f"All {len(RANKING_CASES)} cases right: your weighted pairwise ranking error matches."


# -- custom loss -------------------------------------------------------------------------------------

CLEAR_HUMAN = {
    "centrality": 1.0,
    "strength": 0.5,
    "correctness": 0.8,
    "clarity": 0.9,
    "dead_weight": 0.1,
    "single_issue": 1.0,
    "overall": 0.5,
}
CLEAR_MODEL = {
    "centrality": 0.5,
    "strength": 1.0,
    "correctness": 0.6,
    "clarity": 0.7,
    "dead_weight": 0.3,
    "single_issue": 0.5,
    "overall": 0.3,
}
UNCLEAR_HUMAN = {**CLEAR_HUMAN, "clarity": 0.3, "overall": 0.1}
UNCLEAR_MODEL = {**CLEAR_MODEL, "clarity": 0.8, "overall": 0.4}

#: the ratings the learner computes the loss of by hand (clear branch)
HAND_HUMAN = {
    "centrality": 0.8,
    "strength": 0.5,
    "correctness": 0.9,
    "clarity": 1.0,
    "dead_weight": 0.0,
    "single_issue": 1.0,
    "overall": 0.4,
}
HAND_MODEL = {
    "centrality": 1.0,
    "strength": 0.6,
    "correctness": 0.7,
    "clarity": 0.8,
    "dead_weight": 0.2,
    "single_issue": 0.5,
    "overall": 0.7,
}


def _factors_separately(human: dict[str, float], model: dict[str, float]) -> float:
    """A common slip: 0.1·|Δcentrality| + 0.1·|Δstrength| instead of 0.2·|Δ(product)|."""
    prod = 0.2 * abs(
        human["centrality"] * human["strength"] - model["centrality"] * model["strength"]
    )
    split = 0.1 * (
        abs(human["centrality"] - model["centrality"]) + abs(human["strength"] - model["strength"])
    )
    return custom_weighted_loss(human, model) - prod + split


def check_custom_loss(fn: Callable[[dict[str, float], dict[str, float]], float]) -> str:
    """Grade an implementation of the custom weighted loss (all seven dimensions present)."""
    cases = [
        (CLEAR_HUMAN, CLEAR_MODEL, "a clear critique"),
        (UNCLEAR_HUMAN, UNCLEAR_MODEL, "a critique the human found unclear (clarity < 0.5)"),
        ({**CLEAR_HUMAN, "clarity": 0.5}, CLEAR_MODEL, "human clarity exactly 0.5"),
        (HAND_HUMAN, HAND_MODEL, "the ratings from exercise 2a"),
        (CLEAR_HUMAN, CLEAR_HUMAN, "identical ratings"),
    ]
    for human, model, what in cases:
        want = custom_weighted_loss(human, model)
        got = fn(dict(human), dict(model))
        if _close(got, want):
            continue
        hint = "check the weights: 0.5, 0.2, 0.1, 0.1, 0.05, 0.05"
        if what.startswith("a critique the human"):
            hint = "below clarity 0.5 only overall and clarity count, half each"
        elif "exactly 0.5" in what:
            hint = "the unclear branch is for clarity *below* 0.5; 0.5 itself uses all terms"
        elif _close(got, _factors_separately(human, model)):
            hint = "compare the product centrality × strength, not the two factors separately"
        raise AssertionError(f"for {what} expected {want:.4f}, got {got!r}: {hint}")
    return "Your custom loss matches on all cases, including the unclear branch."


def check_custom_loss_value(value: float) -> str:
    """Grade the by-hand computation of exercise 2a (to 3 decimals)."""
    want = custom_weighted_loss(HAND_HUMAN, HAND_MODEL)
    if not _close(value, want, 5e-4):
        raise AssertionError(
            f"{value!r} is not it. Human clarity is {HAND_HUMAN['clarity']}, so all six terms "
            "count; remember to compare centrality × strength as one product."
        )
    return f"Right: {want:.3f}."


# -- which critique is stronger ----------------------------------------------------------------------


def check_stronger(answer: dict[str, Any]) -> str:
    """Grade exercise 3: the choice, rubric estimates that support it, and a justification.

    ``answer`` = ``{"stronger": "A"|"B", "A": {"centrality", "strength"}, "B": {...}, "why": str}``.
    """
    for key in ("stronger", "A", "B", "why"):
        if key not in answer:
            raise AssertionError(f"the answer needs a {key!r} entry")
    a, b = answer["A"], answer["B"]
    for name, r in (("A", a), ("B", b)):
        for d in ("centrality", "strength"):
            v = r.get(d)
            if not isinstance(v, int | float) or not 0 <= v <= 1:
                raise AssertionError(f"give critique {name}'s {d} as a number from 0 to 1")
    if str(answer["stronger"]).strip().upper() != "B":
        raise AssertionError(
            "Look again: A attacks the conclusion head-on but gives no reason at all. How far "
            "does a bare 'that is wrong' lower anyone's confidence?"
        )
    if a["centrality"] < 0.7:
        raise AssertionError(
            "A denies the position's conclusion itself; if it succeeded, the position would fall. "
            "Its centrality is high."
        )
    if a["strength"] > 0.3:
        raise AssertionError(
            "A only disagrees; it offers no evidence or argument. Mere disagreement has little strength."
        )
    if b["centrality"] > 0.6:
        raise AssertionError(
            "B knocks out one of the position's three reasons; the other two still stand. "
            "That is not fully central."
        )
    if b["strength"] < 0.6:
        raise AssertionError(
            "B backs its point with a concrete fact that, if true, defeats the rent argument. "
            "Its strength is high."
        )
    if b["centrality"] * b["strength"] <= a["centrality"] * a["strength"]:
        raise AssertionError(
            "With your numbers A's strength × centrality is at least B's — then A would be the "
            "stronger critique. Make the numbers and the choice agree."
        )
    why = str(answer["why"]).lower()
    missing = [w for w in ("central", "strength") if w not in why]
    if missing or len(why.split()) < 12:
        raise AssertionError(
            "Justify the choice with the rubric in a sentence or two: say how central and how "
            "strong each critique is (mention centrality and strength)."
        )
    pa, pb = a["centrality"] * a["strength"], b["centrality"] * b["strength"]
    return (
        f"Yes: B. Strength × centrality {pb:.2f} against A's {pa:.2f} — a narrow blow that lands "
        "beats a central one that misses."
    )
