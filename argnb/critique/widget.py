"""The learner-rating widget: read a position and a critique, set seven sliders, then compare.

After *Compare*, the learner sees their rating next to the experts' and (if given) a judge's, their
custom loss against the experts (the same loss judges are scored with), and a short explanation of
where they disagree most. Everything shown that comes from data or models is HTML-escaped.
The learner's ratings are kept (``.ratings``) and export to the class-table format
(``.to_frame("name")``) that :func:`argnb.critique.load_class_ratings` reads back.
"""

from __future__ import annotations

from typing import Any

from argnb.critique.data import MEAN, CritiqueDataset
from argnb.critique.metrics import as_ratings, custom_loss_terms, custom_weighted_loss
from argnb.critique.rubric import DEFINITIONS, DIMENSIONS, LABELS, refutation
from argnb.gate import REASONS
from argnb.views import UNREADABLE, esc, gated_html
from argnb.widgets.static import StaticNote, live_box

#: what is compared: the scored quantities (the product instead of its two factors)
SCORED = ("overall", "refutation", "correctness", "clarity", "dead_weight", "single_issue")
_NAMES = {**LABELS, "refutation": "strength × centrality"}


def _fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:.2f}"


def _with_product(r: dict[str, float]) -> dict[str, float]:
    out = dict(r)
    prod = refutation(r)
    if prod is not None:
        out["refutation"] = prod
    return out


def explain_disagreement(mine: dict[str, float], expert: dict[str, float]) -> str:
    """Plain-text explanation of the largest disagreement between two ratings of one critique."""
    a, b = _with_product(mine), _with_product(expert)
    gaps = [(abs(a[k] - b[k]), k) for k in SCORED if k in a and k in b]
    if not gaps:
        return "Nothing to compare yet."
    gap, key = max(gaps)
    if gap < 0.1:
        text = "You agree with the experts to within 0.1 on everything that is scored. Well judged."
    else:
        direction = "higher" if a[key] > b[key] else "lower"
        text = (
            f"Largest disagreement: {_NAMES[key]} — you gave {a[key]:.2f}, the experts "
            f"{b[key]:.2f} ({direction} by {gap:.2f}). "
        )
        if key == "refutation":
            text += (
                "This product is how far the critique refutes the position. Ask which claims it "
                "attacks, how much the position needs them (centrality), and how far it really "
                "knocks them down (strength)."
            )
            factors = [
                (abs(a[d] - b[d]), d) for d in ("centrality", "strength") if d in a and d in b
            ]
            if factors:
                _, d = max(factors)
                text += f" Your {d} differs most: {a[d]:.2f} against {b[d]:.2f}."
        elif key == "overall":
            ref = b.get("refutation")
            anchor = f" (the experts' product is {ref:.2f})" if ref is not None else ""
            text += (
                "Overall should start from strength × centrality" + anchor + ", then move a "
                "little for insight, clarity, errors and padding."
            )
        else:
            text += DEFINITIONS[key]
    split = [d for d in ("centrality", "strength") if d in a and d in b and abs(a[d] - b[d]) >= 0.3]
    if (
        split
        and "refutation" in a
        and "refutation" in b
        and abs(a["refutation"] - b["refutation"]) < 0.1
    ):
        text += (
            f" You split centrality and strength differently from the experts ({', '.join(split)}), "
            "but your product is close to theirs — and only the product is scored, because that "
            "split is often genuinely ambiguous."
        )
    return text


class RatingWidget:
    """``RatingWidget(data, predictions).display()`` — rate, then compare with experts and a judge."""

    def __init__(
        self,
        dataset: CritiqueDataset,
        predictions: Any = None,
        *,
        human: str = MEAN,
        critique_id: str | None = None,
        judge_name: str = "judge",
    ) -> None:
        import ipywidgets as w

        self.dataset = dataset
        self.human = human
        self.reference = dataset.reference(human)
        self.predictions = as_ratings(predictions) if predictions is not None else {}
        self.reasoning = {}
        #: why a judge's answer was never usable (the gate stopped it, or it did not validate):
        #: its "reasoning" is then the model's raw text, shown only marked (argnb.views.gated_html)
        self.unusable: dict[str, str] = {}
        if predictions is not None and not isinstance(predictions, dict):
            self.reasoning = {
                str(r["critique_id"]): str(r.get("reasoning", "")) for r in predictions
            }
            self.unusable = {
                str(r["critique_id"]): str(r["error"]) for r in predictions if r.get("error")
            }
        self.judge_name = judge_name
        self.ratings: dict[str, dict[str, float]] = {}
        self.picker = w.Dropdown(
            options=[(f"{it.position_id} · {it.critique_id}", it.critique_id) for it in dataset],
            description="Critique",
            layout=w.Layout(width="420px"),
        )
        self.text = w.HTML()
        self.sliders = {
            d: w.FloatSlider(
                value=0.5,
                min=0.0,
                max=1.0,
                step=0.05,
                description=LABELS[d],
                tooltip=DEFINITIONS[d],
                readout_format=".2f",
                style={"description_width": "110px"},
                layout=w.Layout(width="460px"),
            )
            for d in DIMENSIONS
        }
        self.hint = w.HTML()
        for d, s in self.sliders.items():
            s.observe(lambda _c, d=d: self._hint(d), names="value")
        self.compare_button = w.Button(
            description="Compare with experts",
            button_style="primary",
            icon="balance-scale",
            layout=w.Layout(width="auto"),  # the default width cut the label to "Compare with…"
        )
        self.result = w.HTML()
        self.note = StaticNote()
        self.compare_button.on_click(lambda _b: self.compare())
        self.picker.observe(lambda c: self.show(c["new"]), names="value")
        self.box = live_box(
            "Rating widget",
            [
                self.picker,
                self.text,
                w.VBox(list(self.sliders.values())),
                self.hint,
                self.compare_button,
                self.result,
            ],
        )
        self.show(critique_id or dataset.ids[0])

    # -- state ---------------------------------------------------------------------------------
    @property
    def critique_id(self) -> str:
        return str(self.picker.value)

    def show(self, critique_id: str) -> None:
        """Switch to a critique: its text, the learner's earlier rating (or neutral sliders)."""
        item = self.dataset[critique_id]
        if self.picker.value != critique_id:
            self.picker.value = critique_id  # re-enters show() through the observer
            return
        self.text.value = (
            "<div style='max-width:820px'>"
            f"<p><b>Position</b> ({esc(item.position_id)})</p>"
            f"<blockquote>{esc(item.position)}</blockquote>"
            f"<p><b>Critique</b> ({esc(item.critique_id)})</p>"
            f"<blockquote>{esc(item.critique)}</blockquote></div>"
        )
        previous = self.ratings.get(critique_id, {})
        for d, s in self.sliders.items():
            s.value = previous.get(d, 0.5)
        self.result.value = ""
        self._hint("centrality")

    def _hint(self, dim: str) -> None:
        c, s = self.sliders["centrality"].value, self.sliders["strength"].value
        self.hint.value = (
            f"<small><b>{esc(LABELS[dim])}</b>: {esc(DEFINITIONS[dim])}<br>"
            f"Your strength × centrality: <b>{c * s:.2f}</b> — anchor overall on it.</small>"
        )

    def set_values(self, values: dict[str, float]) -> None:
        """Move the sliders (what a learner does by hand; handy in scripts and tests)."""
        for d, v in values.items():
            self.sliders[d].value = v

    def current(self) -> dict[str, float]:
        return {d: float(s.value) for d, s in self.sliders.items()}

    # -- comparing -----------------------------------------------------------------------------
    def comparison(
        self, critique_id: str | None = None, mine: dict[str, float] | None = None
    ) -> Any:
        """DataFrame: rows are dimensions (+ the product), columns you / experts / each rater / judge.

        ``mine`` is a rating to show as "you" (default: the learner's recorded one, if any).
        """
        import pandas as pd

        cid = critique_id or self.critique_id
        item = self.dataset[cid]
        cols: dict[str, dict[str, float]] = {}
        mine = mine if mine is not None else self.ratings.get(cid)
        if mine is not None:
            cols["you"] = mine
        cols["experts (mean)" if self.human == MEAN else self.human] = self.reference.get(cid, {})
        if self.human == MEAN and len(item.ratings) > 1:
            cols.update({f"· {r}": v for r, v in item.ratings.items()})
        if cid in self.predictions:
            cols[self.judge_name] = self.predictions[cid]
        rows = [*DIMENSIONS, "refutation"]
        data = {name: [_with_product(r).get(k) for k in rows] for name, r in cols.items()}
        return pd.DataFrame(data, index=[_NAMES[k] for k in rows])

    def comparison_html(self, critique_id: str, mine: dict[str, float]) -> str:
        """The comparison of ``mine`` with the experts and the judge, as HTML; records nothing."""
        cid = critique_id
        expert = self.reference.get(cid, {})
        table = self.comparison(cid, mine)
        head = "".join(f"<th>{esc(str(c))}</th>" for c in table.columns)
        body = ""
        for idx, row in table.iterrows():
            cells = "".join(
                f"<td style='text-align:right'>{_fmt(None if v != v else v)}</td>" for v in row
            )
            body += f"<tr><th style='text-align:left'>{esc(str(idx))}</th>{cells}</tr>"
        parts = [f"<table><tr><th></th>{head}</tr>{body}</table>"]
        if expert:
            loss = custom_weighted_loss(expert, mine)
            line = f"Your custom loss against the experts: <b>{loss:.3f}</b>"
            pred = self.predictions.get(cid)
            if pred:
                judge_loss = custom_weighted_loss(expert, pred)
                line += f"; the {esc(self.judge_name)}'s: <b>{judge_loss:.3f}</b>"
            used = ", ".join(f"{w:g}·|Δ{_NAMES[k]}|" for k, w, _ in custom_loss_terms(expert, mine))
            parts.append(f"<p>{line} (0 is perfect; terms: {esc(used)}).</p>")
            parts.append(f"<p>{esc(explain_disagreement(mine, expert))}</p>")
        else:
            parts.append("<p>No expert rating for this critique.</p>")
        if cid in self.unusable:
            # the gate's reasons as they are; a parser's error stays in the record
            error = self.unusable[cid]
            gated = all(r in REASONS.values() for r in error.split("; "))
            why = error if gated else UNREADABLE
            parts.append(gated_html(why, self.reasoning.get(cid, ""), f"the {self.judge_name}"))
        elif self.reasoning.get(cid):
            parts.append(
                f"<details><summary>The {esc(self.judge_name)}'s reasoning</summary>"
                f"<pre style='white-space:pre-wrap'>{esc(self.reasoning[cid])}</pre>"
                "</details>"
            )
        return "".join(parts)

    def preview(self, values: dict[str, float], critique_id: str | None = None) -> str:
        """What *Compare* would show for ``values``, without touching the sliders or the
        learner's ratings (for worked examples in a notebook)."""
        unknown = sorted(set(values) - set(DIMENSIONS))
        if unknown:
            raise ValueError(f"not rubric dimensions: {unknown}; use {list(DIMENSIONS)}")
        cid = critique_id or self.critique_id
        return self.comparison_html(cid, {d: float(v) for d, v in values.items()})

    def compare(self) -> str:
        """Record the sliders as the learner's rating and show the comparison; returns the HTML."""
        cid = self.critique_id
        mine = self.current()
        self.ratings[cid] = mine
        self.result.value = self.comparison_html(cid, mine)
        self.note.update(self._summary_html())
        return self.result.value

    def _summary_html(self) -> str:
        """The learner's ratings so far, as a small static table (kept in the saved notebook)."""
        rows = ""
        for cid, r in self.ratings.items():
            expert = self.reference.get(cid, {})
            loss = f"{custom_weighted_loss(expert, r):.3f}" if expert else "–"
            rows += (
                f"<tr><td>{esc(cid)}</td><td style='text-align:right'>"
                f"{_fmt(r.get('overall'))}</td><td style='text-align:right'>"
                f"{_fmt(refutation(r))}</td><td style='text-align:right'>{loss}</td></tr>"
            )
        return (
            f'Your ratings so far ({len(self.ratings)}; in code: <code>to_frame("name")</code>):'
            "<table><tr><th>critique</th><th>overall</th><th>strength × centrality</th>"
            f"<th>custom loss</th></tr>{rows}</table>"
        )

    def to_frame(self, learner: str = "me") -> Any:
        """The learner's ratings as rows of a class table (rater, critique_id, seven dimensions)."""
        import pandas as pd

        rows = [{"rater": learner, "critique_id": c, **r} for c, r in self.ratings.items()]
        return pd.DataFrame(rows, columns=["rater", "critique_id", *DIMENSIONS])

    def display(self) -> None:
        from IPython.display import display

        display(self.box)
        self.note.display()

    def _ipython_display_(self) -> None:
        self.display()
