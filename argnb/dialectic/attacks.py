"""Rebut and undercut, checked in code (the model's word is not enough).

- **rebut** attacks a conclusion in the target's ``Conc``. It is admissible only if the rule that
  derives that conclusion has strong premises: a conclusion resting on assumptions alone is
  answered by undercutting an assumption instead.
- **undercut** shows that an assumption in the target's ``Ass`` does not hold. It is admissible
  only if the target has at least one assumption.

Defeat follows Prakken & Sartor: A defeats B if A undercuts B, or A rebuts B and B does not
undercut A.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from argnb.dialectic.novelty import PremiseMemory, best_match, similarity
from argnb.dialectic.schemas import Argument, AttackKind

RESTATE_THRESHOLD = 0.9


@dataclass(frozen=True)
class Attack:
    """``attacker`` attacks ``target`` (argument ids) by ``kind`` on the statement ``on``."""

    attacker: str
    target: str
    kind: AttackKind
    on: str = ""


@dataclass
class AttackCheck:
    """The verdict on a proposed attack: admissible or not, and why."""

    kind: str
    on: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def __bool__(self) -> bool:
        return self.ok


def admissible_kinds(target: Argument) -> list[AttackKind]:
    """Which attack kinds ``target`` admits at all."""
    kinds: list[AttackKind] = []
    if any(r.antecedent.strong for r in target.rules):
        kinds.append("rebut")
    if target.Ass:
        kinds.append("undercut")
    return kinds


def well_formed(arg: Argument) -> list[str]:
    """Problems with an argument on its own.

    Every rule must rest on something, must not list the same premise twice, and must not be
    circular (its conclusion repeating one of its own premises); every premise, assumption and
    conclusion must be a statement of at least two words (a single word such as "rules" or "4"
    is not a claim anyone can attack).

    >>> well_formed(Argument.simple(["it rains", "it rains"], "it rains"))[0]
    "rule r1 lists the premise 'it rains' more than once"
    """
    problems = []
    for r in arg.rules:
        ante = [*r.antecedent.strong, *r.antecedent.weak_negation]
        if not ante:
            problems.append(
                f"rule {r.id} has neither premises nor assumptions; "
                "give the premises its conclusion rests on"
            )
        seen: list[str] = []
        for p in ante:
            if any(similarity(p, q) >= RESTATE_THRESHOLD for q in seen):
                problems.append(f"rule {r.id} lists the premise {p!r} more than once")
                break
            seen.append(p)
        for text in [*ante, r.consequent]:
            if len(re.findall(r"\w+", text)) < 2:
                problems.append(f"rule {r.id}: {text!r} is not a statement; write a full sentence")
        if any(similarity(r.consequent, p) >= RESTATE_THRESHOLD for p in r.antecedent.strong):
            problems.append(
                f"rule {r.id} is circular: its conclusion {r.consequent!r} repeats a premise"
            )
    return problems


def check_attack(
    kind: str,
    on: str,
    target: Argument,
    attacker: Argument | None,
    *,
    side: str | None = None,
    memory: PremiseMemory | None = None,
) -> AttackCheck:
    """Check a proposed attack of ``attacker`` on ``target``.

    ``on`` is the attacked statement as the model wrote it; it is resolved against the target's
    ``Conc`` (rebut) or ``Ass`` (undercut) and, when it matches, replaced by the exact text.
    With ``side`` and ``memory``, premises that side has already used are rejected.

    >>> a1 = Argument.simple(["a is compact", "a is light"], "We should buy a")
    >>> a2 = Argument.simple(["a is out of stock"], "We should not buy a")
    >>> check_attack("rebut", "We should buy a", a1, a2).ok
    True
    >>> check_attack("undercut", "", a1, a2).problems[0]
    'undercut is impossible: the target has no assumptions (its Ass is empty)'
    """
    out = AttackCheck(kind=kind, on=on)
    if kind not in ("rebut", "undercut"):
        out.problems.append(f"attack must be 'rebut' or 'undercut', not {kind!r}")
        return out
    if attacker is None:
        out.problems.append("can_defeat is YES but no counter-argument was given")
        return out
    if kind == "rebut":
        _check_rebut(out, on, target, attacker)
    else:
        _check_undercut(out, on, target, attacker)
    out.problems.extend(well_formed(attacker))
    if memory is not None and side is not None:
        for new, old in memory.reused(side, attacker.premises()):
            out.problems.append(
                f"premise {new!r} repeats your earlier premise {old!r}; "
                "a side may not use the same premise twice"
            )
    return out


def _check_rebut(out: AttackCheck, on: str, target: Argument, attacker: Argument) -> None:
    conc = target.Conc
    i = len(conc) - 1 if not on.strip() else best_match(on, conc)
    if i is None:
        out.problems.append(
            "a rebut must name one of the opponent's conclusions (Conc): "
            + "; ".join(repr(c) for c in conc)
        )
        return
    out.on = conc[i]
    rule = target.rules[i]
    if not rule.antecedent.strong:
        out.problems.append(
            "rebut is impossible: the conclusion you attack rests on no strong premises; "
            "undercut one of its assumptions instead"
        )
    if similarity(attacker.claim, out.on) >= RESTATE_THRESHOLD:
        out.problems.append("your conclusion restates the one you rebut; it must contradict it")


def _check_undercut(out: AttackCheck, on: str, target: Argument, attacker: Argument) -> None:
    ass = target.Ass
    if not ass:
        out.problems.append(
            "undercut is impossible: the target has no assumptions (its Ass is empty)"
        )
        return
    i = (0 if len(ass) == 1 else None) if not on.strip() else best_match(on, ass)
    if i is None:
        out.problems.append(
            "an undercut must name one of the opponent's assumptions (Ass): "
            + "; ".join(repr(a) for a in ass)
        )
        return
    out.on = ass[i]
    if similarity(attacker.claim, out.on) >= RESTATE_THRESHOLD:
        out.problems.append(
            "your conclusion restates the assumption; it must show the assumption does not hold"
        )


def defeats(attacks: Iterable[Attack]) -> set[tuple[str, str]]:
    """The defeat relation (attacker, target) under Prakken & Sartor's rule.

    >>> sorted(defeats([Attack("B", "A", "rebut"), Attack("A", "B", "undercut")]))
    [('A', 'B')]
    >>> sorted(defeats([Attack("B", "A", "rebut"), Attack("A", "B", "rebut")]))
    [('A', 'B'), ('B', 'A')]
    """
    attacks = list(attacks)
    undercuts = {(a.attacker, a.target) for a in attacks if a.kind == "undercut"}
    out: set[tuple[str, str]] = set()
    for a in attacks:
        if a.kind == "undercut" or (a.target, a.attacker) not in undercuts:
            out.add((a.attacker, a.target))
    return out


def classify(target: Argument, attacker: Argument, on: str, kind: str | None = None) -> str:
    """For exercises: is attacking ``on`` an admissible "rebut", "undercut", or "neither"?

    When ``kind`` is None the statement decides: a conclusion of the target → rebut, an
    assumption → undercut. Either must also pass :func:`check_attack`.
    """
    kinds = [kind] if kind else ["rebut", "undercut"]
    for k in kinds:
        cands = target.Conc if k == "rebut" else target.Ass
        if kind is None and best_match(on, cands) is None:
            continue
        if check_attack(k, on, target, attacker).ok:
            return k
    return "neither"
