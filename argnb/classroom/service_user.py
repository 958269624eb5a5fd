"""The gateway runs as its own system user, and only that user can open what it keeps.

The hub starts its services as the hub's user (root on TLJH), and learners' kernels run on the
same machine. The usage database names every learner and what they spent; a room's file is
everything its seats said. So before it serves anything the gateway takes its files over (the
SQLite database and the rooms folder), drops root for ``user``, and keeps a umask that makes
every file it writes 0600 and every folder 0700. Without ``user`` (a hub not run as root) the
same modes hold for the hub's own user.
"""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

from argnb.errors import ArgnbError

#: what the gateway's files lose: every permission of group and others
PRIVATE_UMASK = 0o077


def sqlite_file(db_url: str) -> Path | None:
    """The database file of a SQLite URL (None for a server database or an in-memory one)."""
    scheme, _, rest = db_url.partition(":///")
    if scheme.startswith("sqlite") and rest and rest != ":memory:":
        return Path(rest).resolve()
    return None


def _own(path: Path, ids: tuple[int, int] | None, mode: int) -> None:
    """``path`` to ``mode`` (and to ``ids`` when given), opened without following a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ArgnbError(
            f"cannot take over {path}: {exc.strerror} (the gateway's files must be its own, "
            "not links)",
            hint="remove it and let the gateway make it",
        ) from None
    try:
        st = os.fstat(fd)
        if ids and (st.st_uid, st.st_gid) != ids:
            os.fchown(fd, *ids)
        if stat.S_IMODE(st.st_mode) != mode:
            os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _make_dir(path: Path, ids: tuple[int, int] | None) -> None:
    """Create ``path`` unless it is there (its missing parents 0755 for root's use, itself 0700)."""
    if path.exists() or path.is_symlink():
        return
    for parent in reversed(path.parents):
        if not parent.exists():
            parent.mkdir(mode=0o755)
            os.chmod(parent, 0o755)
    path.mkdir(mode=0o700)
    _own(path, ids, 0o700)


def take_over(user: str | None, db_file: Path | None, rooms_dir: Path) -> None:
    """Make the gateway's files private to ``user`` (or to this process's user), then become it.

    The database's folder must be the gateway's to write (SQLite writes a journal beside the
    file): made here when missing, else it must already be writable by ``user``.
    """
    os.umask(PRIVATE_UMASK)
    ids: tuple[int, int] | None = None
    if user:
        try:
            pw = pwd.getpwnam(user)
        except KeyError:
            raise ArgnbError(
                f"there is no system user {user!r} for the class gateway",
                hint=f"sudo useradd --system --no-create-home --shell /usr/sbin/nologin {user}",
            ) from None
        if os.geteuid() not in (0, pw.pw_uid):
            raise ArgnbError(
                f"the gateway runs as uid {os.geteuid()}, so it cannot become {user}",
                hint="run the hub as root, or leave out configure(..., user=)",
            )
        if os.geteuid() == 0:
            ids = (pw.pw_uid, pw.pw_gid)
    # the outer folder first: the rooms folder sits in the database's by default, and made the
    # other way round, the database's folder would be a parent made on the way (root's)
    folders = {rooms_dir, *([db_file.parent] if db_file else [])}
    for folder in sorted(folders, key=lambda f: len(f.parts)):
        _make_dir(folder, ids)
    _own(rooms_dir, ids, 0o700)
    for room in rooms_dir.iterdir():
        if room.suffix == ".json" or room.name.endswith(".tmp"):
            _own(room, ids, 0o600)
    if db_file:
        for f in (db_file, *(Path(f"{db_file}{s}") for s in ("-journal", "-wal", "-shm"))):
            if f.exists() or f.is_symlink():
                _own(f, ids, 0o600)
    if ids:
        os.setgroups([])
        os.setgid(ids[1])
        os.setuid(ids[0])
        home = pwd.getpwuid(ids[0]).pw_dir  # a system user often has none: its state folder
        os.environ["HOME"] = home if os.path.isdir(home) else str(rooms_dir.parent)
    if db_file and not os.access(db_file.parent, os.W_OK | os.X_OK):
        raise ArgnbError(
            f"the gateway cannot write in {db_file.parent} (SQLite keeps a journal beside "
            "the database)",
            hint=f"sudo install -d -o {user or 'HUBUSER'} -m 700 DIR, and put the database in it",
        )
