"""Exercise folders and submissions written for the grading tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]

TOY_SOLUTION = [
    "%load_ext argnb.exercises",
    "def add(a, b):\n    ### BEGIN SOLUTION\n    return a + b\n    ### END SOLUTION",
    "### CHECK add: 2 points\nassert add(1, 2) == 3, 'add(1, 2) should be 3'\n"
    "### BEGIN HIDDEN TESTS\nassert add(-1, 1) == 0, 'negative numbers'\n### END HIDDEN TESTS",
    "### CHECK data: 1 point\nassert open('../data/x.txt').read() == 'ok', 'the data file'",
]


def write_nb(path: Path, sources: list[str]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


@pytest.fixture
def bwrap() -> str:
    """Skip unless a bubblewrap sandbox works here (CI installs bubblewrap)."""
    from argnb.exercises.sandbox import unavailable

    why = unavailable()
    if why:
        pytest.skip(why)
    return "bwrap"


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """An exercises root with one tiny exercise ``99_toy`` (a function, a data file, two checks)."""
    from argnb.exercises.release import release

    root = tmp_path / "exercises"
    write_nb(root / "99_toy" / "solutions" / "add.ipynb", TOY_SOLUTION)
    (root / "99_toy" / "data").mkdir()
    (root / "99_toy" / "data" / "x.txt").write_text("ok")
    release(root)
    return root


def toy_student(body: str, *, before: str = "", check: str | None = None) -> list[str]:
    """The toy notebook with the student's ``add`` body, a cell before the checks and, optionally,
    the student's own version of the first check cell."""
    cells = ["%load_ext argnb.exercises", f"def add(a, b):\n    {body}"]
    if before:
        cells.append(before)
    cells.append(check if check is not None else "### CHECK add: 2 points\nassert add(1, 2) == 3")
    cells.append("### CHECK data: 1 point\nassert open('../data/x.txt').read() == 'ok'")
    return cells


def grounded_exercise(root: Path) -> Path:
    """An exercises root at ``root`` holding 02_dialectic with only its ex2_grounded notebook."""
    src = ROOT / "exercises" / "02_dialectic"
    for part in ("solutions", "student"):
        (root / "02_dialectic" / part).mkdir(parents=True)
        shutil.copy(src / part / "ex2_grounded.ipynb", root / "02_dialectic" / part)
    return root


def grounded_submissions(exercise: Path, dest: Path) -> Path:
    """The four-student folder of the demo: correct, unsolved, an endless loop, a crash."""
    sol = nbformat.read(exercise / "solutions" / "ex2_grounded.ipynb", as_version=4)
    stu = nbformat.read(exercise / "student" / "ex2_grounded.ipynb", as_version=4)

    def broken(body: str):
        nb = nbformat.read(exercise / "solutions" / "ex2_grounded.ipynb", as_version=4)
        for cell in nb.cells:
            if cell.source.startswith("def grounded_extension"):
                head = cell.source.split('"""')[0:2]
                cell.source = '"""'.join(head) + '"""\n    ' + body
        return nb

    for who, nb in [
        ("correct", sol),
        ("unsolved", stu),
        # endless, and asleep: the 20 s limit is the same wall clock either way, and a busy
        # loop would take one of the suite's two cores for all of it (the CPU limit has its
        # own test, test_cpu_time_is_limited_and_the_rest_still_counts)
        ("loops", broken("import time\n\n    while True:\n        time.sleep(0.2)")),
        ("crashes", broken("import os\n\n    os._exit(1)")),
    ]:
        (dest / who).mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, dest / who / "ex2_grounded.ipynb")
    return dest
