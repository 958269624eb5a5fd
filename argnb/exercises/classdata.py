"""A class's data as files: critique ratings (notebook 03) and roundtable feedback forms (05).

Both are CSV files with a header, one row per student and item, collected into one folder (one
file per student or per session; any number of files). Formats:

**ratings** — what ``RatingWidget.to_frame(name).to_csv(...)`` writes::

    rater, critique_id, centrality, strength, correctness, clarity, dead_weight, single_issue, overall

values in [0, 1], empty = not rated (``student`` is accepted for ``rater``).

**feedback** — the roundtable's feedback form, one row per student and session::

    student, session, <9 Likert items: 1..5>, <6 open questions: text>

Likert answers are integers 1 (strongly disagree) to 5 (strongly agree), empty = no answer. The
columns are :data:`FEEDBACK_COLUMNS`; :func:`feedback_row` builds a valid row and
:func:`append_feedback` adds it to a CSV (the roundtable module writes its form this way).

Text that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab, CR first) is
written with a leading ``'`` and read back without it (:mod:`argnb.csvsafe`).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from argnb.csvsafe import restore_frame, safe_row
from argnb.errors import ClassDataError

#: Likert items of the feedback form: column -> the statement a student rates 1..5
LIKERT: dict[str, str] = {
    "easy_to_use": "The roundtable was easy to use.",
    "natural_navigation": "Finding my way around the interface felt natural.",
    "use_again": "I would use a tool like this again.",
    "perspectives": "It made me weigh more than one point of view.",
    "open_questions": "The open questions pushed me to think further.",
    "summaries": "The summaries made the main points of the discussion clearer.",
    "agreement_tracker": "Seeing where we agreed and disagreed was useful.",
    "argument_map": "The argument map was easy to follow.",
    "reasoning": "Overall, the session improved how I reason about the topic.",
}
#: open questions of the feedback form: column -> question
OPEN: dict[str, str] = {
    "most_helpful": "What helped you most?",
    "confusing": "What confused you, or should work differently?",
    "research_use": "Could this tool help research, e.g. on how models or groups deliberate?",
    "reflection_use": "Could it help people reflect and reason better? How?",
    "advantage": "What does a moderated roundtable give you that one chatbot does not?",
    "comments": "Anything else?",
}
SCALE = {1: "strongly disagree", 2: "disagree", 3: "neutral", 4: "agree", 5: "strongly agree"}
FEEDBACK_COLUMNS: list[str] = ["student", "session", *LIKERT, *OPEN]
OPEN_LIMIT = 4000  # characters kept of one open answer


def csv_files(source: str | Path) -> list[Path]:
    """``source`` itself when it is a CSV, else every ``*.csv`` under it (sorted)."""
    p = Path(source)
    if p.is_file():
        return [p]
    if not p.is_dir():
        raise ClassDataError(f"no such file or folder: {p}")
    files = sorted(f for f in p.rglob("*.csv") if ".ipynb_checkpoints" not in f.parts)
    if not files:
        raise ClassDataError(f"no CSV files in {p}", hint="collect the students' CSV files there")
    return files


def _check_header(f: Path) -> None:
    """A column named twice is an error: pandas would rename the second copy (``x.1``) and read
    only the first, so half the answers would vanish without a word."""
    try:
        with f.open(encoding="utf-8", newline="") as stream:
            header = next(csv.reader(stream), [])
    except (UnicodeDecodeError, csv.Error):
        return  # the CSV reader below says what is wrong with the file
    names = [h.strip() for h in header]
    twice = sorted({n for n in names if n and names.count(n) > 1})
    if twice:
        raise ClassDataError(
            f"{f}: {', '.join(repr(n) for n in twice)} "
            f"{'is' if len(twice) == 1 else 'are'} in the header more than once",
            hint="keep one column of each name",
        )


def _read(files: list[Path]) -> Any:
    import pandas as pd

    frames = []
    for f in files:
        _check_header(f)
        try:
            df = pd.read_csv(f, dtype=str, keep_default_na=False)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise ClassDataError(f"{f}: not a readable CSV ({exc})".splitlines()[0]) from None
        df = restore_frame(df)  # cells written with a leading ' against spreadsheet formulas
        df.columns = [str(c).strip() for c in df.columns]
        if df.empty:
            raise ClassDataError(
                f"{f}: only a header, no rows", hint="collect the forms or ratings into it first"
            )
        df.insert(0, "file", f.name)
        df["row"] = range(2, len(df) + 2)
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


# -- ratings -------------------------------------------------------------------------------------


def read_ratings(source: str | Path) -> Any:
    """All rating rows of a folder: ``rater, critique_id`` and the seven dimensions (floats, NaN
    = not rated). A student who rated the same critique twice keeps the last row."""
    from argnb.critique.rubric import DIMENSIONS, clean_ratings

    df = _read(csv_files(source))
    if "rater" not in df.columns:
        alias = next((c for c in ("student", "learner", "name") if c in df.columns), None)
        if alias:
            df = df.rename(columns={alias: "rater"})
    missing = {"rater", "critique_id"} - set(df.columns)
    if missing:
        raise ClassDataError(
            f"rating files need the columns rater and critique_id (missing: {sorted(missing)})",
            hint="write them with RatingWidget.to_frame(name).to_csv(path, index=False)",
        )
    rows = []
    for rec in df.to_dict("records"):
        where = f"{rec['file']} row {rec['row']}"
        if not rec["rater"].strip() or not rec["critique_id"].strip():
            raise ClassDataError(f"{where}: rater and critique_id must not be empty")
        try:
            rating = clean_ratings({k: (v or None) for k, v in rec.items()}, where=where)
        except ValueError as exc:
            raise ClassDataError(str(exc)) from None
        rows.append({"rater": rec["rater"].strip(), "critique_id": rec["critique_id"].strip()})
        rows[-1].update({d: rating.get(d, math.nan) for d in DIMENSIONS})
    import pandas as pd

    out = pd.DataFrame(rows, columns=["rater", "critique_id", *DIMENSIONS])
    return out.drop_duplicates(["rater", "critique_id"], keep="last").reset_index(drop=True)


# -- feedback forms ------------------------------------------------------------------------------


def _likert(value: Any, where: str) -> float:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return math.nan
    text = str(value).strip()
    if not text:
        return math.nan
    try:
        number = float(text)
    except ValueError:
        raise ClassDataError(f"{where}: {text!r} is not a number from 1 to 5") from None
    if number not in (1, 2, 3, 4, 5):
        raise ClassDataError(f"{where}: {text!r} is not one of 1, 2, 3, 4, 5")
    return number


def feedback_row(
    student: str, session: str, likert: Mapping[str, Any], answers: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """One validated row of the feedback form (unknown keys are an error: typos lose answers)."""
    unknown = (set(likert) - set(LIKERT)) | (set(answers or {}) - set(OPEN))
    if unknown:
        raise ClassDataError(
            f"unknown feedback items {sorted(unknown)}",
            hint=f"Likert items: {', '.join(LIKERT)}; open questions: {', '.join(OPEN)}",
        )
    if not str(student).strip():
        raise ClassDataError("the feedback form needs the student's name")
    row: dict[str, Any] = {"student": str(student).strip(), "session": str(session).strip()}
    for key in LIKERT:
        v = _likert(likert.get(key), f"item {key}")
        row[key] = "" if math.isnan(v) else int(v)
    for key in OPEN:
        row[key] = str((answers or {}).get(key) or "").strip()[:OPEN_LIMIT]
    return row


def append_feedback(path: str | Path, row: Mapping[str, Any]) -> Path:
    """Append one form (see :func:`feedback_row`) to a CSV, writing the header first if new."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    new = not p.exists() or p.stat().st_size == 0
    with p.open("a", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=FEEDBACK_COLUMNS)
        if new:
            writer.writeheader()
        writer.writerow(safe_row({k: row.get(k, "") for k in FEEDBACK_COLUMNS}))
    return p


def read_feedback(source: str | Path) -> Any:
    """All feedback forms of a folder: ``student, session``, the Likert items as floats (NaN =
    no answer) and the open answers as text."""
    import pandas as pd

    df = _read(csv_files(source))
    missing = [c for c in FEEDBACK_COLUMNS if c not in df.columns]
    if missing:
        raise ClassDataError(
            f"feedback files need the columns {', '.join(FEEDBACK_COLUMNS)}; missing: "
            f"{', '.join(missing)}",
            hint="see argnb.exercises.classdata.FEEDBACK_COLUMNS (docs/classroom.md)",
        )
    rows = []
    for rec in df.to_dict("records"):
        where = f"{rec['file']} row {rec['row']}"
        row: dict[str, Any] = {"student": rec["student"].strip(), "session": rec["session"].strip()}
        if not row["student"]:
            raise ClassDataError(f"{where}: the student column is empty")
        for key in LIKERT:
            row[key] = _likert(rec[key], f"{where}, {key}")
        for key in OPEN:
            row[key] = str(rec[key]).strip()[:OPEN_LIMIT]
        rows.append(row)
    return pd.DataFrame(rows, columns=FEEDBACK_COLUMNS)
