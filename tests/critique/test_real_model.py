"""Both judges on the real embedded model (SmolLM2-135M): schema-valid, in range, reproducible."""

from __future__ import annotations

import pytest

from argnb.critique.judge import Judge, run_judge
from argnb.critique.metrics import score
from argnb.critique.rubric import DIMENSIONS
from argnb.critique.schemas import GRID
from argnb.gate import REASONS


@pytest.mark.model
@pytest.mark.full  # make test-all only (docs/testing.md): three critiques and a repeat
def test_baseline_judge_on_the_embedded_model(local, examples, tmp_path):
    data = examples.subset(["det-1", "det-2", "det-3"])
    recs = run_judge(Judge(local, "baseline"), data, out=tmp_path / "p.jsonl", progress=False)
    assert len(recs) == 3
    rated = [r for r in recs if "error" not in r]
    for r in recs:
        if "error" in r:  # the tiny model's answer stopped twice by the gate: recorded as such
            assert r["error"] in REASONS.values() and not r["ratings"], r["error"]
        else:
            assert r["ratings"]["overall"] in GRID and r["reasoning"]
        assert r["usage"]["completion_tokens"] > 0 and r["model"] == "smollm2-135m"
    assert rated, [r["error"] for r in recs]  # not every answer of three stopped
    s = score(data, recs, n_boot=100)
    assert 0.0 <= s.judge["pairwise_ranking_error"].value <= 1.0
    first = rated[0]
    again = Judge(local, "baseline").rate(data[first["critique_id"]])
    assert again.ratings == first["ratings"] and again.reasoning == first["reasoning"]


@pytest.mark.model
def test_one_critique_through_the_baseline_judge_on_the_embedded_model(local, examples, tmp_path):
    """make test's real-model check of the module: one critique, zero-shot (~700 prompt tokens),
    through the batch runner; the rubric judge's ~3,500-token prompt takes a
    minute on one thread, so it runs in make test-all (below)."""
    data = examples.subset(["det-1"])
    (rec,) = run_judge(Judge(local, "baseline"), data, out=tmp_path / "p.jsonl", progress=False)
    if "error" in rec:  # the tiny model's answer stopped twice by the gate: recorded as such
        assert rec["error"] in REASONS.values() and not rec["ratings"], rec["error"]
    else:
        assert rec["ratings"]["overall"] in GRID and rec["reasoning"]
    assert rec["usage"]["completion_tokens"] > 0 and rec["model"] == "smollm2-135m"
    assert len((tmp_path / "p.jsonl").read_text().splitlines()) == 1  # saved for a resume


@pytest.mark.model
@pytest.mark.full  # make test-all only: a ~3,500-token prompt, a minute on one thread
def test_rubric_judge_on_the_embedded_model(local, examples):
    j = Judge(local, "rubric").rate(examples["wager-1"])
    assert j.error is None
    assert set(j.ratings) == set(DIMENSIONS) and all(v in GRID for v in j.ratings.values())
    assert set(j.reasoning_by_dimension) == set(DIMENSIONS)
