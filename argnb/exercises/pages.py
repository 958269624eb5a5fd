"""What a grading run leaves: the grades CSV (neutralised for spreadsheets,
:mod:`argnb.csvsafe`) and one self-contained, escaped feedback page per student."""

from __future__ import annotations

import re
from pathlib import Path

from argnb.exercises.scoring import Grades, Outcome, Row
from argnb.exercises.submissions import page_name
from argnb.views import esc

_HINTS = {
    "NotImplementedError": "this part is not written yet: replace the `raise NotImplementedError` line",
    "NameError": "a name is not defined: run the cells above, or check the spelling",
    "timeout": "look for a loop that never ends, or a cell waiting for input or a widget",
    "crashed": "the notebook's Python process died; run it top to bottom yourself to see where",
}


def _hint(row: Row) -> str:
    if row.passed:
        return ""
    if row.status in _HINTS:
        return _HINTS[row.status]
    if "not available in this exercise" in row.message:
        return "the exercise asks you to write this yourself: the library's version is switched off"
    if "is a link, which the grader does not follow" in row.message:
        return "hand in the notebook file itself, not a link to it"
    if row.message.startswith("AssertionError: hidden test"):
        return "an extra test the instructor keeps hidden: check the cases your own tests skip"
    return _HINTS.get(row.message.split(":", 1)[0], "")


def safe_name(student: str) -> str:
    """A file name for a student's feedback page (no path tricks; see
    :func:`argnb.exercises.submissions.page_name` for long or unusual names)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", student).strip("._") or "student"


def _e(text: object) -> str:
    """Escaped for HTML, and every control character shown as ``\\xNN`` (as in the CSV): a
    student's ESC or BEL bytes are kept visibly, never as bytes in the page's file."""
    from argnb.csvsafe import printable

    return esc(printable(str(text)))


def feedback_html(student: str, outcomes: list[Outcome], exercise: str) -> str:
    """A self-contained feedback page: every check, its points, what failed and a hint."""
    e = _e
    got = sum(r.points for o in outcomes for r in o.rows)
    best = sum(r.max_points for o in outcomes for r in o.rows)
    parts = [
        "<!doctype html><meta charset='utf-8'>",
        f"<title>{e(exercise)}: feedback for {e(student)}</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
        "td,th{border-bottom:1px solid #ddd;padding:.3em .6em;text-align:left;vertical-align:top}"
        ".ok{color:#14733a}.no{color:#b3261e}pre{white-space:pre-wrap;margin:0}</style>",
        f"<h1>{e(exercise)} — {e(student)}</h1>",
        f"<p><b>{got:g} of {best:g} points.</b></p>",
    ]
    for o in outcomes:
        parts.append(f"<h2>{e(o.notebook)}</h2>")
        if o.note:
            parts.append(f"<p>{e(o.note)}</p>")
        parts.append("<table><tr><th>check</th><th>points</th><th>result</th></tr>")
        for r in o.rows:
            mark = "<span class='ok'>✓</span>" if r.passed else "<span class='no'>✗</span>"
            hint = _hint(r)
            detail = f"<pre>{e(r.message)}</pre>" if r.message else ""
            if hint:
                detail += f"<p><i>hint: {e(hint)}</i></p>"
            parts.append(
                f"<tr><td>{e(r.check)}</td><td>{r.points:g}/{r.max_points:g}</td>"
                f"<td>{mark} {e(r.status)}{detail}</td></tr>"
            )
        parts.append("</table>")
    return "\n".join(parts) + "\n"


def write(grades: Grades, out: Path, feedback_dir: Path | None = None) -> Path:
    """Write the grades CSV and one feedback page per student; return the feedback folder."""
    from argnb.csvsafe import printable_frame, safe_frame

    out.parent.mkdir(parents=True, exist_ok=True)
    safe_frame(printable_frame(grades.frame())).to_csv(out, index=False)
    folder = feedback_dir or out.with_name(out.stem + "_feedback")
    folder.mkdir(parents=True, exist_ok=True)
    by_student: dict[str, list[Outcome]] = {}
    for o in grades.outcomes:
        by_student.setdefault(o.student, []).append(o)
    used: set[str] = set()
    for student, outcomes in by_student.items():
        name, n = page_name(student), 1
        while name in used:  # "a b" and "a_b" must not share a page
            n += 1
            name = f"{page_name(student)}-{n}"
        used.add(name)
        try:
            page = feedback_html(student, outcomes, grades.exercise)
            (folder / f"{name}.html").write_text(page, encoding="utf-8")
        except (OSError, ValueError) as exc:  # this student's page alone
            grades.warnings.append(f"{student}: no feedback page ({type(exc).__name__})")
    return folder
