"""Rooms on the class server (argnb.classroom.rooms) over real HTTP on 127.0.0.1, with the hub's
token check replaced by a table of tokens (as in test_gateway.py) and the scripted table
backend in every seat: learners open and join a room, talk, rank, critique and reach the end; a
learner cannot move in a room they did not join or out of turn; a restarted service resumes the
room; a long poll returns when another learner moves; a silent learner is passed over."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from argnb.classroom.gateway import Gateway, Settings, make_app
from argnb.classroom.local import free_port
from argnb.classroom.rooms import ALPHABET, CODE_CHARS
from argnb.errors import RoomRefused
from argnb.llm.classserver import ClassSettings
from argnb.roundtable.remote import RoomClient, rooms_url
from argnb.roundtable.testing import table_backend

from .test_gateway import TokenTable

PREFIX = "/services/argnb-gateway/"
TOKENS = {"t-ana": "ana", "t-bo": "bo", "t-cy": "cy", "t-dee": "dee"}


def seats(code: str, delay_s: float = 0.0) -> dict[str, Any]:
    return {
        "moderator": table_backend(delay_s=delay_s),
        "deliberators": [table_backend(words=30, delay_s=delay_s) for _ in range(2)],
        "analyzer": table_backend(delay_s=delay_s),
    }


@contextlib.contextmanager
def service(
    tmp_path: Path,
    *,
    answer_s: float = 60.0,
    poll_s: float = 5.0,
    delay_s: float = 0.0,
    backends: Any = None,
    upstream: str = "",
    limits: Any = None,
) -> Iterator[tuple[str, Gateway]]:
    """The gateway (rooms included) on a free port, on an event loop of its own thread; the
    rooms are kept in ``tmp_path / "rooms"``, so a second service on the same path resumes them."""
    from tornado.httpserver import HTTPServer
    from tornado.netutil import bind_sockets

    settings = Settings(
        upstream=upstream or f"http://127.0.0.1:{free_port()}/v1",
        model="m",
        db_url=f"sqlite:///{tmp_path / 'g.sqlite'}",
        answer_s=answer_s,
        **({"limits": limits} if limits else {}),
    )
    ready, box = threading.Event(), {}

    def serve() -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        made = backends or ((lambda code: seats(code, delay_s)) if delay_s else seats)
        made = None if upstream else made  # the seats on the model server, as in the service
        gw = Gateway(settings, TokenTable(TOKENS), room_backends=made, poll_s=poll_s)
        server = HTTPServer(make_app(gw, PREFIX))
        socks = bind_sockets(0, "127.0.0.1")
        server.add_sockets(socks)
        box.update(loop=loop, port=socks[0].getsockname()[1], gw=gw, server=server)
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    ready.wait(60)  # a loaded machine starts it slowly
    loop = box["loop"]
    try:
        yield f"http://127.0.0.1:{box['port']}{PREFIX}v1", box["gw"]
    finally:

        async def stop() -> None:
            box["server"].stop()
            await box["gw"].rooms.stop()

        asyncio.run_coroutine_threadsafe(stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def client(url: str, token: str) -> RoomClient:
    return RoomClient(ClassSettings("test class", url, "m", token), timeout=30)


def play(clients: dict[str, RoomClient], until: str = "ended", seconds: float = 60) -> dict:
    """Every learner answers whenever the room waits for them: says a line, ranks, critiques."""
    first = next(iter(clients.values()))
    end = time.monotonic() + seconds
    while True:
        s = first.state(wait=False)
        if s["phase"] == until or s["ended"]:
            return s
        assert time.monotonic() < end, f"the room did not get to {until}: {s['phase']}"
        for name in s["waiting_for"]:
            c = clients[name]
            if s["phase"] == "discussion":
                c.say(f"{name} thinks the rules should be written with the class.")
            elif s["phase"] == "ranking":
                c.rank(["S2", "S1"] if name != "cy" else ["S1", "S3", "S2"])
            elif s["phase"] == "critique":
                c.critique("It forgets the teachers." if name == "ana" else "")
        time.sleep(0.02)


def test_three_learners_open_join_talk_rank_and_critique_to_the_end(tmp_path: Path) -> None:
    t0 = time.monotonic()
    with service(tmp_path) as (url, gw):
        ana, bo, cy = (client(url, f"t-{n}") for n in ("ana", "bo", "cy"))
        s = ana.open("Should homework allow AI tools?", turns=9)  # B = 3 x 3
        code = s["code"]
        assert len(code) == CODE_CHARS and set(code) <= set(ALPHABET) and s["seated"] == ["ana"]
        assert bo.join(code.lower())["seated"] == ["ana", "bo"]  # a code typed in lower case
        cy.join(code)
        end = play({"ana": ana, "bo": bo, "cy": cy})
        whole = cy.state(0)
        assert whole["next"] == len(whole["turns"]) and whole["ended"] == "turns"
        said = [t for t in whole["turns"] if t["role"] == "human" and t["text"]]
        assert {t["speaker"] for t in said} == {"ana", "bo", "cy"}
        assert all(t["text"].startswith(t["speaker"] + " thinks") for t in said)  # each as theirs
        out = end["outcome"]
        assert out["winner"] == "S2" and out["ballots"]["cy"] == ["S1", "S3", "S2"]
        assert out["d"]["S2"]["S1"] == 2 and end["revision"]["critiques"] == 1
        # the seats' model use is charged to the seated learners, in near-equal parts
        rows = {r["user"]: r for r in gw.store.summary()}
        assert set(rows) == {"ana", "bo", "cy"}
        assert {r["lesson"] for r in rows.values()} == {f"roundtable room {code}"}
        spent = sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows.values())
        used = sum(t["usage"]["prompt_tokens"] + t["usage"]["completion_tokens"]
                   for t in whole["turns"] if t.get("calls"))  # fmt: skip
        assert all(r["prompt_tokens"] for r in rows.values()) and spent == used > 0
        # a finished room still reads back, and takes no more moves
        with pytest.raises(RoomRefused) as err:
            ana.say("one more")
        assert err.value.status == 409
    assert time.monotonic() - t0 < 30


def test_a_learner_cannot_move_in_a_room_they_did_not_join_or_as_another_seat(tmp_path):
    with service(tmp_path) as (url, _):
        ana, bo, dee = (client(url, f"t-{n}") for n in ("ana", "bo", "dee"))
        code = ana.open("Homework with AI?", turns=6)["code"]
        bo.join(code)
        dee.code = code
        for move in (lambda: dee.say("hi"), dee.hand, lambda: dee.rank(["S1"])):
            with pytest.raises(RoomRefused) as err:
                move()
            assert err.value.status == 403 and str(err.value.message) == (
                f"you have not joined room {code}"
            )
        assert dee.state(wait=False)["seated"] == ["ana", "bo"]  # reading is allowed by code
        # the seat is the token's name, never a field of the body
        s = ana.state(wait=False)
        while not s["waiting_for"]:
            s = ana.state(s["next"])
        holder = s["waiting_for"][0]
        other = {"ana": "bo", "bo": "ana"}[holder]
        r = httpx.post(
            f"{rooms_url(url)}/{code}/say",
            json={"text": "I speak for you", "name": holder, "speaker": holder},
            headers={"Authorization": f"Bearer t-{other}"},
        )
        assert r.status_code == 409
        assert r.json()["error"]["message"] == f"it is not {other}'s turn"
        assert "I speak for you" not in json.dumps(ana.state(0)["turns"])
        # bad bodies, unknown rooms, no token: one line each
        h = {"Authorization": "Bearer t-ana"}
        for body, status in ((b"[", 400), (b"[1]", 400), (b'{"text": 5}', 400)):
            r = httpx.post(f"{rooms_url(url)}/{code}/say", content=body, headers=h)
            assert r.status_code == status and "\n" not in r.json()["error"]["message"]
        r = httpx.post(rooms_url(url), json={"topic": "x"}, headers=h)
        assert r.status_code == 400 and "topic" in r.json()["error"]["message"]
        r = httpx.post(rooms_url(url), json={"topic": "Fine topic", "turns": 1000}, headers=h)
        assert r.status_code == 400
        with pytest.raises(RoomRefused) as err:
            client(url, "t-ana").join("ZZZZZZ")
        assert err.value.status == 404 and "no room" in err.value.message
        r = httpx.get(f"{rooms_url(url)}/{code}")
        assert r.status_code == 401
        for since in ("-1", "²", "١٢", "1" * 10):  # ASCII digits only ("²" was an HTTP 500)
            r = httpx.get(f"{rooms_url(url)}/{code}", params={"since": since}, headers=h)
            assert r.status_code == 400, since


def test_hostile_text_is_data_in_the_json(tmp_path: Path) -> None:
    with service(tmp_path) as (url, _):
        ana = client(url, "t-ana")
        code = ana.open("<script>alert(1)</script> homework?", turns=3)["code"]
        s = ana.state(wait=False)
        while "ana" not in s["waiting_for"]:
            s = ana.state(s["next"])
        evil = '</script><img src=x onerror="alert(1)">'
        ana.say(evil)
        r = httpx.get(f"{rooms_url(url)}/{code}", params={"since": 0, "wait": 0},
                      headers={"Authorization": "Bearer t-ana"})  # fmt: skip
        assert r.headers["content-type"].startswith("application/json")
        assert "</script>" not in r.text  # tornado writes "<\/": inert even inside a page
        assert evil in [t["text"] for t in r.json()["turns"]]


def test_a_restarted_service_resumes_the_room_with_its_whole_transcript(tmp_path: Path) -> None:
    with service(tmp_path) as (url, _):
        ana, bo = client(url, "t-ana"), client(url, "t-bo")
        code = ana.open("Homework with AI?", turns=6)["code"]
        bo.join(code)
        s = play({"ana": ana, "bo": bo}, until="ranking")
        before = ana.state(0)
        assert before["phase"] == "ranking" and before["candidates"]
        ana.rank(["S1", "S2"])
        before = ana.state(0)
    assert [p.name for p in (tmp_path / "argnb-rooms").iterdir()] == [f"{code}.json"]
    with service(tmp_path) as (url, _):
        ana, bo = client(url, "t-ana"), client(url, "t-bo")
        bo.code = code
        after = bo.state(0)
        assert after["turns"] == before["turns"] and after["phase"] == "ranking"
        assert after["waiting_for"] == ["bo"]  # ana's ballot is kept
        bo.rank(["S1"])
        ana.code = code
        s = play({"ana": ana, "bo": bo})
        assert s["outcome"]["winner"] == "S1" and s["ended"] == "turns"


def test_a_long_poll_returns_when_another_learner_moves(tmp_path: Path) -> None:
    with service(tmp_path, poll_s=20) as (url, _):
        ana, bo = client(url, "t-ana"), client(url, "t-bo")
        code = ana.open("Homework with AI?", turns=6)["code"]
        bo.join(code)
        s = bo.state(wait=False)
        while s["waiting_for"] == []:  # until the room waits for a learner: nothing moves
            s = bo.state(s["next"])
        got: dict[str, Any] = {}

        def poll() -> None:
            t = time.monotonic()
            got["state"] = bo.state(s["next"])
            got["s"] = time.monotonic() - t

        waiter = threading.Thread(target=poll)
        waiter.start()
        time.sleep(0.5)
        assert waiter.is_alive()  # nothing new: the poll waits
        (ana if s["waiting_for"] != ["ana"] else bo).hand()  # a hand is news too
        waiter.join(10)
        new = got["state"]["turns"]
        assert 0.4 < got["s"] < 5 and new and new[0]["role"] == "seat"
        assert new[0]["payload"]["action"] == "hand"


def test_a_learner_who_does_not_answer_is_passed_over(tmp_path: Path) -> None:
    with service(tmp_path, answer_s=0.5) as (url, _):
        ana = client(url, "t-ana")
        ana.open("Homework with AI?", turns=4)
        end = time.monotonic() + 20
        s = ana.state(wait=False)
        while not any(
            t["role"] == "human" and t["payload"]["action"] == "timeout" for t in s["turns"]
        ):
            assert time.monotonic() < end, "nobody passed ana over"
            s = ana.state(0)
        assert s["seated"] == ["ana"]


def test_a_learner_opens_a_few_rooms_at_most(tmp_path: Path) -> None:
    with service(tmp_path) as (url, gw):
        gw.rooms.settings.per_learner = 2
        ana = client(url, "t-ana")
        codes = [ana.open("Homework with AI?")["code"] for _ in range(2)]
        with pytest.raises(RoomRefused) as err:
            ana.open("A third one?")
        assert err.value.status == 429 and all(c in err.value.message for c in codes)
        assert client(url, "t-bo").open("Bo's own room?")["seated"] == ["bo"]


def test_floods_of_wrong_codes_moves_and_new_rooms_get_429_with_one_line(tmp_path: Path):
    with service(tmp_path) as (url, gw):
        s = gw.rooms.settings
        s.per_learner, s.opens_per_hour = 100, 3
        ana, bo, cy = (client(url, f"t-{n}") for n in ("ana", "bo", "cy"))
        code = ana.open("Homework with AI?")["code"]
        assert len(code) == 8  # 31**8 codes

        def refused(call: Any) -> RoomRefused:
            with pytest.raises(RoomRefused) as err:
                call()
            return err.value

        # guessing: 10 wrong codes a minute, then even the right one waits
        assert [refused(lambda: bo.join("ZZZZZZZZ")).status for _ in range(10)] == [404] * 10
        err = refused(lambda: bo.join("ZZZZZZZZ"))
        assert err.status == 429 and "wrong room codes" in err.message and "wait" in err.hint
        assert refused(lambda: bo.join(code)).status == 429
        assert cy.join(code)["seated"] == ["ana", "cy"]  # the others are not held up
        # a flood of moves: the 121st within a minute is refused, the transcript stops growing
        n0 = len(ana.state(0, wait=False)["turns"])
        codes = []
        for i in range(s.moves_per_min + 5):
            try:
                (ana.hand if i % 2 == 0 else ana.lower)()
                codes.append(200)
            except RoomRefused as e:
                codes.append(e.status)
        assert codes.count(429) == 5 and 429 not in codes[: s.moves_per_min - 1], codes
        assert len(ana.state(0, wait=False)["turns"]) - n0 <= s.moves_per_min
        # opening rooms: 3 an hour here (12 by default), however many were left at once
        for _ in range(2):
            cy.open("One more room?")
            cy.leave()
        cy.open("The third one?")
        err = refused(lambda: cy.open("A fourth?"))
        assert err.status == 429 and "in the last hour" in err.message


def test_rooms_left_empty_or_ended_long_ago_are_archived_not_kept_or_resumed(tmp_path: Path):
    import os

    with service(tmp_path) as (url, gw):
        ana, bo = client(url, "t-ana"), client(url, "t-bo")
        empty = ana.open("Left at once?")["code"]
        ana.leave()
        live = bo.open("Still talking?")["code"]
        rooms = gw.rooms.settings.rooms_dir
        hour_ago = time.time() - 3600
        for code in (empty, live):
            os.utime(rooms / f"{code}.json", (hour_ago, hour_ago))
        ana.open("A new one")  # opening a room sweeps the old ones
        with pytest.raises(RoomRefused) as err:
            bo.join(empty)
        assert err.value.status == 404
        assert (rooms / "archive" / f"{empty}.json").is_file()
        assert not (rooms / f"{empty}.json").exists()
        bo.code = live
        assert bo.state(0, wait=False)["code"] == live  # seated: kept however quiet
    with service(tmp_path) as (url, gw):  # a restart resumes what was kept, not the archive
        again = client(url, "t-bo")
        again.code = live
        assert again.state(0, wait=False)["code"] == live
        assert empty not in gw.rooms.hosts


def test_the_client_says_what_went_wrong_and_the_rooms_dir_sits_beside_the_usage_db(
    tmp_path, monkeypatch
):
    from traitlets.config import Config

    from argnb.classroom.hub import configure
    from argnb.errors import ArgnbError, BackendUnavailable

    dead = f"http://127.0.0.1:{free_port()}/services/argnb-gateway/v1"
    assert rooms_url(dead) == dead[: -len("/v1")] + "/rooms"
    c = client(dead, "t-ana")
    with pytest.raises(ArgnbError, match="no room yet"):
        c.say("hello")
    with pytest.raises(BackendUnavailable, match="cannot reach the class server"):
        c.join("ABCDEF")
    monkeypatch.delenv("ARGNB_CLASS_URL", raising=False)
    with pytest.raises(ArgnbError, match="no class server"):
        RoomClient()
    s = Settings(upstream="u", model="m", db_url="sqlite:////srv/state/argnb-usage.sqlite")
    assert s.room_dir() == Path("/srv/state/argnb-rooms")
    s = Settings(upstream="u", model="m", db_url="postgresql://x/y")
    assert s.room_dir() == Path.cwd() / "argnb-rooms"
    env = {"ARGNB_GATEWAY_UPSTREAM": "u", "ARGNB_GATEWAY_MODEL": "m", "ARGNB_GATEWAY_ROOMS": "/r",
           "ARGNB_GATEWAY_ANSWER_S": "45"}  # fmt: skip
    s = Settings.from_env(env)
    assert s.room_dir() == Path("/r") and s.answer_s == 45.0
    cfg = Config()
    configure(cfg, model_url="u", model="m", rooms_dir="/r", answer_s=30)
    env = cfg.JupyterHub.services[0]["environment"]
    assert env["ARGNB_GATEWAY_ROOMS"] == "/r" and env["ARGNB_GATEWAY_ANSWER_S"] == "30"


def test_a_learner_who_answers_in_time_is_never_passed_over_however_long_the_models_take(
    tmp_path: Path,
) -> None:
    """The clock of a wait starts when the room waits for that learner, at that step: a slow
    discussion before the ranking does not count against the ranking (it did: a learner's
    ballot was an empty one the moment the candidates appeared)."""
    with service(tmp_path, answer_s=1.5, delay_s=0.9) as (url, _):
        ana = client(url, "t-ana")
        ana.open("Homework with AI?", turns=3)
        end = time.monotonic() + 60
        s = ana.state(wait=False)
        while not s["ended"]:
            assert time.monotonic() < end, f"the room did not end: {s['phase']}"
            if "ana" in s["waiting_for"]:
                assert 0 < s["deadline_s"] <= 1.5
                {"discussion": lambda: ana.say("ana wants rules."),
                 "ranking": lambda: ana.rank(["S1", "S2"]),
                 "critique": lambda: ana.critique("")}[s["phase"]]()  # fmt: skip
            s = ana.state(s["next"])
        turns = ana.state(0)["turns"]
        assert not [t for t in turns if t["payload"].get("action") == "timeout"]
        assert [t["payload"]["ranking"] for t in turns if t["role"] == "ballot"] == [["S1", "S2"]]


def test_a_model_server_that_fails_shows_in_the_state_and_the_room_waits(tmp_path: Path) -> None:
    from argnb.errors import BackendUnavailable
    from argnb.llm.scripted import ScriptedBackend

    def gone(req: Any) -> Any:
        raise BackendUnavailable("the analyzer's server is gone")

    def broken(code: str) -> dict[str, Any]:
        return {**seats(code), "analyzer": ScriptedBackend(gone, max_retries=0)}

    with service(tmp_path) as (url, gw):
        gw.rooms.backends = broken
        gw.rooms.settings.retry_s = 30.0
        ana = client(url, "t-ana")
        code = ana.open("Homework with AI?", turns=3)["code"]  # the analysis comes at the close
        end = time.monotonic() + 20
        s = ana.state(wait=False)
        while not s["error"]:
            assert time.monotonic() < end, "the failure was not shown"
            if "ana" in s["waiting_for"]:
                ana.say("ana wants rules.")
            s = ana.state(s["next"])
        assert s["error"].startswith("the room could not go on: the analyzer's server is gone")
        assert s["phase"] == "discussion" and not s["ended"]
        assert gw.rooms.hosts[code].task is not None and not gw.rooms.hosts[code].task.done()


def test_with_the_fallacy_check_on_every_turn_is_flagged_for_every_seat(tmp_path):
    """``hub.configure(room_fallacy=True)``: the service checks each turn (one more call) and the
    flags are in the room's turns, so every seat's widget shows them."""
    from argnb.classroom.gateway import Settings
    from argnb.classroom.rooms import upstream_backends
    from argnb.fallacy.baselines import Baseline
    from argnb.llm.scripted import ScriptedBackend

    env = {"ARGNB_GATEWAY_UPSTREAM": "http://127.0.0.1:9/v1", "ARGNB_GATEWAY_MODEL": "m"}
    assert not Settings.from_env(env).room_fallacy
    on = Settings.from_env({**env, "ARGNB_GATEWAY_ROOM_FALLACY": "1"})
    assert on.room_fallacy
    gw = type("G", (), {"settings": on})()
    assert isinstance(upstream_backends(gw)("ABCDEF")["fallacy"], Baseline)  # type: ignore[arg-type]

    def verdict(req) -> dict:
        return {"label": int("because I say so" in req.prompt)}

    def with_check(code: str) -> dict[str, Any]:
        return {**seats(code), "fallacy": Baseline("zero", ScriptedBackend(verdict))}

    with service(tmp_path, backends=with_check) as (url, _):
        ana, bo = client(url, "t-ana"), client(url, "t-bo")
        code = ana.open("Phones in class?", turns=4)["code"]
        bo.join(code)
        end = time.monotonic() + 60
        s = ana.state(wait=False)
        while s["phase"] == "discussion" and not s["ended"]:
            assert time.monotonic() < end, s
            for name in s["waiting_for"]:
                {"ana": ana, "bo": bo}[name].say(f"Phones are fine because I say so ({name}).")
            s = ana.state(wait=False)
            time.sleep(0.02)
        turns = ana.state(0, wait=False)["turns"]
        # a third learner's widget, watching: the flags are in its panel
        from argnb.roundtable.room_widget import RoomWidget

        w = RoomWidget(code=code, watch=True, settings=ClassSettings("c", url, "m", "t-cy"))
        try:
            end = time.monotonic() + 30
            while "weak reasoning" not in w.flags.value:
                assert time.monotonic() < end, w.flags.value
                time.sleep(0.05)
            assert "flags ana&#x27;s contribution" in w.flags.value
        finally:
            w.close()
    flags = [t for t in turns if t["role"] == "fallacy check"]
    spoken = [t for t in turns if t["role"] in ("human", "deliberator") and t["text"]]
    assert len(flags) == len(spoken) >= 3
    by_target = {f["payload"]["target"]: f["payload"]["label"] for f in flags}
    for i, t in enumerate(turns):
        if t in spoken:
            assert by_target[i] == int("because I say so" in t["text"]), t
    assert 1 in by_target.values() and 0 in by_target.values()


def test_a_learner_over_the_limit_cannot_spend_through_a_room(tmp_path: Path) -> None:
    from argnb.classroom.usage import Limits, Use
    from argnb.llm.testserver import ProtocolServer

    srv = ProtocolServer(table_backend(model="m")).start()
    with service(tmp_path, upstream=srv.url + "/v1", limits=Limits(tokens_per_day=50)) as (
        url,
        gw,
    ):
        gw.store.record(Use(user="ana", lesson="01", model="m", prompt_tokens=40,
                            completion_tokens=20, seconds=1.0, status="ok", started=time.time()))  # fmt: skip
        ana = client(url, "t-ana")
        code = ana.open("Should homework allow AI tools?", turns=4)["code"]
        end = time.monotonic() + 20
        while "used today's tokens" not in (s := ana.state(wait=False))["error"]:
            assert time.monotonic() < end, s["error"]
            time.sleep(0.05)
        # refused before the model server: nothing asked, nothing charged, one line shown
        assert srv.requests == [] and s["phase"] != "ended"
        assert [r["user"] for r in gw.store.summary()] == ["ana"]
        # bo, with tokens left, sits down: the room goes on at bo's cost alone
        bo = client(url, "t-bo")
        bo.join(code)
        end = time.monotonic() + 30
        while not any(r["lesson"] == f"roundtable room {code}" for r in gw.store.summary()):
            assert time.monotonic() < end, ana.state(wait=False)["error"]
            time.sleep(0.05)
        room = [r for r in gw.store.summary() if r["lesson"] == f"roundtable room {code}"]
        assert [r["user"] for r in room] == ["bo"] and srv.requests
    srv.stop()
