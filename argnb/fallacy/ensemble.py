"""The agreement-based ensemble: two baselines, and deliberation only where they disagree.

Both members classify every item. When they agree the shared label is the answer; when one
answer is invalid the other stands; when both are invalid the item counts as incorrect. Only the
items they disagree on go to the resolver: deliberation between agents (by default one agent per
member backend), or -- the paper's comparison -- a seeded coin flip. The coin flip is cheap, so
it is always computed as well (``label_random``): one run gives both rows of the comparison.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from argnb.agents import Agent, unique_names
from argnb.batch import run_sync
from argnb.errors import ArgnbError
from argnb.fallacy.baselines import Baseline, Prediction
from argnb.fallacy.deliberation import DEFAULT_MAX_ROUNDS, Deliberation, DeliberationResult
from argnb.fallacy.protocol import combine, random_pick, seeded_rng
from argnb.transcript import Cost, Costed, Transcript

RESOLVERS = ("deliberate", "random")


@dataclass(frozen=True)
class EnsembleResult(Costed):
    """One item through the ensemble: a read-only view of its transcript (the two members'
    answers first, then the deliberation's turns if there was one)."""

    transcript: Transcript

    @property
    def label(self) -> int | str:
        return self.transcript.outcome["label"]

    @property
    def resolution(self) -> str:
        return self.transcript.outcome["resolution"]

    @property
    def label_random(self) -> int | str:
        return self.transcript.outcome["label_random"]

    @property
    def members(self) -> tuple[Prediction, Prediction]:
        return Prediction(self.transcript, 0), Prediction(self.transcript, 1)

    @property
    def deliberation(self) -> DeliberationResult | None:
        if len(self.transcript.turns) <= 2:  # the two members' answers only
            return None
        return DeliberationResult(self.transcript, start=2)

    @property
    def cost(self) -> Cost:
        return self.transcript.cost

    @property
    def agree(self) -> bool:
        """Both members gave a valid label and it was the same."""
        a, b = self.members
        return a.valid and b.valid and a.label == b.label

    @property
    def disagree(self) -> bool:
        """Both members gave a valid label and they differ (the items that need resolving)."""
        a, b = self.members
        return a.valid and b.valid and a.label != b.label

    @property
    def rounds(self) -> int:
        d = self.deliberation
        return d.rounds if d else 0


class Ensemble:
    """Two baseline configurations plus a resolver for their disagreements."""

    def __init__(
        self,
        a: Baseline,
        b: Baseline,
        *,
        resolver: str = "deliberate",
        agents: list[Agent] | None = None,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        seed: int | str = 0,
        prompt_dir: str | None = None,
    ) -> None:
        if resolver not in RESOLVERS:
            raise ArgnbError(f"unknown resolver {resolver!r}", hint="use deliberate or random")
        self.a, self.b = a, b
        self.resolver = resolver
        self.seed = seed
        if agents is None:
            agents = unique_names(
                [Agent(f"{m.backend.name}:{m.backend.model}", m.backend) for m in (a, b)]
            )
        self.deliberation = Deliberation(
            agents, max_rounds=max_rounds, seed=seed, prompt_dir=prompt_dir
        )

    def describe(self) -> dict[str, Any]:
        return {
            "members": [self.a.describe(), self.b.describe()],
            "resolver": self.resolver,
            **self.deliberation.describe(),
        }

    async def arun(self, text: str, *, item_id: str = "") -> EnsembleResult:
        """Classify one argument: both members, then resolve a disagreement if there is one."""
        ta, tb = await asyncio.gather(self.a.aturn(text), self.b.aturn(text))
        tr = Transcript(
            kind="fallacy-ensemble",
            title=f"{self.a.name} + {self.b.name}",
            meta={"argument": text, "item_id": item_id, **self.describe()},
            turns=[ta, tb],
        )
        la, lb = ta.payload["label"], tb.payload["label"]
        first = combine(la, lb)
        if first is not None:
            label, resolution, label_random = first.label, first.resolution, first.label
        else:
            coin = random_pick(int(la), int(lb), seeded_rng(self.seed, f"{item_id}:coin"))
            label_random = coin.label
            if self.resolver == "random":
                label, resolution = coin.label, coin.resolution
            else:
                delib = await self.deliberation.arun(text, item_id=item_id, transcript=tr)
                label, resolution = delib.label, delib.resolution
        tr.outcome.update(
            label=label, resolution=resolution, label_random=label_random, members=[la, lb]
        )
        tr.outcome.setdefault("rounds", 0)
        return EnsembleResult(tr)

    def run(self, text: str, *, item_id: str = "") -> EnsembleResult:
        """Sync twin of :meth:`arun` (works inside Jupyter)."""
        return run_sync(self.arun(text, item_id=item_id))
