"""The class gateway's parts without a hub: the fair queue, the usage store, hub.configure, the
class backend chosen by default, and the gateway itself in front of upstream servers that
answer, hang, lie or are gone (argnb.llm.testserver). The hub's own token check is replaced by a
table of tokens here; tests/classroom/test_hub.py runs the real one."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from argnb.classroom.fairqueue import FairQueue
from argnb.classroom.gateway import Gateway, Settings, make_app
from argnb.classroom.usage import Limits, UsageStore, Use
from argnb.errors import AllowanceUsed, ArgnbError, BackendUnavailable, ModelNotFound, QueueFull
from argnb.llm.classserver import ClassBackend, ClassSettings, class_settings, lesson
from argnb.llm.scripted import ScriptedBackend
from argnb.llm.testserver import ProtocolServer

# -- the fair queue ----------------------------------------------------------------------------


def test_a_greedy_learner_gets_one_turn_per_round_like_everyone_else() -> None:
    async def run() -> list[str]:
        q, order = FairQueue(slots=1), []

        async def ask(user: str) -> None:
            async with q.turn(user, limit=2, max_waiting=32):
                order.append(user)
                await asyncio.sleep(0.01)

        greedy = [asyncio.create_task(ask("greedy")) for _ in range(10)]
        await asyncio.sleep(0)  # the greedy learner's ten are queued first
        others = [asyncio.create_task(ask(u)) for u in ("ana", "bo", "cy") for _ in range(2)]
        await asyncio.gather(*greedy, *others)
        return order

    order = asyncio.run(run())
    assert len(order) == 16
    first_eight = order[:8]
    # after the first greedy request, the others are served in turn before greedy goes again
    assert first_eight.count("greedy") <= 3 and {"ana", "bo", "cy"} <= set(first_eight)
    assert order[-4:] == ["greedy"] * 4  # what is left at the end is only the greedy queue


def test_learners_who_ask_one_question_after_another_take_turns() -> None:
    """Between two requests a learner is idle for a moment; coming back must not put them ahead
    of the learners who waited (it did: bench_class measured a fairness of 7.4x)."""

    async def run() -> list[str]:
        q, order = FairQueue(slots=1), []

        async def learner(name: str) -> None:
            for _ in range(4):
                async with q.turn(name, limit=2, max_waiting=8):
                    order.append(name)
                    await asyncio.sleep(0.005)
                await asyncio.sleep(0)  # the next question is typed after the answer came

        await asyncio.gather(*(learner(n) for n in "abc"))
        return order

    assert asyncio.run(run()) == list("abc") * 4


def test_a_learner_never_has_more_than_their_limit_in_flight_and_a_full_queue_refuses() -> None:
    async def run() -> tuple[int, bool]:
        q, most, now = FairQueue(slots=4), 0, 0

        async def ask() -> None:
            nonlocal most, now
            async with q.turn("ana", limit=2, max_waiting=5):
                now += 1
                most = max(most, now)
                await asyncio.sleep(0.01)
                now -= 1

        tasks = [asyncio.create_task(ask()) for _ in range(7)]  # 2 in flight, 5 waiting
        await asyncio.sleep(0)
        refused = False
        try:
            async with q.turn("ana", limit=2, max_waiting=5):
                pass
        except QueueFull:
            refused = True
        await asyncio.gather(*tasks)
        return most, refused

    most, refused = asyncio.run(run())
    assert most == 2 and refused


def test_a_request_given_up_while_waiting_frees_its_place() -> None:
    async def run() -> dict:
        q = FairQueue(slots=1)
        hold = asyncio.Event()

        async def first() -> None:
            async with q.turn("ana", 1, 4):
                await hold.wait()

        t1 = asyncio.create_task(first())
        await asyncio.sleep(0)
        waiting = asyncio.create_task(q.turn("bo", 1, 4).__aenter__())
        await asyncio.sleep(0)
        waiting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
        hold.set()
        await t1
        return {"busy": q.busy, "queue": q.snapshot()}

    assert asyncio.run(run()) == {"busy": 0, "queue": {}}


# -- usage and limits --------------------------------------------------------------------------


def test_usage_adds_up_per_learner_and_lesson_and_limits_can_be_raised(tmp_path: Path) -> None:
    store = UsageStore(f"sqlite:///{tmp_path / 'u.sqlite'}")
    for user, lesson_name, p, c in [("ana", "01", 10, 5), ("ana", "01", 7, 3), ("bo", "04", 2, 2)]:
        store.record(Use(user, lesson_name, "m", p, c, 0.5, "ok", 1.0e9 + 1))
    store.record(Use("ana", "01", "m", 0, 0, 0.0, "refused", 1.0e9 + 2))
    store.record(Use("bo", "room X", "m", 5, 5, 0.5, "unusable", 1.0e9 + 3))  # a stopped turn
    rows = {(r["user"], r["lesson"]): r for r in store.summary()}
    assert rows["ana", "01"]["requests"] == 3 and rows["ana", "01"]["prompt_tokens"] == 17
    assert rows["bo", "room X"]["unusable"] == 1 and rows["bo", "room X"]["failed"] == 0
    assert rows["ana", "01"]["refused"] == 1 and rows["bo", "04"]["completion_tokens"] == 2
    default = Limits(tokens_per_day=100, concurrent=2)
    assert store.limits_for("ana", default) == default
    store.set_limits("ana", tokens_per_day=400, concurrent=None)
    assert store.limits_for("ana", default) == Limits(tokens_per_day=400, concurrent=2)
    assert store.own_limits() == {"ana": {"tokens_per_day": 400}}
    from argnb.classroom.views import instructor_page

    data = {"class": "c", "model": "m", "defaults": default.__dict__, "usage": store.summary(),
            "today": [], "queue": {}, "slots": 1, "busy": 0, "own_limits": store.own_limits()}  # fmt: skip
    page = instructor_page(data)
    assert "Limits of their own" in page and "<td style" in page and ">400<" in page
    assert ">unusable<" in page
    # a second store on the same file (the gateway restarted) sees today's totals
    assert UsageStore(f"sqlite:///{tmp_path / 'u.sqlite'}").summary() == store.summary()
    with pytest.raises(ValueError, match="positive whole number"):
        store.set_limits("ana", tokens_per_day=0)


def test_the_instructor_commands_read_and_set_the_database(tmp_path: Path, capsys) -> None:
    from argnb.cli import main

    db = f"sqlite:///{tmp_path / 'u.sqlite'}"
    UsageStore(db).record(Use("ana", "01_fallacy", "m", 30, 12, 1.5, "ok", 1.0e9))
    assert main(["class", "usage", "--db", db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["prompt_tokens"] == 30
    assert main(["class", "limits", "ana", "--tokens-per-day", "5000", "--db", db]) == 0
    assert UsageStore(db).limits_for("ana", Limits()).tokens_per_day == 5000
    assert main(["class", "limits", "ana", "--tokens-per-day", "-3", "--db", db]) == 2
    assert main(["class", "usage", "--db", f"sqlite:///{tmp_path / 'none.sqlite'}"]) == 2
    err = capsys.readouterr().err
    assert "no usage database" in err and err.count("\n") == 2  # one line per refusal


# -- the hub's configuration -------------------------------------------------------------------


def test_configure_has_each_learners_server_copy_the_course_first() -> None:
    """The spawner's command is wrapped once: the learner's own Python copies the course into
    their home (as them), then runs the command the hub had (TLJH's, or a custom one)."""
    from traitlets.config import Config

    from argnb.classroom.hub import configure

    c = Config()
    c.Spawner.cmd = ["/opt/tljh/user/bin/jupyterhub-singleuser"]
    configure(c, model_url="http://m/v1", model="m")
    configure(c, model_url="http://m/v1", model="m")  # twice: still one wrapper
    assert c.Spawner.cmd == ["/opt/tljh/user/bin/python", "-m", "argnb.classroom.singleuser",
                             "argnb-course", "--", "/opt/tljh/user/bin/jupyterhub-singleuser"]  # fmt: skip
    c = Config()
    c.Spawner.cmd = ["/env/bin/python3", "-m", "jupyterhub.singleuser"]
    configure(c, model_url="http://m/v1", model="m", course="course")
    assert c.Spawner.cmd[:5] == [
        "/env/bin/python3",
        "-m",
        "argnb.classroom.singleuser",
        "course",
        "--",
    ]
    c = Config()
    configure(c, model_url="http://m/v1", model="m", course=None)
    assert "cmd" not in c.Spawner


def test_configure_adds_the_service_the_scopes_and_the_learners_settings() -> None:
    from traitlets.config import Config

    from argnb.classroom.hub import configure

    c = Config()
    c.JupyterHub.services = [{"name": "other", "api_token": "x"}]
    c.Spawner.environment = {"KEEP": "1"}
    configure(c, model_url="http://gpu:8000/v1", model="m", api_key="sk-secret", port=9000,
              limits={"tokens_per_day": 1000})  # fmt: skip
    names = [s["name"] for s in c.JupyterHub.services]
    assert names == ["other", "argnb-gateway"]
    service = c.JupyterHub.services[1]
    assert service["url"] == "http://127.0.0.1:9000"
    assert service["environment"]["ARGNB_GATEWAY_UPSTREAM_KEY"] == "sk-secret"
    assert json.loads(service["environment"]["ARGNB_GATEWAY_LIMITS"])["tokens_per_day"] == 1000
    scope = "access:services!service=argnb-gateway"
    assert scope in c.Spawner.server_token_scopes
    user_role = next(r for r in c.JupyterHub.load_roles if r["name"] == "user")
    assert set(user_role["scopes"]) == {"self", scope}
    env = c.Spawner.environment
    assert env["KEEP"] == "1" and env["ARGNB_CLASS_MODEL"] == "m"
    assert env["ARGNB_CLASS_URL"] == "http://127.0.0.1:9000/services/argnb-gateway/v1"
    assert "sk-secret" not in json.dumps(env)  # the model server's key stays with the gateway


def test_the_model_servers_key_comes_from_a_private_file_and_goes_to_the_gateway_only(tmp_path):
    from traitlets.config import Config

    from argnb.classroom.hub import configure
    from argnb.errors import ArgnbError

    key = tmp_path / "model.key"
    key.write_text("k-9f8e7d\n")
    for mode, said in ((0o644, "chmod 600"), (0o640, "chmod 600")):
        key.chmod(mode)
        with pytest.raises(ArgnbError, match="other users") as err:
            configure(Config(), model_url="http://m/v1", model="m", api_key_file=str(key))
        assert said in err.value.hint
    with pytest.raises(ArgnbError, match="cannot read"):
        configure(Config(), model_url="http://m/v1", model="m", api_key_file=str(tmp_path / "no"))
    key.chmod(0o600)
    c = Config()
    configure(c, model_url="http://m/v1", model="m", api_key_file=str(key))
    assert c.JupyterHub.services[0]["environment"]["ARGNB_GATEWAY_UPSTREAM_KEY"] == "k-9f8e7d"
    assert "k-9f8e7d" not in json.dumps(dict(c.Spawner.environment))
    assert "k-9f8e7d" not in json.dumps(c.JupyterHub.services[0]["command"])


def test_the_class_server_is_the_default_only_where_the_hub_set_it_up(monkeypatch) -> None:
    from argnb.config import connect, resolve

    assert class_settings({"ARGNB_CLASS_URL": "http://x/v1"}) is None  # no hub token: no class
    monkeypatch.setenv("ARGNB_CLASS_URL", "http://127.0.0.1:9/services/argnb-gateway/v1")
    monkeypatch.setenv("ARGNB_CLASS_MODEL", "class-model")
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "tok")
    assert resolve() == ("class", "class-model")
    assert resolve("local") == ("local", "smollm2-135m")  # one line switches away from it
    b = connect(make_default=False)
    assert isinstance(b, ClassBackend) and "tok" not in json.dumps(b.describe())
    monkeypatch.setenv("ARGNB_BACKEND", "local")
    assert resolve()[0] == "local"
    monkeypatch.delenv("JUPYTERHUB_API_TOKEN")
    monkeypatch.delenv("ARGNB_BACKEND")
    with pytest.raises(ArgnbError, match="no class server"):
        resolve("class")
    assert lesson({"JPY_SESSION_NAME": "/home/ana/notebooks/04_debate.ipynb"}) == "04_debate"


# -- the gateway in front of real HTTP servers -------------------------------------------------


class TokenTable:
    """Stands in for HubOAuth: a token identifies a user (the real check is in test_hub.py)."""

    def __init__(self, tokens: dict[str, str]) -> None:
        self.tokens = tokens
        self.access_scopes: set[str] = set()

    async def user_for_token(self, token: str, sync: bool = False) -> dict | None:
        name = self.tokens.get(token)
        return {"name": name, "kind": "user", "scopes": []} if name else None

    def check_scopes(self, scopes: set, model: dict) -> bool:
        return True


@contextlib.contextmanager
def gateway(upstream: str, tmp_path: Path, **kw: Any) -> Iterator[tuple[str, Gateway]]:
    """The gateway's app on a free port, on an event loop of its own thread."""
    from tornado.httpserver import HTTPServer

    settings = Settings(upstream=upstream, model="m", db_url=f"sqlite:///{tmp_path / 'g.sqlite'}",
                        **kw)  # fmt: skip
    gw = Gateway(settings, TokenTable({"t-ana": "ana", "t-bo": "bo"}))
    ready, box = threading.Event(), {}

    def serve() -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        server = HTTPServer(make_app(gw, "/services/argnb-gateway/"))
        socks = __import__("tornado.netutil").netutil.bind_sockets(0, "127.0.0.1")
        server.add_sockets(socks)
        box.update(loop=loop, port=socks[0].getsockname()[1])
        ready.set()
        loop.run_forever()

    threading.Thread(target=serve, daemon=True).start()
    ready.wait(10)
    try:
        yield f"http://127.0.0.1:{box['port']}/services/argnb-gateway/v1", gw
    finally:
        box["loop"].call_soon_threadsafe(box["loop"].stop)


def learner(url: str, token: str = "t-ana") -> ClassBackend:
    return ClassBackend(ClassSettings("test class", url, "m", token), max_retries=0, timeout=20)


def upstream(**kw: Any) -> ProtocolServer:
    return ProtocolServer(ScriptedBackend(lambda req: "a short answer", model="m"), **kw).start()


def test_a_learner_over_the_limit_gets_the_one_line_and_nothing_reaches_the_model(tmp_path):
    srv = upstream()
    with gateway(srv.url + "/v1", tmp_path, limits=Limits(tokens_per_day=5)) as (url, _):
        b = learner(url)
        assert b.chat("hello there").text == "a short answer"  # 0 of 5 used: it goes through
        seen = len(srv.requests)
        with pytest.raises(AllowanceUsed) as err:
            b.chat("and again")
        assert str(err.value) == "today's 5 tokens are used; your instructor can raise it"
        assert len(srv.requests) == seen  # refused at the gateway, not retried
        assert b.allowance()["remaining"] == 0 and learner(url, "t-bo").chat("hi").text
    srv.stop()


def _until(ok: Any, seconds: float = 5) -> None:
    """Wait for what the gateway does just after its answer went out (the client may be faster)."""
    import time

    end = time.monotonic() + seconds
    while not ok():
        assert time.monotonic() < end, "the gateway did not get there"
        time.sleep(0.02)


def _rows(gw: Gateway) -> list[dict]:
    """The usage rows, once the gateway wrote them (a stream's just after its last event)."""
    _until(gw.store.summary)
    return gw.store.summary()


def test_usage_of_streams_is_counted_by_the_server_or_marked_estimated(tmp_path):
    for mode, estimated in (("send", False), ("ignore", True), ("refuse", True)):
        srv = upstream(stream_usage=mode)
        with gateway(srv.url + "/v1", tmp_path / mode) as (url, gw):
            b = learner(url)
            s = b.stream("tell me")
            assert "".join(s) == "a short answer"
            sent = srv.requests[-1][1].get("stream_options")
            assert sent == (None if mode == "refuse" else {"include_usage": True})
            assert gw.stream_usage is (mode != "refuse")  # asked once, then never again
            rows = _rows(gw)
            assert rows[0]["requests"] == 1 and rows[0]["completion_tokens"] == 3
            assert bool(rows[0]["estimated_tokens"]) is estimated
        srv.stop()


def _tool_call_upstream() -> Any:
    """A model server that streams a tool call, a reasoning model's thoughts and no usage (as
    llama-cpp-python's does): 6 generated pieces, none of them ``content``."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}
    deltas = [{"role": "assistant"}, {"reasoning_content": "think"}, {"tool_calls": [call]}]
    deltas += [
        {"tool_calls": [{"index": 0, "function": {"arguments": a}}]} for a in ('{"a"', ":1", "}")
    ]
    deltas += [{"function_call": {"name": "g", "arguments": "{}"}}, {}]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for d in deltas:
                chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": d}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")

        def log_message(self, *a: Any) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def test_a_streamed_tool_call_is_counted_not_free(tmp_path):
    srv = _tool_call_upstream()
    port = srv.server_address[1]
    with gateway(f"http://127.0.0.1:{port}/v1", tmp_path) as (url, gw):
        tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
                  "properties": {"a": {"type": "integer", "description": "x" * 400}}}}}]  # fmt: skip
        body = {"messages": [{"role": "user", "content": "hi"}], "tools": tools, "stream": True}
        r = httpx.post(
            url + "/chat/completions", json=body, headers={"Authorization": "Bearer t-ana"}
        )
        assert r.status_code == 200 and r.text.count("data:") == 9
        row = _rows(gw)[0]
        # reasoning, the call, its three argument pieces and a function call: 6 pieces
        assert row["completion_tokens"] == 6 and row["estimated_tokens"]
        assert row["prompt_tokens"] > 100  # the tools' schema is read by the model too
    srv.shutdown()


def test_parallel_requests_cannot_spend_past_the_allowance_by_more_than_one_request(tmp_path):
    import time

    def slow(req: Any) -> str:
        time.sleep(0.3)  # all 30 arrive while the first ones are served
        return "a short answer"

    srv = ProtocolServer(ScriptedBackend(slow, model="m")).start()
    limit = 40
    with gateway(srv.url + "/v1", tmp_path, limits=Limits(tokens_per_day=limit, concurrent=30,
                 waiting=30)) as (url, gw):  # fmt: skip
        body = {"messages": [{"role": "user", "content": "Say it."}], "max_tokens": 5}

        async def all_at_once() -> list[httpx.Response]:
            async with httpx.AsyncClient(timeout=60) as c:
                return await asyncio.gather(*(c.post(url + "/chat/completions", json=body,
                    headers={"Authorization": "Bearer t-ana"}) for _ in range(30)))  # fmt: skip

        codes = [r.status_code for r in asyncio.run(all_at_once())]
        ok = codes.count(200)
        assert 1 <= ok < 30 and set(codes) == {200, 429}, codes
        _until(lambda: sum(r["requests"] for r in gw.store.summary()) == ok)
        spent = gw.store.tokens_today("ana")
        one = max(r["prompt_tokens"] + r["completion_tokens"] for r in gw.store.summary())
        # the documented bound: past the limit by at most the one request admitted last
        assert spent < limit + one, (spent, ok, one)
        assert gw.held == {}  # every hold was settled
    srv.stop()


def test_unknown_token_model_or_body_is_refused_with_a_readable_error(tmp_path):
    srv = upstream()
    with gateway(srv.url + "/v1", tmp_path) as (url, _):
        r = httpx.post(url + "/chat/completions", json={"messages": []})
        assert r.status_code == 401 and "JupyterHub token" in r.json()["error"]["message"]
        r = httpx.post(
            url + "/chat/completions", content=b"{", headers={"Authorization": "Bearer t-ana"}
        )
        assert r.status_code == 400
        with pytest.raises(ModelNotFound):
            ClassBackend(ClassSettings("c", url, "m", "t-ana"), "gpt-5", max_retries=0).chat("x")
    assert srv.requests == []
    srv.stop()


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(codec="ascii", exclude_categories=["Cc", "Zs"]), min_size=1),
       st.sampled_from(["Bearer", "bearer", "token", "Token"]), st.text(" ", max_size=3))  # fmt: skip
def test_the_header_parser_takes_exactly_the_token_and_nothing_else(token, scheme, pad):
    from argnb.classroom.gateway import header_token

    assert header_token(f"{pad}{scheme} {token}{pad}") == token
    assert header_token(token) is None or token.lower().startswith(("bearer ", "token "))
    assert header_token(f"Basic {token}") is None and header_token("") is None


def test_only_the_authorization_header_identifies_a_learner_never_a_cookie_or_a_link(
    tmp_path, caplog
):
    import logging

    caplog.set_level(logging.INFO, logger="argnb.gateway")
    srv = upstream()
    with gateway(srv.url + "/v1", tmp_path) as (url, gw):
        # what another site's form sends with the learner's cookie: text/plain, no header
        form = {"Content-Type": "text/plain", "Origin": "http://evil.example",
                "Cookie": "argnb-gateway=t-ana; jupyterhub-session-id=x"}  # fmt: skip
        body = b'{"messages": [{"role": "user", "content": "spend"}], "ignore": "='
        for path, headers in (
            ("/chat/completions", form),
            ("/chat/completions?token=t-ana", {"Content-Type": "application/json"}),
            ("/argnb/allowance?token=t-ana", {}),
        ):
            r = httpx.post(url + path, content=body, headers=headers) if "chat" in path else (
                httpx.get(url + path, headers=headers))  # fmt: skip
            assert r.status_code == 403, (path, r.status_code)
            assert "Authorization header only" in r.json()["error"]["message"]
        room = httpx.post(url.rsplit("/v1", 1)[0] + "/rooms", json={"topic": "x"}, headers=form)
        assert room.status_code == 403
        for scheme in ("Bearer", "bearer", "token"):  # what clients send, in either spelling
            r = httpx.get(url + "/models", headers={"Authorization": f"{scheme} t-ana"})
            assert r.status_code == 200, scheme
        assert gw.store.summary() == [] and srv.requests == []  # nothing charged, nothing sent
        httpx.get(url + "/models?x=1&api_key=k-2&token=t-ana")
        _until(lambda: "api_key=[hidden]&token=[hidden]" in caplog.text)
    assert "t-ana" not in caplog.text and "k-2" not in caplog.text  # a link's token: not logged
    srv.stop()


def test_every_request_is_capped_and_asks_for_one_answer(tmp_path):
    """llama.cpp reads max_tokens -1 or 0 as "no limit": each reaches it as the class's cap."""
    srv = upstream()
    with gateway(srv.url + "/v1", tmp_path, max_tokens=64) as (url, _):
        h = {"Authorization": "Bearer t-ana"}
        msgs = [{"role": "user", "content": "hi"}]
        asks = [
            ({"max_tokens": -1}, 64),
            ({"max_tokens": 0}, 64),
            ({"max_tokens": True}, 64),
            ({"max_tokens": 5000}, 64),
            ({"max_tokens": "9"}, 64),
            ({"max_completion_tokens": 10**6}, 64),
            ({"max_completion_tokens": -1, "max_tokens": 5}, 5),
            ({"max_tokens": 5}, 5),
            ({}, 64),
        ]
        for extra, cap in asks:
            r = httpx.post(url + "/chat/completions", json={"messages": msgs, **extra}, headers=h)
            assert r.status_code == 200, (extra, r.text)
            sent = srv.requests[-1][1]
            assert sent["max_tokens"] == cap and "max_completion_tokens" not in sent, extra
        seen = len(srv.requests)
        for n in (2, 0, True):
            r = httpx.post(url + "/chat/completions", json={"messages": msgs, "n": n}, headers=h)
            assert r.status_code == 400 and "n=1" in r.json()["error"]["message"], n
        assert len(srv.requests) == seen  # refused at the gateway
    srv.stop()


def test_a_model_server_that_is_gone_or_hangs_gives_one_line_not_a_wait(tmp_path):
    from argnb.classroom.local import free_port

    with gateway(f"http://127.0.0.1:{free_port()}/v1", tmp_path / "gone") as (url, gw):
        r = httpx.post(url + "/chat/completions", json={"messages": []},
                       headers={"Authorization": "Bearer t-ana"})  # fmt: skip
        assert r.status_code == 502 and "tell your instructor" in r.json()["error"]["message"]
        assert gw.store.summary()[0]["failed"] == 1
    srv = upstream(faults=["hang"], hang_s=30)
    with gateway(srv.url + "/v1", tmp_path / "hang", timeout=1.0) as (url, gw):
        with pytest.raises(ArgnbError) as err:
            learner(url).chat("hello")
        assert "does not answer" in str(err.value) and not isinstance(err.value, BackendUnavailable)
        _until(lambda: gw.queue.busy == 0)  # the slot came back (just after the answer went out)
    srv.stop()


def test_the_backend_picker_offers_the_class_server_first_with_the_allowance(tmp_path, monkeypatch):
    from argnb.widgets.backend_picker import BackendPicker

    srv = upstream()
    with gateway(srv.url + "/v1", tmp_path, limits=Limits(tokens_per_day=1000)) as (url, _):
        monkeypatch.setenv("ARGNB_CLASS_URL", url)
        monkeypatch.setenv("ARGNB_CLASS_NAME", "Argumentation 101")
        monkeypatch.setenv("ARGNB_CLASS_MODEL", "m")
        monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "t-ana")
        picker = BackendPicker()
        assert picker.kind.options[0] == "class" and picker.kind.value == "class"
        line = picker.class_line.value
        assert "class server: Argumentation 101 via JupyterHub, model m" in line
        assert "1,000 of 1,000 tokens left" in line
        assert picker.connect() is not None and picker.backend.name == "class"
    srv.stop()


def test_class_try_without_a_terminal_refuses_in_one_line_and_starts_nothing() -> None:
    """``argnb class try`` makes local users and runs until Ctrl-C: a script or a fuzz that
    calls it by chance gets one line and exit 2 (``--yes`` runs it without a terminal:
    tests/classroom/test_trial.py)."""
    import pwd
    import subprocess
    import sys

    got = subprocess.run(
        [sys.executable, "-m", "argnb.cli", "class", "try", "--learners", "1"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert got.returncode == 2, got.stderr
    assert "run it in a terminal, or pass --yes" in got.stderr + got.stdout
    assert len((got.stderr + got.stdout).strip().splitlines()) <= 2
    with pytest.raises(KeyError):
        pwd.getpwnam("argnbtry1")


def test_the_gateway_stops_on_the_hubs_sigint_even_when_started_with_sigint_ignored(tmp_path):
    """A hub started in the background by a shell (docs/deploy.md by hand: ``nohup jupyterhub
    &``) starts its services with SIGINT ignored; the hub then waited 10 s for its SIGINT and
    killed the gateway after its SIGTERM's wait: the class took ~30 s to stop."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from argnb.classroom.local import free_port

    port = free_port()
    env = dict(
        os.environ,
        ARGNB_GATEWAY_UPSTREAM="http://127.0.0.1:9/v1",
        ARGNB_GATEWAY_MODEL="m",
        ARGNB_GATEWAY_DB=f"sqlite:///{tmp_path / 'usage.sqlite'}",
        JUPYTERHUB_API_TOKEN="t" * 32,
        JUPYTERHUB_SERVICE_URL=f"http://127.0.0.1:{port}",
        JUPYTERHUB_SERVICE_PREFIX="/services/argnb-gateway/",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "argnb.classroom.gateway"], env=env, stderr=subprocess.PIPE,
        text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        seen = ""
        while "serving on" not in seen:
            line = proc.stderr.readline()
            assert line, f"the gateway did not start: {seen}"
            seen += line
        proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        rest = proc.communicate(timeout=20)[1]
        assert proc.returncode == 0, rest
        assert "stopped" in rest and "Traceback" not in rest, rest
        print(f"stopped {time.monotonic() - start:.2f} s after SIGINT")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_model_server_refusing_the_gateways_key_is_the_instructors_line_not_the_learners(
    tmp_path,
):
    """A key file that is not the one the model server was started with (docs/deploy.md by hand,
    run twice): the learner's own token is fine, so the learner reads that the class's key was
    refused and to tell the instructor, never "check your API key"; the usage row says failed."""
    srv = ProtocolServer(
        ScriptedBackend(lambda req: "an answer", model="m"), api_key="the-servers-key"
    ).start()
    with gateway(srv.url + "/v1", tmp_path / "wrong", upstream_key="an-old-key") as (url, gw):
        for stream in (False, True):
            r = httpx.post(url + "/chat/completions", headers={"Authorization": "Bearer t-ana"},
                           json={"model": "m", "stream": stream,
                                 "messages": [{"role": "user", "content": "hi"}]})  # fmt: skip
            assert r.status_code == 502, r.text
            assert r.json()["error"]["message"] == (
                "the class model server refused the class's key; tell your instructor"
            )
        with pytest.raises(ArgnbError, match="refused the class's key; tell your instructor"):
            learner(url).chat("hello")
        _until(lambda: gw.store.summary()[0]["failed"] == 3)
    with gateway(srv.url + "/v1", tmp_path / "right", upstream_key="the-servers-key") as (url, _):
        assert learner(url).chat("hello").text == "an answer"
    srv.stop()
