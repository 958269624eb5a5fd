"""Walkthrough item 2: a report over a sample without disagreements shows no made-up zeros."""

from __future__ import annotations

from argnb.fallacy.benchmark import bench
from argnb.fallacy.metrics import format_report
from argnb.fallacy.views import NO_DISAGREEMENT, Report
from argnb.llm import ScriptedBackend

ITEMS = [
    {"id": str(i), "source": "ours", "text": f"argument {i}", "label": i % 2} for i in range(4)
]


def test_no_disagreement_is_said_not_shown_as_zero():
    agree = ScriptedBackend(lambda r: {"label": 1})  # both members always answer 1
    rep = bench(ITEMS, method="ensemble", backend=agree, progress=False)
    assert rep["disagreed"] == 0
    page = Report(rep)._repr_html_()
    assert NO_DISAGREEMENT in page
    assert "resolved by {}" not in page and "On the disagreements: accuracy" not in page
    assert "deliberation confidences" not in page  # no all-zero histogram
    assert "No agent voted" in page
    text = format_report(rep)
    assert "no disagreements in this sample" in text
    assert "on the 0 disagreements" not in text and "0.0% in [0.8, 0.9]" not in text


def test_disagreements_still_show_their_numbers():
    def answer(request):
        if request.schema and request.schema.get("title") == "Contribution":
            return {"reasoning": "r", "action": "argue", "vote": 1, "confidence": 0.8}
        # the zero-shot member says 1, the few-shot member (its prompt has examples) says 0
        return {"label": 0 if "Example" in request.prompt or len(request.messages) > 2 else 1}

    rep = bench(ITEMS, method="ensemble", backend=ScriptedBackend(answer), progress=False)
    assert rep["disagreed"] > 0, rep
    page = Report(rep)._repr_html_()
    assert NO_DISAGREEMENT not in page and "On the disagreements: accuracy" in page
    assert "deliberation confidences" in page
