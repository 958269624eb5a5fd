"""Runs that must refuse, not be silently wrong: the shared flags, resume guard, lock and readers.

Every refused run exits 2 with one line that says what to do, prints no traceback, and leaves the
results file exactly as it was.
"""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from argnb.batch import read_jsonl, run_batch
from argnb.cli import main
from argnb.errors import ArgnbError

FIXTURE = Path(__file__).resolve().parents[1] / "fallacy" / "fixtures" / "ours.jsonl"


def refused(argv: list[str], capsys) -> str:
    """Run the CLI, assert a clean refusal, return the message."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own validation
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1, err
    return err


def bench(*extra: str) -> list[str]:
    return ["fallacy", "bench", "--data", str(FIXTURE), "--method", "zero", "--quiet", *extra]


@pytest.mark.parametrize(
    "flags", [["--limit", "0"], ["--limit", "-1"], ["--concurrency", "0"], ["--max-rounds", "0"]]
)
def test_numeric_flags_are_validated_before_anything_runs(flags, tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    err = refused(bench("--out", str(out), *flags), capsys)
    assert "must be at least 1" in err
    assert not out.exists() and not Path(f"{out}.config.json").exists()


def test_critique_bootstrap_zero_is_refused(capsys):
    err = refused(["critique", "score", "--data", "x", "--pred", "y", "--bootstrap", "0"], capsys)
    assert "must be at least 1" in err


def test_a_folder_as_out_is_refused(tmp_path, capsys):
    assert "is a folder" in refused(bench("--out", str(tmp_path)), capsys)


def test_outputs_in_a_missing_folder_are_created_before_the_first_call(tmp_path, monkeypatch):
    from argnb import cli_common
    from argnb.llm import ScriptedBackend

    out = tmp_path / "new" / "deeper" / "r.jsonl"
    seen = []

    def backend(args):
        seen.append(out.parent.is_dir())
        return ScriptedBackend(lambda r: {"label": 1})

    monkeypatch.setattr(cli_common, "backend_from_args", backend)
    assert main(bench("--out", str(out))) == 0
    assert seen == [True] and len(read_jsonl(out)) == 2


def test_dialectic_checks_its_export_path_before_the_dialogue(tmp_path, capsys):
    err = refused(
        [
            "dialectic",
            "run",
            "--example",
            "camera",
            "--reference",
            "--export",
            "aif",
            "--to",
            str(tmp_path),
        ],
        capsys,
    )
    assert "--to" in err and "is a folder" in err


def _items(n: int, text: str = "t") -> list[dict]:
    return [{"id": str(i), "text": f"{text}{i}"} for i in range(n)]


async def _echo(item: dict) -> dict:
    return {"text": item["text"]}


def test_resume_refuses_another_configuration_and_keeps_the_file(tmp_path):
    out = tmp_path / "r.jsonl"
    run_batch(_echo, _items(3), out=out, progress=False, config={"method": "a"})
    before = out.read_bytes()
    with pytest.raises(ArgnbError, match="different configuration"):
        run_batch(_echo, _items(3), out=out, progress=False, config={"method": "b"})
    assert out.read_bytes() == before


def test_resume_refuses_other_data_under_the_same_ids(tmp_path):
    out = tmp_path / "r.jsonl"
    run_batch(_echo, _items(3), out=out, progress=False, config={"m": 1})
    before = out.read_bytes()
    with pytest.raises(ArgnbError, match="other data with the same ids"):
        run_batch(_echo, _items(3, "other"), out=out, progress=False, config={"m": 1})
    assert out.read_bytes() == before


def test_resume_over_more_of_the_same_items_runs_only_the_new_ones(tmp_path):
    out = tmp_path / "r.jsonl"
    calls = []

    async def fn(item):
        calls.append(item["id"])
        return {"text": item["text"]}

    run_batch(fn, _items(2), out=out, progress=False, config={"m": 1})
    recs = run_batch(fn, _items(5), out=out, progress=False, config={"m": 1})
    assert calls == ["0", "1", "2", "3", "4"] and len(recs) == 5
    kept = json.loads(Path(f"{out}.config.json").read_text())
    assert kept["m"] == 1 and kept["key"] == recs[0]["config"]


def _hold_lock(out: str, ready, release) -> None:
    from filelock import FileLock

    with FileLock(f"{out}.lock"):
        ready.set()
        release.wait(10)


def test_a_second_writer_is_refused_while_the_first_runs(tmp_path):
    out = tmp_path / "r.jsonl"
    ctx = multiprocessing.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    p = ctx.Process(target=_hold_lock, args=(str(out), ready, release))
    p.start()
    try:
        assert ready.wait(20)
        with pytest.raises(ArgnbError, match="another run is writing"):
            run_batch(_echo, _items(2), out=out, progress=False)
    finally:
        release.set()
        p.join(20)
    assert not out.exists() or read_jsonl(out) == []


def test_readers_count_every_id_once(tmp_path):
    out = tmp_path / "r.jsonl"
    rows = [{"id": "a", "v": 1}, {"id": "b", "v": 2}, {"id": "a", "v": 3}]
    out.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"id": "c", "v"', "utf-8")
    assert [(r["id"], r["v"]) for r in read_jsonl(out)] == [("a", 1), ("b", 2)]


def test_an_empty_data_file_is_an_error_not_a_report(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    err = refused(["fallacy", "bench", "--data", str(empty), "--method", "zero", "--quiet"], capsys)
    assert "no items" in err or "empty" in err
