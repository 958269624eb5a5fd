"""The annotation agents: scheme annotation and scoring (the keyword agent is retrieval's first
step: :func:`argnb.debate.retrieve.akeywords`).

* **Scheme annotation** (multi-label): which schemes does a passage use, with a short reason
  each. The answer schema enumerates the scheme ids, so an unknown scheme cannot come back.
* **Scoring** (few-shot, four exemplars we wrote): one label -- poor / general / good /
  excellent -- per used scheme, judged on acceptable premises, the fit of the pattern and the
  scheme's critical questions. Its answer schema has one required field per used scheme, so
  every used scheme gets exactly one label, with any model.

Every answer is a transcript turn (typed payloads from :mod:`argnb.debate.payloads`), so what an
annotation cost is summed from its turns. :func:`annotate_store` runs the agents over a memory
(resumable: the store is the resume state; each record is written when it is finished) and
:func:`annotate_file` over a JSON Lines file (resumable through the batch runner), after
:func:`plan` has said what the run will cost.

    >>> from argnb.llm import ScriptedBackend
    >>> b = ScriptedBackend([
    ...     {"schemes": [{"scheme": "analogy", "reason": "compares drones with cars"}]},
    ...     {"analogy": {"reason": "similarity asserted, not shown", "label": "general"}},
    ... ])
    >>> r = Annotator(b).annotate("Drones are like cars, so license them.", topic="Drones")
    >>> r.labels, r.valid, r.cost.calls
    ({'analogy': 'general'}, True, 2)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from argnb.agents import Agent
from argnb.batch import arun_batch, run_sync
from argnb.debate.payloads import SchemeAnnotation, SchemeScore, SchemeScores, SchemeUse
from argnb.debate.schemas import annotation_schema, scoring_schema
from argnb.debate.schemes import LABELS, SchemeSet, load_schemes
from argnb.errors import ArgnbError
from argnb.llm.base import Backend, Options
from argnb.prompts import Prompt, load
from argnb.prompts import fingerprint as prompts_fingerprint
from argnb.prompts import prompts_dir as _prompts_dir
from argnb.transcript import Cost, Turn

PACKAGE = "argnb.debate"
#: the most words of a passage sent to an annotator (records are bounded by the builders)
TEXT_WORDS = 400
#: above this many estimated tokens, a run needs an explicit yes (``--yes``)
CONFIRM_TOKENS = 100_000


# -- results -----------------------------------------------------------------------------
@dataclass(frozen=True)
class AnnotationResult:
    """One passage annotated: labels per used scheme (None = unscored), reasons, turns."""

    record_id: str
    labels: dict[str, str | None]
    reasons: dict[str, str]
    score_reasons: dict[str, str]
    turns: tuple[Turn, ...]
    error: str = ""

    @property
    def valid(self) -> bool:
        """Both agents answered validly (a passage without schemes needs no scoring)."""
        return not self.error

    @property
    def cost(self) -> Cost:
        return Cost.of(self.turns)

    @property
    def schemes(self) -> list[str]:
        return list(self.labels)


def _clip(text: str, words: int = TEXT_WORDS) -> str:
    w = text.split()
    return " ".join(w[:words]) + (" ..." if len(w) > words else "")


@lru_cache(maxsize=8)
def _exemplars(folder: str) -> tuple[dict[str, str], ...]:
    p = Path(folder) / "score_exemplars.json"
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ArgnbError(f"cannot read the scoring exemplars at {p}: {exc}") from None
    return tuple(data)


@dataclass
class Annotator:
    """The scheme annotation agent and the scoring agent on one backend.

    ``score=False`` runs the scheme annotation only (labels stay None). ``prompt_dir`` points at
    an adapted copy of ``argnb/debate/prompts``; ``schemes`` at another scheme set.
    """

    backend: Backend
    schemes: SchemeSet | None = None
    options: Options | None = None
    score: bool = True
    prompt_dir: str | None = None
    _templates: dict[str, Prompt] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.schemes is None:
            self.schemes = load_schemes()

    @property
    def name(self) -> str:
        return f"{self.backend.name}:{self.backend.model}"

    def describe(self) -> dict[str, Any]:
        out = {**self.backend.describe(), "score": self.score, "schemes": list(self.ids)}
        if self.prompt_dir:
            out["prompt_dir"] = str(self.prompt_dir)
        return out

    @property
    def ids(self) -> tuple[str, ...]:
        assert self.schemes is not None
        return self.schemes.ids

    def template(self, name: str) -> Prompt:
        if name not in self._templates:
            self._templates[name] = load(PACKAGE, name, self.prompt_dir, sectioned=True)
        return self._templates[name]

    # -- prompts ---------------------------------------------------------------------
    def annotation_prompt(self, text: str, topic: str = "", stance: str = "") -> tuple[str, str]:
        """(system, user) of the scheme annotation agent."""
        assert self.schemes is not None
        t = self.template("annotate")
        system = t.render("system", catalogue=self.schemes.catalogue(), ids=", ".join(self.ids))
        user = t.render(
            "user", topic=topic or "(not given)", stance=_side(stance), text=_clip(text)
        )
        return system, user

    def scoring_prompt(
        self, text: str, schemes: Sequence[str], topic: str = "", stance: str = ""
    ) -> tuple[str, str]:
        """(system, user) of the scoring agent for the given used schemes."""
        assert self.schemes is not None
        t = self.template("score")
        folder = self.prompt_dir or str(_prompts_dir(PACKAGE))
        shots = "\n\n".join(
            f"Passage: {e['text']}\nScheme: {e['scheme']}\nReason: {e['why']}\nLabel: {e['label']}"
            for e in _exemplars(folder)
        )
        used = self.schemes.subset(schemes)
        block = "\n".join(f"- {s.id} ({s.name}):\n{s.pattern()}\n{s.questions()}" for s in used)
        system = t.render("system", exemplars=shots)
        user = t.render(
            "user",
            topic=topic or "(not given)",
            stance=_side(stance),
            text=_clip(text),
            schemes=block,
        )
        return system, user

    # -- the two agents --------------------------------------------------------------
    async def aschemes(
        self, text: str, topic: str = "", stance: str = "", record_id: str = ""
    ) -> tuple[list[SchemeUse] | None, tuple[Turn, ...], str]:
        """The scheme annotation agent: (schemes or None when invalid, turns, error)."""
        system, user = self.annotation_prompt(text, topic, stance)
        agent = Agent("scheme annotator", self.backend, self.options, system=system)

        def payload(v: Any) -> SchemeAnnotation:
            return SchemeAnnotation(record_id=record_id, schemes=_dedupe(v))

        resp = await agent.arespond(
            user,
            annotation_schema(self.ids),
            role="scheme annotation",
            payload=payload,
            text=lambda v: ", ".join(u.scheme for u in _dedupe(v)) or "(no scheme)",
        )
        if not resp.valid:
            return None, resp.turns, f"scheme annotation: {resp.error}"
        return _dedupe(resp.value), resp.turns, ""

    async def ascores(
        self,
        text: str,
        schemes: Sequence[str],
        topic: str = "",
        stance: str = "",
        record_id: str = "",
    ) -> tuple[dict[str, SchemeScore] | None, tuple[Turn, ...], str]:
        """The scoring agent: ({scheme: score} or None when invalid, turns, error)."""
        ids = tuple(s for s in self.ids if s in set(schemes))
        system, user = self.scoring_prompt(text, ids, topic, stance)
        agent = Agent("scoring agent", self.backend, self.options, system=system)

        def scores(v: Any) -> list[SchemeScore]:
            return [
                SchemeScore(scheme=s, label=getattr(v, s).label, reason=getattr(v, s).reason)
                for s in ids
            ]

        resp = await agent.arespond(
            user,
            scoring_schema(ids),
            role="scoring",
            payload=lambda v: SchemeScores(record_id=record_id, scores=scores(v)),
            text=lambda v: ", ".join(f"{s.scheme}: {s.label}" for s in scores(v)),
        )
        if not resp.valid:
            return None, resp.turns, f"scoring: {resp.error}"
        return {s.scheme: s for s in scores(resp.value)}, resp.turns, ""

    async def aannotate(
        self,
        text: str,
        *,
        topic: str = "",
        stance: str = "",
        record_id: str = "",
        given: Sequence[str] | None = None,
    ) -> AnnotationResult:
        """Annotate one passage: schemes (or the ``given`` ones: score only), then labels."""
        turns: list[Turn] = []
        reasons: dict[str, str] = {}
        if given is None:
            uses, t, error = await self.aschemes(text, topic, stance, record_id)
            turns += t
            if uses is None:
                return AnnotationResult(record_id, {}, {}, {}, tuple(turns), error)
            reasons = {u.scheme: u.reason for u in uses}
            ids = [u.scheme for u in uses]
        else:
            unknown = [g for g in given if g not in self.ids]
            if unknown:
                raise ArgnbError(
                    f"unknown schemes {unknown} for {record_id or 'this passage'}",
                    hint=f"known schemes: {', '.join(self.ids)}",
                )
            ids = [s for s in self.ids if s in set(given)]
        labels: dict[str, str | None] = dict.fromkeys(ids)
        if not ids or not self.score:
            return AnnotationResult(record_id, labels, reasons, {}, tuple(turns))
        got, t, error = await self.ascores(text, ids, topic, stance, record_id)
        turns += t
        if got is None:
            return AnnotationResult(record_id, labels, reasons, {}, tuple(turns), error)
        labels = {s: got[s].label for s in ids}
        return AnnotationResult(
            record_id, labels, reasons, {s: got[s].reason for s in ids}, tuple(turns)
        )

    def annotate(self, text: str, **kw: Any) -> AnnotationResult:
        """Sync twin of :meth:`aannotate`."""
        return run_sync(self.aannotate(text, **kw))


def _side(stance: str) -> str:
    return {"pro": "for", "con": "against"}.get(stance, "for or against")


def _dedupe(v: Any) -> list[SchemeUse]:
    out: dict[str, SchemeUse] = {}
    for u in v.schemes:
        if u.scheme not in out:
            out[u.scheme] = SchemeUse(scheme=u.scheme, reason=u.reason.strip())
    return list(out.values())


# -- cost before a run -------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    """What an annotation run will cost, estimated before it starts."""

    records: int
    calls: int
    max_calls: int
    prompt_tokens: int
    completion_tokens: int
    backend: str

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def needs_confirmation(self) -> bool:
        return self.tokens > CONFIRM_TOKENS

    def __str__(self) -> str:
        return (
            f"annotation plan on {self.backend}: {self.records} records x up to 2 calls "
            f"(scheme annotation + scoring) = {self.calls} calls (at most {self.max_calls} with "
            f"repair turns), about {self.prompt_tokens:,} prompt + {self.completion_tokens:,} "
            f"completion tokens (~{self.tokens:,} in all)"
        )


#: typical completion tokens of one answer (a few schemes with short reasons)
COMPLETION_ESTIMATE = 90


def plan(annotator: Annotator, texts: Sequence[tuple[str, str, str]]) -> Plan:
    """Estimate calls and tokens for annotating ``(text, topic, stance)`` triples.

    Prompt tokens are the rendered prompts' characters / 4 (the usual rule of thumb for
    English); the scoring prompt is measured with two schemes.
    """
    prompt = 0
    two = annotator.ids[:2]
    for text, topic, stance in texts:
        s, u = annotator.annotation_prompt(text, topic, stance)
        prompt += (len(s) + len(u)) // 4
        if annotator.score and two:
            s, u = annotator.scoring_prompt(text, two, topic, stance)
            prompt += (len(s) + len(u)) // 4
    per = 2 if annotator.score else 1
    n = len(texts)
    return Plan(
        records=n,
        calls=per * n,
        max_calls=2 * per * n,
        prompt_tokens=prompt,
        completion_tokens=COMPLETION_ESTIMATE * per * n,
        backend=annotator.name,
    )


def confirm(p: Plan, yes: bool) -> None:
    """Refuse a run above :data:`CONFIRM_TOKENS` unless ``yes``: no spending by surprise."""
    if p.needs_confirmation and not yes:
        raise ArgnbError(
            f"{p} -- above the {CONFIRM_TOKENS:,}-token threshold",
            hint="add --yes (yes=True) to run it, or --limit N to annotate fewer records",
        )


# -- runs --------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunSummary:
    """What a run did; cost summed from the turns of the records it annotated."""

    annotated: int
    invalid: int
    skipped: int
    turns: tuple[Turn, ...]
    wall_s: float
    annotator: str

    @property
    def cost(self) -> Cost:
        return Cost.of(self.turns)

    def to_dict(self) -> dict[str, Any]:
        c = self.cost
        n = max(self.annotated, 1)
        return {
            "annotator": self.annotator,
            "annotated": self.annotated,
            "invalid": self.invalid,
            "invalid_rate": round(self.invalid / n, 3),
            "already_done": self.skipped,
            "calls": c.calls,
            "prompt_tokens": c.usage.prompt_tokens,
            "completion_tokens": c.usage.completion_tokens,
            "tokens_per_record": round(c.usage.total_tokens / n, 1),
            "wall_s": round(self.wall_s, 1),
            "records_per_s": round(self.annotated / self.wall_s, 3) if self.wall_s else None,
        }

    def __str__(self) -> str:
        d = self.to_dict()
        return (
            f"{d['annotated']} records annotated by {d['annotator']} in {d['wall_s']} s "
            f"({d['records_per_s']} records/s), {d['invalid']} invalid, {d['calls']} calls, "
            f"{d['tokens_per_record']} tokens per record; {d['already_done']} were already done"
        )


async def aannotate_store(
    store: Any,
    annotator: Annotator,
    *,
    limit: int | None = None,
    source: str | None = None,
    concurrency: int = 1,
    yes: bool = False,
    progress: bool = True,
) -> RunSummary:
    """Annotate the records of ``store`` that have no annotation yet (resumable: each record
    is written as soon as it is done; run again to continue)."""
    import time

    todo = store.unannotated(limit, source=source)
    skipped = store.count() - len(store.unannotated(source=source)) if limit is None else 0
    confirm(plan(annotator, [(r.text, r.topic, r.stance) for r in todo]), yes)
    turns: list[Turn] = []
    invalid = 0
    by_id = {r.id: r for r in todo}

    async def one(item: dict[str, Any]) -> dict[str, Any]:
        nonlocal invalid
        r = by_id[item["id"]]
        res = await annotator.aannotate(r.text, topic=r.topic, stance=r.stance, record_id=r.id)
        store.annotate(
            r.id,
            res.labels,
            backend=annotator.backend.name,
            model=annotator.backend.model,
            valid=res.valid,
            error=res.error,
            reasons=res.reasons,
            turns=res.turns,
        )
        turns.extend(res.turns)
        invalid += not res.valid
        return {"id": r.id}

    start = time.perf_counter()
    await arun_batch(
        one,
        [{"id": r.id} for r in todo],
        concurrency=concurrency,
        desc="annotating",
        progress=progress,
    )
    return RunSummary(
        len(todo), invalid, skipped, tuple(turns), time.perf_counter() - start, annotator.name
    )


def annotate_store(store: Any, annotator: Annotator, **kw: Any) -> RunSummary:
    """Sync twin of :func:`aannotate_store`."""
    return run_sync(aannotate_store(store, annotator, **kw))


async def aannotate_file(
    rows: Sequence[dict[str, Any]],
    annotator: Annotator,
    out: str | Path,
    *,
    given: dict[str, Sequence[str]] | None = None,
    concurrency: int = 1,
    yes: bool = False,
    progress: bool = True,
) -> RunSummary:
    """Annotate rows (``id``, ``text``, optional ``topic``/``stance``) into a JSON Lines file
    in the agreement format (resumable: rows already in ``out`` are skipped). With ``given``
    (id -> schemes, e.g. from a gold file) only the scoring agent runs, on those schemes."""
    import time

    from argnb.batch import read_jsonl
    from argnb.debate.agreement import annotation_row

    done = {str(r.get("id")) for r in read_jsonl(out)}
    todo = [r for r in rows if str(r["id"]) not in done]
    confirm(
        plan(annotator, [(r["text"], r.get("topic", ""), r.get("stance", "")) for r in todo]), yes
    )
    turns: list[Turn] = []

    async def one(row: dict[str, Any]) -> dict[str, Any]:
        rid = str(row["id"])
        res = await annotator.aannotate(
            row["text"],
            topic=row.get("topic", ""),
            stance=row.get("stance", ""),
            record_id=rid,
            given=None if given is None else list(given.get(rid, [])),
        )
        turns.extend(res.turns)
        out_row = annotation_row(rid, res.labels, annotator=annotator.name, valid=res.valid)
        out_row.update(
            error=res.error,
            reasons=res.reasons,
            score_reasons=res.score_reasons,
            turns=[t.model_dump(mode="json") for t in res.turns],
        )
        return out_row

    from argnb.batch import fingerprint

    config = {
        "task": "debate.annotate",
        "annotator": annotator.describe(),
        "prompts": prompts_fingerprint(annotator.prompt_dir or _prompts_dir(PACKAGE)),
        "given": fingerprint(dict(given)) if given is not None else None,
    }
    start = time.perf_counter()
    results = await arun_batch(
        one,
        rows,
        out=out,
        key="id",
        concurrency=concurrency,
        desc="annotating",
        progress=progress,
        config=config,
    )
    ran = {str(r["id"]) for r in todo}
    invalid = sum(1 for r in results if str(r.get("id")) in ran and not r.get("valid", True))
    return RunSummary(
        len(todo), invalid, len(done), tuple(turns), time.perf_counter() - start, annotator.name
    )


def annotate_file(
    rows: Sequence[dict[str, Any]], annotator: Annotator, out: str | Path, **kw: Any
) -> RunSummary:
    """Sync twin of :func:`aannotate_file`."""
    return run_sync(aannotate_file(rows, annotator, out, **kw))


__all__ = [
    "LABELS",
    "AnnotationResult",
    "Annotator",
    "Plan",
    "RunSummary",
    "annotate_file",
    "annotate_store",
    "plan",
]
