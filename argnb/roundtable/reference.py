"""Notebook 05's reference session: a roundtable the course authors wrote, replayed by the real
:class:`~argnb.roundtable.session.Session`.

``assets/roundtable/reference_session.json`` holds every answer of the moderator, the two
deliberators, the fallacy check and the analyzer, and what the human participant types. The
session's own code decides who speaks (overriding the moderator where the turn rules say so),
tells the moderator of a flag, holds the word limit and runs the analyzer; :func:`replay_session`
refuses a replay the session would not have produced (see :mod:`argnb.reference`).

    >>> s = replay_session()
    >>> s.speakers[:4], [len(a.agreements) for a in s.analyses]
    (['Ines', 'Kofi', 'Sam', 'Kofi'], [1, 2, 3])

``assets/roundtable/reference_room.json`` is a second one, for a :class:`~.room.Room`: three
learners at one table. Its learners' moves -- joining, raising a hand, speaking, passing or
timing out, ranking the candidate statements, critiquing the winner -- are written in the file
in the place the room records them, and :func:`replay_room` makes them through the room's own
methods; the room's code decides who speaks, overrides the moderator, counts the ballots
(Schulze) and asks for the revision, and a replay it would not have produced is refused.

    >>> o = room_outcome(replay_room())
    >>> o["order"], o["winner"]
    (['S2', 'S1', 'S3'], 'S2')
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from argnb.agents import Agent
from argnb.batch import run_sync
from argnb.errors import ArgnbError, ReferenceMismatch
from argnb.events import Event
from argnb.reference import ReferenceSession, ReferenceTurn, Replay, load
from argnb.roundtable import record
from argnb.roundtable.payloads import SPEAKER_KINDS, Flag, HumanTurn, Seat
from argnb.roundtable.room import Room
from argnb.roundtable.session import Session

DEFAULT = "session"
ROOM = "room"
#: the protocol each replayer is written for
PROTOCOLS = {"roundtable.session": "replay_session", "roundtable.room": "replay_room"}
#: the roles of a learner's moves in a room, as the room records them
MOVES = ("seat", "human", "ballot", "remark")


def load_reference(name: str = DEFAULT) -> ReferenceSession:
    """The authored session ``assets/roundtable/reference_<name>.json`` (``"session"``: one
    learner; ``"room"``: several)."""
    s = load("roundtable", name)
    if s.protocol not in PROTOCOLS:
        raise ArgnbError(
            f"{s.source} is a {s.protocol} session, not a roundtable one",
            hint=f"replay it with argnb.{s.protocol.split('.')[0]}.reference",
        )
    return s


def outcome(s: Session) -> dict[str, Any]:
    """What a reference session's ``outcome`` is compared with."""
    tr = s.transcript
    flagged = [
        tr.turns[t.payload.target].speaker
        for t in tr.turns
        if isinstance(t.payload, Flag) and t.payload.label == 1
    ]
    return {
        "speakers": s.speakers,
        "overrides": [
            {"choice": o.choice, "speaker": o.speaker, "rules": list(o.rules)} for o in s.overrides
        ],
        "flagged": flagged,
        "agreements": [len(a.agreements) for a in s.analyses],
        "ended": s.ended.reason if s.ended else None,
    }


def _fallacy(play: Replay, setup: dict[str, Any]) -> Any:
    from argnb.fallacy.baselines import Baseline

    check = setup.get("fallacy")
    return Baseline("zero", play.backend(check), name=check) if check else None


def replay_session(
    session: ReferenceSession | str = DEFAULT,
    *,
    on_event: Callable[[Event], None] | None = None,
    autosave: str | Path | None = None,
) -> Session:
    """Replay an authored roundtable through the session; raise
    :class:`~argnb.reference.ReferenceMismatch` if the session disagrees with the file."""
    s = load("roundtable", session, protocol="roundtable.session", needs=("topic", "deliberators"))
    setup = s.setup
    human = str(setup.get("human", "You"))
    play = s.player(people=[human])
    table = Session(
        setup["topic"],
        moderator=Agent("Moderator", play.backend("Moderator")),
        deliberators=[Agent(n, play.backend(n)) for n in setup["deliberators"]],
        analyzer=Agent("Analyzer", play.backend("Analyzer")),
        human=human,
        turns=int(setup.get("turns", 9)),
        human_every=int(setup.get("human_every", 3)),
        analyze_every=int(setup.get("analyze_every", 3)),
        word_limit=int(setup.get("word_limit", 150)),
        perspectives=setup.get("perspectives", ()),
        fallacy=_fallacy(play, setup),
        autosave=autosave,
        on_event=on_event,
    )
    with play.running():
        table.run(lambda _: play.says(human))
    play.verify(table.transcript.turns, outcome(table))
    play.stamp(table.transcript)
    return table


# -- several learners: a room ---------------------------------------------------------------------
def _joined(tr: Any) -> dict[str, int]:
    """Each learner who sat down, with how many speaker turns had been taken before."""
    out: dict[str, int] = {}
    n = 0
    for t in tr.turns:
        if t.payload.kind in SPEAKER_KINDS:
            n += 1
        elif isinstance(t.payload, Seat) and t.payload.action == "join":
            out.setdefault(t.speaker, n)
    return out


def room_outcome(r: Room) -> dict[str, Any]:
    """What a room reference's ``outcome`` is compared with: who spoke, the overrides, when each
    learner joined (speaker turns before), the hands raised, who passed or timed out, the
    ballots and the Schulze order, who critiqued, the group statement."""
    tr = r.transcript
    o, rev = record.outcome(tr), record.revision(tr)
    return {
        "speakers": r.speakers,
        "overrides": [
            {"choice": x.choice, "speaker": x.speaker, "rules": list(x.rules)} for x in r.overrides
        ],
        "joined": _joined(tr),
        "hands": [
            t.speaker
            for t in tr.turns
            if isinstance(t.payload, Seat) and t.payload.action == "hand"
        ],
        "passed": [
            {"name": t.speaker, "action": t.payload.action}
            for t in record.speaker_turns(tr)
            if isinstance(t.payload, HumanTurn) and t.payload.action != "say"
        ],
        "ballots": o.ballots if o else {},
        "order": o.order if o else [],
        "winner": o.winner if o else None,
        "critiques": [t.speaker for t in record.remarks(tr) if t.text],
        "statement": rev.statement if rev else None,
        "ended": r.ended.reason if r.ended else None,
    }


def _action(move: Any) -> str:
    return str(move.get("action", "")) if isinstance(move, dict) else ""


async def _move(r: Room, move: Any, who: str, role: str | None) -> None:
    """Make one authored learner's move through the room's own method for it."""
    if role == "seat":
        seat = {
            "join": r.join,
            "leave": r.leave,
            "hand": r.raise_hand,
            "lower": r.lower_hand,
            "ready": r.ready,
        }
        action = _action(move)
        if action not in seat:
            raise ArgnbError(f"a seat's move is one of {', '.join(seat)}, not {action!r}")
        seat[action](who)
    elif _action(move) == "timeout":
        if who not in r.waiting_for():
            raise ArgnbError(f"the room was not waiting for {who}, so {who} cannot time out")
        r.timeout(who)
    elif role == "human":
        await r.asay(str(move), source="replay", name=who)
    elif role == "ballot":
        ranking = move.get("ranking") if isinstance(move, dict) else None
        if not isinstance(ranking, list):
            raise ArgnbError('a ballot is written {"ranking": ["S1", ...]}')
        r.rank(who, ranking)
    elif role == "remark":
        r.critique(who, str(move))
    else:
        raise ArgnbError(f"{role!r} is not a learner's move (one of {', '.join(MOVES)})")


def replay_room(
    session: ReferenceSession | str = ROOM,
    *,
    on_event: Callable[[Event], None] | None = None,
    autosave: str | Path | None = None,
) -> Room:
    """Replay an authored room through :class:`~.room.Room`: the learners' moves from the file,
    each when the room's record reaches its place; raise
    :class:`~argnb.reference.ReferenceMismatch` if the room refuses a move, waits for a move the
    file does not make there, or records another session or outcome than the file's. The
    outcome compared is :func:`room_outcome`'s."""
    s = load(
        "roundtable", session, protocol="roundtable.room", needs=("topic", "deliberators", "humans")
    )
    setup = s.setup
    humans = [str(h) for h in setup["humans"]]
    play = s.player(people=humans)
    r = Room(
        setup["topic"],
        moderator=Agent("Moderator", play.backend("Moderator")),
        deliberators=[Agent(n, play.backend(n)) for n in setup["deliberators"]],
        analyzer=Agent("Analyzer", play.backend("Analyzer")),
        closing=int(setup.get("closing", 3)),
        turns=int(setup.get("turns", 12)),
        human_every=int(setup.get("human_every", 3)),
        analyze_every=int(setup.get("analyze_every", 0)),
        word_limit=int(setup.get("word_limit", 150)),
        perspectives=setup.get("perspectives", ()),
        fallacy=_fallacy(play, setup),
        autosave=autosave,
        on_event=on_event,
    )
    expected = [t for t in s.turns if t.speaker is not None]
    moves: list[tuple[int, ReferenceTurn]] = [
        (i, t) for i, t in enumerate(expected) if t.agent in humans
    ]

    def stuck(n: int) -> ReferenceMismatch:
        waits = ", ".join(r.waiting_for()) or "a learner to join"
        want = expected[n] if n < len(expected) else None
        has = f"the file has {want.speaker}'s {want.role}" if want else "the file has ended"
        return ReferenceMismatch(s.title, [f"turn {n + 1}: the room waits for {waits}; {has}"])

    async def go() -> None:
        k = 0
        while r.ended is None:
            n = len(r.transcript.turns)
            if k < len(moves) and moves[k][0] <= n:
                i, t = moves[k]
                k += 1
                who = str(t.agent)
                try:
                    await _move(r, play.take(who), who, t.role)
                except ReferenceMismatch:
                    raise
                except ArgnbError as exc:
                    raise ReferenceMismatch(
                        s.title,
                        [f"turn {i + 1} ({who}'s {t.role}): the room refused it: {exc.message}"],
                    ) from exc
                continue
            if r.waiting_for() or (r.phase == "open" and not r.humans):
                raise stuck(n)
            await r.astep()

    with play.running():
        run_sync(go())
    play.verify(r.transcript.turns, room_outcome(r))
    play.stamp(r.transcript)
    return r
