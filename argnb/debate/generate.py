"""One next utterance: logic agent + retrieval -> draft -> summarize -> judge -> revise.

The R-Debater pipeline (section 4.3 of the paper) for the side whose turn it is:

1. the **logic agent** reads the opponent's turns (predicates -> chain -> flaws,
   :mod:`argnb.debate.logic`);
2. **keywords + retrieval** recall passages of the own side from the memory, and the *scheme
   priors* pick the kinds of argument that worked well there (:mod:`argnb.debate.retrieve`);
3. the **generation agent** drafts the turn from the history, the flaws, the exemplars and the
   schemes, within a word budget;
4. the **summarization agent** summarizes the debate with the draft in it, and the **judgement
   agent** checks stance, relevance and the planned schemes: accept, or feedback;
5. the **modification agent** revises a rejected draft; 4-5 repeat.

Every agent of the turn reads the same start -- one system text, then the turn's context (motion,
history, flaws, evidence, candidate), each agent's task after it (:mod:`argnb.debate.context`) --
so a backend with a prefix cache reads the shared part once.

The paper loops until the judge accepts; here the loop is bounded by ``max_revisions`` (default
3), and a result says when the bound was hit. The word budget holds in code: a draft over it gets
one revision (the agent turn's repair), and a revision still over it is cut at a sentence
boundary (:mod:`argnb.words`), and a sentence said twice in one turn is dropped (small models
loop). Drafts and revisions are plain text, so a view can stream them.

Methods (all through the same :class:`Debater`): ``llm`` (the draft alone), ``naive-rag``
(retrieved passages pasted into the draft prompt), ``rdebater`` (everything) and the paper's
ablations ``rdebater-no-judge``, ``rdebater-no-logic``, ``rdebater-no-schemes``.

The worst case is known in advance (:func:`worst_case_calls`) and tested with a judge that never
accepts: with the defaults (3 revisions, 4 opponent turns read) an ``rdebater`` utterance costs at
most 58 model calls -- most of them only when answers keep failing their schemas.

    >>> from argnb.llm import ScriptedBackend
    >>> d = Debater(ScriptedBackend(["Homework steals the evening from play."]), method="llm")
    >>> u = d.next("Ban homework", [("pro", "Homework causes stress.")], stance="con")
    >>> u.text, u.stance, u.cost.calls
    ('Homework steals the evening from play.', 'con', 1)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from argnb.agents import Agent, Response
from argnb.batch import run_sync
from argnb.debate.context import TurnContext
from argnb.debate.context import template as context_template
from argnb.debate.logic import OPPONENT_TURNS, LogicAgent, LogicResult
from argnb.debate.payloads import Draft, Summary, Utterance, Verdict
from argnb.debate.record import SIDE_WORDS, Said, as_history, clip, next_side
from argnb.debate.retrieve import RetrievalTrace, Retriever, akeywords, history_text
from argnb.debate.schemas import SummaryAnswer, VerdictAnswer
from argnb.debate.schemes import SchemeSet, load_schemes
from argnb.errors import ArgnbError
from argnb.events import Event
from argnb.gate import Gate, Held, static
from argnb.llm.base import Backend, Options
from argnb.llm.live import LiveBackend
from argnb.prompts import Prompt, load
from argnb.transcript import Cost, Turn
from argnb.words import (
    count_words,
    cut_to_words,
    distinct,
    drop_repeats,
    token_budget,
    too_long,
)

PACKAGE = "argnb.debate"
WORDS = 120
MAX_REVISIONS = 3
#: words of one retrieved passage in a prompt
PASSAGE_WORDS = 80

Retrieval = Literal["none", "naive", "schemes"]

#: the steps of a turn, as ``Event("step", label=...)`` names them when each begins (a view
#: says them in its own words)
STEPS = ("logic", "retrieval", "draft", "judge", "revision")


@dataclass(frozen=True)
class Method:
    """Which parts of the pipeline run: retrieval (none / passages pasted / passages with scheme
    priors), the logic agent, and the judge-revise loop."""

    name: str
    retrieval: Retrieval
    logic: bool
    judge: bool
    about: str


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("llm", "none", False, False, "the draft alone: no retrieval, no planning"),
        Method("naive-rag", "naive", False, False, "retrieved passages pasted into the prompt"),
        Method("rdebater", "schemes", True, True, "logic agent, scheme priors, judge and reviser"),
        Method("rdebater-no-judge", "schemes", True, False, "rdebater without the judge loop"),
        Method("rdebater-no-logic", "schemes", False, True, "rdebater without the logic agent"),
        Method("rdebater-no-schemes", "naive", True, True, "rdebater without scheme priors"),
    )
}


def method_of(name: str | Method) -> Method:
    if isinstance(name, Method):
        return name
    if name not in METHODS:
        raise ArgnbError(f"unknown method {name!r}", hint=f"use one of {', '.join(METHODS)}")
    return METHODS[name]


def worst_case_calls(
    method: str | Method, max_revisions: int = MAX_REVISIONS, opponent_turns: int = OPPONENT_TURNS
) -> int:
    """The most model calls one utterance can cost.

    Each structured answer may take a schema repair (2 calls); a rule check adds one more
    attempt (so 4); plain-text drafts and revisions have the word-budget check (2 calls).
    Logic: predicates per opponent turn (4 each), chain (2), flaws (4). Keywords: 4. Then the
    draft (2) and, with the judge, ``max_revisions + 1`` rounds of summary (2) and verdict (4)
    with ``max_revisions`` revisions (2 each) between them.

    >>> worst_case_calls("llm"), worst_case_calls("rdebater"), worst_case_calls("rdebater", 0)
    (2, 58, 34)
    """
    m = method_of(method)
    calls = 2  # the draft
    if m.logic:
        calls += 4 * opponent_turns + 2 + 4
    if m.retrieval == "schemes":
        calls += 4  # the keyword agent
    if m.judge:
        calls += (max_revisions + 1) * (2 + 4) + max_revisions * 2
    return calls


def _labels(schemes: dict[str, str | None]) -> str:
    """``analogy: good, values: unscored`` (or ``no schemes``) for an exemplar line."""
    return ", ".join(f"{s}: {lab or 'unscored'}" for s, lab in schemes.items()) or "no schemes"


def _needs_feedback(v: Any) -> list[str]:
    ok = v.stance_faithful and v.relevant and v.follows_schemes
    return [] if ok or v.feedback.strip() else ["say what to change when a check fails"]


@dataclass(frozen=True)
class NextUtterance:
    """One generated turn: its text and a read-only view over the turns that made it."""

    text: str
    stance: str
    topic: str
    method: str
    turns: tuple[Turn, ...]
    retrieval: RetrievalTrace | None = None
    logic: LogicResult | None = None
    notes: tuple[str, ...] = ()
    first_chunk_s: float | None = None

    @property
    def utterance(self) -> Turn:
        return self.turns[-1]

    @property
    def info(self) -> Utterance:
        p = self.utterance.payload
        assert isinstance(p, Utterance)
        return p

    @property
    def accepted(self) -> bool | None:
        return self.info.accepted

    @property
    def revisions(self) -> int:
        return self.info.revisions

    @property
    def bound_hit(self) -> bool:
        return self.info.bound_hit

    @property
    def cost(self) -> Cost:
        return Cost.of(self.turns)

    @property
    def shown(self) -> str:
        """The turn's text for a table, or why there is none (a row left empty looks like a
        turn that said nothing, not one the gate stopped)."""
        if self.text:
            return self.text
        why = self.info.gated
        return f"(no turn: the gate stopped the draft: {why})" if why else "(no turn)"

    def of_kind(self, kind: str) -> list[Turn]:
        return [t for t in self.turns if t.payload.kind == kind]

    @property
    def drafts(self) -> list[Turn]:
        return self.of_kind("debate.draft")

    @property
    def verdicts(self) -> list[Turn]:
        return self.of_kind("debate.verdict")

    def evidence(self) -> list[dict[str, Any]]:
        """The retrieved passages, as evaluation reads them."""
        if self.retrieval is None:
            return []
        return [{"id": h.id, "text": h.text, "schemes": h.schemes} for h in self.retrieval.hits]

    def _repr_html_(self) -> str:
        from argnb.debate.views import utterance_html

        return utterance_html(self)


@dataclass
class Debater:
    """A debater for one side and method on a backend (see the module docstring).

    ``retriever`` is needed by every method that retrieves (``naive-rag``, ``rdebater*``); the
    judge, summary and stance agents use ``judge`` when given (default: the same backend).
    ``keyword_agent=False`` takes the lexical keywords instead of the keyword agent.
    ``same_motion=False`` (the default) never recalls passages of the debated motion itself --
    for a debate taken from the memory's own corpus they would be its future turns; set it to
    True to let a learner's debate on one of the memory's motions recall that motion's passages.
    """

    backend: Backend
    method: str | Method = "rdebater"
    retriever: Retriever | None = None
    name: str = ""
    judge: Backend | None = None
    max_revisions: int = MAX_REVISIONS
    words: int = WORDS
    k: int = 5
    keyword_agent: bool = True
    same_motion: bool = False
    options: Options | None = None
    prompt_dir: str | None = None
    schemes: SchemeSet | None = None
    logic_agent: LogicAgent | None = None
    _templates: dict[str, Prompt] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.method = method_of(self.method)
        if self.method.retrieval != "none" and self.retriever is None:
            raise ArgnbError(
                f"the {self.method.name} method retrieves, but no memory was given",
                hint="pass retriever=Retriever(store, embedder), or use method='llm'",
            )
        if self.max_revisions < 0 or self.words < 10 or self.k < 1:
            raise ArgnbError("max_revisions >= 0, words >= 10 and k >= 1, please")
        self.name = self.name or f"{self.method.name} ({self.backend.name}:{self.backend.model})"
        if self.schemes is None:
            self.schemes = load_schemes()
        if self.logic_agent is None:
            self.logic_agent = LogicAgent(self.judge or self.backend, prompt_dir=self.prompt_dir)

    @property
    def m(self) -> Method:
        assert isinstance(self.method, Method)
        return self.method

    def describe(self) -> dict[str, Any]:
        """What identifies this debater in results files (never secrets)."""
        out: dict[str, Any] = {
            "method": self.m.name,
            **self.backend.describe(),
            "max_revisions": self.max_revisions,
            "words": self.words,
            "k": self.k,
            "keywords": "agent" if self.keyword_agent else "lexical",
            "same_motion": self.same_motion,
        }
        if self.judge is not None:
            out["judge"] = self.judge.describe()
        if self.retriever is not None:
            out["retrieval"] = {
                "method": self.retriever.method,
                "embedder": self.retriever.embedder.name if self.retriever.embedder else None,
                "memory": str(self.retriever.store.path),
            }
        return out

    def template(self, name: str) -> Prompt:
        if name not in self._templates:
            self._templates[name] = load(PACKAGE, name, self.prompt_dir, sectioned=True)
        return self._templates[name]

    def _text_options(self) -> Options:
        base = self.options or self.backend.options or Options()
        return base.model_copy(update={"max_tokens": token_budget(self.words)})

    # -- the steps ---------------------------------------------------------------------
    async def _retrieve(
        self, topic: str, stance: str, history: list[Said], ctx: TurnContext
    ) -> tuple[RetrievalTrace | None, list[Turn], str]:
        assert self.retriever is not None
        text = history_text([s.text for s in history]) or topic
        turns: list[Turn] = []
        keywords = None
        note = ""
        if self.m.retrieval == "schemes" and self.keyword_agent:
            keywords, tt = await akeywords(
                self.judge or self.backend,
                text,
                n=self.retriever.n_keywords,
                prompt_dir=self.prompt_dir,
                ctx=ctx,
            )
            turns += tt
            if keywords is None:
                note = "the keyword agent's answer was invalid: lexical keywords used"
        trace = await self.retriever.aretrieve(
            text,
            stance=stance,
            k=self.k,
            keywords=keywords,
            exclude_topics=[] if self.same_motion else [topic],
        )
        if keywords is not None:
            trace.keyword_source = "agent"
        elif note:
            trace.keyword_source = "lexical (the keyword agent's answer was invalid)"
        trace.turns = turns
        return trace, turns, note

    def _evidence(
        self, ctx: TurnContext, trace: RetrievalTrace | None
    ) -> tuple[TurnContext, list[str]]:
        """The context with what retrieval found for this method, and the planned schemes."""
        planned: list[str] = []
        if trace is not None and trace.hits:
            if self.m.retrieval == "naive":
                material = "\n".join(
                    f"- {clip(h.text, PASSAGE_WORDS)}" for h in trace.hits[: self.k]
                )
                ctx = ctx.with_block("material", material=material)
            else:
                assert self.schemes is not None
                planned = [s for s in trace.kept_schemes if s in self.schemes]
                keep = set(trace.exemplars) or {h.id for h in trace.hits}
                shown = [h for h in trace.hits if h.id in keep][: self.k]
                exemplars = "\n".join(
                    f"- ({_labels(h.schemes)}) {clip(h.text, PASSAGE_WORDS)}" for h in shown
                )
                ctx = ctx.with_block("exemplars", exemplars=exemplars)
                if planned:
                    ctx = ctx.with_block("schemes", schemes=self._plan(planned))
        return ctx, planned

    def _gate(self, *material: str) -> Gate:
        """The shared context's fixed words ("The team argues ... the motion") are the team's
        instructions, whichever agent repeats them; ``material`` it may quote."""
        return Gate(instructions=static(context_template(self.prompt_dir)), material=material)

    def _plan(self, planned: list[str]) -> str:
        """The planned schemes with their patterns, as the generator and the judge read them."""
        assert self.schemes is not None
        return "\n".join(f"- {self.schemes[s].name}: {self.schemes[s].pattern()}" for s in planned)

    async def _speak(
        self,
        prompt: str,
        *,
        system: str,
        role: str,
        revision: int,
        on_chunk: Callable[[str], None] | None,
        on_start: Callable[[int], None] | None,
        others: Sequence[str] = (),
        material: Sequence[str] = (),
        earlier: Sequence[str] = (),
    ) -> tuple[str, Response[Any], LiveBackend]:
        """A plain-text turn (draft or revision), streamed, kept within the word budget. It
        passes the gate (:mod:`argnb.gate`) or is no draft at all: a draft that echoes the
        team's instructions or copies the opponent never reaches the judge."""
        n = self.words
        # ``earlier``: its own side's turns (a live turn copied one, unmarked: issue 35)
        gate = Gate(others=tuple(others), material=tuple(material), limit=n, earlier=tuple(earlier))
        held = None
        if on_chunk is not None:  # what streams stops where the gate would stop the draft
            ask = Agent(self.name, self.backend, system=system, gate=self._gate())
            held = Held(on_chunk, (ask.gate + gate).seen(ask.messages(prompt)))

        def start(attempt: int) -> None:
            if held is not None:
                held.restart(attempt)
            if on_start is not None:
                on_start(attempt)

        live = LiveBackend(self.backend, held, start)
        agent = Agent(self.name, live, system=system, gate=self._gate())  # type: ignore[arg-type]
        resp = await agent.arespond(
            prompt,
            None,
            role=role,
            parse=drop_repeats,
            check=too_long(n),
            repair=f"Your turn has too many words ($problems). Say the same in at most {n} words.",
            strict=False,
            text=lambda v: cut_to_words(v, n),
            payload=lambda v: Draft(
                revision=revision,
                words=count_words(cut_to_words(v, n)),
                cut=count_words(v) > n,
            ),
            options=self._text_options(),
            gate=gate,
        )
        text = cut_to_words(resp.value, n) if resp.valid else ""
        return text, resp, live

    async def anext(
        self,
        topic: str,
        history: Sequence[Any],
        *,
        stance: str | None = None,
        closing: bool = False,
        on_event: Callable[[Event], None] | None = None,
    ) -> NextUtterance:
        """The next turn for ``stance`` (default: the side whose turn it is).

        Every agent's prompt starts with the turn's shared context (:mod:`argnb.debate.context`),
        which grows as steps finish: the history, then the flaws, the evidence, the candidate.
        ``on_event`` hears each step as it begins (``step``, its ``label`` says what it does),
        every finished step (``turn``), and the draft and each revision as they are written
        (``start``, ``chunk``; ``restart`` when one is too long and is written again): the
        vocabulary of :class:`argnb.events.Event`."""
        hist = as_history(history)
        side = stance or next_side(hist)
        if side not in SIDE_WORDS:
            raise ArgnbError(f"unknown side {side!r}", hint="use pro or con")
        turns: list[Turn] = []
        notes: list[str] = []

        def emit(event: Event) -> None:
            if on_event is not None:
                on_event(event)

        def step(label: str) -> None:
            emit(Event("step", self.name, label=label))

        def record_one(t: Turn) -> None:
            turns.append(t)
            emit(Event("turn", t.speaker, t.text, t))

        def record(new: Sequence[Turn]) -> None:
            for t in new:
                record_one(t)

        ctx = TurnContext.of(topic, side, hist, self.prompt_dir)
        logic = None
        if self.m.logic:
            assert self.logic_agent is not None
            step("logic")
            logic = await self.logic_agent.aanalyse(topic, side, hist, ctx=ctx, on_turn=record_one)
            if logic.note:
                notes.append(f"logic agent: {logic.note}")
            if logic.flaws:
                ctx = ctx.with_block("flaws", flaws=logic.signals())
        trace = None
        if self.m.retrieval != "none":
            step("retrieval")
            trace, kw_turns, note = await self._retrieve(topic, side, hist, ctx)
            record(kw_turns)
            record([trace.to_turn()])
            if note:
                notes.append(note)
            if self.m.retrieval == "schemes" and not trace.kept_schemes:
                notes.append("no scheme above the threshold in the retrieved passages")
        ctx, planned = self._evidence(ctx, trace)
        opp = [s for s in hist if s.stance != side]
        last = opp[-1] if opp else None
        t = self.template("generate")
        task = t.render(
            "task",
            name=self.name,
            side=SIDE_WORDS[side],
            topic=topic,
            last=last.label if last else "none",
            words=self.words,
            plan=" Build your turn on the planned kinds of argument." if planned else "",
        )
        if closing:
            task += "\n\n" + t.render("closing")
        first: list[float | None] = []

        def started(n: int) -> None:
            kind = "start" if n == 1 else "restart"
            emit(Event(kind, self.name, model=self.backend.model, label=side))

        def chunk(text: str) -> None:
            emit(Event("chunk", self.name, text))

        step("draft")
        text, resp, live = await self._speak(
            ctx.ask(task),
            system=ctx.system,
            role="draft",
            revision=0,
            on_chunk=chunk,
            on_start=started,
            others=[s.text for s in opp],
            earlier=[s.text for s in hist if s.stance == side],
        )
        first += live.first_chunk_s
        record(resp.turns)
        accepted: bool | None = None
        revisions = 0
        bound = False
        if not text:
            why = f"the gate stopped it: {resp.gated}" if resp.gated else resp.error
            notes.append(f"no valid draft: {why}")
        elif self.m.judge:
            jt = self.template("judge")
            schemes_check = jt.render("schemes_planned" if planned else "schemes_none")
            for rnd in range(self.max_revisions + 1):
                judged = ctx.with_block("candidate", candidate=text)
                step("judge")
                summary, st = await self._summarize(judged, rnd)
                record(st)
                verdict, vt = await self._judge(
                    judged, side, summary, schemes_check, rnd, bool(planned)
                )
                record(vt)
                if verdict is None:
                    notes.append(f"round {rnd + 1}: the judge gave no valid verdict")
                    break
                accepted = verdict.accept
                if accepted:
                    break
                if rnd == self.max_revisions:
                    bound = True
                    break
                rt = self.template("revise")
                step("revision")
                feedback = verdict.feedback or "Make the turn hold its side more clearly."
                revised, rresp, live = await self._speak(
                    judged.ask(
                        rt.render(
                            "task", side=SIDE_WORDS[side], feedback=feedback, words=self.words
                        )
                    ),
                    system=judged.system,
                    role="revision",
                    revision=rnd + 1,
                    on_chunk=chunk,
                    on_start=started,
                    others=[s.text for s in opp],
                    earlier=[s.text for s in hist if s.stance == side],
                    material=[feedback],
                )
                first += live.first_chunk_s
                record(rresp.turns)
                if not revised:
                    notes.append(f"revision {rnd + 1} was invalid: the previous draft stands")
                    break
                text = revised
                revisions = rnd + 1
        targets = (logic.targets if logic else []) or ([last.label] if last else [])
        final = Turn(
            speaker=self.name,
            role="utterance",
            text=text,
            payload=Utterance(
                stance=side,
                topic=topic,
                method=self.m.name,
                words=count_words(text),
                accepted=accepted,
                revisions=revisions,
                bound_hit=bound,
                schemes=planned,
                targets=targets,
                concluding=closing,
                gated=resp.gated if not text else "",
            ),
            calls=0,
            model=self.backend.model,
            backend=self.backend.name,
            valid=bool(text),
        )
        record([final])
        return NextUtterance(
            text=text,
            stance=side,
            topic=topic,
            method=self.m.name,
            turns=tuple(turns),
            retrieval=trace,
            logic=logic,
            notes=tuple(notes),
            first_chunk_s=next((f for f in first if f is not None), None),
        )

    def next(self, topic: str, history: Sequence[Any], **kw: Any) -> NextUtterance:
        """Sync twin of :meth:`anext` (works inside Jupyter too)."""
        return run_sync(self.anext(topic, history, **kw))

    async def _summarize(self, ctx: TurnContext, rnd: int) -> tuple[str, tuple[Turn, ...]]:
        """The debate with the candidate in it (both in ``ctx``), as the judge reads it."""
        t = self.template("summarize")
        agent = Agent(
            "summarization agent", self.judge or self.backend, system=ctx.system, gate=self._gate()
        )

        def lines(xs: list[str]) -> list[str]:  # no sentence twice (small models loop)
            return distinct(xs)

        resp = await agent.arespond(
            ctx.ask(t.render("task")),
            SummaryAnswer,
            role="summary",
            round=rnd,
            text=lambda v: drop_repeats(v.overview),
            payload=lambda v: Summary(
                overview=drop_repeats(v.overview),
                supporting=lines(v.supporting),
                opposing=lines(v.opposing),
                divergence=lines(v.divergence),
            ),
        )
        if not resp.valid:
            return "(no summary: the summarization agent's answer was invalid)", resp.turns
        v = resp.value
        text = "\n".join(
            [
                drop_repeats(v.overview),
                *(f"For: {x}" for x in lines(v.supporting)),
                *(f"Against: {x}" for x in lines(v.opposing)),
                *(f"They diverge on: {x}" for x in lines(v.divergence)),
            ]
        )
        return text, resp.turns

    async def _judge(
        self,
        ctx: TurnContext,
        side: str,
        summary: str,
        schemes: str,
        rnd: int,
        planned: bool,
    ) -> tuple[Verdict | None, tuple[Turn, ...]]:
        """Accept the candidate in ``ctx`` or say what to change."""
        t = self.template("judge")
        # the summary stands in the judge's task: material, not instructions
        agent = Agent(
            "judgement agent",
            self.judge or self.backend,
            system=ctx.system,
            gate=self._gate(summary),
        )

        def verdict(v: Any) -> Verdict:
            follows = bool(v.follows_schemes) or not planned
            ok = bool(v.stance_faithful and v.relevant and follows)
            return Verdict(
                revision=rnd,
                stance_faithful=bool(v.stance_faithful),
                relevant=bool(v.relevant),
                follows_schemes=follows,
                accept=ok,
                feedback=" ".join(v.feedback.split()),
            )

        resp = await agent.arespond(
            ctx.ask(t.render("task", side=SIDE_WORDS[side], summary=summary, schemes=schemes)),
            VerdictAnswer,
            role="verdict",
            round=rnd,
            check=_needs_feedback,
            strict=False,
            text=lambda v: (
                ("accepted" if verdict(v).accept else "rejected")
                + (f": {verdict(v).feedback}" if verdict(v).feedback else "")
            ),
            payload=verdict,
        )
        return (verdict(resp.value) if resp.valid else None), resp.turns


__all__ = [
    "METHODS",
    "Debater",
    "Method",
    "NextUtterance",
    "method_of",
    "worst_case_calls",
]
