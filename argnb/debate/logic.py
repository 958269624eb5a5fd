"""The logic & summarization agent: the opponent's reasoning as predicates, a chain, and flaws.

Three agent turns over the opponent's turns so far (section 4.2 of the R-Debater paper):

1. **predicates** -- each opponent turn becomes pseudo first-order forms (``Cause(A,B)``,
   ``Supports(A,B)``, ``Negate(P)``, ...), one per claim, at most :data:`MAX_PREDICATES` a turn.
   A turn is translated once and remembered (:class:`LogicAgent` keeps a cache keyed by its
   text), so a long debate pays for each turn one time. Lines that are not of the form
   ``Name(...)`` are dropped in code, whatever the model says;
2. **chain** -- the predicates of all those turns retold as one neutral reasoning chain;
3. **flaws** -- contradictions, unsupported assumptions, circularity, overgeneralization, false
   dichotomies, ... each 1-3 sentences naming the predicates it concerns. Predicates a flaw names
   that are not in the list are dropped in code; a flaw that then names none is kept, but its
   ``claims`` is empty.

Every step is a typed transcript turn (``debate.predicates``, ``debate.chain``, ``debate.flaws``),
so a view, the argument map and the generation prompt all read the same record. A step whose
answer is invalid leaves the later steps to work with what there is (no predicates: no chain and
no flaws; the generation then runs without flaws, and the trace says why).

    >>> from argnb.llm import ScriptedBackend
    >>> b = ScriptedBackend([
    ...     {"predicates": ["Cause(Homework, Stress)", "not a predicate"]},
    ...     {"chain": "Homework causes stress, so it should go."},
    ...     {"flaws": [{"kind": "unsupported assumption", "text": "Stress is assumed harmful.",
    ...                 "claims": ["Cause(Homework, Stress)", "Made(Up)"]}]},
    ... ])
    >>> r = LogicAgent(b).analyse("Ban homework", "con", [("pro", "Homework causes stress.")])
    >>> r.predicates, r.flaws[0].claims, r.targets
    (['Cause(Homework, Stress)'], ['Cause(Homework, Stress)'], ['P1'])
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from argnb.agents import Agent
from argnb.batch import run_sync
from argnb.debate.context import TurnContext
from argnb.debate.payloads import Flaw, Flaws, Predicates, ReasoningChain
from argnb.debate.record import SIDE_WORDS, Said, as_history, clip, other
from argnb.debate.schemas import (
    FLAW_KINDS,
    MAX_FLAWS,
    MAX_PREDICATES,
    ChainAnswer,
    FlawsAnswer,
    PredicatesAnswer,
)
from argnb.gate import Gate
from argnb.llm.base import Backend, Options
from argnb.prompts import Prompt, load
from argnb.transcript import Cost, Turn

PACKAGE = "argnb.debate"
#: the most recent opponent turns the agent reads (older ones: already answered)
OPPONENT_TURNS = 4
#: words of one opponent turn sent for translation
TURN_WORDS = 220
_PREDICATE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*\(.+\)$")


def well_formed(lines: Iterable[str]) -> list[str]:
    """Predicates of the form ``Name(...)``, whitespace normalised, each once, in order.

    >>> well_formed(["Cause(A,B)", " Cause(A,B) ", "- Negate(P)", "A causes B", ""])
    ['Cause(A,B)', 'Negate(P)']
    """
    out: dict[str, None] = {}
    for line in lines:
        p = " ".join(str(line).split()).lstrip("-*• ").rstrip(".;,")
        if _PREDICATE.match(p):
            out.setdefault(p, None)
    return list(out)


def _key(p: str) -> str:
    return re.sub(r"\s+", "", p).lower()


@dataclass(frozen=True)
class LogicResult:
    """What the agent found, and the turns that cost it. ``sources`` maps each predicate to the
    label of the opponent turn it came from (``P2``); ``targets`` are the turns the flaws hit."""

    predicates: list[str]
    sources: dict[str, str]
    chain: str
    flaws: list[Flaw]
    turns: tuple[Turn, ...]
    note: str = ""

    @property
    def cost(self) -> Cost:
        return Cost.of(self.turns)

    @property
    def targets(self) -> list[str]:
        out: dict[str, None] = {}
        for f in self.flaws:
            for c in f.claims:
                if c in self.sources:
                    out.setdefault(self.sources[c], None)
        return list(out)

    def signals(self) -> str:
        """The flaws as the generation prompt shows them (empty when there are none)."""
        return "\n".join(
            f"- {f.kind}: {f.text}" + (f" (claims: {'; '.join(f.claims)})" if f.claims else "")
            for f in self.flaws
        )


@dataclass
class LogicAgent:
    """The three steps on one backend; remembers each opponent turn's predicates."""

    backend: Backend
    options: Options | None = None
    prompt_dir: str | None = None
    opponent_turns: int = OPPONENT_TURNS
    _cache: dict[str, tuple[list[str], tuple[Turn, ...]]] = field(
        default_factory=dict, init=False, repr=False
    )
    _templates: dict[str, Prompt] = field(default_factory=dict, init=False, repr=False)

    def template(self, name: str) -> Prompt:
        if name not in self._templates:
            self._templates[name] = load(PACKAGE, name, self.prompt_dir, sectioned=True)
        return self._templates[name]

    def _agent(self, name: str, template: str, ctx: TurnContext) -> tuple[Agent, Prompt]:
        t = self.template(template)
        return Agent(name, self.backend, self.options, system=ctx.system), t

    async def apredicates(
        self, topic: str, turn: Said, ctx: TurnContext | None = None
    ) -> tuple[list[str], tuple[Turn, ...]]:
        """Step 1 for one opponent turn, after the turn's shared context ``ctx`` (default: the
        motion and this turn alone). Cached: the second call for the same text is free and
        returns no turns, so its cost is counted once."""
        key = f"{turn.stance}\x00{turn.text}"
        if key in self._cache:
            return self._cache[key][0], ()
        if ctx is None:
            ctx = TurnContext.of(topic, other(turn.stance), [turn], self.prompt_dir)
        agent, t = self._agent("logic agent", "predicates", ctx)
        task = t.render(
            "task",
            label=turn.label,
            side=SIDE_WORDS[turn.stance],
            text=clip(turn.text, TURN_WORDS),
            n=MAX_PREDICATES,
        )
        resp = await agent.arespond(
            ctx.ask(task),
            PredicatesAnswer,
            role="predicates",
            check=lambda v: [] if well_formed(v.predicates) else ["write claims as Name(A,B)"],
            strict=False,
            text=lambda v: "\n".join(well_formed(v.predicates)),
            payload=lambda v: Predicates(predicates=well_formed(v.predicates)),
            gate=Gate(material=(turn.text,)),  # the turn stands in the task: it may be quoted
        )
        preds = well_formed(resp.value.predicates) if resp.valid else []
        self._cache[key] = (preds, resp.turns)
        return preds, resp.turns

    async def aanalyse(
        self,
        topic: str,
        stance: str,
        history: Sequence[Any],
        *,
        ctx: TurnContext | None = None,
        on_turn: Callable[[Turn], None] | None = None,
    ) -> LogicResult:
        """All three steps over the turns of the side *opposing* ``stance``, each prompt after
        the turn's shared context ``ctx`` (default: built from ``history``). ``on_turn`` hears
        each step's turns as soon as they are made (a view shows the predicates early)."""
        hist = as_history(history)
        opp = [s for s in hist if s.stance != stance][-self.opponent_turns :]
        if not opp:
            return LogicResult([], {}, "", [], (), "the opponent has not spoken yet")
        ctx = ctx or TurnContext.of(topic, stance, hist, self.prompt_dir)
        turns: list[Turn] = []

        def add(new: Sequence[Turn]) -> None:
            turns.extend(new)
            for t in new:
                if on_turn is not None:
                    on_turn(t)

        sources: dict[str, str] = {}
        for said in opp:
            preds, t = await self.apredicates(topic, said, ctx)
            add(t)
            for p in preds:
                sources.setdefault(p, said.label)
        preds = list(sources)
        if not preds:
            return LogicResult([], {}, "", [], tuple(turns), "no valid predicates")
        side = SIDE_WORDS[opp[0].stance]
        listing = "\n".join(preds)
        agent, t = self._agent("logic agent", "chain", ctx)
        chain_resp = await agent.arespond(
            ctx.ask(t.render("task", side=side, predicates=listing)),
            ChainAnswer,
            role="reasoning chain",
            text=lambda v: v.chain,
            payload=lambda v: ReasoningChain(chain=v.chain),
            gate=Gate(material=(listing,)),
        )
        add(chain_resp.turns)
        if not chain_resp.valid or not chain_resp.value.chain.strip():
            return LogicResult(preds, sources, "", [], tuple(turns), "no valid reasoning chain")
        chain = chain_resp.value.chain.strip()
        known = {_key(p): p for p in preds}

        def flaws(v: Any) -> list[Flaw]:
            out = []
            for f in v.flaws:
                claims = list(dict.fromkeys(known[_key(c)] for c in f.claims if _key(c) in known))
                out.append(Flaw(kind=f.kind, text=" ".join(f.text.split()), claims=claims))
            return [f for f in out if f.text]

        agent, t = self._agent("logic agent", "flaws", ctx)
        flaw_resp = await agent.arespond(
            ctx.ask(
                t.render(
                    "task",
                    side=side,
                    chain=chain,
                    predicates=listing,
                    kinds=", ".join(FLAW_KINDS),
                    n=MAX_FLAWS,
                )
            ),
            FlawsAnswer,
            role="flaws",
            check=_flaw_check(known),
            strict=False,
            text=lambda v: "\n".join(f"{f.kind}: {f.text}" for f in flaws(v)) or "(no flaws)",
            payload=lambda v: Flaws(flaws=flaws(v)),
            gate=Gate(material=(listing, chain)),  # it names predicates "copied exactly"
        )
        add(flaw_resp.turns)
        found = flaws(flaw_resp.value) if flaw_resp.valid else []
        note = "" if flaw_resp.valid else "no valid flaw list"
        return LogicResult(preds, sources, chain, found, tuple(turns), note)

    def analyse(self, topic: str, stance: str, history: Sequence[Any]) -> LogicResult:
        """Sync twin of :meth:`aanalyse`."""
        return run_sync(self.aanalyse(topic, stance, history))


def _flaw_check(known: dict[str, str]):
    """Each flaw names at least one listed predicate and takes at most three sentences."""

    def check(v: Any) -> list[str]:
        problems = []
        for i, f in enumerate(v.flaws, start=1):
            if not any(_key(c) in known for c in f.claims):
                problems.append(f"flaw {i} names no predicate from the list; copy them exactly")
            if len(re.findall(r"[.!?](\s|$)", f.text.strip())) > 3:
                problems.append(f"flaw {i} is longer than three sentences")
        return problems

    return check
