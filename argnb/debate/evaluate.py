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
from typing import Annotated, Any, Literal

from pydantic import Field

from argnb.agents import Agent
from argnb.batch import run_sync
from argnb.debate.dialogue import SIDE_WORDS, clip
from argnb.debate.payloads import ClaimCheck, DebatrixVerdict, InspireScores, SideScores
from argnb.errors import ArgnbError
from argnb.llm.answer import Answer
from argnb.llm.base import Backend, Options
from argnb.prompts import load
from argnb.transcript import Cost, Transcript, Turn

PACKAGE = "argnb.debate"
SUBJECTIVE = ("emotional_appeal", "clarity", "arrangement", "relevance")
LOGIC = ("validity", "stance_consistency")
STATUSES = ("supported", "contradicted", "unverifiable")
#: words of one turn a judge reads (IQ2 opening statements run to 1,500 words)
TURN_WORDS = 250

Rating = Annotated[int, Field(ge=1, le=10)]


class ClaimAnswer(Answer):
    claim: str = Field(max_length=300)
    status: Literal["supported", "contradicted", "unverifiable"]
    evidence: str = Field(max_length=80)


class InspireAnswer(Answer):
    emotional_appeal: Rating
    clarity: Rating
    arrangement: Rating
    relevance: Rating
    validity: Rating
    stance_consistency: Rating
    claims: list[ClaimAnswer] = Field(max_length=5)


class SideAnswer(Answer):
    argument: Rating
    source: Rating
    language: Rating
    overall: Rating


class DebatrixAnswer(Answer):
    side_a: SideAnswer
    side_b: SideAnswer
    winner: Literal["A", "B", "tie"]
    reason: str = Field(max_length=400)


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
    lines = [
        f"[{e.get('id', i)}] {clip(' '.join(str(e.get('text', '')).split()), 80)}"
        for i, e in enumerate(evidence, 1)
    ]
    return "\n".join(lines) or "(no passages: every factual claim is unverifiable)"


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
        return {"judge": "inspire", **self.backend.describe()}

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
        known = {str(e.get("id", i)) for i, e in enumerate(evidence, 1)}

        def scores(v: Any) -> InspireScores:
            ratings = {k: int(getattr(v, k)) for k in (*SUBJECTIVE, *LOGIC)}
            claims = []
            for c in v.claims:
                ref = c.evidence.strip().strip("[]")
                # a verdict that rests on a passage nobody showed the judge settles nothing
                status = c.status if c.status == "unverifiable" or ref in known else "unverifiable"
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


@dataclass(frozen=True)
class DebatrixResult:
    """Both passes over one debate (None where a pass was invalid), and what they agree on."""

    normal: DebatrixVerdict | None
    swapped: DebatrixVerdict | None
    turns: tuple[Turn, ...]

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
        return {
            k: round(statistics.fmean(getattr(s, k) for s in got), 3)
            for k in ("argument", "source", "language", "overall")
        }

    def relative(self) -> dict[str, dict[str, float]] | None:
        """The paper's Table 2 form: each side's mean divided by the mean of both sides, so the
        two sides sum to 2 on every dimension (1 each: a draw)."""
        pro, con = self.mean("pro"), self.mean("con")
        if pro is None or con is None:
            return None
        out: dict[str, dict[str, float]] = {"pro": {}, "con": {}}
        for k in pro:
            m = (pro[k] + con[k]) / 2
            out["pro"][k] = round(pro[k] / m, 3) if m else 1.0
            out["con"][k] = round(con[k] / m, 3) if m else 1.0
        return out

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
        }

    def __str__(self) -> str:
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
        return {"judge": "debatrix", **self.backend.describe()}

    async def _pass(
        self, turns: Sequence[dict[str, Any]], topic: str, debate_id: str, swapped: bool
    ) -> tuple[DebatrixVerdict | None, tuple[Turn, ...]]:
        a_side = "con" if swapped else "pro"
        b_side = "pro" if swapped else "con"
        label = {a_side: "A", b_side: "B"}
        debate = "\n".join(
            f"[{label[t['stance']]}] {clip(' '.join(str(t['text']).split()), TURN_WORDS)}"
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
        normal, t1 = await self._pass(turns, topic, debate_id, False)
        swapped, t2 = await self._pass(turns, topic, debate_id, True)
        return DebatrixResult(normal, swapped, (*t1, *t2))

    def judge(self, turns: Sequence[dict[str, Any]], **kw: Any) -> DebatrixResult:
        """Sync twin of :meth:`ajudge`."""
        return run_sync(self.ajudge(turns, **kw))


def _side(s: Any) -> SideScores:
    return SideScores(argument=s.argument, source=s.source, language=s.language, overall=s.overall)


# -- files ---------------------------------------------------------------------------------
def _from_transcript(tr: Transcript, name: str) -> tuple[list[dict], list[dict]]:
    """(utterance items, debate items) of a saved simulation or learner debate."""
    said, evidence, pending = [], [], []
    for t in tr.turns:
        p = t.payload
        if p.kind == "debate.retrieval":
            pending = [{"id": r.get("id"), "text": r.get("text", "")} for r in p.records]
        elif t.role == "utterance" and p.kind == "debate.utterance" and t.valid and t.text:
            said.append({"stance": p.stance, "text": t.text, "speaker": t.speaker,
                         "generated": bool(p.method)})  # fmt: skip
            evidence.append(pending)
            pending = []
    topic = tr.title or str(tr.meta.get("topic", ""))
    utts = [
        {
            "id": f"{name}#{i}",
            "topic": topic,
            "stance": s["stance"],
            "text": s["text"],
            "history": said[:i],
            "evidence": [e for e in ev if e.get("text")],
        }
        for i, (s, ev) in enumerate(zip(said, evidence, strict=True))
        if s["generated"]
    ]
    return utts, [{"id": name, "topic": topic, "turns": said}]


def read_items(path: str | Path, judge: str) -> list[dict[str, Any]]:
    """The items ``judge`` evaluates in ``path`` (see the module docstring for the formats)."""
    from argnb.debate.files import read_rows

    p = Path(path)
    if not p.is_file():
        raise ArgnbError(f"no file at {p}", hint="check --utterances")
    if p.suffix.lower() == ".json":
        try:
            tr = Transcript.load(p)
        except (ValueError, OSError) as exc:
            raise ArgnbError(f"{p} is not an argnb transcript: {str(exc)[:200]}") from None
        utts, debates = _from_transcript(tr, p.stem)
        items = utts if judge == "inspire" else debates
    else:
        rows = list(read_rows(p, "--utterances"))
        if rows and all("text" in r and "history" in r and "stance" in r for r in rows):
            if judge == "inspire":
                items = [
                    {k: r.get(k) for k in ("id", "topic", "stance", "text", "history")}
                    | {"evidence": r.get("evidence") or []}
                    for r in rows
                    if str(r.get("text", "")).strip()
                ]
            else:
                items = [
                    {
                        "id": r["id"],
                        "topic": r.get("topic", ""),
                        "turns": [*r["history"], {"stance": r["stance"], "text": r["text"]}],
                    }
                    for r in rows
                    if str(r.get("text", "")).strip()
                ]
        elif rows and all("debate_id" in r and "text" in r and "stance" in r for r in rows):
            from argnb.debate.runs import read_debates

            debates = read_debates(p)
            if judge == "inspire":
                items = [
                    {
                        "id": f"{d.id}#{i}",
                        "topic": d.topic,
                        "stance": t["stance"],
                        "text": t["text"],
                        "history": d.turns[:i],
                        "evidence": [],
                    }
                    for d in debates.values()
                    for i, t in enumerate(d.turns)
                ]
            else:
                items = [{"id": d.id, "topic": d.topic, "turns": d.turns} for d in debates.values()]
        else:
            raise ArgnbError(
                f"{p} is neither results of `argnb debate next`, a debate transcript, nor a "
                "debates file",
                hint="give next's results (.jsonl), a saved debate (.json) or IQ2-layout rows",
            )
    if not items:
        raise ArgnbError(f"{p} holds nothing for the {judge} judge to evaluate", hint="check it")
    return items


@dataclass
class EvaluationSummary:
    """Means over a run's records (invalid ones counted, not averaged)."""

    judge: str
    records: list[dict[str, Any]]
    config: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        rs = self.records
        valid = [r for r in rs if r.get("valid")]

        def mean(key: str, rows: Sequence[dict[str, Any]] = valid) -> float | None:
            vals = [r[key] for r in rows if r.get(key) is not None]
            return round(statistics.fmean(vals), 4) if vals else None

        out: dict[str, Any] = {"judge": self.judge, "n": len(rs), "invalid": len(rs) - len(valid)}
        if self.judge == "inspire":
            out |= {k: mean(k) for k in ("subjective", "logic", "fact", "score")}
            out["claims"] = {k: sum(r.get(k, 0) for r in valid) for k in STATUSES}
            out["without_claims"] = sum(1 for r in valid if not r.get("claims"))
        else:
            both = [r for r in rs if r.get("flipped") is not None]
            out["flip_rate"] = (
                round(sum(r["flipped"] for r in both) / len(both), 4) if both else None
            )
            out["wins"] = {
                w: sum(1 for r in rs if r.get("winner") == w)
                for w in ("pro", "con", "tie", "split")
            }
            for side in ("pro", "con"):
                got = [r[side] for r in rs if r.get(side)]
                out[side] = (
                    {k: round(statistics.fmean(g[k] for g in got), 3) for k in got[0]}
                    if got
                    else None
                )
        return out

    def __str__(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)


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
    """Run ``judge`` ("inspire" or "debatrix") over the items of ``path``; resumable via ``out``."""
    from argnb.batch import arun_batch

    if judge not in ("inspire", "debatrix"):
        raise ArgnbError(f"unknown judge {judge!r}", hint="use inspire or debatrix")
    items = read_items(path, judge)[:limit] if limit else read_items(path, judge)
    if judge == "inspire":
        ij = InspireJudge(backend)

        async def one(it: dict[str, Any]) -> dict[str, Any]:
            r = await ij.ajudge(
                it["text"],
                topic=it["topic"],
                stance=it["stance"],
                history=it["history"],
                evidence=it["evidence"],
                utterance_id=it["id"],
            )
            return {
                "id": it["id"],
                **r.to_dict(),
                "turns": [t.model_dump(mode="json") for t in r.turns],
            }

        config: dict[str, Any] = ij.describe()
    else:
        dj = DebatrixJudge(backend)

        async def one(it: dict[str, Any]) -> dict[str, Any]:
            r = await dj.ajudge(it["turns"], topic=it["topic"], debate_id=it["id"])
            return {
                "id": it["id"],
                **r.to_dict(),
                "turns": [t.model_dump(mode="json") for t in r.turns],
            }

        config = dj.describe()
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
