"""Notebook 04's authored rdebater turn replays through the real pipeline, and a broken one fails.

The shipped file is checked by the pipeline itself (predicates kept only when well-formed, flaws
only when they name them, retrieval over the shipped memory and its scheme priors, the word
budget, the judge's feedback rule, the revision bound); the broken variants show the check can fail.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from argnb.course import asset_dir
from argnb.debate.mapping import debate_map
from argnb.debate.reference import load_reference, replay_debate, replay_turn
from argnb.debate.views import debate_html, utterance_html
from argnb.llm import default_ledger
from argnb.reference import MODEL, ReferenceMismatch, ReferenceSession

ROOT = Path(__file__).resolve().parents[2]
TURN = ROOT / "assets" / "debate" / "reference_turn.json"


def variant(tmp_path, change, path=TURN) -> ReferenceSession:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    out = tmp_path / "reference_broken.json"
    out.write_text(json.dumps(data), encoding="utf-8")
    return ReferenceSession.from_path(out)


def answer(data, role, n=0):
    """The ``n``-th authored turn with ``role`` (its dict, to change)."""
    return [t for t in data["turns"] if t.get("role") == role][n]


def test_the_reference_turn_replays_through_the_pipeline():
    before = len(default_ledger())
    seen = []
    u = replay_turn(on_event=lambda e: seen.append((e.kind, e.speaker)))
    assert (u.accepted, u.revisions, u.bound_hit) == (True, 1, False)
    # predicates from the opponent's turn, a flaw that names them, aimed at C1
    assert "Either(KeepCars, LoseHighStreet)" in u.logic.predicates
    assert u.logic.flaws[0].kind == "false dichotomy"
    assert u.logic.targets == ["C1"]
    # retrieval ran over the shipped memory and its labels gave one scheme above the threshold
    assert u.retrieval.hits[0].id == "example/car-free/0.0"
    assert all(h.stance == "pro" for h in u.retrieval.hits)
    assert u.retrieval.kept_schemes == ["example"] == u.info.schemes
    # the judge rejected the draft for a stated reason, and the revision was accepted
    first, second = u.verdicts
    assert not first.payload.accept and not first.payload.relevant
    assert "shops will die" in first.payload.feedback
    assert second.payload.accept
    assert u.drafts[0].text != u.text and "third" in u.text
    assert u.info.words <= 80
    assert ("start", "Pro") in seen and ("turn", "judgement agent") in seen
    assert all(t.model in (MODEL, "") for t in u.turns)
    assert u.cost.usage.total_tokens == 0 and len(default_ledger()) == before


def test_the_view_escapes_and_shows_every_step():
    u = replay_turn()
    page = utterance_html(u)
    assert "false dichotomy" in page and "rejected" in page and "Oslo" in page
    intro = load_reference()._repr_html_()
    assert "Written by the argnb course authors, not produced by a model" in intro
    assert "Cities should ban private cars" in intro


def test_the_reference_ships_with_the_course_assets():
    assert asset_dir("debate").joinpath("reference_turn.json").exists()


@pytest.mark.parametrize(
    ("name", "change", "complaint"),
    [
        (
            "a flaw that names a predicate nobody listed",
            lambda d: answer(d, "flaws")["answer"]["flaws"][0].__setitem__("claims", ["Made(Up)"]),
            "asked Pro's team for answer",  # the rule check asks the logic agent once more
        ),
        (
            "a draft over the 80-word budget",
            lambda d: answer(d, "draft").__setitem__(
                "answer", " ".join(f"Reason {i}: cars harm children." for i in range(20))
            ),
            "asked Pro for answer",
        ),
        (
            "a rejection without saying what to change",
            lambda d: answer(d, "verdict")["answer"].__setitem__("feedback", ""),
            "recorded as 'rejected verdict'",  # the rule asked again and the answer failed
        ),
        (
            "a judge who accepts the first draft: the revision is never asked for",
            lambda d: answer(d, "verdict")["answer"].update(relevant=True, follows_schemes=True),
            "never asked for",
        ),
        (
            "a planned scheme the memory's labels do not give",
            lambda d: d["outcome"].__setitem__("planned_schemes", ["values"]),
            "outcome planned_schemes",
        ),
        (
            "a draft that claims a passage retrieval did not find",
            lambda d: answer(d, "draft")["hears"].append("traffic evaporation"),
            "was not shown",
        ),
    ],
)
def test_a_reference_turn_that_breaks_a_rule_does_not_replay(tmp_path, name, change, complaint):
    with pytest.raises(ReferenceMismatch) as err:
        replay_turn(variant(tmp_path, change))
    assert complaint in str(err.value), name


DEBATE = ROOT / "assets" / "debate" / "reference_debate.json"


def test_the_reference_debate_replays_through_the_simulation():
    before = len(default_ledger())
    tr = replay_debate()
    said = [(t.speaker, t.payload.concluding) for t in tr.turns if t.role == "utterance"]
    assert said == [("Pro", False), ("Con", False), ("Pro", True), ("Con", True)]
    assert tr.outcome["ended"] == "turn limit" and tr.outcome["stance_failures"] == []
    # the logic agent translates each opponent turn once: con's second analysis reads P2 only
    con_predicates = [t for t in tr.turns if t.role == "predicates" and t.round == 3]
    assert len(con_predicates) == 1 and "Exceptions" in con_predicates[0].text
    # retrieval ran over the shipped memory, never the debated motion (it is not in the memory)
    records = [r for t in tr.turns if t.role == "retrieval" for r in t.payload.records]
    assert records and all(r["id"].startswith("example/") for r in records)
    m = debate_map(tr)
    edges = {(u, v): d["label"] for u, v, d in m.edges("rebut")}
    assert edges[("C1", "P1")] == "causal leap, overgeneralization"
    assert {n: m.node(n)["status"] for n in ("P1", "C1", "P2", "C2")} == {
        "P1": "OUT",
        "C1": "IN",
        "P2": "OUT",
        "C2": "IN",
    }
    assert "written by the argnb course authors" in tr.title
    assert tr.cost.usage.total_tokens == 0 and len(default_ledger()) == before
    page = debate_html(tr)
    assert "holds its side" in page and "authored answers replayed, no model called" in page


@pytest.mark.parametrize(
    ("name", "change", "complaint"),
    [
        (
            "a closing turn that fails the stance predicate",
            lambda d: [t for t in d["turns"] if t.get("role") == "stance check"][3][
                "answer"
            ].update(supports_motion=True),
            "outcome stance_failures",
        ),
        (
            "a map the flaws do not give",
            lambda d: d["outcome"].__setitem__("standing", ["P1", "C2"]),
            "outcome standing",
        ),
        (
            "P1 translated twice (the logic agent remembers it)",
            lambda d: d["turns"].insert(
                19, {**next(t for t in d["turns"] if t.get("role") == "predicates"), "round": 3}
            ),
            "the protocol recorded 25 turns, the file has 26",
        ),
    ],
)
def test_a_reference_debate_that_breaks_a_rule_does_not_replay(tmp_path, name, change, complaint):
    with pytest.raises(ReferenceMismatch) as err:
        replay_debate(variant(tmp_path, change, DEBATE))
    assert complaint in str(err.value), name
