"""Retrieval from the argumentative memory (the paper's section 4.2), step by step, traced.

From a debate history to exemplars and scheme priors:

1. **keywords** -- the keyword agent (an LLM, :func:`akeywords`) or, with
   no model, :func:`lexical_keywords` (the history's terms weighted by tf-idf over the memory);
2. **coarse candidates** -- records matching the keywords, ranked by BM25 (``bm25s``). The paper
   keeps records with an explicit keyword match by a rule; BM25 keeps exactly those records
   (a record without any keyword scores 0 and is dropped) and ranks them, so the pool can be
   bounded (``candidates``);
3. **re-rank** -- cosine between the embedded history and each candidate's stored embedding;
   the top ``k`` are kept (``method="bm25"`` or ``"embedding"`` use one signal alone);
4. **scheme priors** -- per scheme the mean label score over the top k (poor=1 ... excellent=4,
   unused 0); schemes with a mean above ``threshold`` (2: above "general") are kept, and the
   retrieved records that use them are the exemplars.

A stance filter restricts the memory to one side: the debater's own stance for exemplars, the
opposite one to anticipate attacks. Every step's output -- keywords, candidates with BM25
scores, hits with cosines and labels, priors, timings -- is returned in a
:class:`RetrievalTrace`. Indexes (BM25, the normalised embedding matrix, label matrix) are
built once per memory generation and cached in the process and next to the database file
(:mod:`argnb.debate.index`).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from argnb.agents import Agent
from argnb.debate.context import TurnContext
from argnb.debate.index import MemoryIndex, _init_stop, index_for, tokenize
from argnb.debate.memory import Store
from argnb.debate.payloads import Keywords, RetrievalStep
from argnb.debate.schemas import KeywordsAnswer
from argnb.errors import ArgnbError
from argnb.prompts import load
from argnb.transcript import Cost, Turn
from argnb.words import shorten

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from argnb.debate.embed import Embedder
    from argnb.llm.base import Backend, Options

PACKAGE = "argnb.debate"
Method = Literal["hybrid", "bm25", "embedding"]
METHODS = ("hybrid", "bm25", "embedding")
#: the most recent words of the history that are embedded as the query (MiniLM reads 256 pieces)
QUERY_WORDS = 200


# -- step 1: keywords --------------------------------------------------------------------
def _first_words(text: str, words: int) -> str:
    w = text.split()
    return " ".join(w[:words]) + (" ..." if len(w) > words else "")


async def akeywords(
    backend: Backend,
    history: str,
    *,
    n: int = 8,
    options: Options | None = None,
    prompt_dir: str | None = None,
    ctx: TurnContext | None = None,
) -> tuple[list[str] | None, tuple[Turn, ...]]:
    """The keyword extraction agent: (keywords or None when invalid, turns). Its task follows
    the turn's shared context ``ctx`` (a debater's); without one, the first 1500 words of
    ``history``."""
    t = load(PACKAGE, "keywords", prompt_dir, sectioned=True)
    ctx = ctx or TurnContext.of_history(_first_words(history, 1500), prompt_dir)
    agent = Agent("keyword agent", backend, options, system=ctx.system)

    def clean(v: Any) -> list[str]:
        seen: dict[str, None] = {}
        for k in v.keywords:
            k = " ".join(k.split()).strip(" .,;:\"'")
            if k and k.lower() not in {s.lower() for s in seen}:
                seen[k] = None
        return list(seen)[:n]

    resp = await agent.arespond(
        ctx.ask(t.render("task", n=n)),
        KeywordsAnswer,
        role="keywords",
        check=lambda v: [] if clean(v) else ["give at least one keyword"],
        payload=lambda v: Keywords(keywords=clean(v), source="agent"),
        text=lambda v: ", ".join(clean(v)),
    )
    return (clean(resp.value) if resp.valid else None), resp.turns


def keywords(
    backend: Backend, history: str, **kw: Any
) -> tuple[list[str] | None, tuple[Turn, ...]]:
    """Sync twin of :func:`akeywords`."""
    from argnb.batch import run_sync

    return run_sync(akeywords(backend, history, **kw))


def lexical_keywords(history: str, index: MemoryIndex, n: int = 8) -> list[str]:
    """The history's terms ranked by tf-idf over the memory (terms the memory does not
    contain cannot match, so they are left out). Needs no model."""
    _init_stop()
    toks = [t for t in tokenize([history])[0] if not t.isdigit() and t in index.df]
    tf = Counter(toks)
    first = {t: i for i, t in reversed(list(enumerate(toks)))}
    ranked = sorted(tf, key=lambda t: (-(1 + math.log(tf[t])) * index.idf(t), first[t]))
    return ranked[:n]


# -- the trace ---------------------------------------------------------------------------
class Hit(BaseModel):
    """One retrieved record with what each step said about it."""

    rank: int
    id: str
    source: str
    topic: str
    stance: str
    text: str
    bm25: float | None = None
    cosine: float | None = None
    via: str = "bm25"
    schemes: dict[str, str | None] = Field(default_factory=dict)


class Prior(BaseModel):
    scheme: str
    mean: float
    used: int
    kept: bool


class RetrievalTrace(BaseModel):
    """What every retrieval step decided (notebook 04 shows it; ``--json`` prints it)."""

    query: str
    stance: str | None
    k: int
    method: str
    keywords: list[str]
    keyword_source: str
    candidates: list[dict[str, Any]]
    hits: list[Hit]
    priors: list[Prior]
    kept_schemes: list[str]
    exemplars: list[str]
    threshold: float
    embed_model: str | None
    annotated_hits: int
    timings_ms: dict[str, float]
    turns: list[Turn] = Field(default_factory=list)

    @property
    def cost(self) -> Cost:
        """What the keyword agent cost (zero for lexical keywords)."""
        return Cost.of(self.turns)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def to_frame(self) -> pd.DataFrame:
        """The hits: rank, id, stance, scores, schemes with labels, text."""
        import pandas as pd

        return pd.DataFrame([h.model_dump() for h in self.hits])

    def priors_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame([p.model_dump() for p in self.priors])

    def to_turn(self, speaker: str = "retriever") -> Turn:
        """This retrieval as a transcript turn (a debate records it next to its utterances)."""
        payload = RetrievalStep(
            method=self.method,
            stance=self.stance,
            k=self.k,
            keywords=self.keywords,
            records=[
                {
                    "id": h.id,
                    "stance": h.stance,
                    "bm25": h.bm25,
                    "cosine": h.cosine,
                    "schemes": h.schemes,
                    "text": h.text,
                }
                for h in self.hits
            ],
            priors={p.scheme: p.mean for p in self.priors},
            kept=self.kept_schemes,
            exemplars=self.exemplars,
            embed_model=self.embed_model or "",
        )
        text = f"{len(self.hits)} records; priors: {', '.join(self.kept_schemes) or 'none'}"
        return Turn(speaker=speaker, role="retrieval", text=text, payload=payload)

    def _repr_html_(self) -> str:
        from argnb.debate.views import trace_html

        return trace_html(self)

    def __str__(self) -> str:
        lines = [
            f"keywords ({self.keyword_source}): {', '.join(self.keywords) or '(none)'}",
            f"{len(self.candidates)} candidates -> top {len(self.hits)} by {self.method}"
            f" (stance filter: {self.stance or 'none'}; embeddings: {self.embed_model or 'none'})",
        ]
        for h in self.hits:
            sc = ", ".join(f"{s}:{lab or '?'}" for s, lab in h.schemes.items()) or "-"
            cos = "" if h.cosine is None else f" cos {h.cosine:.3f}"
            b = "" if h.bm25 is None else f" bm25 {h.bm25:.2f}"
            lines.append(f"  {h.rank}. [{h.stance}] {h.id}{b}{cos}  schemes: {sc}")
            lines.append(f"     {shorten(h.text, 110)}")
        pri = ", ".join(
            f"{p.scheme} {p.mean:.2f}{'*' if p.kept else ''}" for p in self.priors if p.used
        )
        lines.append(
            f"priors (mean label over top {len(self.hits)}; * = above {self.threshold:g}): "
            f"{pri or 'no annotated scheme among the hits'}"
        )
        lines.append(f"exemplars: {', '.join(self.exemplars) or 'none'}")
        return "\n".join(lines)


# -- the retriever -----------------------------------------------------------------------
def history_text(history: str | Sequence[str]) -> str:
    """A history as one text (utterances oldest first, one paragraph each)."""
    if isinstance(history, str):
        return history.strip()
    return "\n\n".join(str(u).strip() for u in history if str(u).strip())


def _tail(text: str, words: int = QUERY_WORDS) -> str:
    w = text.split()
    return " ".join(w[-words:])


@dataclass
class Retriever:
    """Retrieval over one memory: keywords -> BM25 candidates -> cosine re-rank -> priors.

    ``embedder`` must be the model that embedded the memory (its name selects the stored
    vectors); ``keyword_backend`` runs the keyword agent (None: lexical keywords, no model).
    """

    store: Store
    embedder: Embedder | None = None
    keyword_backend: Backend | None = None
    method: Method = "hybrid"
    k: int = 5
    candidates: int = 50
    threshold: float = 2.0
    n_keywords: int = 8

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ArgnbError(f"unknown method {self.method!r}", hint=f"use {', '.join(METHODS)}")
        if self.method != "bm25" and self.embedder is None:
            raise ArgnbError(
                f"the {self.method} method needs an embedding model",
                hint="pass embedder=... (the one the memory was embedded with), or method='bm25'",
            )

    @property
    def index(self) -> MemoryIndex:
        return index_for(self.store, self.embedder.name if self.embedder else None)

    def embed_query(self, text: str) -> np.ndarray:
        assert self.embedder is not None
        return self.embedder.embed([_tail(text)])[0]

    async def aretrieve(
        self,
        history: str | Sequence[str],
        *,
        stance: str | None = None,
        k: int | None = None,
        keywords: Sequence[str] | None = None,
        exclude_topics: Sequence[str] = (),
    ) -> RetrievalTrace:
        """Run the four steps; ``keywords`` skips step 1 (given by the caller);
        ``exclude_topics`` leaves out the records of those motions (a debate must not recall
        its own later turns)."""
        text = history_text(history)
        if not text:
            raise ArgnbError("the debate history is empty", hint="give --text or --history")
        idx = self.index
        times: dict[str, float] = {}
        turns: list[Turn] = []
        t0 = time.perf_counter()
        source = "given"
        if keywords is None and self.keyword_backend is not None:
            got, tt = await akeywords(self.keyword_backend, text, n=self.n_keywords)
            turns = list(tt)
            keywords = got
            source = f"agent ({self.keyword_backend.name}:{self.keyword_backend.model})"
            if got is None:
                source = "lexical (the keyword agent's answer was invalid)"
        if keywords is None:
            keywords = lexical_keywords(text, idx, self.n_keywords)
            source = source if source.startswith("lexical") else "lexical"
        times["keywords"] = (time.perf_counter() - t0) * 1000
        qvec = None
        if self.embedder is not None and self.method != "bm25":
            t1 = time.perf_counter()
            qvec = await asyncio.to_thread(self.embed_query, text)
            times["embed_query"] = (time.perf_counter() - t1) * 1000
        trace = self.rank(
            idx, text, list(keywords), qvec, stance=stance, k=k or self.k, exclude=exclude_topics
        )
        trace.keyword_source = source
        trace.turns = turns
        trace.timings_ms = {**{n: round(v, 2) for n, v in times.items()}, **trace.timings_ms}
        return trace

    def retrieve(self, history: str | Sequence[str], **kw: Any) -> RetrievalTrace:
        """Sync twin of :meth:`aretrieve`."""
        from argnb.batch import run_sync

        return run_sync(self.aretrieve(history, **kw))

    def rank(
        self,
        idx: MemoryIndex,
        text: str,
        keywords: list[str],
        qvec: np.ndarray | None,
        *,
        stance: str | None,
        k: int,
        exclude: Sequence[str] = (),
    ) -> RetrievalTrace:
        """Steps 2-4 with this retriever's settings (see :func:`rank`)."""
        return rank(
            idx,
            text,
            keywords,
            qvec,
            method=self.method,
            stance=stance,
            k=k,
            exclude_topics=exclude,
            candidates=self.candidates,
            threshold=self.threshold,
        )


def rank(
    idx: MemoryIndex,
    text: str,
    keywords: list[str],
    qvec: np.ndarray | None,
    *,
    method: Method = "hybrid",
    stance: str | None = None,
    k: int = 5,
    candidates: int = 50,
    threshold: float = 2.0,
    exclude_topics: Sequence[str] = (),
) -> RetrievalTrace:
    """Steps 2-4 -- BM25 candidates, re-rank, priors: everything after the model calls.

    ``qvec`` is the embedded history (unit length; None for ``method="bm25"``); records whose
    topic is in ``exclude_topics`` are never returned."""
    import numpy as np

    if stance not in (None, "pro", "con"):
        raise ArgnbError(f"unknown stance {stance!r}", hint="use pro or con")
    if k < 1:
        raise ArgnbError("k must be at least 1")
    t0 = time.perf_counter()
    allowed = np.ones(idx.n, dtype=bool) if stance is None else idx.stance == stance
    if exclude_topics:
        allowed &= ~np.isin(idx.topic_array, list(exclude_topics))
    bm = np.zeros(idx.n, dtype=np.float32)
    qtok = [t for t in tokenize([" ".join(keywords)])[0] if t in idx.df] if keywords else []
    if qtok and method != "embedding":
        bm = np.asarray(idx.bm25.get_scores(qtok), dtype=np.float32)
    pool = np.flatnonzero((bm > 0) & allowed)
    pool = pool[np.argsort(-bm[pool], kind="stable")][:candidates]
    t1 = time.perf_counter()
    cos = None
    if qvec is not None:
        assert idx.emb is not None and idx.has_emb is not None
        q = qvec.astype(np.float32)
        if method == "hybrid":  # only the candidates need a cosine (unless we must fill)
            cos = np.full(idx.n, -2.0, dtype=np.float32)
            cos[pool] = np.where(idx.has_emb[pool], idx.emb[pool] @ q, -2.0)
        else:
            cos = _all_cosines(idx, q)
    via = {}
    if method == "bm25":
        top = pool[:k]
        via = dict.fromkeys(top.tolist(), "bm25")
    elif method == "embedding":
        assert cos is not None
        cand = np.flatnonzero(allowed & idx.has_emb)  # type: ignore[operator]
        top = cand[np.argsort(-cos[cand], kind="stable")][:k]
        via = dict.fromkeys(top.tolist(), "embedding")
    else:
        assert cos is not None
        top = pool[np.argsort(-cos[pool], kind="stable")][:k]
        via = dict.fromkeys(top.tolist(), "bm25+cosine")
        if len(top) < k:  # too few keyword matches: fill from the dense ranking
            cos = _all_cosines(idx, q)
            rest = np.flatnonzero(allowed & idx.has_emb)  # type: ignore[operator]
            rest = rest[~np.isin(rest, top)]
            extra = rest[np.argsort(-cos[rest], kind="stable")][: k - len(top)]
            via.update(dict.fromkeys(extra.tolist(), "embedding (fill)"))
            top = np.concatenate([top, extra])
    t2 = time.perf_counter()
    priors, kept, exemplars = _priors(idx, top, threshold)
    t3 = time.perf_counter()
    hits = [
        Hit(
            rank=r + 1,
            id=idx.ids[i],
            source=idx.sources[i],
            topic=idx.topics[i],
            stance=str(idx.stance[i]),
            text=idx.texts[i],
            bm25=round(float(bm[i]), 4) if bm[i] > 0 else None,
            cosine=round(float(cos[i]), 4) if cos is not None else None,
            via=via.get(int(i), ""),
            schemes=idx.labels[i],
        )
        for r, i in enumerate(top.tolist())
    ]
    return RetrievalTrace(
        query=_tail(text),
        stance=stance,
        k=k,
        method=method,
        keywords=keywords,
        keyword_source="",
        candidates=[{"id": idx.ids[i], "bm25": round(float(bm[i]), 4)} for i in pool.tolist()],
        hits=hits,
        priors=priors,
        kept_schemes=kept,
        exemplars=exemplars,
        threshold=threshold,
        embed_model=idx.embed_model,
        annotated_hits=int(idx.annotated[top].sum()) if len(top) else 0,
        timings_ms={
            "coarse": round((t1 - t0) * 1000, 2),
            "rerank": round((t2 - t1) * 1000, 2),
            "priors": round((t3 - t2) * 1000, 2),
        },
    )


_BLAS: list[Any] = []


def _all_cosines(idx: MemoryIndex, q: np.ndarray) -> np.ndarray:
    """Cosine of every record with ``q`` (-2 where a record has no vector). One BLAS thread:
    a matrix-vector product this size is done in a few milliseconds, and a second thread only
    adds waiting when the CPU is shared (measured: p50 9 ms with two threads, 2.5 ms with one)."""
    import numpy as np

    assert idx.emb is not None and idx.has_emb is not None
    if not _BLAS:
        from threadpoolctl import ThreadpoolController

        _BLAS.append(ThreadpoolController())
    with _BLAS[0].limit(limits=1, user_api="blas"):
        cos = idx.emb @ q
    return np.where(idx.has_emb, cos, -2.0).astype(np.float32)


def _priors(
    idx: MemoryIndex, top: np.ndarray, threshold: float
) -> tuple[list[Prior], list[str], list[str]]:
    """Mean label score per scheme over the top k; schemes above the threshold and the
    retrieved records that use them."""
    if len(top) == 0:
        return [], [], []
    sub = idx.scores[top].astype(float)
    means = sub.sum(axis=0) / len(top)
    priors = [
        Prior(
            scheme=s,
            mean=round(float(means[j]), 4),
            used=sum(1 for i in top.tolist() if s in idx.labels[i]),
            kept=bool(means[j] > threshold),
        )
        for j, s in enumerate(idx.scheme_ids)
    ]
    kept = [p.scheme for p in priors if p.kept]
    exemplars = [idx.ids[i] for i in top.tolist() if any(s in idx.labels[i] for s in kept)]
    return priors, kept, exemplars


def retrieve(
    store: Store,
    history: str | Sequence[str],
    *,
    embedder: Embedder | None = None,
    stance: str | None = None,
    k: int = 5,
    method: Method = "hybrid",
    keyword_backend: Backend | None = None,
    keywords: Sequence[str] | None = None,
    candidates: int = 50,
    threshold: float = 2.0,
) -> RetrievalTrace:
    """One retrieval (see :class:`Retriever`); without an embedder it falls back to BM25."""
    r = Retriever(
        store,
        embedder,
        keyword_backend,
        method if embedder is not None else "bm25",
        k=k,
        candidates=candidates,
        threshold=threshold,
    )
    return r.retrieve(history, stance=stance, keywords=keywords)
