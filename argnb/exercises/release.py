"""Release student notebooks from solution notebooks, nbgrader style.

``exercises/<NN_topic>/solutions/*.ipynb`` are the source of truth. Solution code sits between
``### BEGIN SOLUTION`` and ``### END SOLUTION`` lines (markdown answers between
``<!-- BEGIN SOLUTION -->`` and ``<!-- END SOLUTION -->``). Each transformation is one small class;
the pipeline is an ordered list, so an instructor can add a step.

    python -m argnb.exercises.release          # write exercises/*/student/*.ipynb
    python -m argnb.exercises.release --check  # exit 1 if a student version is stale
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

CODE_BEGIN, CODE_END = "### BEGIN SOLUTION", "### END SOLUTION"
MD_SOLUTION = re.compile(r"<!--\s*BEGIN SOLUTION\s*-->.*?<!--\s*END SOLUTION\s*-->", re.DOTALL)
STUB = 'raise NotImplementedError("your code here")'


class Preprocessor:
    """One transformation of a notebook (a dict in nbformat 4 layout)."""

    def __call__(self, nb: Any) -> Any:
        for cell in nb.cells:
            self.cell(cell)
        return nb

    def cell(self, cell: Any) -> None:  # pragma: no cover - overridden
        pass


class ClearOutputs(Preprocessor):
    """Student notebooks start clean."""

    def cell(self, cell: Any) -> None:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None


class ClearCodeSolutions(Preprocessor):
    """Replace each marked region of a code cell by a stub at the same indentation."""

    def cell(self, cell: Any) -> None:
        if cell.cell_type != "code" or CODE_BEGIN not in cell.source:
            return
        out, inside = [], False
        for line in cell.source.splitlines():
            stripped = line.strip()
            if stripped == CODE_BEGIN:
                inside = True
                indent = line[: len(line) - len(line.lstrip())]
                out.append(indent + STUB)
            elif stripped == CODE_END:
                if not inside:
                    raise ValueError(f"{CODE_END} without {CODE_BEGIN}")
                inside = False
            elif not inside:
                out.append(line)
        if inside:
            raise ValueError(f"{CODE_BEGIN} without {CODE_END}")
        cell.source = "\n".join(out)


class ClearMarkdownSolutions(Preprocessor):
    """Replace marked markdown answers by a prompt to write one."""

    def cell(self, cell: Any) -> None:
        if cell.cell_type == "markdown":
            cell.source = MD_SOLUTION.sub("*Your answer here.*", cell.source)


PIPELINE: list[Preprocessor] = [ClearOutputs(), ClearCodeSolutions(), ClearMarkdownSolutions()]


def student_version(solution: Path) -> str:
    """The student notebook's JSON text for a solution notebook."""
    import nbformat

    nb = nbformat.read(solution, as_version=4)
    for step in PIPELINE:
        nb = step(nb)
    return nbformat.writes(nb) + "\n"


def pairs(root: Path) -> list[tuple[Path, Path]]:
    """(solution, student) paths for every exercise notebook under ``root``."""
    return [
        (sol, sol.parent.parent / "student" / sol.name)
        for sol in sorted(root.glob("*/solutions/*.ipynb"))
        if ".ipynb_checkpoints" not in sol.parts
    ]


def release(root: Path, *, check: bool = False) -> list[Path]:
    """Write (or, with ``check``, compare) student versions; return the stale/written ones."""
    changed = []
    for sol, stu in pairs(root):
        text = student_version(sol)
        if stu.exists() and stu.read_text(encoding="utf-8") == text:
            continue
        changed.append(stu)
        if not check:
            stu.parent.mkdir(parents=True, exist_ok=True)
            stu.write_text(text, encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="release student notebooks")
    p.add_argument("--root", default="exercises", type=Path)
    p.add_argument("--check", action="store_true", help="only report stale student versions")
    args = p.parse_args(argv)
    changed = release(args.root, check=args.check)
    for path in changed:
        print(("stale: " if args.check else "wrote: ") + str(path))
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
