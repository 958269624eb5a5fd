"""Overhead of argnb's structured call on the embedded model vs the same llama.cpp call made directly.

python benchmarks/bench_overhead.py     (target: median ratio <= 1.05)
"""

from __future__ import annotations

import time

from _common import median, table
from pydantic import BaseModel, Field


class Vote(BaseModel):
    fallacious: bool
    confidence: float = Field(ge=0, le=1)
    reason: str = Field(max_length=80)


PROMPT = "Is this argument fallacious? 'Everyone I know likes it, so it must be good.'"


def run(n: int = 15) -> list[dict]:
    from argnb.llm import Ledger, LocalBackend, structured_call
    from argnb.llm.structured import schema_of, to_messages, with_instructions

    # prefix reuse off: the direct call evaluates the whole prompt, so must ours (the reuse is
    # measured by bench_prefix_cache.py; here only argnb's own cost counts)
    backend = LocalBackend(ledger=Ledger(), prefix_cache=False)
    llm = backend.llm
    msgs = [m.model_dump() for m in with_instructions(to_messages(PROMPT), schema_of(Vote))]
    fmt = {"type": "json_object", "schema": schema_of(Vote)}

    def direct() -> str:
        llm.reset()
        out = llm.create_chat_completion(
            messages=msgs, response_format=fmt, temperature=0.0, seed=42, max_tokens=512
        )
        return out["choices"][0]["message"]["content"]

    def ours() -> str:
        return structured_call(backend, PROMPT, Vote).raw

    assert direct() == ours(), "both paths must produce the same text for a fair comparison"
    t_direct, t_ours = [], []
    for _ in range(n):  # interleaved, so drift affects both equally
        s = time.perf_counter()
        direct()
        t_direct.append(time.perf_counter() - s)
        s = time.perf_counter()
        ours()
        t_ours.append(time.perf_counter() - s)
    ratio = median(t_ours) / median(t_direct)
    return [
        {
            "benchmark": "ask() overhead (local, smollm2-135m)",
            "runs": n,
            "direct_median_s": f"{median(t_direct):.3f}",
            "argnb_median_s": f"{median(t_ours):.3f}",
            "ratio": f"{ratio:.3f}",
            "target": "<= 1.05",
            "pass": ratio <= 1.05,
        }
    ]


if __name__ == "__main__":
    print(table("structured-call overhead", run()))
