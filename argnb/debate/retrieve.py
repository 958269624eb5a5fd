"""Retrieval from the argumentative memory (the paper's section 4.2), step by step, traced.

From a debate history to exemplars and scheme priors:

1. **keywords** -- the keyword agent (an LLM, :func:`argnb.debate.annotate.akeywords`) or, with
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
built once per memory generation and cached in the process and next to the database file.
"""

from __future__ import annotations

import asyncio
import html
import json
import math
import shutil
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from argnb.debate.memory import Store
from argnb.debate.payloads import RetrievalStep
from argnb.debate.schemes import LABELS, load_schemes
from argnb.errors import ArgnbError
from argnb.transcript import Cost, Turn

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from argnb.debate.embed import Embedder
    from argnb.llm.base import Backend

Method = Literal["hybrid", "bm25", "embedding"]
METHODS = ("hybrid", "bm25", "embedding")
#: the most recent words of the history that are embedded as the query (MiniLM reads 256 pieces)
QUERY_WORDS = 200

#: talk that carries no argument (added to scikit-learn's English stop words)
_FILLER_WORDS = """think know going say said says saying really just well yes yeah okay ok oh um
    uh let like want got get gets make makes made way thing things lot lots actually mean means
    point right thank thanks sure look kind sort maybe gonna come came tell told talk talking
    talked question questions debate motion opponents opponent side team points"""
FILLERS = frozenset(_FILLER_WORDS.split())


def _stopwords() -> list[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return sorted(ENGLISH_STOP_WORDS | FILLERS)


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lower-cased word tokens without stop words (the same for documents and queries)."""
    import bm25s

    return bm25s.tokenize(list(texts), return_ids=False, stopwords=_STOP, show_progress=False)  # type: ignore[return-value]


_STOP: list[str] = []


def _init_stop() -> None:
    if not _STOP:
        _STOP.extend(_stopwords())


# -- the index ---------------------------------------------------------------------------
@dataclass
class MemoryIndex:
    """Everything retrieval needs, precomputed for one memory generation and embedding model."""

    generation: int
    ids: list[str]
    texts: list[str]
    topics: list[str]
    sources: list[str]
    stance: np.ndarray  # "pro"/"con" per record
    bm25: Any
    df: dict[str, int]
    scheme_ids: tuple[str, ...]
    scores: np.ndarray  # records x schemes, 0 (unused / unscored) .. 4
    labels: list[dict[str, str | None]]
    annotated: np.ndarray  # bool per record
    embed_model: str | None
    emb: np.ndarray | None  # records x dim, unit rows; zero rows where missing
    has_emb: np.ndarray | None

    @property
    def n(self) -> int:
        return len(self.ids)

    @cached_property
    def topic_array(self) -> np.ndarray:
        """The topics as an array, built once per index (the motion filter compares them)."""
        import numpy as np

        return np.asarray(self.topics, dtype=object)

    @classmethod
    def build(cls, store: Store, embed_model: str | None = None) -> MemoryIndex:
        import numpy as np

        _init_stop()
        gen = store.generation
        cols = store.columns()
        if not cols["id"]:
            raise ArgnbError(
                f"the memory {store.path} is empty",
                hint="add records with `argnb debate memory build --from ... PATH --db FILE`",
            )
        bm25, df = _bm25(store, cols["text"], gen)
        ann = store.annotations()
        known = list(load_schemes().ids)
        extra = sorted({s for a in ann.values() for s in a.labels} - set(known))
        scheme_ids = tuple(known + extra)
        col = {s: j for j, s in enumerate(scheme_ids)}
        scores = np.zeros((len(cols["id"]), len(scheme_ids)), dtype=np.int8)
        labels: list[dict[str, str | None]] = []
        annotated = np.zeros(len(cols["id"]), dtype=bool)
        for i, rid in enumerate(cols["id"]):
            a = ann.get(rid)
            labels.append(dict(a.labels) if a else {})
            if a:
                annotated[i] = True
                for s, lab in a.labels.items():
                    scores[i, col[s]] = 0 if lab is None else LABELS.index(lab) + 1
        emb = has = None
        if embed_model is not None:
            eids, mat = store.embeddings(embed_model)
            pos = {rid: i for i, rid in enumerate(cols["id"])}
            emb = np.zeros((len(cols["id"]), mat.shape[1]), dtype=np.float32)
            has = np.zeros(len(cols["id"]), dtype=bool)
            rows = np.fromiter((pos[r] for r in eids), dtype=np.int64, count=len(eids))
            emb[rows] = mat
            has[rows] = True
        return cls(
            generation=gen,
            ids=cols["id"],
            texts=cols["text"],
            topics=cols["topic"],
            sources=cols["source"],
            stance=np.array(cols["stance"]),
            bm25=bm25,
            df=df,
            scheme_ids=scheme_ids,
            scores=scores,
            labels=labels,
            annotated=annotated,
            embed_model=embed_model,
            emb=emb,
            has_emb=has,
        )

    def idf(self, term: str) -> float:
        return math.log(1 + (self.n - self.df.get(term, 0) + 0.5) / (self.df.get(term, 0) + 0.5))


def _cache_dir(store: Store) -> Path | None:
    if store.path == ":memory:":
        return None
    return Path(store.path + ".index")


def _bm25(store: Store, texts: list[str], gen: int) -> tuple[Any, dict[str, int]]:
    """The BM25 index and document frequencies: from the cache next to the database when it
    was built at this generation, else built (and saved there)."""
    import bm25s

    folder = _cache_dir(store)
    if folder is not None and (folder / "meta.json").is_file():
        try:
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
            if meta.get("generation") == gen and meta.get("n") == len(texts):
                bm25 = bm25s.BM25.load(str(folder / "bm25"), show_progress=False, verbosity=0)
                df = json.loads((folder / "df.json").read_text(encoding="utf-8"))
                return bm25, df
        except (OSError, ValueError, KeyError):
            pass  # a damaged cache is rebuilt
    # "_" stands in for a text made only of stop words (the tokenizer never produces it)
    tokens = [t or ["_"] for t in tokenize(texts)]
    df: Counter[str] = Counter()
    for toks in tokens:
        df.update(set(toks))
    bm25 = bm25s.BM25()
    bm25.index(tokens, show_progress=False)
    if folder is not None:
        try:
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            bm25.save(str(folder / "bm25"), show_progress=False)
            (folder / "df.json").write_text(json.dumps(df), encoding="utf-8")
            (folder / "meta.json").write_text(
                json.dumps({"generation": gen, "n": len(texts)}), encoding="utf-8"
            )
        except OSError:
            pass  # a read-only place: the index still works, it is just not cached
    return bm25, dict(df)


_INDEXES: dict[tuple[str, str | None], MemoryIndex] = {}
_INDEX_LOCK = threading.Lock()


def index_for(store: Store, embed_model: str | None = None) -> MemoryIndex:
    """The index of ``store`` for ``embed_model`` (built once per generation, then cached)."""
    key = (store.path if store.path != ":memory:" else f"mem:{id(store)}", embed_model)
    with _INDEX_LOCK:
        idx = _INDEXES.get(key)
        if idx is None or idx.generation != store.generation:
            idx = _INDEXES[key] = MemoryIndex.build(store, embed_model)
        return idx


# -- step 1: keywords --------------------------------------------------------------------
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
            lines.append(f"     {h.text[:110]}{'...' if len(h.text) > 110 else ''}")
        pri = ", ".join(
            f"{p.scheme} {p.mean:.2f}{'*' if p.kept else ''}" for p in self.priors if p.used
        )
        lines.append(
            f"priors (mean label over top {len(self.hits)}; * = above {self.threshold:g}): "
            f"{pri or 'no annotated scheme among the hits'}"
        )
        lines.append(f"exemplars: {', '.join(self.exemplars) or 'none'}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        e = html.escape
        rows = "".join(
            f"<tr><td>{h.rank}</td><td>{e(h.stance)}</td><td>{e(h.id)}</td>"
            f"<td>{'' if h.bm25 is None else f'{h.bm25:.2f}'}</td>"
            f"<td>{'' if h.cosine is None else f'{h.cosine:.3f}'}</td>"
            f"<td>{e(', '.join(f'{s}: {lab or chr(63)}' for s, lab in h.schemes.items()))}</td>"
            f"<td style='text-align:left'>{e(h.text[:300])}</td></tr>"
            for h in self.hits
        )
        pri = ", ".join(
            f"<b>{e(p.scheme)} {p.mean:.2f}</b>" if p.kept else f"{e(p.scheme)} {p.mean:.2f}"
            for p in self.priors
            if p.used
        )
        return (
            f"<div><p><b>Keywords</b> ({e(self.keyword_source)}): {e(', '.join(self.keywords))}</p>"
            f"<p>{len(self.candidates)} candidates, top {len(self.hits)} by {e(self.method)}; "
            f"stance filter: {e(str(self.stance or 'none'))}</p>"
            "<table><tr><th>#</th><th>stance</th><th>id</th><th>BM25</th><th>cosine</th>"
            f"<th>schemes</th><th>text</th></tr>{rows}</table>"
            f"<p><b>Scheme priors</b> (bold: kept, mean &gt; {self.threshold:g}): "
            f"{pri or 'none'}</p></div>"
        )


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
            from argnb.debate.annotate import akeywords

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
