"""Views escape untrusted text; the widget builds without a model call."""

from __future__ import annotations

from argnb.fallacy.baselines import Prediction
from argnb.fallacy.benchmark import bench
from argnb.fallacy.payloads import BaselineAnswer
from argnb.fallacy.views import Report, classify_widget, histogram_html, prediction_html
from argnb.llm import ScriptedBackend
from argnb.transcript import Transcript, Turn

EVIL = "<img src=x onerror=alert(1)>"


def test_report_html_escapes_sources_and_member_names():
    items = [{"id": "1", "source": EVIL, "text": "t", "label": 1}]
    backend = ScriptedBackend([{"label": 1}, {"label": 1}], model=EVIL)
    rep = Report(bench(items, method="ensemble", backend=backend, progress=False))
    html = rep._repr_html_()
    assert "<img" not in html and "&lt;img" in html
    assert "accuracy" in html and "agree on 100.0%" in html


def test_prediction_html_escapes_model_text():
    answer = BaselineAnswer(label="invalid", method="cot", fallacy=EVIL, error=EVIL)
    p = Prediction(Transcript(kind="fallacy-baseline", turns=[Turn(speaker="x", payload=answer)]))
    html = prediction_html(p)
    assert "<img" not in html and "invalid output" in html


def test_histogram_bars_scale_to_the_largest_bin():
    html = histogram_html({"0.0-0.5": 1, "0.5-1.0": 4})
    assert "width:60px" in html and "width:240px" in html


def test_widget_builds_without_calling_the_model():
    backend = ScriptedBackend([])
    w = classify_widget(backend)
    assert backend.requests == []
    backend._queue.append({"label": 1})
    w.button.click()
    assert "fallacious (1)" in w.out.value
