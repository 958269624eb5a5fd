"""Who may speak next: the roundtable's turn rules, enforced in code whatever the moderator says.

The moderator model *proposes* the next speaker; these rules *decide*. Two rules hold:

``no-repeat``
    nobody speaks twice in a row;
``human-every-N`` (N = 3 by default)
    among any N consecutive speaker turns at least one is the human's: when the human has not
    spoken in the last N - 1 turns, the next speaker must be the human.

Speaker turns are deliberator contributions and human turns -- a pass counts, since the human
had the floor; moderator messages are not turns. When the moderator names someone the rules
forbid (or someone who is not at the table, or gives no usable answer), one documented rule
picks instead:

1. the human, when ``human-every-N`` requires them;
2. otherwise the allowed speaker who has waited longest (someone who has not spoken yet first,
   in seating order).

Both rules can always be met: with N >= 2 and at least one deliberator, the allowed set is never
empty (if the human is required, the last speaker was not the human; otherwise at most one
participant -- the last speaker -- is excluded).

>>> r = TurnRules("Ann", ("Ann", "D1", "D2"))
>>> r.allowed(["D1", "D2"])
['Ann']
>>> r.enforce(["D1", "D2"], "D2")
Ruling(speaker='Ann', choice='D2', broken=('no-repeat', 'human-every-3'))
>>> r.enforce(["Ann"], "D2").overridden
False
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from argnb.errors import ArgnbError

NO_REPEAT = "no-repeat"
UNKNOWN = "unknown-speaker"
NO_ANSWER = "no-valid-answer"


def human_rule(every: int) -> str:
    """The name of the human-participation rule for a window of ``every`` turns."""
    return f"human-every-{every}"


@dataclass(frozen=True)
class Ruling:
    """The decision on one moderator choice: who speaks, and which rules the choice broke."""

    speaker: str
    choice: str | None
    broken: tuple[str, ...] = ()

    @property
    def overridden(self) -> bool:
        return bool(self.broken)


@dataclass(frozen=True)
class TurnRules:
    """The turn rules of one table: the human's name, everyone's name in seating order, N."""

    human: str
    participants: tuple[str, ...]
    every: int = 3

    def __post_init__(self) -> None:
        names = tuple(self.participants)
        object.__setattr__(self, "participants", names)
        if self.human not in names:
            raise ArgnbError(f"the human {self.human!r} is not among the participants {names}")
        if len(set(names)) != len(names):
            raise ArgnbError(
                f"participant names must differ: {names}", hint="give each deliberator a name"
            )
        if len(names) < 2:
            raise ArgnbError("a roundtable needs the human and at least one deliberator")
        if self.every < 2:
            raise ArgnbError(
                f"the human must speak at least once every N turns with N >= 2, not {self.every}",
                hint="N = 1 would make the human speak twice in a row",
            )

    @property
    def human_rule(self) -> str:
        return human_rule(self.every)

    def human_due(self, history: Sequence[str]) -> bool:
        """True when the human has not spoken in the last N - 1 turns (and so must speak next)."""
        recent = list(history)[-(self.every - 1) :]
        return len(recent) == self.every - 1 and self.human not in recent

    def broken(self, history: Sequence[str], candidate: str | None) -> list[str]:
        """The rules ``candidate`` would break as the next speaker after ``history``."""
        if candidate is None:
            return [NO_ANSWER]
        if candidate not in self.participants:
            return [UNKNOWN]
        out = []
        if history and history[-1] == candidate:
            out.append(NO_REPEAT)
        if candidate != self.human and self.human_due(history):
            out.append(self.human_rule)
        return out

    def allowed(self, history: Sequence[str]) -> list[str]:
        """Everyone who may speak next, in seating order."""
        return [p for p in self.participants if not self.broken(history, p)]

    def fallback(self, history: Sequence[str]) -> str:
        """Who speaks when the moderator's choice is overridden (see the module docstring)."""
        if self.human_due(history):
            return self.human
        allowed = self.allowed(history)
        last_seen = {p: i for i, p in enumerate(history)}
        return min(allowed, key=lambda p: (last_seen.get(p, -1), self.participants.index(p)))

    def enforce(self, history: Sequence[str], choice: str | None) -> Ruling:
        """Keep an allowed choice; override any other by :meth:`fallback`."""
        broken = self.broken(history, choice)
        if not broken:
            return Ruling(str(choice), choice)
        return Ruling(self.fallback(history), choice, tuple(broken))

    def violations(self, history: Sequence[str]) -> list[str]:
        """Every place a whole sequence of speakers breaks a rule (empty: the sequence is legal)."""
        out = []
        for i, speaker in enumerate(history):
            for rule in self.broken(history[:i], speaker):
                out.append(f"turn {i + 1} ({speaker}): {rule}")
        return out
