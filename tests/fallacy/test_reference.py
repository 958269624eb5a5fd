"""The authored reference deliberation replays through the real protocol, and a broken one fails.

The shipped file is checked by the protocol itself (speaking order, schemas, stopping rule, what
each reviewer was shown); the broken variants show that the check can fail.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from argnb.course import asset_dir
from argnb.debate.reference import replay_debate, replay_turn
from argnb.fallacy.reference import load_reference, replay_reference
from argnb.fallacy.views import render_rounds
from argnb.llm import default_ledger
from argnb.reference import MODEL, ReferenceMismatch, ReferenceSession
from argnb.roundtable.reference import replay_room, replay_session

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "assets" / "fallacy" / "reference_deliberation.json"


def variant(tmp_path, change) -> ReferenceSession:
    data = json.loads(FILE.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "reference_broken.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return ReferenceSession.from_path(path)


def test_the_shipped_reference_replays_through_the_protocol():
    before = len(default_ledger())
    seen = []
    r = replay_reference(on_turn=lambda t: seen.append((t.round, t.speaker)))
    assert (r.label, r.resolution, r.rounds) == (0, "consensus", 2)
    assert seen == [(1, "Ada"), (1, "Bo"), (2, "Bo"), (2, "Ada")], "round 2 reverses the order"
    votes = [[(v.agent, v.vote) for v in rnd] for rnd in r.votes]
    assert votes == [[("Ada", 1), ("Bo", 0)], [("Bo", 0), ("Ada", 0)]]
    # one agent changes its vote, and says why in the turn where it does
    ada_last = r.turns[-1]
    assert ada_last.speaker == "Ada" and "change my vote" in ada_last.text
    assert all(t.model == MODEL and t.usage.total_tokens == 0 for t in r.turns)
    assert r.transcript.meta["reference"]["file"] == "reference_deliberation.json"
    assert "written by the argnb course authors" in r.transcript.title
    assert len(default_ledger()) == before, "a replay is not a model call in the usage table"


def test_the_views_say_it_was_replayed_and_escape_the_text():
    r = replay_reference()
    view = render_rounds(r)
    assert "authored turns replayed, no model called" in view and "2 rounds" in view
    assert "model calls" not in view
    page = r.transcript._repr_html_()
    assert "Oak Street" in page and "reference" in page
    assert "4 authored answers replayed, no model called" in page and "model calls" not in page
    intro = load_reference()._repr_html_()
    assert "Written by the argnb course authors, not produced by a model" in intro
    assert "What to look for" in intro
    hostile = load_reference().model_copy(update={"title": "<script>x</script>"})
    assert "<script>" not in hostile._repr_html_()


def test_the_reference_ships_with_the_course_assets():
    assert asset_dir("fallacy").joinpath("reference_deliberation.json").exists()


@pytest.mark.parametrize(
    ("name", "change", "complaint"),
    [
        (
            "round 2 in the wrong order",
            lambda d: d["turns"].__setitem__(slice(2, 4), d["turns"][3:1:-1]),
            "gave the turn to",
        ),
        (
            "an opening 'counter' (only propose and argue open a discussion)",
            lambda d: d["turns"][0]["answer"].__setitem__("action", "counter"),
            "turn 1 (Ada)",
        ),
        (
            "a contribution past the schema's 400 characters",
            lambda d: d["turns"][1]["answer"].__setitem__("reasoning", "word " * 100),
            "asked Bo for answer 3, the file has 2",
        ),
        (
            "Ada keeps her vote: no consensus, the protocol wants a third round",
            lambda d: d["turns"][3]["answer"].__setitem__("vote", 1),
            "asked Ada for answer 3, the file has 2",  # round 3 opens with Ada again
        ),
        (
            "a claimed outcome the rules do not give",
            lambda d: d["outcome"].__setitem__("rounds", 1),
            "outcome rounds",
        ),
        (
            "an extra answer the protocol never asks for",
            lambda d: d["turns"].append({**d["turns"][3], "round": 3}),
            "never asked for",
        ),
        (
            "a reviewer who claims to have read what nobody said",
            lambda d: d["turns"][3]["hears"].append("a sentence nobody wrote"),
            "was not shown",
        ),
    ],
)
def test_a_reference_that_breaks_a_rule_does_not_replay(tmp_path, name, change, complaint):
    with pytest.raises(ReferenceMismatch) as err:
        replay_reference(variant(tmp_path, change))
    assert complaint in str(err.value), name


def test_unknown_fields_and_missing_files_are_clear_errors(tmp_path):
    from argnb.errors import ArgnbError

    with pytest.raises(ArgnbError):
        variant(tmp_path, lambda d: d.__setitem__("speakers", []))
    with pytest.raises(ArgnbError, match="no reference session"):
        load_reference("nothing")


#: every protocol with shipped reference sessions, and the function that replays one
REPLAYERS = {
    "fallacy.deliberation": replay_reference,
    "debate.turn": replay_turn,
    "debate.simulate": replay_debate,
    "roundtable.session": replay_session,
    "roundtable.room": replay_room,
}


@pytest.mark.parametrize(
    "path", sorted((ROOT / "assets").glob("*/reference_*.json")), ids=lambda p: p.name
)
def test_every_shipped_reference_session_replays(path):
    """A new reference file (04, 05, ...) fails here until its protocol's replayer is listed."""
    session = ReferenceSession.from_path(path)
    assert session.protocol in REPLAYERS, f"{path.name}: add a replayer for {session.protocol}"
    assert session.written_by and session.look_for, "say who wrote it and what to look for"
    REPLAYERS[session.protocol](session)


def test_a_session_for_another_protocol_is_refused_with_a_hint():
    from argnb.errors import ArgnbError

    fallacy = load_reference()
    turn = json.loads((asset_dir("debate") / "reference_turn.json").read_text(encoding="utf-8"))
    for replay, session, owner in (
        (replay_turn, fallacy, "fallacy"),
        (replay_debate, fallacy, "fallacy"),
        (replay_session, fallacy, "fallacy"),
        (replay_reference, ReferenceSession.model_validate(turn), "debate"),
    ):
        with pytest.raises(ArgnbError, match=r"session, not a \w+\.\w+ one") as err:
            replay(session)
        assert f"argnb.{owner}.reference" in (err.value.hint or "")


@pytest.mark.parametrize(
    "path", sorted((ROOT / "assets").glob("*/reference_*.json")), ids=lambda p: p.name
)
def test_a_session_file_without_setup_is_refused_in_words(tmp_path, path):
    """Every replayer names the setup keys it reads, instead of a ``KeyError`` from inside the
    protocol; nothing is replayed."""
    from argnb.errors import ArgnbError

    data = json.loads(path.read_text(encoding="utf-8"))
    del data["setup"]
    broken = tmp_path / path.name
    broken.write_text(json.dumps(data), encoding="utf-8")
    session = ReferenceSession.from_path(broken)
    with pytest.raises(ArgnbError, match=f"{path.name}: its setup has no ") as err:
        REPLAYERS[session.protocol](session)
    assert not isinstance(err.value, ReferenceMismatch)
    assert '"setup": {' in (err.value.hint or "")
