"""Grades into the course's LMS: Canvas's and Moodle's gradebook import files.

Each exercise is graded on its own (``argnb exercises grade``, one ``grades.csv`` each); these
files carry the points into the LMS's gradebook instead of copying them by hand:

* **Canvas** (Grades → Import): ``Student, ID, SIS User ID, SIS Login ID, Section``, then one
  column per assignment, named exactly as the assignment is in Canvas. Canvas finds a learner by
  ``ID``, else ``SIS User ID``, else ``SIS Login ID``; an empty cell changes nothing.
* **Moodle** (Grades → Import → CSV file): a column naming the user (``username``, or ``email``),
  then per grade item a score column and a ``feedback`` column, each mapped to its item on the
  import page; an empty cell or ``-`` is no grade.

Learners are matched by hub name, or through a roster (a CSV with ``hub_name`` and any of ``name,
id, sis_user_id, sis_login_id, section, username, email``). With ltiauthenticator the hub name
may already be the LMS's login or email, and no roster is needed. A learner on the roster without a
grade gets an empty cell; a graded learner missing from the roster is written under the hub name
and named in a warning (the LMS will not find them until the roster says who they are).

Every text cell is data: quoted by :mod:`csv`, control characters written as ``\\xNN`` and a
leading ``= + - @`` neutralised (:mod:`argnb.csvsafe`), so a name like ``=HYPERLINK(...)`` or
``"Doe, Jane"`` reaches the LMS as written and runs in no spreadsheet on the way.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from argnb.csvsafe import neutralise, printable, restore
from argnb.errors import ClassDataError

ROSTER_COLUMNS = ("name", "id", "sis_user_id", "sis_login_id", "section", "username", "email")
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
#: characters of one learner's feedback for one assignment (the LMS shows it beside the grade)
FEEDBACK_LIMIT = 600


@dataclass(frozen=True)
class Learner:
    """One line of the roster (only ``hub_name`` is required)."""

    hub_name: str
    name: str = ""
    id: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""
    username: str = ""
    email: str = ""


@dataclass
class Score:
    """A learner's points for one assignment, and a line of what went wrong."""

    points: float = 0.0
    max_points: float = 0.0
    feedback: list[str] = field(default_factory=list)


#: assignment name → hub name → score
Book = dict[str, dict[str, Score]]


def read_roster(path: Path) -> list[Learner]:
    """The roster file's learners, in its order; one line saying what is wrong otherwise."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ClassDataError(
            f"cannot read the roster {path.name}: {exc}",
            hint="a CSV file with a hub_name column (see docs/classroom.md)",
        ) from None
    if not rows or "hub_name" not in rows[0]:
        raise ClassDataError(
            f"the roster {path.name} has no hub_name column",
            hint="its first line names the columns: hub_name,name,sis_login_id,email,...",
        )
    out, seen = [], set()
    for i, row in enumerate(rows, start=2):
        hub = restore((row.get("hub_name") or "").strip())
        if not hub:
            raise ClassDataError(f"the roster {path.name}, line {i}: no hub_name")
        if hub in seen:
            raise ClassDataError(f"the roster {path.name}, line {i}: {hub!r} twice")
        seen.add(hub)
        extra = {k: restore((row.get(k) or "").strip()) for k in ROSTER_COLUMNS}
        out.append(Learner(hub, **extra))
    return out


def _add(score: Score, check: str, points: float, best: float, status: str, message: str) -> None:
    score.points += points
    score.max_points += best
    if points < best:
        why = f": {message}" if message else ""
        score.feedback.append(f"{check} {points:g}/{best:g} {status}{why}")


def from_grades(grades: object) -> dict[str, Score]:
    """Each student's score in a :class:`argnb.exercises.scoring.Grades` run."""
    out: dict[str, Score] = {}
    for r in grades.rows:  # type: ignore[attr-defined]
        score = out.setdefault(r.student, Score())
        _add(score, r.check, float(r.points), float(r.max_points), r.status, r.message)
    return out


def read_grades(path: Path) -> dict[str, Score]:
    """Each student's score in a grades CSV the grader wrote."""
    try:
        with path.open(encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        out: dict[str, Score] = {}
        for row in rows:
            score = out.setdefault(restore(row["student"]), Score())
            _add(
                score,
                restore(row["check"]),
                float(row["points"]),
                float(row["max_points"]),
                row["status"],
                restore(row.get("message") or ""),
            )
    except (OSError, UnicodeDecodeError, csv.Error, KeyError, ValueError) as exc:
        raise ClassDataError(
            f"cannot read the grades {path.name}: {type(exc).__name__}: {exc}",
            hint="pass the grades.csv that `argnb exercises grade` wrote",
        ) from None
    return out


def _learners(book: Book, roster: list[Learner] | None) -> tuple[list[Learner], list[str]]:
    """Every learner to write (the roster's first), and warnings."""
    graded = sorted({s for scores in book.values() for s in scores})
    if roster is None:
        return [Learner(s) for s in graded], []
    known = {learner.hub_name for learner in roster}
    missing = [s for s in graded if s not in known]
    warnings = [
        f"{printable(s)} has grades but is not on the roster: written under the hub name"
        for s in missing
    ]
    return [*roster, *(Learner(s) for s in missing)], warnings


def _cell(text: str) -> str:
    return neutralise(printable(text))


def _points(score: Score | None) -> str:
    return "" if score is None else f"{round(score.points, 2):g}"


def _feedback(score: Score | None) -> str:
    if score is None:
        return ""
    text = f"{score.points:g}/{score.max_points:g}"
    if score.feedback:
        text += " — " + "; ".join(score.feedback)
    return text[:FEEDBACK_LIMIT]


def _csv(header: list[str], rows: Iterable[list[str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow([_cell(h) for h in header])
    w.writerows(rows)
    return buf.getvalue()


def canvas(book: Book, roster: list[Learner] | None = None) -> tuple[str, list[str]]:
    """Canvas's gradebook import file for ``book``, and warnings."""
    learners, warnings = _learners(book, roster)
    rows = []
    for p in learners:
        who = [p.name or p.hub_name, p.id, p.sis_user_id, p.sis_login_id or p.hub_name, p.section]
        rows.append([_cell(x) for x in who] + [_points(book[a].get(p.hub_name)) for a in book])
    return _csv([*CANVAS_COLUMNS, *book], rows), warnings


def moodle(
    book: Book, roster: list[Learner] | None = None, *, key: str = "username"
) -> tuple[str, list[str]]:
    """Moodle's CSV grade import file for ``book`` (users by ``username`` or ``email``)."""
    learners, warnings = _learners(book, roster)
    rows = []
    for p in learners:
        user = (p.email if key == "email" else p.username) or p.hub_name
        if key == "email" and not p.email:
            warnings.append(
                f"{printable(p.hub_name)} has no email on the roster: written by hub name"
            )
        row = [_cell(user)]
        for a in book:
            score = book[a].get(p.hub_name)
            row += [_points(score), _cell(_feedback(score))]
        rows.append(row)
    header = [key, *(h for a in book for h in (a, f"{a} feedback"))]
    return _csv(header, rows), warnings


def write(
    book: Book,
    roster: list[Learner] | None,
    *,
    canvas_to: Path | None = None,
    moodle_to: Path | None = None,
    moodle_key: str = "username",
) -> list[str]:
    """Write the import files asked for; the warnings (each said once)."""
    made: list[tuple[Path, tuple[str, list[str]]]] = []
    if canvas_to is not None:
        made.append((canvas_to, canvas(book, roster)))
    if moodle_to is not None:
        made.append((moodle_to, moodle(book, roster, key=moodle_key)))
    warnings: list[str] = []
    for out, (text, more) in made:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8", newline="")
        warnings += [w for w in more if w not in warnings]
    return warnings
