"""The agreement-based ensemble: two baselines, and deliberation only where they disagree.

Both members classify every item. When they agree the shared label is the answer; when one
answer is invalid the other stands; when both are invalid the item counts as incorrect. Only the
items they disagree on go to the resolver: deliberation between agents (by default one agent per
member backend), or -- the paper's comparison -- a seeded coin flip. The coin flip is cheap, so
it is always computed as well (``label_random``): one run gives both rows of the comparison.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from argnb.batch import run_sync
from argnb.errors import ArgnbError
from argnb.fallacy.baselines import Baseline, Prediction, baseline_turn
from argnb.fallacy.deliberation import (
    DEFAULT_MAX_ROUNDS,
    Agent,
    Deliberation,
    DeliberationResult,
    unique_names,
)
from argnb.fallacy.protocol import combine, random_pick, seeded_rng
from argnb.llm.base import Usage
from argnb.transcript import Transcript

RESOLVERS = ("deliberate", "random")


@dataclass
class EnsembleResult:
    """One item through the ensemble."""

    label: int | str
    resolution: str
    members: tuple[Prediction, Prediction]
    label_random: int | str
    deliberation: DeliberationResult | None = None
    transcript: Transcript | None = None
    usage: Usage = field(default_factory=Usage)
    calls: int = 0
    latency_s: float = 0.0

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
        return self.deliberation.rounds if self.deliberation else 0


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
        pa, pb = await asyncio.gather(self.a.arun(text), self.b.arun(text))
        tr = Transcript(
            kind="fallacy-ensemble",
            title=f"{self.a.name} + {self.b.name}",
            meta={"argument": text, "item_id": item_id, **self.describe()},
        )
        tr.add(baseline_turn(pa))
        tr.add(baseline_turn(pb))
        usage, calls, latency = (
            pa.usage + pb.usage,
            pa.calls + pb.calls,
            pa.latency_s + pb.latency_s,
        )
        first = combine(pa.label, pb.label)
        delib: DeliberationResult | None = None
        if first is not None:
            label, resolution, label_random = first.label, first.resolution, first.label
        else:
            coin = random_pick(
                int(pa.label), int(pb.label), seeded_rng(self.seed, f"{item_id}:coin")
            )
            label_random = coin.label
            if self.resolver == "random":
                label, resolution = coin.label, coin.resolution
            else:
                delib = await self.deliberation.arun(text, item_id=item_id, transcript=tr)
                label, resolution = delib.label, delib.resolution
                usage, calls = usage + delib.usage, calls + delib.calls
                latency += delib.latency_s
        tr.outcome.update(
            label=label,
            resolution=resolution,
            label_random=label_random,
            members=[pa.label, pb.label],
            rounds=delib.rounds if delib else 0,
        )
        return EnsembleResult(
            label=label,
            resolution=resolution,
            members=(pa, pb),
            label_random=label_random,
            deliberation=delib,
            transcript=tr,
            usage=usage,
            calls=calls,
            latency_s=latency,
        )

    def run(self, text: str, *, item_id: str = "") -> EnsembleResult:
        """Sync twin of :meth:`arun` (works inside Jupyter)."""
        return run_sync(self.arun(text, item_id=item_id))
