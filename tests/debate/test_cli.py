from __future__ import annotations

import json

import pytest

import argnb.cli
import argnb.cli_common
from argnb.cli import main
from argnb.llm import ScriptedBackend

from .test_annotate import _script


def last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture
def db(tmp_path, capsys):
    path = str(tmp_path / "ex.db")
    assert main(["debate", "memory", "build", "--from", "example", "--db", path]) == 0
    capsys.readouterr()
    return path


def test_build_info_and_retrieve_on_the_example_memory(db, capsys):
    assert main(["debate", "memory", "info", "--db", db, "--json"]) == 0
    info = last_json(capsys.readouterr().out)
    assert info["records"] == 40 and info["annotators"] == {"human:argnb-authors": 40}
    assert (
        main(
            [
                "debate",
                "retrieve",
                "--db",
                db,
                "--text",
                "homework makes children tired",
                "--stance",
                "con",
                "-k",
                "3",
                "--json",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "no embeddings" in out  # BM25 only, said so
    tr = last_json(out)
    assert tr["method"] == "bm25" and len(tr["hits"]) == 3
    assert all(h["stance"] == "con" and h["schemes"] is not None for h in tr["hits"])
    assert {"keywords", "candidates", "priors", "kept_schemes", "exemplars"} <= set(tr)


def test_retrieve_from_a_history_file(db, tmp_path, capsys):
    h = tmp_path / "h.jsonl"
    h.write_text('{"text": "Cars pollute the centre."}\n{"text": "Shops need parking."}\n')
    assert (
        main(
            [
                "debate",
                "retrieve",
                "--db",
                db,
                "--history",
                str(h),
                "--method",
                "bm25",
                "--json",
                "--quiet",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and json.loads(out[0])["query"].startswith("Cars pollute")


def test_annotate_the_gold_set_and_measure_agreement(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(argnb.cli_common, "backend_from_args", lambda a: ScriptedBackend(_script))
    out = tmp_path / "pred.jsonl"
    assert main(["debate", "annotate", "--gold", "--out", str(out), "--limit", "5", "--json"]) == 0
    summary = last_json(capsys.readouterr().out)
    assert summary["annotated"] == 5 and summary["calls"] == 10
    assert main(["debate", "agreement", "--gold", str(out), "--json"]) == 0
    a = last_json(capsys.readouterr().out)
    assert a["schemes"]["n"] == 5 and 0 <= a["schemes"]["jaccard"] <= 1


def test_memory_annotation_prints_the_plan_and_needs_yes_when_big(db, capsys, monkeypatch):
    import argnb.debate.annotate as A

    monkeypatch.setattr(argnb.cli_common, "backend_from_args", lambda a: ScriptedBackend(_script))
    monkeypatch.setattr(A, "CONFIRM_TOKENS", 1000)
    assert main(["debate", "memory", "annotate", "--db", db, "--redo"]) == 2
    captured = capsys.readouterr()
    assert "annotation plan" in captured.out and "--yes" in captured.err
    assert main(["debate", "memory", "annotate", "--db", db, "--yes", "--quiet"]) == 0
    assert main(["debate", "memory", "info", "--db", db, "--json", "--quiet"]) == 0
    assert last_json(capsys.readouterr().out)["annotators"] == {"scripted:script": 40}


def test_errors_are_one_line(tmp_path, capsys):
    assert main(["debate", "memory", "info", "--db", str(tmp_path / "none.db")]) == 2
    assert main(["debate", "memory", "build", "--from", "iq2", "--db", str(tmp_path / "a.db")]) == 2
    assert main(["debate", "agreement", "one.jsonl"]) == 2
    err = capsys.readouterr().err
    assert "no memory at" in err and "needs the corpus path" in err and "Traceback" not in err


def test_schemes_command(capsys):
    assert main(["debate", "schemes", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 7
