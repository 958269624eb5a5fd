"""Deliberation between agents, each with its own backend and model.

The rules (speaking order, when it ends, tie-breaks) live in :mod:`argnb.fallacy.protocol`; the
wording in ``prompts/deliberate.md``; this module only runs rounds: for every agent in turn it
builds the prompt from everything said so far, makes one structured call, and records the turn.

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

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from argnb.batch import run_sync
from argnb.errors import ArgnbError
from argnb.fallacy.calls import acall
from argnb.fallacy.prompts import load
from argnb.fallacy.protocol import Decision, Vote, decide, seeded_rng, speaking_order
from argnb.fallacy.schemas import ACTIONS, OPENING_ACTIONS, Contribution, OpeningContribution
from argnb.llm.base import Backend, Message, Options, Usage
from argnb.transcript import Transcript, Turn

DEFAULT_MAX_ROUNDS = 3


@dataclass
class Agent:
    """A deliberator: a name the others see, and the backend/model that speaks for it."""

    name: str
    backend: Backend
    options: Options | None = None

    @classmethod
    def from_spec(cls, spec: str, name: str | None = None, **kw: Any) -> Agent:
        """``"local:smollm2-135m"``, ``"ollama:llama3.2"``, ``"openai:gpt-4o-mini"`` or a bare
        backend name (its default model)."""
        from argnb.config import connect

        backend_name, _, model = spec.strip().partition(":")
        backend = connect(backend_name or None, model or None, make_default=False, **kw)
        return cls(name or f"{backend.name}:{backend.model}", backend)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, **self.backend.describe()}


def parse_agents(spec: str | Sequence[str], **kw: Any) -> list[Agent]:
    """Agents from ``"local:smollm2-135m,ollama:llama3.2"``; same specs get distinct names."""
    specs = [s for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    agents = [Agent.from_spec(s, **kw) for s in specs]
    return unique_names(agents)


def unique_names(agents: list[Agent]) -> list[Agent]:
    """Suffix repeated names (two agents on the same model are still two speakers)."""
    seen: dict[str, int] = {}
    for a in agents:
        seen[a.name] = seen.get(a.name, 0) + 1
    counter: dict[str, int] = {}
    for a in agents:
        if seen[a.name] > 1:
            counter[a.name] = counter.get(a.name, 0) + 1
            a.name = f"{a.name} #{counter[a.name]}"
    return agents


@dataclass
class Said:
    """One recorded turn (valid or not) -- what the next speakers get to read."""

    round: int
    agent: str
    action: str = ""
    reasoning: str = ""
    vote: int | None = None
    confidence: float | None = None


def render_context(turns: Sequence[Said]) -> str:
    """The discussion so far as the next speaker reads it."""
    if not turns:
        return "(nothing yet - you speak first)"
    lines = []
    for t in turns:
        if t.vote is None:
            lines.append(f"[round {t.round}] {t.agent}: (their answer could not be read)")
        else:
            lines.append(
                f"[round {t.round}] {t.agent} - {t.action} (vote {t.vote}, "
                f"confidence {t.confidence:.2f}): {t.reasoning}"
            )
    return "\n".join(lines)


@dataclass
class DeliberationResult:
    """How a deliberation ended, round by round."""

    label: int | str
    resolution: str
    rounds: int
    votes: list[list[Vote]]
    transcript: Transcript
    usage: Usage = field(default_factory=Usage)
    calls: int = 0
    latency_s: float = 0.0

    @property
    def decision(self) -> Decision:
        return Decision(self.label, self.resolution, self.rounds)

    @property
    def confidences(self) -> list[float]:
        return [
            v.confidence for rnd in self.votes for v in rnd if v.valid and v.confidence is not None
        ]

    def to_dataframe(self) -> Any:
        """One row per agent and round: vote, confidence, action."""
        return self.transcript.to_dataframe()

    def _repr_html_(self) -> str:
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

    def describe(self) -> dict[str, Any]:
        return {
            "agents": [a.describe() for a in self.agents],
            "max_rounds": self.max_rounds,
            "seed": self.seed,
        }

    def messages(
        self, agent: Agent, text: str, round_no: int, said: Sequence[Said]
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

    async def arun(
        self, text: str, *, item_id: str = "", transcript: Transcript | None = None
    ) -> DeliberationResult:
        """Deliberate about one argument; turns are appended to ``transcript`` when given."""
        tr = transcript or Transcript(
            kind="fallacy-deliberation",
            title=", ".join(a.name for a in self.agents),
            meta={"argument": text, **self.describe()},
        )
        by_name = {a.name: a for a in self.agents}
        rng = seeded_rng(self.seed, item_id)
        said: list[Said] = []
        votes: list[list[Vote]] = []
        usage, calls, latency = Usage(), 0, 0.0
        decision: Decision | None = None
        round_no = 0
        while decision is None:
            round_no += 1
            order = speaking_order([a.name for a in self.agents], round_no)
            this_round: list[Vote] = []
            for position, name in enumerate(order):
                agent = by_name[name]
                schema = Contribution if said else OpeningContribution
                out = await acall(
                    agent.backend,
                    self.messages(agent, text, round_no, said),
                    schema,
                    options=agent.options,
                )
                usage, calls, latency = (
                    usage + out.usage,
                    calls + out.calls,
                    latency + out.latency_s,
                )
                c = out.value
                turn = Said(round_no, name)
                if c is not None:
                    turn = Said(round_no, name, c.action, c.reasoning, c.vote, c.confidence)
                said.append(turn)
                this_round.append(Vote(name, turn.vote, turn.confidence))
                payload: dict[str, Any] = {"position": position + 1, "order": order}
                if c is not None:
                    payload.update(action=c.action, vote=c.vote, confidence=c.confidence)
                else:
                    payload.update(error=out.error)
                tr.add(
                    Turn(
                        speaker=name,
                        role=c.action if c is not None else "invalid",
                        text=c.reasoning if c is not None else out.raw,
                        payload=payload,
                        round=round_no,
                        usage=out.usage,
                        latency_s=out.latency_s,
                        model=out.model,
                        backend=out.backend,
                        valid=c is not None,
                    )
                )
            votes.append(this_round)
            decision = decide(this_round, round_no, self.max_rounds, rng)
        tr.outcome.update(
            label=decision.label, resolution=decision.resolution, rounds=decision.round
        )
        return DeliberationResult(
            label=decision.label,
            resolution=decision.resolution,
            rounds=decision.round,
            votes=votes,
            transcript=tr,
            usage=usage,
            calls=calls,
            latency_s=latency,
        )

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
) -> DeliberationResult:
    """Let ``agents`` deliberate about whether ``text`` is fallacious (sync)."""
    return Deliberation(agents, max_rounds=max_rounds, seed=seed).run(text, item_id=item_id)


def render_rounds(result: DeliberationResult) -> str:
    """A compact round-by-agent grid of votes and confidences (escaped HTML)."""
    agents: list[str] = []
    for rnd in result.votes:
        for v in rnd:
            if v.agent not in agents:
                agents.append(v.agent)
    head = "".join(f"<th style='padding:4px'>{html.escape(a)}</th>" for a in agents)
    rows = []
    for i, rnd in enumerate(result.votes, start=1):
        by = {v.agent: v for v in rnd}
        order = " → ".join(html.escape(v.agent) for v in rnd)
        cells = []
        for a in agents:
            v = by.get(a)
            if v is None:
                cells.append("<td></td>")
            elif not v.valid:
                cells.append("<td style='padding:4px;color:#b00'>invalid</td>")
            else:
                cells.append(
                    f"<td style='padding:4px'>vote <b>{v.vote}</b> · conf {v.confidence:.2f}</td>"
                )
        rows.append(
            f"<tr><td style='padding:4px'>round {i}<br><small>{order}</small></td>{''.join(cells)}</tr>"
        )
    outcome = (
        f"<p>Result: <b>{html.escape(str(result.label))}</b> by "
        f"<b>{html.escape(result.resolution)}</b> after {result.rounds} round(s); "
        f"{result.calls} model calls, {result.usage.total_tokens} tokens.</p>"
    )
    return (
        "<div class='argnb-deliberation'><table style='border-collapse:collapse'>"
        f"<tr><th></th>{head}</tr>{''.join(rows)}</table>{outcome}</div>"
    )
