"""A total deadline for one request, whatever the HTTP library underneath does.

HTTP clients time out per read: a server that sends one byte a second, or sends its headers and
then nothing, keeps a request alive far beyond the configured timeout (278 s against
``timeout=3`` was measured). The official clients do not share one HTTP stack (``ollama`` uses
httpx, recent ``openai`` releases httpx2), so the deadline is enforced around the call instead:

* sync: the call runs in a daemon thread and the caller waits at most ``seconds``; a request past
  its deadline is abandoned (its socket still times out per read, so the thread ends soon after,
  and a daemon thread never delays interpreter exit);
* async: :func:`asyncio.wait_for`, which cancels the request and closes its connection;
* streams: the same, applied to the whole stream, chunk by chunk.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")
Expired = Callable[[], BaseException]
_END = object()


def _left(deadline: float, expired: Expired) -> float:
    """Seconds left before ``deadline``; ``expired()`` raised when there are none."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise expired()
    return remaining


def call_within(fn: Callable[[], T], seconds: float, expired: Expired) -> T:
    """``fn()``, or ``expired()`` raised once ``seconds`` have passed."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, daemon=True, name="argnb-request").start()
    if not done.wait(seconds):
        raise expired()
    if "error" in box:
        raise box["error"]
    return box["value"]


def iterate_within(
    make: Callable[[], Iterator[T]], seconds: float, expired: Expired
) -> Iterator[T]:
    """The items of ``make()``, produced in a daemon thread; ``expired()`` is raised when the
    whole iteration has not finished within ``seconds``. Closing this generator early stops the
    producer at its next item."""
    deadline = time.monotonic() + seconds
    items: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()

    def work() -> None:
        it = None
        try:
            it = make()
            for item in it:
                items.put((True, item))
                if stop.is_set():
                    break
            items.put((True, _END))
        except BaseException as exc:
            items.put((False, exc))
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()

    threading.Thread(target=work, daemon=True, name="argnb-stream").start()
    try:
        while True:
            try:
                ok, item = items.get(timeout=_left(deadline, expired))
            except queue.Empty:
                raise expired() from None
            if not ok:
                raise item
            if item is _END:
                return
            yield item
    finally:
        stop.set()


async def acall_within(aw: Awaitable[T], seconds: float, expired: Expired) -> T:
    """Await ``aw`` for at most ``seconds`` (cancelled after that, and ``expired()`` raised)."""
    try:
        return await asyncio.wait_for(aw, seconds)
    except asyncio.TimeoutError:
        raise expired() from None


async def aiterate_within(
    ait: AsyncIterator[T], seconds: float, expired: Expired
) -> AsyncIterator[T]:
    """The items of ``ait``, cancelled and ``expired()`` raised past ``seconds`` in all."""
    deadline = time.monotonic() + seconds
    try:
        while True:
            try:
                item = await asyncio.wait_for(ait.__anext__(), _left(deadline, expired))
            except StopAsyncIteration:
                return
            except asyncio.TimeoutError:
                raise expired() from None
            yield item
    finally:
        aclose = getattr(ait, "aclose", None)
        if aclose is not None:
            await aclose()
