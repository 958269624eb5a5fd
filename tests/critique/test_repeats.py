"""One rule for loops: a judge's rationale, as shown, never says the same sentence twice.

The scores are kept as answered; the reasoning the widget and the predictions file show keeps
each sentence once (``argnb.words.drop_repeats``, the rule of every spoken text).
"""

from __future__ import annotations

from argnb.critique.judge import Judge
from argnb.critique.rubric import DIMENSIONS
from argnb.llm.scripted import ScriptedBackend

LOOP = "The critique names the premise."


def test_a_baseline_judges_reasoning_keeps_each_sentence_once(examples):
    backend = ScriptedBackend([{"reasoning": f"{LOOP} {LOOP} It is weak.", "overall": 0.35}])
    j = Judge(backend, "baseline").rate(examples["meat-1"])
    assert j.reasoning == f"{LOOP} It is weak."
    assert j.record()["reasoning"] == f"{LOOP} It is weak." and j.ratings == {"overall": 0.35}


def test_a_rubric_judges_reasoning_keeps_each_sentence_once_per_dimension(examples):
    answer = {d: {"reasoning": f"{LOOP} {LOOP} About {d}.", "score": 0.5} for d in DIMENSIONS}
    j = Judge(ScriptedBackend([answer]), "rubric").rate(examples["room-1"])
    assert j.reasoning_by_dimension == {d: f"{LOOP} About {d}." for d in DIMENSIONS}
    assert j.reasoning.count(LOOP) == len(DIMENSIONS)  # once in each dimension's line
    assert j.ratings == dict.fromkeys(DIMENSIONS, 0.5)
