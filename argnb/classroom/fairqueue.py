"""Who goes next when the model server is busy: one turn per learner, round robin.

The model server has a few slots (vLLM's batch, llama.cpp's parallel sequences). A plain FIFO in
front of it lets one learner's script of twenty parallel calls fill every slot while the rest of
the room waits behind it. Here each learner has a queue of their own and a cap on requests in
flight; when a slot frees, the learner with the fewest requests in flight who was served longest
ago goes next. A greedy learner therefore gets one turn in every round, like everyone else.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from argnb.errors import QueueFull


@dataclass
class _Learner:
    limit: int
    active: int = 0
    waiting: deque[asyncio.Future[None]] = field(default_factory=deque)


class FairQueue:
    """``slots`` requests at once overall; each learner at most their ``limit`` of them."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError("the model server needs at least one slot")
        self.slots = slots
        self.busy = 0
        self._learners: dict[str, _Learner] = {}
        # when each learner last got a slot (lower goes first). Kept while they are idle: a
        # learner who sends one request after another is idle between them, and must not come
        # back at the head of the queue
        self._served: dict[str, int] = {}
        self._round = itertools.count(1)

    @contextlib.asynccontextmanager
    async def turn(self, user: str, limit: int, max_waiting: int) -> AsyncIterator[None]:
        """Wait for this learner's turn, hold a slot for the request, then give it back."""
        who = self._learners.setdefault(user, _Learner(limit))
        who.limit = limit
        if len(who.waiting) >= max_waiting:
            raise QueueFull(f"{user} has {max_waiting} requests waiting")
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        who.waiting.append(ready)
        self._dispatch()
        try:
            await ready
        except BaseException:
            if ready.done() and not ready.cancelled():
                self._release(user)  # granted just as the caller gave up
            else:
                with contextlib.suppress(ValueError):
                    who.waiting.remove(ready)
                if not who.active and not who.waiting:
                    self._learners.pop(user, None)
            raise
        try:
            yield
        finally:
            self._release(user)

    def _release(self, user: str) -> None:
        who = self._learners[user]
        who.active -= 1
        self.busy -= 1
        if not who.active and not who.waiting:
            del self._learners[user]
        self._dispatch()

    def _dispatch(self) -> None:
        while self.busy < self.slots:
            ready = [
                (w.active, self._served.get(name, 0), name)
                for name, w in self._learners.items()
                if w.waiting and w.active < w.limit
            ]
            if not ready:
                return
            _, _, name = min(ready)
            who = self._learners[name]
            fut = who.waiting.popleft()
            if fut.cancelled():
                continue
            who.active += 1
            self._served[name] = next(self._round)
            self.busy += 1
            fut.set_result(None)

    def snapshot(self) -> dict[str, dict[str, int]]:
        """Requests in flight and waiting, per learner (the instructor's page shows it)."""
        return {
            name: {"active": w.active, "waiting": len(w.waiting)}
            for name, w in sorted(self._learners.items())
        }
