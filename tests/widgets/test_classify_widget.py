"""Walkthrough item 5: no empty argument is classified; undefined values read "n/a" everywhere."""

from __future__ import annotations

import pytest

from argnb.errors import ArgnbError
from argnb.fallacy import classify
from argnb.fallacy.views import classify_widget
from argnb.llm import ScriptedBackend

from .notebook_cells import run_cells


def test_an_empty_argument_is_refused_before_any_model_call():
    backend = ScriptedBackend(lambda r: {"label": 1})
    w = classify_widget(backend)
    w.text.value = "   \n "
    assert w.button.disabled
    w.button.click()  # a click that arrives anyway (ipywidgets runs the handler)
    assert backend.requests == [] and "empty" in w.out.value
    with pytest.raises(ArgnbError, match="empty"):
        classify("", backend)
    assert backend.requests == []


def test_an_answer_is_kept_in_the_static_line():
    w = classify_widget(ScriptedBackend([{"label": 0}]))
    w.text.value = "The <b>bridge</b> cut commutes, so it helped."
    assert not w.button.disabled
    w.button.click()
    assert "not fallacious (0)" in w.out.value
    assert "not fallacious (0)" in w.note.result_html
    assert "&lt;b&gt;bridge" in w.note.result_html  # escaped: it is the learner's text


@pytest.mark.notebook  # runs notebook 03's scoring cells (bootstraps: seconds, not milliseconds)
def test_notebook_03_tables_say_n_a_not_nan():
    _, board = run_cells(
        "03_critique_rating.ipynb",
        "data = load_examples()",
        "baseline_preds = read_predictions",
        "board = score_many(data, judges)",
    )
    page = board.to_html()
    assert "n/a" in page  # the mean baseline's Kendall tau is undefined
    assert "nan" not in page.lower()
