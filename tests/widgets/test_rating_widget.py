"""Walkthrough item 4: notebook 03's worked example does not fill the learner's own widget."""

from __future__ import annotations

import pytest

from argnb.critique.data import load_examples
from argnb.critique.widget import RatingWidget

from .notebook_cells import run_until

pytest.importorskip("ipywidgets")

DECISIVE = {
    "centrality": 1.0,
    "strength": 0.9,
    "correctness": 0.9,
    "clarity": 0.9,
    "dead_weight": 0.0,
    "single_issue": 1.0,
    "overall": 0.85,
}


def test_notebook_03_demo_leaves_the_learners_widget_empty():
    ns = run_until("03_critique_rating.ipynb", 'widget.to_frame("me")')
    widget = ns["widget"]
    assert widget.ratings == {}
    assert widget.to_frame("me").empty  # nothing the learner did not rate goes to the class CSV
    assert set(widget.current().values()) == {0.5}  # the sliders were not moved for the learner


def test_preview_shows_the_comparison_and_records_nothing():
    w = RatingWidget(load_examples(), critique_id="det-2")
    page = w.preview(DECISIVE, critique_id="det-3")
    assert "Your custom loss against the experts" in page and "you" in page
    assert w.ratings == {} and w.critique_id == "det-2" and set(w.current().values()) == {0.5}
    with pytest.raises(ValueError, match="not rubric dimensions"):
        w.preview({"overal": 0.5})


def test_compare_records_and_keeps_a_static_summary():
    w = RatingWidget(load_examples(), critique_id="det-3")
    w.set_values(DECISIVE)
    w.compare_button.click()
    assert list(w.ratings) == ["det-3"]
    assert list(w.to_frame("ana")["critique_id"]) == ["det-3"]
    assert "det-3" in w.note.result_html and "0.85" in w.note.result_html
