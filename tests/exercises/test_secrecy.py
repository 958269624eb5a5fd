"""Answers stay out of what a student can read: the student notebooks and the checks' messages."""

from pathlib import Path

import nbformat
import pytest

from argnb.exercises.checks import dialectic as dialectic_checks
from argnb.exercises.markers import CODE_BEGIN, CODE_END, HIDDEN_BEGIN, HIDDEN_END
from argnb.exercises.release import pairs

ROOT = Path(__file__).resolve().parents[2]
PAIRS = pairs(ROOT / "exercises")


def _regions(source: str) -> tuple[set[str], set[str]]:
    """(lines inside solution or hidden regions, lines outside them) of a cell."""
    inside, outside, depth = set(), set(), 0
    for line in source.splitlines():
        s = line.strip()
        if s in (CODE_BEGIN, HIDDEN_BEGIN):
            depth += 1
        elif s in (CODE_END, HIDDEN_END):
            depth -= 1
        elif s:
            (inside if depth else outside).add(s)
    return inside, outside


@pytest.mark.parametrize(("solution", "student"), PAIRS, ids=[p[0].stem for p in PAIRS])
def test_no_solution_or_hidden_line_reaches_the_student(solution, student):
    sol = nbformat.read(solution, as_version=4)
    secret, public = set(), set()
    for cell in sol.cells:
        if cell.cell_type == "code":
            i, o = _regions(cell.source)
            secret |= i
            public |= o
    secret -= public  # a line the notebook shows anyway is no secret
    text = student.read_text(encoding="utf-8")
    stu = nbformat.reads(text, as_version=4)
    shown = {line.strip() for c in stu.cells for line in c.source.splitlines()}
    assert not (secret & shown)
    for marker in ("BEGIN SOLUTION", "HIDDEN TESTS"):
        assert marker not in text


def test_the_grounded_exercise_does_not_state_its_answer():
    student = ROOT / "exercises/02_dialectic/student/ex2_grounded.ipynb"
    text = nbformat.read(student, as_version=4)
    code = "\n".join(c.source for c in text.cells)
    for leak in ('{"a", "c"}', "{'a', 'c'}", "['a', 'c']", '"IN"'):
        assert leak not in code


@pytest.mark.parametrize(
    ("extension", "labels"),
    [
        (set(), None),
        ({"a"}, None),
        ({"a", "c", "e"}, None),
        ({"a", "c"}, {a: "UNDEC" for a in "abcdefg"} | {"a": "IN", "c": "IN"}),
        (
            {"a", "c"},
            {"a": "IN", "b": "OUT", "c": "IN", "d": "OUT", "e": "UNDEC", "f": "UNDEC", "g": "OUT"},
        ),
    ],
)
def test_grounded_check_hints_without_naming_arguments(extension, labels):
    with pytest.raises(AssertionError) as info:
        dialectic_checks.check_grounded(extension, labels)
    message = str(info.value)
    for name in dialectic_checks.FRAMEWORK_ARGUMENTS:
        for quoted in (f"'{name}'", f'"{name}"', f"{name} is", f"[{name}"):
            assert quoted not in message
    assert "IN" in message or "accept" in message  # still a hint
