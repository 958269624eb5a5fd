"""Rooms on the class server: several learners at one roundtable, run by the gateway service.

A learner opens a room for a question and gets a short code; others join with it. Each is seated
under their hub name (the token says who they are; no body field names a seat). The room -- a
:class:`argnb.roundtable.room.Room` -- runs here, not in a learner's kernel: one asyncio task per
room drives it after every move and passes over a learner who does not answer within
``answer_s``. Its moderator, deliberators and analyzer reach the class model through the same
upstream and fair queue as the learners (queued as ``room:CODE``), and their tokens are charged
to the seated learners: in equal parts to those with tokens left today; when none has, the
room's model calls are refused with one line and the room waits (:meth:`Host.payers`). Each
room's transcript is written to ``rooms_dir/CODE.json`` after every turn, so a restarted service
resumes every unfinished room where it stood.

The API (JSON; a refusal is ``{"error": {"message": one line, "hint": ..., "type":
"argnb_room", "code": status}}``)::

    POST rooms                      {"topic": "...", "turns": 12}  -> 201, the state (you seated)
    GET  rooms/CODE?since=N         the state: turns after index N; waits up to poll_s for news
    POST rooms/CODE/join
    POST rooms/CODE/say             {"text": "..."}      ("" or "/pass": pass; "/end": pass, ready)
    POST rooms/CODE/hand | lower | ready | leave
    POST rooms/CODE/rank            {"ranking": ["S2", "S1"]}
    POST rooms/CODE/critique        {"text": "..."}

401: no hub token; 400: a bad body; 403: a move in a room one has not joined; 404: no such
room; 409: a move the room refuses now (not your turn, nothing to rank, ranked already).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from argnb.classroom.usage import UNUSABLE, Use
from argnb.errors import AllowanceUsed, ArgnbError, BackendError, RoomRefused
from argnb.llm.openai import OpenAIBackend
from argnb.roundtable import record
from argnb.roundtable.room import Room
from argnb.roundtable.session import HUMAN_CHARS
from argnb.transcript import Transcript

if TYPE_CHECKING:
    from argnb.classroom.gateway import Gateway
    from argnb.events import Event

log = logging.getLogger("argnb.gateway.rooms")

#: a room code's letters: no 0/O, 1/I/L, so a code read aloud or off a slide is typed right
ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
#: 8 of 31 letters: 8.5e11 codes, so with 200 rooms open and 10 wrong guesses a minute per
#: learner, guessing one takes millennia (rooms opened before codes grew to 8 keep their 6)
CODE_CHARS = 8
CODE = re.compile(f"^[{ALPHABET}]{{6}}(?:[{ALPHABET}]{{2}})?$")
TOPIC_CHARS = 300
TURNS = (2, 40)  # the fewest and most speaker turns a learner may ask for
MOVES = ("join", "say", "hand", "lower", "ready", "leave", "rank", "critique")
#: what a room's seats are built from: ``backends(code)`` gives ``moderator``, ``deliberators``
#: (two) and ``analyzer``, each an argnb backend, and optionally ``fallacy`` (a Baseline)
Backends = Callable[[str], dict[str, Any]]


@dataclass
class RoomSettings:
    """Where rooms are kept and how long the service waits."""

    rooms_dir: Path
    answer_s: float = 120.0  # a learner who does not move within this is passed over
    poll_s: float = 25.0  # a GET with nothing new waits this long for news
    turns: int = 12  # speaker turns of a room, unless its opener asks for others
    max_rooms: int = 200  # unfinished rooms at once
    per_learner: int = 3  # unfinished rooms one learner has opened
    retry_s: float = 5.0  # after a failed model call, the room tries again after this
    # per learner, so one script cannot flood the service: wrong codes a minute (guessing),
    # moves a minute (a hand raised and lowered 900 times in 20 s grew a transcript 45x),
    # rooms opened an hour (open-and-leave 137 rooms in 15 s)
    # a room is archived (moved to rooms_dir/archive, not resumed, no longer served) once it
    # has ended this long ago, or has had nobody seated this long
    keep_ended_s: float = 86_400.0
    keep_empty_s: float = 1_800.0
    wrong_codes_per_min: int = 10
    moves_per_min: int = 120
    opens_per_hour: int = 12


def is_index(raw: str) -> bool:
    """A turn index as a client may send it: 1 to 9 ASCII digits (``str.isdigit`` also takes
    "²" and other Unicode digits, which ``int`` refuses: that was an HTTP 500)."""
    return raw.isascii() and raw.isdigit() and len(raw) <= 9


def _refuse(status: int, message: str, hint: str = "") -> RoomRefused:
    return RoomRefused(message, status=status, hint=hint or None)


def new_code(taken: set[str] | dict[str, Any]) -> str:
    while True:
        code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_CHARS))
        if code not in taken:
            return code


def _share(total: int, n: int, i: int) -> int:
    """The ``i``-th of ``n`` near-equal whole shares of ``total`` (they add up to it)."""
    return total // n + (1 if i < total % n else 0)


def save_atomic(tr: Transcript, path: Path) -> None:
    """Write the transcript so a crash leaves the old file or the new one, never half of one."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(tr.to_json(indent=1), encoding="utf-8")
    os.replace(tmp, path)


class Host:
    """One room in the service: the :class:`Room`, the lock its model turns and a learner's
    turn take, the task that drives it, and since when each awaited learner has been awaited."""

    def __init__(self, rooms: Rooms, code: str) -> None:
        self.rooms, self.code = rooms, code
        self.room: Room = None  # type: ignore[assignment]
        self.lock = asyncio.Lock()
        self.changed = asyncio.Event()  # replaced after each change: long polls wait on it
        self.moved = asyncio.Event()  # a learner moved: the driver looks again
        self.since: dict[str, tuple[tuple[str, int], float]] = {}  # name: (wait, since)
        self.task: asyncio.Task | None = None
        self.error = ""

    @property
    def opener(self) -> str:
        """Who opened the room: the first seat taken."""
        first = next((t for t in self.room.transcript.turns if t.role == "seat"), None)
        return first.speaker if first else ""

    @property
    def path(self) -> Path:
        return self.rooms.settings.rooms_dir / f"{self.code}.json"

    def on_event(self, event: Event) -> None:
        if event.kind != "turn" or event.turn is None:
            return
        save_atomic(self.room.transcript, self.path)
        t = event.turn
        if t.calls and self.rooms.store is not None:
            payers = self.payers() or list(self.room.humans) or [self.opener or f"room:{self.code}"]
            for i, name in enumerate(payers):
                self.rooms.store.record(
                    Use(
                        user=name,
                        lesson=f"roundtable room {self.code}",
                        model=t.model,
                        prompt_tokens=_share(t.usage.prompt_tokens, len(payers), i),
                        completion_tokens=_share(t.usage.completion_tokens, len(payers), i),
                        seconds=t.latency_s / len(payers),
                        status="ok" if t.valid else UNUSABLE,
                        started=time.time() - t.latency_s,
                    )
                )
        self.poke()

    def payers(self) -> list[str]:
        """Who pays the room's next model call: the seated learners with tokens left today."""
        seated, store, limits = list(self.room.humans), self.rooms.store, self.rooms.limits
        if store is None or limits is None:
            return seated
        return [h for h in seated if store.tokens_today(h) < limits(h).tokens_per_day]

    def poke(self) -> None:
        """Wake every long poll waiting on this room."""
        self.changed.set()
        self.changed = asyncio.Event()

    def moved_now(self) -> None:
        self.moved.set()
        self.poke()

    def start(self) -> None:
        if self.room.ended is None and (self.task is None or self.task.done()):
            self.task = asyncio.get_running_loop().create_task(self.drive())

    async def _wait_move(self, seconds: float | None) -> bool:
        try:
            await asyncio.wait_for(self.moved.wait(), seconds)
            return True
        except TimeoutError:
            return False

    async def drive(self) -> None:
        """Advance the room after every move; pass over whoever does not answer in time."""
        r, s = self.room, self.rooms.settings
        pause = s.retry_s
        while r.ended is None:
            self.moved.clear()
            try:
                async with self.lock:
                    await r.aadvance()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the model server failed: say so, try again later
                line = (getattr(exc, "message", "") or str(exc) or type(exc).__name__).splitlines()
                self.error = f"the room could not go on: {line[0][:200]}; it tries again"
                log.warning("room %s: %s", self.code, self.error)
                self.poke()
                await self._wait_move(pause)
                pause = min(pause * 2, 120.0)
                continue
            if self.error:
                self.error, pause = "", s.retry_s
                self.poke()
            waiting = self.waits()
            if not waiting:
                if r.ended is None:  # nobody seated yet: wait for a join
                    await self._wait_move(None)
                continue
            due = min(waiting.values()) + s.answer_s
            if await self._wait_move(max(0.0, due - time.monotonic())):
                continue
            late = [h for h, t in self.waits().items() if time.monotonic() - t >= s.answer_s - 1e-3]
            for h in late:
                r.timeout(h)
            self.poke()
        self.poke()

    def waits(self) -> dict[str, float]:
        """Since when the room has waited for each learner it waits for now. A wait is one
        learner's in one phase at one moderator step: a learner who answered and is awaited
        again (the next step, the ranking after the discussion) waits anew."""
        r, now = self.room, time.monotonic()
        step = (r.phase, len(record.decisions(r.transcript)))
        self.since = {
            h: self.since[h] if self.since.get(h, (None, 0.0))[0] == step else (step, now)
            for h in r.waiting_for()
        }
        return {h: t for h, (_, t) in self.since.items()}

    def deadline(self, name: str) -> float | None:
        """Seconds left for ``name`` to move, while the room waits for them."""
        t = self.waits().get(name)
        if t is None:
            return None
        return max(0.0, round(t + self.rooms.settings.answer_s - time.monotonic(), 1))

    def state(self, user: str, since: int = 0) -> dict[str, Any]:
        """What a seat sees: the turns after ``since`` (as the transcript's JSON) and where the
        room stands."""
        r = self.room
        tr = r.transcript
        n = len(tr.turns)
        since = min(max(since, 0), n)
        c, o, rev, end = (
            record.candidates(tr),
            record.outcome(tr),
            record.revision(tr),
            r.ended,
        )
        return {
            "code": self.code,
            "topic": r.topic,
            "meta": tr.meta,  # with the turns, what a learner's export needs: today's format
            "you": user,
            "phase": r.phase,
            "waiting_for": r.waiting_for(),
            "deadline_s": self.deadline(user),
            "answer_s": self.rooms.settings.answer_s,
            "seated": r.humans,
            "hands": record.hands(tr),
            "ready": sorted(record.ready(tr)),
            "floor": r.pending,
            "since": since,
            "next": n,
            "turns": [t.model_dump(mode="json") for t in tr.turns[since:]],
            "candidates": dict(c.statements) if c else None,
            "outcome": {**o.model_dump(mode="json"), "winner": o.winner} if o else None,
            "revision": rev.model_dump(mode="json") if rev else None,
            "ended": end.reason if end else None,
            "error": self.error,
        }


class Rooms:
    """Every room of the service: opened, resumed from ``rooms_dir``, found by code."""

    def __init__(
        self,
        settings: RoomSettings,
        backends: Backends,
        store: Any = None,
        limits: Callable[[str], Any] | None = None,
    ) -> None:
        self.settings = settings
        self.backends = backends
        self.store = store
        self.limits = limits  # a learner's Limits (the gateway's): who may still pay
        self._recent: dict[tuple[str, str], deque[float]] = {}  # (what, who): when
        self.hosts: dict[str, Host] = {}
        settings.rooms_dir.mkdir(parents=True, exist_ok=True)
        self._loaded = False

    def _rate(
        self, user: str, what: str, most: int, seconds: float, line: str, count: bool = True
    ) -> None:
        """Refuse (429) the ``most + 1``-th ``what`` of ``user`` within ``seconds``; else count
        this one (unless ``count`` is off: only look)."""
        now = time.monotonic()
        recent = self._recent.setdefault((what, user), deque())
        while recent and now - recent[0] >= seconds:
            recent.popleft()
        if len(recent) >= most:
            wait = int(seconds - (now - recent[0])) + 1
            raise _refuse(429, line, f"wait {wait} s")
        if count:
            recent.append(now)

    def load(self) -> int:
        """Read every saved room (once); returns how many are unfinished."""
        if not self._loaded:
            self._loaded = True
            for p in sorted(self.settings.rooms_dir.glob("*.json")):
                if not CODE.match(p.stem):
                    continue
                try:
                    tr = Transcript.load(p)
                    host = Host(self, p.stem)
                    host.room = Room.resume(tr, **self.backends(p.stem), on_event=host.on_event)
                except (ValueError, OSError, ArgnbError) as exc:
                    log.warning("room %s not resumed: %s", p.stem, str(exc).splitlines()[0])
                    continue
                self.hosts[p.stem] = host
        return sum(1 for h in self.hosts.values() if h.room.ended is None)

    def sweep(self, now: float | None = None) -> list[str]:
        """Archive the rooms that ended ``keep_ended_s`` ago or were empty for ``keep_empty_s``
        (by the time their file was last written); returns their codes."""
        s, now = self.settings, time.time() if now is None else now
        gone = []
        for code, host in list(self.hosts.items()):
            r = host.room
            if (r.ended is None and r.humans) or not host.path.exists():
                continue  # under way
            keep = s.keep_empty_s if not r.humans else s.keep_ended_s  # left, or finished
            if now - host.path.stat().st_mtime < keep:
                continue
            if host.task is not None:
                host.task.cancel()
            archive = s.rooms_dir / "archive"
            archive.mkdir(exist_ok=True)
            os.replace(host.path, archive / host.path.name)
            del self.hosts[code]
            gone.append(code)
        if gone:
            log.info("archived %d room(s): %s", len(gone), ", ".join(gone))
        return gone

    def start(self) -> None:
        """Resume the unfinished rooms (on the service's event loop)."""
        self.load()
        self.sweep()
        n = sum(1 for h in self.hosts.values() if h.room.ended is None)
        for host in self.hosts.values():
            host.start()
        if n:
            log.info("resumed %d unfinished room(s)", n)

    def open(self, user: str, topic: str, turns: int | None = None) -> Host:
        s = self.settings
        self._rate(user, "open", s.opens_per_hour, 3600,
                   f"you opened {s.opens_per_hour} rooms in the last hour")  # fmt: skip
        self.sweep()
        live = sum(1 for h in self.hosts.values() if h.room.ended is None)
        if live >= self.settings.max_rooms:
            raise _refuse(429, f"the class server has {live} rooms open; join one of them")
        mine = [h for h in self.hosts.values() if h.room.ended is None and h.opener == user]
        if len(mine) >= self.settings.per_learner:
            raise _refuse(429, f"you have {len(mine)} rooms open already: "
                          + ", ".join(h.code for h in mine), "finish or leave one of them first")  # fmt: skip
        code = new_code(self.hosts)
        host = Host(self, code)
        try:
            host.room = Room(topic, turns=turns or self.settings.turns, **self.backends(code))
            host.room.join(user)
        except ArgnbError as exc:
            raise RoomRefused(exc.message, status=409, hint=exc.hint) from None
        save_atomic(host.room.transcript, host.path)
        host.room.on_event = host.on_event
        self.hosts[code] = host
        host.start()
        return host

    def find(self, code: str, user: str = "") -> Host:
        s = self.settings
        line = f"{s.wrong_codes_per_min} wrong room codes in a minute"
        # past the limit even a right code waits: guessing gets nothing out of it
        self._rate(user, "wrong code", s.wrong_codes_per_min, 60, line, count=False)
        host = self.hosts.get(code.upper())
        if host is None:
            self._rate(user, "wrong code", s.wrong_codes_per_min, 60, line)
            raise _refuse(404, f"there is no room {code[:CODE_CHARS * 2]!r} on this class server",
                          "check the code with whoever opened the room")  # fmt: skip
        return host

    async def move(self, host: Host, user: str, move: str, body: dict[str, Any]) -> None:
        """One learner's move, checked and recorded as theirs."""
        s = self.settings
        self._rate(user, "move", s.moves_per_min, 60,
                   f"{s.moves_per_min} moves in a minute is the most")  # fmt: skip
        r = host.room
        if move == "join":
            try:
                r.join(user)
            except ArgnbError as exc:
                raise RoomRefused(exc.message, status=409, hint=exc.hint) from None
            host.moved_now()
            return
        if user not in r.humans:
            raise _refuse(403, f"you have not joined room {host.code}", "join the room first")
        try:
            if move == "say":
                text = body.get("text")
                if not isinstance(text, str) or len(text) > HUMAN_CHARS:
                    raise _refuse(400, f"say needs a text of at most {HUMAN_CHARS} characters")
                if r.phase != "discussion" or user not in r.waiting_for():
                    raise _refuse(409, f"it is not {user}'s turn",
                                  "wait until the moderator gives you the floor")  # fmt: skip
                async with host.lock:
                    await r.asay(text, source="room", name=user)
            elif move == "rank":
                ranking = body.get("ranking")
                if (
                    not isinstance(ranking, list)
                    or not 1 <= len(ranking) <= 10
                    or not all(isinstance(x, str) for x in ranking)
                ):
                    raise _refuse(400, 'rank needs a ranking: a list of ids like ["S2", "S1"]')
                c = record.candidates(r.transcript)
                if c is not None and not set(ranking) <= set(c.statements):
                    raise _refuse(400, f"rank the statements {', '.join(c.statements)} only")
                r.rank(user, ranking)
            elif move == "critique":
                text = body.get("text")
                if text is not None and (not isinstance(text, str) or len(text) > HUMAN_CHARS):
                    raise _refuse(400, f"critique needs a text of at most {HUMAN_CHARS} characters")
                r.critique(user, text)
            elif move == "hand":
                r.raise_hand(user)
            elif move == "lower":
                r.lower_hand(user)
            elif move == "ready":
                r.ready(user)
            elif move == "leave":
                r.leave(user)
        except RoomRefused:
            raise
        except BackendError as exc:  # after a learner's turn was recorded: the check, analysis
            raise _refuse(502, f"your turn is recorded; then the class model failed: "
                          f"{exc.message.splitlines()[0][:200]}", "the room tries again") from None  # fmt: skip
        except ArgnbError as exc:  # the room's own refusals: not now
            raise RoomRefused(exc.message, status=409, hint=exc.hint) from None
        finally:
            host.moved_now()

    async def stop(self) -> None:
        for host in self.hosts.values():
            if host.task is not None:
                host.task.cancel()


class QueuedBackend(OpenAIBackend):
    """The class model as a room's seats reach it: through the gateway's fair queue, as
    ``room:CODE`` (the usage is recorded from the room's turns, :meth:`Host.on_event`)."""

    def __init__(self, gateway: Gateway, user: str, code: str = "", **kw: Any) -> None:
        s = gateway.settings
        super().__init__(
            s.model,
            base_url=s.upstream,
            api_key=s.upstream_key or "none",
            timeout=s.timeout,
            max_retries=1,
            **kw,
        )
        self.gateway, self.user, self.code = gateway, user, code

    def _payable(self) -> None:
        """Refuse the call when none of the room's seated learners has tokens left today."""
        host = self.gateway.rooms.hosts.get(self.code) if self.code else None
        if host is not None and host.room is not None and not host.payers():
            raise AllowanceUsed(
                "the seated learners have used today's tokens, so the room's model cannot "
                "answer; your instructor can raise a limit"
            )

    async def _achat(self, messages: Any, schema: Any, options: Any) -> Any:
        self._payable()
        lim = self.gateway.limits(self.user)
        async with self.gateway.queue.turn(self.user, lim.concurrent, lim.waiting):
            return await super()._achat(messages, schema, options)

    async def _astream(self, messages: Any, options: Any, schema: Any = None) -> Any:
        self._payable()
        lim = self.gateway.limits(self.user)
        async with self.gateway.queue.turn(self.user, lim.concurrent, lim.waiting):
            async for item in super()._astream(messages, options, schema):
                yield item


def upstream_backends(gateway: Gateway) -> Backends:
    """A room's seats on the class model, each call in the fair queue as ``room:CODE`` (with
    ``room_fallacy``, a fallacy check too)."""

    def make(code: str) -> dict[str, Any]:
        b = QueuedBackend(gateway, f"room:{code}", code)
        seats: dict[str, Any] = {"moderator": b, "deliberators": [b, b], "analyzer": b}
        if gateway.settings.room_fallacy:  # the zero-shot check: one short call per turn
            from argnb.fallacy.baselines import Baseline

            seats["fallacy"] = Baseline("zero", b)
        return seats

    return make


def routes(rooms: Rooms, prefix: str, api: type) -> list[tuple[str, type]]:
    """The room API's tornado handlers under ``{prefix}rooms``, on the gateway's ``Api``
    handler (the hub token says who the learner is)."""
    from jupyterhub.utils import url_path_join

    class RoomApi(api):  # type: ignore[misc, valid-type]
        def refuse(self, err: RoomRefused) -> None:
            self.set_status(err.status)
            self.finish(
                {
                    "error": {
                        "message": err.message,
                        "hint": err.hint or "",
                        "type": "argnb_room",
                        "code": str(err.status),
                    }
                }
            )

        def body(self) -> dict[str, Any]:
            raw = self.request.body or b"{}"
            if len(raw) > 64_000:
                raise _refuse(413, "the request is over 64,000 bytes")
            try:
                data = json.loads(raw)
            except ValueError:
                raise _refuse(400, "the body must be a JSON object") from None
            if not isinstance(data, dict):
                raise _refuse(400, "the body must be a JSON object")
            return data

    class Open(RoomApi):
        async def post(self) -> None:
            try:
                data = self.body()
                topic = data.get("topic")
                topic = " ".join(topic.split()) if isinstance(topic, str) else ""
                if not 3 <= len(topic) <= TOPIC_CHARS:
                    raise _refuse(400, f"a room needs a topic of 3 to {TOPIC_CHARS} characters")
                turns = data.get("turns")
                if turns is not None and (
                    not isinstance(turns, int) or isinstance(turns, bool)
                    or not TURNS[0] <= turns <= TURNS[1]
                ):  # fmt: skip
                    raise _refuse(400, f"turns is a whole number from {TURNS[0]} to {TURNS[1]}")
                host = rooms.open(self.user, topic, turns)
            except RoomRefused as err:
                return self.refuse(err)
            self.set_status(201)
            self.finish(host.state(self.user))

    class State(RoomApi):
        async def get(self, code: str) -> None:
            try:
                host = rooms.find(code, self.user)
                raw = self.get_argument("since", "0")
                if not is_index(raw):
                    raise _refuse(400, "since is a turn index: a whole number from 0")
            except RoomRefused as err:
                return self.refuse(err)
            since = int(raw)
            wait = self.get_argument("wait", "1") != "0"
            end = time.monotonic() + rooms.settings.poll_s
            while wait and since >= len(host.room.transcript.turns) and host.room.ended is None:
                left = end - time.monotonic()
                if left <= 0:
                    break
                try:
                    await asyncio.wait_for(host.changed.wait(), left)
                except TimeoutError:
                    break
            self.finish(host.state(self.user, since))

    class Move(RoomApi):
        async def post(self, code: str, move: str) -> None:
            try:
                host = rooms.find(code, self.user)
                data = self.body()
                await rooms.move(host, self.user, move, data)
            except RoomRefused as err:
                return self.refuse(err)
            since = self.get_argument("since", "")  # without it: where the room stands, no turns
            self.finish(host.state(self.user, int(since) if is_index(since) else 10**9))

    base = url_path_join(prefix, "rooms")
    return [
        (base, Open),
        (url_path_join(base, r"([A-Za-z0-9]{1,16})"), State),
        (url_path_join(base, r"([A-Za-z0-9]{1,16})", f"({'|'.join(MOVES)})"), Move),
    ]
