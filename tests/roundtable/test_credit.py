"""Who said what: an analysis map credits each node to the seat whose turn it came from, or to
the analyzer, never to a seat (the learner least of all) that did not say it (issue 29, item 5:
05's demo map credited the analyzer's nodes to "You")."""

from __future__ import annotations

from argnb.roundtable import record
from argnb.roundtable.analyzer import ANALYZER, TRACE, _stems, analysis_map, trace
from argnb.roundtable.payloads import Analysis

#: the learner's one line in 05's demo, and what the tiny analyzer credited to them
HUMAN = "I use AI to get maths explained, but I worry that some friends just copy the answers."
SAID = [
    ("Deliberator 1", "AI tools can help students learn faster when they are stuck on homework."),
    ("You", HUMAN),
    ("Deliberator 2", "Teachers should set clear rules so that homework stays the student's work."),
]
DEMO = Analysis(
    upto=3,
    arguments=[
        {
            "claim": "Students should be allowed to use AI tools for homework",
            "by": "You",
            "premises": ["It is a good way to see the world"],
            "counterarguments": [
                {
                    "objection": "Teachers should set clear rules",
                    "by": "You",
                    "rebuttal": "Friends just copy the answers",
                    "rebuttal_by": "Deliberator 1",
                }
            ],
        }
    ],
)


def agents(m) -> dict[str, str]:
    return {n: m.node(n).get("agent") for n in m.nodes() if m.node(n).get("text")}


def test_a_node_nobody_said_goes_to_the_analyzer_not_the_learner() -> None:
    assert trace("It is a good way to see the world", "You", SAID) == ANALYZER
    m = analysis_map(DEMO, "demo", SAID)
    got = agents(m)
    assert got["A1.p1"] == ANALYZER  # the model's own words
    assert got["A1.x1"] == "Deliberator 2"  # the objection is Deliberator 2's line
    assert got["A1.x1.r"] == "You"  # this one the learner did say
    assert ANALYZER in m.agents()  # the legend says so


def test_without_the_turns_the_analyzers_credit_is_drawn_as_it_came() -> None:
    assert agents(analysis_map(DEMO, "demo"))["A1.p1"] == "You"


def test_a_seat_that_never_spoke_is_never_credited() -> None:
    assert trace("Teachers should set clear rules", "Deliberator 3", SAID) == "Deliberator 2"
    assert trace("anything at all", "Deliberator 1", []) == ANALYZER


def test_endings_do_not_hide_a_trace() -> None:
    assert _stems("copying copied copies") == _stems("copy") == {"copi"}


def test_every_credited_node_of_the_reference_holds_its_seats_words() -> None:
    """The authored reference keeps its credits where the seat's words hold the node; every
    node's seat (the human's above all) spoke those words up to the analysis."""
    from argnb.roundtable.reference import replay_session

    tr = replay_session().transcript
    for turn in record.analyses(tr):
        a = turn.payload
        spoken = record.spoken(tr, a.upto)
        seats: dict[str, set[str]] = {}
        for who, text in spoken:
            seats.setdefault(who, set()).update(_stems(text))
        m = analysis_map(a, tr.title, spoken)
        for node, who in agents(m).items():
            if who == ANALYZER:
                continue
            words = _stems(m.node(node)["text"])
            assert len(words & seats[who]) / len(words) >= TRACE, (node, who)
        assert "Sam" in m.agents() or a.upto < 3


def test_a_scripted_session_never_credits_the_learner_with_words_not_theirs(make_session) -> None:
    s = make_session(turns=3, human="Ann")
    s.run(["I would keep phones in bags."])
    m = s.to_map()
    assert "Ann" not in m.agents(), m.agents()


def test_the_analyzers_name_is_whole_in_the_pictures_legend() -> None:
    from argnb.maps.picture import wrapped

    assert wrapped(ANALYZER, 18, 1) == ANALYZER  # the legend wraps agent names to 18 characters
