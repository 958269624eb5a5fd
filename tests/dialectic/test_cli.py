"""``argnb dialectic``: turn-by-turn output, the JSON last line, exports and errors."""

from __future__ import annotations

import json

import networkx as nx
import pytest

from argnb.cli import main
from argnb.maps import validate_aif


def run(capsys, *argv: str) -> tuple[int, list[str], str]:
    code = main(["dialectic", *argv])
    out = capsys.readouterr()
    return code, out.out.strip().splitlines(), out.err


def test_run_camera_reference_prints_turns_and_one_json_line(capsys):
    code, lines, _ = run(capsys, "run", "--example", "camera", "--reference", "--json")
    assert code == 0
    assert lines[0].startswith("issue: Which camera should we buy?")
    assert any(line.startswith("[line 1] AG2 rebuts A1") for line in lines)
    assert any(line.startswith("== line 2: AG2's main argument A3 is defeated") for line in lines)
    summary = json.loads(lines[-1])
    assert summary["terminated"] is True and summary["outcome"] == "synthesis"
    assert summary["turns"] == 9 and "camera c" in summary["final_answer"]
    assert summary["labelling"] == {"A1": "OUT", "A2": "IN", "A3": "OUT", "A4": "IN", "A5": "IN"}


@pytest.mark.parametrize("kind", ["aif", "argdown", "graphml", "html"])
def test_exports(capsys, tmp_path, kind):
    path = tmp_path / f"camera.{kind}"
    code, lines, _ = run(
        capsys,
        "run",
        "--example",
        "camera",
        "--reference",
        "--quiet",
        "--json",
        "--export",
        kind,
        "--to",
        str(path),
    )
    assert code == 0 and path.exists() and json.loads(lines[-1])["outcome"] == "synthesis"
    text = path.read_text()
    if kind == "aif":
        validate_aif(json.loads(text))
    elif kind == "argdown":
        assert "[A1.c1]: We should buy a." in text
    elif kind == "graphml":
        assert nx.read_graphml(path).number_of_nodes() == 25
    else:
        assert "vis.Network" in text


def test_stances_file_and_transcript(capsys, tmp_path):
    from argnb.dialectic import load_example

    stances = tmp_path / "mine.yaml"
    stances.write_text(load_example("camera").to_yaml())
    transcript = tmp_path / "t.json"
    # a stances file is not the packaged camera example: --reference refuses it
    code, _, err = run(capsys, "run", "--example", str(stances), "--reference")
    assert code == 2 and "camera example only" in err
    code, lines, _ = run(
        capsys, "run", "--example", "camera", "--reference", "--transcript", str(transcript)
    )
    assert code == 0 and lines[-2].startswith("final answer: Choose camera c")
    assert json.loads(transcript.read_text())["kind"] == "dialectic"


def test_errors_are_clear(capsys):
    code, _, err = run(capsys, "run", "--example", "nowhere.yaml")
    assert code == 2 and "neither an example nor a file" in err and "fix:" in err
    code, _, err = run(capsys, "run", "--example", "camera", "--reference", "--export", "aif")
    assert code == 2 and "--export needs --to" in err


def test_examples_command(capsys):
    code, lines, _ = run(capsys, "examples")
    assert code == 0 and [line.split()[0] for line in lines] == [
        "camera",
        "camera_values",
        "school_cleaning",
    ]
