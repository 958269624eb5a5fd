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


def _debate_rows(corpus: str) -> list[dict]:
    """A few rows in the debate-row layout, written by us, marked as ``corpus`` marks them."""
    said = "A city that closes its centre to cars gives the street back to people on foot."
    if corpus == "iq2":
        return [
            {"debate_id": "iq2-d1", "topic": "Ban cars", "turn": 0, "stance": "moderator",
             "speaker": "M", "text": "Welcome to tonight's debate on banning cars.",
             "meta": {"source": "iq2"}},
            {"debate_id": "iq2-d1", "topic": "Ban cars", "turn": 1, "stance": "pro",
             "speaker": "P", "text": said, "meta": {"source": "iq2"}},
        ]  # fmt: skip
    return [
        {"debate_id": "ibm-speech-motion-1", "topic": "Ban cars", "turn": 0, "stance": "pro",
         "speaker": "p", "text": said, "meta": {"source": "ibm-recorded-debating-v4"}},
    ]  # fmt: skip


@pytest.mark.parametrize(("corpus", "said"), [("iq2", "ibm-speeches"), ("ibm-speeches", "iq2")])
def test_memory_build_refuses_the_other_corpus(tmp_path, capsys, corpus, said):
    """An IQ2 file built ``--from ibm-speeches`` (or the reverse) would give records with the
    wrong source: one line, exit 2, no memory written; the right ``--from`` builds it."""
    path = tmp_path / "items.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in _debate_rows(corpus)) + "\n")
    db = tmp_path / "m.db"
    assert main(["debate", "memory", "build", "--from", said, str(path), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert f"--from {corpus}" in err and "row 1 is from the" in err
    assert not db.exists()
    assert main(["debate", "memory", "build", "--from", corpus, str(path), "--db", str(db)]) == 0
