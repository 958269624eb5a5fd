"""The protocol on scripted models: the reference trace, the rules in code, and termination."""

from __future__ import annotations

import itertools
import json
import re

import pytest

from argnb.dialectic import (
    Argument,
    Case,
    Dialogue,
    Stance,
    call_bound,
    camera_reference_backend,
    run_dialogue,
    turn_bound,
)
from argnb.dialectic.examples import BUY_A, BUY_B, OUT_OF_STOCK, OVER_BUDGET
from argnb.llm.scripted import Request, ScriptedBackend
from argnb.transcript import Transcript


def roles(d: Dialogue) -> list[tuple[str, str]]:
    return [(t.speaker, t.role) for t in d.transcript.turns]


# -- the reference trace -------------------------------------------------------------------
def test_reference_trace_reproduces_the_formal_camera_example():
    backend = camera_reference_backend()
    d = run_dialogue(backend, "camera")

    # the order of moves of Kido & Kurihara's example, plus the three synthesis steps
    assert roles(d) == [
        ("AG1", "argue"),  # Arg1: buy a
        ("AG2", "attack"),  # Arg2: a is out of stock
        ("AG1", "pass"),  # AG1 cannot counter
        ("protocol", "verdict"),
        ("AG2", "argue"),  # Arg3: buy b
        ("AG1", "attack"),  # Arg4: b is over budget
        ("AG2", "pass"),
        ("protocol", "verdict"),
        ("AG1", "characterize"),
        ("AG1", "generalize"),
        ("AG1", "answer"),  # Arg5: choose c
    ]
    args = d.arguments
    assert [a.id for a in args.values()] == ["A1", "A2", "A3", "A4", "A5"]
    assert args["A1"].argument.claim == BUY_A.claim and args["A1"].agent == "AG1"
    assert args["A2"].argument.claim == OUT_OF_STOCK.claim and args["A2"].agent == "AG2"
    assert args["A3"].argument.claim == BUY_B.claim and args["A3"].agent == "AG2"
    assert args["A4"].argument.claim == OVER_BUDGET.claim and args["A4"].agent == "AG1"

    atts = [(a.attacker, a.target, a.kind, a.on) for a in d.attacks]
    assert atts == [
        ("A2", "A1", "rebut", "We should buy a."),
        ("A4", "A3", "rebut", "We should buy camera b."),
    ]
    lines = d.lines
    assert (lines[0]["main_id"], lines[0]["status"]) == ("A1", "defeated")
    assert lines[0]["reason"] == "AG1 cannot counter A2"
    assert (lines[1]["main_id"], lines[1]["status"]) == ("A3", "defeated")
    assert lines[1]["reason"] == "AG2 cannot counter A4"

    assert d.outcome == "synthesis"
    assert re.search(r"\bcamera c\b", d.final_answer)
    assert d.labelling == {"A1": "OUT", "A2": "IN", "A3": "OUT", "A4": "IN", "A5": "IN"}
    assert d.terminated and d.transcript.outcome["model_calls"] == len(backend.requests) == 9

    # the synthesis was fed the two *main* warrants (not the attackers'), then C1/C2, then E
    char_req, gen_req, ans_req = backend.requests[-3:]
    assert "a is compact." in char_req.last and "b has high image quality." in char_req.last
    assert "out of stock" not in char_req.last and "over budget" not in char_req.last
    assert "the camera takes sharp pictures" in gen_req.last
    assert "keeps working through a long day of use" in ans_req.last
    assert "We should buy a." in ans_req.last and "We should buy camera b." in ans_req.last


def test_every_turn_records_argument_attack_target_and_defeat_status():
    d = run_dialogue(camera_reference_backend(), "camera")
    attack = next(t for t in d.transcript.turns if t.role == "attack")
    p = attack.payload
    assert set(p) >= {"arg_id", "argument", "attack", "target_id", "target", "defeats"}
    assert p["defeats"] is True
    assert p["argument"]["Conc"] == ["We should not buy a."] and p["argument"]["Ass"] == []
    verdicts = [t.payload["status"] for t in d.transcript.turns if t.role == "verdict"]
    assert verdicts == ["defeated", "defeated"]


def test_inadmissible_attacks_are_rejected_in_code_then_count_as_cannot_counter():
    backend = camera_reference_backend(stubborn=True)
    d = run_dialogue(backend, "camera")
    rejected = [t for t in d.transcript.turns if not t.valid]
    assert [t.speaker for t in rejected] == ["AG1", "AG1"]
    first, second = (t.payload["problems"] for t in rejected)
    assert any("undercut is impossible" in p for p in first)  # Arg2 has no assumptions
    assert any("repeats your earlier premise" in p for p in second)  # reuses Arg1's premises
    # the repair turn quoted the problems back to the model
    repair_req = next(r for r in backend.requests if "breaks the rules" in r.last)
    assert "undercut is impossible" in repair_req.last
    # ... and the structure is still the formal example's
    assert d.labelling == {"A1": "OUT", "A2": "IN", "A3": "OUT", "A4": "IN", "A5": "IN"}
    assert d.lines[0]["reason"] == "AG1 cannot counter A2"


def test_a_main_argument_nobody_can_attack_is_justified_and_ends_the_protocol():
    def script(req: Request):
        if req.schema["title"] == "MainArgumentAnswer":
            return {"argument": BUY_A.model_dump()}
        return {"can_defeat": "NO", "attack": "none", "target": "", "argument": None}

    backend = ScriptedBackend(script)
    d = run_dialogue(backend, "camera")
    assert d.outcome == "justified" and d.final_answer == BUY_A.claim
    assert len(d.lines) == 1 and len(backend.requests) == 2
    assert d.labelling == {"A1": "IN"}


def test_a_proponent_who_counters_last_keeps_the_main_argument_justified():
    """A1 ← A2 ← A3 and AG2 cannot answer A3: A1 is reinstated (grounded: IN)."""

    def script(req: Request):
        title, user = req.schema["title"], req.messages[1].content
        if title == "MainArgumentAnswer":
            return {"argument": BUY_A.model_dump()}
        if "You are AG2" in req.messages[0].content and "We should buy a." in user:
            return {
                "can_defeat": "YES",
                "attack": "rebut",
                "target": "We should buy a.",
                "argument": OUT_OF_STOCK.model_dump(),
            }
        if "You are AG1" in req.messages[0].content and "out of stock" in user:
            return {
                "can_defeat": "YES",
                "attack": "rebut",
                "target": "We should not buy a.",
                "argument": Argument.simple(
                    ["The shop restocks a tomorrow.", "If a is restocked, we may buy it."],
                    "We may buy a after all.",
                ).model_dump(),
            }
        return {"can_defeat": "NO", "attack": "none", "target": "", "argument": None}

    d = run_dialogue(ScriptedBackend(script), "camera")
    assert d.outcome == "justified"
    assert d.labelling == {"A1": "IN", "A2": "OUT", "A3": "IN"}
    assert d.lines[0]["chain"] == ["A1", "A2", "A3"]


# -- termination ----------------------------------------------------------------------------
_CONC = re.compile(r"Its conclusions \(Conc\): (\[.*\])")


def _conc_of(req: Request) -> list[str]:
    m = _CONC.search(req.last if "Conc" in req.last else req.messages[1].content)
    return json.loads(m.group(1)) if m else []


class NeverStops:
    """A model that always has a fresh, valid counter-argument (and answers everything else)."""

    def __init__(self) -> None:
        self.n = itertools.count(1)

    def valid(self, req: Request) -> dict:
        n = next(self.n)
        title = req.schema["title"]
        if title == "MainArgumentAnswer":
            return {
                "argument": Argument.simple([f"fact {n} holds"], f"claim {n}: do it").model_dump()
            }
        if title == "AttackAnswer":
            target = _conc_of(req)[-1]
            arg = Argument.simple([f"new reason number {n} exists"], f"point {n}: that claim fails")
            return {
                "can_defeat": "YES",
                "attack": "rebut",
                "target": target,
                "argument": arg.model_dump(),
            }
        if title == "CharacterizationAnswer":
            c = {"strong": [f"property {n}"], "consequent": f"kind {n}"}
            return {"C1": c, "C2": {"strong": [f"property {n}b"], "consequent": f"kind {n}b"}}
        if title == "GeneralizationAnswer":
            return {"E": {"strong": [f"broad property {n}"], "consequent": "a broad answer"}}
        return {"final_answer": f"a new answer {n}"}

    def __call__(self, req: Request) -> dict:
        return self.valid(req)


def test_a_model_that_never_stops_attacking_is_stopped_by_the_cap():
    k = 3
    backend = ScriptedBackend(NeverStops())
    d = run_dialogue(backend, "camera", max_attacks=k)
    assert d.terminated
    assert [line["reason"] for line in d.lines] == [f"turn cap reached ({k} attacks)"] * 2
    assert [line["chain"] for line in d.lines] == [
        ["A1", "A2", "A3", "A4"],
        ["A5", "A6", "A7", "A8"],
    ]
    # an odd number of attacks leaves the last attacker standing: both mains are defeated
    assert d.outcome == "synthesis"
    assert d.labelling["A1"] == "OUT" and d.labelling["A4"] == "IN"
    agent_turns = [t for t in d.transcript.turns if t.speaker != "protocol"]
    assert len(agent_turns) == turn_bound(k) == 11
    assert len(backend.requests) == turn_bound(k) <= call_bound(k)


@pytest.mark.parametrize("k", [1, 2, 3, 6])
def test_the_call_bound_holds_and_is_reached_by_the_worst_model(k):
    """Every answer needs a schema repair and a protocol repair, and the model never gives up.

    With an odd cap both lines end with the main argument defeated, so the dialogue runs all
    the way to the synthesis: the protocol then makes exactly the documented maximum of calls.
    With an even cap the proponent has the last word, line 1 is justified and it stops early.
    """
    good = NeverStops()

    def breaking(req: Request) -> dict:
        title = req.schema["title"]
        if title == "MainArgumentAnswer":
            return {"argument": Argument.simple(["x holds"], "x holds").model_dump()}  # circular
        if title == "AttackAnswer":  # undercut of an argument without assumptions
            return {
                "can_defeat": "YES",
                "attack": "undercut",
                "target": "",
                "argument": Argument.simple(["y"], "z").model_dump(),
            }
        if title == "CharacterizationAnswer":  # copies the warrants instead of characterising
            w1, w2 = (
                json.loads(re.search(rf"Argument{i} \(AG{i}\): (\{{.*\}})", req.prompt).group(1))
                for i in (1, 2)
            )
            return {"C1": w1, "C2": w2}
        if title == "GeneralizationAnswer":  # keeps C1's own premises word for word
            c1 = json.loads(re.search(r"C1: (\{.*\})", req.prompt).group(1))
            return {"E": {"strong": c1["strong"], "consequent": "x"}}
        claim1 = re.search(r'conclusion as it stands \("(.*?)" /', req.prompt).group(1)
        return {"final_answer": claim1}  # restates a side's conclusion

    def script(req: Request):
        assistants = sum(1 for m in req.messages if m.role == "assistant")
        if assistants == 0 or (assistants == 1 and "breaks the rules" in req.last):
            return "this is not JSON"
        if assistants == 1:
            return breaking(req)
        return good.valid(req)

    backend = ScriptedBackend(script)
    d = run_dialogue(backend, "camera", max_attacks=k)
    assert d.terminated
    assert d.transcript.outcome["model_calls"] == len(backend.requests)
    assert len(backend.requests) <= call_bound(k) == 8 * k + 20
    if k % 2:
        assert d.outcome == "synthesis"
        assert len(backend.requests) == call_bound(k)
    else:
        assert d.outcome == "justified" and len(backend.requests) == 4 * (1 + k)


def test_garbage_forever_ends_quickly_with_no_answer():
    backend = ScriptedBackend(lambda req: "no json here")
    d = run_dialogue(backend, "camera")
    assert d.terminated and d.outcome == "none" and d.final_answer == ""
    assert [line["status"] for line in d.lines] == ["missing", "missing"]
    assert len(backend.requests) == 8  # two main-argument turns, 4 calls each


def test_a_side_cannot_reuse_a_premise_even_rephrased():
    """AG2 attacks with the same premise again (different case and punctuation): rejected."""

    def script(req: Request):
        title = req.schema["title"]
        if title == "MainArgumentAnswer":
            who = "AG1" if "You are AG1" in req.messages[0].content else "AG2"
            return {
                "argument": Argument.simple([f"{who} likes it"], f"{who} wants it").model_dump()
            }
        if title == "AttackAnswer":
            target = _conc_of(req)[-1]
            if "You are AG2" in req.messages[0].content:
                text = (
                    "A is OUT of stock!" if "AG1 wants it" not in target else "a is out of stock."
                )
                return {
                    "can_defeat": "YES",
                    "attack": "rebut",
                    "target": target,
                    "argument": Argument.simple([text], f"no: {target} is wrong").model_dump(),
                }
            # AG1 always has a fresh counter
            return {
                "can_defeat": "YES",
                "attack": "rebut",
                "target": target,
                "argument": Argument.simple(
                    [f"a fresh reason {len(req.prompt)}"], "a restocks soon"
                ).model_dump(),
            }
        return {"can_defeat": "NO", "attack": "none", "target": "", "argument": None}

    d = run_dialogue(ScriptedBackend(script), "camera", max_attacks=6)
    line1 = d.lines[0]
    assert line1["chain"] == ["A1", "A2", "A3"]  # AG2's second use of the premise was refused
    rejected = [t for t in d.transcript.turns if not t.valid and t.round == 1]
    assert rejected and all("repeats your earlier premise" in t.text for t in rejected)
    assert line1["status"] == "justified"


def test_dialogue_survives_a_json_round_trip_of_its_transcript(tmp_path):
    d = run_dialogue(camera_reference_backend(), "camera")
    path = d.transcript.save(tmp_path / "camera.json")
    again = Dialogue(Transcript.load(path))
    assert again.summary() == d.summary()
    assert again.to_map().counts() == d.to_map().counts()


def test_values_only_stances_are_accepted():
    case = Case(
        issue="Which camera?",
        agents=[Stance(name="P", values="portability"), Stance(name="Q", values="image quality")],
    )

    def script(req: Request):
        if req.schema["title"] == "MainArgumentAnswer":
            return {
                "argument": Argument.simple(["small is good"], "buy the small one").model_dump()
            }
        return {"can_defeat": "NO", "attack": "none", "target": "", "argument": None}

    backend = ScriptedBackend(script)
    d = run_dialogue(backend, case)
    assert d.outcome == "justified"
    assert "portability" in backend.requests[0].messages[0].content
