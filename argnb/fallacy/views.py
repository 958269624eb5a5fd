"""Notebook views of fallacy results: report tables, a confidence histogram, a classify widget.

Views read predictions, transcripts and reports; the widget's button is the only thing here that
calls a model (through :class:`~argnb.fallacy.baselines.Baseline`). Every piece of text from a
model, a dataset or a user is escaped before it goes into HTML.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from argnb.fallacy.baselines import METHOD_NAMES, Baseline, Prediction
from argnb.fallacy.metrics import run_on
from argnb.views import UNREADABLE, gated_html
from argnb.views import esc as _e
from argnb.words import count

if TYPE_CHECKING:
    from argnb.fallacy.deliberation import DeliberationResult


def histogram_html(hist: dict[str, int], title: str = "confidence") -> str:
    """Horizontal bars for a ``{"0.8-0.9": n, ...}`` histogram (no plotting library needed)."""
    top = max(hist.values(), default=0) or 1
    rows = "".join(
        f"<tr><td style='padding:1px 6px'>{_e(k)}</td>"
        f"<td style='padding:1px'><div style='background:#4a7ab5;height:12px;"
        f"width:{round(240 * v / top)}px'></div></td><td style='padding:1px 6px'>{v}</td></tr>"
        for k, v in hist.items()
    )
    return f"<table><tr><th colspan=3 style='text-align:left'>{_e(title)}</th></tr>{rows}</table>"


def _acc(value: float, n: int) -> str:
    """An accuracy over ``n`` items: undefined (not zero) when there are none."""
    return f"{value:.3f}" if n else "n/a"


NO_DISAGREEMENT = (
    "No disagreements in this sample: the two members gave the same label on every item (or "
    "one answer was invalid), so no deliberation ran and there is nothing to resolve."
)


def report_html(rep: dict[str, Any]) -> str:
    """Per-source accuracy, the confusion matrix, ensemble figures and the confidence histogram.

    A figure over no items is undefined, and is shown as such: never as a zero.
    """
    if not rep.get("n"):
        return "<div class='argnb-fallacy-report'><p>No finished items yet.</p></div>"
    parts = [
        f"<p><b>{_e(rep.get('method'))}</b> on {rep['n']} items: accuracy "
        f"<b>{rep['accuracy']:.3f}</b>, macro-F1 {rep['macro_f1']:.3f}, invalid items "
        f"{rep['invalid_rate']:.1%}, invalid model outputs {rep['invalid_output_rate']:.1%}, "
        f"{rep['calls_per_item']} calls and "
        f"{rep['prompt_tokens_per_item'] + rep['completion_tokens_per_item']:.0f} tokens per item.</p>",
        f"<p>Run on {_e(run_on(rep))}"
        + (f", {rep['run']['wall_s']:.0f} s wall time" if "wall_s" in rep.get("run", {}) else "")
        + ".</p>",
    ]
    src = "".join(
        f"<tr><td>{_e(k)}</td><td>{v['n']}</td><td>{v['gold_fallacious']}</td>"
        f"<td>{_acc(v['accuracy'], v['n'])}</td></tr>"
        for k, v in rep["per_source"].items()
    )
    parts.append(
        "<table><tr><th>source</th><th>items</th><th>fallacious</th><th>accuracy</th></tr>"
        f"{src}</table>"
    )
    c = rep["confusion"]
    parts.append(
        "<table><tr><th>gold \\ predicted</th><th>0</th><th>1</th><th>invalid</th></tr>"
        + "".join(
            f"<tr><td>{g}</td><td>{c[g]['0']}</td><td>{c[g]['1']}</td><td>{c[g]['invalid']}</td></tr>"
            for g in ("0", "1")
        )
        + "</table>"
    )
    if "members" in rep:
        d = rep["disagreement"]
        members = ", ".join(f"{_e(k)} {v['accuracy']:.3f}" for k, v in rep["members"].items())
        text = (
            f"<p>Members alone: {members}. They agree on {rep['agreement_rate']:.1%} of the items "
            f"(accuracy there {_acc(rep['agreed_accuracy'], rep['agreed'])}) and disagree on "
            f"{rep['disagreed']}. "
        )
        if d["n"]:
            text += (
                f"Ensemble with a random tie-break: {rep['accuracy_random_tiebreak']:.3f}; with "
                f"the resolver: {rep['accuracy']:.3f}. On the disagreements: accuracy "
                f"{d['accuracy']:.3f}, macro-F1 {d['macro_f1']:.3f} (random: "
                f"{d['accuracy_random']:.3f} / {d['macro_f1_random']:.3f}); resolved by "
                + (", ".join(f"{_e(k)} {v}" for k, v in d["resolutions"].items()))
                + ".</p>"
            )
        else:
            text += f"</p><p><b>{_e(NO_DISAGREEMENT)}</b></p>"
        parts.append(text)
    if "confidence_histogram" in rep:
        if rep["confidences"]:
            rounds = ", ".join(
                f"{count(v, 'deliberation')} in {count(int(k), 'round')}"
                if str(k).isdigit()
                else f"{_e(k)}: {v}"
                for k, v in rep["rounds"].items()
            )
            parts.append(
                f"<p>Rounds used: {rounds or 'none'}. {rep['confidences']} confidences, "
                f"{rep['confidence_share_0.8_0.9']:.1%} of them between 0.8 and 0.9.</p>"
            )
            parts.append(histogram_html(rep["confidence_histogram"], "deliberation confidences"))
        else:
            parts.append("<p>No agent voted, so there are no confidences to show.</p>")
    return "<div class='argnb-fallacy-report'>" + "".join(parts) + "</div>"


class Report(dict):
    """A report dict that renders as HTML in a notebook."""

    def _repr_html_(self) -> str:
        return report_html(self)


def prediction_html(pred: Prediction) -> str:
    """One baseline answer: label (or invalid), its reasoning fields and its cost. An answer
    that was never usable (the gate stopped it, or it could not be read) shows muted, marked
    with its reason, the model's words one click away (:func:`argnb.views.gated_html`)."""
    verdict = {1: "fallacious (1)", 0: "not fallacious (0)"}.get(pred.label, "invalid output")
    fields = "".join(f"<li><b>{_e(k)}</b>: {_e(v)}</li>" for k, v in pred.reasoning.items())
    if pred.valid:
        err = f"<p style='color:#b00'>{_e(pred.error)}</p>" if pred.error else ""
    else:
        err = gated_html(pred.gate or UNREADABLE, pred.answer.raw)
    return (
        f"<div><b>{_e(METHOD_NAMES.get(pred.method, pred.method))}</b> → <b>{_e(verdict)}</b>"
        f"<ul>{fields}</ul>{err}<small>{pred.cost}</small></div>"
    )


EXAMPLE = "Everyone I know uses this app, so it must be the safest one."


class ClassifyWidget:
    """Type an argument, pick a method, press Classify (ipywidgets); ``classify_widget()`` builds it.

    A blank argument is refused before any model call (a tiny model answers "fallacious" to
    anything, even nothing). The latest answer is also written into a static line under the
    widget (:class:`~argnb.widgets.static.StaticNote`), so the saved notebook keeps it.
    """

    def __init__(self, backend: Any = None, text: str = EXAMPLE) -> None:
        import ipywidgets as w

        from argnb.widgets.static import StaticNote, live_box

        self.backend = backend
        # the description sits above the box: beside it, it pushed a 100% wide box past the edge
        self.label = w.HTML("<b>Argument</b>")
        self.text = w.Textarea(
            value=text,
            placeholder="Type an argument: a claim and the reason given for it.",
            layout=w.Layout(width="auto", max_width="760px", height="80px"),
        )
        self.method = w.Dropdown(
            options=[(v, k) for k, v in METHOD_NAMES.items()], value="zero", description="Method"
        )
        self.button = w.Button(description="Classify", button_style="primary")
        self.out = w.HTML()
        self.note = StaticNote()
        self.box = live_box(
            "Classify widget", [self.label, self.text, w.HBox([self.method, self.button]), self.out]
        )
        self.button.on_click(lambda _: self.classify())
        self.text.observe(lambda _: self._ready(), names="value")
        self._ready()

    def _ready(self) -> None:
        blank = not self.text.value.strip()
        self.button.disabled = blank
        self.button.tooltip = "type an argument first" if blank else ""

    def classify(self) -> Prediction | None:
        """Classify the text with the chosen method; show the answer (or why there is none)."""
        argument = self.text.value.strip()
        if not argument:
            self.out.value = "<p style='color:#b00'>Type an argument first: the box is empty.</p>"
            return None
        self.button.disabled = True
        self.out.value = "<i>asking the model…</i>"
        try:
            pred = Baseline(self.method.value, self.backend).run(argument)
        except Exception as exc:  # show any failure in the widget instead of losing it
            self.out.value = f"<p style='color:#b00'>{_e(exc)}</p>"
            return None
        finally:
            self._ready()
        self.out.value = prediction_html(pred)
        verdict = {1: "fallacious (1)", 0: "not fallacious (0)"}.get(pred.label, "invalid output")
        short = argument if len(argument) <= 120 else argument[:119] + "…"
        self.note.update(
            f"Last answer: <b>{_e(verdict)}</b> by {_e(METHOD_NAMES[pred.method])} "
            f"for “{_e(short)}”"
        )
        return pred

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.box)
        self.note.display()


def classify_widget(backend: Any = None) -> ClassifyWidget:
    """Type an argument, pick a method, press Classify (see :class:`ClassifyWidget`)."""
    return ClassifyWidget(backend)


def render_rounds(result: DeliberationResult) -> str:
    """A compact round-by-agent grid of votes and confidences (escaped HTML)."""
    agents: list[str] = []
    for rnd in result.votes:
        for v in rnd:
            if v.agent not in agents:
                agents.append(v.agent)
    head = "".join(f"<th style='padding:4px'>{_e(a)}</th>" for a in agents)
    rows = []
    for i, rnd in enumerate(result.votes, start=1):
        by = {v.agent: v for v in rnd}
        order = " → ".join(_e(v.agent) for v in rnd)
        cells = []
        for a in agents:
            v = by.get(a)
            if v is None:
                cells.append("<td></td>")
            elif not v.valid:
                cells.append("<td style='padding:4px;color:#b00'>invalid</td>")
            else:
                cells.append(
                    f"<td style='padding:4px'>vote <b>{v.vote}</b> · conf {v.confidence:.2f}</td>"
                )
        rows.append(
            f"<tr><td style='padding:4px'>round {i}<br><small>{order}</small></td>{''.join(cells)}</tr>"
        )
    rounds = count(result.rounds, "round")
    if result.transcript.meta.get("reference"):  # authored answers: no model was asked
        cost = f"{count(len(result.turns), 'authored turn')} replayed, no model called"
    else:
        cost = str(result.cost)
    outcome = (
        f"<p>Result: <b>{_e(str(result.label))}</b> by "
        f"<b>{_e(result.resolution)}</b> after {rounds}; {cost}.</p>"
    )
    # answers that were never usable: muted, marked with the reason, the words one click away
    unusable = "".join(
        gated_html(
            t.payload.gate or UNREADABLE,
            t.payload.raw,
            f"{t.speaker}, round {t.round}",
        )
        for t in result.turns
        if not t.valid and (t.payload.gate or t.payload.raw)  # type: ignore[attr-defined]
    )
    return (
        "<div class='argnb-deliberation'><table style='border-collapse:collapse'>"
        f"<tr><th></th>{head}</tr>{''.join(rows)}</table>{unusable}{outcome}</div>"
    )
