"""Read a dialectic transcript back into arguments, attacks and a Dung framework.

Views (maps, labellings, exports) read transcripts only, so a saved dialogue can be re-rendered or
re-analysed without a model. Turn payloads written by the protocol carry ``arg_id``, ``argument``
and, for attacks, ``attack``, ``target_id`` and ``target``.
"""

from __future__ import annotations

from dataclasses import dataclass

from argnb.dialectic.attacks import Attack, defeats
from argnb.dialectic.schema import Argument, strip_computed
from argnb.dialectic.semantics import Label, grounded_labelling, preferred_extensions
from argnb.transcript import Transcript


@dataclass(frozen=True)
class ArgumentRecord:
    """One argument of the dialogue and where it came from."""

    id: str
    agent: str
    argument: Argument
    line: int | None  # 1 or 2 for the rebuttal phase, None for the synthesis
    role: str  # "main", "attack" or "synthesis"
    turn: int  # index of the transcript turn


def arguments(tr: Transcript) -> dict[str, ArgumentRecord]:
    """Every accepted argument, by id, in dialogue order."""
    out: dict[str, ArgumentRecord] = {}
    for i, t in enumerate(tr.turns):
        p = t.payload
        if not t.valid or "arg_id" not in p or "argument" not in p:
            continue
        role = {"argue": "main", "attack": "attack", "answer": "synthesis"}.get(t.role, t.role)
        out[p["arg_id"]] = ArgumentRecord(
            id=p["arg_id"],
            agent=t.speaker,
            argument=Argument.model_validate(strip_computed(p["argument"])),
            line=p.get("line"),
            role=role,
            turn=i,
        )
    return out


def attacks(tr: Transcript) -> list[Attack]:
    """Every accepted attack."""
    return [
        Attack(
            t.payload["arg_id"], t.payload["target_id"], t.payload["attack"], t.payload["target"]
        )
        for t in tr.turns
        if t.valid and t.role == "attack" and "arg_id" in t.payload
    ]


def framework_of(
    tr: Transcript, *, symmetric_rebuts: bool = False
) -> tuple[list[str], set[tuple[str, str]]]:
    """Arguments and defeats of the dialogue.

    By default an attack is what the dialogue recorded: A rebutted B. With
    ``symmetric_rebuts=True`` each rebut is also read the other way (B's conclusion contradicts
    A's just as much), which is how Prakken & Sartor's framework sees two conflicting conclusions
    without priorities; the rule "A rebuts B and B does not undercut A" then applies both ways.
    """
    args = list(arguments(tr))
    atts = attacks(tr)
    if symmetric_rebuts:
        reverse = [Attack(a.target, a.attacker, "rebut") for a in atts if a.kind == "rebut"]
        atts = atts + [
            r
            for r in reverse
            if (r.attacker, r.target) not in {(x.attacker, x.target) for x in atts}
        ]
    return args, defeats(atts)


def labelling(tr: Transcript, *, symmetric_rebuts: bool = False) -> dict[str, Label]:
    """Grounded labelling (IN / OUT / UNDEC) of every argument of the dialogue."""
    args, ds = framework_of(tr, symmetric_rebuts=symmetric_rebuts)
    return grounded_labelling(args, ds)


def preferred(tr: Transcript, *, symmetric_rebuts: bool = False) -> list[set[str]]:
    """Preferred extensions of the dialogue's framework."""
    args, ds = framework_of(tr, symmetric_rebuts=symmetric_rebuts)
    return preferred_extensions(args, ds)
