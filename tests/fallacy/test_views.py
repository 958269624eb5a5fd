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


#: an answer the gate stops twice (a heading of the prompt, a schema word), with a payload in it
GATED_RAW = "Your task <script>alert(1)</script> type':'object'"


def _shown(html: str) -> str:
    """The HTML outside the marked blocks' hidden raw text (argnb.views.gated_html)."""
    import re

    return re.sub(r"<details>.*?</details>", "", html, flags=re.S)


def test_a_stopped_answer_shows_muted_with_its_reason_and_the_raw_text_one_click_away():
    from argnb.fallacy.baselines import Baseline
    from argnb.views import GATED

    answer = {
        "restatement": GATED_RAW,
        "conclusion": "c.",
        "premises": ["p."],
        "follows": False,
        "fallacy": "none.",
        "label": 1,
    }
    backend = ScriptedBackend([answer, answer])  # the answer and its one retry
    pred = Baseline("cot", backend).run("Everyone does it, so it is right.")
    assert pred.label == "invalid" and len(backend.requests) == 2
    assert pred.gate.startswith("the model echoed its instructions")
    html = prediction_html(pred)
    assert f"class='{GATED}'" in html and "not shown as an answer" in html
    assert "the model echoed its instructions" in html
    # the raw text is there, escaped, behind a click -- and nowhere outside the marked block
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "Your task" not in _shown(html) and "type&#x27;:" not in _shown(html)
    # the transcript's own HTML marks it the same way
    tr_html = pred.transcript._repr_html_()
    assert f"class='{GATED}'" in tr_html and "<script>" not in tr_html
    assert "Your task" not in _shown(tr_html)


def test_an_answer_that_could_not_be_read_shows_marked_with_the_raw_text():
    from argnb.fallacy.baselines import Baseline
    from argnb.views import UNREADABLE

    backend = ScriptedBackend(["<script>alert(2)</script> no json", "still none"])
    pred = Baseline("cot", backend).run("Everyone does it, so it is right.")
    html = prediction_html(pred)
    assert pred.label == "invalid" and f"not shown as an answer: {UNREADABLE}" in html
    assert "<script>" not in html and "still none" in html
    # the parser's error (it may quote the model and name the answer class) stays off the screen
    assert pred.error and "still none" not in _shown(html) and "CotVerdict" not in html


def test_a_stopped_deliberation_turn_is_marked_under_the_rounds():
    from argnb.fallacy.deliberation import Agent, deliberate
    from argnb.fallacy.views import render_rounds
    from argnb.views import GATED

    stopped = {"action": "propose", "reasoning": GATED_RAW, "vote": 1, "confidence": 0.9}
    ok = {"action": "argue", "reasoning": "It generalises from one case.", "vote": 1}
    a = ScriptedBackend(lambda req: stopped)
    b = ScriptedBackend(lambda req: {**ok, "confidence": 0.7})
    r = deliberate("My uncle smoked and lived to 95.", [Agent("Ada", a), Agent("Bo", b)])
    html = render_rounds(r)
    assert f"class='{GATED}'" in html and "Ada, round 1: not shown as an answer" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "Your task" not in _shown(html)
