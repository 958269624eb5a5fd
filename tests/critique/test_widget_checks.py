"""The learner-rating widget (no browser needed) and the exercise graders."""

from __future__ import annotations

import pytest

from argnb.critique.data import CritiqueDataset, RatedCritique, load_class_ratings
from argnb.critique.metrics import custom_weighted_loss, weighted_pairwise_ranking_error
from argnb.critique.widget import RatingWidget, explain_disagreement
from argnb.exercises.checks import critique as checks

pytest.importorskip("ipywidgets")


def test_widget_compares_learner_expert_and_judge(examples):
    preds = [{"critique_id": "det-2", "ratings": {"overall": 0.9}, "reasoning": "looks fine"}]
    w = RatingWidget(examples, preds, critique_id="det-2")
    assert "Quantum mechanics" in w.text.value
    mine = {
        "centrality": 1.0,
        "strength": 0.6,
        "correctness": 0.7,
        "clarity": 1.0,
        "dead_weight": 0.0,
        "single_issue": 1.0,
        "overall": 0.6,
    }
    w.set_values(mine)
    out = w.compare()
    expert = examples.reference()["det-2"]
    assert f"{custom_weighted_loss(expert, mine):.3f}" in out
    assert f"{custom_weighted_loss(expert, {'overall': 0.9}):.3f}" in out  # the judge's loss
    assert "Largest disagreement" in out and "centrality differs most" in out
    table = w.comparison()
    assert list(table.columns) == [
        "you",
        "experts (mean)",
        "· amara",
        "· bruno",
        "· chloe",
        "· dev",
        "judge",
    ]
    assert table.loc["strength × centrality", "you"] == pytest.approx(0.6)
    # the learner's rating is kept, reloaded when they come back, and exports to the class format
    w.show("det-1")
    assert w.sliders["overall"].value == 0.5
    w.show("det-2")
    assert w.sliders["overall"].value == 0.6
    frame = w.to_frame("kim")
    assert load_class_ratings(frame) == {"kim": {"det-2": mine}}


def test_widget_escapes_everything_it_shows():
    evil = "<script>alert('x')</script>"
    data = CritiqueDataset(
        [
            RatedCritique(
                position_id="p<b>",
                position=f"A position {evil}",
                critique_id="c1",
                critique=f"A critique <img src=x onerror=alert(1)> {evil}",
                ratings={"<i>rater</i>": {"overall": 0.2, "clarity": 1.0}},
            )
        ]
    )
    preds = [{"critique_id": "c1", "ratings": {"overall": 0.4}, "reasoning": evil}]
    w = RatingWidget(data, preds, judge_name="<u>judge</u>")
    w.compare()
    shown = w.text.value + w.result.value
    assert "<script>" not in shown and "<img" not in shown and "<i>rater" not in shown
    assert "<u>judge" not in shown
    assert "&lt;script&gt;" in shown and "&lt;u&gt;judge&lt;/u&gt;" in shown


def test_explanations():
    expert = {"centrality": 1.0, "strength": 0.3, "overall": 0.3, "clarity": 1.0}
    same_product = {"centrality": 0.3, "strength": 1.0, "overall": 0.3, "clarity": 1.0}
    text = explain_disagreement(same_product, expert)
    assert "within 0.1" in text and "only the product is scored" in text
    text = explain_disagreement({**expert, "overall": 0.9}, expert)
    assert text.startswith("Largest disagreement: overall") and "product is 0.30" in text
    text = explain_disagreement({**expert, "clarity": 0.2}, expert)
    assert "clarity" in text and "pinned down" in text


def test_weighted_pairwise_check_accepts_ours_and_diagnoses_mistakes():
    assert "All" in checks.check_weighted_pairwise(weighted_pairwise_ranking_error)
    with pytest.raises(AssertionError, match="score difference"):
        checks.check_weighted_pairwise(checks._unweighted)
    with pytest.raises(AssertionError, match="within each position first"):
        checks.check_weighted_pairwise(checks._pooled)
    with pytest.raises(AssertionError, match="half the difference"):
        checks.check_weighted_pairwise(checks._full_tie)
    with pytest.raises(AssertionError, match="contribute nothing"):
        checks.check_weighted_pairwise(checks._counting_human_ties)


def test_custom_loss_checks():
    assert "matches" in checks.check_custom_loss(custom_weighted_loss)
    with pytest.raises(AssertionError, match="product"):
        checks.check_custom_loss(checks._factors_separately)

    def no_unclear_branch(h, p):
        return custom_weighted_loss({**h, "clarity": max(h["clarity"], 0.5)}, p)

    with pytest.raises(AssertionError, match=r"below clarity 0\.5"):
        checks.check_custom_loss(no_unclear_branch)
    # by hand: 0.5*0.3 + 0.2*|0.4-0.6| + 0.1*0.2 + 0.1*0.2 + 0.05*0.2 + 0.05*0.5 = 0.265
    assert checks.check_custom_loss_value(0.265) == "Right: 0.265."
    with pytest.raises(AssertionError):
        checks.check_custom_loss_value(0.3)


GOOD = {
    "stronger": "B",
    "A": {"centrality": 1.0, "strength": 0.05},
    "B": {"centrality": 0.35, "strength": 0.85},
    "why": "A is fully central but has almost no strength: it only disagrees. B attacks one of "
    "three reasons, so its centrality is about a third, but it refutes that reason.",
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"stronger": "A"}, "no reason at all"),
        ({"A": {"centrality": 0.3, "strength": 0.05}}, "centrality is high"),
        ({"A": {"centrality": 1.0, "strength": 0.6}}, "little strength"),
        ({"B": {"centrality": 0.9, "strength": 0.85}}, "not fully central"),
        ({"B": {"centrality": 0.35, "strength": 0.3}}, "strength is high"),
        (
            {"A": {"centrality": 1.0, "strength": 0.3}, "B": {"centrality": 0.3, "strength": 0.7}},
            "agree",
        ),
        ({"why": "B is better."}, "mention centrality and strength"),
        ({"B": {"centrality": "high", "strength": 0.8}}, "number from 0 to 1"),
    ],
)
def test_stronger_check(change, message):
    assert checks.check_stronger(GOOD).startswith("Yes: B")
    with pytest.raises(AssertionError, match=message):
        checks.check_stronger({**GOOD, **change})


def test_a_judge_answer_the_gate_stopped_shows_muted_with_the_raw_text_one_click_away(examples):
    """The judge's answer echoed a heading and wrote out its format twice: the learner sees it
    marked as unusable with the reason, the model's words (escaped) behind a click."""
    import re

    from argnb.critique.judge import Judge
    from argnb.llm.scripted import ScriptedBackend
    from argnb.views import GATED

    raw = {"reasoning": "Your task <script>alert(1)</script> type':'object'", "overall": 0.7}
    backend = ScriptedBackend([raw, raw])
    rec = Judge(backend, "baseline").rate(examples["det-2"]).record()
    assert rec["error"].startswith("the model echoed its instructions") and rec["ratings"] == {}
    w = RatingWidget(examples, [rec], critique_id="det-2")
    out = w.compare()
    assert f"class='{GATED}'" in out and "the judge: not shown as an answer" in out
    assert "the model echoed its instructions" in out
    assert "<script>" not in out and "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    shown = re.sub(r"<details>.*?</details>", "", out, flags=re.S)
    assert "Your task" not in shown and "alert(1)" not in shown
    assert "The judge's reasoning" not in out  # not offered as the judge's reasoning


def test_a_judge_answer_that_never_fit_its_format_shows_marked_without_the_parser_error(examples):
    import re

    from argnb.critique.judge import Judge
    from argnb.llm.scripted import ScriptedBackend
    from argnb.views import UNREADABLE

    backend = ScriptedBackend(["<script>alert(3)</script> no json", "no json either"])
    rec = Judge(backend, "baseline").rate(examples["det-2"]).record()
    assert rec["error"]
    out = RatingWidget(examples, [rec], critique_id="det-2").compare()
    assert f"the judge: not shown as an answer: {UNREADABLE}" in out
    assert "<script>" not in out and "no json either" in out
    shown = re.sub(r"<details>.*?</details>", "", out, flags=re.S)
    assert "no json either" not in shown and rec["error"] not in out
