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
of its own). A module wraps this in a ``replay_reference()`` of its own (see
:mod:`argnb.fallacy.reference`).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from argnb.errors import ArgnbError
from argnb.llm.base import Reply, Usage
from argnb.llm.ledger import Ledger
from argnb.llm.scripted import Request, ScriptedBackend
from argnb.transcript import Transcript, Turn
from argnb.words import count

FORMAT = 1
#: the model name replayed turns carry: nobody can mistake them for a model's words
MODEL = "reference (written by the course authors)"


class ReferenceMismatch(ArgnbError):
    """The protocol, fed the authored answers, did not produce the authored session."""

    def __init__(self, name: str, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__(
            f"reference session {name!r} does not replay: " + "; ".join(self.problems),
            hint="fix the reference file so that it follows the protocol's rules",
        )


class ReferenceTurn(BaseModel):
    """One authored call: who answers, the answer, and the turn the protocol should record."""

    model_config = ConfigDict(extra="forbid")

    agent: str
    answer: dict[str, Any] | str
    speaker: str | None = None
    round: int | None = None
    role: str | None = None
    hears: list[str] = Field(default_factory=list)
    note: str = ""


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
        return list(dict.fromkeys(t.agent for t in self.turns))

    def player(self) -> Replay:
        """Fresh backends for one replay."""
        return Replay(self)

    def _repr_html_(self) -> str:
        return session_html(self)


def load(module: str, name: str) -> ReferenceSession:
    """``assets/<module>/reference_<name>.json``, wherever the course's assets are."""
    from argnb.course import asset_dir

    path = asset_dir(module) / f"reference_{name}.json"
    if not path.exists():
        raise ArgnbError(
            f"no reference session {name!r} for {module}",
            hint=f"expected {path}; reinstall argnb or work in a clone",
        )
    return ReferenceSession.from_path(path)


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

    def __init__(self, session: ReferenceSession) -> None:
        self.session = session
        self.backends = {
            a: ReferenceBackend([t.answer for t in session.turns if t.agent == a])
            for a in session.agents
        }

    def backend(self, agent: str) -> ReferenceBackend:
        if agent not in self.backends:
            raise ReferenceMismatch(self.session.title, [f"no authored answers for {agent!r}"])
        return self.backends[agent]

    def failed(self, exc: Exception) -> ReferenceMismatch:
        """The mismatch behind a protocol run that stopped: usually an agent asked once more than
        the file answers for (a repair turn after a refused answer, or a round not written)."""
        short = [
            f"the protocol asked {a} for answer {len(b.requests)}, the file has {b.written}"
            for a, b in self.backends.items()
            if len(b.requests) > b.written
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


def session_html(s: ReferenceSession) -> str:
    """The session's label, what it is about and what to look for (escaped HTML)."""
    e = html.escape
    looks = "".join(f"<li>{e(x)}</li>" for x in s.look_for)
    setup = s.setup.get("argument") or s.setup.get("motion") or s.setup.get("topic") or ""
    quoted = (
        f"<blockquote style='margin:6px 0 6px 1em'>{e(str(setup))}</blockquote>" if setup else ""
    )
    return (
        "<div class='argnb-reference' style='border-left:4px solid #6a4c93;padding:4px 10px'>"
        f"<p><b>Reference session: {e(s.title)}</b><br>"
        f"<span style='color:#6a4c93'><b>{e(s.label)}.</b></span></p>"
        f"{quoted}<p>{e(s.about)}</p>"
        + (f"<p><b>What to look for</b></p><ol>{looks}</ol>" if looks else "")
        + "</div>"
    )
