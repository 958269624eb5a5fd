"""Canvas's and Moodle's gradebook import files (issue 36), against golden files."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from argnb.csvsafe import restore
from argnb.exercises import lms
from argnb.exercises.cli import main
from argnb.exercises.scoring import Grades, Outcome, Row

GOLDEN = Path(__file__).parent / "golden"
ODD = '=HYPERLINK("http://x","Doe, Jane")'  # a name with a formula, a comma and quotes


def _grades(exercise: str, points: dict[str, tuple[float, float]]) -> Grades:
    outcomes = []
    for student, (hand, code) in points.items():
        rows = [
            Row(student, "ex.ipynb", "by_hand", hand, 2, hand == 2, "passed" if hand == 2 else "failed",
                "" if hand == 2 else "2 argument(s) are missing"),
            Row(student, "ex.ipynb", "code", code, 3, code == 3, "passed" if code == 3 else "timeout",
                "" if code == 3 else "did not run: the 20 s limit"),
        ]  # fmt: skip
        outcomes.append(Outcome(student, "ex.ipynb", rows, 1.0, "ok"))
    return Grades(exercise, outcomes, 1.0, "bwrap")


ROSTER = [
    lms.Learner("ana", name="Ana Lima", id="101", sis_user_id="S-1", sis_login_id="ana@uni.example",
                section="A", username="alima", email="ana@uni.example"),
    lms.Learner(ODD, name='Jane "JD" Doe, Jr.', id="102", sis_login_id="jdoe", section="B",
                username="jdoe", email="jdoe@uni.example"),
    lms.Learner("absent", name="Not Graded", id="103", sis_login_id="absent", username="absent"),
]  # fmt: skip


def _book() -> lms.Book:
    first = _grades("02_dialectic", {"ana": (2, 3), ODD: (2, 0), "walkin": (0, 0)})
    second = _grades("04_debate", {"ana": (2, 0)})
    return {
        "Grounded extension": lms.from_grades(first),
        "Debate": lms.from_grades(second),
    }


@pytest.mark.parametrize("kind", ["canvas", "moodle"])
def test_the_import_file_matches_its_golden_file(kind):
    text, warnings = getattr(lms, kind)(_book(), ROSTER)
    assert text == (GOLDEN / f"{kind}.csv").read_text(encoding="utf-8").replace("\n", "\r\n")
    assert warnings == ["walkin has grades but is not on the roster: written under the hub name"]


def test_names_with_commas_quotes_and_formulas_stay_data():
    text, _ = lms.canvas(_book(), ROSTER)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                       "Grounded extension", "Debate"]  # fmt: skip
    by_id = {r[1]: r for r in rows[1:]}
    assert by_id["102"][0] == 'Jane "JD" Doe, Jr.' and by_id["102"][5:] == ["2", ""]
    assert by_id["101"][5:] == ["5", "2"] and by_id["103"][5:] == ["", ""]
    nameless = lms.canvas({"x": {ODD: lms.Score(1, 1)}})[0]
    (row,) = list(csv.reader(io.StringIO(nameless)))[1:]
    assert row[0].startswith("'=") and restore(row[0]) == ODD  # no spreadsheet runs it


def test_moodle_by_email_and_feedback_says_what_went_wrong():
    text, warnings = lms.moodle(_book(), ROSTER, key="email")
    rows = {r[0]: r for r in csv.reader(io.StringIO(text))}
    assert rows["email"] == ["email", "Grounded extension", "Grounded extension feedback",
                             "Debate", "Debate feedback"]  # fmt: skip
    assert rows["ana@uni.example"][1] == "5" and rows["ana@uni.example"][3] == "2"
    assert "code 0/3 timeout: did not run" in rows["ana@uni.example"][4]
    assert rows["absent"][1:] == ["", "", "", ""]  # no grade: nothing changes in Moodle
    assert any("absent has no email" in w for w in warnings)


def test_the_lms_command_joins_exercises_and_refuses_bad_input(tmp_path, capsys):
    from argnb.exercises.pages import write

    write(_grades("02", {"ana": (2, 3), "bo": (0, 3)}), tmp_path / "g1.csv")
    write(_grades("04", {"ana": (1, 0)}), tmp_path / "g2.csv")
    code = main(["lms", f"Grounded={tmp_path / 'g1.csv'}", str(tmp_path / "g2.csv"),
                 "--canvas", str(tmp_path / "canvas.csv"), "--moodle", str(tmp_path / "m.csv")])  # fmt: skip
    assert code == 0
    rows = list(csv.DictReader((tmp_path / "canvas.csv").open(encoding="utf-8")))
    assert [(r["Student"], r["Grounded"], r["g2"]) for r in rows] == [
        ("ana", "5", "1"),
        ("bo", "3", ""),
    ]
    (tmp_path / "roster.csv").write_text("name,email\nAna,a@x\n")
    code = main(["lms", str(tmp_path / "g1.csv"), "--canvas", str(tmp_path / "c2.csv"),
                 "--roster", str(tmp_path / "roster.csv")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "no hub_name column" in err and not (tmp_path / "c2.csv").exists()
    assert main(["lms", str(tmp_path / "g1.csv")]) == 2
    assert main(["lms", str(tmp_path / "nope.csv"), "--canvas", str(tmp_path / "c3.csv")]) == 2
