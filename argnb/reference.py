"""Authored reference sessions: what a capable participant would say, replayed by the real protocol.

The embedded model is far too small to show what a protocol is *for*. A reference session is a
JSON file in ``assets/<module>/`` written by the course authors in their own words: the answers
each participant gives, in the order the protocol should ask for them. Replaying it feeds those
answers through :class:`ReferenceBackend` (a :class:`~argnb.llm.ScriptedBackend`) to the same
protocol code a live run uses, so every rule, schema, round and view is the real one -- and
:meth:`Replay.verify` fails when the protocol would not have produced the authored session (a
turn out of order, an answer its schema refuses, answers left over, another outcome).

A file holds::

    {"format": 1, "protocol": "fallacy.deliberation", "title": ..., "written_by": ...,
     "about": ..., "look_for": [...], "setup": {...protocol inputs...},
     "turns": [{"agent": "Ada", "answer": {...}, "speaker": "Ada", "round": 1, "role": "propose",
                "hears": ["text the prompt must contain"], "note": "..."}, ...],
     "outcome": {...what the transcript's outcome must contain...}}

``agent`` names whose scripted backend gives ``answer``; ``speaker``/``round``/``role``, when
given, are what the protocol must record for that call (a call without ``speaker`` records no turn
of its own). A turn without ``agent`` is one the protocol records in code, without a model (a
retrieval, a rule's override, the end of a session): only its place is checked. A replayer may
name some agents *people* (``Replay(session, people=["Sam"])``): their answers are what a human
types, handed out by :meth:`Replay.says` instead of a backend (or, as written, by
:meth:`Replay.take`: a move that is not text, such as a seat or a ballot in a room). A module wraps this in a
``replay_reference()`` of its own (see :mod:`argnb.fallacy.reference`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from argnb.errors import ArgnbError, ReferenceMismatch
from argnb.llm.base import Reply, Usage
from argnb.llm.ledger import Ledger
from argnb.llm.scripted import Request, ScriptedBackend
from argnb.transcript import Transcript, Turn
from argnb.words import count

FORMAT = 1
#: the model name replayed turns carry: nobody can mistake them for a model's words
MODEL = "reference (written by the course authors)"


class ReferenceTurn(BaseModel):
    """One authored call: who answers, the answer, and the turn the protocol should record."""

    model_config = ConfigDict(extra="forbid")

    agent: str | None = None
    answer: dict[str, Any] | str | None = None
    speaker: str | None = None
    round: int | None = None
    role: str | None = None
    hears: list[str] = Field(default_factory=list)
    note: str = ""

    @model_validator(mode="after")
    def _answered(self) -> ReferenceTurn:
        if self.agent is not None and self.answer is None:
            raise ValueError(f"{self.agent}'s turn has no answer")
        if self.agent is None and (self.answer is not None or self.speaker is None):
            raise ValueError("a turn the protocol records in code has a speaker and no answer")
        return self


class ReferenceSession(BaseModel):
    """A reference session as written in its file (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    format: int = FORMAT
    protocol: str
    title: str
    written_by: str
    about: str
    look_for: list[str] = Field(default_factory=list)
    setup: dict[str, Any] = Field(default_factory=dict)
    turns: list[ReferenceTurn]
    outcome: dict[str, Any] = Field(default_factory=dict)
    source: str = Field(default="", exclude=True)

    @classmethod
    def from_path(cls, path: str | Path) -> ReferenceSession:
        p = Path(path)
        try:
            session = cls.model_validate(json.loads(p.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
            raise ArgnbError(f"cannot read reference session {p}: {exc}") from exc
        if session.format != FORMAT:
            raise ArgnbError(f"{p}: reference format {session.format}, this argnb reads {FORMAT}")
        return session.model_copy(update={"source": p.name})

    @property
    def label(self) -> str:
        """What every view of this session says about where its words come from."""
        return f"Written by {self.written_by}, not produced by a model"

    @property
    def agents(self) -> list[str]:
        """Every agent with authored answers, in order of first appearance."""
        return list(dict.fromkeys(t.agent for t in self.turns if t.agent is not None))

    def player(self, people: Sequence[str] = ()) -> Replay:
        """Fresh backends for one replay (``people``: agents whose answers a human types)."""
        return Replay(self, people)

    def _repr_html_(self) -> str:
        from argnb.views import reference_html

        return reference_html(self)


def load(
    module: str,
    name: str | ReferenceSession,
    *,
    protocol: str | None = None,
    needs: Sequence[str] = (),
) -> ReferenceSession:
    """``assets/<module>/reference_<name>.json``, wherever the course's assets are (a session
    passed in is checked the same way); ``protocol``: the replayer it must be written for;
    ``needs``: the ``setup`` keys that replayer reads (a file without them is refused here, in
    words, not with a ``KeyError`` from inside the protocol)."""
    if isinstance(name, ReferenceSession):
        session = name
    else:
        from argnb.course import asset_dir

        path = asset_dir(module) / f"reference_{name}.json"
        if not path.exists():
            raise ArgnbError(
                f"no reference session {name!r} for {module}",
                hint=f"expected {path}; reinstall argnb or work in a clone",
            )
        session = ReferenceSession.from_path(path)
    if protocol is not None and session.protocol != protocol:
        raise ArgnbError(
            f"{session.source} is a {session.protocol} session, not a {protocol} one",
            hint=f"replay it with argnb.{session.protocol.split('.')[0]}.reference",
        )
    missing = [k for k in needs if k not in session.setup]
    if missing:
        raise ArgnbError(
            f"{session.source or session.title}: its setup has no {', '.join(missing)}",
            hint=f'a {protocol or module} session needs "setup": {{{", ".join(needs)}}}',
        )
    return session


class ReferenceBackend(ScriptedBackend):
    """Replays one agent's authored answers in order. It costs nothing, so it reports no tokens
    and keeps its own ledger (a replay never shows up in the learner's usage table)."""

    name = "reference"

    def __init__(self, answers: Sequence[dict[str, Any] | str]) -> None:
        super().__init__(list(answers), model=MODEL, ledger=Ledger())
        self.written = len(answers)

    def _reply(self, text: str, req: Request) -> Reply:
        reply = super()._reply(text, req)
        return reply.model_copy(update={"usage": Usage()})


class Replay:
    """One replay of a session: a backend per agent, then :meth:`verify` on what was recorded."""

    def __init__(self, session: ReferenceSession, people: Sequence[str] = ()) -> None:
        self.session = session

        def answers(a: str) -> list[dict[str, Any] | str]:
            return [t.answer for t in session.turns if t.agent == a and t.answer is not None]

        self.backends = {a: ReferenceBackend(answers(a)) for a in session.agents if a not in people}
        self.scripts = {p: answers(p) for p in people}
        self.heard = dict.fromkeys(people, 0)

    def take(self, person: str) -> dict[str, Any] | str | None:
        """``person``'s next authored move, as written (None: nothing left)."""
        self.heard[person] = self.heard.get(person, 0) + 1
        script = self.scripts.get(person, [])
        return script[self.heard[person] - 1] if self.heard[person] <= len(script) else None

    def says(self, person: str) -> str | None:
        """What ``person`` types when the protocol gives them the floor (None: nothing left)."""
        move = self.take(person)
        return None if move is None else str(move)

    def backend(self, agent: str) -> ReferenceBackend:
        if agent not in self.backends:
            raise ReferenceMismatch(self.session.title, [f"no authored answers for {agent!r}"])
        return self.backends[agent]

    @contextmanager
    def running(self) -> Iterator[None]:
        """Around the protocol's run (sync or awaited): an error it stops with is re-raised as
        the mismatch behind it (:meth:`failed`)."""
        try:
            yield
        except ReferenceMismatch:  # already the mismatch, named by the replayer
            raise
        except ArgnbError as exc:  # e.g. the protocol asked for an answer the file does not have
            raise self.failed(exc) from exc

    def failed(self, exc: Exception) -> ReferenceMismatch:
        """The mismatch behind a protocol run that stopped: usually an agent asked once more than
        the file answers for (a repair turn after a refused answer, or a round not written)."""
        short = [
            f"the protocol asked {a} for answer {len(b.requests)}, the file has {b.written}"
            for a, b in self.backends.items()
            if len(b.requests) > b.written
        ]
        short += [
            f"the protocol gave {p} the floor {n} times, the file {len(self.scripts[p])}"
            for p, n in self.heard.items()
            if n > len(self.scripts[p])
        ]
        return ReferenceMismatch(self.session.title, short or [str(exc)])

    def problems(self, turns: Sequence[Turn], outcome: Mapping[str, Any]) -> list[str]:
        """Where the recorded ``turns`` (the protocol's own, in order) and ``outcome`` differ
        from the authored session; empty when the replay is faithful."""
        out: list[str] = []
        expected = [t for t in self.session.turns if t.speaker is not None]
        if len(turns) != len(expected):
            out.append(f"the protocol recorded {len(turns)} turns, the file has {len(expected)}")
        for i, (want, got) in enumerate(zip(expected, turns, strict=False), start=1):
            where = f"turn {i} ({want.speaker})"
            if got.speaker != want.speaker:
                out.append(f"{where}: the protocol gave the turn to {got.speaker}")
            if want.round is not None and got.round != want.round:
                out.append(f"{where}: recorded in round {got.round}, written for {want.round}")
            if want.role is not None and got.role != want.role:
                out.append(f"{where}: recorded as {got.role!r}, written as {want.role!r}")
            if not got.valid:
                error = getattr(got.payload, "error", "") or "its answer was refused"
                out.append(f"{where}: the protocol refused the answer ({error})")
        for person, script in self.scripts.items():
            if self.heard[person] < len(script):
                n = len(script) - self.heard[person]
                out.append(
                    f"{count(n, 'turn')} by {person} {'was' if n == 1 else 'were'} never given the floor"
                )
            elif self.heard[person] > len(script):
                out.append(
                    f"the protocol gave {person} the floor {self.heard[person]} times, the file {len(script)}"
                )
        for agent, backend in self.backends.items():
            if backend.remaining:
                n = backend.remaining
                out.append(
                    f"{count(n, 'answer')} by {agent} {'was' if n == 1 else 'were'} never asked for"
                )
            mine = [t for t in self.session.turns if t.agent == agent]
            for k, (want, req) in enumerate(zip(mine, backend.requests, strict=False), start=1):
                prompt = req.prompt
                missing = [h for h in want.hears if h not in prompt]
                if missing:
                    out.append(f"{agent}'s call {k} was not shown {missing[0]!r}")
        for key, value in self.session.outcome.items():
            if outcome.get(key) != value:
                out.append(f"outcome {key}: the protocol says {outcome.get(key)!r}, not {value!r}")
        return out

    def verify(self, turns: Sequence[Turn], outcome: Mapping[str, Any]) -> None:
        """Raise :class:`ReferenceMismatch` unless the replay is faithful."""
        problems = self.problems(turns, outcome)
        if problems:
            raise ReferenceMismatch(self.session.title, problems)

    def stamp(self, transcript: Transcript) -> Transcript:
        """Label the replayed transcript as authored, in its title and its metadata."""
        s = self.session
        transcript.title = f"{s.title} (reference: {s.label[0].lower()}{s.label[1:]})"
        transcript.meta["reference"] = {"file": s.source, "written_by": s.written_by}
        return transcript
