"""A class on one model server: N learners, each with their own hub token, send structured calls
through the class gateway to llama.cpp's server (the embedded SmolLM2-135M as the class model).

Three runs, each with every learner making ``--calls`` calls one after another, all learners at once:

* **direct**: the same calls straight to the model server (no hub, no gateway);
* **gateway**: through a real JupyterHub's gateway service (tokens checked, usage recorded,
  the fair queue in front of the server's one slot);
* **greedy**: as *gateway*, while one more learner keeps 10 requests in flight all the time.

Reported: errors, p50/p95 latency of a call, ``overhead`` (the gateway run's wall time over the
direct run's), ``fairness`` (the slowest learner's total time over the fastest's, gateway run) and
``greedy_p95_ratio`` (the others' p95 with the greedy learner over without).

    python benchmarks/bench_class.py --learners 30 --calls 3 [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pydantic import Field

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, table

from argnb.llm.answer import Answer

TOPICS = ["homework", "school uniforms", "phones in class", "four-day weeks", "exams", "cars",
          "meat", "voting at 16", "zoos", "space travel", "tourism", "plastic"]  # fmt: skip


class Take(Answer):
    """One learner's question to the class model: a stance and a reason."""

    agree: bool
    reason: str = Field(max_length=80)


def prompt(learner: int, call: int) -> str:
    topic = TOPICS[(learner + call) % len(TOPICS)]
    return f"Learner {learner}, question {call}: should schools change their rules on {topic}? One reason."


def _backend(url: str, key: str, model: str):  # an OpenAI-compatible backend, no cache
    from argnb.llm.openai import OpenAIBackend
    from argnb.llm.types import Options

    b = OpenAIBackend(model, base_url=url, api_key=key, cache=None, max_retries=0, timeout=600,
                      options=Options(max_tokens=40, temperature=0.0))  # fmt: skip
    b.mode = "json_object_schema"  # llama.cpp's server refuses json_schema: skip the step-down
    return b


async def learner_run(b, learner: int, calls: int, out: list, errors: list) -> float:
    from argnb.llm.structured import astructured_call

    start = time.perf_counter()
    for call in range(calls):
        t = time.perf_counter()
        try:
            await astructured_call(b, prompt(learner, call), Take)
            out.append(time.perf_counter() - t)
        except Exception as exc:  # counted, and the learner goes on as a learner would
            errors.append(f"{type(exc).__name__}: {exc}"[:200])
    return time.perf_counter() - start


async def run_class(backends: list, calls: int, greedy=None) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    stop = asyncio.Event()

    async def greedy_loop(slot: int) -> None:
        from argnb.llm.structured import astructured_call

        n = 0
        while not stop.is_set():
            try:
                await astructured_call(greedy, prompt(1000 + slot, n), Take)
            except Exception as exc:
                errors.append(f"greedy {type(exc).__name__}")
            n += 1

    hogs = [asyncio.create_task(greedy_loop(i)) for i in range(10)] if greedy else []
    if hogs:
        await asyncio.sleep(1.0)  # the greedy learner's ten are queued before the class starts
    t0 = time.perf_counter()
    totals = await asyncio.gather(
        *(learner_run(b, i, calls, latencies, errors) for i, b in enumerate(backends))
    )
    wall = time.perf_counter() - t0
    stop.set()
    await asyncio.gather(*hogs)
    q = statistics.quantiles(latencies, n=20) if len(latencies) > 1 else [0.0] * 19
    return {
        "calls": len(latencies),
        "errors": len(errors),
        "p50_s": round(statistics.median(latencies), 2) if latencies else None,
        "p95_s": round(q[18], 2),
        "wall_s": round(wall, 1),
        "fairness": round(max(totals) / min(totals), 2),
        "first_error": errors[0] if errors else "",
    }


def measure(learners: int, calls: int) -> dict:
    from argnb.classroom.local import Hub, ModelServer

    work = Path(tempfile.mkdtemp(prefix="argnb-bench-class-"))
    with ModelServer(work) as model:
        direct = [_backend(model.url, model.key, model.alias) for _ in range(learners)]
        # a first call loads the model's weights into memory: not part of any run
        asyncio.run(run_class(direct[:1], 1))
        d = asyncio.run(run_class(direct, calls))
        limits = {"tokens_per_day": 10_000_000, "concurrent": 2, "waiting": 32}
        with Hub(work, model_url=model.url, model=model.alias, limits=limits, slots=2,
                 authenticator="dummy", spawn=False, model_key_file=model.key_file()) as hub:  # fmt: skip
            names = [f"learner{i:03d}" for i in range(learners + 1)]
            for name in names:
                hub.add_user(name)
            keys = [hub.token(name) for name in names]
            via = [_backend(hub.gateway, k, model.alias) for k in keys[:learners]]
            g = asyncio.run(run_class(via, calls))
            greedy = _backend(hub.gateway, keys[-1], model.alias)
            gg = asyncio.run(run_class(via, calls, greedy=greedy))
    return {"direct": d, "gateway": g, "greedy": gg}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--learners", type=int, default=30)
    ap.add_argument("--calls", type=int, default=5, help="calls per learner, one after another")
    ap.add_argument("--json", action="store_true", help="end with one JSON line of the results")
    args = ap.parse_args()
    r = measure(args.learners, args.calls)
    rows = [{"run": k, **v} for k, v in r.items()]
    print(table(f"class gateway, {args.learners} learners x {args.calls} structured calls "
                "(llama.cpp server, SmolLM2-135M; gateway slots 2)", rows))  # fmt: skip
    summary = {
        "learners": args.learners,
        "errors": r["direct"]["errors"] + r["gateway"]["errors"] + r["greedy"]["errors"],
        "p50_s": r["gateway"]["p50_s"],
        "p95_s": r["gateway"]["p95_s"],
        "overhead": round(r["gateway"]["wall_s"] / r["direct"]["wall_s"], 3),
        "fairness": r["gateway"]["fairness"],
        "greedy_p95_ratio": round(r["greedy"]["p95_s"] / r["gateway"]["p95_s"], 3),
        "machine": machine(),
    }
    print(f"overhead {summary['overhead']}x, fairness {summary['fairness']}x, "
          f"greedy p95 ratio {summary['greedy_p95_ratio']}x")  # fmt: skip
    if args.json:
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
