"""A file lock that leaves nothing behind.

``filelock`` on POSIX keeps its ``.lock`` file after release (deleting it safely needs care), so
every finished run left ``results.jsonl.lock`` beside its results. Here the lock file is removed
by its holder before it lets go; a waiter that locked a file already removed sees that its inode
is no longer the one at the path and tries again, so two holders never overlap. ``flock`` is
released by the kernel when a process dies, so a crash leaves a file but never a stale lock.
Elsewhere (Windows) ``filelock`` is used; it deletes its file on release there.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from argnb.errors import LockTaken


class FileLock:
    """An exclusive lock on ``path`` (the lock file is created and, on release, removed)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None
        self._other: object | None = None

    def acquire(self, timeout: float = -1, poll: float = 0.05) -> None:
        """Take the lock; wait at most ``timeout`` seconds (``-1``: for ever, ``0``: not at all)."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            self._acquire_other(timeout)
            return
        deadline = None if timeout < 0 else time.monotonic() + timeout
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                if deadline is not None and time.monotonic() >= deadline:
                    raise LockTaken(str(self.path)) from None
                time.sleep(poll)
                continue
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                self._fd = fd
                return
            os.close(fd)  # its holder removed it as we waited: lock the file at the path now

    def _acquire_other(self, timeout: float) -> None:  # pragma: no cover - Windows
        from filelock import FileLock as Other
        from filelock import Timeout

        lock = Other(str(self.path))
        try:
            lock.acquire(timeout=timeout)
        except Timeout:
            raise LockTaken(str(self.path)) from None
        self._other = lock

    def release(self) -> None:
        if self._other is not None:  # pragma: no cover - Windows
            self._other.release()  # type: ignore[attr-defined]
            self._other = None
        if self._fd is None:
            return
        try:
            self.path.unlink()  # while still held: no one can have locked this file
        except FileNotFoundError:
            pass
        finally:
            os.close(self._fd)  # closing releases the flock
            self._fd = None


@contextmanager
def locked(path: str | Path, timeout: float = -1) -> Iterator[FileLock]:
    """``with locked("data.csv.lock"): ...`` -- the lock, removed when the block ends."""
    lock = FileLock(path)
    lock.acquire(timeout)
    try:
        yield lock
    finally:
        lock.release()
