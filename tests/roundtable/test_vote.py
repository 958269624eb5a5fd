"""The Schulze count (argnb.roundtable.vote) against worked examples of Schulze's method, and
the properties every count must have."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from argnb.errors import ArgnbError
from argnb.roundtable.vote import elect, schulze


def ballots(spec: str) -> list[list[str]]:
    """``"5 ACBED, 8 BEDAC"`` as a list of ballots."""
    out = []
    for part in spec.split(","):
        n, order = part.split()
        out += [list(order)] * int(n)
    return out


#: the 45-voter, 5-candidate example of Schulze's papers (also the Wikipedia article's)
EX45 = ballots("5 ACBED, 5 ADECB, 8 BEDAC, 3 CABED, 7 CAEBD, 2 CBADE, 7 DCEBA, 8 EBADC")


def test_the_45_voter_example_matrices_and_order() -> None:
    e = elect(EX45)
    d = {x: [e.d[x][y] for y in "ABCDE" if y != x] for x in "ABCDE"}
    assert d == {
        "A": [20, 26, 30, 22],
        "B": [25, 16, 33, 18],
        "C": [19, 29, 17, 24],
        "D": [15, 12, 28, 14],
        "E": [23, 27, 21, 31],
    }
    p = {x: [e.p[x][y] for y in "ABCDE" if y != x] for x in "ABCDE"}
    assert p == {
        "A": [28, 28, 30, 24],
        "B": [25, 28, 33, 24],
        "C": [25, 29, 29, 24],
        "D": [25, 28, 28, 24],
        "E": [25, 28, 28, 31],
    }
    assert e.order == tuple("EACBD") and e.winner == "E" and e.ties == ()


def test_a_condorcet_winner_wins_and_a_cycle_is_broken_by_the_strongest_path() -> None:
    # B beats both head to head, though A has the most first places
    assert schulze(ballots("4 ABC, 3 BCA, 2 CBA"))[0] == "B"
    # a 3-cycle A > B (6:3), B > C (7:2), C > A (5:4): the weakest defeat, C over A, gives way
    cyc = ballots("4 ABC, 3 BCA, 2 CAB")
    e = elect(cyc)
    assert e.d["A"]["B"] == 6 and e.d["B"]["C"] == 7 and e.d["C"]["A"] == 5
    assert e.order == ("A", "B", "C") and e.p["A"]["C"] == 6 > e.p["C"]["A"] == 5


def test_a_full_tie_is_reported_and_broken_by_the_candidates_order() -> None:
    e = elect([["A", "B"], ["B", "A"]], candidates=["B", "A"])
    assert e.order == ("B", "A") and e.ties == (("B", "A"),)


def test_unranked_candidates_rank_below_the_ranked_ones() -> None:
    e = elect([["C"], ["C", "A"]], candidates=["A", "B", "C"])
    assert e.order == ("C", "A", "B") and e.d["A"]["B"] == 1 and e.d["B"]["A"] == 0


@pytest.mark.parametrize(
    "bad, why",
    [
        ([], "no ballots"),
        ([["A", "A"]], "twice"),
        ([["A", "Z"]], "not a candidate"),
    ],
)
def test_bad_ballots_get_one_line(bad, why) -> None:
    with pytest.raises(ArgnbError, match=why):
        elect(bad, candidates=["A", "B"])


rankings = st.lists(st.permutations(["A", "B", "C", "D"]).map(list), min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(rankings)
def test_properties_of_every_count(bs) -> None:
    e = elect(bs, candidates=["A", "B", "C", "D"])
    assert sorted(e.order) == ["A", "B", "C", "D"]
    # the order never puts a candidate above one that beats it
    for i, x in enumerate(e.order):
        for y in e.order[i + 1 :]:
            assert not e.beats(y, x)
    # a Condorcet winner is elected
    for x in "ABCD":
        if all(e.d[x][y] > e.d[y][x] for y in "ABCD" if y != x):
            assert e.winner == x
    # unanimity: a candidate every ballot puts above another ends above it
    for x in "ABCD":
        for y in "ABCD":
            if x != y and all(b.index(x) < b.index(y) for b in bs):
                assert e.order.index(x) < e.order.index(y)
