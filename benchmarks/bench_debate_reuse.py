"""One ``rdebater`` turn on real debates, the embedded model's prefix cache off vs on.

python benchmarks/bench_debate_reuse.py [N_DEBATES] [CUT] [FIRST]    (default 10 debates, cut 4)

FIRST (default 0) skips the first debates: a run stopped early is finished by measuring the
rest (each debate is measured on its own, so two runs' step logs add up).

Items: the first N IQ2 debates of ``../shared/data/iq2-debates`` cut after CUT argumentative
turns; the next turn is generated for the side that really spoke next, by ``rdebater`` (logic
agent, keyword agent, BM25 retrieval over the IBM speeches + IQ2 memory of
``bench_debate_next``, draft, summary, judge, revisions; default word budget and bound) on
SmolLM2-135M (local backend, llama.cpp, one model shared by both settings, no response cache).
Each debate runs once per setting with a fresh debater, alternating which setting goes first, so
a change in machine load hits both alike. Reported: wall seconds per turn, the time to the first
streamed chunk, prompt tokens evaluated vs restored (``Usage.reused_tokens`` summed over the
turn's calls), and whether every turn of every run (texts and payloads) is identical. The
per-role table (:func:`roles`) is what each step costs with the prefix cache on.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict

from _common import table
from bench_debate_common import CACHE, DATA, have_data, local, skipped


def _turn_key(t) -> tuple:
    """What a turn said (timings and token counts left out: they differ between runs)."""
    return (t.speaker, t.role, t.text, json.dumps(t.payload.model_dump(), sort_keys=True))


def _items(n: int, cut: int) -> list[dict]:
    from argnb.debate.inputs import read_debates
    from argnb.debate.next_experiment import next_items

    return next_items(read_debates(DATA / "iq2-debates" / "items.jsonl"), cut, limit=n)


def measure(n: int = 10, cut: int = 4, log=None, first: int = 0) -> dict:
    """Run every item in both settings; the raw numbers :func:`run` and :func:`roles` report
    (``log``: an open file that gets one JSON line per step as it is measured)."""
    from bench_debate_next import _memory

    from argnb.debate.generate import Debater
    from argnb.debate.retrieve import Retriever
    from argnb.llm import Ledger, LocalBackend

    backends = {
        "off": LocalBackend(prefix_cache=False, ledger=Ledger()),
        "on": LocalBackend(prefix_cache=True, ledger=Ledger()),
    }
    backends["on"].llm.prefix_store.clear()
    retriever = Retriever(_memory(), None, method="bm25", k=3)
    items = _items(n, cut)[first:]
    out: dict = {m: {"wall": 0.0, "first": [], "turns": [], "keys": []} for m in backends}
    for i, item in enumerate(items, start=first):
        for mode in ("off", "on") if i % 2 == 0 else ("on", "off"):
            d = Debater(backends[mode], "rdebater", retriever, k=3)
            t0 = time.perf_counter()
            u = d.next(item["topic"], item["history"], stance=item["stance"])
            u_wall = time.perf_counter() - t0
            out[mode]["wall"] += u_wall
            out[mode]["first"].append(u.first_chunk_s)
            out[mode]["turns"].append(u.turns)
            out[mode]["keys"].append([_turn_key(t) for t in u.turns])
            usage = sum((t.usage for t in u.turns), start=type(u.turns[0].usage)())
            if log is not None:  # every step's cost, kept as it is measured
                for t in u.turns:
                    row = {"debate": i, "mode": mode, "role": t.role, "calls": t.calls}
                    row |= t.usage.model_dump() | {"seconds": t.latency_s, "wall": u_wall}
                    log.write(json.dumps(row) + "\n")
                log.flush()
            print(  # progress, so a run stopped early still says what it measured
                f"debate {i + 1}/{n} {mode}: {time.perf_counter() - t0:.1f} s, "
                f"{usage.evaluated_tokens} evaluated + {usage.reused_tokens} restored",
                file=sys.stderr,
                flush=True,
            )
        same = out["off"]["keys"][-1] == out["on"]["keys"][-1]
        if log is not None:
            log.write(json.dumps({"debate": i, "identical": same}) + "\n")
        print(f"debate {i + 1}/{n} identical: {same}", file=sys.stderr, flush=True)
    out["items"] = len(items)
    return out


def run(n: int = 10, cut: int = 4, measured: dict | None = None) -> list[dict]:
    if not have_data():
        return skipped("debate prefix reuse", "../shared/data is not present")
    if local() is None:
        return skipped("debate prefix reuse", "the embedded model is not installed")
    r = measured or measure(n, cut)
    m = r["items"]
    same = r["off"]["keys"] == r["on"]["keys"]
    ratio = r["off"]["wall"] / r["on"]["wall"] if r["on"]["wall"] else 0.0
    rows = []
    for mode in ("off", "on"):
        turns = [t for ts in r[mode]["turns"] for t in ts]
        usage = sum((t.usage for t in turns), start=type(turns[0].usage)())
        firsts = [f for f in r[mode]["first"] if f is not None]
        rows.append(
            {
                "prefix cache": mode,
                "backend": "local:smollm2-135m (llama.cpp)",
                "turns": m,
                "calls/turn": round(sum(t.calls for t in turns) / m, 1),
                "s/turn": round(r[mode]["wall"] / m, 1),
                "first chunk s": round(sum(firsts) / len(firsts), 1) if firsts else "",
                "prompt tok/turn": round(usage.prompt_tokens / m),
                "evaluated/turn": round(usage.evaluated_tokens / m),
                "restored/turn": round(usage.reused_tokens / m),
                "compl tok/turn": round(usage.completion_tokens / m),
                "speedup": f"{ratio:.2f}x" if mode == "on" else "",
                "identical texts": same if mode == "on" else "",
                "target": ">= 2x, identical" if mode == "on" else "",
            }
        )
    return rows


def roles(measured: dict, mode: str = "on") -> list[dict]:
    """Per agent role: calls, prompt tokens (evaluated / restored) and completion tokens a turn."""
    m = measured["items"]
    acc: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for ts in measured[mode]["turns"]:
        for t in ts:
            a = acc[t.role]
            a[0] += t.calls
            a[1] += t.usage.prompt_tokens
            a[2] += t.usage.reused_tokens
            a[3] += t.usage.completion_tokens
    return [
        {
            "role": role,
            "calls/turn": round(c / m, 1),
            "prompt tok/turn": round(p / m),
            "restored/turn": round(r / m),
            "compl tok/turn": round(o / m),
        }
        for role, (c, p, r, o) in acc.items()
        if c
    ]


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    cut = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    if not have_data() or local() is None:
        print(table("debate prefix reuse", run(count, cut)))
        sys.exit(0)
    CACHE.mkdir(parents=True, exist_ok=True)
    name = f"debate-reuse-{count}x{cut}" + (f"-from{first}" if first else "")
    with open(CACHE / f"{name}.steps.jsonl", "w", encoding="utf-8") as log:
        data = measure(count, cut, log, first)
    title = f"rdebater next turn, prefix cache off vs on (IQ2 debates {first + 1}-{count})"
    print(table(title, run(measured=data)))
    print(table("per role, prefix cache off", roles(data, "off")))
    print(table("per role, prefix cache on", roles(data, "on")))
