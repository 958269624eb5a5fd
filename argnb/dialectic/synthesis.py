"""Synthesis: characterise both warrants → generalise into a consensus core E → final answer.

This is Kido & Kurihara's reasoning method read in natural language, as in Masuo's thesis (their
specialisation step and background knowledge are left out):

1. **characterise** each warrant (the last rule of each main argument): premises and conclusion
   become properties, without names of particular objects;
2. **generalise** the pair into a consensus core E: premises common to both are kept, the others
   are lifted to a broader concept that covers both positions;
3. **answer**: a concrete solution that satisfies E and does not simply reuse either side's
   conclusion.

Agent 1 performs all three steps. The checks in code are deliberately lexical and modest: a
characterised or generalised premise must not copy its source word for word, and the answer must
not restate either conclusion.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from argnb.agents import Response
from argnb.dialectic import prompts
from argnb.dialectic.case import Case
from argnb.dialectic.novelty import similarity
from argnb.dialectic.payloads import Characterization, Generalization, SynthesisAnswer
from argnb.dialectic.schemas import (
    Argument,
    CharacterizationAnswer,
    FinalAnswer,
    GeneralizationAnswer,
    Rule,
)
from argnb.transcript import Payload, Turn
from argnb.words import drop_repeats


class Speaker(Protocol):
    """What synthesis needs from the protocol running it (see DialecticProtocol)."""

    case: Case

    def name(self, side: int) -> str: ...

    def ask(
        self,
        side: int,
        task: str,
        schema: Any,
        check: Callable[[Any], list[str]],
        *,
        role: str,
        line: int | None,
        fallback: str,
        strict: bool = True,
    ) -> Response[Any]: ...

    def accept(
        self, resp: Response, payload: Payload, text: str, role: str | None = None
    ) -> Turn: ...

    def add_argument(self, side: int, arg: Argument) -> str: ...


COPY_THRESHOLD = 0.9


def warrant_text(rule: Rule) -> str:
    """A warrant as compact JSON for a prompt."""
    return json.dumps(
        {"strong": rule.antecedent.strong, "consequent": rule.consequent}, ensure_ascii=False
    )


def _copies(items: list[str], sources: list[str]) -> list[str]:
    return [i for i in items if any(similarity(i, s) >= COPY_THRESHOLD for s in sources)]


def check_characterization(ans: CharacterizationAnswer, w1: Rule, w2: Rule) -> list[str]:
    problems = []
    for label, c, w in (("C1", ans.C1, w1), ("C2", ans.C2, w2)):
        for item in _copies([*c.strong, c.consequent], [*w.antecedent.strong, w.consequent]):
            problems.append(f"{label} copies {item!r} from its warrant; state it as a property")
    return problems


def check_generalization(ans: GeneralizationAnswer, c: CharacterizationAnswer) -> list[str]:
    common = [
        p for p in c.C1.strong if any(similarity(p, q) >= COPY_THRESHOLD for q in c.C2.strong)
    ]
    own = [p for p in [*c.C1.strong, *c.C2.strong] if p not in common]
    allowed = set(common)
    return [
        f"E copies {item!r} from C1/C2; lift it to a concept that covers both positions"
        for item in _copies(ans.E.strong, own)
        if item not in allowed and not any(similarity(item, k) >= COPY_THRESHOLD for k in common)
    ]


def check_answer(ans: FinalAnswer, claims: list[str]) -> list[str]:
    return [
        f"the final answer restates the conclusion {c!r}; give a new solution that satisfies E"
        for c in claims
        if similarity(ans.final_answer, c) >= COPY_THRESHOLD
    ]


def synthesize(proto: Speaker, arg1: Argument, arg2: Argument) -> dict[str, Any]:
    """Run the three steps as agent 1 of ``proto``; record each turn; return what was built."""
    w1, w2 = arg1.warrant, arg2.warrant
    a1, a2 = proto.name(0), proto.name(1)
    out: dict[str, Any] = {}

    task = prompts.render(
        "characterize", agent1=a1, agent2=a2, warrant1=warrant_text(w1), warrant2=warrant_text(w2)
    )
    got = proto.ask(
        0,
        task,
        CharacterizationAnswer,
        lambda a: check_characterization(a, w1, w2),
        role="characterize",
        line=None,
        fallback="Keep the same JSON shape.",
        strict=False,
    )
    if got.value is None:
        return out
    chars: CharacterizationAnswer = got.value
    out["C1"], out["C2"] = chars.C1.model_dump(), chars.C2.model_dump()
    proto.accept(
        got,
        Characterization(C1=chars.C1, C2=chars.C2, problems=list(got.problems)),
        f"C1: {chars.C1.consequent} | C2: {chars.C2.consequent}",
    )

    task = prompts.render(
        "generalize",
        c1=chars.C1.model_dump_json(),
        c2=chars.C2.model_dump_json(),
    )
    got = proto.ask(
        0,
        task,
        GeneralizationAnswer,
        lambda a: check_generalization(a, chars),
        role="generalize",
        line=None,
        fallback="Keep the same JSON shape.",
        strict=False,
    )
    if got.value is None:
        return out
    core = got.value.E
    out["E"] = core.model_dump()
    proto.accept(got, Generalization(E=core, problems=list(got.problems)), core.consequent)

    task = prompts.render(
        "answer",
        issue=proto.case.issue,
        agent1=a1,
        agent2=a2,
        warrant1=warrant_text(w1),
        warrant2=warrant_text(w2),
        core=core.model_dump_json(),
        claim1=arg1.claim,
        claim2=arg2.claim,
    )
    got = proto.ask(
        0,
        task,
        FinalAnswer,
        lambda a: check_answer(a, [arg1.claim, arg2.claim]),
        role="answer",
        line=None,
        fallback="Keep the same JSON shape.",
        strict=False,
    )
    if got.value is None:
        return out
    answer = drop_repeats(got.value.final_answer)  # the synthesis says no sentence twice
    out["final_answer"] = answer
    synth = Argument.simple(core.strong, answer)
    arg_id = proto.add_argument(0, synth)
    proto.accept(
        got,
        SynthesisAnswer(
            arg_id=arg_id, final_answer=answer, argument=synth, problems=list(got.problems)
        ),
        answer,
    )
    return out
