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
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from argnb.agents import Agent
from argnb.events import Event
from argnb.reference import ReferenceSession, load
from argnb.roundtable.payloads import Flag
from argnb.roundtable.session import Session

DEFAULT = "session"


def load_reference(name: str = DEFAULT) -> ReferenceSession:
    """The authored session ``assets/roundtable/reference_<name>.json``."""
    return load("roundtable", name, protocol="roundtable.session")


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


def replay_session(
    session: ReferenceSession | str = DEFAULT,
    *,
    on_event: Callable[[Event], None] | None = None,
    autosave: str | Path | None = None,
) -> Session:
    """Replay an authored roundtable through the session; raise
    :class:`~argnb.reference.ReferenceMismatch` if the session disagrees with the file."""
    from argnb.fallacy.baselines import Baseline

    s = load("roundtable", session, protocol="roundtable.session", needs=("topic", "deliberators"))
    setup = s.setup
    human = str(setup.get("human", "You"))
    play = s.player(people=[human])
    check = setup.get("fallacy")
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
        fallacy=Baseline("zero", play.backend(check), name=check) if check else None,
        autosave=autosave,
        on_event=on_event,
    )
    with play.running():
        table.run(lambda _: play.says(human))
    play.verify(table.transcript.turns, outcome(table))
    play.stamp(table.transcript)
    return table
