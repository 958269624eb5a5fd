"""Evaluation of turns and debates on scripted judges: the arithmetic is ours, the swap is real."""

from __future__ import annotations

import json
import re

import pytest

import argnb.cli_common
from argnb.cli import main
from argnb.debate.evaluate import (
    DebatrixJudge,
    InspireJudge,
    evaluate_file,
    inspire_dimensions,
    relative,
)
from argnb.debate.inputs import read_items
from argnb.debate.payloads import RetrievalStep
from argnb.debate.record import utterance_turn
from argnb.debate.schemas import ClaimAnswer, DebatrixAnswer, InspireAnswer, SideAnswer
from argnb.errors import ArgnbError, BackendUnavailable
from argnb.llm import ScriptedBackend
from argnb.llm.answer import unbounded
from argnb.transcript import Transcript, Turn

TOPIC = "Cities should close their centres to cars"
EVIDENCE = [{"id": "r1", "text": "Oslo closed its centre and shops did fine."}]
RATINGS = {"emotional_appeal": 10, "clarity": 10, "arrangement": 1, "relevance": 1,
           "validity": 10, "stance_consistency": 1}  # fmt: skip


def inspire_answer(claims=(), **ratings):
    return {**RATINGS, **ratings, "claims": [dict(c) for c in claims]}


def test_every_answer_schema_is_bounded():
    for schema in (ClaimAnswer, InspireAnswer, SideAnswer, DebatrixAnswer):
        assert unbounded(schema) == [], schema.__name__


def test_the_dimensions_are_computed_in_code():
    # (x - 1) / 9: 10, 10, 1, 1 -> 1, 1, 0, 0 -> subjective 0.5; 10, 1 -> logic 0.5
    sub, logic, fact, score = inspire_dimensions(RATINGS, ["supported", "contradicted"])
    assert (sub, logic, fact, score) == (0.5, 0.5, 0.5, 0.5)
    fours = dict.fromkeys(RATINGS, 4)  # (4 - 1) / 9 = 1/3 everywhere
    sub, logic, fact, score = inspire_dimensions(fours, ["supported", "unverifiable", "supported"])
    assert (sub, logic, fact) == (0.3333, 0.3333, 0.6667)
    assert score == round((1 / 3 + 1 / 3 + 2 / 3) / 3, 4)
    # no factual claim: fact is n/a and the score is the mean of the other two
    assert inspire_dimensions({**RATINGS, "stance_consistency": 10}, []) == (0.5, 1.0, None, 0.75)


def test_unverifiable_and_unknown_evidence_never_count_as_supported():
    claims = [
        {"claim": "Oslo's shops did fine.", "status": "supported", "evidence": "E1"},
        {"claim": "Oslo's shops did fine.", "status": "supported", "evidence": "[r1]"},  # own id
        {"claim": "Paris banned all cars.", "status": "supported", "evidence": "E9"},  # not shown
        {"claim": "Rome banned cars.", "status": "supported", "evidence": ""},  # cites nothing
        {"claim": "Air got cleaner.", "status": "unverifiable", "evidence": ""},
    ]
    b = ScriptedBackend([inspire_answer(claims)])
    r = InspireJudge(b).judge(
        "Oslo shows it works.", topic=TOPIC, stance="pro", history=[], evidence=EVIDENCE
    )
    got = [(c.status, c.evidence) for c in r.scores.claims]
    assert got == [
        ("supported", "r1"),
        ("supported", "r1"),
        ("unverifiable", "E9"),
        ("unverifiable", ""),
        ("unverifiable", ""),
    ]
    assert r.scores.fact == 0.4  # 2 of 5
    assert r.scores.score == pytest.approx((0.5 + 0.5 + 0.4) / 3, abs=1e-4)
    turn = r.turns[-1]
    assert turn.role == "inspire" and turn.payload.kind == "debate.inspire"
    assert turn.payload.ratings == RATINGS and turn.payload.score == r.scores.score
    assert "[E1] Oslo closed its centre" in b.requests[0].prompt
    assert "arguing for the motion" in b.requests[0].prompt


def test_a_contradicted_claim_counts_against_fact():
    claims = [{"claim": "Shops closed.", "status": "contradicted", "evidence": "E1"}]
    r = InspireJudge(ScriptedBackend([inspire_answer(claims)])).judge(
        "Shops closed.", topic=TOPIC, stance="con", history=[], evidence=EVIDENCE
    )
    assert r.scores.claims[0].status == "contradicted" and r.scores.fact == 0.0


def test_no_factual_claims_leaves_fact_out_of_the_score():
    r = InspireJudge(ScriptedBackend([inspire_answer()])).judge(
        "We should care.", topic=TOPIC, stance="pro", history=[], evidence=[]
    )
    assert r.valid and r.scores.fact is None and r.scores.score == 0.5  # mean of 0.5 and 0.5
    assert "fact n/a (no factual claims)" in str(r)
    assert r.to_dict()["claims"] == 0


def test_an_invalid_judge_answer_is_an_invalid_result_not_an_exception():
    r = InspireJudge(ScriptedBackend(["no", "still no"])).judge(
        "x", topic=TOPIC, stance="pro", history=[], evidence=[]
    )
    assert not r.valid and r.scores is None and r.cost.calls == 2
    d = r.to_dict()
    assert (d["subjective"], d["logic"], d["fact"], d["score"]) == (None, None, None, None)
    assert "invalid" in str(r) and not r.turns[-1].valid
    # a rating outside 1..10 is no valid answer either
    bad = inspire_answer(clarity=11)
    assert not InspireJudge(ScriptedBackend([bad, bad])).judge("x", topic=TOPIC, stance="pro").valid


def test_a_dead_server_stops_the_evaluation():
    with pytest.raises(BackendUnavailable):
        InspireJudge(ScriptedBackend([BackendUnavailable("down")])).judge(
            "x", topic=TOPIC, stance="pro", history=[], evidence=[]
        )


def scores(argument, source, language, overall):
    return {"argument": argument, "source": source, "language": language, "overall": overall}


def side(a, b, winner):
    def s(x):
        return scores(x, x, x, x) if isinstance(x, int) else scores(*x)

    return {"side_a": s(a), "side_b": s(b), "winner": winner, "reason": "because"}


TURNS = [{"stance": "pro", "text": "PRO-TEXT cars pollute"}, {"stance": "con", "text": "shops die"}]
PRO = (9, 7, 5, 8)
CON = (2, 3, 4, 1)


def always_a(req):
    return side(8, 4, "A")


def follows_content(req):
    """Scores the pro side's content PRO and the con side's CON, wherever they are shown."""
    if "Side A: PRO-TEXT" in req.last:
        return side(PRO, CON, "A")
    return side(CON, PRO, "B")


def test_a_judge_that_always_picks_side_a_flips_every_time():
    r = DebatrixJudge(ScriptedBackend(always_a)).judge(TURNS, topic=TOPIC)
    assert r.flipped is True and r.winner == "split"
    assert (r.normal.winner, r.swapped.winner) == ("pro", "con")
    assert (r.normal.swapped, r.swapped.swapped) == (False, True)
    # side A scored 8 in both passes: pro once, con once -> equal means, a draw on Table 2's scale
    assert r.mean("pro") == r.mean("con") == scores(6, 6, 6, 6)
    assert r.relative()["pro"] == r.relative()["con"] == scores(1.0, 1.0, 1.0, 1.0)


def test_the_sides_are_named_neutrally_and_swapped_in_the_second_pass():
    b = ScriptedBackend(always_a)
    DebatrixJudge(b).judge(TURNS, topic=TOPIC)
    first, second = b.requests[0].last, b.requests[1].last
    assert "Side A: PRO-TEXT" in first and "Side B: shops die" in first
    assert "Side B: PRO-TEXT" in second and "Side A: shops die" in second
    assert "Side A argues for the motion" in first and "Side A argues against" in second
    for text in (first, second):  # no side is called pro or con
        assert not re.search(r"\b(pro|con)\b", text.replace("PRO-TEXT", ""), re.IGNORECASE)


def test_a_judge_that_follows_the_content_never_flips_and_maps_sides_back():
    r = DebatrixJudge(ScriptedBackend(follows_content)).judge(TURNS, topic=TOPIC, debate_id="d1")
    assert r.flipped is False and r.winner == "pro"
    assert r.normal.winner == r.swapped.winner == "pro"
    for v in (r.normal, r.swapped):  # side B of the swapped pass is pro again
        assert v.pro.model_dump() == scores(*PRO) and v.con.model_dump() == scores(*CON)
        assert v.debate_id == "d1" and v.kind == "debate.debatrix"
    assert r.mean("pro") == scores(*PRO)
    rel = r.relative()
    for k in ("argument", "source", "language", "overall"):
        assert rel["pro"][k] + rel["con"][k] == pytest.approx(2, abs=1e-3)
    assert rel["pro"]["overall"] == round(8 / 4.5, 3) and rel["con"]["argument"] == round(
        2 / 5.5, 3
    )
    assert [t.payload.swapped for t in r.turns] == [False, True]


def test_relative_is_the_table_2_form():
    assert relative(scores(6, 4, 5, 3), scores(2, 4, 5, 1)) == {
        "pro": scores(1.5, 1.0, 1.0, 1.5),
        "con": scores(0.5, 1.0, 1.0, 0.5),
    }


def results_file(tmp_path, n=3):
    rows = [
        {"id": f"d{i}@2", "debate_id": f"d{i}", "topic": TOPIC, "stance": "pro", "cut": 2,
         "method": "llm", "history": [{**t, "speaker": "x"} for t in TURNS],
         "text": f"Reply {i}.", "evidence": [{**EVIDENCE[0], "schemes": {}}], "calls": 3}
        for i in range(n)
    ]  # fmt: skip
    p = tmp_path / "next.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def test_file_evaluation_is_resumable_and_summarised(tmp_path):
    b = ScriptedBackend(lambda req: inspire_answer())
    out = tmp_path / "eval.jsonl"
    first = evaluate_file(results_file(tmp_path), "inspire", b, out=out, limit=2, progress=False)
    assert first.n == 2 and len(b.requests) == 2
    s = evaluate_file(results_file(tmp_path), "inspire", b, out=out, progress=False)
    assert len(b.requests) == 3  # the first two were resumed, not judged again
    again = ScriptedBackend([])  # no answer left: any call would fail
    s2 = evaluate_file(results_file(tmp_path), "inspire", again, out=out, progress=False)
    assert again.requests == [] and s2.to_dict() == s.to_dict()
    d = s.to_dict()
    assert d["n"] == 3 and d["invalid"] == 0 and d["score"] == 0.5 and d["fact"] is None
    assert d["without_claims"] == 3 and d["score_by_method"] == {"llm": 0.5}
    assert s.means == {"subjective": 0.5, "logic": 0.5, "fact": None, "score": 0.5}
    rec = json.loads(out.read_text().splitlines()[0])
    assert rec["method"] == "llm" and rec["turns"][-1]["payload"]["kind"] == "debate.inspire"


def test_an_invalid_answer_is_counted_not_averaged(tmp_path):
    answers = iter([inspire_answer(), "junk", "junk", inspire_answer(clarity=1, arrangement=10)])
    s = evaluate_file(
        results_file(tmp_path), "inspire", ScriptedBackend(lambda r: next(answers)), progress=False
    )
    assert s.n == 3 and s.invalid == 1 and s.to_dict()["subjective"] == 0.5


def test_the_flip_rate_over_a_file(tmp_path):
    flips = evaluate_file(
        results_file(tmp_path), "debatrix", ScriptedBackend(always_a), progress=False
    )
    d = flips.to_dict()
    assert d["n"] == 3 and d["flip_rate"] == 1.0 and d["wins"]["split"] == 3
    assert d["relative"]["pro"]["overall"] == 1.0
    holds = evaluate_file(
        results_file(tmp_path), "debatrix", ScriptedBackend(follows_content), progress=False
    )
    d = holds.to_dict()
    assert d["flip_rate"] == 0.0 and d["wins"]["pro"] == 3 and d["pro"] == scores(*PRO)
    assert d["relative"]["pro"]["overall"] + d["relative"]["con"]["overall"] == pytest.approx(2)


def test_a_next_result_becomes_a_debate_of_its_history_and_utterance(tmp_path):
    (item,) = read_items(results_file(tmp_path, n=1), "debatrix")
    assert [t["stance"] for t in item["turns"]] == ["pro", "con", "pro"]
    assert item["turns"][-1]["text"] == "Reply 0." and item["topic"] == TOPIC


def test_a_saved_debate_transcript_every_utterance_with_its_evidence(tmp_path):
    tr = Transcript(kind="debate", title=TOPIC)
    tr.add(utterance_turn("pro", "Cars pollute the centre.", TOPIC, "learner"))
    tr.add(
        Turn(
            speaker="retriever",
            role="retrieval",
            payload=RetrievalStep(records=[{"id": "m7", "text": "Shops lost trade."}]),
        )
    )
    gen = utterance_turn("con", "Shops need cars.", TOPIC, "agent")
    gen.payload.method = "rdebater"
    tr.add(gen)
    path = tr.save(tmp_path / "debate.json")
    utts = read_items(path, "inspire")
    assert [u["evidence"] for u in utts] == [[], [{"id": "m7", "text": "Shops lost trade."}]]
    assert utts[1]["history"][0]["text"] == "Cars pollute the centre."
    s = evaluate_file(path, "inspire", ScriptedBackend(lambda r: inspire_answer()), progress=False)
    assert s.to_dict()["n"] == 2
    assert s.to_dict()["score_by_method"] == {"given": 0.5, "rdebater": 0.5}
    d = evaluate_file(
        path, "debatrix", ScriptedBackend(lambda r: side(5, 5, "tie")), progress=False
    )
    assert d.n == 1 and d.wins["tie"] == 1 and d.flip_rate == 0.0


def test_an_iq2_debates_file(tmp_path):
    long = " and the evidence for it is plain to anyone who looks at the numbers."
    rows = [
        {"debate_id": "q1", "topic": TOPIC, "turn": 1, "stance": "moderator", "speaker": "M",
         "text": "Welcome, everyone, to tonight's debate on cars and cities" + long},
        {"debate_id": "q1", "topic": TOPIC, "turn": 2, "stance": "pro", "speaker": "P",
         "text": "PRO-TEXT cars choke our streets" + long},
        {"debate_id": "q1", "topic": TOPIC, "turn": 3, "stance": "con", "speaker": "C",
         "text": "Shops die without drivers" + long},
    ]  # fmt: skip
    p = tmp_path / "debates.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    utts = read_items(p, "inspire")
    assert [u["id"] for u in utts] == ["q1#0", "q1#1"] and utts[1]["history"][0]["stance"] == "pro"
    (debate,) = read_items(p, "debatrix")
    assert [t["stance"] for t in debate["turns"]] == ["pro", "con"]  # the moderator is dropped
    s = evaluate_file(p, "debatrix", ScriptedBackend(follows_content), progress=False)
    assert s.flip_rate == 0.0 and s.wins["pro"] == 1


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"id": 1, "label": 0}\n', "neither results"),
        ("", "is empty"),
        ("not json\n", "not JSON"),
        ('{"version": 2, "kind": "fallacy", "turns": []}', "not a debate"),
    ],
)
def test_a_wrong_file_is_a_clear_error(tmp_path, content, message):
    p = tmp_path / "x.jsonl"
    p.write_text(content)
    with pytest.raises(ArgnbError, match=message) as exc:
        read_items(p, "inspire")
    assert exc.value.hint


def test_cli_evaluate_json_and_one_line_errors(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(argnb.cli_common, "backend_from_args", lambda a: ScriptedBackend(always_a))
    out = tmp_path / "eval.jsonl"
    argv = ["debate", "evaluate", "--utterances", str(results_file(tmp_path)), "--judge"]
    assert main([*argv, "debatrix", "--out", str(out), "--json", "--quiet"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    last = json.loads(lines[-1])
    assert len(lines) == 1 and last["n"] == 3 and last["flip_rate"] == 1.0
    assert len(out.read_text().splitlines()) == 3
    monkeypatch.setattr(
        argnb.cli_common, "backend_from_args", lambda a: ScriptedBackend(lambda r: inspire_answer())
    )
    assert main([*argv, "inspire", "--limit", "2", "--json", "--quiet"]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["n"] == 2 and {"subjective", "logic", "fact", "score"} <= set(last)
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text('{"id": 1, "label": 0}\n')
    assert main(["debate", "evaluate", "--utterances", str(foreign), "--judge", "inspire"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "-- fix:" in err and len(err.strip().splitlines()) == 1
