"""A room: several learners at one roundtable, and a closing they decide by ranking.

A :class:`Room` is a :class:`~.session.Session` whose humans come and go. Each human is a seat
(joined, left, a hand raised or lowered, ready to end: ``roundtable.seat`` turns), and the turn
rules for several humans (:mod:`.floor`) decide who may speak, whatever the moderator proposes.
The humans' moves arrive from outside -- the class server's room service, a test's simulated
learners -- through the ``a*`` methods below; the room records each one and never writes words
for a human. :meth:`waiting_for` says whose move it waits for.

The closing, after the discussion (the planned turns, or every seated human ready to end)::

    the moderator drafts candidate statements  ->  each seated human ranks them  ->
    the Schulze count picks one (:mod:`.vote`)  ->  each human may critique it once  ->
    the moderator revises it after the critiques  ->  the end

Everything a room shows -- seats, rules, ballots, matrices, the statement -- is read from its
transcript, so a saved room replays, and a service that restarts resumes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from argnb.errors import ArgnbError
from argnb.roundtable import record
from argnb.roundtable.deliberator import WORD_LIMIT
from argnb.roundtable.floor import ABSENT, EACH, HAND, Floor, GroupRules
from argnb.roundtable.payloads import (
    RULES,
    SESSION,
    Ballot,
    Candidates,
    HumanTurn,
    Outcome,
    Participant,
    Remark,
    Revision,
    Seat,
)
from argnb.roundtable.session import HUMAN_CHARS, HUMAN_END, HUMAN_PASS, Session
from argnb.transcript import Transcript, Turn
from argnb.words import distinct

if TYPE_CHECKING:
    from argnb.agents import Agent
    from argnb.llm.base import Backend

#: the longest name a seat may take
NAME_CHARS = 40
PHASES = ("open", "discussion", "ranking", "critique", "ended")


class Room(Session):
    """A roundtable for several humans. ``humans``: who sits down at once (more may join);
    ``closing``: how many candidate statements the moderator drafts (0: no closing); the other
    arguments are :class:`~.session.Session`'s. Needs two deliberators (:mod:`.floor`)."""

    def __init__(
        self,
        topic: str,
        *,
        humans: Sequence[str] = (),
        closing: int = 3,
        **kw: Any,
    ) -> None:
        if "human" in kw:
            raise ArgnbError("a room seats humans by join()", hint="pass humans=[...] instead")
        if closing and not 2 <= closing <= 4:
            raise ArgnbError(f"closing drafts 2 to 4 statements, not {closing}", hint="use 3")
        super().__init__(topic, human="(nobody yet)", **kw)
        self.rules = GroupRules(tuple(d.name for d in self.deliberators), self.rules.every)  # type: ignore[assignment]
        self.closing = closing
        self.transcript.meta.update(room=True, closing=closing, human=None)
        for name in humans:
            self.join(name)

    @classmethod
    def resume(
        cls,
        transcript: Transcript,
        *,
        moderator: Agent | Backend,
        deliberators: Sequence[Agent | Backend],
        analyzer: Agent | Backend | None = None,
        **kw: Any,
    ) -> Room:
        """A room rebuilt from its saved transcript (a service restarted): the settings from its
        meta, the perspectives from its agenda, and every seat, hand, ballot and critique from its
        turns. ``kw``: what the transcript does not hold (``autosave``, ``on_event``, ...)."""
        meta = transcript.meta
        if transcript.kind != "roundtable" or not meta.get("room"):
            raise ArgnbError("this transcript is not a room's", hint="give a saved room")
        a = record.agenda(transcript)
        views = [p.perspective for p in a.participants if p.role == "deliberator"] if a else []
        room = cls(
            str(meta.get("topic") or transcript.title),
            moderator=moderator,
            deliberators=deliberators,
            analyzer=analyzer,
            closing=int(meta.get("closing", 3)),
            turns=int(meta.get("turns", 12)),
            human_every=int(meta.get("human_every", 3)),
            analyze_every=int(meta.get("analyze_every", 4)),
            word_limit=int(meta.get("word_limit", WORD_LIMIT)),
            perspectives=kw.pop("perspectives", views),
            **kw,
        )
        room.transcript = transcript
        room._tell_others()
        return room

    # -- who is at the table --------------------------------------------------------------------
    @property
    def humans(self) -> list[str]:
        return record.seated(self.transcript)

    @property
    def human(self) -> str:  # the Session's single human: here whoever has the floor, if any
        if "transcript" not in self.__dict__:
            return "(nobody yet)"
        pending = self.pending
        return pending if pending in self.humans else ", ".join(self.humans)  # type: ignore[return-value]

    @human.setter
    def human(self, value: str) -> None:  # Session.__init__ sets it; a room has no single one
        pass

    @property
    def names(self) -> tuple[str, ...]:
        return (*self.rules.deliberators, *self.humans)  # type: ignore[attr-defined]

    def _state(self) -> Floor:
        return Floor.replay(record.floor_events(self.transcript), self.rules.every)

    def _due(self, state: Any) -> str | None:
        return self.rules.due(state)  # type: ignore[attr-defined]

    def _humans_line(self) -> str:
        return "a human participant"

    def _due_reason(self, human: str) -> str:
        return (
            "each learner at the table is heard within a bounded number of turns, and a raised "
            "hand is answered soon"
        )

    def _why(self, choice: str | None) -> dict[str, str]:
        return {
            **super()._why(choice),
            self.rules.human_rule: (
                f"no human has spoken in the last {self.rules.every - 1} turns, and a human "
                f"speaks at least once in every {self.rules.every}"
            ),
            EACH: "a learner would wait longer than the rules allow",
            HAND: "a raised hand would wait longer than the rules allow",
            ABSENT: f"{choice} is not at the table now",
        }

    def _participants(self) -> list[Participant]:
        seats = super()._participants()
        seats = [p for p in seats if p.role != "human"]
        return [*seats, *(Participant(name=h, role="human") for h in self.humans)]

    def _creditable(self) -> tuple[str, ...]:
        return (*self.rules.deliberators, *record.humans(self.transcript))  # type: ignore[attr-defined]

    # -- where the room stands ------------------------------------------------------------------
    @property
    def phase(self) -> str:
        """open, discussion, ranking, critique or ended."""
        tr = self.transcript
        if self.ended is not None:
            return "ended"
        if self.agenda is None:
            return "open"
        if record.candidates(tr) is None:
            return "discussion"
        if record.outcome(tr) is None:
            return "ranking"
        return "critique"

    def waiting_for(self) -> list[str]:
        """The seated humans whose move the room waits for (in seating order)."""
        phase, tr = self.phase, self.transcript
        if phase == "discussion":
            return [self.pending] if self.waiting_for_human else []  # type: ignore[list-item]
        if phase == "ranking":
            cast = record.ballots(tr)
            return [h for h in self.humans if h not in cast]
        if phase == "critique":
            said = {t.speaker for t in record.remarks(tr)}
            return [h for h in self.humans if h not in said]
        return []

    # -- the humans' moves (each recorded as theirs, never written for them) ---------------------
    def _seat_turn(self, name: str, action: str) -> None:
        self._record(Turn(speaker=name, role="seat", payload=Seat(action=action)))  # type: ignore[arg-type]

    def _check_name(self, name: str) -> str:
        name = " ".join(str(name).split())
        taken = {self.moderator.name, RULES, SESSION, *self.rules.deliberators}  # type: ignore[attr-defined]
        if self.analyzer is not None:
            taken.add(self.analyzer.name)
        if not name or len(name) > NAME_CHARS or name in taken or name.startswith("/"):
            raise ArgnbError(
                f"a learner cannot sit down as {name[:NAME_CHARS]!r}",
                hint=f"a name of 1 to {NAME_CHARS} characters that no seat at the table has",
            )
        return name

    def join(self, name: str) -> str:
        """Seat a human (a no-op for one already seated); returns the name as seated."""
        name = self._check_name(name)
        if self.ended is not None:
            raise ArgnbError("this room has ended", hint="open a new room")
        if name not in self.humans:
            self._seat_turn(name, "join")
            self._tell_others()
        return name

    def _seated(self, name: str) -> str:
        if name not in self.humans:
            raise ArgnbError(f"{name!r} is not seated at this table", hint="join the room first")
        return name

    def leave(self, name: str) -> None:
        """A human leaves; holding the floor, they are passed over first."""
        self._seated(name)
        if self.pending == name and self.phase == "discussion":
            self._human_turn(name, "left", "")
        self._seat_turn(name, "leave")
        self._tell_others()

    def raise_hand(self, name: str) -> None:
        """A raised hand is given the floor within max(N, humans seated) turns (:mod:`.floor`)."""
        if name not in record.hands(self.transcript) and self.pending != name:
            self._seat_turn(self._seated(name), "hand")

    def lower_hand(self, name: str) -> None:
        if name in record.hands(self.transcript):
            self._seat_turn(self._seated(name), "lower")

    def ready(self, name: str) -> None:
        """A human is ready to end the discussion; when all seated are, the closing begins."""
        if name not in record.ready(self.transcript):
            self._seat_turn(self._seated(name), "ready")

    def _human_turn(self, name: str, action: str, text: str, source: str = "room") -> Turn:
        step = len(record.decisions(self.transcript))
        return self._record(
            Turn(
                speaker=name,
                role="human",
                text=text if action == "say" else "",
                payload=HumanTurn(step=step, action=action, source=source),  # type: ignore[arg-type]
            )
        )

    async def asay(self, text: str | None, source: str = "room", name: str | None = None) -> None:
        """``name``'s turn while they hold the floor: ``text``, or ``None`` / "" / ``/pass`` to
        pass, ``/end`` to pass and say they are ready to end."""
        name = self._seated(name or str(self.pending))
        if self.phase != "discussion" or self.pending != name:
            raise ArgnbError(
                f"it is not {name}'s turn", hint="wait until the moderator gives you the floor"
            )
        text = (text or "").strip()
        if len(text) > HUMAN_CHARS:
            raise ArgnbError(
                f"that is {len(text)} characters; a turn holds at most {HUMAN_CHARS}",
                hint="shorten it or split it over two turns",
            )
        action = "say" if text.lower() not in ("", HUMAN_PASS, HUMAN_END) else "pass"
        self._enter()
        try:
            turn = self._human_turn(name, action, text, source)
            if text.lower() == HUMAN_END:
                self.ready(name)
            self._announce()
            if action == "say":
                await self._check(turn)
            await self._after_speaker()
        finally:
            self._busy = False

    def timeout(self, name: str) -> None:
        """``name`` did not answer in time: passed over now (the turn counts as theirs, so the
        rules invite them again later), or, in the closing, no ballot or critique from them."""
        self._seated(name)
        if name not in self.waiting_for():
            return
        if self.phase == "discussion":
            self._human_turn(name, "timeout", "")
        elif self.phase == "critique":
            self._record(Turn(speaker=name, role="remark", payload=Remark(action="timeout")))
        else:  # ranking: the count goes ahead without them (an empty ballot ranks nothing)
            self._record(Turn(speaker=name, role="ballot", payload=Ballot(ranking=[])))

    def rank(self, name: str, ranking: Sequence[str]) -> None:
        """``name``'s ballot: candidate ids, best first (unranked ones count below all)."""
        self._seated(name)
        c = record.candidates(self.transcript)
        if self.phase != "ranking" or c is None:
            raise ArgnbError("there is nothing to rank now", hint="wait for the closing")
        if name in record.ballots(self.transcript):
            raise ArgnbError(f"{name} has ranked already", hint="each learner ranks once")
        order = [str(x) for x in ranking]
        if not order or len(set(order)) != len(order) or not set(order) <= set(c.statements):
            raise ArgnbError(
                f"a ranking names each of {', '.join(c.statements)} at most once, best first",
                hint=f"for example {' > '.join(c.statements)}",
            )
        self._record(Turn(speaker=name, role="ballot", payload=Ballot(ranking=order)))

    def critique(self, name: str, text: str | None) -> None:
        """``name``'s one critique of the winning statement (``None`` or "": none)."""
        self._seated(name)
        if self.phase != "critique":
            raise ArgnbError("there is no statement to critique now", hint="wait for the count")
        if any(t.speaker == name for t in record.remarks(self.transcript)):
            raise ArgnbError(f"{name} has critiqued already", hint="one critique each")
        text = " ".join((text or "").split())[:HUMAN_CHARS]
        self._record(
            Turn(
                speaker=name,
                role="remark",
                text=text,
                payload=Remark(action="say" if text else "pass"),
            )
        )

    # -- the room's own steps ---------------------------------------------------------------------
    async def astep(self) -> None:
        """One move of the room: the agenda, a moderator step, a deliberator's turn, a step of
        the closing, or the end. Does nothing while it waits for a human (:meth:`waiting_for`)."""
        if self.ended is not None or self.waiting_for():
            return
        phase = self.phase
        if phase == "open":
            if self.humans:
                await self.aopen()
            return
        if phase == "discussion":
            if not self.humans:
                await self._end("empty")
                return
            done = len(record.speaker_turns(self.transcript)) >= self.turns
            ready = set(self.humans) <= record.ready(self.transcript)
            if self.pending is None and (done or ready):
                await self._close("turns" if done else "humans")
                return
            await super().astep()
            return
        if phase == "ranking":
            await self._count()
            return
        await self._revise()

    async def aadvance(self) -> None:
        """Run until the room waits for a human, has nobody to wait for, or has ended."""
        self._enter()
        try:
            while self.ended is None and not self.waiting_for():
                if self.phase == "open" and not self.humans:
                    break
                await self.astep()
        finally:
            self._busy = False

    async def _close(self, reason: str) -> None:
        """The discussion is over: a last analysis, then the candidate statements (or the end)."""
        n = len(record.speaker_turns(self.transcript))
        tried = self.transcript.of_kind("roundtable.analysis", valid=None)
        if self.analyzer is not None and (not tried or tried[-1].payload["upto"] < n):
            await self.aanalyze("final")
        if not self.closing:
            await self._end(reason)
            return
        statements, source = await self._draft()
        if len(statements) < 2:
            await self._end(reason)
            return
        ids = {f"S{i}": s for i, s in enumerate(statements, start=1)}
        text = "\n".join(f"{k}: {v}" for k, v in ids.items())
        self._record(
            Turn(
                speaker=self.moderator.name,
                role="candidates",
                text=text,
                payload=Candidates(statements=ids, source=source, reason=reason),  # type: ignore[arg-type]
            )
        )

    async def _draft(self) -> tuple[list[str], str]:
        resp = await self.moderator.adraft(self.context(), self.closing, role="statements")
        self._record_failed(resp)
        if resp.value is not None:
            got = distinct(" ".join(s.split()) for s in resp.value.statements if s.strip())
            if len(got) >= 2:
                return got[: self.closing], "moderator"
        a = self.analysis  # the moderator's answer was unusable: the analysis's own sentences
        items = [*(a.agreements if a else []), *(a.summary if a else [])]
        got = distinct(" ".join(s.split()) for s in items if s.strip())
        if len(got) >= 2:
            return got[: self.closing], "analysis"
        # no usable analysis either (a small model): each learner's last words, as they said
        # them, then each deliberator's, so the learners still have something to rank
        learners: dict[str, str] = {}
        others: dict[str, str] = {}
        for t in record.speaker_turns(self.transcript):
            if not (t.valid and t.text):
                continue
            if isinstance(t.payload, HumanTurn) and t.payload.action == "say":
                learners[t.speaker] = " ".join(t.text.split())[:300]
            elif not isinstance(t.payload, HumanTurn):
                others[t.speaker] = " ".join(t.text.split())[:300]
        got = distinct([*learners.values(), *others.values()])
        return got[: self.closing], "learners"

    async def _count(self) -> None:
        from argnb.roundtable.vote import elect

        c = record.candidates(self.transcript)
        cast = record.ballots(self.transcript)
        if c is None or not cast:
            await self._end(c.reason if c else "empty")
            return
        e = elect(list(cast.values()), candidates=list(c.statements))
        order = " > ".join(e.order)
        self._record(
            Turn(
                speaker=SESSION,
                role="outcome",
                text=f"The ranking chose {e.winner}: {c.statements[e.winner]} (order {order})",
                payload=Outcome(
                    order=list(e.order),
                    d=e.d,
                    p=e.p,
                    ties=[list(t) for t in e.ties],
                    ballots=cast,
                ),
            )
        )

    async def _revise(self) -> None:
        c, o = record.candidates(self.transcript), record.outcome(self.transcript)
        assert c is not None and o is not None
        original = c.statements[o.winner]
        critiques = [t.text for t in record.remarks(self.transcript) if t.text]
        statement, error, resp = original, "", None
        if critiques:
            resp = await self.moderator.arevise(
                self.context(), original, critiques, role="revision"
            )
            self._record_failed(resp)
            if resp.value is not None and resp.value.statement.strip():
                statement = " ".join(resp.value.statement.split())
            else:
                error = resp.error or "no usable revision"
        payload = Revision(
            winner=o.winner,
            original=original,
            statement=statement,
            critiques=len(critiques),
            error=error,
        )
        if resp is not None and resp.valid:
            turn = resp.turn.model_copy(
                update={"role": "revision", "text": statement, "payload": payload}
            )
        else:
            turn = Turn(
                speaker=self.moderator.name, role="revision", text=statement, payload=payload
            )
        self._record(turn)
        await self._end(c.reason)
