"""A dialectic transcript read back as arguments, attacks and a Dung framework.

Views (maps, labellings, exports) read transcripts only, so a saved dialogue can be re-rendered or
re-analysed without a model. The turns' typed payloads (:mod:`argnb.dialectic.payloads`) carry
each accepted argument and attack; :class:`DialogueRecord` collects them in one pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from argnb.dialectic.attacks import Attack, defeats
from argnb.dialectic.payloads import ArgumentMove, AttackMove, SynthesisAnswer
from argnb.dialectic.schemas import Argument
from argnb.dialectic.semantics import Label, grounded_labelling, preferred_extensions
from argnb.transcript import Transcript

_ROLES = {ArgumentMove: "main", AttackMove: "attack", SynthesisAnswer: "synthesis"}


@dataclass(frozen=True)
class ArgumentRecord:
    """One argument of the dialogue and where it came from."""

    id: str
    agent: str
    argument: Argument
    line: int | None  # 1 or 2 for the rebuttal phase, None for the synthesis
    role: str  # "main", "attack" or "synthesis"
    turn: int  # index of the transcript turn


@dataclass(frozen=True)
class DialogueRecord:
    """Every accepted argument (in dialogue order) and attack of a transcript."""

    arguments: dict[str, ArgumentRecord]
    attacks: list[Attack]

    @classmethod
    def of(cls, tr: Transcript) -> DialogueRecord:
        args: dict[str, ArgumentRecord] = {}
        atts: list[Attack] = []
        for i, t in enumerate(tr.turns):
            p = t.payload
            if not t.valid or type(p) not in _ROLES:
                continue
            args[p.arg_id] = ArgumentRecord(  # type: ignore[attr-defined]
                id=p.arg_id,  # type: ignore[attr-defined]
                agent=t.speaker,
                argument=p.argument,  # type: ignore[attr-defined]
                line=getattr(p, "line", None),
                role=_ROLES[type(p)],
                turn=i,
            )
            if isinstance(p, AttackMove):
                atts.append(Attack(p.arg_id, p.target_id, p.attack, p.target))  # type: ignore[arg-type]
        return cls(args, atts)

    def framework(
        self, *, symmetric_rebuts: bool = False
    ) -> tuple[list[str], set[tuple[str, str]]]:
        """Arguments and defeats of the dialogue.

        By default an attack is what the dialogue recorded: A rebutted B. With
        ``symmetric_rebuts=True`` each rebut is also read the other way (B's conclusion
        contradicts A's just as much), which is how Prakken & Sartor's framework sees two
        conflicting conclusions without priorities; the rule "A rebuts B and B does not undercut
        A" then applies both ways.
        """
        atts = self.attacks
        if symmetric_rebuts:
            have = {(x.attacker, x.target) for x in atts}
            reverse = [Attack(a.target, a.attacker, "rebut") for a in atts if a.kind == "rebut"]
            atts = atts + [r for r in reverse if (r.attacker, r.target) not in have]
        return list(self.arguments), defeats(atts)

    def labelling(self, *, symmetric_rebuts: bool = False) -> dict[str, Label]:
        """Grounded labelling (IN / OUT / UNDEC) of every argument of the dialogue."""
        return grounded_labelling(*self.framework(symmetric_rebuts=symmetric_rebuts))


def arguments(tr: Transcript) -> dict[str, ArgumentRecord]:
    """Every accepted argument, by id, in dialogue order."""
    return DialogueRecord.of(tr).arguments


def attacks(tr: Transcript) -> list[Attack]:
    """Every accepted attack."""
    return DialogueRecord.of(tr).attacks


def framework_of(
    tr: Transcript, *, symmetric_rebuts: bool = False
) -> tuple[list[str], set[tuple[str, str]]]:
    """Arguments and defeats of the dialogue (see :meth:`DialogueRecord.framework`)."""
    return DialogueRecord.of(tr).framework(symmetric_rebuts=symmetric_rebuts)


def labelling(tr: Transcript, *, symmetric_rebuts: bool = False) -> dict[str, Label]:
    """Grounded labelling (IN / OUT / UNDEC) of every argument of the dialogue."""
    return DialogueRecord.of(tr).labelling(symmetric_rebuts=symmetric_rebuts)


def preferred(tr: Transcript, *, symmetric_rebuts: bool = False) -> list[set[str]]:
    """Preferred extensions of the dialogue's framework."""
    return preferred_extensions(*framework_of(tr, symmetric_rebuts=symmetric_rebuts))
