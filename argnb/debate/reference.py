"""Notebook 04's reference sessions: authored answers replayed by the real debate pipeline.

``assets/debate/reference_turn.json`` is one ``rdebater`` turn the course authors wrote (the
opponent's turn read as predicates, a flaw found, retrieval with scheme priors, a draft the judge
rejects for a stated reason, the revision it accepts). :func:`replay_turn` runs it through
:class:`~argnb.debate.generate.Debater` itself, retrieving from the memory that ships with the
course (``assets/debate/memory.jsonl``, BM25 so that no embedding model is needed), and refuses a
replay the pipeline would not have produced (see :mod:`argnb.reference`).

    >>> u = replay_turn()
    >>> u.accepted, u.revisions, u.info.schemes, u.info.targets
    (True, 1, ['example'], ['C1'])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from argnb.batch import run_sync
from argnb.debate.corpora import example_memory
from argnb.debate.generate import Debater, NextUtterance
from argnb.debate.retrieve import Retriever
from argnb.errors import ArgnbError
from argnb.events import Event
from argnb.reference import ReferenceSession, load
from argnb.transcript import Transcript

TURN = "turn"


def load_reference(name: str = TURN) -> ReferenceSession:
    """The authored session ``assets/debate/reference_<name>.json``."""
    return load("debate", name)


def _retriever(setup: dict[str, Any]) -> Retriever:
    """Retrieval over the shipped memory; BM25 unless the file asks otherwise (any other method
    needs the embedding model the memory was embedded with, which a replay does not load)."""
    method = setup.get("retrieval", "bm25")
    if method != "bm25":
        raise ArgnbError(f"a reference replay retrieves with bm25, not {method!r}")
    return Retriever(example_memory(), None, method="bm25", k=int(setup.get("k", 3)))


def turn_outcome(u: NextUtterance) -> dict[str, Any]:
    """What a reference turn's ``outcome`` is compared with."""
    return {
        "accepted": u.accepted,
        "revisions": u.revisions,
        "bound_hit": u.bound_hit,
        "planned_schemes": list(u.info.schemes),
        "flaws": [f.kind for f in u.logic.flaws] if u.logic else [],
        "targets": list(u.info.targets),
        "kept_schemes": list(u.retrieval.kept_schemes) if u.retrieval else [],
        "exemplars": list(u.retrieval.exemplars) if u.retrieval else [],
    }


async def areplay_turn(
    session: ReferenceSession | str = TURN, *, on_event: Callable[[Event], None] | None = None
) -> NextUtterance:
    """Replay an authored turn through the pipeline; raise
    :class:`~argnb.reference.ReferenceMismatch` if the pipeline disagrees with the file."""
    s = load("debate", session, protocol="debate.turn", needs=("motion",))
    play = s.player()
    setup = s.setup
    writer = setup.get("writer", "Pro")
    debater = Debater(
        play.backend(writer),
        setup.get("method", "rdebater"),
        _retriever(setup),
        name=writer,
        judge=play.backend(setup.get("helper", writer)),
        max_revisions=int(setup.get("max_revisions", 1)),
        words=int(setup.get("words", 80)),
        k=int(setup.get("k", 3)),
        same_motion=bool(setup.get("same_motion", True)),
    )
    with play.running():
        u = await debater.anext(
            setup["motion"], history(s), stance=setup.get("stance"), on_event=on_event
        )
    play.verify(u.turns, turn_outcome(u))
    return u


def replay_turn(
    session: ReferenceSession | str = TURN, *, on_event: Callable[[Event], None] | None = None
) -> NextUtterance:
    """Sync twin of :func:`areplay_turn` (works inside Jupyter too)."""
    return run_sync(areplay_turn(session, on_event=on_event))


def history(s: ReferenceSession) -> list[tuple[str, str]]:
    """The turns before the authored one, as ``(stance, text)``."""
    return [(str(a), str(b)) for a, b in s.setup.get("history", [])]


DEBATE = "debate"
#: the setup a simulated debate reads: the motion, who speaks for each side, and the judges
SIMULATE_NEEDS = ("motion", "pro", "con", "pro_team", "con_team", "stance_judge")


def debate_outcome(tr: Transcript) -> dict[str, Any]:
    """What a reference debate's ``outcome`` is compared with: the simulation's outcome, the
    map's attacks (with their labels) and the turns grounded semantics leaves standing."""
    from argnb.debate.mapping import debate_map

    m = debate_map(tr)
    return {
        **tr.outcome,
        "attacks": [[u, v, d["label"]] for u, v, d in m.edges("rebut")],
        "standing": sorted(n for n in m.nodes("claim") if m.node(n).get("status") == "IN"),
    }


def replay_debate(
    session: ReferenceSession | str = DEBATE, *, on_event: Callable[[Event], None] | None = None
) -> Transcript:
    """Replay an authored simulated debate through :func:`~argnb.debate.simulate.simulate`;
    raise :class:`~argnb.reference.ReferenceMismatch` if the simulation disagrees with the file."""
    from argnb.debate.simulate import simulate

    s = load("debate", session, protocol="debate.simulate", needs=SIMULATE_NEEDS)
    play = s.player()
    setup = s.setup
    retriever = _retriever(setup)

    def side(name: str, team: str) -> Debater:
        return Debater(
            play.backend(setup[name]),
            setup.get("method", "rdebater-no-judge"),
            retriever,
            name=setup[name],
            judge=play.backend(setup[team]),
            words=int(setup.get("words", 80)),
            k=int(setup.get("k", 3)),
            keyword_agent=bool(setup.get("keyword_agent", False)),
            same_motion=bool(setup.get("same_motion", False)),
        )

    with play.running():
        tr = simulate(
            setup["motion"],
            side("pro", "pro_team"),
            side("con", "con_team"),
            turns=int(setup.get("turns", 4)),
            judge=play.backend(setup["stance_judge"]),
            on_event=on_event,
        )
    play.verify(tr.turns, debate_outcome(tr))
    play.stamp(tr)
    return tr
