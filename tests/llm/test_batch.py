import asyncio
import json

import pytest

from argnb.batch import arun_batch, read_jsonl, run_batch


def _items(n):
    return [{"id": f"i{k}", "x": k} for k in range(n)]


def test_results_in_input_order_and_bounded_concurrency(tmp_path):
    state = {"now": 0, "peak": 0}

    async def fn(item):
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await asyncio.sleep(0.01 * (item["x"] % 3))
        state["now"] -= 1
        return {"y": item["x"] * 2}

    out = run_batch(fn, _items(20), out=tmp_path / "r.jsonl", concurrency=3, progress=False)
    assert [r["y"] for r in out] == [k * 2 for k in range(20)]
    assert state["peak"] == 3
    assert len(read_jsonl(tmp_path / "r.jsonl")) == 20


def test_crash_midway_then_resume_gives_every_item_exactly_once(tmp_path):
    path = tmp_path / "r.jsonl"
    calls = []

    async def flaky(item):
        calls.append(item["id"])
        if len(calls) == 7:
            raise RuntimeError("power cut")
        return {"y": item["x"]}

    with pytest.raises(RuntimeError):
        run_batch(flaky, _items(15), out=path, concurrency=2, progress=False)
    saved = {r["id"] for r in read_jsonl(path)}
    assert 0 < len(saved) < 15

    async def ok(item):
        assert item["id"] not in saved, "resume must skip finished items"
        return {"y": item["x"]}

    out = run_batch(ok, _items(15), out=path, concurrency=2, progress=False)
    ids = [r["id"] for r in read_jsonl(path)]
    assert sorted(ids) == sorted(f"i{k}" for k in range(15))
    assert len(ids) == len(set(ids)) == 15
    assert [r["id"] for r in out] == [f"i{k}" for k in range(15)]


def test_torn_last_line_is_healed_before_appending(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"id": "i0", "y": 0}) + "\n" + '{"id": "i1", "y"')

    async def fn(item):
        return {"y": item["x"]}

    run_batch(fn, _items(3), out=path, progress=False)
    recs = read_jsonl(path)
    assert [r["id"] for r in recs] == ["i0", "i1", "i2"]
    assert path.read_text().count("\n") == 3


def test_run_batch_works_inside_a_running_event_loop():
    async def fn(item):
        return {"y": 1}

    async def notebook_cell():
        return run_batch(fn, _items(3), progress=False)  # sync call from within a loop

    assert len(asyncio.run(notebook_cell())) == 3


def test_concurrency_must_be_positive():
    async def fn(item):
        return {}

    with pytest.raises(ValueError):
        asyncio.run(arun_batch(fn, _items(1), concurrency=0, progress=False))
