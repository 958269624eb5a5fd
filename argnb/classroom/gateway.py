"""The class gateway: a JupyterHub service between every learner and the class's model server.

It speaks the OpenAI chat API (plain, streamed, structured output passed through), so argnb's
OpenAI backend -- or any OpenAI client -- reaches it unchanged. A learner is known by the hub API
token their single-user server already holds (``JUPYTERHUB_API_TOKEN``, checked with the
``jupyterhub`` package's HubOAuth); the model server's own key lives only in this process.

Each request: identify the learner, refuse it with one readable line when today's tokens are
used, wait for the learner's turn in the fair queue, forward it, and record what it cost (tokens
as the model server counted them, seconds, the lesson it came from) in the usage store.

Started by JupyterHub from ``argnb.classroom.hub.configure``; ``python -m argnb.classroom.gateway``
reads its settings from the environment the hub gives it (``ARGNB_GATEWAY_*``, ``JUPYTERHUB_*``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from argnb.classroom.fairqueue import FairQueue
from argnb.classroom.usage import Limits, UsageStore, Use, today
from argnb.errors import ArgnbError, QueueFull

log = logging.getLogger("argnb.gateway")
#: the header argnb's backend sends with the lesson (notebook) a request comes from
LESSON_HEADER = "X-Argnb-Lesson"
#: how long the hub's answer about a token is trusted: a token revoked or expired at the hub is
#: refused here at most this many seconds later (it was 60: a revoked token kept working a minute)
TOKEN_CACHE_S = 5
MAX_BODY = 2_000_000  # bytes of one request: a long transcript fits, a flood does not


def capped_tokens(body: dict[str, Any], cap: int) -> int:
    """What a request may generate: what it asks (``max_tokens``, or the newer
    ``max_completion_tokens``, which is removed so the model server sees one limit) when that is
    a whole number from 1 to ``cap``, else ``cap``. Why: llama.cpp reads -1 and 0 as "no limit",
    so passing them on let a learner's request run unmetered past the class's cap."""
    asked = [body.pop("max_completion_tokens", None), body.get("max_tokens")]
    wants = [w for w in asked if isinstance(w, int) and not isinstance(w, bool) and w > 0]
    return min([*wants, cap])


@dataclass
class Settings:
    """Everything the gateway needs, read from the environment the hub gives the service."""

    upstream: str  # the model server's API root, e.g. http://127.0.0.1:8000/v1
    model: str  # the class model, as the model server names it
    upstream_key: str = field(default="", repr=False)
    class_name: str = "class server"
    db_url: str = "sqlite:///argnb-usage.sqlite"
    limits: Limits = field(default_factory=Limits)
    slots: int = 4  # requests the model server runs at once
    max_tokens: int = 2048  # the most one request may ask for
    timeout: float = 600.0
    rooms_dir: str = ""  # where rooms are kept ("": beside a SQLite usage database)
    answer_s: float = 120.0  # a learner at a room who does not move within this is passed over
    room_fallacy: bool = False  # each learner's and deliberator's turn in a room fallacy-checked

    def room_dir(self) -> Path:
        """Where the rooms' transcripts are kept: ``rooms_dir``, else beside the usage db."""
        if self.rooms_dir:
            return Path(self.rooms_dir)
        db = self.db_url.split(":///", 1)
        if db[0].startswith("sqlite") and len(db) == 2 and db[1]:
            return Path(db[1]).resolve().parent / "argnb-rooms"
        return Path.cwd() / "argnb-rooms"

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if env is None else env)
        missing = [k for k in ("ARGNB_GATEWAY_UPSTREAM", "ARGNB_GATEWAY_MODEL") if not env.get(k)]
        if missing:
            raise SystemExit(f"argnb gateway: set {' and '.join(missing)} (hub.configure does)")
        limits = json.loads(env.get("ARGNB_GATEWAY_LIMITS") or "{}")
        return cls(
            upstream=env["ARGNB_GATEWAY_UPSTREAM"].rstrip("/"),
            model=env["ARGNB_GATEWAY_MODEL"],
            upstream_key=env.get("ARGNB_GATEWAY_UPSTREAM_KEY", ""),
            class_name=env.get("ARGNB_CLASS_NAME") or "class server",
            db_url=env.get("ARGNB_GATEWAY_DB") or "sqlite:///argnb-usage.sqlite",
            limits=Limits(**limits),
            slots=int(env.get("ARGNB_GATEWAY_SLOTS") or 4),
            max_tokens=int(env.get("ARGNB_GATEWAY_MAX_TOKENS") or 2048),
            rooms_dir=env.get("ARGNB_GATEWAY_ROOMS") or "",
            answer_s=float(env.get("ARGNB_GATEWAY_ANSWER_S") or 120.0),
            room_fallacy=env.get("ARGNB_GATEWAY_ROOM_FALLACY", "") == "1",
        )


_HEADER = re.compile(r"(?:token|bearer) +([^\s]+) *", re.IGNORECASE)


def header_token(value: str) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` (or ``token <token>``) header."""
    m = _HEADER.fullmatch(value.strip())
    return m.group(1) if m else None


def error_body(message: str, kind: str, code: str = "") -> dict[str, Any]:
    """An OpenAI-shaped error: clients show ``message``; argnb reads ``type``."""
    return {"error": {"message": message, "type": kind, "code": code or kind}}


def allowance_line(limit: int) -> str:
    """What a learner reads when today's tokens are used."""
    return f"today's {limit:,} tokens are used; your instructor can raise it"


class Gateway:
    """The shared state of one gateway process: settings, usage, queue, upstream client."""

    def __init__(
        self,
        settings: Settings,
        auth: Any = None,
        room_backends: Any = None,
        poll_s: float = 25.0,
    ) -> None:
        import httpx

        from argnb.classroom.rooms import Rooms, RoomSettings, upstream_backends

        self.settings = settings
        self.auth = auth
        self.store = UsageStore(settings.db_url)
        self.queue = FairQueue(settings.slots)
        headers = {"Authorization": f"Bearer {settings.upstream_key or 'none'}"}
        limits = httpx.Limits(max_connections=settings.slots * 4 + 8)
        self.client = httpx.AsyncClient(
            base_url=settings.upstream,
            headers=headers,
            timeout=httpx.Timeout(settings.timeout, connect=10.0),
            limits=limits,
        )
        self.started = time.time()
        self.stream_usage = True  # until the model server refuses stream_options
        # tokens each learner's requests under way may still cost (their cap and prompt)
        self.held: dict[str, int] = {}
        # rooms: several learners at one roundtable, run here (argnb.classroom.rooms)
        self.rooms = Rooms(
            RoomSettings(settings.room_dir(), answer_s=settings.answer_s, poll_s=poll_s),
            room_backends or upstream_backends(self),
            self.store,
            self.limits,
        )

    def limits(self, user: str) -> Limits:
        return self.store.limits_for(user, self.settings.limits)

    def report(self) -> dict[str, Any]:
        """What the instructor's page shows: usage, limits, who is waiting."""
        return {
            "class": self.settings.class_name,
            "model": self.settings.model,
            "defaults": dict(self.settings.limits.__dict__),
            "own_limits": self.store.own_limits(),
            "usage": self.store.summary(),
            "today": self.store.summary(day=today()),
            "queue": self.queue.snapshot(),
            "slots": self.settings.slots,
            "busy": self.queue.busy,
        }

    def allowance(self, user: str) -> dict[str, Any]:
        lim = self.limits(user)
        used = self.store.tokens_today(user)
        return {
            "user": user,
            "class": self.settings.class_name,
            "model": self.settings.model,
            "tokens_today": used,
            "tokens_per_day": lim.tokens_per_day,
            "remaining": max(0, lim.tokens_per_day - used),
            "concurrent": lim.concurrent,
        }


def _sse_data(line: bytes) -> dict[str, Any] | None:
    """The JSON of one ``data:`` line of a server-sent event stream (None for anything else)."""
    if not line.startswith(b"data:"):
        return None
    payload = line[5:].strip()
    if not payload or payload == b"[DONE]":
        return None
    try:
        data = json.loads(payload)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _usage_of(response: Any) -> dict[str, Any]:
    """The ``usage`` of a plain (non-streamed) reply, {} when there is none."""
    try:
        data = response.json()
    except ValueError:
        return {}
    usage = data.get("usage") if isinstance(data, dict) else None
    return usage if isinstance(usage, dict) else {}


def _count(value: Any) -> int:
    """A token count from a server's JSON (anything that is not a count is none)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


#: what a streamed piece may carry: text, a reasoning model's thoughts, a tool or function call
_GENERATED = ("content", "reasoning_content", "tool_calls", "function_call")


def _generated(choice: Any) -> int:
    """1 when a streamed choice carries anything the model generated (a tool call's arguments
    too: counted as text only, they went unmetered), else 0."""
    delta = choice.get("delta") if isinstance(choice, dict) else None
    return int(isinstance(delta, dict) and any(delta.get(k) for k in _GENERATED))


def _prompt_estimate(body: dict[str, Any]) -> int:
    """A prompt's tokens from its characters (about four each): the messages, and the tools
    and schema the model also reads."""
    read = [body.get("messages"), body.get("tools"), body.get("functions"),
            body.get("response_format")]  # fmt: skip
    return len(json.dumps([r for r in read if r], ensure_ascii=False)) // 4


def make_app(gateway: Gateway, prefix: str = "/") -> Any:
    """The tornado application: the API under ``{prefix}v1/``, the rooms under ``{prefix}rooms``
    (argnb.classroom.rooms; the unfinished ones resume once the event loop runs), the
    instructor's page at ``prefix``."""
    from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated
    from jupyterhub.utils import url_path_join
    from tornado import web
    from tornado.iostream import StreamClosedError

    class Base(web.RequestHandler):
        user: str = ""

        @property
        def hub_auth(self) -> Any:
            return gateway.auth

        def check_xsrf_cookie(self) -> None:  # token-authenticated API: no cookies involved
            return None

        def write_error(self, status_code: int, **kw: Any) -> None:
            self.finish(error_body(self._reason, "argnb_gateway", str(status_code)))

        def fail(self, status: int, message: str, kind: str, code: str = "") -> None:
            self.set_status(status)
            if status == 429 and kind == "argnb_allowance":
                self.set_header("x-should-retry", "false")
            self.finish(error_body(message, kind, code))

        async def identify(self) -> dict[str, Any] | None:
            """The hub user behind this request's ``Authorization`` header, if it may use the
            gateway. Only the header: a cookie rides along with any other site's form, and a
            token in a link ends up in logs and browser histories."""
            token = header_token(self.request.headers.get("Authorization", ""))
            if gateway.auth is None or token is None:
                return None
            model = await gateway.auth.user_for_token(token, sync=False)
            if not model or model.get("kind", "user") != "user":
                return None
            scopes = gateway.auth.access_scopes
            if scopes and not gateway.auth.check_scopes(scopes, model):
                return None
            return model

    class Api(Base):
        async def prepare(self) -> None:
            model = await self.identify()
            if (
                model is None
                and not self.request.headers.get("Authorization")
                and (self.request.headers.get("Cookie") or "token" in self.request.query_arguments)
            ):
                self.fail(
                    403,
                    "the class API takes your hub token in the Authorization header only "
                    "(a cookie or a token in the link is refused, so no other page can spend "
                    "your allowance); argnb in your hub server sends it",
                    "argnb_auth",
                )
                return
            if model is None:
                self.fail(
                    401,
                    "no valid JupyterHub token: start argnb from your hub server "
                    "(it holds the token), or ask your instructor",
                    "argnb_auth",
                )
                return
            self.user = model["name"]

    class Models(Api):
        async def get(self) -> None:
            self.finish(
                {"object": "list", "data": [{"id": gateway.settings.model, "object": "model"}]}
            )

    class Allowance(Api):
        async def get(self) -> None:
            self.finish(gateway.allowance(self.user))

    class Chat(Api):
        async def post(self) -> None:
            s = gateway.settings
            if len(self.request.body) > MAX_BODY:
                return self.fail(413, f"the request is over {MAX_BODY:,} bytes", "argnb_request")
            try:
                body = json.loads(self.request.body)
                assert isinstance(body, dict) and isinstance(body.get("messages"), list)
            except (ValueError, AssertionError):
                return self.fail(400, "the body must be a JSON chat request", "argnb_request")
            asked = body.get("model")
            if asked not in (None, "", s.model):
                return self.fail(
                    404, f"the class server has no model {asked!r}; use {s.model!r}", "argnb_model"
                )
            body["model"] = s.model
            n = body.get("n")
            if n is not None and (n != 1 or isinstance(n, bool)):
                return self.fail(400, "the class server gives one answer per request (n=1)",
                                 "argnb_request")  # fmt: skip
            body["max_tokens"] = capped_tokens(body, s.max_tokens)
            lim = gateway.limits(self.user)
            used = gateway.store.tokens_today(self.user)
            if used >= lim.tokens_per_day:
                self._record(body, 0, 0, 0.0, "refused", time.time())
                return self.fail(
                    429, allowance_line(lim.tokens_per_day), "argnb_allowance", "tokens_per_day"
                )
            # what this request may cost is held until it is served: requests sent at once
            # cannot all pass the check above before any of them is counted
            hold = body["max_tokens"] + _prompt_estimate(body)
            if used + gateway.held.get(self.user, 0) >= lim.tokens_per_day:
                return self.fail(
                    429,
                    f"your requests under way may use the rest of today's "
                    f"{lim.tokens_per_day:,} tokens; wait for them to finish",
                    "argnb_busy",
                )
            lesson = (self.request.headers.get(LESSON_HEADER) or "")[:255]
            self.lesson = lesson
            gateway.held[self.user] = gateway.held.get(self.user, 0) + hold
            try:
                async with gateway.queue.turn(self.user, lim.concurrent, lim.waiting):
                    if self.request.connection.stream.closed():
                        return None
                    if body.get("stream"):
                        await self._stream(body)
                    else:
                        await self._plain(body)
            except QueueFull:
                self.fail(
                    429,
                    f"you already have {lim.waiting} requests waiting; let them finish first",
                    "argnb_busy",
                )
            finally:
                gateway.held[self.user] -= hold
                if not gateway.held[self.user]:
                    del gateway.held[self.user]
            return None

        def _record(
            self,
            body: dict,
            prompt: int,
            completion: int,
            secs: float,
            status: str,
            started: float,
            estimated: bool = False,
        ) -> None:
            gateway.store.record(
                Use(
                    user=self.user,
                    lesson=getattr(self, "lesson", "") or "",
                    model=str(body.get("model") or ""),
                    prompt_tokens=prompt,
                    completion_tokens=completion,
                    seconds=secs,
                    status=status,
                    started=started,
                    estimated=estimated,
                )
            )

        async def _plain(self, body: dict) -> None:
            import httpx

            t0 = time.time()
            try:
                r = await gateway.client.post("/chat/completions", json=body)
            except httpx.HTTPError as exc:
                self._record(body, 0, 0, time.time() - t0, "error", t0)
                return self._unreachable(exc)
            if r.status_code in (401, 403):
                self._record(body, 0, 0, time.time() - t0, "error", t0)
                return self._key_refused(r.status_code)
            usage = _usage_of(r)
            self._record(
                body,
                _count(usage.get("prompt_tokens")),
                _count(usage.get("completion_tokens")),
                time.time() - t0,
                "ok" if r.status_code < 400 else "error",
                t0,
            )
            self.set_status(r.status_code)
            self.set_header("Content-Type", r.headers.get("content-type", "application/json"))
            self.finish(r.content)

        async def _stream(self, body: dict) -> None:
            t0 = time.time()
            asked_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            if gateway.stream_usage:  # ask for the counts, to record them
                body["stream_options"] = {"include_usage": True}
            n = {"prompt": 0, "completion": 0, "pieces": 0}
            status = await self._relay(body, asked_usage, n)
            if status == "retry":  # this server refuses stream_options: never send it again
                gateway.stream_usage = False
                body.pop("stream_options", None)
                status = await self._relay(body, asked_usage, n)
            # no usage chunk (llama-cpp-python's server sends none): one piece is one token
            # there; the prompt is estimated from its characters, and the row says so
            estimated = bool(n["pieces"]) and not (n["prompt"] or n["completion"])
            if estimated:
                n["completion"] = n["pieces"]
                n["prompt"] = _prompt_estimate(body)
            self._record(body, n["prompt"], n["completion"], time.time() - t0, status, t0,
                         estimated)  # fmt: skip

        async def _relay(self, body: dict, asked_usage: bool, n: dict[str, int]) -> str:
            """Forward one streamed request as it comes: ok | error | cut | retry."""
            import httpx

            try:
                async with gateway.client.stream("POST", "/chat/completions", json=body) as r:
                    if r.status_code in (401, 403):
                        self._key_refused(r.status_code)
                        return "error"
                    if r.status_code >= 400:
                        content = await r.aread()
                        if (
                            r.status_code in (400, 422)
                            and "stream_options" in body
                            and (b"stream_options" in content)
                        ):
                            return "retry"
                        self.set_status(r.status_code)
                        self.set_header("Content-Type", r.headers.get("content-type", "text/plain"))
                        self.finish(content)
                        return "error"
                    self.set_header("Content-Type", "text/event-stream")
                    self.set_header("Cache-Control", "no-cache")
                    async for line in r.aiter_lines():
                        data = _sse_data(line.encode())
                        if data is not None:
                            usage = data.get("usage")
                            if isinstance(usage, dict):
                                n["prompt"] = _count(usage.get("prompt_tokens"))
                                n["completion"] = _count(usage.get("completion_tokens"))
                                if not asked_usage and not data.get("choices"):
                                    continue  # the learner's client did not ask for this chunk
                            for choice in data.get("choices") or ():
                                n["pieces"] += _generated(choice)
                        self.write(line + "\n")
                        if not line:
                            await self.flush()
            except httpx.HTTPError as exc:
                if not self._headers_written:
                    self._unreachable(exc)
                return "error"
            except StreamClosedError:
                return "cut"  # the learner went away: what was generated still counts
            self.finish()
            return "ok"

        def _key_refused(self, status: int) -> None:
            """The model server refused the gateway's key: the instructor's to mend (the key file
            is not the one the server was started with), never the learner's token."""
            log.warning(
                "the model server refused the gateway's key (HTTP %d): is api_key_file the key "
                "it was started with?",
                status,
            )
            self.fail(
                502,
                "the class model server refused the class's key; tell your instructor",
                "argnb_upstream",
            )

        def _unreachable(self, exc: BaseException) -> None:
            log.warning("model server: %s", type(exc).__name__)
            self.fail(
                502,
                f"the class model server does not answer ({type(exc).__name__}); "
                "tell your instructor",
                "argnb_upstream",
            )

    class Page(HubOAuthenticated, web.RequestHandler):
        """The instructor's page and its data: hub admins only, logged in through the hub."""

        @web.authenticated
        async def get(self) -> None:
            from argnb.classroom.views import instructor_page

            model = self.current_user
            if not (model.get("admin") or await self._is_admin(model["name"])):
                raise web.HTTPError(403, "this page is for the hub's admins")
            data = gateway.report()
            if self.request.path.endswith(".json"):
                return self.finish(data)
            self.set_header("Content-Type", "text/html; charset=utf-8")
            return self.finish(instructor_page(data))

        async def _is_admin(self, name: str) -> bool:
            """Whether the hub says ``name`` is an admin (asked with the service's own token)."""
            r = await gateway.auth._api_request(
                "GET",
                url_path_join(gateway.auth.api_url, "users", name),
                headers={"Authorization": f"token {gateway.auth.api_token}"},
            )
            return bool(r and r.get("admin"))

    from tornado.ioloop import IOLoop

    from argnb.classroom import rooms

    p = prefix if prefix.endswith("/") else prefix + "/"
    IOLoop.current().add_callback(gateway.rooms.start)
    routes = [
        *rooms.routes(gateway.rooms, p, Api),
        (url_path_join(p, "v1/models"), Models),
        (url_path_join(p, "v1/argnb/allowance"), Allowance),
        (url_path_join(p, "v1/chat/completions"), Chat),
        (url_path_join(p, "oauth_callback"), HubOAuthCallbackHandler),
        (url_path_join(p, "usage.json"), Page),
        (p, Page),
    ]
    secret = os.environ.get("JUPYTERHUB_API_TOKEN") or os.urandom(16).hex()
    return web.Application(
        routes, cookie_secret=secret, hub_auth=gateway.auth, log_function=_log_request
    )


_SECRET_ARG = re.compile(r"((?:^|[?&;])[^=&;]*(?:token|key|secret|auth)[^=&;]*=)[^&;]*", re.I)


def _log_request(handler: Any) -> None:
    """Tornado's access line, with the value of any token-like query argument replaced: a
    learner who puts their hub token in a link must not find it in the hub's log."""
    status = handler.get_status()
    level = log.info if status < 400 else log.warning
    uri = _SECRET_ARG.sub(r"\1[hidden]", handler.request.uri or "")
    ms = 1000.0 * handler.request.request_time()
    level("%d %s %s %.0f ms", status, handler.request.method, uri[:300], ms)


def main() -> None:
    """Run as a hub service: settings from the environment, listen on JUPYTERHUB_SERVICE_URL."""
    from jupyterhub.services.auth import HubOAuth
    from tornado.httpserver import HTTPServer

    from argnb.classroom.service_user import sqlite_file, take_over

    logging.basicConfig(level=logging.INFO, format="[argnb gateway %(asctime)s] %(message)s")
    settings = Settings.from_env()
    try:
        take_over(
            os.environ.get("ARGNB_GATEWAY_USER") or None,
            sqlite_file(settings.db_url),
            settings.room_dir(),
        )
    except ArgnbError as exc:
        raise SystemExit(f"argnb gateway: {exc}") from None
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/")
    # the one instance the login page's handlers (HubOAuthenticated) use too
    auth = HubOAuth.instance(
        api_token=os.environ["JUPYTERHUB_API_TOKEN"], cache_max_age=TOKEN_CACHE_S
    )
    loop = asyncio.get_event_loop()
    # the hub stops its services with SIGINT, then SIGTERM after 10 s. A hub started in the
    # background by a shell (nohup ... &, docs/deploy.md by hand) hands its services SIGINT
    # ignored: handled here (before the line saying it serves), a stop takes a moment, not the
    # hub's 30 s of waiting and killing
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, loop.stop)
    gateway = Gateway(settings, auth)
    url = urlsplit(os.environ.get("JUPYTERHUB_SERVICE_URL") or "http://127.0.0.1:8181")
    server = HTTPServer(make_app(gateway, prefix), xheaders=True, max_body_size=MAX_BODY + 1024)
    server.listen(url.port or 80, url.hostname or "127.0.0.1")
    log.info(
        "%s: model %s, %d slot(s), serving on %s",
        settings.class_name,
        settings.model,
        settings.slots,
        url.geturl(),
    )
    loop.run_forever()
    server.stop()
    log.info("stopped")


if __name__ == "__main__":
    main()
