"""A memory embedded again (a learner re-running the lesson) takes its vectors from the response
cache; ``cache=False`` (``--no-cache``) never touches it."""

from __future__ import annotations

import numpy as np

from argnb.debate.corpora import example_memory
from argnb.debate.embed import BackendEmbedder, embed_store, embedder_from_spec
from argnb.llm import ScriptedBackend
from argnb.llm.cache import ResponseCache


class Counting(ScriptedBackend):
    def __init__(self, **kw):
        super().__init__([], **kw)
        self.embedded = 0

    def embed(self, texts):
        self.embedded += len(texts)
        return super().embed(texts)


def test_the_lesson_run_again_embeds_nothing_and_gets_the_same_vectors(tmp_path):
    first = Counting(cache=ResponseCache(tmp_path / "r.sqlite"))
    a = example_memory()
    assert embed_store(a, BackendEmbedder(first), progress=False).embedded == 40
    assert first.embedded == 40

    again = Counting(cache=ResponseCache(tmp_path / "r.sqlite"))  # a new kernel, same cache
    b = example_memory()
    assert embed_store(b, BackendEmbedder(again), progress=False).embedded == 40  # into memory b
    assert again.embedded == 0  # ... from the cache
    ids_a, mat_a = a.embeddings("scripted:letters")
    ids_b, mat_b = b.embeddings("scripted:letters")
    assert ids_a == ids_b and np.array_equal(mat_a, mat_b)


def test_embedder_from_spec_follows_the_cache_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("ARGNB_CACHE_DIR", str(tmp_path))
    off = embedder_from_spec("ollama:nomic-embed-text", cache=False)
    on = embedder_from_spec("ollama:nomic-embed-text", cache=True)
    assert off.backend.cache is None
    assert isinstance(on.backend.cache, ResponseCache)
    assert on.backend.cache.path == tmp_path / "responses.sqlite"
    assert on.backend.embed_identity()["embed_model"] == "nomic-embed-text"
    monkeypatch.setenv("ARGNB_CACHE", "0")
    assert embedder_from_spec("ollama:nomic-embed-text").backend.cache is None
    monkeypatch.setenv("ARGNB_CACHE", "1")
    assert embedder_from_spec("ollama:nomic-embed-text").backend.cache is not None
