"""A learner's server on a class hub: the course into their home first, then the server itself.

``python -m argnb.classroom.singleuser FOLDER -- CMD ...`` is the spawner's command when
:func:`argnb.classroom.hub.configure` is given ``course=FOLDER``: it runs as the learner, copies
the course into ``~/FOLDER`` (new lessons added, files the learner never changed brought up to
date, their own edits kept: :func:`argnb.course.copy_course` with ``update``), then becomes
``CMD`` (JupyterHub's single-user server, with the spawner's arguments). A copy that fails is one
line in the server's log, never a server that does not start.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m argnb.classroom.singleuser FOLDER -- CMD ...", file=sys.stderr)
        return 2
    folder, cmd = argv[0], argv[2:]
    try:
        from argnb.course import copy_course

        done = copy_course(Path.home() / folder, update=True)
        print(
            f"argnb: the course in ~/{folder}: {len(done.written)} new, {len(done.updated)} "
            f"updated, {len(done.kept)} kept",
            file=sys.stderr,
        )
    except Exception as exc:  # the server starts anyway
        print(f"argnb: the course was not copied into ~/{folder}: {exc}", file=sys.stderr)
    sys.stderr.flush()
    os.execvp(cmd[0], cmd)
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
