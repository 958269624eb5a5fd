"""Rebut / undercut admissibility and defeat, checked in code."""

from __future__ import annotations

import pytest

from argnb.dialectic import Argument, admissible_kinds, check_attack, classify, defeats
from argnb.dialectic.attacks import Attack, well_formed
from argnb.dialectic.novelty import PremiseMemory

BUY_A = Argument.simple(["a is compact", "a is light"], "We should buy a")
OUT_OF_STOCK = Argument.simple(["a is out of stock"], "We should not buy a")
# a rule resting on an assumption only, and a mixed one
HOPE = Argument.simple([], "The shop will open tomorrow", ["there is no evidence of a strike"])
CLEAN = Argument.simple(
    ["cleaning teaches responsibility"],
    "students should clean",
    ["there is no evidence that cleaning is unsafe for students"],
)
UNSAFE = Argument.simple(
    ["cleaning uses strong detergents", "strong detergents can harm children"],
    "cleaning is unsafe for students",
)


def test_admissible_kinds_follow_the_targets_shape():
    assert admissible_kinds(BUY_A) == ["rebut"]
    assert admissible_kinds(HOPE) == ["undercut"]
    assert admissible_kinds(CLEAN) == ["rebut", "undercut"]


def test_rebut_on_a_conclusion_with_strong_premises_is_admissible():
    c = check_attack("rebut", "we should buy A", BUY_A, OUT_OF_STOCK)
    assert c.ok and c.on == "We should buy a"  # resolved to the exact text


def test_rebut_needs_strong_premises_behind_the_conclusion():
    c = check_attack("rebut", "The shop will open tomorrow", HOPE, OUT_OF_STOCK)
    assert not c.ok and "rests on no strong premises" in c.problems[0]


def test_undercut_needs_an_assumption():
    c = check_attack("undercut", "a is compact", BUY_A, OUT_OF_STOCK)
    assert not c.ok and "Ass is empty" in c.problems[0]


def test_undercut_must_name_one_of_the_targets_assumptions():
    ok = check_attack("undercut", "no evidence that cleaning is unsafe", CLEAN, UNSAFE)
    assert ok.ok and ok.on == CLEAN.Ass[0]
    bad = check_attack("undercut", "students like cleaning", CLEAN, UNSAFE)
    assert not bad.ok and "must name one of the opponent's assumptions" in bad.problems[0]


def test_rebut_must_name_a_conclusion_and_must_not_restate_it():
    wrong_target = check_attack("rebut", "the sky is blue", BUY_A, OUT_OF_STOCK)
    assert "must name one of the opponent's conclusions" in wrong_target.problems[0]
    echo = Argument.simple(["a is great"], "we should buy a!")
    assert any("restates" in p for p in check_attack("rebut", "", BUY_A, echo).problems)


def test_yes_without_an_argument_and_unknown_kinds_are_rejected():
    assert "no counter-argument" in check_attack("rebut", "", BUY_A, None).problems[0]
    assert "must be 'rebut' or 'undercut'" in check_attack("none", "", BUY_A, UNSAFE).problems[0]


def test_a_side_may_not_reuse_its_premises():
    mem = PremiseMemory()
    mem.remember("AG2", ["a is out of stock"])
    again = Argument.simple(["A is out of stock!"], "We should not buy a")
    c = check_attack("rebut", "", BUY_A, again, side="AG2", memory=mem)
    assert not c.ok and "repeats your earlier premise" in c.problems[0]
    # the other side may use it
    assert check_attack("rebut", "", BUY_A, again, side="AG1", memory=mem).ok


def test_well_formed_rejects_empty_duplicated_and_circular_rules():
    assert well_formed(BUY_A) == []
    assert "neither premises nor assumptions" in well_formed(Argument.simple([], "x"))[0]
    assert "more than once" in well_formed(Argument.simple(["p", "P."], "q"))[0]
    assert "circular" in well_formed(Argument.simple(["it rains"], "It rains."))[0]


def test_a_later_rule_may_use_an_earlier_consequent():
    chain = Argument.model_validate(
        {
            "rules": [
                {
                    "id": "r1",
                    "antecedent": {"strong": ["a is compact", "a is light"], "weak_negation": []},
                    "consequent": "a is user-friendly",
                },
                {
                    "id": "r2",
                    "antecedent": {
                        "strong": ["a is user-friendly", "a is a camera"],
                        "weak_negation": [],
                    },
                    "consequent": "we should buy a",
                },
            ]
        }
    )
    assert well_formed(chain) == []
    assert chain.premises() == ["a is compact", "a is light", "a is a camera"]
    assert chain.Conc == ["a is user-friendly", "we should buy a"]
    # the intermediate conclusion can be rebutted too
    assert (
        check_attack("rebut", "a is user-friendly", chain, OUT_OF_STOCK).on == "a is user-friendly"
    )


def test_prakken_sartor_defeat():
    # an undercut always defeats; a rebut defeats unless the target undercuts the attacker
    assert defeats([Attack("B", "A", "undercut")]) == {("B", "A")}
    assert defeats([Attack("B", "A", "rebut")]) == {("B", "A")}
    assert defeats([Attack("B", "A", "rebut"), Attack("A", "B", "undercut")]) == {("A", "B")}
    assert defeats([Attack("B", "A", "rebut"), Attack("A", "B", "rebut")]) == {
        ("A", "B"),
        ("B", "A"),
    }


@pytest.mark.parametrize(
    ("target", "attacker", "on", "expected"),
    [
        (BUY_A, OUT_OF_STOCK, "We should buy a", "rebut"),
        (CLEAN, UNSAFE, "there is no evidence that cleaning is unsafe for students", "undercut"),
        (HOPE, OUT_OF_STOCK, "The shop will open tomorrow", "neither"),  # no strong premises
        (BUY_A, OUT_OF_STOCK, "a is compact", "neither"),  # a premise is neither Conc nor Ass
    ],
)
def test_classify(target, attacker, on, expected):
    assert classify(target, attacker, on) == expected


def test_single_words_are_not_statements():
    problems = well_formed(Argument.simple(["rules", "a is light"], "4"))
    assert [p for p in problems if "is not a statement" in p] == [
        "rule r1: 'rules' is not a statement; write a full sentence",
        "rule r1: '4' is not a statement; write a full sentence",
    ]
