"""The one background worker of the notebook widgets, and the repaint throttle they share.

A widget's button must return at once -- the kernel has to keep serving the page, or nothing the
protocol streams would show -- so the work runs on a daemon thread (a coroutine on its own event
loop). A thread must not die silently: what it raises is kept in ``error`` and shown through
``on_error``; ``on_done`` runs either way (to switch the inputs back on). Streamed text arrives
faster than a browser can draw it, so a :class:`Throttle` lets through a few repaints a second.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

Job = Callable[[], Coroutine[Any, Any, Any]]


class Worker:
    """Runs one job at a time on a background thread; ``busy``, ``wait()`` and ``error`` say how
    it went (``wait`` is for tests and scripts)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.thread: threading.Thread | None = None
        self.error: BaseException | None = None

    @property
    def busy(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def wait(self, timeout: float | None = None) -> None:
        """Block until the current job has finished."""
        if self.thread is not None:
            self.thread.join(timeout)

    def run(
        self,
        job: Job,
        *,
        on_error: Callable[[BaseException], None],
        on_success: Callable[[], None] | None = None,
        on_done: Callable[[], None] | None = None,
    ) -> None:
        """Run the coroutine ``job()`` on its own event loop in the background."""
        self.start(
            lambda: asyncio.run(job()), on_error=on_error, on_success=on_success, on_done=on_done
        )

    def start(
        self,
        target: Callable[[], Any],
        *,
        on_error: Callable[[BaseException], None] | None = None,
        on_success: Callable[[], None] | None = None,
        on_done: Callable[[], None] | None = None,
    ) -> None:
        """Run the plain function ``target`` in the background (a replay, a loop of sleeps)."""
        self.error = None

        def body() -> None:
            try:
                target()
                if on_success is not None:
                    on_success()
            except BaseException as exc:  # shown in the widget; a thread must not die silently
                self.error = exc
                if on_error is not None:
                    on_error(exc)
            finally:
                if on_done is not None:
                    on_done()

        self.thread = threading.Thread(target=body, daemon=True, name=self.name)
        self.thread.start()


class Working:
    """``busy``, ``thread``, ``error`` and ``wait()`` of a widget that runs its jobs on
    ``self.worker`` (a :class:`Worker`)."""

    worker: Worker

    @property
    def busy(self) -> bool:
        return self.worker.busy

    @property
    def thread(self) -> threading.Thread | None:
        return self.worker.thread

    @property
    def error(self) -> BaseException | None:
        """What the last job raised (None when it went well)."""
        return self.worker.error

    def wait(self, timeout: float | None = None) -> None:
        """Block until the current job has finished (for tests and scripts)."""
        self.worker.wait(timeout)


class Throttle:
    """``due()`` is true at most once every ``seconds`` (always with ``force=True``)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._last = 0.0

    def due(self, force: bool = False) -> bool:
        now = time.monotonic()
        if not force and now - self._last < self.seconds:
            return False
        self._last = now
        return True
