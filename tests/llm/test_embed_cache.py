"""Embeddings in the response cache: compact rows, a damaged row is a miss, only misses are
computed, no secret in a key, ``cache=False`` respected."""

from __future__ import annotations

import json
import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from argnb.llm import ScriptedBackend
from argnb.llm.cache import (
    ResponseCache,
    as_float32,
    decode_vector,
    embed_key,
    encode_vector,
)
from argnb.llm.types import Reply

f32 = st.floats(width=32, allow_nan=False, allow_infinity=False)


@given(st.lists(f32, min_size=1, max_size=64))
def test_a_float32_vector_round_trips_exactly(vec):
    row = encode_vector(vec)
    assert decode_vector(row) == vec
    assert json.loads(row)["dim"] == len(vec)


@given(st.text())
def test_any_text_decodes_to_a_vector_or_none_never_an_error(row):
    out = decode_vector(row)
    assert out is None or isinstance(out, list)


@given(st.lists(f32, min_size=1, max_size=16), st.data())
def test_a_damaged_row_is_none(vec, data):
    obj = json.loads(encode_vector(vec))
    damage = data.draw(
        st.sampled_from(["cut", "dim", "format", "not-base64", "dim-type", "no-vector", "nan"])
    )
    if damage == "cut":
        obj["vector"] = obj["vector"][: data.draw(st.integers(0, len(obj["vector"]) - 1))]
    elif damage == "dim":
        obj["dim"] = data.draw(st.integers(-5, 100).filter(lambda n: n != len(vec)))
    elif damage == "format":
        obj["format"] = data.draw(st.text().filter(lambda t: t != "f32le-b64"))
    elif damage == "not-base64":
        obj["vector"] = "!" + obj["vector"][1:]
    elif damage == "dim-type":
        obj["dim"] = data.draw(st.one_of(st.none(), st.text(), st.floats(), st.booleans()))
    elif damage == "no-vector":
        del obj["vector"]
    else:
        obj["dim"], obj["vector"] = 1, "AADAfw=="  # a float32 NaN, little-endian
    assert decode_vector(json.dumps(obj)) is None


@pytest.mark.parametrize("bad", [[], [float("nan")], [float("inf")], [1e39]])
def test_what_float32_cannot_hold_is_refused(bad):
    with pytest.raises(ValueError):
        encode_vector(bad)


@given(st.lists(st.floats(-1e30, 1e30), min_size=1, max_size=16))
def test_a_fresh_vector_is_given_as_the_cache_will_give_it_back(vec):
    assert decode_vector(encode_vector(vec)) == as_float32(vec)


def test_a_row_is_compact():
    row = encode_vector([0.1] * 576)  # SmolLM2's width
    assert len(row) < 3200  # 2,304 bytes of float32 in base64, a few bytes of JSON


class Counting(ScriptedBackend):
    """Scripted bag-of-letters embeddings that count what reached the "model"."""

    def __init__(self, **kw):
        super().__init__([], **kw)
        self.asked: list[list[str]] = []

    def embed(self, texts):
        self.asked.append(list(texts))
        return super().embed(texts)


def test_only_misses_reach_the_model_and_the_second_run_asks_nothing(tmp_path):
    b = Counting(cache=ResponseCache(tmp_path / "c.sqlite"))
    first = b.cached_embed(["cats purr", "dogs bark", "cats purr"])
    assert b.asked == [["cats purr", "dogs bark"]]  # a repeated text once
    want = ScriptedBackend([]).embed(["cats purr", "dogs bark"])
    assert first[0] == first[2] and first[:2] == [as_float32(v) for v in want]
    again = b.cached_embed(["dogs bark", "owls hoot", "cats purr"])
    assert b.asked[1:] == [["owls hoot"]]
    assert again[0] == first[1] and again[2] == first[0]
    fresh = Counting(cache=ResponseCache(tmp_path / "c.sqlite"))  # a later session
    assert fresh.cached_embed(["cats purr", "owls hoot"]) == [first[0], again[1]]
    assert fresh.asked == []


def test_without_a_cache_every_call_reaches_the_model():
    b = Counting()
    b.cached_embed(["a b"])
    b.cached_embed(["a b"])
    assert b.asked == [["a b"], ["a b"]]


def test_a_damaged_row_is_computed_again_and_repaired(tmp_path):
    path = tmp_path / "c.sqlite"
    b = Counting(cache=ResponseCache(path))
    want = b.cached_embed(["cats purr", "dogs bark"])
    con = sqlite3.connect(path)
    with con:
        con.execute("UPDATE replies SET reply = substr(reply, 1, 40)")  # both rows cut short
        key = embed_key(b.embed_identity(), "dogs bark")
        con.execute("UPDATE replies SET reply = 'not json' WHERE key = ?", (key,))
    con.close()
    b.asked.clear()
    assert b.cached_embed(["cats purr", "dogs bark"]) == want
    assert b.asked == [["cats purr", "dogs bark"]]
    b.asked.clear()
    assert b.cached_embed(["cats purr", "dogs bark"]) == want and b.asked == []


def test_replies_and_vectors_share_the_table_without_mixing(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k1", Reply(text="hello"))
    cache.put_vectors({"k2": [0.5, 0.25]})
    assert cache.get_vectors(["k1", "k2", "nope"]) == {"k2": [0.5, 0.25]}
    assert cache.get("k1").text == "hello"
    assert len(cache) == 2 and cache.clear() == 2 and cache.get_vectors(["k2"]) == {}


def test_a_vector_float32_cannot_hold_is_not_stored(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put_vectors({"good": [1.0], "bad": [float("nan")]})
    assert cache.get_vectors(["good", "bad"]) == {"good": [1.0]}


def test_many_keys_are_looked_up_in_parts(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put_vectors({f"k{i}": [float(i)] for i in range(1200)})
    got = cache.get_vectors(f"k{i}" for i in range(1300))
    assert len(got) == 1200 and got["k1199"] == [1199.0]


def test_the_key_names_the_embedding_model_and_the_text_never_the_api_key():
    from argnb.llm import OpenAIBackend

    a = OpenAIBackend("gpt-4o-mini", api_key="sk-very-secret", embed_model="text-embedding-3-small")
    b = OpenAIBackend("gpt-4o-mini", api_key="sk-very-secret", embed_model="other")
    assert "sk-very-secret" not in json.dumps(a.embed_identity())
    assert a.embed_identity()["embed_model"] == "text-embedding-3-small"
    assert embed_key(a.embed_identity(), "x") != embed_key(b.embed_identity(), "x")
    assert embed_key(a.embed_identity(), "x") != embed_key(a.embed_identity(), "x ")


def test_the_local_identity_names_the_pooling_not_the_chat_settings():
    from argnb.llm.local import embedded_gguf

    if embedded_gguf() is None:
        pytest.skip("the embedded GGUF is not installed")
    from argnb.llm import LocalBackend

    a, b = LocalBackend(), LocalBackend(repeat_penalty=1.1)
    assert a.embed_identity() == b.embed_identity()  # same weights, same vectors
    assert a.embed_identity()["pooling"] == "mean"
