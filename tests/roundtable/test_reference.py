"""Notebook 05's authored roundtables replay through the real protocol, and a broken one fails.

The session's own code checks the file: the turn rules (and the override they force), the flag
that reaches the moderator, the word limit, the analyzer's schema for this table, the schedule of
analyses and the human's turns. The broken variants show that the check can fail. The second file
is a room of three learners: the room's code checks their moves (a late join, a raised hand, a
timeout, the ballots, the critiques), the turn rules for several humans and the Schulze count.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from argnb.course import asset_dir
from argnb.errors import ArgnbError
from argnb.llm import default_ledger
from argnb.reference import MODEL, ReferenceMismatch, ReferenceSession
from argnb.roundtable import record
from argnb.roundtable.analyzer import grounded
from argnb.roundtable.floor import GroupRules
from argnb.roundtable.payloads import HumanTurn
from argnb.roundtable.reference import load_reference, replay_room, replay_session, room_outcome
from argnb.roundtable.session import load_session
from argnb.roundtable.views import session_html, to_markdown
from argnb.transcript import Transcript

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "assets" / "roundtable" / "reference_session.json"
ROOM = ROOT / "assets" / "roundtable" / "reference_room.json"


def variant(tmp_path, change, file=FILE) -> ReferenceSession:
    data = json.loads(file.read_text(encoding="utf-8"))
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


# -- the room: three learners at one table -------------------------------------------------------
def move(data, role, who, n=0):
    """The ``n``-th authored move of learner ``who`` with ``role``, to change."""
    return [t for t in data["turns"] if t.get("role") == role and t["speaker"] == who][n]


@pytest.fixture(scope="module")
def room():
    return replay_room()


def test_the_reference_room_replays_through_the_room(tmp_path):
    before = len(default_ledger())
    seen = []
    r = replay_room(on_event=lambda e: seen.append(e.kind), autosave=tmp_path / "room.json")
    assert r.speakers == [
        "Ruth", "Jonas", "Dev", "Mira", "Ruth", "Aylin", "Jonas", "Dev", "Mira", "Ruth", "Mira"
    ]  # fmt: skip
    o = room_outcome(r)
    # Aylin sat down after three speaker turns, and is in the moderator's very next prompt
    assert o["joined"] == {"Mira": 0, "Jonas": 0, "Aylin": 3}
    # Jonas's hand, raised after turn 4, overrode the moderator's choice of Dev at turn 7
    (ov,) = r.overrides
    assert (ov.choice, ov.speaker, ov.rules) == ("Dev", "Jonas", ["hand-within-K"])
    assert ov.allowed == ["Jonas"]
    # Mira timed out at turn 9 (the turn counts as hers) and was invited again at turn 11
    human = [t for t in record.speaker_turns(r.transcript) if isinstance(t.payload, HumanTurn)]
    assert [(t.speaker, t.payload.action) for t in human if t.speaker == "Mira"] == [
        ("Mira", "say"),
        ("Mira", "timeout"),
        ("Mira", "say"),
    ]
    assert GroupRules(("Ruth", "Dev")).violations(record.floor_events(r.transcript)) == []
    # each statement is one learner's first choice; S2 beats both others 2 to 1
    out = record.outcome(r.transcript)
    assert sorted(b[0] for b in out.ballots.values()) == ["S1", "S2", "S3"]
    assert out.order == ["S2", "S1", "S3"] and out.winner == "S2" and not out.ties
    assert (out.d["S2"]["S1"], out.d["S2"]["S3"], out.d["S1"]["S3"]) == (2, 2, 2)
    rev = record.revision(r.transcript)
    assert rev.winner == "S2" and rev.critiques == 2 and not rev.error
    assert rev.statement != rev.original and "whole school year" in rev.statement
    assert r.ended.reason == "turns" and r.phase == "ended" and "end" in seen
    assert all(t.model in (MODEL, "") for t in r.transcript.turns)
    assert r.cost.usage.total_tokens == 0 and len(default_ledger()) == before
    assert "written by the argnb course authors" in r.transcript.title
    assert (tmp_path / "room.json").exists()


def test_the_replayed_room_reads_back_and_shows_the_count(room, tmp_path):
    tr = room.transcript
    path = tmp_path / "room.json"
    tr.save(path)
    for again in (Transcript.model_validate_json(tr.model_dump_json()), load_session(path)):
        assert record.outcome(again) == record.outcome(tr)
        assert record.revision(again) == record.revision(tr)
        assert record.seated(again) == ["Mira", "Jonas", "Aylin"]
        assert record.speakers(again) == room.speakers
        assert again.meta["reference"]["file"] == "reference_room.json"
    page = session_html(tr)
    assert "Aylin joined the table" in page and "Jonas raised a hand" in page
    assert "Override" in page and "did not answer in time" in page
    assert "The ranking (Schulze count)" in page and "Aylin: S2 &gt; S1 &gt; S3" in page
    md = to_markdown(tr)
    assert "Group statement (S2, revised after 2 critique(s))" in md
    # the analyzer's map credits each learner with a node their own words hold
    assert {"Mira", "Jonas", "Aylin"} <= set(room.to_map().agents())
    intro = load_reference("room")._repr_html_()
    assert "Written by the argnb course authors, not produced by a model" in intro
    assert asset_dir("roundtable").joinpath("reference_room.json").exists()


def test_each_replayer_refuses_the_other_file():
    with pytest.raises(ArgnbError, match=r"not a roundtable\.room one"):
        replay_room("session")
    with pytest.raises(ArgnbError, match=r"not a roundtable\.session one"):
        replay_session("room")


@pytest.mark.parametrize(
    ("name", "change", "complaint"),
    [
        (
            "Aylin's ballot changed: S1 has a first-place majority and wins",
            lambda d: move(d, "ballot", "Aylin")["answer"].__setitem__(
                "ranking", ["S1", "S2", "S3"]
            ),
            "outcome order: the protocol says ['S1', 'S2', 'S3']",
        ),
        (
            "Jonas's turn after the override given to Mira",
            lambda d: move(d, "human", "Jonas", 1).update(agent="Mira", speaker="Mira"),
            "turn 20 (Mira's human): the room refused it: it is not Mira's turn",
        ),
        (
            "no hand raised: the moderator's choice of Dev stands",
            lambda d: d["turns"].remove(move(d, "seat", "Jonas", 1)),
            "it is not Jonas's turn",
        ),
        (
            "Aylin sits down at the start, not late",
            lambda d: d["turns"].insert(
                2, d["turns"].pop(d["turns"].index(move(d, "seat", "Aylin")))
            ),
            "outcome joined",
        ),
        (
            "Mira answers instead of timing out",
            lambda d: move(d, "human", "Mira", 1).__setitem__("answer", "I am still thinking."),
            "outcome passed",
        ),
        (
            "the moderator names Aylin before she has joined",
            lambda d: nth(d, "moderator", 2)["answer"].__setitem__("next_speaker", "Aylin"),
            "turn 9: the room waits for Mira; the file has Dev's deliberator",
        ),
        (
            "a second ballot from Jonas",
            lambda d: d["turns"].insert(
                d["turns"].index(move(d, "ballot", "Jonas")) + 1, {**move(d, "ballot", "Jonas")}
            ),
            "Jonas has ranked already",
        ),
        (
            "a file that claims another group statement",
            lambda d: d["outcome"].__setitem__("statement", d["setup"]["topic"]),
            "outcome statement",
        ),
    ],
)
def test_a_room_that_breaks_a_rule_does_not_replay(tmp_path, name, change, complaint):
    with pytest.raises(ReferenceMismatch) as err:
        replay_room(variant(tmp_path, change, ROOM))
    assert complaint in str(err.value), name
