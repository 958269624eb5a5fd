"""The site's source folder: the course's files as a learner gets them (student exercises only,
listed by :func:`argnb.course.course_files`, handed in as :class:`Sources` by the command, so the
site never imports the course module that starts it), the docs, the site's pages and ``conf.py``.

Staging happens outside the checkout (a work folder), so executing the lessons never writes into
the repository, and a lesson's relative paths (``../assets/...``) hold as in the course folder.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from argnb.site import pages

CONF = "from argnb.site.sphinx_conf import apply\n\napply(globals())\n"
#: long inline code (a command, a call) wraps on a phone instead of widening the page
CSS = "code.literal, code.literal span.pre { white-space: normal; overflow-wrap: anywhere; }\n"


@dataclass(frozen=True)
class Sources:
    """What the site is made of: the course folder, its files (relative), its docs, its home."""

    root: Path
    files: list[Path]
    docs: list[Path]
    home: str = "START_HERE.ipynb"


def _markdown_cells(nb: Path) -> list[str]:
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")  # unchanged files keep their time: Sphinx skips


def _copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if not dest.exists() or dest.read_bytes() != src.read_bytes():
        shutil.copyfile(src, dest)


def _lesson(src: Path, dest: Path) -> None:
    """The lesson with the site's note after its title cell (a Markdown cell: jupyter-cache
    hashes only code, so the note never causes a re-run)."""
    nb = json.loads(src.read_text(encoding="utf-8"))
    note = {"cell_type": "markdown", "metadata": {}, "source": pages.lesson_note(src.name)}
    if nb.get("nbformat_minor", 0) >= 5:
        note["id"] = "argnb-site-note"
    nb["cells"].insert(1, note)
    _write(dest, json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def stage(dest: Path, sources: Sources) -> list[str]:
    """Write the site's sources into ``dest``; returns the lessons (``notebooks/NN_x``)."""
    root = sources.root
    lessons: list[str] = []
    groups: dict[str, list[str]] = {}
    for rel in sources.files:
        if rel.as_posix() == sources.home:
            continue
        if rel.parts[0] == "notebooks" and rel.suffix == ".ipynb":
            _lesson(root / rel, dest / rel)
            _copy(root / rel, dest / "_notebooks" / rel.name)  # the download: as in the course
            lessons.append(rel.with_suffix("").as_posix())
            continue
        _copy(root / rel, dest / rel)
        if rel.parts[0] == "exercises" and rel.suffix == ".ipynb":
            groups.setdefault(rel.parts[1], []).append(rel.with_suffix("").as_posix())
    docs = [rel.with_suffix("").as_posix() for rel in sources.docs]
    for rel in sources.docs:
        _copy(root / rel, dest / rel)
    teaching = [d for d in docs if d != "docs/classroom" and d != "docs/site"]
    _write(dest / "index.md", pages.home(_markdown_cells(root / sources.home), lessons))
    _write(dest / "exercises.md", pages.exercises(sorted(groups.items())))
    _write(dest / "reference.md", pages.reference(teaching))
    _write(dest / "instructors.md", pages.instructors([d for d in docs if d not in teaching]))
    _write(dest / "conf.py", CONF)
    _write(dest / "_static" / "argnb-site.css", CSS)
    return lessons
