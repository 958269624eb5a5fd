"""Response cache: a second run of 50 structured questions on the embedded model.

python benchmarks/bench_cache.py     (target: 0 model calls on the second run)
"""

from __future__ import annotations

import tempfile
import time

from _common import table
from pydantic import BaseModel, Field


class Answer(BaseModel):
    agree: bool
    reason: str = Field(max_length=60)


def run(n: int = 50) -> list[dict]:
    from argnb.llm import Ledger, LocalBackend, structured_call
    from argnb.llm.cache import ResponseCache

    with tempfile.TemporaryDirectory() as tmp:
        ledger = Ledger()
        backend = LocalBackend(cache=ResponseCache(f"{tmp}/c.sqlite"), ledger=ledger)
        questions = [f"Is {k} an even number? Answer briefly." for k in range(n)]
        times = []
        for _ in range(2):
            before = ledger.calls()
            s = time.perf_counter()
            answers = [structured_call(backend, q, Answer).value for q in questions]
            times.append((time.perf_counter() - s, ledger.calls() - before, answers))
    (t1, c1, a1), (t2, c2, a2) = times
    return [
        {
            "benchmark": f"cache, {n} questions (local, smollm2-135m)",
            "first_run_s": f"{t1:.2f}",
            "first_calls": c1,
            "second_run_s": f"{t2:.3f}",
            "second_calls": c2,
            "speedup": f"{t1 / t2:.0f}x",
            "same_answers": a1 == a2,
            "target": "0 calls",
            "pass": c2 == 0 and a1 == a2,
        }
    ]


if __name__ == "__main__":
    print(table("response cache", run()))
