"""Class data files (ratings, roundtable feedback forms) and their report."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from argnb.exercises import classdata as cd
from argnb.exercises.cli import main
from argnb.exercises.report import feedback_report, ratings_report

ROOT = Path(__file__).resolve().parents[2]
CLASS = ROOT / "assets" / "critique" / "class_ratings.csv"


@pytest.fixture
def ratings_folder(tmp_path: Path) -> Path:
    """The shipped class table split into one CSV per student, as a class hands them in."""
    folder = tmp_path / "ratings"
    folder.mkdir()
    for rater, rows in pd.read_csv(CLASS).groupby("rater"):
        rows.to_csv(folder / f"{rater}.csv", index=False)
    return folder


def _form(i: int, session: str = "s1", **likert) -> dict:
    items = {k: 1 + (i + n) % 5 for n, k in enumerate(cd.LIKERT)} | likert
    return cd.feedback_row(f"student{i}", session, items, {"most_helpful": f"answer {i}"})


def test_the_form_has_nine_likert_items_and_six_open_questions():
    assert len(cd.LIKERT) == 9 and len(cd.OPEN) == 6
    assert cd.FEEDBACK_COLUMNS[:2] == ["student", "session"] and len(cd.FEEDBACK_COLUMNS) == 17


def test_feedback_rows_are_validated():
    with pytest.raises(cd.ClassDataError, match="unknown feedback items"):
        cd.feedback_row("ana", "s1", {"easy_to_uze": 4})
    with pytest.raises(cd.ClassDataError, match="not one of"):
        cd.feedback_row("ana", "s1", {"easy_to_use": 6})
    with pytest.raises(cd.ClassDataError, match="name"):
        cd.feedback_row(" ", "s1", {})
    assert cd.feedback_row("ana", "s1", {"easy_to_use": "4"})["easy_to_use"] == 4


open_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\x00"))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    answers=st.lists(open_text, min_size=1, max_size=4),
    likert=st.lists(st.one_of(st.none(), st.integers(1, 5)), min_size=9, max_size=9),
)
def test_forms_read_back_as_written(tmp_path_factory, answers, likert):
    path = tmp_path_factory.mktemp("forms") / "s1.csv"
    for i, text in enumerate(answers):
        row = cd.feedback_row(
            f"st{i}", "s1", dict(zip(cd.LIKERT, likert, strict=True)), {"comments": text}
        )
        cd.append_feedback(path, row)
    back = cd.read_feedback(path)
    assert list(back["comments"]) == [a.strip() for a in answers]
    first = [back[k].iloc[0] for k in cd.LIKERT]
    assert [None if math.isnan(v) else int(v) for v in first] == likert


def test_bad_files_give_one_line_errors(tmp_path, capsys):
    (tmp_path / "a.csv").write_text("student,session,easy_to_use\nana,s1,4\n")
    with pytest.raises(cd.ClassDataError, match="missing"):
        cd.read_feedback(tmp_path)
    good = tmp_path / "good"
    cd.append_feedback(good / "x.csv", _form(0))
    (good / "x.csv").write_text((good / "x.csv").read_text().replace(",1,", ",seven,", 1))
    with pytest.raises(cd.ClassDataError, match=r"x.csv row 2"):
        cd.read_feedback(good)
    (tmp_path / "r.csv").write_text("rater,critique_id,overall\nana,det-1,1.5\n")
    assert (
        main(
            [
                "report",
                str(tmp_path / "r.csv"),
                "--kind",
                "ratings",
                "--out",
                str(tmp_path / "o.html"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "outside [0, 1]" in err
    assert main(["report", str(tmp_path / "nothing"), "--kind", "ratings"]) == 2


def test_ratings_folder_reads_like_the_single_table(ratings_folder):
    df = cd.read_ratings(ratings_folder)
    assert len(df) == len(pd.read_csv(CLASS)) and set(df["rater"]) == {"ana", "ben", "cam", "dot"}
    assert df.loc[(df.rater == "dot") & (df.critique_id == "det-1"), "strength"].isna().all()


def test_ratings_report_compares_class_experts_and_models(ratings_folder, tmp_path):
    report = ratings_report(ratings_folder, n_boot=20)
    frame = report.frame
    assert {"class mean", "experts", "SmolLM2 baseline", "SmolLM2 rubric"} <= set(frame.columns)
    class_table = pd.read_csv(CLASS)
    det1 = class_table.loc[class_table.critique_id == "det-1", "overall"].mean()
    assert frame.loc["det-1", "class mean"] == pytest.approx(det1)
    judges = report.tables["judges"]
    assert {"ana", "class mean", "SmolLM2 rubric", "mean baseline", "random judge"} <= set(
        judges.index
    )
    assert judges["critiques"].max() == len(frame)  # every judge on the critiques the class rated
    assert len(report.figure.axes) == 2
    page = report.save(tmp_path / "r.html").read_text()
    assert page.count("data:image/png;base64,") == 1 and "det-1" in page


def test_feedback_report_escapes_and_counts(tmp_path):
    folder = tmp_path / "forms"
    for i in range(6):
        row = _form(i, "s1" if i < 3 else "s2", argument_map=5 if i else None)
        row["comments"] = "<script>alert(1)</script>" if i == 0 else ""
        cd.append_feedback(folder / f"{row['session']}.csv", row)
    report = feedback_report(folder)
    assert report.frame.loc["argument_map", "n"] == 5
    assert (
        report.frame.loc["argument_map", "5"] == 5
        and report.frame.loc["argument_map", "agree %"] == 100
    )
    assert "mean per session" in report.tables
    assert report.texts[cd.OPEN["most_helpful"]] == [f"answer {i}" for i in range(6)]
    html = report.to_html()
    assert "<script>" not in html and "&lt;script&gt;" in html and "student0" not in html


def test_report_cli_writes_html(tmp_path):
    for i in range(3):
        cd.append_feedback(tmp_path / "forms" / "s1.csv", _form(i))
    out = tmp_path / "deep" / "report.html"
    assert main(["report", str(tmp_path / "forms"), "--kind", "feedback", "--out", str(out)]) == 0
    assert out.read_text().startswith("<!doctype html>")


def test_report_tables_have_one_header_row_and_readable_numbers(tmp_path):
    """A share reads '100%' (not 100.000 or 0.000), a count stays whole, and a named index is a
    column: no second header row holding only the index's name."""
    import re

    folder = tmp_path / "forms"
    for i in range(4):
        cd.append_feedback(folder / f"s{i % 2}.csv", _form(i, f"s{i % 2}", argument_map=5))
    body = feedback_report(folder).body()
    summary = body.split("<h2>summary</h2>", 1)[1].split("<h2>", 1)[0]
    assert summary.count("<tr") == 1 + len(cd.LIKERT), "one header row, one row per statement"
    row = re.search(r"<tr>\s*<td>argument_map</td>.*?</tr>", summary, re.S).group(0)
    cells = re.findall(r"<td>(.*?)</td>", row)
    assert cells[2:5] == ["4", "5.000", "5.000"] and cells[5:7] == ["100%", "0%"]
    session = body.split("<h2>mean per session</h2>", 1)[1]
    assert session.split("</thead>")[0].count("<tr") == 1


def _class_rows(tmp_path: Path, rows: list[tuple[str, str]]) -> Path:
    """A class folder with the shipped ratings of these ``(rater, critique_id)`` rows only."""
    table = pd.read_csv(CLASS).set_index(["rater", "critique_id"])
    folder = tmp_path / "few"
    folder.mkdir()
    table.loc[rows].reset_index().to_csv(folder / "class.csv", index=False)
    return folder


def test_a_class_that_rated_one_critique_gets_a_report_that_says_what_it_cannot_show(
    tmp_path, capsys
):
    """One rated critique leaves no pair to rank (was ``KeyError: 0``): the report still shows
    the critique, and says -- on the page and as one warning line -- why no judge is scored."""
    folder = _class_rows(tmp_path, [("ana", "det-1"), ("ben", "det-1")])
    out = tmp_path / "one.html"
    assert main(["report", str(folder), "--kind", "ratings", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1
        and err.startswith("warning: no ranking errors")
        and "Traceback" not in err
    )
    assert "rated 1 critique of 1 position" in err
    page = out.read_text()
    assert "Warning: no ranking errors" in page and "det-1" in page


def test_one_rater_and_two_critiques_draw_whiskers_that_are_never_negative(tmp_path, capsys):
    """Rounded interval bounds beside an unrounded estimate made a negative whisker (was a
    ``ValueError`` about ``xerr``)."""
    folder = _class_rows(tmp_path, [("ana", "det-1"), ("ana", "det-2")])
    report = ratings_report(folder, n_boot=20)
    assert report.warnings == [] and "ana" in report.tables["judges"].index
    assert (
        main(["report", str(folder), "--kind", "ratings", "--out", str(tmp_path / "r.html")]) == 0
    )
    assert capsys.readouterr().err == ""


def test_a_feedback_file_with_only_a_header_or_a_column_twice_is_refused(tmp_path, capsys):
    """Both gave a report without a word: an empty one (rc 0), and one that read only the first
    of two columns of the same name (pandas renames the second ``x.1``)."""
    header = tmp_path / "header" / "s1.csv"
    header.parent.mkdir()
    header.write_text(",".join(cd.FEEDBACK_COLUMNS) + "\n")
    twice = tmp_path / "twice" / "s1.csv"
    cd.append_feedback(twice, _form(0))
    lines = twice.read_text().splitlines()
    lines[0] = lines[0].replace("use_again", "easy_to_use")  # a hand-edited header
    twice.write_text("\n".join(lines) + "\n")
    for folder, says in (
        (header.parent, "s1.csv: only a header, no rows"),
        (twice.parent, "'easy_to_use' is in the header more than once"),
    ):
        out = tmp_path / "report.html"
        assert main(["report", str(folder), "--kind", "feedback", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and says in err and "Traceback" not in err, err
        assert not out.exists()
