import zipfile
from pathlib import Path

import nbformat
import pytest

from argnb.exercises.cli import main
from argnb.exercises.markers import MarkerError, check_of, checks
from argnb.exercises.release import STUB, release, student_version, zip_folder

ROOT = Path(__file__).resolve().parents[2]


def _solution(tmp_path, *codes, md="Answer: <!-- BEGIN SOLUTION -->because X<!-- END SOLUTION -->"):
    nb = nbformat.v4.new_notebook()
    cells = [nbformat.v4.new_markdown_cell(md)]
    for code in codes:
        cell = nbformat.v4.new_code_cell(code)
        cell.outputs = [nbformat.v4.new_output("stream", text="42")]
        cells.append(cell)
    nb.cells = cells
    p = tmp_path / "ex" / "01_t" / "solutions" / "a.ipynb"
    p.parent.mkdir(parents=True, exist_ok=True)
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


def test_hidden_tests_are_dropped_and_checks_tagged(tmp_path):
    check = (
        "### CHECK f_works: 2.5 points\nassert f(1) == 2\n"
        "### BEGIN HIDDEN TESTS\nassert f(41) == 42, 'secret case'\n### END HIDDEN TESTS"
    )
    p = _solution(
        tmp_path, "def f(x):\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION", check
    )
    nb = nbformat.reads(student_version(p), as_version=4)
    student_check = nb.cells[2]
    assert student_check.source == "### CHECK f_works: 2.5 points\nassert f(1) == 2"
    assert "secret" not in student_version(p) and "HIDDEN" not in student_version(p)
    assert student_check.metadata["argnb"] == {"check": "f_works", "points": 2.5}
    # the grader still finds the check when a student deletes the marker line
    student_check.source = "assert f(1) == 2"
    assert check_of(student_check) == ("f_works", 2.5)


@pytest.mark.parametrize(
    ("codes", "message"),
    [
        (["### BEGIN HIDDEN TESTS\nassert 1\n### END HIDDEN TESTS"], "outside a check cell"),
        (["### CHECK a: 1 point\nx=1", "### CHECK a: 2 points\ny=1"], "used twice"),
        (
            ["### CHECK a: 1 point\n### BEGIN SOLUTION\nx=1\n### END SOLUTION"],
            "contains a solution",
        ),
        (["### CHECK a: one point\nx=1"], "malformed check line"),
        (["### CHECK a: 1 point\n### BEGIN HIDDEN TESTS\nassert 1"], "without"),
    ],
)
def test_inconsistent_markers_are_refused(tmp_path, codes, message):
    p = _solution(tmp_path, *codes)
    with pytest.raises(MarkerError, match=message):
        student_version(p)


def test_nbgrader_metadata_counts_as_a_check():
    cell = nbformat.v4.new_code_cell("assert True")
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "q1", "points": 3, "solution": False}
    nb = nbformat.v4.new_notebook()
    nb.cells = [cell]
    (found,) = checks(nb)
    assert (found.id, found.points) == ("q1", 3.0)


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


def test_zip_holds_what_a_student_needs_and_never_a_solution(tmp_path):
    _solution(tmp_path, "### BEGIN SOLUTION\nx = 1\n### END SOLUTION")
    folder = tmp_path / "ex" / "01_t"
    (folder / "data").mkdir()
    (folder / "data" / "table.csv").write_text("a,b\n1,2\n")
    (folder / ".ipynb_checkpoints").mkdir()
    (folder / ".ipynb_checkpoints" / "a-checkpoint.ipynb").write_text("{}")
    release(tmp_path / "ex", to=tmp_path / "dist")
    first = (tmp_path / "dist" / "01_t.zip").read_bytes()
    with zipfile.ZipFile(tmp_path / "dist" / "01_t.zip") as zf:
        assert sorted(zf.namelist()) == ["01_t/data/table.csv", "01_t/student/a.ipynb"]
    zip_folder(folder, tmp_path / "dist")
    assert (tmp_path / "dist" / "01_t.zip").read_bytes() == first  # same files, same bytes


def test_committed_student_notebooks_are_up_to_date():
    stale = release(ROOT / "exercises", check=True)
    assert stale == [], f"run `python -m argnb.exercises release`: {stale}"


def test_cli_check_exit_codes(tmp_path, capsys):
    _solution(tmp_path, "### BEGIN SOLUTION\nx = 1\n### END SOLUTION")
    root = tmp_path / "ex"
    assert main(["release", "--check", "--root", str(root)]) == 1
    assert "stale:" in capsys.readouterr().out
    assert main(["release", "--root", str(root), "--to", str(tmp_path / "z")]) == 0
    assert main(["release", "--check", "--root", str(root)]) == 0
    assert main(["release", "--root", str(tmp_path / "nowhere")]) == 2


def test_21_11_a_root_without_exercises_is_an_error_that_says_what_root_expects(tmp_path, capsys):
    _solution(tmp_path, "### BEGIN SOLUTION\nx = 1\n### END SOLUTION")
    zips = tmp_path / "z"
    # the project root (which holds the exercises folder, here "ex" renamed below) is not it
    (tmp_path / "ex").rename(tmp_path / "exercises")
    assert main(["release", "--root", str(tmp_path), "--to", str(zips)]) == 2
    err = capsys.readouterr().err
    assert "no exercises under" in err and f"--root {tmp_path / 'exercises'}" in err
    assert len(err.strip().splitlines()) == 1 and not zips.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["release", "--check", "--root", str(empty)]) == 2
    assert "the exercises folder" in capsys.readouterr().err
    assert main(["release", "--root", str(tmp_path / "exercises"), "--to", str(zips)]) == 0
    assert f"zips in {zips}" in capsys.readouterr().out and (zips / "01_t.zip").is_file()
