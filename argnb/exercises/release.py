"""Release student notebooks from solution notebooks, nbgrader style.

``exercises/<NN_topic>/solutions/*.ipynb`` are the source of truth (markers: :mod:`.markers`).
Each transformation is one small class; the pipeline is an ordered list, so an instructor can add
a step. Besides the student notebooks in ``exercises/<NN_topic>/student/``, a release writes one
zip per exercise folder with what a student needs: the student notebooks and every other file of
the folder (data the notebooks read), never the solutions.

    python -m argnb.exercises release                 # write student/*.ipynb and dist/exercises/*.zip
    python -m argnb.exercises release --check         # exit 1 if a student version is stale
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from argnb.errors import ArgnbError
from argnb.exercises.markers import (
    CODE_BEGIN,
    CODE_END,
    HIDDEN_BEGIN,
    HIDDEN_END,
    MD_SOLUTION,
    STUB,
    check_of,
    checks,
    strip_region,
)

__all__ = ["PIPELINE", "STUB", "pairs", "release", "student_files", "student_version", "zip_folder"]

#: parts of an exercise folder that never reach a student
PRIVATE = {"solutions", ".ipynb_checkpoints", "__pycache__", ".git"}


class Preprocessor:
    """One transformation of a notebook (a dict in nbformat 4 layout)."""

    def __call__(self, nb: Any) -> Any:
        for cell in nb.cells:
            self.cell(cell)
        return nb

    def cell(self, cell: Any) -> None:  # pragma: no cover - overridden
        pass


class ValidateMarkers(Preprocessor):
    """Refuse inconsistent markers before anything is written (see :func:`.markers.checks`)."""

    def __call__(self, nb: Any) -> Any:
        checks(nb)
        return nb


class ClearOutputs(Preprocessor):
    """Student notebooks start clean: no outputs, counts or execution timings."""

    def cell(self, cell: Any) -> None:
        cell.get("metadata", {}).pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None


class ClearCodeSolutions(Preprocessor):
    """Replace each marked region of a code cell by a stub at the same indentation."""

    def cell(self, cell: Any) -> None:
        if cell.cell_type == "code" and CODE_BEGIN in cell.source:
            cell.source = strip_region(cell.source, CODE_BEGIN, CODE_END, STUB)


class ClearHiddenTests(Preprocessor):
    """Drop hidden tests, markers included: only the grader runs them."""

    def cell(self, cell: Any) -> None:
        if cell.cell_type == "code" and HIDDEN_BEGIN in cell.source:
            cell.source = strip_region(cell.source, HIDDEN_BEGIN, HIDDEN_END, None).rstrip()


class ClearMarkdownSolutions(Preprocessor):
    """Replace marked markdown answers by a prompt to write one."""

    def cell(self, cell: Any) -> None:
        if cell.cell_type == "markdown":
            cell.source = MD_SOLUTION.sub("*Your answer here.*", cell.source)


class TagChecks(Preprocessor):
    """Record each check's id in the cell's metadata, so the grader still finds a check whose
    ``### CHECK`` line a student deleted."""

    def cell(self, cell: Any) -> None:
        marked = check_of(cell)
        if marked is not None:
            cell.metadata["argnb"] = {"check": marked[0], "points": marked[1]}


PIPELINE: list[Preprocessor] = [
    ValidateMarkers(),
    ClearOutputs(),
    ClearCodeSolutions(),
    ClearHiddenTests(),
    ClearMarkdownSolutions(),
    TagChecks(),
]


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


def student_files(folder: Path) -> list[Path]:
    """Every file of an exercise folder a student gets (relative paths, sorted): all but
    solutions, checkpoints and hidden files."""
    out = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and not any(p in PRIVATE or p.startswith(".") for p in rel.parts):
            out.append(rel)
    return out


def zip_folder(folder: Path, dest: Path) -> Path:
    """Zip what a student needs of ``folder`` into ``dest/<folder name>.zip``.

    Entries are sorted and dated 1980-01-01, so the same files give the same bytes.
    """
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / f"{folder.name}.zip"
    tmp = target.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel in student_files(folder):
            info = zipfile.ZipInfo(
                f"{folder.name}/{rel.as_posix()}", date_time=(1980, 1, 1, 0, 0, 0)
            )
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, (folder / rel).read_bytes())
    tmp.replace(target)
    return target


def release(root: Path, *, check: bool = False, to: Path | None = None) -> list[Path]:
    """Write (or, with ``check``, compare) student versions; return the stale/written ones.

    With ``to``, also write one zip per exercise folder there (after the notebooks are fresh).
    """
    found = pairs(root)
    if not found:
        inner = root / "exercises"
        raise ArgnbError(
            f"no exercises under {root} (no NN_topic/solutions/*.ipynb there)",
            hint=f"--root {inner}"
            if pairs(inner)
            else "--root is the exercises folder, the one holding NN_topic/solutions/*.ipynb",
        )
    changed = []
    for sol, stu in found:
        text = student_version(sol)
        if stu.exists() and stu.read_text(encoding="utf-8") == text:
            continue
        changed.append(stu)
        if not check:
            stu.parent.mkdir(parents=True, exist_ok=True)
            stu.write_text(text, encoding="utf-8")
    if to is not None and not check:
        for folder in sorted({sol.parent.parent for sol, _ in found}):
            zip_folder(folder, to)
    return changed
