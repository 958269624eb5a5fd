from pathlib import Path

import nbformat
import pytest

from argnb.exercises.release import STUB, release, student_version

ROOT = Path(__file__).resolve().parents[2]


def _solution(tmp_path, code, md="Answer: <!-- BEGIN SOLUTION -->because X<!-- END SOLUTION -->"):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(code)
    cell.outputs = [nbformat.v4.new_output("stream", text="42")]
    nb.cells = [nbformat.v4.new_markdown_cell(md), cell]
    p = tmp_path / "ex" / "01_t" / "solutions" / "a.ipynb"
    p.parent.mkdir(parents=True)
    nbformat.write(nb, p)
    return p


def test_solution_code_is_replaced_by_an_indented_stub(tmp_path):
    code = (
        "def f(x):\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION\n\nprint(f(1))"
    )
    p = _solution(tmp_path, code)
    nb = nbformat.reads(student_version(p), as_version=4)
    assert nb.cells[1].source == f"def f(x):\n    {STUB}\n\nprint(f(1))"
    assert nb.cells[1].outputs == []
    assert "because X" not in nb.cells[0].source and "Your answer here" in nb.cells[0].source


def test_release_writes_then_check_reports_clean(tmp_path):
    _solution(tmp_path, "### BEGIN SOLUTION\nx = 1\n### END SOLUTION")
    root = tmp_path / "ex"
    assert len(release(root)) == 1
    assert release(root, check=True) == []
    assert (root / "01_t" / "student" / "a.ipynb").exists()


def test_unbalanced_markers_are_rejected(tmp_path):
    p = _solution(tmp_path, "### BEGIN SOLUTION\nx = 1")
    with pytest.raises(ValueError):
        student_version(p)


def test_committed_student_notebooks_are_up_to_date():
    stale = release(ROOT / "exercises", check=True)
    assert stale == [], f"run `python -m argnb.exercises release`: {stale}"
