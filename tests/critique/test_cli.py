"""``argnb critique judge`` and ``argnb critique score`` end to end (scripted model)."""

from __future__ import annotations

import json

import pytest

import argnb.cli_common
from argnb.cli import main
from argnb.critique.data import ASSETS
from argnb.critique.rubric import DIMENSIONS
from argnb.critique.schemas import GRID
from argnb.llm.scripted import ScriptedBackend

DATA = str(ASSETS / "examples.jsonl")


@pytest.fixture
def scripted(monkeypatch):
    """Every CLI command gets a scripted backend that rates by critique length."""
    backends: list[ScriptedBackend] = []

    def answer(req):
        score = GRID[len(req.last) % 21]
        if "properties" in req.schema and "centrality" in req.schema["properties"]:
            return {d: {"reasoning": "r", "score": score} for d in DIMENSIONS}
        return {"reasoning": "step by step", "overall": score}

    def fake(args):
        b = ScriptedBackend(answer)
        backends.append(b)
        return b

    monkeypatch.setattr(argnb.cli_common, "backend_from_args", fake)
    return backends


def test_judge_then_score_json(tmp_path, scripted, capsys):
    out = tmp_path / "pred.jsonl"
    assert main(["critique", "judge", "--data", DATA, "--judge", "rubric", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "21/21 critiques rated by the rubric judge on scripted:script" in printed
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 21
    assert {"critique_id", "ratings", "reasoning", "usage"} <= set(lines[0])
    assert set(lines[0]["ratings"]) == set(DIMENSIONS)

    # resumable: a second run asks the model nothing
    assert main(["critique", "judge", "--data", DATA, "--judge", "rubric", "--out", str(out)]) == 0
    assert scripted[-1].requests == []
    assert len(out.read_text().splitlines()) == 21

    argv = ["critique", "score", "--data", DATA, "--pred", str(out), "--json", "--bootstrap", "200"]
    assert main(argv) == 0
    text = capsys.readouterr().out.strip().splitlines()
    metrics = json.loads(text[-1])
    for m in (
        "pairwise_ranking_error",
        "weighted_pairwise_ranking_error",
        "custom_loss",
        "mse_overall",
        "kendall_tau_overall",
    ):
        assert isinstance(metrics[m], float)
        lo, hi = metrics[m + "_ci95"]
        assert lo <= metrics[m] <= hi or m == "kendall_tau_overall"
        assert f"mean_baseline_{m}" in metrics and f"random_judge_{m}" in metrics
    assert metrics["n_critiques"] == 21 and metrics["n_positions_ranked"] == 5
    assert metrics["human"] == "mean" and metrics["models"] == ["scripted:script"]
    assert any("mean baseline" in line for line in text[:-1])  # the readable table comes first


def test_score_against_one_rater_and_recalibrated(tmp_path, scripted, capsys):
    out = tmp_path / "pred.jsonl"
    main(["critique", "judge", "--data", DATA, "--out", str(out), "--limit", "8"])
    capsys.readouterr()
    argv = ["critique", "score", "--data", DATA, "--pred", str(out), "--json", "--bootstrap", "50"]
    assert main([*argv, "--human", "dev", "--recalibrate"]) == 0
    metrics = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert metrics["human"] == "dev" and metrics["recalibrated"] is True
    assert metrics["dimensions"] == ["overall"]
    assert metrics["n_critiques"] == 4  # dev rated 4 of the first 8 critiques (meat: none)
    assert main([*argv, "--human", "nobody"]) == 2
    assert "no rater 'nobody'" in capsys.readouterr().err


def test_score_without_predictions_file_says_what_to_do(tmp_path, capsys):
    assert main(["critique", "score", "--data", DATA, "--pred", str(tmp_path / "none.jsonl")]) == 2
    assert "argnb critique judge" in capsys.readouterr().err
