"""What crosses between the checker and a student's kernel: plain data, decoded by the checker."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pandas as pd
import pytest

from argnb.dialectic import Argument
from argnb.exercises import codec


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1, (1, "x"): {2, 3}, 4: [None, True, 2.5]},
        (1, "two", frozenset({3})),
        [math.inf, -math.inf, 2**80],
        np.array([[1.0, 2.0], [3.0, 4.0]]),
        pd.Series([0.5, 1.0], index=["news", "textbook"], name="accuracy"),
        Argument.simple(["p", "If p then q"], "q", ["nothing speaks against q"]),
    ],
)
def test_values_round_trip(value):
    back = codec.loads(codec.dumps(value))
    if isinstance(value, np.ndarray):
        assert back.dtype == value.dtype and (back == value).all()
    elif isinstance(value, pd.Series):
        assert back.equals(value) and back.name == value.name
    else:
        assert back == value and type(back) is type(value)


def test_frames_random_generators_and_iterators():
    df = pd.DataFrame({"gold": [0, 1, 1], "pred": [0, "invalid", 1]})
    assert codec.loads(codec.dumps(df)).equals(df)
    rng = random.Random(7)
    copy = codec.loads(codec.dumps(rng))
    assert [copy.random() for _ in range(3)] == [rng.random() for _ in range(3)]
    assert codec.loads(codec.dumps(x * 2 for x in range(3))) == [0, 2, 4]
    assert codec.loads(codec.dumps({"a": 1}.items())) == [("a", 1)]
    assert math.isnan(codec.loads(codec.dumps(math.nan)))


def test_what_a_student_could_send_is_refused_or_made_plain():
    class Liar:
        def __eq__(self, other):
            return True

    class LiarInt(int):
        def __eq__(self, other):
            return True

        __hash__ = int.__hash__

    with pytest.raises(codec.CodecError, match="type Liar cannot be graded"):
        codec.dumps(Liar())
    back = codec.loads(codec.dumps(LiarInt(0)))
    assert type(back) is int and back != 3  # it arrives as its number, and compares as one
    for forged in (
        {"$model": "os:system", "data": {}},  # only the listed models are built
        {"$ndarray": {"dtype": "object", "data": [1]}},
        {"$random": [1, 2]},
        {"$set": [[1, 2]]},  # a list is no set item
        {"$nope": 1},
        {"a": 1},  # a plain JSON object is not a value the checker sends
    ):
        with pytest.raises(codec.CodecError):
            codec.loads(json.dumps(forged))
    with pytest.raises(codec.CodecError, match="too large"):
        codec.loads(" " * (codec.MAX_BYTES + 1))
    with pytest.raises(codec.CodecError):
        codec.loads("[" * 100_000 + "]" * 100_000)
