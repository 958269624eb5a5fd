"""Batch runner throughput against a local OpenAI-protocol server that sleeps 200 ms per request.

python benchmarks/bench_concurrency.py     (target: concurrency 8 >= 7x the throughput of 1)
"""

from __future__ import annotations

import tempfile
import time

from _common import table


def run(n: int = 64, delay: float = 0.2) -> list[dict]:
    from argnb.batch import run_batch
    from argnb.llm import Ledger, OpenAIBackend, ScriptedBackend
    from argnb.llm.testserver import ProtocolServer

    engine = ScriptedBackend(lambda req: '{"ok": true}', model="sleepy", delay_s=delay)
    rows, rate = [], {}
    with ProtocolServer(engine, models=["sleepy"]) as srv:
        backend = OpenAIBackend("sleepy", base_url=srv.url + "/v1", ledger=Ledger())

        async def one(item: dict) -> dict:
            reply = await backend.achat(f"item {item['id']}")
            return {"text": reply.text}

        for k in (1, 8):
            items = [{"id": f"{k}-{i}"} for i in range(n)]
            with tempfile.TemporaryDirectory() as tmp:
                s = time.perf_counter()
                out = run_batch(one, items, out=f"{tmp}/r.jsonl", concurrency=k, progress=False)
                dt = time.perf_counter() - s
            assert len(out) == n
            rate[k] = n / dt
            rows.append(
                {
                    "concurrency": k,
                    "items": n,
                    "seconds": f"{dt:.2f}",
                    "items_per_s": f"{rate[k]:.1f}",
                }
            )
    speedup = rate[8] / rate[1]
    for r in rows:
        r["speedup_vs_1"] = f"{rate[r['concurrency']] / rate[1]:.2f}x"
    rows[-1]["target"] = ">= 7x"
    rows[-1]["pass"] = speedup >= 7
    return rows


if __name__ == "__main__":
    print(table("batch runner concurrency (OpenAI protocol, 200 ms per request)", run()))
