"""Locks that leave nothing behind (issue 21, item 12) and still keep writers apart."""

from __future__ import annotations

import multiprocessing
import threading

import pytest

from argnb.batch import read_jsonl, run_batch
from argnb.locks import FileLock, LockTaken, locked


async def _echo(item):
    return {"id": item["id"], "ok": True}


def test_21_12_a_finished_run_leaves_only_its_results(tmp_path):
    out = tmp_path / "results.jsonl"
    run_batch(_echo, [{"id": str(i)} for i in range(3)], out=out, progress=False, config={"m": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "results.jsonl",
        "results.jsonl.config.json",
    ]
    assert [r["id"] for r in read_jsonl(out)] == ["0", "1", "2"]


def test_21_12_a_saved_feedback_form_leaves_no_lock(tmp_path):
    from argnb.roundtable.feedback import feedback_row, save_feedback

    csv = tmp_path / "roundtable_feedback.csv"
    save_feedback(csv, feedback_row("Ada", "s1", {"easy_to_use": 4}, {}))
    save_feedback(csv, feedback_row("Bo", "s1", {"easy_to_use": 2}, {}))
    assert [p.name for p in tmp_path.iterdir()] == ["roundtable_feedback.csv"]
    assert len(csv.read_text(encoding="utf-8").splitlines()) == 3


def test_a_held_lock_refuses_and_is_gone_after_release(tmp_path):
    path = tmp_path / "x.lock"
    with locked(path):
        with pytest.raises(LockTaken):
            FileLock(path).acquire(timeout=0)
        assert path.exists()
    assert not path.exists()
    with locked(path, timeout=0):  # free again
        pass


def _bump(counter: str, lock: str, n: int) -> None:
    from pathlib import Path

    for _ in range(n):
        with locked(lock):
            p = Path(counter)
            p.write_text(str(int(p.read_text()) + 1))


def test_writers_in_many_processes_never_overlap(tmp_path):
    """Removing the file on release must not let a waiter that opened the old file in."""
    counter, lock = tmp_path / "n.txt", tmp_path / "n.txt.lock"
    counter.write_text("0")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_bump, args=(str(counter), str(lock), 100)) for _ in range(4)]
    for p in procs:
        p.start()
    threads = [
        threading.Thread(target=_bump, args=(str(counter), str(lock), 100)) for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for p in procs:
        p.join(60)
    assert int(counter.read_text()) == 600
    assert not lock.exists()


@pytest.mark.parametrize("command", ["fallacy", "critique"])
def test_21_12_finished_bench_and_judge_runs_leave_no_lock(tmp_path, monkeypatch, command):
    import json

    import argnb.cli_common
    from argnb.cli import main
    from argnb.llm import ScriptedBackend

    from .test_cli_fuzz import minimal

    monkeypatch.setattr(
        argnb.cli_common,
        "backend_from_args",
        lambda a: ScriptedBackend(lambda req: minimal(req.schema) if req.schema else "ok"),
    )
    out = tmp_path / "results.jsonl"
    if command == "fallacy":
        data = tmp_path / "d.jsonl"
        data.write_text(
            json.dumps({"id": "a", "source": "s", "text": "Everyone does it.", "label": 1}) + "\n",
            encoding="utf-8",
        )
        argv = ["fallacy", "bench", "--data", str(data), "--method", "zero"]
    else:
        argv = ["critique", "judge", "--data", "assets/critique/examples.jsonl", "--limit", "1"]
    assert main([*argv, "--out", str(out), "--quiet"]) == 0
    assert out.exists() and not (tmp_path / "results.jsonl.lock").exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".lock")]
