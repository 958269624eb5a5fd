"""The benchmark runner: one method over a dataset, resumable, with per-source metrics.

Every finished item is appended to a JSON Lines results file (via :func:`argnb.batch.arun_batch`),
so an interrupted run continues where it stopped when started again with the same ``out``.
Each record carries the item's gold label and source, the prediction, what it cost, and the
full transcript; :func:`argnb.fallacy.metrics.summarize` turns the file into the report at any
time (``argnb fallacy report results.jsonl``).

    >>> from argnb.llm import ScriptedBackend
    >>> items = [{"id": "a", "source": "s", "text": "t", "label": 1}]
    >>> rep = bench(items, method="zero", backend=ScriptedBackend([{"label": 1}]), progress=False)
    >>> rep["accuracy"], rep["invalid_rate"]
    (1.0, 0.0)
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from argnb.batch import arun_batch, config_key, read_config, read_jsonl, run_sync
from argnb.errors import ArgnbError
from argnb.fallacy.baselines import Baseline, Prediction
from argnb.fallacy.deliberation import DEFAULT_MAX_ROUNDS, Agent, Deliberation, DeliberationResult
from argnb.fallacy.ensemble import Ensemble, EnsembleResult
from argnb.fallacy.metrics import summarize
from argnb.llm.base import Backend
from argnb.transcript import Transcript

BENCH_METHODS = ("zero", "few", "cot", "deliberate", "ensemble")
Runner = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


def _outputs(tr: Transcript) -> tuple[int, int]:
    """Model answers in a transcript and how many of them were invalid."""
    return len(tr.turns), sum(1 for t in tr.turns if not t.valid)


def _base(item: dict[str, Any], method: str, tr: Transcript) -> dict[str, Any]:
    outputs, invalid = _outputs(tr)
    cost = tr.cost
    return {
        "id": str(item["id"]),
        "source": item.get("source", ""),
        "label": int(item["label"]),
        "fallacy_type": item.get("fallacy_type"),
        "method": method,
        "calls": cost.calls,
        "prompt_tokens": cost.usage.prompt_tokens,
        "completion_tokens": cost.usage.completion_tokens,
        "latency_s": round(cost.latency_s, 3),
        "outputs": outputs,
        "invalid_outputs": invalid,
    }


def record_baseline(item: dict, p: Prediction) -> dict[str, Any]:
    rec = _base(item, p.method, p.transcript)
    rec.update(pred=p.label, correct=p.label == item["label"], transcript=p.transcript.model_dump())
    return rec


def record_deliberation(item: dict, r: DeliberationResult) -> dict[str, Any]:
    rec = _base(item, "deliberate", r.transcript)
    rec.update(
        pred=r.label,
        correct=r.label == item["label"],
        resolution=r.resolution,
        rounds=r.rounds,
        confidences=r.confidences,
        transcript=r.transcript.model_dump(),
    )
    return rec


def record_ensemble(item: dict, r: EnsembleResult) -> dict[str, Any]:
    rec = _base(item, "ensemble", r.transcript)
    rec.update(
        pred=r.label,
        correct=r.label == item["label"],
        pred_random=r.label_random,
        members=[{"name": m.name, "method": m.method, "pred": m.label} for m in r.members],
        agree=r.agree,
        disagree=r.disagree,
        resolution=r.resolution,
        rounds=r.rounds,
        confidences=r.deliberation.confidences if r.deliberation else [],
        transcript=r.transcript.model_dump(),
    )
    return rec


def make_runner(
    method: str,
    *,
    backend: Backend | None = None,
    members: Sequence[Baseline] | None = None,
    agents: Sequence[Agent] | None = None,
    resolver: str = "deliberate",
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    seed: int | str = 0,
    examples: Any = None,
    structured: bool = True,
) -> tuple[Runner, dict[str, Any]]:
    """The per-item coroutine for ``method`` and the configuration it records.

    ``ensemble`` uses ``members`` (default: zero-shot and few-shot on ``backend``) and, for the
    disagreements, ``agents`` (default: one agent per member backend). ``deliberate`` uses
    ``agents`` (default: two agents on ``backend``).
    """
    if method not in BENCH_METHODS:
        raise ArgnbError(
            f"unknown method {method!r}", hint=f"use one of {', '.join(BENCH_METHODS)}"
        )
    # an ensemble's agents default to one per member backend, a deliberation needs only agents
    supplied = members if method == "ensemble" else agents if method == "deliberate" else None
    if backend is None and not supplied:
        raise ArgnbError(
            "the benchmark needs a backend",
            hint="pass backend=argnb.connect(...), or members (ensemble) or agents (deliberate)",
        )
    if method in ("zero", "few", "cot"):
        cfg = Baseline(method, backend, examples, structured)

        async def run_baseline(item: dict) -> dict:
            return record_baseline(item, await cfg.arun(item["text"]))

        return run_baseline, {"method": method, **cfg.describe()}
    if method == "deliberate":
        agents = list(agents or [Agent("agent A", backend), Agent("agent B", backend)])
        delib = Deliberation(agents, max_rounds=max_rounds, seed=seed)

        async def run_deliberation(item: dict) -> dict:
            res = await delib.arun(item["text"], item_id=str(item["id"]))
            return record_deliberation(item, res)

        return run_deliberation, {"method": method, **delib.describe()}
    a, b = members or (
        Baseline("zero", backend, examples, structured),
        Baseline("few", backend, examples, structured),
    )
    ens = Ensemble(
        a,
        b,
        resolver=resolver,
        agents=list(agents) if agents else None,
        max_rounds=max_rounds,
        seed=seed,
    )

    async def run_ensemble(item: dict) -> dict:
        return record_ensemble(item, await ens.arun(item["text"], item_id=str(item["id"])))

    return run_ensemble, {"method": method, **ens.describe()}


def prompts_fingerprint(prompt_dir: str | Path | None = None) -> str:
    """A hash of everything the models are shown besides the items: the prompt templates, the
    default few-shot examples and the answer schemas. Part of a run's configuration, so a results
    file is never resumed with different prompts."""
    from argnb.fallacy.baselines import TEXT_RULE
    from argnb.fallacy.prompts import PROMPTS_DIR
    from argnb.fallacy.schemas import Contribution, CotVerdict, OpeningContribution, Verdict

    h = hashlib.sha256(TEXT_RULE.encode())
    for p in sorted(Path(prompt_dir or PROMPTS_DIR).iterdir()):
        if p.suffix in (".md", ".json"):
            h.update(p.name.encode() + p.read_bytes())
    for schema in (Verdict, CotVerdict, Contribution, OpeningContribution):
        h.update(json.dumps(schema.model_json_schema(), sort_keys=True).encode())
    return h.hexdigest()[:12]


async def abench(
    items: Sequence[dict[str, Any]],
    *,
    method: str = "zero",
    out: str | Path | None = None,
    limit: int | None = None,
    concurrency: int = 1,
    progress: bool = True,
    **kw: Any,
) -> dict[str, Any]:
    """Run ``method`` over ``items`` (the first ``limit``); return the report of all results."""
    runner, config = make_runner(method, **kw)
    config["prompts"] = prompts_fingerprint()
    todo = list(items)[:limit] if limit else list(items)
    if not todo:
        raise ArgnbError("no items to run", hint="check --data (the file is empty?) and --limit")
    start = time.perf_counter()
    records = await arun_batch(
        runner,
        todo,
        out=out,
        key="id",
        concurrency=concurrency,
        desc=f"fallacy {method}",
        progress=progress,
        config=config,
    )
    rep = summarize(records)
    kept = read_config(out) if out is not None else None
    rep["config"] = kept or {"key": config_key(config), **config}
    rep["wall_s_this_run"] = round(time.perf_counter() - start, 1)
    if out is not None:
        rep["out"] = str(out)
    return rep


def bench(items: Sequence[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    """Sync twin of :func:`abench` (works in scripts and notebooks)."""
    return run_sync(abench(items, **kw))


def report(path: str | Path) -> dict[str, Any]:
    """Recompute the report from an existing results file (with its configuration, if kept)."""
    from argnb.datafiles import existing_file
    from argnb.errors import DataError

    records = read_jsonl(existing_file(path, "results file"))
    if not records:
        raise ArgnbError(f"no results in {path}", hint="run `argnb fallacy bench ... --out` first")
    for n, rec in enumerate(records, start=1):
        missing = [k for k in ("id", "label", "pred", "method") if k not in rec]
        if missing:
            raise DataError(
                f"{path}: record {n} is not a fallacy result (no {', '.join(missing)})",
                hint="give a file written by `argnb fallacy bench --out`",
            )
    rep = summarize(records)
    cfg = read_config(path)
    if cfg is not None:
        rep["config"] = cfg
    return rep


def results_frame(path_or_records: str | Path | Sequence[dict]) -> Any:
    """The results as a DataFrame (one row per item, transcripts left out)."""
    import pandas as pd

    records = (
        read_jsonl(path_or_records)
        if isinstance(path_or_records, str | Path)
        else list(path_or_records)
    )
    rows = []
    for r in records:
        row = {k: v for k, v in r.items() if k not in ("transcript", "members", "confidences")}
        for i, m in enumerate(r.get("members") or []):
            row[f"member{i + 1}"] = m["pred"]
        rows.append(row)
    return pd.DataFrame(rows)


def transcript_of(record: dict[str, Any]) -> Transcript:
    """The transcript stored in a results record."""
    return Transcript.model_validate(record["transcript"])
