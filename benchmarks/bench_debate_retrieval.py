"""Retrieval quality on IBM claim-stance: can a motion find its own claims among 2,394?

python benchmarks/bench_debate_retrieval.py

Memory: every claim of ``../shared/data/ibm-claim-stance`` (55 motions). Query: a motion's text,
through the real pipeline (lexical keywords -> BM25 candidates -> cosine re-rank); relevant: the
claims of that motion. P@10 and nDCG@10 (binary gains); R@10 is capped at 10/|relevant| (about
0.23 for the mean motion's 44 claims). Stance: for each motion and each side, the share of the top
10 that are that motion's claims *of that side* -- with the stance filter (what the debater uses)
and without it (what the ranking alone gives). Each row names its embedding model.
"""

from __future__ import annotations

import math
import statistics
import time
from collections import defaultdict

from _common import table
from bench_debate_common import CACHE, DATA, have_data, local, minilm, skipped

K = 10


def _memory():
    from argnb.debate.corpora import build
    from argnb.debate.memory import Store

    CACHE.mkdir(parents=True, exist_ok=True)
    store = Store(CACHE / "debate-claims.db")
    build(store, "claims", DATA / "ibm-claim-stance" / "items.jsonl")
    return store


def _ndcg(ranked: list[bool], n_rel: int) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, r in enumerate(ranked) if r)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(K, n_rel)))
    return dcg / ideal if ideal else 0.0


def evaluate(store, embedder, method: str) -> dict:
    from argnb.debate.retrieve import Retriever, index_for, lexical_keywords

    recs = store.records()
    topic = {r.id: r.debate_id for r in recs}
    side = {r.id: r.stance for r in recs}
    motions: dict[str, str] = {}
    rel: dict[str, set[str]] = defaultdict(set)
    for r in recs:
        motions[r.debate_id] = r.topic
        rel[r.debate_id].add(r.id)
    r = Retriever(store, embedder, method=method, k=K, candidates=200)
    idx = index_for(store, embedder.name if embedder else None)
    p10, r10, nd, filt, unfilt, ms = [], [], [], [], [], []
    for did, text in motions.items():
        kw = lexical_keywords(text, idx, 8)
        qvec = embedder.embed([text])[0] if embedder is not None and method != "bm25" else None
        t0 = time.perf_counter()
        tr = r.rank(idx, text, kw, qvec, stance=None, k=K)
        ms.append((time.perf_counter() - t0) * 1000)
        hits = [h.id for h in tr.hits]
        good = [topic[h] == did for h in hits]
        p10.append(sum(good) / K)
        r10.append(sum(good) / len(rel[did]))
        nd.append(_ndcg(good, len(rel[did])))
        for s in ("pro", "con"):
            unfilt.append(sum(topic[h] == did and side[h] == s for h in hits) / K)
            fhits = [h.id for h in r.rank(idx, text, kw, qvec, stance=s, k=K).hits]
            filt.append(sum(topic[h] == did and side[h] == s for h in fhits) / K)
    return {
        "method": method,
        "embedding model": embedder.name if embedder is not None and method != "bm25" else "-",
        "motions": len(motions),
        "P@10": f"{statistics.mean(p10):.3f}",
        "R@10": f"{statistics.mean(r10):.3f}",
        "nDCG@10": f"{statistics.mean(nd):.3f}",
        "same-stance@10 filter": f"{statistics.mean(filt):.3f}",
        "same-stance@10 no filter": f"{statistics.mean(unfilt):.3f}",
        "rank ms p50": f"{statistics.median(ms):.1f}",
        "embed records/s": "-",
    }


def run() -> list[dict]:
    if not have_data():
        return skipped("debate retrieval quality", "../shared/data is not present")
    from argnb.debate.embed import BackendEmbedder, embed_store

    store = _memory()
    rows = [evaluate(store, None, "bm25")]
    for emb in (minilm(), (BackendEmbedder(b) if (b := local()) else None)):
        if emb is None:
            continue
        s = embed_store(store, emb, progress=False)
        for method in ("embedding", "hybrid"):
            row = evaluate(store, emb, method)
            row["embed records/s"] = s.per_s if s.embedded else "cached"
            rows.append(row)
    return rows


if __name__ == "__main__":
    print(table("debate retrieval on IBM claim-stance (2,394 claims, 55 motions)", run()))
