"""A roundtable session: a human deliberating with LLM deliberators under an LLM moderator,
with an analyzer reading along. The rules hold in code; the transcript is the record.

One step at a time::

    moderator step  ->  the rules accept or override its choice  ->  the chosen speaker's turn
       (message?)        (override recorded with the rule)          (deliberator streams, or
                                                                     the session waits for the human)
    ... every K speaker turns, and at the end: the analyzer

The same :class:`Session` runs headless (the human's turns come from a script: a list of texts,
a text file or a function) and behind the widget (the human types); :meth:`Session.arun` is
the headless loop, :meth:`Session.aadvance` / :meth:`Session.asay` the two moves a front end
makes. Everything it reports -- speakers, overrides, analyses, cost -- is read from the transcript
(:mod:`argnb.roundtable.record`), so a saved session gives back the same views.

    >>> from argnb.llm import ScriptedBackend
    >>> from argnb.roundtable.testing import table_backend
    >>> s = Session("Homework with AI?", moderator=table_backend(), analyzer=table_backend(),
    ...     deliberators=[
    ...     table_backend(), table_backend()], human="Ann", turns=4, analyze_every=2)
    >>> s = s.run(["AI can explain a topic.", "/pass"])
    >>> s.speakers, len(s.analyses), s.ended.reason
    (['Deliberator 1', 'Deliberator 2', 'Ann', 'Deliberator 1'], 2, 'turns')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from argnb.agents import Agent, Response
from argnb.batch import run_sync
from argnb.errors import ArgnbError
from argnb.events import Event
from argnb.gate import Gate, static
from argnb.llm.base import Backend
from argnb.roundtable import record
from argnb.roundtable.analyzer import Analyzer, to_payload
from argnb.roundtable.deliberator import WORD_LIMIT, Deliberator
from argnb.roundtable.moderator import Moderator
from argnb.roundtable.moderator import listing as _listing
from argnb.roundtable.payloads import (
    RULES,
    SESSION,
    Agenda,
    Analysis,
    Contribution,
    Decision,
    End,
    Flag,
    HumanTurn,
    Override,
    Participant,
)
from argnb.roundtable.rules import NO_ANSWER, NO_REPEAT, UNKNOWN, TurnRules
from argnb.roundtable.seat import table
from argnb.transcript import Cost, Transcript, Turn
from argnb.words import count_words, cut_to_words, drop_repeats, says

HUMAN_PASS = "/pass"
HUMAN_END = "/end"
#: the most a human turn may hold (a page of text)
HUMAN_CHARS = 2000
#: what the front end shows when the floor goes to the human
YOUR_TURN = "Your turn, {name}: what do you think?"

# -- the human's turns when nobody types ------------------------------------------------------
HumanSource = Sequence[str] | Callable[["Session"], str | None] | str | Path


def read_script(path: str | Path) -> list[str]:
    """A human script file: a JSON list of texts, or plain text with one turn per line (read and
    checked by :func:`argnb.datafiles.script_lines`)."""
    from argnb.datafiles import script_lines

    return script_lines(path)


class HumanScript:
    """The human's side of a headless session.

    A list (or a file, see :func:`read_script`) is said in order; ``/pass`` passes, ``/end`` ends
    the session, and once the list runs out the human passes. A function receives the session
    and returns the text (``None`` passes).
    """

    def __init__(self, source: HumanSource) -> None:
        self.fn: Callable[[Session], str | None] | None = None
        self.items: list[str] = []
        if callable(source):
            self.fn = source
            self.source = "function"
        else:
            if isinstance(source, str | Path):
                self.items = read_script(source)
            else:
                self.items = [str(x) for x in source]
            self.source = "script"
        self.used = 0

    def __call__(self, session: Session) -> str | None:
        if self.fn is not None:
            return self.fn(session)
        if self.used >= len(self.items):
            return HUMAN_PASS
        self.used += 1
        return self.items[self.used - 1]


# -- the session --------------------------------------------------------------------------------
def _revised(resp: Response[Any]) -> bool:
    """Whether a reply was revised to fit the word limit (a retry after the gate is not that)."""
    return any(t.role.startswith("rejected") for t in resp.turns)


def _agent(x: Agent | Backend, name: str) -> Agent:
    return x if isinstance(x, Agent) else Agent(name, x)


class Session:
    """One roundtable. Give backends (or :class:`~argnb.agents.Agent`\\ s, or seated
    :class:`~.deliberator.Deliberator`\\ s); defaults for them are chosen by the CLI, notebook and
    widget, never here.

    ``turns``: speaker turns before the session ends; ``human_every``: the human speaks at least
    once in every N turns; ``analyze_every``: the analyzer runs after every K speaker turns (0:
    only at the end and on demand); ``fallacy``: an optional :class:`argnb.fallacy.Baseline`
    that checks each contribution and tells the moderator; ``context_turns``: the most messages
    of the discussion a prompt shows (see :meth:`context`); ``autosave``: a path the transcript is
    written to after every turn (nothing is lost when a kernel dies); ``on_event``: see
    :class:`Event`.
    """

    def __init__(
        self,
        topic: str,
        *,
        moderator: Agent | Backend,
        deliberators: Sequence[Agent | Backend | Deliberator],
        analyzer: Agent | Backend | None = None,
        human: str = "You",
        turns: int = 12,
        human_every: int = 3,
        analyze_every: int = 4,
        word_limit: int = WORD_LIMIT,
        perspectives: Sequence[str] = (),
        fallacy: Any = None,
        context_turns: int = 24,
        prompt_dir: str | Path | None = None,
        autosave: str | Path | None = None,
        on_event: Callable[[Event], None] | None = None,
    ) -> None:
        topic = " ".join(str(topic).split())
        if len(topic) < 3:
            raise ArgnbError("the topic is empty", hint="propose a question to deliberate on")
        if not deliberators:
            raise ArgnbError("a roundtable needs at least one deliberator")
        if turns < 1 or analyze_every < 0 or word_limit < 10:
            raise ArgnbError(
                "turns must be >= 1, analyze_every >= 0 and word_limit >= 10",
                hint=f"got turns={turns}, analyze_every={analyze_every}, word_limit={word_limit}",
            )
        self.moderator = Moderator(_agent(moderator, "Moderator"), prompt_dir)
        self.analyzer = (
            Analyzer(_agent(analyzer, "Analyzer"), prompt_dir) if analyzer is not None else None
        )
        self.deliberators: list[Deliberator] = []
        for i, d in enumerate(deliberators, start=1):
            view = perspectives[i - 1] if i <= len(perspectives) else ""
            if not isinstance(d, Deliberator):
                d = Deliberator(
                    _agent(d, f"Deliberator {i}"),
                    prompt_dir,
                    label=f"Deliberator {i}",
                    perspective=view,
                )
            d.label = d.label or f"Deliberator {i}"
            self.deliberators.append(d)
        self.human = " ".join(str(human).split()) or "You"
        names = [d.name for d in self.deliberators]
        taken = {self.moderator.name, RULES, SESSION, *(names)}
        if self.analyzer is not None:
            taken.add(self.analyzer.name)
        if self.human in taken:
            raise ArgnbError(f"the human cannot be called {self.human!r}", hint="pick another name")
        self.rules = TurnRules(self.human, (*names, self.human), human_every)
        self.turns = turns
        self.analyze_every = analyze_every
        self.word_limit = word_limit
        self.fallacy = fallacy
        self.context_turns = context_turns
        self.table_prompt = table(prompt_dir)
        self.autosave = Path(autosave) if autosave else None
        self.on_event = on_event
        self._busy = False
        self._announced = -1  # the moderator step whose announcement was sent
        self.transcript = Transcript(
            kind="roundtable",
            title=topic,
            meta={
                "topic": topic,
                "human": self.human,
                "turns": turns,
                "human_every": human_every,
                "analyze_every": analyze_every,
                "word_limit": word_limit,
                "fallacy": fallacy.describe() if fallacy is not None else None,
            },
        )
        self._seat()

    # -- views (read from the transcript) ----------------------------------------------------
    @property
    def topic(self) -> str:
        return self.transcript.title

    @property
    def names(self) -> tuple[str, ...]:
        """Everyone who can take the floor, deliberators first, in seating order."""
        return self.rules.participants

    @property
    def speakers(self) -> list[str]:
        return record.speakers(self.transcript)

    @property
    def overrides(self) -> list[Override]:
        return [t.payload for t in record.overrides(self.transcript)]  # type: ignore[misc]

    @property
    def analyses(self) -> list[Analysis]:
        return [t.payload for t in record.analyses(self.transcript)]  # type: ignore[misc]

    @property
    def analysis(self) -> Analysis | None:
        return record.latest_analysis(self.transcript)

    @property
    def agenda(self) -> Agenda | None:
        return record.agenda(self.transcript)

    @property
    def pending(self) -> str | None:
        """Who has the floor now and has not spoken yet (None between steps)."""
        return record.pending_speaker(self.transcript)

    @property
    def waiting_for_human(self) -> bool:
        return self.pending is not None and self.pending in self.humans

    @property
    def humans(self) -> list[str]:
        """The humans at the table now (one here; a :class:`~.room.Room` seats several)."""
        return [self.human]

    # -- what the turn rules read (a Room reads the seats too) ---------------------------------
    def _state(self) -> Any:
        """What the rules decide on: here the speakers so far."""
        return self.speakers

    def _due(self, state: Any) -> str | None:
        """The human who must have the floor next, if one must."""
        return self.human if self.rules.human_due(state) else None

    def _credited(self) -> tuple[str, ...]:
        """Whom the analyzer may credit with a claim: the seats that said something usable (in
        the table's order), never one that did not speak."""
        spoke = {who for who, _ in record.spoken(self.transcript)}
        return tuple(n for n in self._creditable() if n in spoke)

    def _creditable(self) -> tuple[str, ...]:
        """Everyone who may speak at this table, in its order."""
        return self.names

    def _humans_line(self) -> str:
        """Who the context's rule names as the human who must be heard."""
        return self.human

    @property
    def ended(self) -> End | None:
        return record.ended(self.transcript)

    @property
    def cost(self) -> Cost:
        return self.transcript.cost

    def summary(self) -> dict[str, Any]:
        """What the CLI prints as JSON (see :func:`argnb.roundtable.record.summary`)."""
        return record.summary(self.transcript)

    def to_map(self, analysis: Analysis | None = None):
        """The argument map of an analysis (the latest by default)."""
        from argnb.roundtable.analyzer import analysis_map

        a = analysis or self.analysis
        if a is None:
            raise ArgnbError("no analysis yet", hint="run session.analyze() first")
        return analysis_map(a, self.topic, record.spoken(self.transcript, a.upto))

    def _repr_html_(self) -> str:
        from argnb.roundtable.views import session_html

        return session_html(self.transcript)

    # -- recording ---------------------------------------------------------------------------
    def _emit(self, event: Event) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def _record(self, turn: Turn) -> Turn:
        self.transcript.add(turn)
        if self.autosave is not None:
            self.transcript.save(self.autosave)
        self._emit(Event("turn", turn.speaker, turn.text, turn, len(self.transcript.turns) - 1))
        return turn

    def _record_failed(self, resp: Response[Any]) -> None:
        """The rejected attempts of an agent turn (their cost belongs in the record)."""
        for t in resp.turns if not resp.valid else resp.turns[:-1]:
            self._record(t)

    def _participants(self) -> list[Participant]:
        out = [
            Participant(
                name=self.moderator.name,
                role="moderator",
                backend=self.moderator.agent.backend.name,
                model=self.moderator.agent.backend.model,
            )
        ]
        out += [
            Participant(
                name=d.name,
                role="deliberator",
                backend=d.agent.backend.name,
                model=d.agent.backend.model,
                perspective=d.perspective,
            )
            for d in self.deliberators
        ]
        out.append(Participant(name=self.human, role="human"))
        if self.analyzer is not None:
            a = self.analyzer.agent.backend
            out.append(
                Participant(name=self.analyzer.name, role="analyzer", backend=a.name, model=a.model)
            )
        return out

    def _table(self) -> str:
        """The participants as the prompts name them."""
        parts = [f"{d.name} (a deliberator)" for d in self.deliberators]
        if len(self.humans) == 1 and self.humans[0] == self.human:
            return ", ".join([*parts, f"{self.human} (the human participant)"])
        return ", ".join([*parts, *(f"{h} (a human participant)" for h in self.humans)])

    def _seat(self) -> None:
        """Every seat sends the same system text (the start of the prefix they share)."""
        system = self.table_prompt.render("system")
        # the table's rules and the moderator's job stand in the shared context: a seat that
        # recites them echoes its instructions (argnb.gate), the topic and discussion it may quote
        fixed = Gate(instructions=static(self.table_prompt))
        for seat in (self.moderator, *self.deliberators, self.analyzer):
            if seat is not None:
                seat.agent.system = system
                seat.agent.gate = fixed + seat.GATE
        self._tell_others()

    def _tell_others(self) -> None:
        """Each deliberator's list of the others at the table (humans change in a Room)."""
        for d in self.deliberators:
            others = [x.name for x in self.deliberators if x is not d]
            d.others = ", ".join(others + [f"{h} (human)" for h in self.humans])

    def context(self, flag: str = "", upto: int | None = None) -> str:
        """What every seat reads before its task, the same bytes for all of them in one step:
        the question, the table and its rules, the discussion so far, and the fallacy check's
        ``flag`` as a last note. It grows at its end from step to step (the window of
        ``context_turns`` messages moves in jumps of half that), so a local model reuses what it
        read in the previous step too. ``upto``: as it stood before that turn of the record."""
        jump = max(1, self.context_turns // 2)
        tr = self.transcript
        if upto is not None:
            tr = tr.model_copy(update={"turns": tr.turns[:upto]})
        said = record.said(tr)
        # before the first word nothing stands there (a placeholder would differ from the
        # next step's first line and break the shared prefix)
        discussion = record.render_context(tr, self.context_turns, jump=jump) if said else ""
        return self.table_prompt.render(
            "context",
            topic=self.topic,
            participants=self._table(),
            human=self._humans_line(),
            every=self.rules.every,
            limit=self.word_limit,
            discussion=discussion,
            note=f"\n\nNote: {flag}" if flag else "",
        )

    # -- the moves -----------------------------------------------------------------------------
    async def aopen(self) -> Agenda:
        """The moderator's agenda: its scope, criteria and welcome, plus what the code knows."""
        if self.agenda is not None:
            return self.agenda
        resp = await self.moderator.aopen(self.context(), self.turns, role="agenda")
        self._record_failed(resp)
        a = resp.value
        agenda = Agenda(
            topic=self.topic,
            scope=drop_repeats(a.scope) if a else "",
            criteria=[c.strip() for c in a.criteria if c.strip()] if a else [],
            participants=self._participants(),
            turns=self.turns,
            human_every=self.rules.every,
            analyze_every=self.analyze_every,
            word_limit=self.word_limit,
        )
        welcome = drop_repeats(a.welcome) if a else ""
        text = record.agenda_text(agenda, welcome)
        if resp.valid:
            turn = resp.turn.model_copy(update={"role": "agenda", "text": text, "payload": agenda})
        else:
            turn = Turn(speaker=self.moderator.name, role="agenda", text=text, payload=agenda)
        self._record(turn)
        return agenda

    def _flag_note(self) -> str:
        """The fallacy check's warning about the last contribution, for the next step."""
        for t in reversed(self.transcript.turns):
            if isinstance(t.payload, Decision):
                return ""
            if isinstance(t.payload, Flag) and t.payload.label == 1:
                who = self.transcript.turns[t.payload.target].speaker
                return (
                    f"a quick automatic check suggests that {who}'s last contribution may rest on "
                    "weak reasoning."
                )
        return ""

    def announcement(self) -> str:
        """What the moderator can say at once, before any model answers: who may speak next and
        the rule behind it (computed here; the model's choice is still checked by the rules)."""
        state = self._state()
        history = self.speakers
        allowed = self.rules.allowed(state)
        due = self._due(state)
        if due is not None:
            return f"{due}, you have the floor next: {self._due_reason(due)}."
        if len(allowed) == 1:
            return f"{says(allowed[0], 'speaks')} next."
        last = f" ({history[-1]} spoke last, and nobody speaks twice in a row)" if history else ""
        return f"Next: {_listing(allowed)}{last}. Choosing…"

    def _announce(self) -> None:
        """Send the announcement of the coming moderator step to the front end (once a step):
        words on screen within milliseconds while the moderator's model is still reading."""
        step = len(record.decisions(self.transcript))
        if self.on_event is None or self._announced == step or self.ended is not None:
            return
        if len(record.speaker_turns(self.transcript)) >= self.turns or self.pending is not None:
            return
        self._announced = step
        name = self.moderator.name
        self._emit(
            Event("start", name, model=self.moderator.agent.backend.model, label="moderator")
        )
        self._emit(Event("chunk", name, self.announcement()))

    def _split_latest(self, context: str) -> tuple[str, str]:
        """Right after the human's turn: the context as it stood while they typed (what
        :meth:`prewarm` had the moderator's backend read) and the new lines since, which the
        moderator gets in a message of their own. Otherwise ``(context, "")``."""
        spoken = record.speaker_turns(self.transcript)
        if not spoken or not isinstance(spoken[-1].payload, HumanTurn):
            return context, ""
        before = self.context(upto=self.transcript.turns.index(spoken[-1]))
        if len(context) > len(before) and context.startswith(before):
            return before, context[len(before) :].lstrip("\n")
        return context, ""  # the window of the discussion moved on: one message as usual

    def prewarm(self) -> int:
        """While the floor is the human's: have the moderator's backend read the request of the
        step that follows their turn up to their line (the embedded model keeps its KV state;
        other backends do nothing), so after Send only their line is evaluated before the
        moderator's message streams. Prompt tokens kept (0: nothing to do). Not recorded: the
        step's reply is the same with or without it."""
        if not self.waiting_for_human or self.ended is not None or len(self.humans) != 1:
            return 0
        allowed = self.rules.allowed([*self.speakers, self.human])
        return self.moderator.prefill(self.context(), self.names, allowed)

    async def _moderate(self) -> str:
        self._announce()
        state = self._state()
        allowed = self.rules.allowed(state)
        flag = self._flag_note()
        step = len(record.decisions(self.transcript)) + 1
        name = self.moderator.name
        # the message streams to the front end while the model goes on to choose the speaker
        on_text = (
            (lambda piece: self._emit(Event("chunk", name, piece, label="message")))
            if self.on_event is not None
            else None
        )
        context, latest = self._split_latest(self.context(flag))
        resp = await self.moderator.astep(
            context,
            self.names,
            allowed,
            latest=latest,
            role="moderator",
            on_text=on_text,
            # nor does it say again what it said at an earlier step (small models open every
            # step with one line)
            gate=self._others(name) + Gate(earlier=tuple(self._said_by(name))),
        )
        self._record_failed(resp)
        v = resp.value
        choice = v.next_speaker if v is not None else None
        state = self._state()  # in a room, someone may have come or gone while it answered
        ruling = self.rules.enforce(state, choice)
        decision = Decision(
            step=step,
            intent=v.intent if v else "",
            message=drop_repeats(v.message) if v else "",
            choice=choice,
            speaker=ruling.speaker,
            allowed=allowed,
            flag=flag,
        )
        if v is not None:
            turn = resp.turn.model_copy(
                update={"role": "moderator", "text": decision.message, "payload": decision}
            )
        else:
            turn = Turn(speaker=self.moderator.name, role="moderator", payload=decision)
        self._record(turn)
        if ruling.overridden:
            self._record(
                Turn(
                    speaker=RULES,
                    role="override",
                    text=self._explain(ruling.choice, ruling.speaker, ruling.broken, state),
                    payload=Override(
                        step=step,
                        choice=ruling.choice,
                        speaker=ruling.speaker,
                        rules=list(ruling.broken),
                        allowed=allowed,
                    ),
                )
            )
        return ruling.speaker

    def _said_by(self, name: str) -> list[str]:
        """What ``name`` said aloud so far."""
        return [text for t, text in record.said(self.transcript) if t.speaker == name]

    def _others(self, name: str) -> Gate:
        """What the seat ``name`` must not copy (everything the others said aloud) and whose
        voice it must not take (a line written as a human at the table)."""
        return Gate(
            others=tuple(
                text for t, text in record.said(self.transcript) if text and t.speaker != name
            ),
            voices=tuple(h for h in self.humans if h != name),
        )

    def _due_reason(self, human: str) -> str:
        return (
            f"everyone hears the human participant at least once in every {self.rules.every} turns"
        )

    def _why(self, choice: str | None) -> dict[str, str]:
        """Each rule's reason, as an override says it."""
        return {
            NO_ANSWER: "the moderator gave no usable answer",
            UNKNOWN: f"{choice!r} is not at the table",
            NO_REPEAT: f"{choice} spoke last, and nobody speaks twice in a row",
            self.rules.human_rule: (
                f"{self.human} has not spoken in the last {self.rules.every - 1} turns and must "
                f"speak at least once in every {self.rules.every}"
            ),
        }

    def _explain(self, choice: str | None, speaker: str, broken: Sequence[str], state: Any) -> str:
        why = self._why(choice)
        reasons = "; ".join(why.get(r, r) for r in broken)
        due = self._due(state)
        how = (
            ("the human is due" if len(self.humans) == 1 else f"{due} is due")
            if due is not None
            else "the allowed speaker who has waited longest"
        )
        return f"Override: {reasons}. {says(speaker, 'speaks')} instead ({how})."

    async def _deliberate(self, name: str) -> None:
        d = next(x for x in self.deliberators if x.name == name)
        step = len(record.decisions(self.transcript))
        backend = d.agent.backend
        self._emit(Event("start", name, model=backend.model, label=d.label))

        def restart(attempt: int) -> None:
            if attempt > 1:
                self._emit(Event("restart", name, model=backend.model, label=d.label))

        resp, live = await d.aspeak(
            self.context(self._flag_note()),
            self.word_limit,
            on_chunk=lambda c: self._emit(Event("chunk", name, c)),
            on_start=restart,
            gate=self._others(name),
        )
        self._record_failed(resp)
        first = live.first_chunk_s[0] if live.first_chunk_s else None
        if resp.value is None:
            self._record(
                Turn(
                    speaker=name,
                    role="deliberator",
                    payload=Contribution(
                        step=step,
                        label=d.label,
                        limit=self.word_limit,
                        revised=_revised(resp),
                        first_chunk_s=first,
                        error=resp.error,
                    ),
                    model=backend.model,
                    backend=backend.name,
                    calls=0,  # the record of attempts made above: it made no call of its own
                    valid=False,
                )
            )
            return
        text = " ".join(str(resp.value).split())
        words = count_words(text)
        final = cut_to_words(text, self.word_limit)
        payload = Contribution(
            step=step,
            label=d.label,
            words=count_words(final),
            limit=self.word_limit,
            revised=_revised(resp),
            cut=final != text,
            words_before_cut=words if final != text else None,
            first_chunk_s=round(first, 4) if first is not None else None,
        )
        turn = self._record(
            resp.turn.model_copy(update={"role": "deliberator", "text": final, "payload": payload})
        )
        await self._check(turn)

    async def _check(self, turn: Turn) -> None:
        """The optional fallacy check of a contribution (the moderator hears of a flag)."""
        if self.fallacy is None or not turn.text:
            return
        index = self.transcript.turns.index(turn)
        checked = await self.fallacy.aturn(turn.text)
        p = checked.payload
        label = p.get("label", "invalid")
        note = "may rest on weak reasoning" if label == 1 else ("looks sound" if label == 0 else "")
        self._record(
            checked.model_copy(
                update={
                    "role": "fallacy check",
                    "text": note,
                    "payload": Flag(
                        target=index,
                        label=label,
                        method=str(p.get("method", "")),
                        note=note,
                        error=str(p.get("error", "")),
                    ),
                }
            )
        )

    async def _after_speaker(self) -> None:
        n = len(record.speaker_turns(self.transcript))
        if self.analyzer is not None and self.analyze_every and n % self.analyze_every == 0:
            await self.aanalyze("every")

    async def _end(self, reason: str) -> None:
        tried = self.transcript.of_kind("roundtable.analysis", valid=None)  # failed ones too
        n = len(record.speaker_turns(self.transcript))
        if self.analyzer is not None and (not tried or tried[-1].payload["upto"] < n):
            await self.aanalyze("final")
        self._record(
            Turn(speaker=SESSION, role="end", payload=End(reason=reason, turns=n))  # type: ignore[arg-type]
        )
        self._emit(Event("end"))

    async def aanalyze(self, trigger: str = "demand") -> Analysis | None:
        """Run the analyzer now; the analysis is recorded (None when its answer was unusable)."""
        if self.analyzer is None:
            raise ArgnbError("this session has no analyzer", hint="pass analyzer=<backend>")
        n = len(record.speaker_turns(self.transcript))
        resp = await self.analyzer.aanalyze(
            self.context(self._flag_note()), self._credited(), role="analysis"
        )
        self._record_failed(resp)
        if resp.value is None:
            self._record(
                Turn(
                    speaker=self.analyzer.name,
                    role="analysis",
                    payload=Analysis(upto=n, trigger=trigger, error=resp.error),  # type: ignore[arg-type]
                    valid=False,
                )
            )
            return None
        payload = to_payload(resp.value, n, trigger, record.spoken(self.transcript, n))
        self._record(
            resp.turn.model_copy(
                update={"role": "analysis", "text": " ".join(payload.summary), "payload": payload}
            )
        )
        return payload

    async def astep(self) -> None:
        """One move: the agenda, a moderator step, a deliberator's turn, or the planned end.
        Does nothing while the floor is the human's (see :meth:`asay`) or after the end."""
        if self.ended is not None or self.waiting_for_human:
            return
        if self.agenda is None:
            await self.aopen()
            return
        pending = self.pending
        if pending is None:
            if len(record.speaker_turns(self.transcript)) >= self.turns:
                await self._end("turns")
            else:
                await self._moderate()
            return
        await self._deliberate(pending)
        await self._after_speaker()

    async def aadvance(self) -> None:
        """Run until the floor is the human's or the session has ended."""
        self._enter()
        try:
            while self.ended is None and not self.waiting_for_human:
                await self.astep()
        finally:
            self._busy = False
        if self.waiting_for_human:
            self._emit(Event("waiting", self.human, YOUR_TURN.format(name=self.human)))

    async def asay(self, text: str | None, source: str = "widget") -> None:
        """The human's turn: ``text``, or ``None`` / "" / ``/pass`` to pass, ``/end`` to end."""
        if not self.waiting_for_human:
            raise ArgnbError(
                f"it is not {self.human}'s turn"
                + (" (the session has ended)" if self.ended else ""),
                hint="wait until the moderator gives you the floor",
            )
        text = (text or "").strip()
        if len(text) > HUMAN_CHARS:
            raise ArgnbError(
                f"that is {len(text)} characters; a turn holds at most {HUMAN_CHARS}",
                hint="shorten it or split it over two turns",
            )
        action = {"": "pass", HUMAN_PASS: "pass", HUMAN_END: "end"}.get(text.lower(), "say")
        self._enter()
        try:
            step = len(record.decisions(self.transcript))
            turn = self._record(
                Turn(
                    speaker=self.human,
                    role="human",
                    text=text if action == "say" else "",
                    payload=HumanTurn(step=step, action=action, source=source),  # type: ignore[arg-type]
                )
            )
            if action == "end":
                await self._end("human")
                return
            self._announce()  # before the check and an analysis: the learner sees what comes
            if action == "say":
                await self._check(turn)
            await self._after_speaker()
        finally:
            self._busy = False

    def _enter(self) -> None:
        if self._busy:
            raise ArgnbError("the session is busy", hint="wait for the current turn to finish")
        self._busy = True

    async def arun(self, human: HumanSource | HumanScript) -> Session:
        """Run the whole session headless; the human's turns come from ``human``."""
        script = human if isinstance(human, HumanScript) else HumanScript(human)
        while self.ended is None:
            await self.aadvance()
            if self.waiting_for_human:
                await self.asay(script(self), source=script.source)
        return self

    # -- sync twins (they work inside Jupyter too) ----------------------------------------------
    def run(self, human: HumanSource | HumanScript) -> Session:
        return run_sync(self.arun(human))

    def advance(self) -> None:
        run_sync(self.aadvance())

    def say(self, text: str | None, source: str = "widget") -> None:
        run_sync(self.asay(text, source))

    def analyze(self) -> Analysis | None:
        return run_sync(self.aanalyze("demand"))


# -- saved sessions ------------------------------------------------------------------------------
def load_session(path: str | Path) -> Transcript:
    """A saved session's transcript (what :meth:`Transcript.save` or ``--out`` wrote)."""
    p = Path(path)
    if not p.is_file():
        raise ArgnbError(f"no saved session at {p}", hint="give the JSON file --out wrote")
    try:
        tr = Transcript.load(p)
    except ValueError as exc:
        raise ArgnbError(f"{p} is not a saved transcript: {str(exc).splitlines()[0]}") from None
    if tr.kind != "roundtable":
        raise ArgnbError(f"{p} holds a {tr.kind!r} transcript, not a roundtable session")
    return tr


def replay(tr: Transcript, delay: float = 0.0):
    """The turns of a saved session one by one, each with the transcript as it stood then
    (``(turn, partial transcript)``), pausing ``delay`` seconds between them."""
    import time

    for i, turn in enumerate(tr.turns):
        if i and delay:
            time.sleep(delay)
        yield turn, tr.model_copy(update={"turns": tr.turns[: i + 1]})
