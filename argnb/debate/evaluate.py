"""Evaluating debate turns and whole debates with LLM judges -- and measuring one of their biases.

* :class:`InspireJudge` rates one utterance in the spirit of InspireScore (the R-Debater paper's
  utterance metric): six ratings on 1..10 -- emotional appeal, clarity, arrangement, relevance
  (*subjective*), validity and stance consistency (*logic*) -- and the utterance's factual claims
  checked against the retrieved evidence (*fact*). The code, not the model, computes each
  dimension in [0, 1] and the score as their mean (the paper's Table 1: 0.757, 0.940, 0.226 ->
  0.641). There is no web search here: a claim the evidence does not settle is *unverifiable* and
  does not count as supported; nor does a claim that cites a passage that was never shown.
* :class:`DebatrixJudge` judges a whole debate in the spirit of Debatrix: argument, source,
  language and overall per side, and a winner. LLM judges tend to favour one position in the
  prompt, so every debate is judged **twice**, once with the pro side as "Side A" and once with
  the con side as "Side A"; the result says whether the verdict **flipped**, and a run reports how
  often it did.

:func:`evaluate_file` runs either judge over a results file of ``argnb debate next``, a saved
simulation transcript, or a debates file in the IQ2 layout, as a resumable batch.

    >>> inspire_dimensions({"emotional_appeal": 10, "clarity": 10, "arrangement": 1,
    ...                     "relevance": 1, "validity": 10, "stance_consistency": 10},
    ...                    ["supported", "unverifiable"])
    (0.5, 1.0, 0.5, 0.6667)
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from argnb.agents import Agent
from argnb.batch import run_sync
from argnb.debate.inputs import read_items
from argnb.debate.payloads import ClaimCheck, DebatrixVerdict, InspireScores, SideScores
from argnb.debate.record import SIDE_WORDS, clip
from argnb.debate.schemas import DebatrixAnswer, InspireAnswer
from argnb.llm.base import Backend, Options
from argnb.prompts import load
from argnb.transcript import Cost, Turn

PACKAGE = "argnb.debate"
SUBJECTIVE = ("emotional_appeal", "clarity", "arrangement", "relevance")
LOGIC = ("validity", "stance_consistency")
STATUSES = ("supported", "contradicted", "unverifiable")
INSPIRE = ("subjective", "logic", "fact", "score")
DIMENSIONS = ("argument", "source", "language", "overall")
WINNERS = ("pro", "con", "tie", "split")
#: words of one turn a judge reads (IQ2 opening statements run to 1,500 words)
TURN_WORDS = 250


def _norm(x: float) -> float:
    return (x - 1) / 9


def inspire_dimensions(
    ratings: dict[str, int], statuses: Sequence[str]
) -> tuple[float, float, float | None, float]:
    """(subjective, logic, fact or None without claims, score), rounded to 4 places."""
    subjective = statistics.fmean(_norm(ratings[k]) for k in SUBJECTIVE)
    logic = statistics.fmean(_norm(ratings[k]) for k in LOGIC)
    fact = sum(s == "supported" for s in statuses) / len(statuses) if statuses else None
    dims = [d for d in (subjective, logic, fact) if d is not None]
    r = lambda v: None if v is None else round(v, 4)  # noqa: E731
    return r(subjective), r(logic), r(fact), r(statistics.fmean(dims))  # type: ignore[return-value]


def _history(history: Sequence[dict[str, Any]]) -> str:
    lines = [
        f"{h.get('stance', '?')}: {clip(' '.join(str(h.get('text', '')).split()), 120)}"
        for h in history
        if str(h.get("text", "")).strip()
    ]
    return "\n".join(lines[-6:]) or "(none: this is the opening turn)"


def _evidence(evidence: Sequence[dict[str, Any]]) -> str:
    """The passages as the judge sees them, labelled E1, E2, ... (memory ids are long, and a
    small model copies a short label more reliably)."""
    lines = [
        f"[E{i}] {clip(' '.join(str(e.get('text', '')).split()), 80)}"
        for i, e in enumerate(evidence, 1)
    ]
    return "\n".join(lines) or "(no passages: every factual claim is unverifiable)"


def _evidence_ids(evidence: Sequence[dict[str, Any]]) -> dict[str, str]:
    """What a judge may cite -> the passage's id: its label (``E2``, any case) or its own id."""
    out: dict[str, str] = {}
    for i, e in enumerate(evidence, 1):
        real = str(e.get("id", f"E{i}"))
        out[f"e{i}"] = out[real.lower()] = real
    return out


@dataclass(frozen=True)
class InspireResult:
    """One utterance's scores (all None when the judge's answer was invalid) and its turns."""

    scores: InspireScores | None
    turns: tuple[Turn, ...]

    @property
    def valid(self) -> bool:
        return self.scores is not None

    @property
    def cost(self) -> Cost:
        return Cost.of(self.turns)

    def to_dict(self) -> dict[str, Any]:
        s = self.scores
        base = {"valid": self.valid, "calls": self.cost.calls}
        if s is None:
            return {**base, "subjective": None, "logic": None, "fact": None, "score": None}
        statuses = [c.status for c in s.claims]
        return {
            **base,
            "subjective": s.subjective,
            "logic": s.logic,
            "fact": s.fact,
            "score": s.score,
            "claims": len(statuses),
            **{k: statuses.count(k) for k in STATUSES},
            "ratings": s.ratings,
        }

    def __str__(self) -> str:
        if self.scores is None:
            return "InspireScore: the judge's answer was invalid"
        s = self.scores
        fact = "n/a (no factual claims)" if s.fact is None else f"{s.fact:.3f}"
        counts = ", ".join(f"{k} {[c.status for c in s.claims].count(k)}" for k in STATUSES)
        return (
            f"InspireScore {s.score:.3f}: subjective {s.subjective:.3f}, logic {s.logic:.3f}, "
            f"fact {fact} ({counts})"
        )


@dataclass
class InspireJudge:
    """The utterance judge on one backend (see the module docstring)."""

    backend: Backend
    options: Options | None = None
    prompt_dir: str | None = None

    def describe(self) -> dict[str, Any]:
        out = {"judge": "inspire", **self.backend.describe()}
        return out | ({"prompt_dir": str(self.prompt_dir)} if self.prompt_dir else {})

    async def ajudge(
        self,
        text: str,
        *,
        topic: str,
        stance: str,
        history: Sequence[dict[str, Any]] = (),
        evidence: Sequence[dict[str, Any]] = (),
        utterance_id: str = "",
    ) -> InspireResult:
        t = load(PACKAGE, "inspire", self.prompt_dir, sectioned=True)
        agent = Agent("inspire judge", self.backend, self.options, system=t.render("system"))
        known = _evidence_ids(evidence)

        def scores(v: Any) -> InspireScores:
            ratings = {k: int(getattr(v, k)) for k in (*SUBJECTIVE, *LOGIC)}
            claims = []
            for c in v.claims:
                cited = c.evidence.strip().strip("[]").strip()
                ref = known.get(cited.lower(), cited)
                # a verdict that rests on a passage nobody showed the judge settles nothing
                shown = cited.lower() in known
                status = c.status if c.status == "unverifiable" or shown else "unverifiable"
                claims.append(
                    ClaimCheck(claim=" ".join(c.claim.split()), status=status, evidence=ref)
                )
            sub, log, fact, score = inspire_dimensions(ratings, [c.status for c in claims])
            return InspireScores(
                utterance_id=utterance_id,
                ratings=ratings,
                claims=claims,
                subjective=sub,
                logic=log,
                fact=fact,
                score=score,
            )

        resp = await agent.arespond(
            t.render(
                "user",
                topic=topic,
                side=SIDE_WORDS.get(stance, stance),
                history=_history(history),
                evidence=_evidence(evidence),
                text=clip(" ".join(text.split()), TURN_WORDS),
            ),
            InspireAnswer,
            role="inspire",
            text=lambda v: str(InspireResult(scores(v), ())),
            payload=scores,
        )
        return InspireResult(scores(resp.value) if resp.valid else None, resp.turns)

    def judge(self, text: str, **kw: Any) -> InspireResult:
        """Sync twin of :meth:`ajudge`."""
        return run_sync(self.ajudge(text, **kw))


def relative(pro: dict[str, float], con: dict[str, float]) -> dict[str, dict[str, float]]:
    """Each side's score divided by the mean of both sides, per dimension -- the form of the
    paper's Table 2: the two sides sum to 2, 1 each is a draw, and the scale a judge happens to
    use cancels out.

    >>> relative({"overall": 6.0}, {"overall": 2.0})
    {'pro': {'overall': 1.5}, 'con': {'overall': 0.5}}
    """
    out: dict[str, dict[str, float]] = {"pro": {}, "con": {}}
    for k in pro:
        m = (pro[k] + con[k]) / 2
        out["pro"][k] = round(pro[k] / m, 3) if m else 1.0
        out["con"][k] = round(con[k] / m, 3) if m else 1.0
    return out


@dataclass(frozen=True)
class DebatrixResult:
    """Both passes over one debate (None where a pass was invalid), and what they agree on."""

    normal: DebatrixVerdict | None
    swapped: DebatrixVerdict | None
    turns: tuple[Turn, ...]
    #: why the debate was not judged (a side with no usable turn: nothing to score, no winner)
    unjudged: str = ""

    @property
    def valid(self) -> bool:
        return self.normal is not None and self.swapped is not None

    @property
    def cost(self) -> Cost:
        return Cost.of(self.turns)

    @property
    def flipped(self) -> bool | None:
        """Did the winner change when the sides were swapped? (None: a pass was invalid)"""
        if not self.valid:
            return None
        return self.normal.winner != self.swapped.winner  # type: ignore[union-attr]

    def mean(self, side: str) -> dict[str, float] | None:
        """Each dimension of ``side`` averaged over the valid passes."""
        got = [getattr(v, side) for v in (self.normal, self.swapped) if v is not None]
        if not got:
            return None
        return {k: round(statistics.fmean(getattr(s, k) for s in got), 3) for k in DIMENSIONS}

    def relative(self) -> dict[str, dict[str, float]] | None:
        """The per-side means in the paper's Table 2 form (see :func:`relative`)."""
        pro, con = self.mean("pro"), self.mean("con")
        return None if pro is None or con is None else relative(pro, con)

    @property
    def winner(self) -> str | None:
        """The agreed winner, ``"split"`` when the passes disagree, None when none is valid."""
        ws = [v.winner for v in (self.normal, self.swapped) if v is not None]
        if not ws:
            return None
        return ws[0] if len(set(ws)) == 1 else "split"

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "calls": self.cost.calls,
            "winner": self.winner,
            "flipped": self.flipped,
            "pro": self.mean("pro"),
            "con": self.mean("con"),
            "relative": self.relative(),
            "winners": [v.winner if v else None for v in (self.normal, self.swapped)],
            "unjudged": self.unjudged,
        }

    def __str__(self) -> str:
        if self.unjudged:
            return f"Debatrix: not judged, {self.unjudged}"
        if self.normal is None and self.swapped is None:
            return "Debatrix: both passes were invalid"
        pro, con = self.mean("pro"), self.mean("con")
        flip = {True: "flipped", False: "held", None: "n/a"}[self.flipped]
        return f"Debatrix winner {self.winner} (swapping the sides: {flip}); pro {pro}; con {con}"


@dataclass
class DebatrixJudge:
    """The debate judge on one backend; every debate is judged twice (see the module doc)."""

    backend: Backend
    options: Options | None = None
    prompt_dir: str | None = None

    def describe(self) -> dict[str, Any]:
        out = {"judge": "debatrix", **self.backend.describe()}
        return out | ({"prompt_dir": str(self.prompt_dir)} if self.prompt_dir else {})

    async def _pass(
        self, turns: Sequence[dict[str, Any]], topic: str, debate_id: str, swapped: bool
    ) -> tuple[DebatrixVerdict | None, tuple[Turn, ...]]:
        a_side = "con" if swapped else "pro"
        b_side = "pro" if swapped else "con"
        label = {a_side: "A", b_side: "B"}
        debate = "\n".join(
            f"Side {label[t['stance']]}: {clip(' '.join(str(t['text']).split()), TURN_WORDS)}"
            for t in turns
            if t.get("stance") in label and str(t.get("text", "")).strip()
        )
        tpl = load(PACKAGE, "debatrix", self.prompt_dir, sectioned=True)
        agent = Agent("debatrix judge", self.backend, self.options, system=tpl.render("system"))

        def verdict(v: Any) -> DebatrixVerdict:
            a, b = (_side(v.side_a), _side(v.side_b))
            side_of = {"A": a_side, "B": b_side, "tie": "tie"}
            return DebatrixVerdict(
                debate_id=debate_id,
                swapped=swapped,
                pro=b if swapped else a,
                con=a if swapped else b,
                winner=side_of[v.winner],
                reason=" ".join(v.reason.split()),
            )

        resp = await agent.arespond(
            tpl.render(
                "user",
                topic=topic,
                a_side=SIDE_WORDS[a_side],
                b_side=SIDE_WORDS[b_side],
                debate=debate or "(no turns)",
            ),
            DebatrixAnswer,
            role="debatrix",
            round=int(swapped),
            text=lambda v: f"winner: {verdict(v).winner} ({'con' if swapped else 'pro'} as A)",
            payload=verdict,
        )
        return (verdict(resp.value) if resp.valid else None), resp.turns

    async def ajudge(
        self, turns: Sequence[dict[str, Any]], *, topic: str, debate_id: str = ""
    ) -> DebatrixResult:
        """Both passes; none when a side has no usable turn (a stopped or empty turn is never
        shown to the judge, so it would name a winner between one side and silence)."""
        silent = [
            side
            for side in ("pro", "con")
            if not any(t.get("stance") == side and str(t.get("text", "")).strip() for t in turns)
        ]
        if silent:
            why = " and ".join(silent) + (" have" if len(silent) > 1 else " has")
            return DebatrixResult(None, None, (), unjudged=f"{why} no usable turn: no winner")
        normal, t1 = await self._pass(turns, topic, debate_id, False)
        swapped, t2 = await self._pass(turns, topic, debate_id, True)
        return DebatrixResult(normal, swapped, (*t1, *t2))

    def judge(self, turns: Sequence[dict[str, Any]], **kw: Any) -> DebatrixResult:
        """Sync twin of :meth:`ajudge`."""
        return run_sync(self.ajudge(turns, **kw))


def _side(s: Any) -> SideScores:
    return SideScores(argument=s.argument, source=s.source, language=s.language, overall=s.overall)


@dataclass
class EvaluationSummary:
    """What a run found, computed from its records (an invalid record is counted, never
    averaged); ``to_dict()`` is what ``argnb debate evaluate --json`` prints."""

    judge: str
    records: list[dict[str, Any]]
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.records)

    @property
    def valid(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("valid")]

    @property
    def invalid(self) -> int:
        return self.n - len(self.valid)

    @property
    def means(self) -> dict[str, float | None]:
        """inspire: subjective, logic, fact, score; debatrix: each dimension per side."""
        if self.judge == "inspire":
            return {k: _mean(r.get(k) for r in self.valid) for k in INSPIRE}
        return {
            f"{side}.{k}": _mean((r.get(side) or {}).get(k) for r in self.records)
            for side in ("pro", "con")
            for k in DIMENSIONS
        }

    @property
    def flip_rate(self) -> float | None:
        """Share of debates (both passes valid) whose winner changed when the sides swapped."""
        both = [r for r in self.records if r.get("flipped") is not None]
        return round(sum(bool(r["flipped"]) for r in both) / len(both), 4) if both else None

    @property
    def wins(self) -> dict[str, int]:
        """Agreed winners; ``split`` counts debates whose two passes disagreed."""
        return {w: sum(r.get("winner") == w for r in self.records) for w in WINNERS}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"judge": self.judge, "n": self.n, "invalid": self.invalid}
        m = self.means
        if self.judge == "inspire":
            out |= m
            out["claims"] = {k: sum(r.get(k, 0) for r in self.valid) for k in STATUSES}
            out["without_claims"] = sum(1 for r in self.valid if not r.get("claims"))
            by: dict[str, list[Any]] = {}
            for r in self.valid:
                by.setdefault(r.get("method") or "given", []).append(r.get("score"))
            out["score_by_method"] = {k: _mean(v) for k, v in sorted(by.items())}
            return out
        out["flip_rate"] = self.flip_rate
        out["wins"] = self.wins
        sides = {s: {k: m[f"{s}.{k}"] for k in DIMENSIONS} for s in ("pro", "con")}
        for s in ("pro", "con"):
            out[s] = sides[s] if all(v is not None for v in sides[s].values()) else None
        out["relative"] = relative(out["pro"], out["con"]) if out["pro"] and out["con"] else None
        return out

    def __str__(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)


def _mean(values: Any) -> float | None:
    got = [v for v in values if v is not None]
    return round(statistics.fmean(got), 4) if got else None


async def aevaluate_file(
    path: str | Path,
    judge: str,
    backend: Backend,
    *,
    out: str | Path | None = None,
    limit: int | None = None,
    concurrency: int = 1,
    progress: bool = True,
) -> EvaluationSummary:
    """Run ``judge`` ("inspire" or "debatrix") over the items of ``path`` (see
    :func:`read_items`); with ``out`` each record is appended as it is done, and a second run
    skips what is there (and refuses another judge, model or data in the same file)."""
    from argnb.batch import arun_batch

    items = read_items(path, judge)
    items = items[:limit] if limit else items
    # which method wrote an utterance goes into its record, not into the data fingerprint
    methods = {str(it["id"]): it.pop("method", "") for it in items}
    ij, dj = InspireJudge(backend), DebatrixJudge(backend)

    async def one(it: dict[str, Any]) -> dict[str, Any]:
        r: InspireResult | DebatrixResult
        if judge == "inspire":
            r = await ij.ajudge(
                it["text"],
                topic=it["topic"],
                stance=it["stance"],
                history=it["history"],
                evidence=it["evidence"],
                utterance_id=str(it["id"]),
            )
            extra = {"method": methods[str(it["id"])]}
        else:
            r = await dj.ajudge(it["turns"], topic=it["topic"], debate_id=str(it["id"]))
            extra = {}
        turns = [t.model_dump(mode="json") for t in r.turns]
        return {"id": it["id"], **extra, **r.to_dict(), "turns": turns}

    config = (ij if judge == "inspire" else dj).describe()
    records = await arun_batch(
        one,
        items,
        out=out,
        concurrency=concurrency,
        desc=f"evaluate ({judge})",
        progress=progress,
        config={"task": "debate.evaluate", **config},
    )
    return EvaluationSummary(judge, records, config)


def evaluate_file(path: str | Path, judge: str, backend: Backend, **kw: Any) -> EvaluationSummary:
    """Sync twin of :func:`aevaluate_file`."""
    return run_sync(aevaluate_file(path, judge, backend, **kw))
