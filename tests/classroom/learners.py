"""Simulated learners for the hub tests, as hubtraf drives a hub: real local users who log in
through the hub's login form, start their server, open a notebook session and run code in its
kernel over the kernel's websocket."""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx


def add_system_user(name: str) -> str:
    """A real local user with a home only they can open; returns their password."""
    from argnb.classroom.trial import add_learner

    if ledger := os.environ.get("ARGNB_TEST_USERS"):  # tests/reap.py removes it if we cannot
        with open(ledger, "a", encoding="utf-8") as f:
            f.write(name + "\n")
    return add_learner(name)


def remove_system_user(name: str) -> None:
    from argnb.classroom.trial import remove_learner

    remove_learner(name)


@dataclass
class Learner:
    """One learner's browser-less session with the hub."""

    hub: str
    name: str
    password: str
    token: str = ""
    client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=120))

    def login_form(self) -> str:
        """The hub's login form, as a browser fills it: the client keeps the hub's cookies;
        returns the form's xsrf value."""
        page = self.client.get(f"{self.hub}/hub/login")
        xsrf = re.search(r'name="_xsrf"\s+value="([^"]+)"', page.text)
        form = {"username": self.name, "password": self.password}
        if xsrf:
            form["_xsrf"] = xsrf.group(1)
        r = self.client.post(f"{self.hub}/hub/login", data=form, follow_redirects=False)
        assert r.status_code == 302, f"login of {self.name} failed: HTTP {r.status_code}"
        return xsrf.group(1) if xsrf else ""

    def login(self) -> None:
        """The hub's login form, then a token of their own (as a learner's browser would get)."""
        xsrf = self.login_form()
        cookie = self.client.cookies.get("_xsrf") or xsrf
        r = self.client.post(
            f"{self.hub}/hub/api/users/{self.name}/tokens",
            json={"note": "test learner"},
            headers={"X-XSRFToken": cookie, "Referer": f"{self.hub}/hub/home"},
        )
        assert r.status_code in (200, 201), r.text
        self.token = r.json()["token"]
        self.client.cookies.clear()

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}

    def spawn(self, timeout: float = 180) -> None:
        r = self.client.post(f"{self.hub}/hub/api/users/{self.name}/server", headers=self.headers())
        assert r.status_code in (201, 202, 400), r.text  # 400: already running
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            model = self.client.get(
                f"{self.hub}/hub/api/users/{self.name}", headers=self.headers()
            ).json()
            server = (model.get("servers") or {}).get("")
            if server and server.get("ready"):
                return
            time.sleep(0.5)
        raise AssertionError(f"{self.name}'s server did not start in {timeout:.0f} s")

    def put_notebook(self, path: str, code: str) -> None:
        """A notebook of one code cell in the learner's home, written by their own server."""
        import nbformat

        nb = nbformat.v4.new_notebook()
        nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3"}}
        nb.cells = [nbformat.v4.new_code_cell(code.strip())]
        r = self.client.put(
            f"{self.hub}/user/{self.name}/api/contents/{path}",
            headers=self.headers(),
            json={"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(nb))},
        )
        assert r.status_code in (200, 201), r.text

    def open_notebook(self, path: str) -> str:
        """A notebook session (so the kernel knows its lesson, as in JupyterLab); its kernel id."""
        r = self.client.post(
            f"{self.hub}/user/{self.name}/api/sessions",
            headers=self.headers(),
            json={"path": path, "name": path, "type": "notebook", "kernel": {"name": "python3"}},
        )
        assert r.status_code == 201, r.text
        return str(r.json()["kernel"]["id"])

    def run(self, kernel: str, code: str, timeout: float = 300) -> Result:
        return asyncio.run(self._run(kernel, code, timeout))

    async def _run(self, kernel: str, code: str, timeout: float) -> Result:
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        url = self.hub.replace("http", "ws", 1) + f"/user/{self.name}/api/kernels/{kernel}/channels"
        ws = await websocket_connect(HTTPRequest(url, headers=self.headers()))
        msg_id = uuid.uuid4().hex
        ws.write_message(
            json.dumps(
                {
                    "header": {"msg_id": msg_id, "username": self.name, "session": uuid.uuid4().hex,
                               "msg_type": "execute_request", "version": "5.3"},
                    "parent_header": {},
                    "metadata": {},
                    "content": {"code": code, "silent": False, "store_history": False,
                                "user_expressions": {}, "allow_stdin": False},
                    "channel": "shell",
                }
            )
        )  # fmt: skip
        out = Result()
        idle = False
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{self.name}'s cell did not finish: {out}")
            raw = await asyncio.wait_for(ws.read_message(), left)
            if raw is None:
                raise AssertionError(f"{self.name}'s kernel connection closed: {out}")
            msg = json.loads(raw)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                out.streams[content["name"]] += content["text"]
            elif kind == "error":
                out.error = f"{content['ename']}: {content['evalue']}"
                out.traceback = "\n".join(content.get("traceback", []))
            elif kind == "execute_reply":
                out.status = content["status"]
            elif kind == "status" and content["execution_state"] == "idle":
                idle = True
            if out.status and idle:  # the reply and the idle status come on two channels
                ws.close()
                return out


@dataclass
class Result:
    """What one cell printed, and how it ended."""

    status: str = ""
    error: str = ""
    traceback: str = ""
    streams: dict[str, str] = field(default_factory=lambda: {"stdout": "", "stderr": ""})

    @property
    def stdout(self) -> str:
        return self.streams["stdout"]

    @property
    def stderr(self) -> str:
        return self.streams["stderr"]

    def last_json(self) -> Any:
        """The last line of stdout, read as JSON (the cells print their findings that way)."""
        lines = [ln for ln in self.stdout.splitlines() if ln.strip()]
        assert lines, f"nothing printed: {self}"
        return json.loads(lines[-1])
