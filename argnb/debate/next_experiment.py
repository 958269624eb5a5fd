"""Next-utterance generation over many debates: the paper's experiment 1, as a resumable batch.

:func:`next_items` cuts each debate of a debates file (read by
:func:`argnb.debate.inputs.read_debates`) after its first ``cut`` argumentative turns: those
are the history, and the side of the real turn ``cut + 1`` is the side to speak (the real turn is kept as ``reference``, for a reader
who wants to compare). :func:`anext_run` generates one utterance per item with a
:class:`~argnb.debate.generate.Debater`, checks its stance, and appends one record per item to
the results file through :func:`argnb.batch.arun_batch` -- so an interrupted run resumes, and a
run with another method, model or data is refused in the same file.

A record holds the utterance, what it cost, the judge loop's outcome, the evidence retrieved and
its whole transcript (every agent step), so :mod:`argnb.debate.evaluate` and the views can read
it later without the memory.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from argnb.debate.generate import Debater
from argnb.debate.inputs import Debate
from argnb.debate.record import as_history, next_side
from argnb.debate.stance import acheck_stance
from argnb.errors import ArgnbError
from argnb.llm.base import Backend
from argnb.transcript import Transcript


def next_items(
    debates: dict[str, Debate],
    cut: int,
    *,
    debate: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """One item per debate with more than ``cut`` argumentative turns (``debate`` picks one)."""
    if cut < 1:
        raise ArgnbError("--cut must be at least 1", hint="the history needs one turn")
    if debate and debate not in debates:
        raise ArgnbError(f"no debate {debate!r} in the file", hint="check --debate")
    chosen = [debates[debate]] if debate else list(debates.values())
    items = []
    for d in chosen:
        if len(d.turns) <= cut:
            continue
        history = d.turns[:cut]
        ref = d.turns[cut]
        items.append(
            {
                "id": f"{d.id}@{cut}",
                "debate_id": d.id,
                "topic": d.topic,
                "cut": cut,
                "history": history,
                "stance": ref["stance"] or next_side(as_history(history)),
                "reference": ref["text"],
            }
        )
        if limit and len(items) >= limit:
            break
    if not items:
        raise ArgnbError(
            f"no debate has more than {cut} argumentative turns",
            hint="choose a smaller --cut",
        )
    return items


async def anext_one(
    item: dict[str, Any], debater: Debater, *, check: Backend | None = None
) -> dict[str, Any]:
    """Generate the next utterance for one item; the results record (see the module doc)."""
    u = await debater.anext(item["topic"], item["history"], stance=item["stance"])
    tr = Transcript(kind="debate.next", title=item["topic"], meta={"item": item["id"]})
    tr.extend(u.turns)
    stance_ok = None
    if check is not None and u.text:
        verdict, turns = await acheck_stance(check, item["topic"], u.stance, u.text)
        tr.extend(turns)
        stance_ok = None if verdict is None else verdict.ok
    cost = tr.cost
    return {
        "id": item["id"],
        "debate_id": item["debate_id"],
        "topic": item["topic"],
        "cut": item["cut"],
        "stance": u.stance,
        "method": u.method,
        "history": item["history"],
        "text": u.text,
        "valid": bool(u.text),
        "accepted": u.accepted,
        "revisions": u.revisions,
        "bound_hit": u.bound_hit,
        "stance_ok": stance_ok,
        "calls": cost.calls,
        "prompt_tokens": cost.usage.prompt_tokens,
        "reused_tokens": cost.usage.reused_tokens,
        "completion_tokens": cost.usage.completion_tokens,
        "seconds": round(cost.latency_s, 3),
        "first_chunk_s": u.first_chunk_s,
        "notes": list(u.notes),
        "evidence": u.evidence(),
        "transcript": tr.model_dump(mode="json"),
    }


@dataclass
class NextSummary:
    """Per-utterance means of a run (records read from the results file)."""

    records: list[dict[str, Any]]
    config: dict[str, Any] = field(default_factory=dict)

    def _mean(self, key: str, rows: Sequence[dict[str, Any]] | None = None) -> float | None:
        vals = [r[key] for r in (self.records if rows is None else rows) if r.get(key) is not None]
        return round(statistics.fmean(vals), 3) if vals else None

    def to_dict(self) -> dict[str, Any]:
        rs = self.records
        judged = [r for r in rs if r.get("accepted") is not None]
        checked = [r for r in rs if r.get("stance_ok") is not None]
        return {
            "n": len(rs),
            "method": sorted({r.get("method", "") for r in rs}),
            "invalid": sum(1 for r in rs if not r.get("valid")),
            "calls_per_utterance": self._mean("calls"),
            "prompt_tokens_per_utterance": self._mean("prompt_tokens"),
            # of those, restored from a saved prefix (the embedded model's prefix cache)
            "reused_tokens_per_utterance": self._mean("reused_tokens"),
            "completion_tokens_per_utterance": self._mean("completion_tokens"),
            "seconds_per_utterance": self._mean("seconds"),
            "first_chunk_s": self._mean("first_chunk_s"),
            "judged": len(judged),
            "acceptance_rate": (
                round(sum(1 for r in judged if r["accepted"]) / len(judged), 3) if judged else None
            ),
            "revisions_per_utterance": self._mean("revisions", judged) if judged else None,
            "bound_hits": sum(1 for r in rs if r.get("bound_hit")),
            "stance_checked": len(checked),
            "stance_failures": sum(1 for r in checked if not r["stance_ok"]),
            "words_per_utterance": (
                round(statistics.fmean(len(r["text"].split()) for r in rs if r.get("text")), 1)
                if any(r.get("text") for r in rs)
                else None
            ),
        }

    def __str__(self) -> str:
        d = self.to_dict()

        def f(v: Any) -> str:
            return "n/a" if v is None else str(v)

        return (
            f"{d['n']} utterances ({', '.join(d['method'])}), {d['invalid']} invalid; per "
            f"utterance: {f(d['calls_per_utterance'])} calls, "
            f"{f(d['prompt_tokens_per_utterance'])} + {f(d['completion_tokens_per_utterance'])} "
            f"tokens, {f(d['seconds_per_utterance'])} s, {f(d['words_per_utterance'])} words; "
            f"judge: {d['judged']} judged, acceptance {f(d['acceptance_rate'])}, revisions "
            f"{f(d['revisions_per_utterance'])}, bound hit {d['bound_hits']}x; stance "
            f"predicate failed {d['stance_failures']} of {d['stance_checked']}"
        )


async def anext_run(
    items: list[dict[str, Any]],
    debater: Debater,
    *,
    out: str | Path | None = None,
    check: Backend | None = None,
    concurrency: int = 1,
    progress: bool = True,
) -> NextSummary:
    """Every item through :func:`anext_one`; resumable when ``out`` is given."""
    from argnb.batch import arun_batch
    from argnb.prompts import fingerprint, prompts_dir

    config = {
        "task": "debate.next",
        "debater": debater.describe(),
        "prompts": fingerprint(debater.prompt_dir or prompts_dir("argnb.debate")),
        "stance_check": check.describe() if check is not None else None,
    }

    async def one(item: dict[str, Any]) -> dict[str, Any]:
        return await anext_one(item, debater, check=check)

    records = await arun_batch(
        one,
        items,
        out=out,
        concurrency=concurrency,
        desc=f"debate next ({debater.m.name})",
        progress=progress,
        config=config,
    )
    return NextSummary(records, config)


def next_run(items: list[dict[str, Any]], debater: Debater, **kw: Any) -> NextSummary:
    """Sync twin of :func:`anext_run`."""
    from argnb.batch import run_sync

    return run_sync(anext_run(items, debater, **kw))
