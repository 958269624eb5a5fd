"""The turn rules hold whatever the moderator proposes: property tests over arbitrary choices,
table sizes, windows and session lengths -- on the rules alone and through whole sessions."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from argnb.errors import ArgnbError
from argnb.roundtable.rules import NO_ANSWER, NO_REPEAT, UNKNOWN, TurnRules, human_rule
from argnb.roundtable.session import Session
from argnb.roundtable.testing import table_backend


def assert_legal(history: list[str], human: str, every: int) -> None:
    """The two rules, stated independently of the implementation."""
    for a, b in itertools.pairwise(history):
        assert a != b, f"{a} spoke twice in a row: {history}"
    for i in range(len(history) - every + 1):
        window = history[i : i + every]
        assert human in window, f"no human turn in {window} (turns {i + 1}-{i + every})"


@st.composite
def tables(draw):
    n = draw(st.integers(1, 4))
    deliberators = [f"D{i}" for i in range(1, n + 1)]
    every = draw(st.integers(2, 5))
    return TurnRules("Human", (*deliberators, "Human"), every)


# anything a moderator could answer: a participant, a stranger, garbage, nothing
choices = st.one_of(
    st.sampled_from(["D1", "D2", "D3", "D4", "Human"]),
    st.text(max_size=12),
    st.none(),
)


@settings(max_examples=400, deadline=None)
@given(rules=tables(), picks=st.lists(choices, min_size=0, max_size=80))
def test_enforced_sequence_always_obeys_both_rules(rules: TurnRules, picks: list) -> None:
    history: list[str] = []
    for choice in picks:
        allowed = rules.allowed(history)
        assert allowed, "the rules must always leave someone who may speak"
        ruling = rules.enforce(history, choice)
        assert ruling.speaker in allowed
        if choice in allowed:
            assert ruling.speaker == choice and not ruling.overridden
        else:
            assert ruling.overridden and ruling.broken
            if rules.human_due(history):
                assert ruling.speaker == rules.human
        history.append(ruling.speaker)
    assert_legal(history, rules.human, rules.every)
    assert rules.violations(history) == []


@settings(max_examples=200, deadline=None)
@given(rules=tables(), history=st.lists(st.sampled_from(["D1", "D2", "Human"]), max_size=12))
def test_violations_agree_with_the_plain_statement(rules: TurnRules, history: list[str]) -> None:
    history = [h for h in history if h in rules.participants]
    try:
        assert_legal(history, rules.human, rules.every)
        legal = True
    except AssertionError:
        legal = False
    assert (rules.violations(history) == []) == legal


def test_the_rule_names_say_what_fired() -> None:
    r = TurnRules("Ann", ("D1", "D2", "Ann"))
    assert r.broken(["D1"], "D1") == [NO_REPEAT]
    assert r.broken(["D1", "D2"], "D1") == [human_rule(3)]
    assert r.broken(["D1", "D2"], "D2") == [NO_REPEAT, human_rule(3)]
    assert r.broken([], "Zed") == [UNKNOWN]
    assert r.broken([], None) == [NO_ANSWER]
    assert r.broken(["Ann"], "Ann") == [NO_REPEAT]


def test_override_gives_the_floor_to_who_waited_longest() -> None:
    r = TurnRules("Ann", ("D1", "D2", "D3", "Ann"), every=4)
    # D1 spoke last; D2 and D3 have never spoken: D2 (seating order) waited longest
    assert r.enforce(["Ann", "D1"], "D1").speaker == "D2"
    # everyone has spoken: of those allowed after D3 (D1, D2, Ann), D1 spoke longest ago
    assert r.enforce(["D1", "D2", "Ann", "D3"], "D3").speaker == "D1"


@pytest.mark.parametrize(
    "human, names, every",
    [("Ann", ("D1",), 3), ("Ann", ("Ann", "D1"), 1), ("Ann", ("D1", "D1", "Ann"), 3)],
)
def test_bad_tables_are_refused(human, names, every) -> None:
    with pytest.raises(ArgnbError):
        TurnRules(human, names, every)


# -- whole sessions: the moderator answers arbitrarily, the record must still be legal --------
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    data=st.data(),
    n=st.integers(1, 3),
    every=st.integers(2, 4),
    turns=st.integers(1, 14),
)
def test_sessions_obey_the_rules_for_any_moderator(data, n, every, turns) -> None:
    proposals: list[str] = []

    def choose(req) -> str:
        names = req.schema["properties"]["next_speaker"]["enum"]
        pick = data.draw(st.sampled_from(names), label="moderator's choice")
        proposals.append(pick)
        return pick

    s = Session(
        "Any topic at all",
        moderator=table_backend(choose),
        deliberators=[table_backend(words=5) for _ in range(n)],
        human="Human",
        turns=turns,
        human_every=every,
        analyze_every=0,
    )
    s.run(data.draw(st.lists(st.sampled_from(["yes", "/pass", "no"]), max_size=turns)))
    assert len(s.speakers) == turns
    assert_legal(s.speakers, "Human", every)
    # every refused proposal is in the record, with the rule(s) it broke, and nothing else is
    decisions = [t.payload for t in s.transcript.turns if t.payload.kind == "roundtable.decision"]
    assert [d.choice for d in decisions] == proposals
    refused = [d for d in decisions if d.choice != d.speaker]
    assert len(s.overrides) == len(refused)
    for o, d in zip(s.overrides, refused, strict=True):
        assert (o.choice, o.speaker, o.step) == (d.choice, d.speaker, d.step)
        assert set(o.rules) <= {NO_REPEAT, human_rule(every)} and o.rules
    assert s.speakers == [d.speaker for d in decisions]
