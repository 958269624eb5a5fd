"""Metrics on hand-made results tables."""

from __future__ import annotations

import pytest

from argnb.fallacy.metrics import (
    accuracy,
    confusion,
    f1_per_class,
    format_report,
    histogram,
    macro_f1,
    summarize,
)


def test_accuracy_counts_invalid_as_wrong():
    assert accuracy([1, 1, 0, 0], [1, "invalid", 0, 1]) == 0.5
    assert accuracy([], []) == 0.0
    with pytest.raises(ValueError):
        accuracy([1], [])


def test_macro_f1_by_hand():
    gold = [1, 1, 0, 0]
    # class 0: tp=1 fp=1 fn=1 (the invalid) -> 0.5 ; class 1: tp=1 fp=0 fn=1 -> 2/3
    assert f1_per_class(gold, [1, 0, 0, "invalid"]) == {0: 0.5, 1: pytest.approx(2 / 3)}
    # class 1: tp=1 fp=1 fn=1 -> 0.5 ; class 0: tp=0 fp=1 fn=2 -> 0
    pred = [1, 0, 1, "invalid"]
    scores = f1_per_class(gold, [1, "invalid", 0, 1])
    assert scores == {0: pytest.approx(2 / 3), 1: pytest.approx(0.5)}
    assert macro_f1(gold, pred) == pytest.approx(0.25)
    # only one class anywhere: macro over that class alone
    assert macro_f1([1, 1], [1, 1]) == 1.0
    assert macro_f1([], []) == 0.0


def test_confusion_and_histogram():
    c = confusion([0, 0, 1, 1, 1], [0, 1, 1, "invalid", 1])
    assert c == {"0": {"0": 1, "1": 1, "invalid": 0}, "1": {"0": 0, "1": 2, "invalid": 1}}
    h = histogram([0.0, 0.05, 0.8, 0.85, 0.9, 1.0])
    assert h["0.0-0.1"] == 2 and h["0.8-0.9"] == 2 and h["0.9-1.0"] == 2
    assert sum(h.values()) == 6 and len(h) == 10


def rec(i, source, label, pred, **kw):
    base = {
        "id": str(i),
        "source": source,
        "label": label,
        "pred": pred,
        "method": "ensemble",
        "calls": 2,
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "latency_s": 0.5,
        "outputs": 2,
        "invalid_outputs": 0,
    }
    base.update(kw)
    return base


def test_summarize_an_ensemble_run():
    m = lambda a, b: [{"name": "A", "pred": a}, {"name": "B", "pred": b}]  # noqa: E731
    records = [
        rec(
            1,
            "news",
            1,
            1,
            members=m(1, 1),
            agree=True,
            disagree=False,
            resolution="agreement",
            pred_random=1,
            rounds=0,
            confidences=[],
        ),
        rec(
            2,
            "news",
            0,
            0,
            members=m(1, 0),
            agree=False,
            disagree=True,
            resolution="consensus",
            pred_random=1,
            rounds=1,
            confidences=[0.8, 0.85],
            calls=4,
            outputs=4,
        ),
        rec(
            3,
            "edu",
            1,
            0,
            members=m(1, 0),
            agree=False,
            disagree=True,
            resolution="confidence",
            pred_random=1,
            rounds=3,
            confidences=[0.9, 0.6] * 3,
            calls=8,
            outputs=8,
        ),
        rec(
            4,
            "edu",
            1,
            "invalid",
            members=m("invalid", "invalid"),
            agree=False,
            disagree=False,
            resolution="invalid",
            pred_random="invalid",
            rounds=0,
            confidences=[],
            invalid_outputs=2,
        ),
    ]
    r = summarize(records)
    assert r["n"] == 4 and r["accuracy"] == 0.5
    assert r["per_source"]["news"]["accuracy"] == 1.0 and r["per_source"]["edu"]["accuracy"] == 0.0
    assert r["invalid_rate"] == 0.25
    assert r["invalid_output_rate"] == round(2 / 16, 4)
    assert r["calls_per_item"] == 4.0
    assert r["agreement_rate"] == 0.25 and r["disagreed"] == 2 and r["one_or_both_invalid"] == 1
    assert r["members"]["A"]["accuracy"] == 0.5 and r["members"]["B"]["accuracy"] == 0.5
    assert r["accuracy_random_tiebreak"] == 0.5
    d = r["disagreement"]
    assert d["n"] == 2 and d["accuracy"] == 0.5 and d["accuracy_random"] == 0.5
    assert d["resolutions"] == {"consensus": 1, "confidence": 1}
    assert r["rounds"] == {"1": 1, "3": 1}
    assert r["confidences"] == 8 and r["confidence_share_0.8_0.9"] == round(5 / 8, 4)
    text = format_report(r)
    assert "news" in text and "agreement rate 25.0%" in text
