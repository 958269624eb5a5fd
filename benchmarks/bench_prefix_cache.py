"""Prefix reuse in the embedded model: the fallacy ensemble with the prefix cache off vs on.

python benchmarks/bench_prefix_cache.py [N]    (N items, default 60; target: >= 2x, same predictions)

Items: a source-stratified sample of ``../shared/data/fallacy-bench/dev.jsonl`` (or the 12 items
of ``assets/fallacy/arguments.jsonl`` when that file is absent). Method: ``ensemble`` (zero-shot +
few-shot, deliberation where they disagree) on the local backend (SmolLM2-135M, llama.cpp, one
model shared by both runs, no response cache). The items run in blocks of 10, alternating which
setting goes first, so a change in machine load hits both alike. Reported: wall and CPU seconds
per item (CPU time is what a busy shared machine distorts least), the ratio, prompt tokens
restored vs evaluated, and whether every prediction (and every answer text) is identical.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from _common import table

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "fallacy-bench" / "dev.jsonl"
FALLBACK = ROOT / "assets" / "fallacy" / "arguments.jsonl"


def _items(n: int) -> tuple[list[dict], str]:
    from argnb.fallacy.data import load_jsonl, sample

    path = SHARED if SHARED.exists() else FALLBACK
    items = load_jsonl(path)
    return (sample(items, n, seed=0) if len(items) > n else items), path.name


def _run(backend, items: list[dict]) -> tuple[float, float, list[dict]]:
    from argnb.fallacy.benchmark import bench

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.jsonl"
        wall, cpu = time.perf_counter(), time.process_time()
        bench(items, method="ensemble", backend=backend, out=out, concurrency=1, progress=False)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        records = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    return wall, cpu, records


def _answers(record: dict) -> list[tuple]:
    """What the model said in each turn (timings left out: they always differ)."""
    turns = record.get("transcript", {}).get("turns", [])
    return [(t.get("text"), json.dumps(t.get("payload"), sort_keys=True)) for t in turns]


def run(n: int = 60) -> list[dict]:
    from argnb.llm import Ledger, LocalBackend

    items, source = _items(n)
    backends = {
        "off": LocalBackend(prefix_cache=False, ledger=Ledger()),
        "on": LocalBackend(prefix_cache=True, ledger=Ledger()),
    }
    store = backends["on"].llm.prefix_store
    store.clear()
    restored0, evaluated0 = store.reused_tokens, store.evaluated_tokens  # earlier use counts too
    wall = {"off": 0.0, "on": 0.0}
    cpu = {"off": 0.0, "on": 0.0}
    records: dict[str, list[dict]] = {"off": [], "on": []}
    for k in range(0, len(items), 10):
        block = items[k : k + 10]
        for mode in ("off", "on") if (k // 10) % 2 == 0 else ("on", "off"):
            w, c, recs = _run(backends[mode], block)
            wall[mode] += w
            cpu[mode] += c
            records[mode] += recs
    by_id = {m: {r["id"]: r for r in records[m]} for m in records}
    same_pred = all(by_id["off"][i]["pred"] == by_id["on"][i]["pred"] for i in by_id["off"])
    same_text = all(_answers(by_id["off"][i]) == _answers(by_id["on"][i]) for i in by_id["off"])
    m = len(items)
    calls = {mode: sum(r.get("calls", 0) for r in records[mode]) for mode in records}
    ratio = wall["off"] / wall["on"]
    rows = []
    for mode in ("off", "on"):
        on = mode == "on"
        rows.append(
            {
                "prefix cache": mode,
                "items": m,
                "calls": calls[mode],
                "wall_s_per_item": f"{wall[mode] / m:.2f}",
                "cpu_s_per_item": f"{cpu[mode] / m:.2f}",
                "speedup": f"{ratio:.2f}x wall, {cpu['off'] / cpu['on']:.2f}x cpu" if on else "",
                "prompt tokens restored/evaluated": (
                    f"{store.reused_tokens - restored0}/{store.evaluated_tokens - evaluated0}"
                    if on
                    else ""
                ),
                "same predictions": same_pred if on else "",
                "same answer texts": same_text if on else "",
                "target": ">= 2x, identical" if on else source,
                "pass": (ratio >= 2 and same_pred and same_text) if on else "",
            }
        )
    return rows


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    print(table("prefix cache, fallacy ensemble (local, smollm2-135m)", run(count)))
