import sqlite3

from pydantic import BaseModel

from argnb.llm import Ledger, Options, ScriptedBackend, structured_call
from argnb.llm.base import Message
from argnb.llm.cache import ResponseCache, cache_key


class A(BaseModel):
    x: int


def _key(**over):
    args = {
        "identity": {"backend": "b", "model": "m"},
        "messages": [Message(role="user", content="hi")],
        "schema": {"type": "object"},
        "options": Options(),
    }
    args.update(over)
    return cache_key(args["identity"], args["messages"], args["schema"], args["options"])


def test_cache_key_is_stable_and_sensitive_to_everything_that_changes_a_reply():
    base = _key()
    assert base == _key()
    assert base != _key(identity={"backend": "b", "model": "other"})
    assert base != _key(messages=[Message(role="user", content="hi!")])
    assert base != _key(schema=None)
    assert base != _key(options=Options(temperature=0.7))
    assert base != _key(options=Options(seed=1))


def test_second_run_is_served_from_cache_without_model_calls(tmp_path):
    ledger = Ledger()
    cache = ResponseCache(tmp_path / "c.sqlite")
    b = ScriptedBackend(lambda req: {"x": len(req.last)}, cache=cache, ledger=ledger)
    first = [structured_call(b, f"q{i}", A).value for i in range(5)]
    assert len(b.requests) == 5
    second = [structured_call(b, f"q{i}", A).value for i in range(5)]
    assert second == first
    assert len(b.requests) == 5  # no new model call
    assert ledger.calls() == 5 and ledger.calls(include_cached=True) == 10
    df = ledger.to_dataframe()
    assert df.loc[0, "calls"] == 5 and df.loc[0, "cache_hits"] == 5
    by_call = ledger.to_dataframe(by_call=True)
    real_tokens = by_call.loc[~by_call["cached"], "prompt_tokens"].sum()
    assert df.loc[0, "prompt_tokens"] == real_tokens > 0  # hits cost no tokens
    assert len(cache) == 5 and cache.clear() == 5 and len(cache) == 0


def test_cache_never_stores_api_keys(tmp_path, monkeypatch):
    from argnb.llm.openai import OpenAIBackend

    secret = "sk-test-SECRET-0123456789abcdef"
    cache = ResponseCache(tmp_path / "c.sqlite")
    b = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", api_key=secret, cache=cache)
    assert secret not in repr(b.describe())
    key = cache.key(b.describe(), [Message(role="user", content="q")], None, Options())
    from argnb.llm.base import Reply

    cache.put(key, Reply(text="a"))
    dump = "\n".join(sqlite3.connect(cache.path).iterdump())
    assert secret not in dump and "127.0.0.1:9" in b.describe()["base_url"]


def test_ledger_groups_by_backend_and_model():
    led = Ledger()
    a = ScriptedBackend(["1", "2"], model="m1", ledger=led)
    c = ScriptedBackend(["3"], model="m2", ledger=led)
    a.chat("x")
    a.chat("y")
    c.chat("z")
    df = led.to_dataframe().set_index("model")
    assert df.loc["m1", "calls"] == 2 and df.loc["m2", "calls"] == 1
    assert (df["prompt_tokens"] > 0).all()
    assert len(led.to_dataframe(by_call=True)) == 3
