"""Near-duplicate premises: normalised text, token similarity, polarity, embeddings."""

from __future__ import annotations

from argnb.dialectic.novelty import PremiseMemory, best_match, normalise, polarity, similarity


def test_normalise():
    assert normalise("  A is  COMPACT. ") == "a is compact"
    assert normalise("ｂ ｉｓ over-budget!") == "b is over budget"


def test_similarity_separates_objects_and_keeps_rephrasings_close():
    assert similarity("a is a camera.", "A is a camera") == 1.0
    assert similarity("a is a camera", "b is a camera") < 0.9
    long_a = "If a camera has high image quality and long battery life, we should buy it."
    long_b = "if a camera has high image quality and a long battery life we should buy it"
    assert similarity(long_a, long_b) >= 0.9


def test_polarity_flips_with_negation():
    assert polarity("we should buy b") and not polarity("we should not buy b")
    assert not polarity("we shouldn't buy b") and polarity(
        "it is not the case that it is not raining"
    )
    assert similarity("b is over budget", "b is not over budget") == 0.0


def test_memory_reports_reuse_per_side():
    mem = PremiseMemory()
    mem.remember("AG1", ["a is compact", "a is light"])
    assert mem.reused("AG1", ["A is compact!", "c is light"]) == [("A is compact!", "a is compact")]
    assert mem.reused("AG2", ["a is compact"]) == []
    assert mem.used("AG1") == ["a is compact", "a is light"]


def test_embeddings_catch_paraphrases_when_given():
    vectors = {"the camera is light": [1.0, 0.0], "the camera weighs little": [0.99, 0.05]}
    calls = []

    def embed(texts):
        calls.append(list(texts))
        return [vectors.get(t, [0.0, 1.0]) for t in texts]

    plain = PremiseMemory()
    plain.remember("A", ["the camera is light"])
    assert plain.reused("A", ["the camera weighs little"]) == []
    semantic = PremiseMemory(embed=embed)
    semantic.remember("A", ["the camera is light"])
    assert semantic.reused("A", ["the camera weighs little"]) == [
        ("the camera weighs little", "the camera is light")
    ]
    assert semantic.reused("A", ["the battery lasts"]) == []
    assert calls  # the embedder was used


def test_a_backend_without_embeddings_falls_back_to_text():
    def broken(texts):
        raise NotImplementedError("no embeddings here")

    mem = PremiseMemory(embed=broken)
    mem.remember("A", ["x is y"])
    assert mem.reused("A", ["x is y", "z is w"]) == [("x is y", "x is y")]
    assert mem.embed is None


def test_best_match():
    conc = ["a is user-friendly", "We should buy a."]
    assert best_match("we should buy a", conc) == 1
    assert best_match("buy a", conc) == 1  # contained phrase
    assert best_match("a", conc) is None  # too short to be a reference
    assert best_match("something else entirely", conc) is None
