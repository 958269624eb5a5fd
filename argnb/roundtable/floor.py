"""Who may speak next when several learners sit at one table: the turn rules for many humans.

The single-human rules (:mod:`.rules`) generalise; each rule is checked in code on every
moderator choice, and a choice that breaks one is overridden (the override is recorded):

``no-repeat``
    nobody speaks twice in a row;
``human-every-N``
    among any N consecutive speaker turns at least one is a human's (N = 3 by default);
``each-human-within-B``
    every seated human gets the floor within B speaker turns of the moment their wait began
    (they joined, or last had the floor), where B = N x the most humans seated during that
    wait; so with one human this is ``human-every-N`` again;
``hand-within-K``
    a raised hand gets the floor within K speaker turns, K = max(N, humans seated);
``absent``
    only a seated human can get the floor.

A human who does not answer in time, or leaves while holding the floor, is passed over: the
turn counts as theirs (a note says why), so their wait starts again and the bound invites them
again later. Nobody speaks *for* a human: a human's turn holds only what that human sent.

Why the bounds always hold: each seated human has a deadline (the last speaker turn by which
they must have had the floor: the end of their B-turn wait, or of their hand's K turns,
whichever comes first). A choice is allowed only when the remaining deadlines can still all be
met one human per turn (earliest deadline first: the k-th earliest deadline is at least k turns
away). A new wait or hand never makes that impossible, because B and K are at least the number
of humans seated; when a deadline is due now, the human with the earliest deadline is the one
allowed (and they did not speak last: a wait starts again after one's own turn). With N >= 2 and
two deliberators someone is always allowed; with nobody seated the room has nobody to
deliberate with, and the session ends.

    >>> r = GroupRules(("D1", "D2"))
    >>> f = Floor.replay([("join", "Ann"), ("join", "Bea"), ("turn", "D1"), ("turn", "D2")])
    >>> r.allowed(f)
    ['Ann', 'Bea']
    >>> f.deadline  # each must have had the floor by that speaker turn (B = 3 x 2)
    {'Ann': 5, 'Bea': 5}
    >>> r.enforce(f, "D1").speaker, r.enforce(f, "D1").broken
    ('Ann', ('human-every-3',))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from argnb.errors import ArgnbError
from argnb.roundtable.rules import NO_ANSWER, NO_REPEAT, UNKNOWN, Ruling, human_rule

ABSENT = "absent"
EACH = "each-human-within-B"
HAND = "hand-within-K"

#: what the floor's history is made of: a speaker turn, or a seat's event
EVENTS = ("turn", "join", "leave", "hand", "lower")


@dataclass(frozen=True)
class Floor:
    """What the rules read: the speaker turns so far and the humans' seats.

    ``deadline[h]``: the last speaker-turn index by which seated human ``h`` must have had the
    floor (see the module docstring); ``hands[h]``: the turn count when ``h`` raised a hand."""

    speakers: tuple[str, ...] = ()
    present: tuple[str, ...] = ()
    deadline: Mapping[str, int] = field(default_factory=dict)
    hands: Mapping[str, int] = field(default_factory=dict)
    humans: frozenset[str] = frozenset()
    every: int = 3

    @property
    def now(self) -> int:
        """The index of the next speaker turn."""
        return len(self.speakers)

    @classmethod
    def replay(cls, events: Iterable[tuple[str, str]], every: int = 3) -> Floor:
        """The floor after ``events``: ``("turn", name)`` for a speaker turn, and ``("join" |
        "leave" | "hand" | "lower", human)`` for a seat."""
        speakers: list[str] = []
        present: list[str] = []
        since: dict[str, int] = {}  # the turn each seated human's wait began
        most: dict[str, int] = {}  # the most humans seated during that wait
        hands: dict[str, int] = {}
        hand_end: dict[str, int] = {}
        humans: set[str] = set()
        for what, name in events:
            now = len(speakers)
            if what == "turn":
                speakers.append(name)
                if name in present:  # the wait starts again; a hand is answered
                    since[name], most[name] = now + 1, len(present)
                    hands.pop(name, None)
                    hand_end.pop(name, None)
            elif what == "join":
                humans.add(name)
                if name not in present:
                    present.append(name)
                    since[name] = now
                    for h in present:  # a fuller table lengthens every wait's bound
                        most[h] = max(most.get(h, 0), len(present))
            elif what == "leave":
                if name in present:
                    present.remove(name)
                since.pop(name, None)
                most.pop(name, None)
                hands.pop(name, None)
                hand_end.pop(name, None)
            elif what == "hand":
                if name in present and name not in hands:
                    hands[name] = now
                    hand_end[name] = now + max(every, len(present)) - 1
            elif what == "lower":
                hands.pop(name, None)
                hand_end.pop(name, None)
            else:
                raise ArgnbError(f"unknown floor event {what!r}", hint=f"one of {EVENTS}")
        wait_end = {h: since[h] + every * most[h] - 1 for h in present}
        deadline = {h: min(wait_end[h], hand_end.get(h, wait_end[h])) for h in present}
        return cls(tuple(speakers), tuple(present), deadline, hands, frozenset(humans), every)


def feasible(deadlines: Iterable[int], start: int) -> bool:
    """Whether one human per speaker turn from turn ``start`` on meets every deadline."""
    return all(d >= start + k for k, d in enumerate(sorted(deadlines)))


@dataclass(frozen=True)
class GroupRules:
    """The turn rules of a table with several humans (the deliberators' names, N)."""

    deliberators: tuple[str, ...]
    every: int = 3

    def __post_init__(self) -> None:
        if len(self.deliberators) < 2 or len(set(self.deliberators)) != len(self.deliberators):
            raise ArgnbError(
                f"a table for several humans needs two deliberators with different names, "
                f"not {self.deliberators}",
                hint="two deliberators keep the floor moving when the humans are quiet",
            )
        if self.every < 2:
            raise ArgnbError(f"N must be >= 2, not {self.every}", hint="N = 1 repeats speakers")

    @property
    def human_rule(self) -> str:
        return human_rule(self.every)

    def due(self, floor: Floor) -> str | None:
        """The human who must have the floor next, if one must."""
        if not floor.present:
            return None
        recent = floor.speakers[-(self.every - 1) :]
        forced = len(recent) == self.every - 1 and not set(recent) & floor.humans
        tight = not feasible(floor.deadline.values(), floor.now + 1)
        if not (forced or tight):
            return None
        return self._earliest(floor, floor.present)

    def _earliest(self, floor: Floor, among: Sequence[str]) -> str:
        last = floor.speakers[-1] if floor.speakers else None
        ok = [h for h in among if h != last] or list(among)
        return min(ok, key=lambda h: (floor.deadline[h], floor.present.index(h)))

    def broken(self, floor: Floor, candidate: str | None) -> list[str]:
        """The rules ``candidate`` would break as the next speaker."""
        if candidate is None:
            return [NO_ANSWER]
        if candidate in floor.humans and candidate not in floor.present:
            return [ABSENT]
        if candidate not in self.deliberators and candidate not in floor.present:
            return [UNKNOWN]
        out = []
        if floor.speakers and floor.speakers[-1] == candidate:
            out.append(NO_REPEAT)
        recent = floor.speakers[-(self.every - 1) :]
        forced = len(recent) == self.every - 1 and not set(recent) & floor.humans
        if forced and floor.present and candidate not in floor.present:
            out.append(self.human_rule)
        rest = {h: d for h, d in floor.deadline.items() if h != candidate}
        if not feasible(rest.values(), floor.now + 1):
            out.append(HAND if self._hand_due(floor, rest) else EACH)
        return out

    def _hand_due(self, floor: Floor, rest: Mapping[str, int]) -> bool:
        """Whether the deadline that cannot be met is a raised hand's."""
        for k, (h, d) in enumerate(sorted(rest.items(), key=lambda x: x[1])):
            if d < floor.now + 1 + k:
                return h in floor.hands
        return False

    def allowed(self, floor: Floor) -> list[str]:
        """Everyone who may speak next: deliberators in seating order, then seated humans."""
        return [p for p in (*self.deliberators, *floor.present) if not self.broken(floor, p)]

    def fallback(self, floor: Floor) -> str:
        """Who speaks when the moderator's choice is overridden: the human who is due; else a
        raised hand (raised first); else whoever allowed has waited longest."""
        due = self.due(floor)
        if due is not None:
            return due
        allowed = self.allowed(floor)
        hands = [h for h in allowed if h in floor.hands]
        if hands:
            return min(hands, key=lambda h: floor.hands[h])
        last_seen = {p: i for i, p in enumerate(floor.speakers)}
        order = (*self.deliberators, *floor.present)
        return min(allowed, key=lambda p: (last_seen.get(p, -1), order.index(p)))

    def enforce(self, floor: Floor, choice: str | None) -> Ruling:
        """Keep an allowed choice; override any other by :meth:`fallback`."""
        broken = self.broken(floor, choice)
        if not broken:
            return Ruling(str(choice), choice)
        return Ruling(self.fallback(floor), choice, tuple(broken))

    def violations(self, events: Sequence[tuple[str, str]]) -> list[str]:
        """Every place a whole history of events breaks a rule (empty: it is legal)."""
        out = []
        for i, (what, name) in enumerate(events):
            if what == "turn":
                floor = Floor.replay(events[:i], self.every)
                out += [f"event {i + 1} ({name}): {r}" for r in self.broken(floor, name)]
        return out
