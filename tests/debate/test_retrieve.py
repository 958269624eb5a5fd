from __future__ import annotations

import json

import numpy as np
import pytest

from argnb.debate import index as memory_index
from argnb.debate.embed import BackendEmbedder, embed_store
from argnb.debate.memory import Store
from argnb.debate.retrieve import RetrievalTrace, Retriever, index_for, lexical_keywords, retrieve
from argnb.errors import ArgnbError
from argnb.llm import ScriptedBackend

from .conftest import rec


@pytest.fixture
def emb():
    return BackendEmbedder(ScriptedBackend([]))


@pytest.fixture
def embedded(tiny, emb):
    embed_store(tiny, emb, progress=False)
    return tiny


def test_priors_are_mean_label_scores_over_the_top_k(tiny):
    # pro records matching "cars": t/cars/0.0 (cause good, positive excellent) and
    # t/cars/2.0 (example good, positive good) -> positive (4+3)/2 = 3.5 > 2; cause and example 1.5
    tr = retrieve(tiny, "x", keywords=["cars"], stance="pro", k=2)
    assert {h.id for h in tr.hits} == {"t/cars/0.0", "t/cars/2.0"}
    means = {p.scheme: p.mean for p in tr.priors if p.used}
    assert means == {"positive_consequences": 3.5, "cause_to_effect": 1.5, "example": 1.5}
    assert tr.kept_schemes == ["positive_consequences"]
    assert set(tr.exemplars) == {"t/cars/0.0", "t/cars/2.0"}
    con = retrieve(tiny, "x", keywords=["cars"], stance="con", k=2)
    assert (
        {h.stance for h in con.hits} == {"con"} and con.kept_schemes == [] and con.exemplars == []
    )
    low = retrieve(tiny, "x", keywords=["cars"], stance="pro", k=2, threshold=1.4)
    assert set(low.kept_schemes) == {"example", "positive_consequences", "cause_to_effect"}


def test_unused_schemes_count_zero_and_k_divides(tiny):
    # all four car records: positive (4+3)/4 = 1.75 -> nothing above 2
    tr = retrieve(tiny, "x", keywords=["cars"], k=4)
    assert len(tr.hits) == 4
    assert {p.scheme: p.mean for p in tr.priors}["positive_consequences"] == 1.75
    assert tr.kept_schemes == [] and tr.annotated_hits == 4


def test_hybrid_reranks_the_keyword_candidates_by_cosine(embedded, emb):
    history = "Shops in the centre keep customers when cars are banned, as Oslo showed."
    tr = Retriever(embedded, emb, k=3).retrieve(history)
    cand = {c["id"] for c in tr.candidates}
    assert {h.id for h in tr.hits} <= cand
    q = emb.embed([history])[0]
    ids, mat = embedded.embeddings(emb.name)
    want = {i: float(v @ q) for i, v in zip(ids, mat, strict=True)}
    assert [h.cosine for h in tr.hits] == sorted((h.cosine for h in tr.hits), reverse=True)
    for h in tr.hits:
        assert h.cosine == pytest.approx(want[h.id], abs=1e-4) and h.via == "bm25+cosine"
    assert tr.embed_model == "scripted:letters" and tr.keyword_source == "lexical"
    assert set(tr.timings_ms) >= {"keywords", "embed_query", "coarse", "rerank", "priors"}


def test_too_few_keyword_matches_are_filled_from_the_dense_ranking(embedded, emb):
    tr = Retriever(embedded, emb, k=3).retrieve("x", keywords=["oslo"])
    assert [h.via for h in tr.hits] == ["bm25+cosine", "embedding (fill)", "embedding (fill)"]
    assert tr.hits[0].id == "t/cars/2.0" and len({h.id for h in tr.hits}) == 3


def test_embedding_and_bm25_methods(embedded, emb):
    d = Retriever(embedded, emb, method="embedding", k=6).retrieve("homework tired", stance="pro")
    assert len(d.hits) == 3 and all(h.stance == "pro" for h in d.hits)
    b = Retriever(embedded, None, method="bm25", k=2).retrieve("x", keywords=["homework"])
    assert b.hits[0].id.startswith("t/school") and all(h.cosine is None for h in b.hits)


def test_lexical_keywords_prefer_rare_memory_terms(tiny):
    idx = index_for(tiny)
    kw = lexical_keywords("Cars cars cars pollute the centre; children breathe it.", idx, 3)
    assert kw[0] == "breathe" and "pollute" not in kw and "the" not in kw


def test_the_keyword_agent_is_recorded_and_its_failure_falls_back(tiny):
    good = ScriptedBackend([{"keywords": ["Oslo", "shops"]}])
    tr = Retriever(tiny, keyword_backend=good, method="bm25").retrieve("some history")
    assert tr.keywords == ["Oslo", "shops"] and tr.keyword_source.startswith("agent")
    assert tr.cost.calls == 1 and tr.turns[0].payload.kind == "debate.keywords"
    bad = ScriptedBackend([{"keywords": []}, {"keywords": []}])
    tr = Retriever(tiny, keyword_backend=bad, method="bm25").retrieve("Oslo shops")
    assert tr.keyword_source.startswith("lexical") and tr.keywords and tr.cost.calls == 2


def test_trace_round_trips_becomes_a_turn_and_escapes_html(tiny):
    tiny.add([rec("x", 0, "pro", "<script>alert(1)</script> cars are dangerous here")])
    tr = retrieve(tiny, "cars", k=3)
    back = RetrievalTrace.model_validate(json.loads(json.dumps(tr.to_dict())))
    assert back.hits == tr.hits and back.priors == tr.priors
    turn = tr.to_turn()
    assert turn.payload.kind == "debate.retrieval" and len(turn.payload.records) == 3
    html = tr._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert len(tr.to_frame()) == 3 and "mean" in tr.priors_frame().columns
    assert "keywords (lexical)" in str(tr)


def test_the_bm25_index_is_cached_on_disk_until_the_memory_changes(tmp_path, monkeypatch):
    s = Store(tmp_path / "m.db")
    s.add([rec("d", i, "pro", f"Argument {i} about taxes and schools.") for i in range(5)])
    idx = index_for(s)
    meta = json.loads((tmp_path / "m.db.index" / "meta.json").read_text())
    assert meta == {"generation": s.generation, "n": 5}
    memory_index._INDEXES.clear()
    import bm25s

    def refuse(*a, **k):
        raise AssertionError("rebuilt")

    monkeypatch.setattr(bm25s.BM25, "index", refuse)
    again = index_for(s)  # from the disk cache: no indexing
    assert again.df == idx.df
    assert index_for(s) is again  # and from the process cache
    s.add([rec("d", 9, "pro", "A new argument.")])
    with pytest.raises(AssertionError, match="rebuilt"):
        index_for(s)


def test_a_new_memory_store_never_gets_the_index_of_a_dead_one():
    # CPython hands a freed object's address to the next one: keyed by id(), a new
    # in-memory store at the same generation got the dead store's index (a flake in CI)
    for i in range(30):
        old = Store()
        old.add([rec("old", i, "pro", "Bicycles are quiet.")])
        index_for(old)
        del old
        new = Store()
        new.add([rec("new", i, "pro", "Trains are fast.")])
        assert index_for(new).ids == [f"t/new/{i}.0"]
        key = (new.cache_key, None)
        del new
        assert key not in memory_index._INDEXES  # and its index is gone with it


def test_clear_errors():
    with pytest.raises(ArgnbError, match="empty"):
        retrieve(Store(), "x")
    s = Store()
    s.add([rec("d", 0, "pro", "Something.")])
    with pytest.raises(ArgnbError, match="history is empty"):
        retrieve(s, "  ")
    with pytest.raises(ArgnbError, match="stance"):
        retrieve(s, "x", stance="neutral")
    with pytest.raises(ArgnbError, match="embedding model"):
        Retriever(s, None, method="hybrid")
    with pytest.raises(ArgnbError, match="no embeddings by"):
        Retriever(s, BackendEmbedder(ScriptedBackend([]))).retrieve("x")


def test_embedding_is_resumable(tiny, emb):
    first = embed_store(tiny, emb, limit=2, progress=False)
    rest = embed_store(tiny, emb, progress=False)
    assert (first.embedded, rest.embedded, rest.already) == (2, 4, 2)
    ids, mat = tiny.embeddings(emb.name)
    assert len(ids) == 6 and np.allclose(np.linalg.norm(mat, axis=1), 1.0, atol=1e-5)
