"""Exercises: release student versions, grade submissions, report on a class.

* :mod:`.markers` — what an instructor writes in a solution notebook (solutions, checks, points,
  hidden tests);
* :mod:`.checks` — the graders, one module per teaching module (they need no model);
* :mod:`.release` — solution notebooks → student notebooks and one zip per exercise;
* :mod:`.grade` — grade a class: read the submissions without following links
  (:mod:`.submissions`), :mod:`.build` the graded notebook, run the student's cells with its kernel
  in a bubblewrap sandbox of its own (:mod:`.sandbox`, :mod:`.jail`, :mod:`.seccomp`,
  :mod:`.cgroups`, :mod:`.runner`), run the checks in the checker, a second sandbox that calls the
  student's functions over plain data (:mod:`.checker`, :mod:`.serve`, :mod:`.codec`), score,
  write the CSV and feedback pages (threat model: ``docs/classroom.md``);
* :mod:`.classdata` and :mod:`.report` — a class's ratings or feedback forms in one report;
* :mod:`.feedback` — ``%load_ext argnb.exercises``: a failed check shows its message, not the
  grader's code.
"""

from __future__ import annotations

from typing import Any


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext argnb.exercises`` in an exercise notebook (see :mod:`.feedback`)."""
    from argnb.exercises.feedback import install

    install(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from argnb.exercises.feedback import uninstall

    uninstall(ipython)
