"""Evaluation of turns and debates on scripted judges: the arithmetic is ours, the swap is real."""

from __future__ import annotations

import json

import pytest

import argnb.cli_common
from argnb.cli import main
from argnb.debate.evaluate import DebatrixJudge, InspireJudge, evaluate_file, inspire_dimensions
from argnb.debate.simulate import utterance_turn
from argnb.errors import BackendUnavailable
from argnb.llm import ScriptedBackend
from argnb.transcript import Transcript

TOPIC = "Cities should close their centres to cars"
EVIDENCE = [{"id": "r1", "text": "Oslo closed its centre and shops did fine."}]
RATINGS = {"emotional_appeal": 10, "clarity": 10, "arrangement": 1, "relevance": 1,
           "validity": 10, "stance_consistency": 1}  # fmt: skip


def inspire_answer(claims=()):
    return {**RATINGS, "claims": [dict(c) for c in claims]}


def test_the_dimensions_are_computed_in_code():
    sub, logic, fact, score = inspire_dimensions(RATINGS, ["supported", "contradicted"])
    assert (sub, logic, fact) == (0.5, 0.5, 0.5) and score == 0.5
    assert inspire_dimensions(RATINGS, []) == (0.5, 0.5, None, 0.5)  # no claims: fact n/a


def test_unverifiable_and_unknown_evidence_never_count_as_supported():
    claims = [
        {"claim": "Oslo's shops did fine.", "status": "supported", "evidence": "r1"},
        {"claim": "Paris banned all cars.", "status": "supported", "evidence": "r9"},  # not shown
        {"claim": "Air got cleaner.", "status": "unverifiable", "evidence": ""},
    ]
    r = InspireJudge(ScriptedBackend([inspire_answer(claims)])).judge(
        "Oslo shows it works.", topic=TOPIC, stance="pro", evidence=EVIDENCE
    )
    assert [c.status for c in r.scores.claims] == ["supported", "unverifiable", "unverifiable"]
    assert r.scores.fact == pytest.approx(1 / 3, abs=1e-4)
    assert r.scores.score == pytest.approx((0.5 + 0.5 + 1 / 3) / 3, abs=1e-4)
    assert r.turns[-1].payload.kind == "debate.inspire"


def test_an_invalid_judge_answer_is_an_invalid_result_not_an_exception():
    r = InspireJudge(ScriptedBackend(["no", "still no"])).judge("x", topic=TOPIC, stance="pro")
    assert not r.valid and r.to_dict()["score"] is None and r.cost.calls == 2
    assert "invalid" in str(r)


def test_a_dead_server_stops_the_evaluation():
    with pytest.raises(BackendUnavailable):
        InspireJudge(ScriptedBackend([BackendUnavailable("down")])).judge(
            "x", topic=TOPIC, stance="pro"
        )


def side(a, b, winner):
    def s(x):
        return {"argument": x, "source": x, "language": x, "overall": x}

    return {"side_a": s(a), "side_b": s(b), "winner": winner, "reason": "because"}


TURNS = [{"stance": "pro", "text": "PRO-TEXT cars pollute"}, {"stance": "con", "text": "shops die"}]


def test_a_judge_that_always_picks_side_a_flips_every_time():
    r = DebatrixJudge(ScriptedBackend(lambda req: side(8, 4, "A"))).judge(TURNS, topic=TOPIC)
    assert r.flipped is True and r.winner == "split"
    assert (r.normal.winner, r.swapped.winner) == ("pro", "con")
    # side A scored 8 in both passes: pro once, con once -> equal means, a draw on Table 2's scale
    assert (
        r.mean("pro") == r.mean("con") == {"argument": 6, "source": 6, "language": 6, "overall": 6}
    )
    assert r.relative()["pro"]["overall"] == 1.0


def test_a_judge_that_follows_the_content_never_flips_and_maps_sides_back():
    def content(req):
        a_is_pro = "[A] PRO-TEXT" in req.last
        return side(9, 3, "A") if a_is_pro else side(3, 9, "B")

    r = DebatrixJudge(ScriptedBackend(content)).judge(TURNS, topic=TOPIC)
    assert r.flipped is False and r.winner == "pro"
    assert r.swapped.pro.overall == 9 and r.swapped.con.overall == 3
    rel = r.relative()
    assert rel["pro"]["overall"] + rel["con"]["overall"] == pytest.approx(2)
    assert rel["pro"]["overall"] == 1.5


def results_file(tmp_path):
    rows = [
        {"id": f"d{i}@2", "debate_id": f"d{i}", "topic": TOPIC, "stance": "pro",
         "method": "llm", "history": TURNS, "text": f"Reply {i}.", "evidence": EVIDENCE}
        for i in range(3)
    ]  # fmt: skip
    p = tmp_path / "next.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def test_file_evaluation_is_resumable_and_summarised(tmp_path):
    b = ScriptedBackend(lambda req: inspire_answer())
    out = tmp_path / "eval.jsonl"
    s = evaluate_file(results_file(tmp_path), "inspire", b, out=out, progress=False).to_dict()
    assert s["n"] == 3 and s["score"] == 0.5 and s["fact"] is None and s["without_claims"] == 3
    calls = len(b.requests)
    evaluate_file(results_file(tmp_path), "inspire", b, out=out, progress=False)
    assert len(b.requests) == calls  # resumed: nothing new
    d = evaluate_file(
        results_file(tmp_path),
        "debatrix",
        ScriptedBackend(lambda req: side(8, 4, "A")),
        progress=False,
    ).to_dict()
    assert d["n"] == 3 and d["flip_rate"] == 1.0 and d["wins"]["split"] == 3


def test_a_saved_debate_transcript_is_evaluated_turn_by_turn(tmp_path):
    tr = Transcript(kind="debate", title=TOPIC)
    tr.add(utterance_turn("pro", "Cars pollute the centre.", TOPIC))
    gen = utterance_turn("con", "Shops need cars.", TOPIC)
    gen.payload.method = "llm"
    tr.add(gen)
    path = tr.save(tmp_path / "debate.json")
    s = evaluate_file(path, "inspire", ScriptedBackend(lambda r: inspire_answer()), progress=False)
    assert s.to_dict()["n"] == 1  # only the generated turn is judged
    d = evaluate_file(
        path, "debatrix", ScriptedBackend(lambda r: side(5, 5, "tie")), progress=False
    )
    assert d.to_dict()["wins"]["tie"] == 1


def test_cli_evaluate_json_and_one_line_errors(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(
        argnb.cli_common, "backend_from_args", lambda a: ScriptedBackend(lambda r: side(8, 4, "A"))
    )
    argv = ["debate", "evaluate", "--utterances", str(results_file(tmp_path)), "--judge"]
    assert main([*argv, "debatrix", "--json", "--quiet"]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["n"] == 3 and last["flip_rate"] == 1.0
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text('{"id": 1, "label": 0}\n')
    assert main(["debate", "evaluate", "--utterances", str(foreign), "--judge", "inspire"]) == 2
    err = capsys.readouterr().err
    assert "debates file" in err and "Traceback" not in err and len(err.strip().splitlines()) <= 2
