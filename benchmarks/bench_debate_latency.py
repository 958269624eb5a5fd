"""Retrieval latency over a memory of the whole IQ2 + IBM speeches corpora (~19k records).

python benchmarks/bench_debate_latency.py

The retrieval step without model calls -- lexical keywords, BM25 candidates, cosine re-rank over
the stored embeddings, scheme priors -- for 200 debate histories (four consecutive debater turns
of IQ2 debates). Target: p50 < 20 ms. The query embedding is a model call and is reported on its
own row, as are index loading (cold: BM25 built from SQLite; warm: from the cache next to the
database) and embedding throughput when building a memory.

Embeddings: the memory's all-MiniLM-L6-v2 vectors when the cached memory has them for every
record (``argnb debate memory embed --db $CACHE/debate-full.db --embedder minilm`` takes 40+
minutes on 2 busy cores); otherwise random unit vectors of the same size, named as such --
latency does not depend on the vectors' values.
"""

from __future__ import annotations

import json
import random
import statistics
import time

from _common import table
from bench_debate_common import CACHE, DATA, have_data, local, minilm, skipped

N_QUERIES = 200


def _memory():
    from argnb.debate.corpora import build
    from argnb.debate.memory import Store

    CACHE.mkdir(parents=True, exist_ok=True)
    store = Store(CACHE / "debate-full.db")
    build(store, "iq2", DATA / "iq2-debates" / "items.jsonl")
    build(store, "ibm-speeches", DATA / "ibm-debate-speeches" / "items.jsonl")
    return store


def _vectors(store):
    """(embedding model name, query embedder or None) -- real MiniLM vectors when complete."""
    import numpy as np

    models = store.embedding_models()
    n = store.count()
    if models.get("minilm:all-MiniLM-L6-v2") == n:
        return "minilm:all-MiniLM-L6-v2", minilm()
    name = "random-384 (latency only)"
    if models.get(name) != n:
        rng = np.random.default_rng(0)
        ids = [r.id for r in store.records()]
        store.put_embeddings(name, ids, rng.standard_normal((len(ids), 384)))
    return name, None


def _histories() -> list[str]:
    with open(DATA / "iq2-debates" / "items.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    turns = [r for r in rows if r["stance"] in ("pro", "con") and len(r["text"].split()) > 30]
    rng = random.Random(0)
    out = []
    for _ in range(N_QUERIES):
        i = rng.randrange(len(turns) - 4)
        out.append("\n\n".join(t["text"] for t in turns[i : i + 4]))
    return out


def _pct(xs: list[float], q: float) -> float:
    return statistics.quantiles(xs, n=100)[int(q) - 1]


def run() -> list[dict]:
    if not have_data():
        return skipped("debate retrieval latency", "../shared/data is not present")
    import numpy as np

    from argnb.debate import index as memory_index
    from argnb.debate import retrieve as R
    from argnb.debate.retrieve import index_for, lexical_keywords, rank

    store = _memory()
    model, embedder = _vectors(store)
    n = store.count()
    for p in (CACHE / "debate-full.db.index").glob("*"):
        if p.name == "meta.json":
            p.unlink()  # force a cold build
    t0 = time.perf_counter()
    idx = index_for(store, model)
    cold = time.perf_counter() - t0
    memory_index._INDEXES.clear()
    t0 = time.perf_counter()
    idx = index_for(store, model)
    warm = time.perf_counter() - t0
    rng = np.random.default_rng(1)
    hist = _histories()
    qvecs = (
        embedder.embed([R._tail(h) for h in hist])
        if embedder is not None
        else rng.standard_normal((len(hist), idx.emb.shape[1])).astype("float32")
    )
    total, steps = [], {"keywords": [], "coarse": [], "rerank": [], "priors": []}
    for h, q in zip(hist, qvecs, strict=True):
        t0 = time.perf_counter()
        kw = lexical_keywords(h, idx, 8)
        t1 = time.perf_counter()
        tr = rank(idx, h, kw, q / np.linalg.norm(q), stance=str(rng.choice(["pro", "con"])), k=5)
        total.append((time.perf_counter() - t0) * 1000)
        steps["keywords"].append((t1 - t0) * 1000)
        for s in ("coarse", "rerank", "priors"):
            steps[s].append(tr.timings_ms[s])
    p50, p95 = statistics.median(total), _pct(total, 95)
    rows = [
        {
            "benchmark": f"retrieval step, {n} records, k=5, stance filter (no model calls)",
            "embedding": model,
            "value": f"p50 {p50:.1f} ms, p95 {p95:.1f} ms",
            "detail": ", ".join(f"{s} {statistics.median(v):.2f}" for s, v in steps.items()),
            "target": "p50 < 20 ms",
            "pass": p50 < 20,
        },
        {
            "benchmark": "index load (BM25 + embedding matrix + labels)",
            "embedding": model,
            "value": f"cold {cold:.1f} s, warm {warm:.2f} s",
            "detail": "warm: BM25 from the cache next to the database",
            "target": "",
            "pass": "",
        },
    ]
    texts = [rec.text for rec in store.records(limit=256)]
    for emb, count in ((minilm(), 256), ((local() and _local_embedder()), 32)):
        if emb is None:
            continue
        emb.embed(texts[:2])  # load
        t0 = time.perf_counter()
        emb.embed(texts[:count])
        dt = time.perf_counter() - t0
        t1 = time.perf_counter()
        for h in hist[:20]:
            emb.embed([R._tail(h)])
        q_ms = (time.perf_counter() - t1) * 1000 / 20
        rows.append(
            {
                "benchmark": f"embedding throughput ({count} memory records) / one query",
                "embedding": emb.name,
                "value": f"{count / dt:.1f} records/s; query {q_ms:.0f} ms",
                "detail": "memory build; the query embedding is per retrieval",
                "target": "",
                "pass": "",
            }
        )
    return rows


def _local_embedder():
    from argnb.debate.embed import BackendEmbedder

    return BackendEmbedder(local())


if __name__ == "__main__":
    print(table("debate retrieval latency (IQ2 + IBM speeches memory)", run()))
