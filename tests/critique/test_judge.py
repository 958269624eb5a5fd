"""The judges on a scripted backend: prompts, answers, failures, few-shot turns, resumable runs."""

from __future__ import annotations

import json
import re

import pytest

from argnb.batch import read_jsonl
from argnb.critique.judge import Judge, run_judge
from argnb.critique.rubric import DIMENSIONS
from argnb.critique.schemas import GRID, RubricAnswer
from argnb.errors import BackendUnavailable
from argnb.llm.scripted import Request, ScriptedBackend


def rubric_answer(score: float = 0.5, **override: float) -> dict:
    return {d: {"reasoning": f"about {d}", "score": override.get(d, score)} for d in DIMENSIONS}


def test_baseline_judge_prompt_schema_and_record(examples):
    backend = ScriptedBackend(
        [{"reasoning": "It shows the premise proves too much.", "overall": 0.7}]
    )
    j = Judge(backend, "baseline").rate(examples["meat-1"])
    req = backend.requests[0]
    assert examples["meat-1"].position in req.prompt and examples["meat-1"].critique in req.prompt
    assert "step by step" in req.prompt
    assert list(req.schema["properties"]) == ["reasoning", "overall"]  # reasoning first
    assert req.schema["properties"]["overall"]["enum"] == list(GRID)
    rec = j.record()
    assert rec["critique_id"] == "meat-1" and rec["ratings"] == {"overall": 0.7}
    assert rec["reasoning"].startswith("It shows") and rec["judge"] == "baseline"
    assert rec["usage"]["prompt_tokens"] > 0 and rec["usage"]["completion_tokens"] > 0
    assert rec["backend"] == "scripted" and "error" not in rec


def test_rubric_judge_rates_all_seven_with_reasoning(examples):
    backend = ScriptedBackend([rubric_answer(0.5, centrality=1.0, overall=0.45)])
    j = Judge(backend, "rubric").rate(examples["room-1"])
    prompt = backend.requests[0].prompt
    assert "strength × centrality" in prompt and "Dead weight" in prompt  # the rubric is included
    assert list(backend.requests[0].schema["properties"]) == list(DIMENSIONS)
    assert j.ratings == {**dict.fromkeys(DIMENSIONS, 0.5), "centrality": 1.0, "overall": 0.45}
    assert set(j.reasoning_by_dimension) == set(DIMENSIONS)
    assert "dead weight: about dead_weight" in j.reasoning
    assert j.record()["reasoning_by_dimension"]["overall"] == "about overall"


def test_off_grid_score_gets_one_repair_then_counts(examples):
    backend = ScriptedBackend(
        [{"reasoning": "r", "overall": 1.7}, {"reasoning": "r", "overall": 0.35}]
    )
    j = Judge(backend, "baseline").rate(examples["maj-3"])
    assert j.ratings == {"overall": 0.35} and len(backend.requests) == 2
    assert "not valid" in backend.requests[1].last


def test_invalid_answers_are_recorded_not_lost(examples):
    backend = ScriptedBackend(["I think it is quite good", "still no JSON"])
    j = Judge(backend, "rubric").rate(examples["maj-3"])
    rec = j.record()
    assert rec["ratings"] == {} and rec["error"] and "still no JSON" in rec["reasoning"]


def test_few_shot_examples_come_first_as_earlier_turns(examples):
    backend = ScriptedBackend([rubric_answer()])
    judge = Judge(backend, "rubric", few_shot=True)
    judge.rate(examples["exp-2"])
    msgs = [m for m in backend.requests[0].messages if m.role != "system"]
    assert [m.role for m in msgs] == ["user", "assistant", "user", "assistant", "user"]
    shown = RubricAnswer.model_validate_json(msgs[1].content)
    assert shown.centrality.score == 1.0 and shown.overall.score == 0.65
    assert examples["exp-2"].critique in msgs[-1].content
    assert judge.name == "rubric+few-shot"
    # the long rubric is sent once, as the system turn, not once per example
    assert backend.requests[0].messages[0].role == "system"
    assert backend.requests[0].prompt.count("## Dead weight") == 1
    # the few-shot examples are not critiques of the example dataset
    assert not any(ex in m.content for m in msgs[:-1] for ex in (examples["exp-2"].critique,))


def _by_critique(req: Request) -> dict:
    critique_id = re.search(r"=== CRITIQUE ===\n(.*?)\n", req.last)
    seen = critique_id.group(1) if critique_id else ""
    return {"reasoning": "r", "overall": GRID[len(seen) % 21]}


def test_run_judge_writes_records_and_resumes(examples, tmp_path):
    out = tmp_path / "pred.jsonl"
    subset = examples.subset(examples.ids[:6])
    first = ScriptedBackend(_by_critique)
    recs = run_judge(Judge(first, "baseline"), subset.items[:4], out=out, progress=False)
    assert len(recs) == 4 and len(first.requests) == 4
    # a second run over all six only asks about the two that are missing
    second = ScriptedBackend(_by_critique)
    recs = run_judge(Judge(second, "baseline"), subset, out=out, progress=False)
    assert len(second.requests) == 2
    assert [r["critique_id"] for r in recs] == subset.ids
    lines = read_jsonl(out)
    assert len(lines) == 6 and all(set(r["ratings"]) == {"overall"} for r in lines)
    # and a third run asks nothing at all
    third = ScriptedBackend([])
    assert len(run_judge(Judge(third, "baseline"), subset, out=out, progress=False)) == 6
    assert third.requests == []


def test_a_failing_server_stops_the_run_but_keeps_what_is_done(examples, tmp_path):
    out = tmp_path / "pred.jsonl"
    answers = [{"reasoning": "r", "overall": 0.5}, BackendUnavailable("server gone")]
    with pytest.raises(BackendUnavailable):
        run_judge(
            Judge(ScriptedBackend(answers), "baseline"),
            examples.subset(examples.ids[:3]),
            out=out,
            progress=False,
        )
    assert [json.loads(x)["critique_id"] for x in out.read_text().splitlines()] == ["meat-1"]


def test_answer_schemas_stay_within_what_llama_cpp_grammars_accept():
    """llama.cpp rejects (and the process then crashes on) string fields longer than ~1000 chars."""
    from argnb.critique.schemas import BaselineAnswer

    def max_lengths(node):
        if isinstance(node, dict):
            if "maxLength" in node:
                yield node["maxLength"]
            for v in node.values():
                yield from max_lengths(v)
        elif isinstance(node, list):
            for v in node:
                yield from max_lengths(v)

    for schema in (BaselineAnswer, RubricAnswer):
        lengths = list(max_lengths(schema.model_json_schema()))
        assert lengths and max(lengths) <= 1000


def test_resuming_into_another_judges_file_is_refused(examples, tmp_path):
    from argnb.errors import DataError

    out = tmp_path / "pred.jsonl"
    subset = examples.subset(examples.ids[:2])
    run_judge(Judge(ScriptedBackend(_by_critique), "baseline"), subset, out=out, progress=False)
    with pytest.raises(DataError, match="mix two judges"):
        run_judge(Judge(ScriptedBackend([]), "rubric"), subset, out=out, progress=False)
    assert len(read_jsonl(out)) == 2  # nothing lost
