"""Every metric against values computed by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import math

import pytest

from argnb.critique.data import CritiqueDataset, RatedCritique
from argnb.critique.metrics import (
    custom_loss_terms,
    custom_weighted_loss,
    kendall_tau,
    mean_custom_loss,
    mse,
    pairwise_ranking_error,
    position_errors,
    ranking_pairs,
    recalibrate,
    score,
    weighted_pairwise_ranking_error,
)
from argnb.errors import DataError

# Position A: human 0.9 / 0.5 / 0.1, model 0.8 / 0.8 / 0.2
#   (0,1) model tie -> 1/2 (weighted 0.4/2 = 0.2); (0,2) agree -> 0; (1,2) agree -> 0
#   A: 0.5/3 = 1/6; weighted 0.2/3
# Position B: human 0.3 / 0.6, model 0.7 / 0.4 -> wrong order: 1 (weighted 0.3)
# Position C: one critique -> no pair;  Position D: human 0.4 / 0.4 -> no pair
POS = ["A", "A", "A", "B", "B", "C", "D", "D"]
HUM = [0.9, 0.5, 0.1, 0.3, 0.6, 0.5, 0.4, 0.4]
PRED = [0.8, 0.8, 0.2, 0.7, 0.4, 0.9, 0.1, 0.9]


def test_pairwise_ranking_error_by_hand():
    assert pairwise_ranking_error(POS, HUM, PRED) == pytest.approx((1 / 6 + 1) / 2)  # 7/12


def test_weighted_pairwise_ranking_error_by_hand():
    assert weighted_pairwise_ranking_error(POS, HUM, PRED) == pytest.approx((0.2 / 3 + 0.3) / 2)


def test_single_critique_and_human_tied_positions_contribute_nothing():
    only_ab = slice(0, 5)
    assert position_errors(POS, HUM, PRED).keys() == {"A", "B"}
    assert pairwise_ranking_error(POS, HUM, PRED) == pairwise_ranking_error(
        POS[only_ab], HUM[only_ab], PRED[only_ab]
    )
    assert math.isnan(pairwise_ranking_error(["C"], [0.5], [0.9]))
    assert math.isnan(weighted_pairwise_ranking_error(["D", "D"], [0.4, 0.4], [0.1, 0.9]))


def test_pair_verdicts_and_losses():
    pairs = ranking_pairs(POS, HUM, PRED)
    assert [(p.i, p.j, p.verdict) for p in pairs] == [
        (0, 1, "tie"),
        (0, 2, "agree"),
        (1, 2, "agree"),
        (3, 4, "disagree"),
    ]
    assert [p.loss for p in pairs] == [0.5, 0.0, 0.0, 1.0]
    assert [p.weighted_loss for p in pairs] == pytest.approx([0.2, 0.0, 0.0, 0.3])


def test_the_paper_example_of_a_narrow_preference():
    # human 0.45 vs 0.43: a wrong order costs 0.02, a tie 0.01, the right order 0
    pos, hum = ["p", "p"], [0.45, 0.43]
    assert weighted_pairwise_ranking_error(pos, hum, [0.1, 0.9]) == pytest.approx(0.02)
    assert weighted_pairwise_ranking_error(pos, hum, [0.5, 0.5]) == pytest.approx(0.01)
    assert weighted_pairwise_ranking_error(pos, hum, [0.9, 0.1]) == 0.0


def test_float_noise_is_a_tie_and_missing_predictions_take_no_pairs():
    # 0.1 + 0.2 != 0.3 in floating point, but a human mean like that is a tie
    assert ranking_pairs(["p", "p"], [0.1 + 0.2, 0.3], [0.0, 1.0]) == []
    # critique 1 has no prediction: only the pair (0, 2) is left, and it is ordered right
    assert pairwise_ranking_error(["p"] * 3, [0.9, 0.5, 0.1], [0.8, None, 0.2]) == 0.0
    assert pairwise_ranking_error(["p"] * 3, [0.9, 0.5, 0.1], [0.8, math.nan, 0.9]) == 1.0


def test_ranking_errors_ignore_calibration():
    squashed = [0.5 + 0.1 * (p - 0.5) for p in PRED]  # any strictly increasing map
    assert pairwise_ranking_error(POS, HUM, squashed) == pairwise_ranking_error(POS, HUM, PRED)
    assert weighted_pairwise_ranking_error(POS, HUM, squashed) == pytest.approx(
        weighted_pairwise_ranking_error(POS, HUM, PRED)
    )


HUMAN = {
    "centrality": 1.0,
    "strength": 0.5,
    "correctness": 0.8,
    "clarity": 0.9,
    "dead_weight": 0.1,
    "single_issue": 1.0,
    "overall": 0.5,
}
MODEL = {
    "centrality": 0.5,
    "strength": 1.0,
    "correctness": 0.6,
    "clarity": 0.7,
    "dead_weight": 0.3,
    "single_issue": 0.5,
    "overall": 0.3,
}


def test_custom_loss_clear_branch_by_hand():
    # 0.5*0.2 + 0.2*|0.5-0.5| + 0.1*0.2 + 0.1*0.2 + 0.05*0.2 + 0.05*0.5
    # = 0.1 + 0 + 0.02 + 0.02 + 0.01 + 0.025 = 0.175
    assert custom_weighted_loss(HUMAN, MODEL) == pytest.approx(0.175)


def test_custom_loss_uses_the_product_not_the_factors():
    # same product (0.5), split the other way round: no penalty at all
    swapped = {**HUMAN, "centrality": 0.5, "strength": 1.0}
    assert custom_weighted_loss(HUMAN, swapped) == pytest.approx(0.0)


def test_custom_loss_unclear_branch_by_hand():
    human = {**HUMAN, "clarity": 0.4, "overall": 0.1}
    model = {**MODEL, "clarity": 0.9, "overall": 0.6}
    assert custom_weighted_loss(human, model) == pytest.approx(0.5 * 0.5 + 0.5 * 0.5)
    wild = {**model, "centrality": 0.0, "correctness": 0.0, "single_issue": 0.0}
    assert custom_weighted_loss(human, wild) == pytest.approx(0.5)  # other dims ignored
    # clarity exactly 0.5 is *not* below the threshold: the clear branch
    assert [t[0] for t in custom_loss_terms({**HUMAN, "clarity": 0.5}, MODEL)][:2] == [
        "overall",
        "refutation",
    ]


def test_custom_loss_with_missing_dimensions():
    # a judge that rates only overall: the loss is |Δoverall| (0.5*0.2 / 0.5)
    assert custom_weighted_loss(HUMAN, {"overall": 0.3}) == pytest.approx(0.2)
    # no single issue from the model: (0.175 - 0.025) / 0.95
    no_si = {k: v for k, v in MODEL.items() if k != "single_issue"}
    assert custom_weighted_loss(HUMAN, no_si) == pytest.approx(0.15 / 0.95)
    # the human skipped strength: the product term drops out: (0.175 - 0) / 0.8
    no_strength = {k: v for k, v in HUMAN.items() if k != "strength"}
    assert custom_weighted_loss(no_strength, MODEL) == pytest.approx(0.175 / 0.8)
    # no human clarity: the clear branch, without the clarity term: 0.155 / 0.9
    no_clarity = {k: v for k, v in HUMAN.items() if k != "clarity"}
    assert custom_weighted_loss(no_clarity, MODEL) == pytest.approx(0.155 / 0.9)
    # no overall on either side: not scored
    assert math.isnan(custom_weighted_loss({"clarity": 1.0}, MODEL))
    assert math.isnan(custom_weighted_loss(HUMAN, {"clarity": 1.0}))
    assert mean_custom_loss([HUMAN, HUMAN], [MODEL, {"clarity": 1.0}]) == pytest.approx(0.175)


def test_mse_by_hand():
    # (0.01 + 0 + 0.09) / 3
    assert mse([0.1, 0.5, 0.9], [0.2, 0.5, 0.6]) == pytest.approx(0.1 / 3)
    assert mse([0.1, 0.5], [0.2, None]) == pytest.approx(0.01)
    assert math.isnan(mse([], []))


def test_kendall_tau_by_hand():
    # pairs (1,2): +,+ ; (1,3): +,+ ; (2,3): +,- -> (2 - 1) / 3
    assert kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    # a tie in x: S = 2, n0 = 3, ties_x = 1 -> 2 / sqrt(2 * 3)  (scipy: 0.8164965809)
    assert kendall_tau([1, 2, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(6))
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert math.isnan(kendall_tau([0.3, 0.3, 0.3], [0.1, 0.2, 0.3]))  # constant
    assert math.isnan(kendall_tau([0.3], [0.1]))


def test_recalibrate_maps_onto_the_human_distribution():
    assert recalibrate([0.9, 0.8, 0.7], [0.1, 0.2, 0.3]) == pytest.approx([0.3, 0.2, 0.1], abs=1e-5)
    # tied predictions share the mean of their quantiles: ranks 0.5, 0.5, 2
    assert recalibrate([0.5, 0.5, 0.9], [0.1, 0.2, 0.3]) == pytest.approx(
        [0.15, 0.15, 0.3], abs=1e-5
    )
    # distinct predictions stay distinct even where human scores tie (strictly increasing)
    out = recalibrate([0.2, 0.4, 0.6], [0.0, 0.0, 1.0])
    assert out[0] < out[1] < out[2] and out == pytest.approx([0.0, 0.0, 1.0], abs=1e-5)


# -- whole-dataset scoring ---------------------------------------------------------------------------


def _item(pos: str, cid: str, **raters: dict[str, float]) -> RatedCritique:
    return RatedCritique(
        position_id=pos, position=f"position {pos}", critique_id=cid, critique=cid, ratings=raters
    )


def _dataset() -> CritiqueDataset:
    # P1 human overall 0.8, 0.2, 0.5 ; P2 0.6, 0.0 (each the mean of two raters)
    def two(o: float, d: float = 0.1) -> dict[str, dict[str, float]]:
        return {"x": {"overall": o - d, "clarity": 1.0}, "y": {"overall": o + d, "clarity": 1.0}}

    return CritiqueDataset(
        [
            _item("P1", "a", **two(0.8)),
            _item("P1", "b", **two(0.2)),
            _item("P1", "c", **two(0.5)),
            _item("P2", "d", **two(0.6)),
            _item("P2", "e", **two(0.0, 0.0)),
        ]
    )


def test_score_against_the_mean_of_raters_by_hand():
    data = _dataset()
    pred = {"a": {"overall": 0.9}, "b": {"overall": 0.9}, "c": {"overall": 0.4}}
    pred |= {"d": {"overall": 0.1}, "e": {"overall": 0.2}}
    s = score(data, pred, n_boot=200)
    # P1: (a,b) tie 0.5, (a,c) agree, (b,c) wrong 1 -> 0.5 ; P2: wrong -> 1 ; mean 0.75
    assert s.judge["pairwise_ranking_error"].value == pytest.approx(0.75)
    # weighted: P1 (0.3 + 0 + 0.3) / 3 = 0.2 ; P2 0.6 -> 0.4
    assert s.judge["weighted_pairwise_ranking_error"].value == pytest.approx(0.4)
    # mse: (0.01 + 0.49 + 0.01 + 0.25 + 0.04) / 5 = 0.16
    assert s.judge["mse_overall"].value == pytest.approx(0.16)
    assert s.info["n_pairs"] == 4 and s.info["n_positions_ranked"] == 2
    assert s.info["dimensions"] == ["overall"]


def test_mean_baseline_by_hand():
    s = score(_dataset(), {c: {"overall": 0.5} for c in "abcde"}, n_boot=50)
    # always 0.42: every pair is a tie -> 0.5; weighted = half the mean difference
    assert s.mean_baseline["pairwise_ranking_error"].value == pytest.approx(0.5)
    # P1 diffs 0.6, 0.3, 0.3 -> halves 0.3, 0.15, 0.15 -> 0.2 ; P2 0.6 -> 0.3 ; mean 0.25
    assert s.mean_baseline["weighted_pairwise_ranking_error"].value == pytest.approx(0.25)
    # variance of 0.8, 0.2, 0.5, 0.6, 0.0 around 0.42 = 0.408 / 5
    assert s.mean_baseline["mse_overall"].value == pytest.approx(0.0816)
    # only overall is rated, so the baseline's custom loss is its mean absolute error
    assert s.mean_baseline["custom_loss"].value == pytest.approx(
        (0.38 + 0.22 + 0.08 + 0.18 + 0.42) / 5
    )
    assert math.isnan(s.mean_baseline["kendall_tau_overall"].value)


def test_random_judge_matches_its_expectation():
    s = score(_dataset(), {c: {"overall": 0.5} for c in "abcde"}, n_boot=4000, seed=1)
    r = s.random_judge
    assert r["pairwise_ranking_error"].value == pytest.approx(0.5, abs=0.02)
    assert r["weighted_pairwise_ranking_error"].value == pytest.approx(0.25, abs=0.01)
    # E(U - h)^2 = 1/3 - h + h^2, averaged over the five human scores = 0.171333
    assert r["mse_overall"].value == pytest.approx(0.171333, abs=0.005)
    assert r["kendall_tau_overall"].value == pytest.approx(0.0, abs=0.03)


def test_bootstrap_intervals_by_hand():
    # each position's error is exactly 1: every resample gives 1
    data = CritiqueDataset(
        [
            _item("P", "a", x={"overall": 0.9}),
            _item("P", "b", x={"overall": 0.1}),
            _item("Q", "c", x={"overall": 0.7}),
            _item("Q", "d", x={"overall": 0.2}),
        ]
    )
    wrong = {"a": {"overall": 0.1}, "b": {"overall": 0.9}, "c": {"overall": 0.2}}
    s = score(data, wrong | {"d": {"overall": 0.7}}, n_boot=500)
    m = s.judge["pairwise_ranking_error"]
    assert (m.value, m.ci_low, m.ci_high) == (1.0, 1.0, 1.0)
    # P wrong (1), Q right (0): resample means are 0, 1/2 or 1 with probs 1/4, 1/2, 1/4
    s = score(data, wrong | {"d": {"overall": 0.1}}, n_boot=2000, seed=3)
    m = s.judge["pairwise_ranking_error"]
    assert (m.value, m.ci_low, m.ci_high) == (0.5, 0.0, 1.0)
    assert (
        score(data, wrong | {"d": {"overall": 0.1}}, n_boot=2000, seed=3).to_dict() == s.to_dict()
    )


def test_named_rater_coverage_and_errors():
    data = _dataset()
    pred = {"a": {"overall": 0.9}, "b": {"overall": 0.1}}  # c, d, e not rated by the judge
    s = score(data, pred, human="x", n_boot=20)
    assert s.info["n_critiques"] == 2 and s.info["coverage"] == pytest.approx(2 / 5)
    assert s.judge["pairwise_ranking_error"].value == 0.0
    with pytest.raises(DataError, match="no rater 'nobody'"):
        score(data, pred, human="nobody")
    with pytest.raises(DataError, match="not in the dataset"):
        score(data, {"zzz": {"overall": 0.1}})


def test_recalibrated_scoring_keeps_ranks_and_fixes_a_squashed_judge():
    data = _dataset()
    ref = data.reference()
    squashed = {c: {"overall": 0.5 + 0.2 * (r["overall"] - 0.5)} for c, r in ref.items()}
    raw = score(data, squashed, n_boot=50)
    fixed = score(data, squashed, n_boot=50, recalibrated=True)
    assert raw.judge["mse_overall"].value > 0.03
    assert fixed.judge["mse_overall"].value == pytest.approx(0.0, abs=1e-9)
    for m in ("pairwise_ranking_error", "weighted_pairwise_ranking_error", "kendall_tau_overall"):
        assert fixed.judge[m].value == raw.judge[m].value


def test_vectorised_custom_loss_agrees_with_the_formula(examples):
    """score()'s array code and custom_weighted_loss() must never drift apart."""
    import random

    rng = random.Random(7)
    ref = examples.reference()
    pred = {}
    for cid in examples.ids:
        r = {d: round(rng.random(), 2) for d in ref[cid]}
        if rng.random() < 0.3:
            r.pop("single_issue")
        pred[cid] = r
    s = score(examples, pred, n_boot=10)
    want = mean_custom_loss([ref[c] for c in examples.ids], [pred[c] for c in examples.ids])
    assert s.judge["custom_loss"].value == pytest.approx(want)
    ids = examples.ids
    positions = [examples[c].position_id for c in ids]
    assert s.judge["pairwise_ranking_error"].value == pytest.approx(
        pairwise_ranking_error(
            positions, [ref[c]["overall"] for c in ids], [pred[c]["overall"] for c in ids]
        )
    )
