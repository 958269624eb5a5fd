"""The exercise graders accept right answers and reject the usual mistakes with a hint."""

from __future__ import annotations

import pytest

from argnb.dialectic import grounded_extension
from argnb.exercises.checks.roundtable import (
    EXAMPLE_ANALYSIS,
    SITUATIONS,
    check_analysis,
    check_framework,
    check_grounded_map,
    check_may_speak,
    check_situations,
)
from argnb.roundtable.analyzer import analysis_framework
from argnb.roundtable.rules import TurnRules


def right(history, candidate, human="You", every=3):
    names = tuple(dict.fromkeys([*history, candidate, human, "someone else"]))
    return not TurnRules(human, names, every).broken(history, candidate)


def test_turn_rule_check() -> None:
    assert "right" in check_may_speak(right)
    with pytest.raises(AssertionError, match="twice in a row"):
        check_may_speak(lambda h, c, hu="You", e=3: True)
    only_repeat = lambda h, c, hu="You", e=3: not (h and h[-1] == c)  # noqa: E731
    with pytest.raises(AssertionError, match="the human must speak"):
        check_may_speak(only_repeat)
    off_by_one = lambda h, c, hu="You", e=3: right(h, c, hu, e + 1)  # noqa: E731
    with pytest.raises(AssertionError):
        check_may_speak(off_by_one)


def test_situations_check() -> None:
    truth = [set(TurnRules(h, s, e).allowed(hist)) for s, h, e, hist in SITUATIONS]
    assert "right" in check_situations(truth)
    wrong = [set(t) for t in truth]
    wrong[2] |= {"Lena"}
    with pytest.raises(AssertionError, match=r"situation 3.*may not speak"):
        check_situations(wrong)
    with pytest.raises(AssertionError, match="not at the table"):
        check_situations([{"Zoe"}, *truth[1:]])


def test_analysis_check() -> None:
    good_a = ["Phones distract in lessons.", "Students must be reachable in emergencies."]
    good_q = ["Who decides when a task allows phones?", "Does the office pass on messages fast?"]
    assert "right" in check_analysis(good_a, good_q)
    with pytest.raises(AssertionError, match="disputed"):
        check_analysis([*good_a, "Phones should be banned completely."], good_q)
    with pytest.raises(AssertionError, match="reachable in an emergency"):
        check_analysis(good_a[:1], good_q)
    with pytest.raises(AssertionError, match="office passes on messages"):
        check_analysis(good_a, good_q[:1])
    with pytest.raises(AssertionError, match="as questions"):
        check_analysis(good_a, [q.rstrip("?") for q in good_q])
    with pytest.raises(AssertionError, match="between 1 and 5"):
        check_analysis([], good_q)
    with pytest.raises(AssertionError, match="repeated"):
        check_analysis([good_a[0], good_a[0]], good_q)


def test_framework_and_grounded_checks() -> None:
    assert "right" in check_framework(analysis_framework)

    def forgets_rebuttals(a):
        args, atts = analysis_framework(a)
        return [x for x in args if not x.endswith(".r")], [
            t for t in atts if not t[0].endswith(".r")
        ]

    with pytest.raises(AssertionError, match="arguments should be"):
        check_framework(forgets_rebuttals)

    def reversed_attacks(a):
        args, atts = analysis_framework(a)
        return args, [(b, a_) for a_, b in atts]

    with pytest.raises(AssertionError, match="are not attacks"):
        check_framework(reversed_attacks)
    args, atts = analysis_framework(EXAMPLE_ANALYSIS)
    assert "The office passes on messages quickly" in check_grounded_map(
        grounded_extension(args, atts)
    )
    with pytest.raises(AssertionError, match="attacked by accepted"):
        check_grounded_map(set(args))
