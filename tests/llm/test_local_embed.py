"""The embedded model's embeddings are mean-pooled over every token (marked ``model``).

Before the fix the embedding context pooled nothing (llama.cpp's NONE for a decoder model) and
the first token's hidden state was kept: in a causal model it depends on the first token only,
so every text starting with the same word got the same vector.
"""

from __future__ import annotations

import math

import pytest

SAME_START = ["Banks should be regulated more strictly.", "Banks of the river flood in spring."]


def _unit(v):
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def _cos(a, b):
    return sum(x * y for x, y in zip(_unit(a), _unit(b), strict=True))


@pytest.mark.model
def test_texts_with_the_same_first_word_get_different_vectors(local):
    a, b = local.embed(SAME_START)
    assert _cos(a, b) < 0.99  # the first token's state alone gave exactly 1.0
    assert math.isclose(sum(x * x for x in a), 1.0, rel_tol=1e-4)


@pytest.mark.model
def test_the_vector_is_the_mean_of_the_token_states(local):
    import llama_cpp

    from argnb.llm.local import EMBED_TOKENS

    per_token = llama_cpp.Llama(  # the same weights, every token's last hidden state
        model_path=str(local.path),
        n_ctx=EMBED_TOKENS,
        n_batch=EMBED_TOKENS,
        n_ubatch=EMBED_TOKENS,
        n_threads=local.n_threads,
        embedding=True,
        pooling_type=llama_cpp.LLAMA_POOLING_TYPE_NONE,
        verbose=False,
    )
    try:
        for text, got in zip(SAME_START, local.embed(SAME_START), strict=True):
            rows = per_token.embed(text)
            assert len(rows) == len(per_token.tokenize(text.encode())) > 3
            mean = [sum(col) / len(rows) for col in zip(*rows, strict=True)]
            want = _unit(mean)
            assert max(abs(x - y) for x, y in zip(got, want, strict=True)) < 1e-4
            assert _cos(got, rows[0]) < 0.99  # and not the first token's state
    finally:
        per_token.close()


@pytest.mark.model
def test_a_texts_vector_does_not_depend_on_the_others_in_the_call(local):
    texts = [*SAME_START, "", "Cars pollute the city centre."]
    together = local.embed(texts)
    alone = [local.embed([t])[0] for t in texts]
    assert together == alone  # exactly: a resumed run, a cache hit and a query agree
    assert together[2] == [0.0] * len(together[0])  # no tokens: a zero vector, no crash


@pytest.mark.model
def test_loading_for_embeddings_prints_nothing_a_lesson_would_show():
    import subprocess
    import sys

    code = "from argnb.llm import LocalBackend; print(len(LocalBackend().embed(['x'])[0]))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "576"
    assert "pooling" not in r.stderr  # llama.cpp's notice about the pooling we chose
