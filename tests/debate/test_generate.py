"""Debate part 2 on a scripted backend: the logic agent, the generate -> judge -> revise loop,
its bound, the methods, the stance predicate, simulation and the map (no model needed)."""

from __future__ import annotations

import json

import pytest

from argnb.debate.corpora import example_memory
from argnb.debate.generate import METHODS, Debater, worst_case_calls
from argnb.debate.logic import LogicAgent, well_formed
from argnb.debate.mapping import debate_map
from argnb.debate.record import utterances
from argnb.debate.retrieve import Retriever
from argnb.debate.schemas import StanceAnswer
from argnb.debate.simulate import simulate
from argnb.debate.stance import holds
from argnb.debate.views import debate_html, outcome_text, utterance_html
from argnb.errors import ArgnbError, BackendUnavailable
from argnb.llm import ScriptedBackend
from argnb.transcript import Transcript

TOPIC = "Cities should close their centres to cars"
HISTORY = [
    ("pro", "Cars fill the centre with fumes, and children breathe them on the way to school."),
    ("con", "Closing the centre ruins the shops, and either we keep cars or the centre dies."),
]


def agent_of(req) -> str:
    """Which agent sent a request: the schema's title, or 'text' for plain-text turns."""
    return (req.schema or {}).get("title", "text")


def role_backend(*, accept=lambda n: True, text=None, broken=(), words=40):
    """A backend that answers each agent in character; ``accept(n)`` decides the n-th verdict;
    agents named in ``broken`` answer garbage; ``{n}`` in ``text`` is the turn's number (a side
    that says one sentence again is stopped by the gate: argnb.gate, ``Gate.earlier``)."""
    seen = {"VerdictAnswer": 0, "text": 0}

    def answer(req):
        who = agent_of(req)
        if who in broken:
            return "not json at all"
        if who == "PredicatesAnswer":
            return {"predicates": ["Cause(ClosingCentre, ShopsRuined)", "Or(KeepCars, CentreDies)"]}
        if who == "ChainAnswer":
            return {"chain": "Closing the centre ruins shops, so cars must stay or it dies."}
        if who == "FlawsAnswer":
            return {
                "flaws": [
                    {
                        "kind": "false dichotomy",
                        "text": "Only two options are offered.",
                        "claims": ["Or(KeepCars, CentreDies)"],
                    }
                ]
            }
        if who == "KeywordsAnswer":
            return {"keywords": ["cars", "centre", "shops"]}
        if who == "SummaryAnswer":
            return {"overview": "Cars against shops.", "supporting": [], "opposing": [],
                    "divergence": ["shops"]}  # fmt: skip
        if who == "VerdictAnswer":
            seen["VerdictAnswer"] += 1
            ok = accept(seen["VerdictAnswer"])
            return {
                "stance_faithful": ok,
                "relevant": True,
                "follows_schemes": True,
                "feedback": "" if ok else "Answer the point about the shops.",
            }
        if who == "StanceAnswer":
            return {"supports_motion": True, "supports_opposition": False,
                    "attacks_motion": False, "attacks_opposition": True, "reason": "for"}  # fmt: skip
        seen["text"] += 1
        if text:
            return text.replace("{n}", str(seen["text"]))
        return " ".join(f"Point {i} holds." for i in range(words // 3))

    return ScriptedBackend(answer)


@pytest.fixture(scope="module")
def retriever():
    return Retriever(example_memory(), method="bm25", k=3)


def test_the_predicates_keep_only_well_formed_lines():
    assert well_formed(["Cause(A, B)", "A causes B", "Cause(A, B)", "* Negate(P)."]) == [
        "Cause(A, B)",
        "Negate(P)",
    ]


def test_the_logic_agent_ties_flaws_to_the_opponent_turns_and_translates_each_turn_once():
    b = role_backend()
    agent = LogicAgent(b)
    r = agent.analyse(TOPIC, "pro", HISTORY)
    assert r.predicates == ["Cause(ClosingCentre, ShopsRuined)", "Or(KeepCars, CentreDies)"]
    assert r.flaws[0].kind == "false dichotomy" and r.targets == ["C1"]
    calls = len(b.requests)
    r2 = agent.analyse(TOPIC, "pro", HISTORY)  # same opponent turn: predicates from the cache
    assert len(b.requests) - calls == 2 and r2.predicates == r.predicates
    assert [t.role for t in r2.turns] == ["reasoning chain", "flaws"]


def test_no_opponent_turn_means_no_logic_calls():
    b = role_backend()
    r = LogicAgent(b).analyse(TOPIC, "pro", [])
    assert r.turns == () and b.requests == [] and "not spoken" in r.note


def test_an_accepting_judge_gives_one_round_and_every_step_is_recorded(retriever):
    b = role_backend(words=30)
    u = Debater(b, "rdebater", retriever).next(TOPIC, HISTORY)
    assert u.stance == "pro" and u.accepted is True and u.revisions == 0 and not u.bound_hit
    roles = [t.role for t in u.turns]
    assert roles[:4] == ["predicates", "reasoning chain", "flaws", "keywords"]
    assert roles[4:] == ["retrieval", "draft", "summary", "verdict", "utterance"]
    assert u.info.targets == ["C1"] and u.cost.calls == len(b.requests) == 7
    kinds = {t.payload.kind for t in u.turns}
    assert {"debate.flaws", "debate.retrieval", "debate.verdict", "debate.utterance"} <= kinds
    # the draft prompt carried the flaw and the retrieved passages
    draft_req = next(r for r in b.requests if agent_of(r) == "text")
    assert "Only two options are offered." in draft_req.prompt
    assert "earlier debates" in draft_req.prompt


def test_a_judge_that_never_accepts_stops_at_the_bound(retriever):
    b = role_backend(accept=lambda n: False)
    d = Debater(b, "rdebater", retriever, max_revisions=2)
    u = d.next(TOPIC, HISTORY)
    assert u.accepted is False and u.bound_hit and u.revisions == 2
    assert len(u.verdicts) == 3 and len(u.drafts) == 3
    assert [t.payload.revision for t in u.drafts] == [0, 1, 2]
    assert u.cost.calls <= worst_case_calls("rdebater", 2, opponent_turns=1)


def test_the_worst_case_is_reached_when_every_structured_answer_fails_once(retriever):
    """Every structured answer is garbage first, then fine after the schema repair; rule checks
    fail too, and drafts are always too long: the counted calls equal the documented bound."""

    def answer(req):
        who = agent_of(req)
        if who == "text":
            return " ".join(f"Long point {i}." for i in range(70))
        if "corrected JSON" not in req.last:  # not a schema repair: garbage
            return "garbage"
        if who == "PredicatesAnswer":
            return {"predicates": ["not well formed"]}
        if who == "FlawsAnswer":
            return {"flaws": [{"kind": "other", "text": "x", "claims": ["Unknown(X)"]}]}
        if who == "KeywordsAnswer":
            return {"keywords": []}
        if who == "VerdictAnswer":
            return {"stance_faithful": False, "relevant": False, "follows_schemes": False,
                    "feedback": ""}  # fmt: skip
        if who == "ChainAnswer":
            return {"chain": "A chain."}
        if who == "SummaryAnswer":
            return {"overview": "o", "supporting": [], "opposing": [], "divergence": []}
        return "{}"

    b = ScriptedBackend(answer)
    d = Debater(b, "rdebater", retriever, max_revisions=1)
    u = d.next(TOPIC, HISTORY)
    assert u.cost.calls == len(b.requests)
    # predicates never become valid, so chain and flaws are skipped; the rest is at its worst
    bound = worst_case_calls("rdebater", 1, opponent_turns=1)
    skipped = 2 + 4  # chain + flaws, not reached without predicates
    assert len(b.requests) == bound - skipped
    assert u.bound_hit and u.revisions == 1
    assert all(t.payload.words <= d.words for t in u.drafts if t.valid)
    assert any(t.payload.cut for t in u.drafts if t.valid)


def test_the_word_budget_holds_in_code():
    b = role_backend(words=300)
    d = Debater(b, "llm", words=50)
    u = d.next(TOPIC, HISTORY)
    assert u.info.words <= 50 and u.drafts[-1].payload.cut
    assert [t.role for t in u.turns] == ["rejected draft", "draft", "utterance"]


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_runs_through_the_same_debater(method, retriever):
    b = role_backend()
    u = Debater(b, method, retriever).next(TOPIC, HISTORY)
    m = METHODS[method]
    roles = {t.role for t in u.turns}
    assert ("flaws" in roles) == m.logic
    assert ("retrieval" in roles) == (m.retrieval != "none")
    assert ("verdict" in roles) == m.judge
    assert ("keywords" in roles) == (m.retrieval == "schemes")
    assert u.cost.calls <= worst_case_calls(method, opponent_turns=1)
    assert u.info.method == method and u.text


def test_naive_rag_pastes_passages_and_llm_sees_none(retriever):
    b = role_backend()
    Debater(b, "naive-rag", retriever).next(TOPIC, HISTORY)
    assert "Material from earlier debates" in b.requests[-1].prompt
    b2 = role_backend()
    Debater(b2, "llm").next(TOPIC, HISTORY)
    assert "earlier debates" not in b2.requests[-1].prompt


def test_retrieving_methods_need_a_memory():
    with pytest.raises(ArgnbError, match="no memory"):
        Debater(role_backend(), "rdebater")
    with pytest.raises(ArgnbError, match="unknown method"):
        Debater(role_backend(), "best")


def test_retrieval_never_returns_the_debated_motion(retriever):
    store = retriever.store
    topic = store.records()[0].topic
    trace = retriever.retrieve(f"{topic} cars centre social media", exclude_topics=[topic])
    assert trace.hits and all(h.topic != topic for h in trace.hits)


def test_a_server_that_dies_stops_the_utterance(retriever):
    b = ScriptedBackend([BackendUnavailable("down", hint="start it")])
    with pytest.raises(BackendUnavailable):
        Debater(b, "rdebater", retriever).next(TOPIC, HISTORY)


@pytest.mark.parametrize(
    ("answers", "pro", "con"),
    [
        ((True, False, False, True), True, False),  # for the motion, against the opposition
        ((False, True, True, False), False, True),  # the other way round
        ((True, True, False, False), False, False),  # supports both: holds for neither
        ((False, False, False, False), False, False),  # says nothing on either side
    ],
)
def test_the_stance_predicate_is_decided_in_code(answers, pro, con):
    a = StanceAnswer(
        supports_motion=answers[0],
        supports_opposition=answers[1],
        attacks_motion=answers[2],
        attacks_opposition=answers[3],
        reason="",
    )
    assert (holds(a, "pro"), holds(a, "con")) == (pro, con)


def test_a_simulation_alternates_checks_every_turn_and_round_trips(tmp_path):
    b = role_backend(text="Fresh point {n} is about clean air and safe streets for children.")
    pro = Debater(b, "llm", name="Pro")
    con = Debater(
        role_backend(text="Shops and jobs need customers who can drive, point {n}."),
        "llm",
        name="Con",
    )
    tr = simulate(TOPIC, pro, con, turns=4, history=HISTORY[:1])
    said = utterances(tr)
    assert [t.payload.stance for t in said] == ["pro", "con", "pro", "con", "pro"]
    assert [t.payload.concluding for t in said[1:]] == [False, False, True, True]
    checks = [t for t in tr.turns if t.payload.kind == "debate.stance_check"]
    # the con side's judge says every turn is for the motion: the con turns fail
    assert len(checks) == 4 and tr.outcome["stance_failures"] == [0, 2]
    # counted as a reader counts the turns shown, the given one first: the con turns, 2 and 4
    assert "turns failing the stance check: 2, 4;" in outcome_text(tr)
    back = Transcript.load(tr.save(tmp_path / "debate.json"))
    assert back.model_dump() == tr.model_dump()
    m = debate_map(back)
    assert m.nodes("claim") == ["P1", "C1", "P2", "C2", "P3"]
    assert ("C1", "P1") in [(u, v) for u, v, _ in m.edges("rebut")]
    assert json.loads(json.dumps(m.to_aif()))["AIF"]["nodes"]


def test_a_side_that_repeats_itself_has_concluded():
    pro = Debater(role_backend(text="Cars pollute the centre."), "llm", name="Pro")
    con = Debater(role_backend(text="Shops need cars."), "llm", name="Con")
    tr = simulate(TOPIC, pro, con, turns=10, check=False)
    assert tr.outcome["ended"] == "both concluded" and tr.outcome["turns"] == 4


def test_the_map_labels_attacks_with_the_flaw_found(retriever):
    b = role_backend()
    pro = Debater(b, "rdebater", retriever, name="Pro")
    con = Debater(role_backend(), "llm", name="Con")
    tr = simulate(TOPIC, pro, con, turns=1, history=HISTORY, check=False)
    m = debate_map(tr)
    labels = {(u, v): d["label"] for u, v, d in m.edges("rebut")}
    assert labels[("P2", "C1")] == "false dichotomy"
    assert m.node("P2")["status"] == "IN" and m.node("C1")["status"] == "OUT"


def test_views_escape_model_text(retriever):
    evil = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    b = role_backend(text=evil)
    u = Debater(b, "rdebater", retriever).next(TOPIC, [("pro", "x"), ("con", evil)])
    page = utterance_html(u)
    assert "<script>" not in page and "<img" not in page and "&lt;script&gt;" in page
    tr = simulate(TOPIC, Debater(b, "llm"), Debater(b, "llm"), turns=2, check=False)
    assert "<script>" not in debate_html(tr)


def test_a_debater_and_a_simulation_speak_the_shared_event_vocabulary():
    from argnb.events import Event

    heard: list[Event] = []
    d = Debater(ScriptedBackend(["Homework steals the evening from play."]), method="llm")
    u = d.next("Ban homework", [("pro", "Homework causes stress.")], on_event=heard.append)
    kinds = [e.kind for e in heard]
    assert kinds[:2] == ["step", "start"] and kinds[-1] == "turn" and "chunk" in kinds
    assert heard[0].label == "draft"  # the step is named before its text streams
    assert "".join(e.text for e in heard if e.kind == "chunk") == u.text
    assert heard[-1].turn is u.turns[-1] and heard[1].label == "con"

    pro = Debater(ScriptedBackend(["Cars pollute the centre."]), method="llm", name="Pro")
    con = Debater(ScriptedBackend(["Shops need customers who drive."]), method="llm", name="Con")
    seen: list[Event] = []
    tr = simulate("Close the city centre", pro, con, turns=2, check=False, on_event=seen.append)
    turns = [e for e in seen if e.kind == "turn"]
    assert [e.index for e in turns] == list(range(len(tr.turns)))
    assert all(e.turn is t for e, t in zip(turns, tr.turns, strict=True))
    assert [e.speaker for e in seen if e.kind == "start"] == ["Pro", "Con"]
