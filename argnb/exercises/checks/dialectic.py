"""Graders for ``exercises/02_dialectic`` (no model needed).

Each check tests the learner's function or answer on hand-made cases, raises ``AssertionError``
with a hint when something is wrong, and returns a short success message when all is right.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from argnb.dialectic.attacks import check_attack, classify, well_formed
from argnb.dialectic.case import Case
from argnb.dialectic.novelty import best_match, similarity
from argnb.dialectic.schemas import Argument
from argnb.dialectic.semantics import grounded_labelling

# -- exercise 1: rebut, undercut or neither ---------------------------------------------------
_BUY_A = Argument.simple(
    ["a is compact", "a is light", "If a camera is compact and light, we should buy it"],
    "We should buy a",
)
_OPEN = Argument.simple(
    ["The shop opens at nine"],
    "We can buy the camera this morning",
    ["There is no evidence that the shop is closed today"],
)
_HOPE = Argument.simple([], "The delivery will arrive on time", ["There is no news of a strike"])
_CHAIN = Argument.model_validate(
    {
        "rules": [
            {
                "id": "r1",
                "antecedent": {"strong": ["c is compact", "c is light"], "weak_negation": []},
                "consequent": "c is user-friendly",
            },
            {
                "id": "r2",
                "antecedent": {
                    "strong": ["c is user-friendly", "c has a long battery life"],
                    "weak_negation": ["There is no evidence that c is out of stock"],
                },
                "consequent": "We should buy c",
            },
        ]
    }
)

#: (target argument, attacked statement, expected answer, why)
ADMISSIBILITY_CASES: list[tuple[Argument, str, str, str]] = [
    (_BUY_A, "We should buy a", "rebut", "a conclusion resting on strong premises"),
    (
        _BUY_A,
        "a is compact",
        "neither",
        "a premise is not a conclusion (Conc) nor an assumption (Ass)",
    ),
    (_OPEN, "There is no evidence that the shop is closed today", "undercut", "an assumption"),
    (_OPEN, "We can buy the camera this morning", "rebut", "the rule has a strong premise too"),
    (_HOPE, "The delivery will arrive on time", "neither", "its rule has no strong premises"),
    (_HOPE, "There is no news of a strike", "undercut", "an assumption"),
    (_CHAIN, "c is user-friendly", "rebut", "an intermediate conclusion is in Conc as well"),
    (_CHAIN, "There is no evidence that c is out of stock", "undercut", "an assumption of rule r2"),
    (_CHAIN, "c has a long battery life", "neither", "a premise"),
]


def check_admissible(fn: Callable[[Argument, str], str]) -> str:
    """Grade ``fn(target, statement) -> "rebut" | "undercut" | "neither"``."""
    attacker = Argument.simple(["something new"], "a contrary claim")
    for i, (target, on, expected, why) in enumerate(ADMISSIBILITY_CASES, start=1):
        assert classify(target, attacker, on) == expected  # the cases agree with the library
        got = fn(target, on)
        assert got in ("rebut", "undercut", "neither"), (
            f"case {i}: answer 'rebut', 'undercut' or 'neither', not {got!r}"
        )
        assert got == expected, (
            f"case {i}: attacking {on!r} of an argument with Conc={target.Conc} and "
            f"Ass={target.Ass} is {expected!r} ({why}), you said {got!r}"
        )
    return f"all {len(ADMISSIBILITY_CASES)} cases right"


# -- exercise 2: the grounded extension by hand ----------------------------------------------
FRAMEWORK_ARGUMENTS = ["a", "b", "c", "d", "e", "f", "g"]
FRAMEWORK_DEFEATS = [("a", "b"), ("b", "c"), ("c", "d"), ("e", "f"), ("f", "e"), ("f", "g")]


def check_grounded(extension: Iterable[str], labelling: dict[str, str] | None = None) -> str:
    """Grade a grounded extension (and optionally an IN/OUT/UNDEC labelling) of the framework."""
    truth = grounded_labelling(FRAMEWORK_ARGUMENTS, FRAMEWORK_DEFEATS)
    expected = {a for a, lab in truth.items() if lab == "IN"}
    ext = set(extension)
    unknown = ext - set(FRAMEWORK_ARGUMENTS)
    assert not unknown, f"{sorted(unknown)} are not arguments of the framework"
    missing, extra = expected - ext, ext - expected
    # count, never name: naming the arguments would hand out the answer one try at a time
    assert not extra, (
        f"{len(extra)} of your arguments should not be in: an argument is accepted only when "
        "every attacker is defeated by an argument already accepted (start from the unattacked ones)"
    )
    assert not missing, (
        f"{len(missing)} argument(s) are missing: after accepting the unattacked arguments, accept "
        "what they defend, and repeat until nothing changes"
    )
    if labelling is not None:
        assert set(labelling) == set(FRAMEWORK_ARGUMENTS), "label every argument"
        assert {a for a, lab in labelling.items() if lab == "IN"} == ext, (
            "the arguments labelled IN should be exactly your grounded extension"
        )
        wrong = [a for a, lab in truth.items() if labelling[a] != lab]
        assert not wrong, (
            f"{len(wrong)} label(s) are wrong: OUT means attacked by an IN argument, UNDEC "
            "neither IN nor OUT"
        )
    return f"right: the grounded extension is {sorted(expected)}"


# -- exercise 3: stances that produce an undercut --------------------------------------------
def _from_stance(
    premises: Iterable[str], stance_texts: list[str], *, derived: Iterable[str] = ()
) -> list[str]:
    """Premises not found (near-duplicate or contained) in the stance."""
    derived = list(derived)
    return [
        p
        for p in premises
        if best_match(p, stance_texts, threshold=0.8) is None
        and not any(similarity(p, d) >= 0.9 for d in derived)
    ]


def check_undercut_case(case: Case, main: Argument, undercut: Argument, on: str) -> str:
    """Grade a new issue whose first agent's argument rests on an assumption the second undercuts."""
    from argnb.dialectic.examples import EXAMPLES, load_example

    assert isinstance(case, Case), "case must be an argnb.dialectic.Case"
    taken = {load_example(n).issue for n in EXAMPLES}
    assert case.issue not in taken, "pick a new issue, not one of the examples"
    a1, a2 = case.agents
    assert main.Ass, (
        "the main argument needs an assumption (antecedent.weak_negation), "
        "otherwise there is nothing to undercut"
    )
    problems = well_formed(main) + well_formed(undercut)
    assert not problems, "; ".join(problems)
    stance1 = [*a1.facts, *a1.rules]
    stance2 = [*a2.facts, *a2.rules]
    alien = _from_stance(main.premises(), stance1)
    assert not alien, f"{a1.name}'s premises must come from its stance; not found: {alien}"
    alien = _from_stance(undercut.premises(), stance2)
    assert not alien, f"{a2.name}'s premises must come from its stance; not found: {alien}"
    verdict = check_attack("undercut", on, main, undercut)
    assert verdict.ok, "the undercut is not admissible: " + "; ".join(verdict.problems)
    return f"right: {a2.name} undercuts {a1.name} on {verdict.on!r}"


def undercut_dialogue(case: Case, main: Argument, undercut: Argument, on: str):
    """Play the learner's case with a scripted model that says exactly their two arguments."""
    from argnb.dialectic.protocol import run_dialogue
    from argnb.llm.scripted import ScriptedBackend

    first = case.agents[0].name

    def script(req):
        title = req.schema["title"]
        if title == "MainArgumentAnswer":
            return (
                {"argument": main.model_dump()}
                if f"You are {first}," in req.messages[0].content
                else {
                    "argument": Argument.simple(
                        [f"{case.agents[1].name} has a view"], "Another answer"
                    ).model_dump()
                }
            )
        attacker_turn = (
            title == "AttackAnswer" and f"You are {first}," not in req.messages[0].content
        )
        if attacker_turn and main.claim in req.messages[1].content:
            return {
                "can_defeat": "YES",
                "attack": "undercut",
                "target": on,
                "argument": undercut.model_dump(),
            }
        if title == "AttackAnswer":
            return {"can_defeat": "NO", "attack": "none", "target": "", "argument": None}
        if title == "CharacterizationAnswer":
            c = {"strong": ["a property"], "consequent": "a kind of answer"}
            return {"C1": c, "C2": {"strong": ["another property"], "consequent": "another kind"}}
        if title == "GeneralizationAnswer":
            return {"E": {"strong": ["a broader property"], "consequent": "an answer both accept"}}
        return {"final_answer": "(scripted) an answer both can accept"}

    return run_dialogue(ScriptedBackend(script), case, max_attacks=2)
