"""The benchmark runner: reports, robustness to garbage, resume after a crash, the CLI."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from argnb.batch import read_jsonl
from argnb.cli import main
from argnb.errors import ArgnbError, BackendUnavailable
from argnb.fallacy.benchmark import bench, report, results_frame, transcript_of
from argnb.llm import ScriptedBackend


def items(n):
    return [
        {
            "id": f"it{k}",
            "source": "edu" if k % 3 else "news",
            "text": f"argument number {k}",
            "label": k % 2,
        }
        for k in range(n)
    ]


def _h(s: str) -> int:
    return int(hashlib.sha256(s.encode()).hexdigest(), 16)


def oracle(garbage_every: int = 0):
    """A deterministic fake model: the answer depends only on the prompt (so order and
    concurrency do not matter); every ``garbage_every``-th distinct prompt gets garbage."""

    def answer(req):
        prompt = req.prompt
        h = _h(prompt)
        if garbage_every and h % garbage_every == 0:
            return "Sorry, I cannot answer that { not json"
        if "action" in str(req.schema):
            conf = [0.8, 0.9, 0.6][h % 3]
            return {"action": "argue", "reasoning": "because", "vote": h % 2, "confidence": conf}
        if "restatement" in str(req.schema):
            return {
                "restatement": "r",
                "conclusion": "c",
                "premises": [],
                "follows": True,
                "fallacy": "none",
                "label": h % 2,
            }
        return {"label": (h >> 3) % 2}

    return answer


@pytest.mark.parametrize("method", ["zero", "few", "cot", "deliberate", "ensemble"])
def test_every_method_runs_and_reports(method, tmp_path):
    out = tmp_path / f"{method}.jsonl"
    rep = bench(items(8), method=method, backend=ScriptedBackend(oracle()), out=out, progress=False)
    assert rep["n"] == 8 and 0.0 <= rep["accuracy"] <= 1.0
    assert set(rep["per_source"]) == {"edu", "news"}
    assert rep["calls_per_item"] >= (2 if method in ("deliberate", "ensemble") else 1)
    recs = read_jsonl(out)
    assert len(recs) == 8 and all(r["method"] == method for r in recs)
    assert all(r["pred"] in (0, 1, "invalid") for r in recs)
    tr = transcript_of(recs[0])
    assert (
        tr.turns
        and tr.usage.total_tokens == recs[0]["prompt_tokens"] + recs[0]["completion_tokens"]
    )
    if method in ("deliberate", "ensemble"):
        assert "resolutions" in rep and "confidence_histogram" in rep
    assert report(out)["accuracy"] == rep["accuracy"]
    df = results_frame(out)
    assert len(df) == 8 and "transcript" not in df.columns


def test_malformed_output_for_a_share_of_calls_never_stops_a_run(tmp_path):
    backend = ScriptedBackend(oracle(garbage_every=3))
    rep = bench(
        items(40),
        method="ensemble",
        backend=backend,
        out=tmp_path / "g.jsonl",
        concurrency=4,
        progress=False,
    )
    recs = read_jsonl(tmp_path / "g.jsonl")
    assert rep["n"] == len(recs) == 40
    invalid_turns = sum(1 for r in recs for t in r["transcript"]["turns"] if not t["valid"])
    assert invalid_turns > 0
    assert rep["invalid_outputs"] == invalid_turns
    assert rep["invalid_output_rate"] == round(invalid_turns / rep["outputs"], 4)
    assert 0 < rep["invalid_output_rate"] < 1
    # garbage that survives the repair turn shows as invalid member answers
    assert any(m["pred"] == "invalid" for r in recs for m in r["members"])


def test_all_garbage_gives_invalid_items_counted_wrong(tmp_path):
    rep = bench(items(4), method="zero", backend=ScriptedBackend(lambda r: "???"), progress=False)
    assert rep["invalid_rate"] == 1.0 and rep["accuracy"] == 0.0
    assert rep["confusion"]["1"]["invalid"] == 2


class Outage:
    """Answers like ``oracle`` until ``after`` calls, then the server is gone."""

    def __init__(self, after):
        self.after, self.calls, self.inner = after, 0, oracle(garbage_every=5)

    def __call__(self, req):
        self.calls += 1
        if self.calls > self.after:
            return BackendUnavailable("server went away")
        return self.inner(req)


def test_interrupt_then_resume_gives_the_same_final_counts(tmp_path):
    data = items(30)
    kw = {"method": "ensemble", "concurrency": 3, "progress": False}
    full = bench(
        data, backend=ScriptedBackend(oracle(garbage_every=5)), out=tmp_path / "full.jsonl", **kw
    )

    part = tmp_path / "part.jsonl"
    with pytest.raises(BackendUnavailable):
        bench(data, backend=ScriptedBackend(Outage(after=40)), out=part, **kw)
    saved = read_jsonl(part)
    assert 0 < len(saved) < 30

    resumed_backend = ScriptedBackend(oracle(garbage_every=5))
    resumed = bench(data, backend=resumed_backend, out=part, **kw)
    ids = [r["id"] for r in read_jsonl(part)]
    assert len(ids) == len(set(ids)) == 30, "every item exactly once"
    done_first = {r["id"] for r in saved}
    asked = " ".join(r.prompt for r in resumed_backend.requests)
    assert not any(re.search(rf"argument number {i[2:]}\b", asked) for i in done_first), (
        "finished items must not be sent to the model again"
    )
    for key in (
        "accuracy",
        "per_source",
        "confusion",
        "resolutions",
        "invalid_outputs",
        "agreement_rate",
        "disagreement",
        "rounds",
        "confidence_histogram",
    ):
        assert resumed[key] == full[key], key


def test_resume_refuses_a_different_configuration(tmp_path):
    out = tmp_path / "r.jsonl"
    bench(items(3), method="zero", backend=ScriptedBackend(oracle()), out=out, progress=False)
    with pytest.raises(ArgnbError, match="different configuration"):
        bench(items(3), method="few", backend=ScriptedBackend(oracle()), out=out, progress=False)


def test_limit(tmp_path):
    rep = bench(
        items(10), method="zero", backend=ScriptedBackend(oracle()), limit=4, progress=False
    )
    assert rep["n"] == 4


@pytest.fixture
def scripted_connect(monkeypatch):
    import argnb.config

    made = []

    def connect(backend=None, model=None, **kw):
        b = ScriptedBackend(oracle(garbage_every=4), model=model or "fake")
        made.append(b)
        return b

    monkeypatch.setattr(argnb.config, "connect", connect)
    return made


def test_cli_bench_json_last_line_and_report(tmp_path, capsys, scripted_connect):
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(it) + "\n" for it in items(6)))
    out = tmp_path / "res.jsonl"
    argv = [
        "fallacy",
        "bench",
        "--data",
        str(data),
        "--method",
        "ensemble",
        "--out",
        str(out),
        "--concurrency",
        "2",
        "--limit",
        "5",
        "--json",
        "--quiet",
        "--agents",
        "local:a,ollama:b",
    ]
    assert main(argv) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    rep = json.loads(lines[-1])
    assert rep["n"] == 5 and rep["method"] == "ensemble" and "per_source" in rep
    assert [a["name"] for a in rep["config"]["agents"]] == ["scripted:a", "scripted:b"]
    assert main(["fallacy", "report", str(out), "--json"]) == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert again["accuracy"] == rep["accuracy"]
    assert main(["fallacy", "report", str(out)]) == 0
    assert "per source" in capsys.readouterr().out


def test_cli_classify_and_deliberate(capsys, scripted_connect):
    assert main(["fallacy", "classify", "Some argument.", "--method", "cot", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["label"] in (0, 1, "invalid")
    assert main(["fallacy", "deliberate", "Some argument.", "--max-rounds", "2"]) == 0
    assert "result:" in capsys.readouterr().out


def test_cli_errors_are_one_line_with_a_fix(tmp_path, capsys, scripted_connect):
    assert (
        main(["fallacy", "bench", "--data", str(tmp_path / "nope.jsonl"), "--method", "zero"]) == 2
    )
    assert "no data file" in capsys.readouterr().err


def test_a_report_says_which_backends_and_models_ran(tmp_path):
    from argnb.fallacy.metrics import format_report
    from argnb.fallacy.views import report_html

    out = tmp_path / "r.jsonl"
    model = ScriptedBackend(oracle(), model="tiny-<b>")
    live = bench(items(4), method="ensemble", backend=model, out=out, progress=False)
    again = report(out)  # from the file alone, as `argnb fallacy report` does
    assert again["config"] == live["config"]
    want = "zero@scripted:tiny-<b> + few@scripted:tiny-<b>; agents scripted:tiny-<b> x2"
    assert f"on {want}" in format_report(again)
    assert "tiny-&lt;b&gt;" in report_html(again) and "tiny-<b>" not in report_html(again)
    (tmp_path / "r.jsonl.config.json").unlink()
    assert "no configuration recorded" in format_report(report(out))


def test_an_ensemble_of_given_members_needs_no_other_backend(tmp_path):
    from argnb.fallacy.baselines import Baseline
    from argnb.fallacy.metrics import format_report

    a, b = ScriptedBackend(oracle(), model="a"), ScriptedBackend(oracle(), model="b")
    members = [Baseline("zero", a), Baseline("few", b)]
    out = tmp_path / "r.jsonl"
    rep = bench(items(6), method="ensemble", members=members, out=out, progress=False)
    assert rep["n"] == 6
    # the deliberating agents default to one per member backend
    assert "agents scripted:a, scripted:b" in format_report(rep)
    with pytest.raises(ArgnbError, match="needs a backend"):
        bench(items(2), method="zero", out=tmp_path / "z.jsonl")
    with pytest.raises(ArgnbError, match="needs a backend"):
        bench(items(2), method="deliberate", members=members, out=tmp_path / "d.jsonl")
