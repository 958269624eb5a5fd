"""The turn rules for several humans (argnb.roundtable.floor): every bound holds whatever the
moderator names and however the humans come, go and raise hands, checked by a second,
independent reading of the history."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from argnb.errors import ArgnbError
from argnb.roundtable.floor import ABSENT, EACH, HAND, Floor, GroupRules
from argnb.roundtable.rules import NO_REPEAT

from .floor_audit import audit

D = ("D1", "D2")
HUMANS = ("Ann", "Bea", "Cy", "Dee", "Eve")


def test_the_docstring_case_and_the_names_of_the_rules() -> None:
    r = GroupRules(D)
    f = Floor.replay([("join", "Ann"), ("join", "Bea"), ("turn", "D1"), ("turn", "D2")])
    assert r.due(f) == "Ann"
    assert r.enforce(f, "D2").broken == (NO_REPEAT, "human-every-3")
    gone = Floor.replay([("join", "Ann"), ("join", "Bea"), ("leave", "Bea")])
    assert r.broken(gone, "Bea") == [ABSENT]
    assert GroupRules(D, every=2).broken(Floor.replay([("join", "Ann")]), "Ann") == []


def test_a_raised_hand_is_honoured_within_its_bound() -> None:
    r = GroupRules(D)
    events = [("join", h) for h in ("Ann", "Bea", "Cy")] + [("turn", "D1"), ("turn", "Ann")]
    events += [("hand", "Cy"), ("turn", "D2")]
    f = Floor.replay(events)
    # Cy's hand was raised at turn 2 with K = 3: it must be Cy by turn 4 at the latest
    assert f.deadline["Cy"] == 4
    events += [("turn", "Bea")]
    f = Floor.replay(events)
    assert r.due(f) == "Cy" and HAND in r.broken(f, "D1")


def test_each_human_is_invited_within_b_even_when_the_moderator_prefers_another() -> None:
    r = GroupRules(D)
    events = [("join", "Ann"), ("join", "Bea")]  # B = 6
    broken = set()
    for _ in range(30):  # a moderator who always wants Ann or D1
        f = Floor.replay(events)
        want = "Ann" if "Ann" in r.allowed(f) else "D1"
        ruling = r.enforce(f, want)
        broken |= set(ruling.broken)
        events.append(("turn", ruling.speaker))
    assert audit(events, 3) == [] and EACH in broken
    assert sum(1 for e in events if e == ("turn", "Bea")) >= 30 // 6


def test_bad_tables_get_one_line() -> None:
    with pytest.raises(ArgnbError, match="two deliberators"):
        GroupRules(("D1",))
    with pytest.raises(ArgnbError, match="N must be"):
        GroupRules(D, every=1)


step = st.one_of(
    st.tuples(st.sampled_from(["join", "leave", "hand", "lower"]), st.sampled_from(HUMANS)),
    st.tuples(st.just("choose"), st.sampled_from((*D, *HUMANS, "nobody", None))),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(step, min_size=1, max_size=80), st.integers(min_value=2, max_value=4))
def test_no_bound_is_ever_broken(steps, every) -> None:
    rules = GroupRules(D, every)
    events: list[tuple[str, str]] = []
    for what, name in steps:
        if what != "choose":
            events.append((what, name))
            continue
        floor = Floor.replay(events, every)
        ruling = rules.enforce(floor, name)
        assert ruling.speaker in rules.allowed(floor)
        events.append(("turn", ruling.speaker))
    assert audit(events, every) == []
    assert rules.violations(events) == []
