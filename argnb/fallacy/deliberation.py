"""Deliberation between agents, each with its own backend and model.

The rules (speaking order, when it ends, tie-breaks) live in :mod:`argnb.fallacy.protocol`; the
wording in ``prompts/deliberate.md``; this module only runs rounds: for every agent in turn it
builds the prompt from everything said so far, makes one structured call, and records the turn
(its reasoning without a sentence said twice: :func:`argnb.words.drop_repeats`, the rule of
every spoken turn; the vote and confidence are recorded as answered).

    >>> from argnb.llm import ScriptedBackend
    >>> yes = {"action": "propose", "reasoning": "It generalizes from one case.", "vote": 1,
    ...        "confidence": 0.8}
    >>> a = Agent("A", ScriptedBackend([yes]))
    >>> b = Agent("B", ScriptedBackend([yes]))
    >>> r = deliberate("One car broke, so all cars are bad.", [a, b])
    >>> r.label, r.resolution, r.rounds
    (1, 'consensus', 1)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from argnb.agents import Agent, parse_agents, unique_names
from argnb.batch import run_sync
from argnb.errors import ArgnbError
from argnb.fallacy.payloads import DeliberationTurn
from argnb.fallacy.prompts import load
from argnb.fallacy.protocol import Decision, Vote, decide, seeded_rng, speaking_order
from argnb.fallacy.schemas import ACTIONS, OPENING_ACTIONS, Contribution, OpeningContribution
from argnb.llm.base import Message
from argnb.transcript import Cost, Costed, Transcript, Turn
from argnb.words import drop_repeats

DEFAULT_MAX_ROUNDS = 3

__all__ = [
    "DEFAULT_MAX_ROUNDS",
    "Agent",
    "Deliberation",
    "DeliberationResult",
    "deliberate",
    "parse_agents",
    "render_context",
    "unique_names",
]


def render_context(turns: Sequence[Turn]) -> str:
    """The discussion so far (deliberation turns) as the next speaker reads it."""
    if not turns:
        return "(nothing yet - you speak first)"
    lines = []
    for t in turns:
        p = t.payload
        if not t.valid or not isinstance(p, DeliberationTurn) or p.vote is None:
            lines.append(f"[round {t.round}] {t.speaker}: (their answer could not be read)")
        else:
            lines.append(
                f"[round {t.round}] {t.speaker} - {p.action} (vote {p.vote}, "
                f"confidence {p.confidence:.2f}): {t.text}"
            )
    return "\n".join(lines)


@dataclass(frozen=True)
class DeliberationResult(Costed):
    """How a deliberation ended, round by round: a read-only view of its transcript.

    ``start`` is where the deliberation's turns begin (an ensemble's transcript holds the two
    baseline answers first).
    """

    transcript: Transcript
    start: int = 0

    @property
    def turns(self) -> list[Turn]:
        return [
            t
            for t in self.transcript.turns[self.start :]
            if isinstance(t.payload, DeliberationTurn)
        ]

    @property
    def decision(self) -> Decision:
        o = self.transcript.outcome
        d = o.get("deliberation", o)
        return Decision(d["label"], d["resolution"], d["rounds"])

    @property
    def label(self) -> int | str:
        return self.decision.label

    @property
    def resolution(self) -> str:
        return self.decision.resolution

    @property
    def rounds(self) -> int:
        return self.decision.round

    @property
    def votes(self) -> list[list[Vote]]:
        """Per round, each speaker's vote (``vote=None`` for an answer that could not be read)."""
        by_round: dict[int, list[Vote]] = {}
        for t in self.turns:
            p: DeliberationTurn = t.payload  # type: ignore[assignment]
            by_round.setdefault(t.round or 0, []).append(Vote(t.speaker, p.vote, p.confidence))
        return [by_round[r] for r in sorted(by_round)]

    @property
    def cost(self) -> Cost:
        return Cost.of(self.turns)

    @property
    def confidences(self) -> list[float]:
        return [
            v.confidence for rnd in self.votes for v in rnd if v.valid and v.confidence is not None
        ]

    def to_dataframe(self) -> Any:
        """One row per agent and round: vote, confidence, action."""
        return self.transcript.to_dataframe()

    def _repr_html_(self) -> str:
        from argnb.fallacy.views import render_rounds

        return render_rounds(self)


class Deliberation:
    """Run the protocol with ``agents`` (at least two) for up to ``max_rounds`` rounds."""

    def __init__(
        self,
        agents: Sequence[Agent],
        *,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        seed: int | str = 0,
        prompt_dir: str | None = None,
        on_turn: Callable[[Turn], None] | None = None,
    ) -> None:
        if len(agents) < 2:
            raise ArgnbError(
                "deliberation needs at least two agents",
                hint="pass two Agent objects, or --agents local:smollm2-135m,ollama:llama3.2",
            )
        names = [a.name for a in agents]
        if len(set(names)) != len(names):
            raise ArgnbError(
                f"agent names must differ: {names}", hint="use unique_names() or name them"
            )
        if max_rounds < 1:
            raise ArgnbError("max_rounds must be at least 1")
        self.agents = list(agents)
        self.max_rounds = max_rounds
        self.seed = seed
        self.template = load("deliberate", prompt_dir)
        self.on_turn = on_turn  # e.g. print each turn as it is taken (progress in a notebook)

    def describe(self) -> dict[str, Any]:
        return {
            "agents": [a.describe() for a in self.agents],
            "max_rounds": self.max_rounds,
            "seed": self.seed,
        }

    def messages(
        self, agent: Agent, text: str, round_no: int, said: Sequence[Turn]
    ) -> list[Message]:
        """The prompt for ``agent`` at this point of the discussion."""
        others = ", ".join(a.name for a in self.agents if a is not agent)
        actions = ACTIONS if said else OPENING_ACTIONS
        return [
            Message(role="system", content=self.template.render("system", name=agent.name)),
            Message(
                role="user",
                content=self.template.render(
                    "user",
                    name=agent.name,
                    others=others,
                    round=round_no,
                    max_rounds=self.max_rounds,
                    argument=text,
                    context=render_context(said),
                    actions=", ".join(actions),
                ),
            ),
        ]

    async def _speak(
        self, agent: Agent, text: str, round_no: int, position: int, order: list[str], said: list
    ) -> Turn:
        """One agent's contribution, recorded as a turn whether or not it could be read."""
        resp = await agent.arespond(
            self.messages(agent, text, round_no, said),
            Contribution if said else OpeningContribution,
            role=lambda c: c.action,
            text=lambda c: drop_repeats(c.reasoning),  # no sentence twice (small models loop)
            payload=lambda c: DeliberationTurn(
                position=position,
                order=order,
                action=c.action,
                vote=c.vote,
                confidence=c.confidence,
            ),
            round=round_no,
        )
        if resp.valid:
            return resp.turn
        record = DeliberationTurn(
            position=position, order=order, error=resp.error, gate=resp.gated, raw=resp.raw
        )
        return resp.turn.model_copy(update={"payload": record})

    async def arun(
        self, text: str, *, item_id: str = "", transcript: Transcript | None = None
    ) -> DeliberationResult:
        """Deliberate about one argument; turns are appended to ``transcript`` when given."""
        tr = transcript or Transcript(
            kind="fallacy-deliberation",
            title=", ".join(a.name for a in self.agents),
            meta={"argument": text, **self.describe()},
        )
        start = len(tr.turns)
        by_name = {a.name: a for a in self.agents}
        rng = seeded_rng(self.seed, item_id)
        decision: Decision | None = None
        round_no = 0
        while decision is None:
            round_no += 1
            order = speaking_order([a.name for a in self.agents], round_no)
            for position, name in enumerate(order):
                said = tr.turns[start:]
                turn = await self._speak(by_name[name], text, round_no, position + 1, order, said)
                tr.add(turn)
                if self.on_turn is not None:
                    self.on_turn(turn)
            this_round = [
                Vote(t.speaker, t.payload.vote, t.payload.confidence)  # type: ignore[attr-defined]
                for t in tr.turns[start:]
                if t.round == round_no
            ]
            decision = decide(this_round, round_no, self.max_rounds, rng)
        outcome = {
            "label": decision.label,
            "resolution": decision.resolution,
            "rounds": decision.round,
        }
        tr.outcome.update(outcome)
        if start:  # inside another protocol's transcript (the ensemble's): keep our own decision
            tr.outcome["deliberation"] = dict(outcome)
        return DeliberationResult(tr, start)

    def run(self, text: str, *, item_id: str = "") -> DeliberationResult:
        """Sync twin of :meth:`arun` (works inside Jupyter)."""
        return run_sync(self.arun(text, item_id=item_id))


def deliberate(
    text: str,
    agents: Sequence[Agent],
    *,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    seed: int | str = 0,
    item_id: str = "",
    on_turn: Callable[[Turn], None] | None = None,
) -> DeliberationResult:
    """Let ``agents`` deliberate about whether ``text`` is fallacious (sync); ``on_turn`` is
    called with each turn as soon as it is recorded."""
    delib = Deliberation(agents, max_rounds=max_rounds, seed=seed, on_turn=on_turn)
    return delib.run(text, item_id=item_id)
