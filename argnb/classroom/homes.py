"""Collect exercises from learners' homes and return their feedback, on a TLJH-style hub.

Each learner's files are read, and their feedback written, **by a child process running as that
learner** (fork, then setgroups/setgid/setuid): a learner can hand in only what they themselves
can read, and a link they plant where their feedback goes points nowhere they could not already
write. On top of that every path is opened without following links (``O_NOFOLLOW`` at each
step): a link is refused and reported, never read. The instructor runs both as root on the hub
host; names are the hub's user names (the home folder, minus a prefix such as TLJH's
``jupyter-``).
"""

from __future__ import annotations

import base64
import contextlib
import errno
import json
import os
import pwd
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from argnb.errors import ArgnbError

MAX_BYTES = 20_000_000  # one notebook; outputs with pictures fit, a disk image does not
MAX_TOTAL = 50_000_000  # one learner's hand-in, all notebooks together
CHILD_S = 30.0  # one learner's files, read or written: a FIFO or a stalled disk costs them only


@dataclass(frozen=True)
class Home:
    """A learner's home on the hub host."""

    name: str  # the hub name
    path: Path
    uid: int
    gid: int


def homes(root: Path = Path("/home"), prefix: str = "", only: set[str] | None = None) -> list[Home]:
    """Every learner home under ``root``: a folder named ``prefix + name``, owned by a regular
    user (uid >= 1000) whose home it is (of the names in ``only``, when given)."""
    found = []
    for entry in sorted(root.iterdir()):
        if not entry.name.startswith(prefix) or entry.is_symlink() or not entry.is_dir():
            continue
        st = entry.stat()
        try:
            user = pwd.getpwuid(st.st_uid)
        except KeyError:
            continue
        if st.st_uid < 1000 or Path(user.pw_dir) != entry:
            continue
        name = entry.name[len(prefix) :] or entry.name
        if only is None or name in only:
            found.append(Home(name, entry, st.st_uid, user.pw_gid))
    return found


def _as(home: Home, job: Any, seconds: float = CHILD_S) -> Any:
    """Run ``job()`` in a child process as the learner; return what it returned (JSON data).

    The child has ``seconds``: one that blocks (a FIFO, a hung network home) is killed and this
    learner's job fails with one line, while every other learner's goes on."""
    import select
    import signal
    import time

    if os.geteuid() != 0:
        raise ArgnbError(
            "reading and writing learners' homes needs root",
            hint="run it on the hub host with sudo (each learner's files are then handled as "
            "that learner)",
        )
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: become the learner, do the job, send the answer, exit
        code = 0
        try:
            os.close(r)
            signal.alarm(int(seconds) + 1)  # a backstop: the parent kills it first
            os.setgroups([])
            os.setgid(home.gid)
            os.setuid(home.uid)
            out = {"ok": job()}
        except BaseException as exc:  # reported to the parent, never raised past the fork
            out, code = {"error": f"{type(exc).__name__}: {exc}"}, 1
        with os.fdopen(w, "w") as f:
            json.dump(out, f)
        os._exit(code)
    os.close(w)
    chunks: list[bytes] = []
    end = time.monotonic() + seconds
    try:
        while True:
            left = end - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                raise OSError(f"gave up after {seconds:.0f} s (a FIFO or a stalled disk?)")
            chunk = os.read(r, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(r)
        os.waitpid(pid, 0)
    answer = json.loads(b"".join(chunks) or b'{"error": "the child process died"}')
    if "error" in answer:
        raise OSError(answer["error"])
    return answer["ok"]


def _open_dir(home: Path, parts: tuple[str, ...], create: bool = False) -> int:
    """A file descriptor of ``home/parts...``: no link followed below the home (which only root
    can replace), folders made on the way when ``create``."""
    fd = os.open(home, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for part in parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o700, dir_fd=fd)
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_notebooks(home: Path, folder: tuple[str, ...]) -> dict[str, Any]:
    """In the learner's process: every ``*.ipynb`` directly in ``home/folder`` (links refused)."""
    try:
        fd = _open_dir(home, folder)
    except FileNotFoundError:
        return {"files": {}, "refused": [], "missing": True}
    except OSError as exc:
        why = "a link" if exc.errno in (errno.ELOOP, errno.ENOTDIR) else exc.strerror
        return {"files": {}, "refused": [f"{'/'.join(folder)}: {why}"], "missing": True}
    files: dict[str, str] = {}
    refused: list[str] = []
    total = 0
    try:
        for name in sorted(os.listdir(fd)):
            if not name.endswith(".ipynb"):
                continue
            try:  # each entry on its own: a bad one costs that entry, not the hand-in
                f = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
            except OSError as exc:  # ELOOP: a link
                refused.append(f"{name}: {'a link' if exc.errno == errno.ELOOP else exc.strerror}")
                continue
            try:
                st = os.fstat(f)  # before reading: a folder or a FIFO is refused, not read
                if not stat.S_ISREG(st.st_mode):
                    refused.append(f"{name}: not a regular file")
                elif st.st_size > MAX_BYTES:
                    refused.append(f"{name}: {st.st_size:,} bytes (over {MAX_BYTES:,})")
                elif total + st.st_size > MAX_TOTAL:
                    refused.append(f"{name}: past the {MAX_TOTAL:,} bytes one learner hands in")
                else:
                    with os.fdopen(os.dup(f), "rb") as fh:
                        data = fh.read(MAX_BYTES + 1)
                    total += len(data)
                    files[name] = base64.b64encode(data).decode()
            except OSError as exc:
                refused.append(f"{name}: {exc.strerror or exc}")
            finally:
                os.close(f)
    finally:
        os.close(fd)
    return {"files": files, "refused": refused, "missing": False}


def _write_page(home: Path, folder: tuple[str, ...], name: str, page: bytes) -> str:
    """In the learner's process: ``home/folder/name``, folders created, no link followed."""
    fd = _open_dir(home, folder, create=True)
    try:
        # O_NONBLOCK: a FIFO planted under the page's name cannot hold the open; then only a
        # regular file is written, and it is emptied only once it is known to be one
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            f = os.open(name, flags, 0o600, dir_fd=fd)
        except OSError as exc:
            if exc.errno == errno.ENXIO:
                raise OSError(f"{name} is a FIFO, not a file") from None
            raise
        try:
            if not stat.S_ISREG(os.fstat(f).st_mode):
                raise OSError(f"{name} is not a regular file")
            os.set_blocking(f, True)
            os.ftruncate(f, 0)
            with os.fdopen(os.dup(f), "wb") as fh:
                fh.write(page)
        finally:
            os.close(f)
    finally:
        os.close(fd)
    return str(home.joinpath(*folder, name))


@dataclass
class Collected:
    """What ``collect`` found: per learner the notebooks taken and the files refused."""

    taken: dict[str, list[str]] = field(default_factory=dict)
    refused: dict[str, list[str]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


def collect(
    exercise: str,
    to: Path,
    *,
    root: Path = Path("/home"),
    prefix: str = "",
    course: str = "argnb-course",
    only: set[str] | None = None,
) -> Collected:
    """Copy each learner's ``~/COURSE/exercises/EXERCISE/student/*.ipynb`` to ``to/NAME/``."""
    if not exercise or "/" in exercise or exercise.startswith("."):
        raise ArgnbError(f"not an exercise folder name: {exercise!r}", hint="e.g. 02_dialectic")
    result = Collected()
    to.mkdir(parents=True, exist_ok=True)
    for home in homes(root, prefix, only):
        folder = (*_relative(course), "exercises", exercise, "student")
        try:
            got = _as(home, lambda h=home.path, f=folder: _read_notebooks(h, f))
        except OSError as exc:  # one learner's trouble is theirs alone
            got = {"files": {}, "refused": [str(exc)], "missing": True}
        if got["refused"]:
            result.refused[home.name] = got["refused"]
        if not got["files"]:
            result.missing.append(home.name)
            continue
        dest = to / home.name
        dest.mkdir(exist_ok=True)
        for name, data in got["files"].items():
            (dest / name).write_bytes(base64.b64decode(data))
        result.taken[home.name] = sorted(got["files"])
    from argnb.exercises.submissions import COLLECTED  # the grader skips it

    (to / COLLECTED).write_text(json.dumps(result.__dict__, indent=1), encoding="utf-8")
    return result


def return_feedback(
    exercise: str,
    pages: dict[str, Path],
    *,
    root: Path = Path("/home"),
    prefix: str = "",
    course: str = "argnb-course",
    only: set[str] | None = None,
) -> dict[str, str]:
    """Put each learner's page at ``~/COURSE/feedback/EXERCISE.html``, written as that learner;
    a page whose learner has no home here is not written anywhere."""
    by_name = {h.name: h for h in homes(root, prefix, only)}
    folder = (*_relative(course), "feedback")
    written = {}
    for name, page in sorted(pages.items()):
        home = by_name.get(name)
        if home is None:
            continue
        data = page.read_bytes()
        try:
            written[name] = _as(
                home, lambda h=home.path, d=data: _write_page(h, folder, f"{exercise}.html", d)
            )
        except OSError as exc:  # this learner's folder is a link, or full: the others go on
            written[name] = f"not returned: {exc}"
    return written


def _relative(course: str) -> tuple[str, ...]:
    parts = Path(course).parts
    if not parts or Path(course).is_absolute() or ".." in parts:
        raise ArgnbError(f"the course folder must be a path inside each home, not {course!r}",
                         hint="e.g. --course argnb-course")  # fmt: skip
    return parts
