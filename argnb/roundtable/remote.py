"""A learner's side of a room on the class server: open a room, join one by its code, move, read.

On a class hub (``ARGNB_CLASS_URL`` and ``JUPYTERHUB_API_TOKEN`` in the environment, set by the
hub) a room runs in the hub's service (:mod:`argnb.classroom.rooms`), not in this kernel, so a
learner who reloads or loses the connection reads the whole transcript again with ``state(0)``.
The token says who the learner is: the seat is the hub name, never something this client sends.
On a class hub (it needs the hub's service, so it is not run here)::

    c = RoomClient()
    s = c.open("Should homework allow AI tools?")   # s["code"]: 'K7QM2XAB', the code to share
    c.say("Explanations yes, answers no.")

Every refusal is a :class:`~argnb.errors.RoomRefused` with the server's one line (not your turn,
not joined, no such room); a server out of reach is a :class:`~argnb.errors.BackendUnavailable`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from argnb.errors import ArgnbError, BackendUnavailable, RoomRefused
from argnb.llm.classserver import ClassSettings, class_settings


def rooms_url(class_url: str) -> str:
    """The rooms API beside the class server's model API (``.../argnb-gateway/v1``)."""
    url = class_url.rstrip("/")
    return (url[: -len("/v1")] if url.endswith("/v1") else url) + "/rooms"


class RoomClient:
    """One learner's connection to the rooms of the class server. ``settings``: the class server
    (default: what the hub put in the environment); ``code``: a room to talk to (``open`` and
    ``join`` set it)."""

    def __init__(
        self,
        settings: ClassSettings | None = None,
        code: str = "",
        *,
        timeout: float = 60.0,
        transport: Any = None,
    ) -> None:
        import httpx

        settings = settings or class_settings()
        if settings is None:
            raise ArgnbError(
                "no class server here",
                hint="rooms run on a class hub: start argnb from your hub server",
            )
        self.settings = settings
        self.code = code.strip().upper()
        self.url = rooms_url(settings.url)
        self._http = httpx.Client(
            headers={"Authorization": f"Bearer {settings.token}"},
            timeout=httpx.Timeout(timeout, connect=10.0),
            transport=transport,
        )

    def __repr__(self) -> str:
        return f"RoomClient({self.url!r}, code={self.code!r})"

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RoomClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests ---------------------------------------------------------------------------
    def _send(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        import httpx

        try:
            r = self._http.request(method, self.url + path, **kw)
        except httpx.TimeoutException:
            raise BackendUnavailable(
                "the class server did not answer in time", hint="try again in a moment"
            ) from None
        except httpx.HTTPError as exc:
            raise BackendUnavailable(
                f"cannot reach the class server ({type(exc).__name__})",
                hint="is your hub server running? ask your instructor",
            ) from None
        try:
            data = r.json()
        except ValueError:
            data = None
        if r.status_code >= 400:
            err = (data or {}).get("error") if isinstance(data, dict) else None
            err = err if isinstance(err, dict) else {}
            line = str(err.get("message") or f"the class server answered {r.status_code}")
            raise RoomRefused(
                line.splitlines()[0][:300], status=r.status_code, hint=err.get("hint") or None
            )
        if not isinstance(data, dict):
            raise BackendUnavailable("the class server's answer is not a room's state")
        return data

    def _room(self) -> str:
        if not self.code:
            raise ArgnbError("no room yet", hint="open(topic) or join(code) first")
        return f"/{self.code}"

    def _move(self, move: str, since: int | None = None, **body: Any) -> dict[str, Any]:
        params = {"since": since} if since is not None else None
        return self._send("POST", f"{self._room()}/{move}", json=body, params=params)

    # -- the learner's moves ----------------------------------------------------------------
    def open(self, topic: str, turns: int | None = None) -> dict[str, Any]:
        """Open a room for ``topic`` (you are seated); its code is ``state["code"]``."""
        body: dict[str, Any] = {"topic": topic}
        if turns is not None:
            body["turns"] = turns
        state = self._send("POST", "", json=body)
        self.code = state["code"]
        return state

    def join(self, code: str) -> dict[str, Any]:
        """Sit down at the room ``code`` (again, after a reload: nothing changes)."""
        self.code = code.strip().upper()
        return self._move("join", 0)

    def state(self, since: int = 0, wait: bool = True) -> dict[str, Any]:
        """Where the room stands, with its turns after index ``since`` (``state["next"]`` is the
        next ``since``). With ``wait`` and nothing new, the server waits up to 25 s for news."""
        return self._send(
            "GET", self._room(), params={"since": since, "wait": "1" if wait else "0"}
        )

    def say(self, text: str) -> dict[str, Any]:
        """Your turn, while you hold the floor ("" or "/pass": pass; "/end": pass, ready)."""
        return self._move("say", text=text)

    def hand(self) -> dict[str, Any]:
        return self._move("hand")

    def lower(self) -> dict[str, Any]:
        return self._move("lower")

    def ready(self) -> dict[str, Any]:
        return self._move("ready")

    def leave(self) -> dict[str, Any]:
        return self._move("leave")

    def rank(self, ranking: Sequence[str]) -> dict[str, Any]:
        """Your ballot: candidate ids, best first (e.g. ``["S2", "S1"]``)."""
        return self._move("rank", ranking=list(ranking))

    def critique(self, text: str | None) -> dict[str, Any]:
        """Your one critique of the chosen statement (``None`` or "": none)."""
        return self._move("critique", text=text)
