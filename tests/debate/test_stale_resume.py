"""A resume into results made by other prompts or another model is refused, in one line.

``debate next`` stamps its configuration with a fingerprint of ``argnb/debate/prompts`` and
``debate annotate`` with its annotator, prompts and given schemes, so an edited prompt or another
model never appends records under the old configuration key (nor skips rows silently).
"""

from __future__ import annotations

import json
import shutil

import pytest

import argnb.cli_common
import argnb.debate.annotate
import argnb.prompts
from argnb.cli import main
from argnb.llm import ScriptedBackend

from .test_annotate import _script
from .test_cli_generate import ROWS
from .test_generate import role_backend

PROMPTS = argnb.prompts.prompts_dir("argnb.debate")


@pytest.fixture
def edited_prompts(tmp_path, monkeypatch):
    """``argnb/debate/prompts`` as a copy the test may edit (the package is never touched)."""
    copy = tmp_path / "prompts"
    shutil.copytree(PROMPTS, copy)
    real = argnb.prompts.prompts_dir

    def prompts_dir(package: str):
        return copy if package == "argnb.debate" else real(package)

    monkeypatch.setattr(argnb.prompts, "prompts_dir", prompts_dir)
    monkeypatch.setattr(argnb.debate.annotate, "_prompts_dir", prompts_dir)
    argnb.prompts._load.cache_clear()
    yield copy
    argnb.prompts._load.cache_clear()


def _one_line_refusal(code: int, err: str) -> str:
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_21_5_next_refuses_to_resume_after_a_prompt_was_edited(
    tmp_path, capsys, monkeypatch, edited_prompts
):
    debates = tmp_path / "debates.jsonl"
    debates.write_text(
        "".join(
            json.dumps({"debate_id": d, "topic": t, "turn": n, "stance": s, "text": x}) + "\n"
            for d, t, n, s, x in ROWS
        ),
        encoding="utf-8",
    )
    monkeypatch.setattr(argnb.cli_common, "backend_from_args", lambda a: role_backend())
    out = tmp_path / "next.jsonl"
    argv = ["debate", "next", "--debates", str(debates), "--cut", "1", "--method", "llm"]
    argv += ["--out", str(out), "--quiet"]
    assert main([*argv, "--limit", "1"]) == 0
    assert main(argv) == 0  # same prompts: resumes
    assert len(out.read_text().splitlines()) == 2
    capsys.readouterr()
    judge = edited_prompts / "generate.md"
    judge.write_text(judge.read_text() + "\nBe brief.\n", encoding="utf-8")
    before = out.read_bytes()
    err = _one_line_refusal(main(argv), capsys.readouterr().err)
    assert "different configuration" in err and "another --out" in err
    assert out.read_bytes() == before  # nothing appended under the old key


def test_21_5_annotate_refuses_to_resume_with_another_model_or_prompt(
    tmp_path, capsys, monkeypatch, edited_prompts
):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        "".join(
            json.dumps({"id": f"r{i}", "text": "Cars harm the air children breathe."}) + "\n"
            for i in range(3)
        ),
        encoding="utf-8",
    )
    model = {"name": "one"}
    monkeypatch.setattr(
        argnb.cli_common,
        "backend_from_args",
        lambda a: ScriptedBackend(_script, model=model["name"]),
    )
    out = tmp_path / "ann.jsonl"
    argv = ["debate", "annotate", "--data", str(rows), "--out", str(out), "--quiet"]
    assert main([*argv, "--limit", "2"]) == 0
    assert len(out.read_text().splitlines()) == 2
    model["name"] = "two"  # another model: its rows must not be mixed in, nor skipped
    err = _one_line_refusal(main(argv), capsys.readouterr().err)
    assert "different configuration" in err
    model["name"] = "one"
    score = edited_prompts / "score.md"
    score.write_text(score.read_text() + "\nBe strict.\n", encoding="utf-8")
    err = _one_line_refusal(main(argv), capsys.readouterr().err)
    assert "different configuration" in err
    assert len(out.read_text().splitlines()) == 2
