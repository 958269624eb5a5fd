from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from argnb.debate.corpora import (
    build,
    example_memory,
    from_transcript,
    gold_annotations,
    normalize_stance,
    records,
    split_units,
)
from argnb.debate.memory import Store
from argnb.debate.payloads import Utterance
from argnb.errors import ArgnbError
from argnb.transcript import Transcript, Turn

LONG = " ".join(f"Sentence number {i} makes a point about the motion." for i in range(30))
ROWS = [
    {
        "debate_id": "d1",
        "topic": "Motion A",
        "turn": 0,
        "stance": "moderator",
        "speaker": "M",
        "text": "Welcome everyone to tonight's debate on the motion.",
    },
    {
        "debate_id": "d1",
        "topic": "Motion A",
        "turn": 1,
        "stance": "pro",
        "speaker": "P",
        "text": LONG,
    },
    {
        "debate_id": "d1",
        "topic": "Motion A",
        "turn": 2,
        "stance": "con",
        "speaker": "C",
        "text": "Thank you.",
    },
    {
        "debate_id": "d1",
        "topic": "Motion A",
        "turn": 3,
        "stance": "other",
        "speaker": "Q",
        "text": "A question from the audience about something quite long indeed here now.",
    },
    {
        "debate_id": "d2",
        "topic": "Motion B",
        "turn": 0,
        "stance": "con",
        "speaker": "C",
        "text": "The policy costs more than it saves, because enforcement needs new staff and systems.",
    },
]


@pytest.fixture
def iq2_file(tmp_path):
    p = tmp_path / "items.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    return p


def test_builder_drops_non_debaters_splits_long_turns_and_drops_short_units(iq2_file):
    s = Store()
    rep = build(s, "iq2", iq2_file, max_words=100, min_words=5)
    recs = s.records()
    assert {r.stance for r in recs} == {"pro", "con"}
    long_units = [r for r in recs if r.debate_id == "d1"]
    assert len(long_units) == 3  # 270 words -> 3 units of 90
    assert all(len(r.text.split()) <= 100 for r in recs)
    assert " ".join(r.text for r in long_units).split() == LONG.split()
    assert rep.skipped == {
        "moderator-stance turns": 1,
        "other-stance turns": 1,
        "units under min_words": 1,
    }
    assert rep.debates == 2 and rep.added == 4
    again = build(s, "iq2", iq2_file, max_words=100, min_words=5)
    assert (again.added, again.existing) == (0, 4)


def test_one_debate_can_be_added_alone(iq2_file):
    s = Store()
    build(s, "iq2", iq2_file, debate="d2")
    assert [r.debate_id for r in s.records()] == ["d2"]


def test_any_csv_with_topic_stance_text(tmp_path):
    p = tmp_path / "mine.csv"
    p.write_text(
        "topic,stance,text\nT,for,We should do it because it helps many people every day.\n"
        "T,against,It costs too much and the money is needed elsewhere in the budget.\nT,maybe,Eh.\n"
    )
    s = Store()
    rep = build(s, "csv", p, min_words=3)
    assert [r.stance for r in s.records()] == ["pro", "con"]
    assert s.records()[0].source == "csv:mine"
    assert rep.skipped["maybe-stance turns"] == 1


def test_bad_input_gets_one_line_errors(tmp_path):
    with pytest.raises(ArgnbError, match="no data file"):
        list(records("jsonl", tmp_path / "missing.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"topic": "x"}\nnot json\n')
    with pytest.raises(ArgnbError, match=r"bad\.jsonl:2: not JSON"):
        list(records("jsonl", bad))
    with pytest.raises(ArgnbError, match="unknown corpus format"):
        list(records("docx", bad))


def test_stance_spellings():
    assert [normalize_stance(x) for x in ("PRO", "against", "+1", "-1", "host", None)] == [
        "pro",
        "con",
        "pro",
        "con",
        None,
        None,
    ]


def test_a_debate_transcript_becomes_memory():
    tr = Transcript(kind="debate", title="Motion T", meta={"topic": "Motion T"})
    tr.add(
        Turn(
            speaker="A",
            text="We must act now because the harm is growing every single year.",
            payload=Utterance(stance="pro"),
        )
    )
    tr.add(Turn(speaker="judge", text="ok", role="verdict"))
    tr.add(
        Turn(
            speaker="B",
            text="Acting now costs jobs and the harm is smaller than claimed here.",
            payload=Utterance(stance="con"),
            valid=True,
        )
    )
    recs = from_transcript(tr)
    assert [(r.stance, r.topic, r.turn) for r in recs] == [
        ("pro", "Motion T", 0),
        ("con", "Motion T", 2),
    ]
    assert recs[0].debate_id == recs[1].debate_id and recs[0].source == "argnb"
    assert from_transcript(Transcript.from_json(tr.to_json()))[0].id == recs[0].id


def test_the_example_memory_and_gold_set():
    s = example_memory()
    info = s.info()
    assert info.records == 40 and info.debates == 3 and info.annotated == 40
    assert set(info.by_stance) == {"pro", "con"} and min(info.by_stance.values()) >= 15
    assert set(info.by_label) == {"poor", "general", "good", "excellent"}
    gold = gold_annotations()
    assert len(gold.labels) == 30 and set(gold.labels) <= {r.id for r in s.records()}


words = st.text(alphabet="abcxyz.!?\"'", min_size=1, max_size=8)
seps = st.sampled_from([" ", "  ", "\n", "\n\n", ". ", "\n \n"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(words, seps), max_size=120), st.integers(min_value=1, max_value=40))
def test_units_are_bounded_and_keep_every_word(parts, max_words):
    text = "".join(w + s for w, s in parts)
    units = split_units(text, max_words)
    assert all(1 <= len(u.split()) <= max_words for u in units)
    assert " ".join(units).split() == text.split()


@pytest.mark.data
def test_real_corpora_build(shared_data, tmp_path):
    s = Store(tmp_path / "m.db")
    iq2 = build(s, "iq2", shared_data / "iq2-debates" / "items.jsonl", debate=None)
    ibm = build(s, "ibm-speeches", shared_data / "ibm-debate-speeches" / "items.jsonl")
    claims = build(s, "claims", shared_data / "ibm-claim-stance" / "items.jsonl")
    assert iq2.debates == 96 and ibm.debates == 50
    assert iq2.skipped["moderator-stance turns"] > 0 and iq2.skipped["host-stance turns"] > 0
    assert claims.added == 2394  # one record per claim, unsplit
    assert 15_000 < iq2.added + ibm.added < 25_000
    info = s.info()
    assert set(info.by_source) == {"iq2", "ibm-speeches", "claims"}
    assert all(len(r.text.split()) <= 100 for r in s.records(source="iq2"))
