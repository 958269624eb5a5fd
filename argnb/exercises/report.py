"""One report of a class's data: a table, a figure, and a self-contained HTML page.

* :func:`ratings_report` — the class's critique ratings beside the experts' and the models':
  per critique (overall score), and every student, the class mean and each model scored against
  the experts with the study's metrics (:func:`argnb.critique.score_many`);
* :func:`feedback_report` — the roundtable feedback forms: Likert distributions per item (and per
  session), and the open answers, without names.

Every text that came from a file is escaped in the HTML.
"""

from __future__ import annotations

import base64
import io
import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from argnb.errors import MissingDependency
from argnb.exercises.classdata import (
    LIKERT,
    OPEN,
    ClassDataError,
    read_feedback,
    read_ratings,
)
from argnb.views import esc
from argnb.words import count


@dataclass
class Report:
    """A table (``frame``), a matplotlib ``figure``, more tables and the open answers."""

    title: str
    frame: Any
    figure: Any
    tables: dict[str, Any] = field(default_factory=dict)
    texts: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: what the data could not show (the command prints each; the page leads with them)
    warnings: list[str] = field(default_factory=list)

    def png(self) -> str:
        """The figure as base64 PNG."""
        buf = io.BytesIO()
        self.figure.savefig(buf, format="png", dpi=110, bbox_inches="tight")
        return base64.b64encode(buf.getvalue()).decode("ascii")

    def body(self) -> str:
        e = esc
        parts = [f"<h1>{e(self.title)}</h1>"]
        parts += [f"<p>{e(n)}</p>" for n in self.notes]
        parts.append(
            f"<img alt='{e(self.title)}' style='max-width:100%' "
            f"src='data:image/png;base64,{self.png()}'>"
        )
        for name, table in {"summary": self.frame, **self.tables}.items():
            parts.append(f"<h2>{e(name)}</h2>")
            parts.append(table_html(table))
        for question, answers in self.texts.items():
            parts.append(f"<h3>{e(question)}</h3>")
            if answers:
                parts.append("<ul>" + "".join(f"<li>{e(a)}</li>" for a in answers) + "</ul>")
            else:
                parts.append("<p><i>no answers</i></p>")
        return "\n".join(parts)

    def to_html(self) -> str:
        """A self-contained page (the figure inlined)."""
        style = (
            "body{font-family:sans-serif;max-width:70em;margin:2em auto}"
            "table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.2em .5em}"
        )
        return (
            f"<!doctype html><meta charset='utf-8'><title>{esc(self.title)}</title>"
            f"<style>{style}</style>\n{self.body()}\n"
        )

    def _repr_html_(self) -> str:
        return self.body()

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(self.to_html(), encoding="utf-8")
        return p


def _cell(column: str, value: Any) -> str:
    """One value as a reader wants it: a share in whole percent, a count whole, a score to 3 places."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return "–" if value is None else str(value)
    if math.isnan(value):
        return "–"
    if column.endswith("%"):
        return f"{value:.0f}%"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    return f"{value:.3f}"


def table_html(table: Any) -> str:
    """A DataFrame as one header row: a named index becomes the first column (pandas would give
    its name a header row of its own) and every column is formatted by :func:`_cell`."""
    flat = table.copy()
    flat.columns = [str(c) for c in flat.columns]  # drops a columns' name (its own header cell)
    if any(n is not None for n in flat.index.names):
        flat = flat.reset_index()
    formatters = {c: (lambda v, c=c: _cell(c, v)) for c in flat.columns}
    return flat.to_html(escape=True, index=False, formatters=formatters, na_rep="–")


def _figure(width: float, height: float, ncols: int = 1) -> tuple[Any, Any]:
    try:
        from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state
    except ImportError:
        raise MissingDependency(
            "the class report draws its plots with matplotlib, which is not installed",
            hint="pip install 'argnb[classroom]'",
        ) from None

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots(1, ncols)


# -- ratings -------------------------------------------------------------------------------------


def _default_models() -> dict[str, Any]:
    from argnb.critique.data import ASSETS
    from argnb.critique.judge import read_predictions

    out = {}
    for name, file in (
        ("SmolLM2 baseline", "smollm2_baseline_predictions.jsonl"),
        ("SmolLM2 rubric", "smollm2_rubric_predictions.jsonl"),
    ):
        if (ASSETS / file).exists():
            out[name] = read_predictions(ASSETS / file)
    return out


def ratings_report(
    source: str | Path,
    *,
    dataset: Any = None,
    models: dict[str, Any] | None = None,
    n_boot: int = 300,
) -> Report:
    """The class's ratings against the experts (``dataset``, default: the course's examples) and
    the models (name -> predictions; default: the embedded model's shipped predictions)."""
    import numpy as np
    import pandas as pd

    from argnb.critique import load_class_ratings, load_examples, score_many
    from argnb.critique.metrics import as_ratings

    ratings = read_ratings(source)
    data = dataset if dataset is not None else load_examples()
    unknown = sorted(set(ratings["critique_id"]) - set(data.ids))
    if unknown:
        raise ClassDataError(
            f"{len(unknown)} rated critiques are not in {data.name or 'the dataset'} "
            f"(e.g. {unknown[0]!r})",
            hint="rate critiques of the course's examples, or pass the dataset they come from",
        )
    models = _default_models() if models is None else models
    students = load_class_ratings(ratings)
    if not students:
        raise ClassDataError("no ratings in the files (every value is empty)")
    rated = ratings.dropna(subset=["overall"])
    class_mean = {
        cid: {
            d: float(v)
            for d, v in g.drop(columns=["rater", "critique_id"]).mean().items()
            if not math.isnan(v)
        }
        for cid, g in ratings.groupby("critique_id")
    }
    expert = data.reference()
    model_overall = {
        name: {c: r.get("overall") for c, r in as_ratings(p).items()} for name, p in models.items()
    }
    rows = []
    for cid in [c for c in data.ids if c in set(rated["critique_id"])]:
        overall = rated.loc[rated["critique_id"] == cid, "overall"]
        row = {
            "position_id": data[cid].position_id,
            "critique_id": cid,
            "students": len(overall),
            "class mean": overall.mean(),
            "class sd": overall.std(ddof=1) if len(overall) > 1 else math.nan,
            "experts": expert.get(cid, {}).get("overall", math.nan),
        }
        for name, by_id in model_overall.items():
            row[name] = by_id.get(cid, math.nan)
        rows.append(row)
    frame = pd.DataFrame(rows).set_index("critique_id")
    on = set(frame.index)
    judges = {
        **students,
        "class mean": class_mean,
        **{n: {c: r for c, r in as_ratings(p).items() if c in on} for n, p in models.items()},
    }
    # every judge on the same critiques: the ones the class rated
    board = score_many(data.subset(frame.index), judges, n_boot=n_boot)

    fig, (left, right) = _figure(12, 4.8, 2)
    x = np.arange(len(frame))
    for i, cid in enumerate(frame.index):
        pts = rated.loc[rated["critique_id"] == cid, "overall"].to_numpy()
        jitter = np.linspace(-0.15, 0.15, len(pts)) if len(pts) > 1 else np.zeros(1)
        left.scatter(
            i + jitter, pts, s=14, color="#9aa5b1", zorder=2, label="a student" if i == 0 else None
        )
    left.scatter(
        x, frame["class mean"], marker="_", s=500, color="#1f5fbf", zorder=3, label="class mean"
    )
    left.scatter(
        x, frame["experts"], marker="D", s=36, color="black", zorder=4, label="experts (mean)"
    )
    for name, color in zip(
        model_overall, ("#d4651a", "#a31d6b", "#2b8a3e", "#7048e8"), strict=False
    ):
        left.scatter(x, frame[name], marker="^", s=40, color=color, zorder=4, label=name)
    left.set_xticks(x, frame.index, rotation=60, fontsize=8)
    left.set_ylim(-0.05, 1.05)
    left.set_ylabel("overall score")
    left.set_title("Each critique: students, class, experts, models")
    left.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))

    metric = "weighted_pairwise_ranking_error"
    shown = board.dropna(subset=[metric])
    warnings = []
    if shown.empty:
        # a ranking error compares critiques of one position: one rated critique (or one per
        # position) leaves nothing to rank, and every judge's error is undefined
        positions = count(frame["position_id"].nunique(), "position")
        warnings.append(
            "no ranking errors: they compare critiques of the same position, and the class rated "
            f"{count(len(frame), 'critique')} of {positions} -- rate at least two critiques of one "
            "position"
        )
        right.text(0.5, 0.5, "no ranking errors:\nrate at least two critiques\nof one position",
                   ha="center", va="center", transform=right.transAxes)  # fmt: skip
        right.set_axis_off()
    else:
        ys = np.arange(len(shown))
        colors = [
            "#1f5fbf"
            if j == "class mean"
            else "#d4651a"
            if j in models
            else "#9aa5b1"
            if j in students
            else "#444444"
            for j in shown.index
        ]
        low, high = _ci_bounds(shown[metric + "_ci"])
        value = shown[metric].to_numpy(dtype=float)
        # a percentile interval need not contain the point estimate (and its bounds are rounded
        # to 3 places): a whisker is never negative, a missing interval has none
        errors = np.nan_to_num(np.clip([value - low, high - value], 0, None))
        right.barh(ys, value, xerr=errors, color=colors, ecolor="#666666", capsize=2)
        right.set_yticks(ys, shown.index, fontsize=8)
        right.invert_yaxis()
        right.set_xlabel("weighted pairwise ranking error vs experts (lower is better)")
    right.set_title("Students, class mean and models scored like judges")

    notes = [
        f"{ratings['rater'].nunique()} students, {len(ratings)} ratings of "
        f"{ratings['critique_id'].nunique()} critiques; experts: the mean of "
        f"{len(data.raters())} raters in {data.name or 'the dataset'}.",
        "Every judge is scored on the critiques the class rated. Ranking errors compare the order "
        "of critiques of the same position only; with few positions their 95% intervals (the "
        "whiskers, and the _ci columns) are wide.",
    ]
    keep = [
        "critiques",
        metric,
        metric + "_ci",
        "pairwise_ranking_error",
        "custom_loss",
        "mse_overall",
        "kendall_tau_overall",
    ]
    board = board[[c for c in keep if c in board.columns]]
    return Report(
        "Class ratings vs experts vs models",
        frame,
        fig,
        {"judges": board},
        {},
        [f"Warning: {w}." for w in warnings] + notes,
        warnings,
    )


def _ci_bounds(cis: Any) -> tuple[Any, Any]:
    """The two bounds of ``"[0.1, 0.3]"`` intervals as float arrays (NaN for ``"n/a"``)."""
    import numpy as np

    pairs = []
    for text in cis:
        try:
            low, high = (float(x) for x in str(text).strip("[] ").split(","))
        except ValueError:
            low = high = math.nan
        pairs.append((low, high))
    bounds = np.array(pairs, dtype=float).reshape(-1, 2)
    return bounds[:, 0], bounds[:, 1]


# -- feedback forms ------------------------------------------------------------------------------

_COLORS = {1: "#b3261e", 2: "#e8908a", 3: "#c9c9c9", 4: "#8ab4e8", 5: "#1f5fbf"}


def feedback_report(source: str | Path) -> Report:
    """Likert distributions (per item, and per session when there are several) and open answers."""
    import pandas as pd

    from argnb.exercises.classdata import SCALE

    forms = read_feedback(source)
    rows = []
    for key, statement in LIKERT.items():
        col = forms[key].dropna()
        counts = {str(k): int((col == k).sum()) for k in SCALE}
        n = len(col)
        rows.append(
            {
                "item": key,
                "statement": statement,
                "n": n,
                "mean": col.mean() if n else math.nan,
                "median": col.median() if n else math.nan,
                "agree %": 100 * (col >= 4).mean() if n else math.nan,
                "disagree %": 100 * (col <= 2).mean() if n else math.nan,
                **counts,
            }
        )
    frame = pd.DataFrame(rows).set_index("item")
    tables = {}
    if forms["session"].nunique() > 1:
        tables["mean per session"] = forms.groupby("session")[list(LIKERT)].mean().T

    fig, ax = _figure(10, 0.45 * len(LIKERT) + 1.4)
    for i, key in enumerate(LIKERT):
        n = frame.loc[key, "n"]
        if not n:
            continue
        share = {k: 100 * frame.loc[key, str(k)] / n for k in SCALE}
        left = -(share[1] + share[2] + share[3] / 2)  # centre the neutral answers on 0
        for k in SCALE:
            ax.barh(i, share[k], left=left, color=_COLORS[k], label=SCALE[k] if i == 0 else None)
            left += share[k]
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(LIKERT)), [f"{k} (n={frame.loc[k, 'n']})" for k in LIKERT], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(-100, 100)
    ax.set_xlabel("% of answers (disagree ← → agree)")
    ax.set_title("Roundtable feedback: how students rated each statement")
    ax.legend(fontsize=8, ncols=5, loc="upper center", bbox_to_anchor=(0.5, -0.18))

    texts = {q: [a for a in forms[key] if a] for key, q in OPEN.items()}
    notes = [
        f"{forms['student'].nunique()} students, {len(forms)} forms, "
        f"{forms['session'].nunique()} session(s). Open answers are listed without names."
    ]
    return Report("Roundtable feedback", frame, fig, tables, texts, notes)


def write_report(source: str | Path, kind: str, out: str | Path) -> Report:
    """The ``argnb exercises report`` command: build the report of ``kind`` and save it as HTML
    (the report is returned: the command prints its warnings)."""
    if kind == "ratings":
        report = ratings_report(source)
    elif kind == "feedback":
        report = feedback_report(source)
    else:
        raise ClassDataError(f"unknown report kind {kind!r}", hint="use ratings or feedback")
    report.save(out)
    return report
