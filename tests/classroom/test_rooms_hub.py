"""A room on a real class hub: JupyterHub from PyPI, configurable-http-proxy from npm, the class
gateway as a hub service, and llama.cpp's server with the embedded model as the class model.
Three hub users, each with their own hub token (what their servers hold), open and join one room
over the service's real API; the embedded model moderates, deliberates and analyzes, and the
learners rank and critique through the closing. Their seats are their hub names; a fourth user,
who did not join, cannot move in the room.

Needs configurable-http-proxy (``.ci/run`` installs it) and the embedded model; skips otherwise.
No local users are created (the hub's users and tokens are made through its API).
"""

from __future__ import annotations

import secrets
import time

import pytest

from argnb.errors import RoomRefused
from argnb.llm.classserver import ClassSettings
from argnb.roundtable.remote import RoomClient

# make test-all only: make test's two-browser room on the hub (test_hub.py) covers a room there
pytestmark = [pytest.mark.server, pytest.mark.model, pytest.mark.full]


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    from argnb.classroom.local import Hub, ModelServer, find_proxy
    from argnb.llm.download import embedded_gguf

    if find_proxy() is None:
        pytest.skip("needs configurable-http-proxy (npm install configurable-http-proxy)")
    if embedded_gguf() is None:
        pytest.skip("needs the embedded model (make lab installs it)")
    work = tmp_path_factory.mktemp("rooms")
    with (
        ModelServer(work) as model,
        Hub(
            work,
            model_url=model.url,
            model=model.alias,
            authenticator="dummy",
            spawn=False,
            slots=2,
            model_key_file=model.key_file(),
        ) as h,  # fmt: skip
    ):
        yield h, work


def test_three_hub_users_deliberate_in_one_room_through_a_ranked_closing(hub):
    h, work = hub
    tag = secrets.token_hex(2)
    names = [f"room{tag}{n}" for n in ("ana", "bo", "cy", "dee")]
    clients = {}
    for name in names:
        h.add_user(name)
        clients[name] = RoomClient(ClassSettings("hub", h.gateway, "", h.token(name)), timeout=300)
    ana, bo, cy, dee = (clients[n] for n in names)
    t0 = time.monotonic()
    # six turns: enough words for a closing even when the tiny model drafts nothing usable
    code = ana.open("Should homework allow AI tools?", turns=6)["code"]
    bo.join(code)
    cy.join(code)
    dee.code = code
    with pytest.raises(RoomRefused) as err:
        dee.hand()
    assert err.value.status == 403
    said: list[tuple[str, str]] = []  # every turn a learner sent, in order
    end = time.monotonic() + 600
    s = ana.state(0, wait=False)
    while not s["ended"]:
        assert time.monotonic() < end, f"the room stalled in {s['phase']}: {s['error']}"
        for who in s["waiting_for"]:
            c = clients[who]
            if s["phase"] == "discussion":
                said.append(
                    (who, f"{who[-3:]} thinks the class should write the rules ({len(said)}).")
                )
                c.say(said[-1][1])
            elif s["phase"] == "ranking":
                ids = sorted(s["candidates"])
                c.rank(ids[::-1] if who.endswith("cy") else ids)
            elif s["phase"] == "critique":
                c.critique("It forgets the parents." if who.endswith("ana") else "")
        s = ana.state(s["next"])
    seconds = time.monotonic() - t0
    whole = cy.state(0, wait=False)
    turns = whole["turns"]
    # the model spoke in every role, and each learner's words are recorded once, as theirs
    # (the embedded model's answers may all be invalid: each is recorded, in its role)
    kinds = {t["payload"].get("kind", "").split(".")[-1] for t in turns}
    assert {"agenda", "decision", "contribution", "analysis", "candidates", "ballot"} <= kinds
    assert {"outcome", "remark", "revision", "end"} <= kinds
    ballots = {t["speaker"]: t["payload"]["ranking"] for t in turns if t["role"] == "ballot"}
    assert all(ballots.values()) and len(ballots) == 3  # each a learner's own, none a timeout
    humans = [t for t in turns if t["role"] == "human" and t["text"]]
    assert sorted((t["speaker"], t["text"]) for t in humans) == sorted(said)
    assert all(t["backend"] == "openai" for t in turns if t["role"] == "deliberator")
    out = whole["outcome"]
    assert set(out["ballots"]) == set(names[:3]) and whole["revision"] is not None
    assert whole["ended"] == "turns" and whole["seated"] == names[:3]
    # the room's model use is the gateway's, charged to its three seated learners
    from argnb.classroom.usage import UsageStore

    rows = UsageStore(f"sqlite:///{work / 'usage.sqlite'}").summary()
    room = {r["user"]: r for r in rows if r["lesson"] == f"roundtable room {code}"}
    assert set(room) == set(names[:3]) and all(r["prompt_tokens"] > 0 for r in room.values())
    assert not any(r["user"].startswith("room:") for r in rows)
    assert (work / "argnb-rooms" / f"{code}.json").is_file()
    print(f"room {code}: {len(turns)} turns in {seconds:.0f} s")
