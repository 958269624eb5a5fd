"""The one vocabulary a front end hears while a protocol streams its turns.

The roundtable session and the debaters (:meth:`argnb.debate.generate.Debater.anext`,
:func:`argnb.debate.simulate.asimulate`) call ``on_event(Event(...))``; a widget or a CLI reads the
same kinds whichever protocol runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from argnb.transcript import Turn

EventKind = Literal["turn", "step", "start", "chunk", "restart", "waiting", "end"]


@dataclass(frozen=True)
class Event:
    """What a front end hears while a protocol runs.

    ``start`` (a speaker begins a streamed text; ``model`` and ``label`` say who; a roundtable's
    ``label="moderator"`` start carries the announcement of the next step, written by the code
    from the turn rules while the moderator's model answers), ``chunk`` (a
    piece of its text; a roundtable moderator's chunks with ``label="message"`` are its message
    as the model writes it, after the announcement), ``restart`` (its text was too long and is being written again), ``turn``
    (a turn was recorded: ``turn`` and, where known, its transcript ``index``), ``step`` (a step
    of a speaker's preparation begins; ``label`` names it), ``waiting`` (the
    floor is the human's), ``end``.
    """

    kind: EventKind
    speaker: str = ""
    text: str = ""
    turn: Turn | None = None
    index: int | None = None
    model: str = ""
    label: str = ""
