"""What a roundtable session records in its transcript, as typed payloads.

The transcript is the record: the speaker order, the overrides, the analyses and the cost of a
session are read from these turns (see :mod:`argnb.roundtable.session`), never kept beside them.

========================  ===========  ==========================================================
kind                      speaker      turn
========================  ===========  ==========================================================
``roundtable.agenda``     moderator    the opening: scope, criteria, roles, length, rules
``roundtable.decision``   moderator    a step: optional message, the choice, who speaks next
``roundtable.override``   the rules    a choice the rules refused, the rule(s) and the speaker
``roundtable.contribution`` deliberator  a deliberator's turn (words, revised, cut, first chunk)
``roundtable.human``      the human    what the human said, or a pass, or the end
``roundtable.flag``       classifier   the optional fallacy check of one contribution
``roundtable.analysis``   analyzer     summary, agreements, open questions, argument map
``roundtable.end``        session      why the session ended
========================  ===========  ==========================================================
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from argnb.transcript import Payload

#: the speaker name of turns written by code rather than a participant
RULES = "turn rules"
SESSION = "session"


class Participant(BaseModel):
    """One seat at the table, as the agenda records it."""

    name: str
    role: Literal["moderator", "deliberator", "human", "analyzer"]
    backend: str = ""
    model: str = ""
    perspective: str = ""


class Agenda(Payload):
    """The moderator's opening: what the model proposed plus what the code knows."""

    kind: str = "roundtable.agenda"
    topic: str
    scope: str = ""
    criteria: list[str] = Field(default_factory=list)
    participants: list[Participant] = Field(default_factory=list)
    turns: int = 0
    human_every: int = 3
    analyze_every: int = 0
    word_limit: int = 150


class Decision(Payload):
    """One moderator step: what it said, whom it named, and who actually speaks next."""

    kind: str = "roundtable.decision"
    step: int
    intent: str = ""
    message: str = ""
    choice: str | None = None
    speaker: str
    allowed: list[str] = Field(default_factory=list)
    flag: str = ""  # the fallacy-check note the moderator was given, if any


class Override(Payload):
    """A moderator choice the turn rules refused, the rules it broke, who speaks instead."""

    kind: str = "roundtable.override"
    step: int
    choice: str | None = None
    speaker: str
    rules: list[str]
    allowed: list[str] = Field(default_factory=list)


class Contribution(Payload):
    """A deliberator's turn: its length, whether it was revised or cut to fit the limit."""

    kind: str = "roundtable.contribution"
    step: int
    label: str = ""  # "Deliberator 1"
    words: int = 0
    limit: int = 150
    revised: bool = False
    cut: bool = False
    words_before_cut: int | None = None
    first_chunk_s: float | None = None
    error: str = ""


class HumanTurn(Payload):
    """The human's turn: something said, a pass, or the end of the session."""

    kind: str = "roundtable.human"
    step: int
    action: Literal["say", "pass", "end"] = "say"
    source: Literal["script", "widget", "function", "replay"] = "script"


class Flag(Payload):
    """The optional fallacy check of one contribution (turn index ``target``)."""

    kind: str = "roundtable.flag"
    target: int
    label: int | str
    method: str = ""
    note: str = ""
    error: str = ""


class CounterItem(BaseModel):
    """An objection to a claim and, when someone answered it, the rebuttal."""

    objection: str
    by: str = ""
    rebuttal: str = ""
    rebuttal_by: str = ""


class ArgumentItem(BaseModel):
    """One argument of an analysis map: a claim, its premises, objections with rebuttals."""

    claim: str
    by: str = ""
    premises: list[str] = Field(default_factory=list)
    counterarguments: list[CounterItem] = Field(default_factory=list)


class Analysis(Payload):
    """The analyzer's reading of the session up to speaker turn ``upto``."""

    kind: str = "roundtable.analysis"
    upto: int
    trigger: Literal["every", "demand", "final"] = "every"
    summary: list[str] = Field(default_factory=list)
    agreements: list[str] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)
    arguments: list[ArgumentItem] = Field(default_factory=list)
    error: str = ""


class End(Payload):
    """Why the session stopped: the planned turns were spoken, or the human ended it."""

    kind: str = "roundtable.end"
    reason: Literal["turns", "human", "stopped"]
    turns: int


SPEAKER_KINDS = (Contribution.model_fields["kind"].default, HumanTurn.model_fields["kind"].default)
