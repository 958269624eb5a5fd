"""``argnb debate next`` and ``argnb debate simulate`` on a scripted backend."""

from __future__ import annotations

import json

import pytest

import argnb.cli_common
from argnb.cli import main
from argnb.debate.inputs import read_debates
from argnb.debate.next_experiment import next_items
from argnb.transcript import Transcript

from .test_generate import role_backend

ROWS = [
    (
        "d1",
        "Cities should close their centres to cars",
        0,
        "moderator",
        "Welcome, everyone, to tonight's debate on cars in our city centres.",
    ),
    (
        "d1",
        "Cities should close their centres to cars",
        1,
        "pro",
        "Fumes from cars harm the lungs of children who walk to school every day.",
    ),
    (
        "d1",
        "Cities should close their centres to cars",
        2,
        "con",
        "Shops in the centre will close when their customers can no longer drive there.",
    ),
    (
        "d1",
        "Cities should close their centres to cars",
        3,
        "pro",
        "Oslo closed its centre to cars and its shops kept their customers and sales.",
    ),
    (
        "d2",
        "Schools should drop homework",
        0,
        "pro",
        "Homework steals the play time that young children need to grow up well.",
    ),
    (
        "d2",
        "Schools should drop homework",
        1,
        "con",
        "Reading at home with parents helps young children learn to read much faster.",
    ),
]


@pytest.fixture
def files(tmp_path, capsys):
    db = str(tmp_path / "ex.db")
    assert main(["debate", "memory", "build", "--from", "example", "--db", db]) == 0
    debates = tmp_path / "debates.jsonl"
    debates.write_text(
        "".join(
            json.dumps(
                {"debate_id": d, "topic": t, "turn": n, "stance": s, "speaker": s, "text": x}
            )
            + "\n"
            for d, t, n, s, x in ROWS
        ),
        encoding="utf-8",
    )
    capsys.readouterr()
    return db, str(debates), tmp_path


def last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def test_items_cut_the_debates_and_take_the_real_next_side(files):
    _, debates, _ = files
    items = next_items(read_debates(debates), 2)
    assert [(i["id"], i["stance"], len(i["history"])) for i in items] == [("d1@2", "pro", 2)]
    assert (
        items[0]["reference"]
        == "Oslo closed its centre to cars and its shops kept their customers and sales."
    )  # the moderator row is gone
    assert [i["id"] for i in next_items(read_debates(debates), 1)] == ["d1@1", "d2@1"]
    strict = read_debates(debates, min_words=14)  # d2's 13-word turns count as no argument
    assert [len(d.turns) for d in strict.values()] == [3]


def test_next_runs_resumes_and_reports(files, capsys, monkeypatch):
    db, debates, tmp = files
    backend = role_backend(accept=lambda n: n > 1)
    monkeypatch.setattr(argnb.cli_common, "backend_from_args", lambda a: backend)
    out = tmp / "next.jsonl"
    argv = ["debate", "next", "--debates", debates, "--cut", "1", "--method", "rdebater"]
    argv += ["--db", db, "--out", str(out), "--json", "--quiet"]
    assert main(argv) == 0
    s = last_json(capsys.readouterr().out)
    assert s["n"] == 2 and s["judged"] == 2 and s["stance_checked"] == 2
    assert s["revisions_per_utterance"] > 0 and s["calls_per_utterance"] > 5
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert {r["id"] for r in recs} == {"d1@1", "d2@1"}
    assert all(r["evidence"] and r["transcript"]["turns"] for r in recs)
    tr = Transcript.model_validate(recs[0]["transcript"])
    assert tr.turns[-2].role == "utterance" and tr.turns[-1].role == "stance check"
    calls = len(backend.requests)
    assert main(argv) == 0  # resumed: nothing left to do
    assert len(backend.requests) == calls and last_json(capsys.readouterr().out)["n"] == 2


def test_next_refuses_what_it_cannot_do_in_one_line(files, capsys, monkeypatch):
    _, debates, tmp = files
    monkeypatch.setattr(argnb.cli_common, "backend_from_args", lambda a: role_backend())
    base = ["debate", "next", "--debates", debates]
    assert main([*base, "--cut", "1", "--method", "rdebater"]) == 2
    assert "--db" in capsys.readouterr().err
    assert main([*base, "--cut", "9", "--method", "llm"]) == 2
    err = capsys.readouterr().err
    assert "smaller --cut" in err and "Traceback" not in err
    bad = tmp / "bad.jsonl"
    bad.write_text('{"id": 1, "text": "not a debate row"}\n')
    assert main(["debate", "next", "--debates", str(bad), "--cut", "1", "--method", "llm"]) == 2
    assert "IQ2 layout" in capsys.readouterr().err


def test_simulate_writes_a_transcript_and_a_map(files, capsys, monkeypatch):
    db, debates, tmp = files
    monkeypatch.setattr(argnb.cli_common, "backend_from_args", lambda a: role_backend())
    out, page = tmp / "sim.json", tmp / "sim.html"
    argv = ["debate", "simulate", "--history", debates, "--cut", "2", "--turns", "3"]
    argv += ["--pro", "rdebater", "--con", "llm", "--db", db, "--out", str(out)]
    argv += ["--map", str(page), "--json"]
    assert main(argv) == 0
    r = last_json(capsys.readouterr().out)
    assert r["turns"] == 5 and r["generated"] == 3 and r["ended"] == "turn limit"
    tr = Transcript.load(out)
    assert tr.title == "Cities should close their centres to cars"
    assert "P2" in page.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--map", "x.docx"], "cannot tell a format to write from --map 'x.docx'"),
        (["--cut", "50"], "--cut 50: debate 'd1' has only 3 argumentative turns"),
        (["--debate", "d9"], "no debate 'd9'"),
    ],
)
def test_21_7_simulate_refuses_what_next_refuses_before_any_model_call(
    files, capsys, monkeypatch, extra, message
):
    _, debates, tmp = files
    backend = role_backend()
    monkeypatch.setattr(argnb.cli_common, "backend_from_args", lambda a: backend)
    argv = ["debate", "simulate", "--history", debates, "--con", "llm", "--pro", "llm"]
    extra = [tmp / x if x.endswith(".docx") else x for x in extra]
    assert main([*argv, *map(str, extra)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert backend.requests == [] and not (tmp / "x.docx").exists()


def test_21_7_cut_and_debate_need_a_history(capsys, monkeypatch):
    monkeypatch.setattr(argnb.cli_common, "backend_from_args", lambda a: role_backend())
    assert main(["debate", "simulate", "--topic", "Ban cars", "--cut", "2", "--pro", "llm"]) == 2
    assert "--history" in capsys.readouterr().err
