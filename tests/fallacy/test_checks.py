"""The exercise graders accept right answers and reject typical wrong ones with a hint."""

from __future__ import annotations

import pytest

from argnb.exercises.checks import fallacy as checks
from argnb.fallacy import metrics
from argnb.fallacy.prompts import PROMPTS_DIR
from argnb.fallacy.protocol import Vote, tie_break


def good_tie_break(votes, rng):
    d = tie_break([Vote(v["agent"], v["vote"], v["confidence"]) for v in votes], rng)
    return d.label, d.resolution


def test_tie_break_checker():
    assert checks.check_tie_break(good_tie_break).startswith("✓")

    def always_first_label(votes, rng):
        valid = [v for v in votes if v["vote"] is not None]
        return (valid[0]["vote"], "confidence") if valid else ("invalid", "invalid")

    with pytest.raises(AssertionError, match="whichever label"):
        checks.check_tie_break(always_first_label)

    def unseeded(votes, rng):
        import random

        label, how = good_tie_break(votes, rng)
        if how == "random":
            return random.Random().choice([0, 1]), how
        return label, how

    with pytest.raises(AssertionError, match="generator you are given"):
        checks.check_tie_break(unseeded)


def test_metrics_checker():
    acc = lambda df: metrics.accuracy(list(df.gold), list(df.pred))  # noqa: E731
    f1 = lambda df: metrics.macro_f1(list(df.gold), list(df.pred))  # noqa: E731
    assert checks.check_metrics(acc, f1).startswith("✓")

    def acc_ignoring_invalid(df):
        valid = df[df.pred != "invalid"]
        return metrics.accuracy(list(valid.gold), list(valid.pred))

    with pytest.raises(AssertionError, match="invalid"):
        checks.check_metrics(acc_ignoring_invalid, f1)

    def f1_of_class_one_only(df):
        return metrics.f1_per_class(list(df.gold), list(df.pred)).get(1, 0.0)

    with pytest.raises(AssertionError, match="macro-F1"):
        checks.check_metrics(acc, f1_of_class_one_only)


def test_few_shot_template_checker():
    ours = (PROMPTS_DIR / "few_shot.md").read_text()
    assert checks.check_few_shot_template(ours).startswith("✓")
    bad = {
        "no example section": "## system\nSay 1 or 0.\n## user\n$argument",
        "no $argument": "## system\nSay 1 or 0.\n## example\nJudge it.\n## user\nJudge it.",
        "unknown placeholder": "## system\nSay 1 or 0.\n## example\n$argument $label\n"
        "## user\n$argument $label",
        "meaning of labels": "## system\nJudge.\n## example\n$argument\n## user\n$argument",
        "same text": "## system\n1 = fallacy, 0 = none\n## example\nE: $argument\n## user\n$argument",
    }
    for why, text in bad.items():
        with pytest.raises(AssertionError):
            checks.check_few_shot_template(text)
        assert why
