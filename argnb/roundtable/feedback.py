"""The feedback form after a session: nine statements rated 1-5 and six open questions (the
paper's study form, reworded), saved as one CSV row per learner so an instructor can aggregate a
class.

The CSV is the class-data format every argnb feedback form writes: ``student``, ``session``,
then the nine ratings (1 = strongly disagree ... 5 = strongly agree, empty when skipped), then
the six answers. Rows are appended under a file lock, so a class writing to one shared file
loses nothing; a file with other columns is refused rather than mixed. Text a spreadsheet would
run as a formula gets a leading ``'`` (:mod:`argnb.csvsafe`); :func:`read_feedback` removes it.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from argnb.csvsafe import restore_frame, safe_row
from argnb.errors import ArgnbError
from argnb.views import esc

#: (column, statement) -- rated 1 (strongly disagree) to 5 (strongly agree). Columns and wording
#: are the class-data format of ``argnb.exercises.classdata`` (LIKERT, OPEN, FEEDBACK_COLUMNS):
#: keep the two identical, so a class's files aggregate in the instructor's report
LIKERT: tuple[tuple[str, str], ...] = (
    ("easy_to_use", "The roundtable was easy to use."),
    ("natural_navigation", "Finding my way around the interface felt natural."),
    ("use_again", "I would use a tool like this again."),
    ("perspectives", "It made me weigh more than one point of view."),
    ("open_questions", "The open questions pushed me to think further."),
    ("summaries", "The summaries made the main points of the discussion clearer."),
    ("agreement_tracker", "Seeing where we agreed and disagreed was useful."),
    ("argument_map", "The argument map was easy to follow."),
    ("reasoning", "Overall, the session improved how I reason about the topic."),
)
#: (column, question) -- free text
OPEN: tuple[tuple[str, str], ...] = (
    ("most_helpful", "What helped you most?"),
    ("confusing", "What confused you, or should work differently?"),
    ("research_use", "Could this tool help research, e.g. on how models or groups deliberate?"),
    ("reflection_use", "Could it help people reflect and reason better? How?"),
    ("advantage", "What does a moderated roundtable give you that one chatbot does not?"),
    ("comments", "Anything else?"),
)
SCALE = ("strongly disagree", "disagree", "neutral", "agree", "strongly agree")
COLUMNS: tuple[str, ...] = ("student", "session", *(k for k, _ in LIKERT), *(k for k, _ in OPEN))
#: an answer longer than this is cut (a CSV cell is not an essay box)
ANSWER_CHARS = 4000


def feedback_row(
    student: str, session: str, ratings: Mapping[str, int | None], answers: Mapping[str, str]
) -> dict[str, Any]:
    """One validated CSV row; unknown keys and ratings outside 1..5 are errors."""
    student = " ".join(str(student).split())
    if not student:
        raise ArgnbError("the form needs a name (or a pseudonym)", hint="fill in the name field")
    likert = {k for k, _ in LIKERT}
    open_ = {k for k, _ in OPEN}
    unknown = (set(ratings) - likert) | (set(answers) - open_)
    if unknown:
        raise ArgnbError(f"unknown form fields {sorted(unknown)}", hint=f"columns: {COLUMNS}")
    row: dict[str, Any] = {"student": student, "session": " ".join(str(session).split())}
    for k, _ in LIKERT:
        v = ratings.get(k)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 5):
            raise ArgnbError(f"rating {k!r} must be 1..5 or empty, not {v!r}")
        row[k] = "" if v is None else v
    for k, _ in OPEN:
        row[k] = str(answers.get(k, "") or "").strip()[:ANSWER_CHARS]
    return row


def save_feedback(path: str | Path, row: Mapping[str, Any]) -> Path:
    """Append ``row`` to the CSV at ``path`` (header first when the file is new)."""
    from argnb.locks import locked

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with locked(str(p) + ".lock"):  # removed when done: no .lock beside the class's forms
        new = not p.exists() or p.stat().st_size == 0
        if not new:
            with p.open(newline="", encoding="utf-8") as f:
                header = next(csv.reader(f), [])
            if tuple(header) != COLUMNS:
                raise ArgnbError(
                    f"{p} has other columns than a roundtable feedback file",
                    hint="choose another file name for the feedback",
                )
        with p.open("a", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            if new:
                w.writeheader()
            w.writerow(safe_row({k: row.get(k, "") for k in COLUMNS}))
    return p


def read_feedback(path: str | Path):
    """The saved forms as a DataFrame (ratings as nullable integers)."""
    import pandas as pd

    df = pd.read_csv(path, dtype={"student": str, "session": str}, keep_default_na=False)
    df = restore_frame(df, ["student", "session", *(k for k, _ in OPEN)])
    for k, _ in LIKERT:
        df[k] = pd.to_numeric(df[k], errors="coerce").astype("Int64")
    return df


class FeedbackForm:
    """The form as a widget: name, nine 1-5 ratings, six answers, *Save* appends a CSV row."""

    def __init__(
        self, path: str | Path = "work/roundtable_feedback.csv", session: str = ""
    ) -> None:
        import ipywidgets as w

        self.path = Path(path)
        self.session = session
        self.student = w.Text(description="Your name", placeholder="name or pseudonym")
        self.ratings = {
            k: w.ToggleButtons(
                options=[("–", None), *((str(i), i) for i in range(1, 6))],
                value=None,
                tooltips=["no answer", *SCALE],
                style={"button_width": "34px"},
            )
            for k, _ in LIKERT
        }
        self.answers = {k: w.Textarea(layout=w.Layout(width="95%", height="52px")) for k, _ in OPEN}
        # as wide as its label (the default width cut it to "Save my answ…"), never shrunk
        self.save_button = w.Button(
            description="Save my answers",
            icon="save",
            layout=w.Layout(width="auto", min_width="max-content", flex="0 0 auto"),
        )
        self.status = w.HTML(layout=w.Layout(flex="1 1 auto", min_width="0"))
        self.save_button.on_click(lambda _: self.save())
        rows: list[Any] = [
            w.HTML("<b>Rate each statement</b> from 1 (strongly disagree) to 5 (strongly agree).")
        ]
        for k, text in LIKERT:
            rows.append(
                w.HBox([w.HTML(_html(text), layout=w.Layout(width="55%")), self.ratings[k]])
            )
        rows.append(w.HTML("<b>In your own words</b>"))
        for k, text in OPEN:
            rows += [w.HTML(_html(text)), self.answers[k]]
        self.widget = w.VBox([self.student, *rows, w.HBox([self.save_button, self.status])])

    def values(self) -> dict[str, Any]:
        return feedback_row(
            self.student.value,
            self.session,
            {k: b.value for k, b in self.ratings.items()},
            {k: a.value for k, a in self.answers.items()},
        )

    def save(self) -> Path | None:
        """Append the answers to the CSV; the form says where (or what is missing)."""
        try:
            p = save_feedback(self.path, self.values())
        except (ArgnbError, OSError) as exc:
            self.status.value = f"<span style='color:#a50f15'>{esc(str(exc))}</span>"
            return None
        self.status.value = f"<span style='color:#238b45'>saved to {esc(str(p))}</span>"
        return p

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def _html(text: str) -> str:
    return f"<span style='font-size:13px'>{esc(text)}</span>"
