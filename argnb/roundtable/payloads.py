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
``roundtable.seat``       a human      joined, left, raised or lowered a hand, is ready to end
``roundtable.candidates`` moderator    the closing: candidate group statements to rank
``roundtable.ballot``     a human      one human's ranking of the candidates, best first
``roundtable.outcome``    session      the Schulze count of the ballots: order, matrices, winner
``roundtable.remark``     a human      one human's critique of the winning statement (or a pass)
``roundtable.revision``   moderator    the winning statement revised after the critiques
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
    action: Literal["say", "pass", "end", "timeout", "left"] = "say"
    source: Literal["script", "widget", "function", "replay", "room"] = "script"


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


class Seat(Payload):
    """A human's seat at a table of several: joined, left, a hand raised or lowered, ready to
    end. Not a speaker turn: it changes who may be given the floor (:mod:`.floor`)."""

    kind: str = "roundtable.seat"
    action: Literal["join", "leave", "hand", "lower", "ready"]


class Candidates(Payload):
    """The closing's candidate group statements (ids ``S1``, ``S2``, ...), who drafted them
    (the moderator; when its answer was unusable, the code from the latest analysis, or else
    from each speaker's last words, the learners' first), and why the discussion ended."""

    kind: str = "roundtable.candidates"
    statements: dict[str, str]
    source: Literal["moderator", "analysis", "learners"] = "moderator"
    reason: str = "turns"


class Ballot(Payload):
    """One human's ranking of the candidate statements, best first."""

    kind: str = "roundtable.ballot"
    ranking: list[str]


class Outcome(Payload):
    """The Schulze count of the ballots (:mod:`.vote`): the order, best first, the pairwise
    counts ``d``, the strongest paths ``p``, the ties, and each voter's ranking."""

    kind: str = "roundtable.outcome"
    order: list[str]
    d: dict[str, dict[str, int]] = Field(default_factory=dict)
    p: dict[str, dict[str, int]] = Field(default_factory=dict)
    ties: list[list[str]] = Field(default_factory=list)
    ballots: dict[str, list[str]] = Field(default_factory=dict)

    @property
    def winner(self) -> str:
        return self.order[0]


class Remark(Payload):
    """One human's critique of the winning statement (``action`` pass: none)."""

    kind: str = "roundtable.remark"
    action: Literal["say", "pass", "timeout"] = "say"


class Revision(Payload):
    """The winning statement and its revision after the humans' critiques (``statement``
    unchanged when nobody critiqued it or the revision was unusable)."""

    kind: str = "roundtable.revision"
    winner: str
    original: str
    statement: str
    critiques: int = 0
    error: str = ""


class End(Payload):
    """Why the session stopped: the planned turns were spoken, the human ended it (with several
    humans: all were ready), nobody was left at the table, or it was stopped."""

    kind: str = "roundtable.end"
    reason: Literal["turns", "human", "humans", "empty", "stopped"]
    turns: int


SPEAKER_KINDS = (Contribution.model_fields["kind"].default, HumanTurn.model_fields["kind"].default)
