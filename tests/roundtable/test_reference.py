"""Notebook 05's authored roundtable replays through the real session, and a broken one fails.

The session's own code checks the file: the turn rules (and the override they force), the flag
that reaches the moderator, the word limit, the analyzer's schema for this table, the schedule of
analyses and the human's turns. The broken variants show that the check can fail.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from argnb.course import asset_dir
from argnb.llm import default_ledger
from argnb.reference import MODEL, ReferenceMismatch, ReferenceSession
from argnb.roundtable.analyzer import grounded
from argnb.roundtable.reference import load_reference, replay_session
from argnb.roundtable.views import session_html

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "assets" / "roundtable" / "reference_session.json"


def variant(tmp_path, change) -> ReferenceSession:
    data = json.loads(FILE.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "reference_broken.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return ReferenceSession.from_path(path)


def nth(data, role, n=0, speaker=None):
    """The ``n``-th authored turn with ``role`` (and ``speaker``), to change."""
    found = [
        t
        for t in data["turns"]
        if t.get("role") == role and (speaker is None or t["speaker"] == speaker)
    ]
    return found[n]


def test_the_reference_session_replays_through_the_session(tmp_path):
    before = len(default_ledger())
    seen = []
    s = replay_session(on_event=lambda e: seen.append(e.kind), autosave=tmp_path / "ref.json")
    assert s.speakers == ["Ines", "Kofi", "Sam", "Kofi", "Ines", "Sam", "Kofi", "Ines", "Sam"]
    # the moderator named Kofi right after Kofi, while Sam was due: the rules overrode it
    (o,) = s.overrides
    assert (o.choice, o.speaker) == ("Kofi", "Sam")
    assert set(o.rules) == {"no-repeat", "human-every-3"}
    # the flag on Kofi's turn reached the moderator, who answered it without naming a fallacy
    decisions = [t.payload for t in s.transcript.turns if t.role == "moderator"]
    flagged = decisions[2]
    assert flagged.flag and flagged.intent == "flag_reasoning"
    assert "one student" in flagged.message and "fallac" not in flagged.message.lower()
    # three analyses, after turns 3, 6, 9, with a growing agreement list
    assert [(a.upto, len(a.agreements)) for a in s.analyses] == [(3, 1), (6, 2), (9, 3)]
    assert all(x in s.analyses[2].agreements for x in s.analyses[1].agreements)
    # in the last map the ban has an unanswered objection: it does not stand
    last = s.analyses[-1]
    assert last.arguments[2].claim.startswith("Ban") and "A3" not in grounded(last)
    assert s.ended.reason == "turns" and "end" in seen
    assert all(t.model in (MODEL, "") for t in s.transcript.turns)
    assert s.cost.usage.total_tokens == 0 and len(default_ledger()) == before
    assert "written by the argnb course authors" in s.transcript.title
    assert (tmp_path / "ref.json").exists()


def test_the_view_escapes_and_labels_it():
    s = replay_session()
    page = session_html(s.transcript)
    assert "Override" in page and "Sam" in page
    assert "⚠ the fallacy check flags Kofi&#x27;s contribution" in page
    intro = load_reference()._repr_html_()
    assert "Written by the argnb course authors, not produced by a model" in intro
    hostile = load_reference().model_copy(update={"about": "<img src=x onerror=alert(1)>"})
    assert "<img" not in hostile._repr_html_()


def test_the_reference_ships_with_the_course_assets():
    assert asset_dir("roundtable").joinpath("reference_session.json").exists()


@pytest.mark.parametrize(
    ("name", "change", "complaint"),
    [
        (
            "a moderator who names Sam: no override happens",
            lambda d: nth(d, "moderator", 2)["answer"].__setitem__("next_speaker", "Sam"),
            "outcome overrides",
        ),
        (
            "a contribution over the 80-word limit",
            lambda d: nth(d, "deliberator", 0).__setitem__(
                "answer", " ".join(f"Point {i} is about homework." for i in range(25))
            ),
            "asked Ines for answer",
        ),
        (
            "an analysis that credits someone who is not at the table",
            lambda d: nth(d, "analysis", 0)["answer"]["argument_map"][0].__setitem__("by", "Zoe"),
            "asked Analyzer for answer",
        ),
        (
            "the fallacy check does not flag Kofi: the moderator cannot have heard of it",
            lambda d: nth(d, "fallacy check", 1)["answer"].__setitem__("label", 0),
            'was not shown "Note: a quick automatic check suggests that Kofi',
        ),
        (
            "a human turn the session never asks for",
            lambda d: d["turns"].insert(-1, {**nth(d, "human", 2)}),
            "never given the floor",
        ),
        (
            "an agreement list that stops growing",
            lambda d: d["outcome"].__setitem__("agreements", [1, 2, 2]),
            "outcome agreements",
        ),
    ],
)
def test_a_reference_session_that_breaks_a_rule_does_not_replay(tmp_path, name, change, complaint):
    with pytest.raises(ReferenceMismatch) as err:
        replay_session(variant(tmp_path, change))
    assert complaint in str(err.value), name
