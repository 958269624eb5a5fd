from __future__ import annotations

import json

import pytest

from argnb.batch import read_jsonl
from argnb.debate.annotate import (
    Annotator,
    annotate_file,
    annotate_store,
    confirm,
    plan,
)
from argnb.debate.corpora import example_memory
from argnb.debate.retrieve import keywords
from argnb.debate.schemas import KeywordsAnswer, LabelAnswer, annotation_schema, scoring_schema
from argnb.debate.schemes import load_schemes
from argnb.errors import ArgnbError, BackendUnavailable
from argnb.llm import ScriptedBackend
from argnb.llm.answer import unbounded

TEXT = "We license drivers because cars can kill; drones can hit crowds too, so license pilots."


def test_every_answer_schema_is_bounded():
    ids = load_schemes().ids
    for schema in (
        annotation_schema(ids),
        scoring_schema(ids),
        scoring_schema(ids[:1]),
        LabelAnswer,
        KeywordsAnswer,
    ):
        assert unbounded(schema) == [], schema.__name__


def test_annotation_then_scoring_are_two_recorded_turns():
    b = ScriptedBackend(
        [
            {
                "schemes": [
                    {"scheme": "analogy", "reason": "drones vs cars"},
                    {"scheme": "analogy", "reason": "again"},
                    {"scheme": "values", "reason": "safety"},
                ]
            },
            {
                "analogy": {"reason": "shared risk shown", "label": "good"},
                "values": {"reason": "thin", "label": "poor"},
            },
        ]
    )
    r = Annotator(b).annotate(TEXT, topic="Drones", stance="pro", record_id="r1")
    assert r.labels == {"analogy": "good", "values": "poor"}  # duplicate dropped
    assert r.reasons["analogy"] == "drones vs cars" and r.score_reasons["values"] == "thin"
    assert [t.payload.kind for t in r.turns] == ["debate.schemes", "debate.scores"]
    assert r.turns[1].payload.labels() == r.labels and r.turns[0].payload.record_id == "r1"
    assert r.cost.calls == 2 and r.cost.usage.prompt_tokens > 0
    # the scoring request asks for exactly the used schemes, with their critical questions
    score_req = b.requests[1]
    assert set(score_req.schema["required"]) == {"analogy", "values"}
    assert "CQ1: Are there differences between the two cases" in score_req.prompt
    assert "Label: excellent" in score_req.prompt  # the four exemplars
    assert (
        "Motion: Drones" in b.requests[0].prompt and "argues for the motion" in b.requests[0].prompt
    )


def test_a_passage_without_schemes_needs_no_scoring_call():
    b = ScriptedBackend([{"schemes": []}])
    r = Annotator(b).annotate("Thank you all for coming tonight.")
    assert r.labels == {} and r.valid and r.cost.calls == 1 and b.remaining == 0


def test_an_unknown_scheme_is_repaired_once_then_invalid():
    b = ScriptedBackend(
        [
            {"schemes": [{"scheme": "popularity", "reason": "x"}]},
            {"schemes": [{"scheme": "ad_hominem", "reason": "x"}]},
        ]
    )
    r = Annotator(b).annotate(TEXT)
    assert not r.valid and r.labels == {} and "scheme annotation" in r.error
    assert r.cost.calls == 2  # the schema repair turn is counted
    assert all(not t.valid for t in r.turns)


def test_invalid_scoring_keeps_the_schemes_unscored():
    b = ScriptedBackend(
        [
            {"schemes": [{"scheme": "example", "reason": "a case"}]},
            {"example": {"reason": "r", "label": "great"}},
            "not json at all",
        ]
    )
    r = Annotator(b).annotate(TEXT)
    assert r.labels == {"example": None} and not r.valid and r.error.startswith("scoring")


def test_given_schemes_run_the_scoring_agent_alone():
    b = ScriptedBackend([{"example": {"reason": "r", "label": "general"}}])
    r = Annotator(b).annotate(TEXT, given=["example"])
    assert r.labels == {"example": "general"} and r.cost.calls == 1
    with pytest.raises(ArgnbError, match="unknown schemes"):
        Annotator(b).annotate(TEXT, given=["nope"])


def test_scheme_annotation_only():
    b = ScriptedBackend([{"schemes": [{"scheme": "values", "reason": "freedom"}]}])
    r = Annotator(b, score=False).annotate(TEXT)
    assert r.labels == {"values": None} and r.valid and r.cost.calls == 1


def _script(req):
    if "schemes" in req.schema.get("properties", {}):
        return {"schemes": [{"scheme": "example", "reason": "a case"}]}
    return {"example": {"reason": "ok", "label": "good"}}


def test_the_plan_estimates_and_a_big_run_needs_yes():
    a = Annotator(ScriptedBackend(_script))
    p = plan(a, [(TEXT, "T", "pro")] * 10)
    assert p.records == 10 and p.calls == 20 and p.max_calls == 40
    assert 10 * 300 < p.prompt_tokens < 10 * 3000  # both prompts, measured from their text
    assert "10 records" in str(p)
    confirm(p, yes=False)  # small: no question asked
    big = plan(a, [(TEXT, "T", "pro")] * 200)
    assert big.needs_confirmation
    with pytest.raises(ArgnbError, match="--yes"):
        confirm(big, yes=False)
    confirm(big, yes=True)


def test_store_annotation_is_resumable_after_the_server_dies():
    store = example_memory()
    store.clear_annotations()
    calls = {"n": 0}

    def dying(req):
        calls["n"] += 1
        if calls["n"] > 9:  # 4 records of 2 calls, then the server goes away mid-record
            raise BackendUnavailable("cannot reach the server", hint="start it")
        return _script(req)

    with pytest.raises(BackendUnavailable):
        annotate_store(store, Annotator(ScriptedBackend(dying)), progress=False)
    assert len(store.annotations()) == 4  # what finished is kept ...
    b = ScriptedBackend(_script)
    s = annotate_store(store, Annotator(b), progress=False)
    assert s.annotated == 36 and s.skipped == 4 and len(b.requests) == 72  # ... and not redone
    assert s.cost.calls == 72 and s.invalid == 0
    info = store.info()
    assert info.annotators == {"scripted:script": 40} and info.by_label == {"good": 40}
    assert store.turns("example/homework/0.0")[0].payload.kind == "debate.schemes"


def test_file_annotation_is_resumable(tmp_path):
    rows = [{"id": f"r{i}", "text": TEXT} for i in range(5)]
    out = tmp_path / "a.jsonl"
    annotate_file(rows[:2], Annotator(ScriptedBackend(_script)), out, progress=False)
    b = ScriptedBackend(_script)
    s = annotate_file(rows, Annotator(b), out, progress=False)
    assert s.annotated == 3 and s.skipped == 2 and len(b.requests) == 6
    back = read_jsonl(out)
    assert [r["id"] for r in back] == ["r0", "r1", "r2", "r3", "r4"]
    assert back[0]["schemes"] == {"example": "good"} and back[0]["annotator"] == "scripted:script"
    assert back[0]["turns"][0]["payload"]["kind"] == "debate.schemes"
    json.dumps(back)


def test_keyword_agent_cleans_and_falls_back_when_invalid():
    b = ScriptedBackend([{"keywords": [" Air pollution. ", "air pollution", "", "asthma"]}])
    got, turns = keywords(b, "The air is bad and children get asthma.")
    assert got == ["Air pollution", "asthma"] and turns[-1].payload.kind == "debate.keywords"
    bad = ScriptedBackend([{"keywords": []}, {"keywords": [""]}])
    got, turns = keywords(bad, "text")
    assert got is None and len(turns) == 2
