"""Notebook 01's reference deliberation: authored answers replayed by the real protocol.

``assets/fallacy/reference_deliberation.json`` holds a deliberation the course authors wrote (two
reviewers disagree, one changes her vote for a stated reason). :func:`replay_reference` runs it
through :class:`~argnb.fallacy.deliberation.Deliberation` itself and refuses a replay that the
protocol would not have produced (see :mod:`argnb.reference`).

    >>> r = replay_reference()
    >>> r.label, r.resolution, r.rounds
    (0, 'consensus', 2)
"""

from __future__ import annotations

from collections.abc import Callable

from argnb.agents import Agent
from argnb.fallacy.deliberation import Deliberation, DeliberationResult
from argnb.reference import ReferenceSession, load
from argnb.transcript import Turn

DEFAULT = "deliberation"


def load_reference(name: str = DEFAULT) -> ReferenceSession:
    """The authored session ``assets/fallacy/reference_<name>.json``."""
    return load("fallacy", name, protocol="fallacy.deliberation")


def replay_reference(
    session: ReferenceSession | str = DEFAULT, *, on_turn: Callable[[Turn], None] | None = None
) -> DeliberationResult:
    """Replay an authored deliberation through the protocol; raise
    :class:`~argnb.reference.ReferenceMismatch` if the protocol disagrees with the file."""
    s = load("fallacy", session, protocol="fallacy.deliberation", needs=("argument",))
    play = s.player()
    setup = s.setup
    agents = [Agent(name, play.backend(name)) for name in setup.get("agents", s.agents)]
    delib = Deliberation(
        agents,
        max_rounds=int(setup.get("max_rounds", 3)),
        seed=setup.get("seed", 0),
        on_turn=on_turn,
    )
    with play.running():
        result = delib.run(setup["argument"], item_id=str(setup.get("item_id", "")))
    play.verify(result.turns, result.transcript.outcome)
    play.stamp(result.transcript)
    return result
