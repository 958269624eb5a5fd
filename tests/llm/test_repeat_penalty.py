"""The embedded backend's repetition penalty (llama.cpp's ``repeat_penalty``): off by default,
part of the cache key when set, and deterministic when on (the real model: ``-m model``)."""

from __future__ import annotations

import pytest

from argnb.errors import ArgnbError
from argnb.llm import Ledger, LocalBackend, Options
from argnb.llm.base import Message
from argnb.llm.cache import cache_key
from argnb.llm.local import REPEAT_PENALTY


@pytest.fixture
def gguf(tmp_path):
    p = tmp_path / "m.gguf"  # never loaded: these tests look at the request only
    p.write_bytes(b"")
    return str(p)


def test_off_by_default_sent_to_llama_cpp_and_a_cache_key_of_its_own(gguf):
    off, on = LocalBackend(gguf), LocalBackend(gguf, repeat_penalty=1.1)
    msgs, opts = [Message(role="user", content="hi")], Options()
    assert REPEAT_PENALTY == 1.0 and off.repeat_penalty == 1.0
    assert off._kwargs(msgs, None, opts, stream=False)["repeat_penalty"] == 1.0
    assert on._kwargs(msgs, None, opts, stream=True)["repeat_penalty"] == 1.1
    assert "repeat_penalty" not in off.describe()  # the default keeps earlier cache keys
    assert cache_key(off.describe(), msgs, None, opts) != cache_key(on.describe(), msgs, None, opts)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "1.1"])
def test_a_penalty_out_of_range_is_refused(gguf, bad):
    with pytest.raises(ArgnbError, match="repeat_penalty"):
        LocalBackend(gguf, repeat_penalty=bad)


LOOPY = [
    {"role": "system", "content": "You are a student in a discussion. Answer in plain prose."},
    {"role": "user", "content": "Should AI replace human teachers? Say what you think, twice."},
]


@pytest.mark.model
def test_with_the_penalty_replies_are_byte_identical_and_do_not_depend_on_earlier_requests(local):
    on = LocalBackend(repeat_penalty=1.1, ledger=Ledger())
    cold = LocalBackend(repeat_penalty=1.1, prefix_cache=False, ledger=Ledger())
    assert on.llm is local.llm  # the same weights: only the sampler differs
    opts = Options(max_tokens=80)
    first = on.chat(LOOPY, options=opts).text
    local.chat([{"role": "user", "content": "Name a colour."}], options=opts)  # in between
    again = on.chat(LOOPY, options=opts).text
    assert first == again == cold.chat(LOOPY, options=opts).text
    assert first != local.chat(LOOPY, options=opts).text, "the penalty reached the sampler"
