"""The graders of exercises/04_debate: right answers pass, wrong ones get a hint, never the key."""

from __future__ import annotations

import inspect

import pytest

from argnb.debate import checks as c

RIGHT_LABELS = [
    {"expert_opinion"},
    {"analogy"},
    {"negative_consequences"},
    {"values"},
    {"cause_to_effect"},
]
RIGHT_FLAWS = [
    ("contradiction", [1, 3]),
    ("circular reasoning", [1, 2]),
    ("overgeneralization", [1, 3]),
    ("false dichotomy", [1]),
]


def test_reference_answers_pass():
    assert c.check_priors(c.reference_priors)
    assert c.check_kept(lambda p, t: {s for s, v in p.items() if v > t})
    assert c.check_rerank(c.reference_rerank)
    assert c.check_recall(c.reference_recall)
    assert c.check_labels(RIGHT_LABELS)
    assert c.check_flaws(RIGHT_FLAWS)
    assert c.check_contradictions(c.reference_contradictions)


def test_the_priors_divide_by_k_not_by_the_users():
    def by_users(rows, schemes):
        out = {}
        for s in schemes:
            used = [c.score(r["labels"].get(s)) for r in rows if s in r["labels"]]
            out[s] = sum(used) / len(used) if used else 0.0
        return out

    with pytest.raises(AssertionError, match="number of passages"):
        c.check_priors(by_users)
    with pytest.raises(AssertionError, match="strictly above"):
        c.check_kept(lambda p, t: {s for s, v in p.items() if v >= t})


def test_rerank_conventions_are_checked():
    with pytest.raises(AssertionError, match="equal cosines"):
        c.check_rerank(lambda q, cands, k: sorted(cands, reverse=True)[:k])


def test_a_wrong_label_gets_a_critical_question_not_the_scheme():
    wrong = [set(x) for x in RIGHT_LABELS]
    wrong[0] = {"example"}
    with pytest.raises(AssertionError) as err:
        c.check_labels(wrong)
    msg = str(err.value)
    assert "critical question" in msg and "expert_opinion" not in msg


def test_a_wrong_flaw_gets_a_hint_and_the_keys_are_not_in_the_source():
    wrong = list(RIGHT_FLAWS)
    wrong[3] = ("false dichotomy", [1, 2, 3])
    with pytest.raises(AssertionError, match="kind is right"):
        c.check_flaws(wrong)
    source = inspect.getsource(c)
    assert '"analogy"}' not in source and "[1, 3]" not in source


def test_contradictions_ignore_spaces():
    got = c.reference_contradictions(
        ["Cause(A, B)", "Negate(Cause(A,B))", "Negate(Negate(Cause(A,B)))"]
    )
    assert got == {(0, 1), (1, 2)}
