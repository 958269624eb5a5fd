"""What the fallacy machinery itself costs, without a model, and what concurrency buys.

python benchmarks/fallacy_protocol.py

1. Protocol overhead: the ensemble on items where the members disagree and the agents deadlock
   for three rounds (2 + 6 calls per item), on a ScriptedBackend that answers instantly -- so the
   time is prompt rendering, schema validation, transcripts and the results file.
   Target: < 5 ms per model call (a real model call takes 0.3 s to seconds).
2. Concurrency: the same benchmark against a backend with 50 ms latency per call (a remote server),
   at --concurrency 1 and 8. Target: >= 5x faster at 8.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from _common import table

ITEMS = [
    {
        "id": f"i{k}",
        "source": "s",
        "text": f"Argument {k}: everyone does it, so it is fine.",
        "label": k % 2,
    }
    for k in range(40)
]


def _script(req):
    """Members disagree (few-shot says 1, zero-shot 0); agent a always votes 1, agent b 0."""
    if "action" in str(req.schema):
        vote = 1 if req.messages[0].content.startswith("You are scripted:a,") else 0
        return {"reasoning": "I keep my view.", "action": "argue", "vote": vote, "confidence": 0.8}
    return {"label": 1 if len(req.messages) > 2 else 0}


def _run(delay: float, concurrency: int, items: list[dict] = ITEMS) -> tuple[float, dict]:
    from argnb.fallacy.baselines import Baseline
    from argnb.fallacy.benchmark import bench
    from argnb.llm import ScriptedBackend

    a = ScriptedBackend(_script, model="a", delay_s=delay)
    b = ScriptedBackend(_script, model="b", delay_s=delay)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        rep = bench(
            items,
            method="ensemble",
            members=[Baseline("zero", a), Baseline("few", b)],
            out=Path(tmp) / "r.jsonl",
            concurrency=concurrency,
            progress=False,
        )
        return time.perf_counter() - start, rep


def run() -> list[dict]:
    _run(0.0, 1, ITEMS[:2])  # warm up: one-time lazy imports (tqdm, filelock, ...) are not per call
    wall, rep = _run(0.0, 1)
    calls = rep["calls_per_item"] * rep["n"]
    per_call_ms = 1000 * wall / calls
    rows = [
        {
            "benchmark": "ensemble protocol overhead (no model)",
            "items": rep["n"],
            "calls": int(calls),
            "value": f"{per_call_ms:.2f} ms/call",
            "target": "< 5 ms/call",
            "pass": per_call_ms < 5,
        }
    ]
    slow1, _ = _run(0.05, 1)
    slow8, _ = _run(0.05, 8)
    rows.append(
        {
            "benchmark": "ensemble, 50 ms/call backend, concurrency 1 -> 8",
            "items": rep["n"],
            "calls": int(calls),
            "value": f"{slow1:.1f} s -> {slow8:.1f} s ({slow1 / slow8:.1f}x)",
            "target": ">= 5x",
            "pass": slow1 / slow8 >= 5,
        }
    )
    return rows


if __name__ == "__main__":
    print(table("fallacy protocol", run()))
