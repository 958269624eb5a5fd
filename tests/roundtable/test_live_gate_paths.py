"""The gate on a live room, in-process and over llama.cpp's server (issue 35).

Two scripted learners and the embedded SmolLM2-135M in every seat: once in this process, once
served by llama.cpp's server (:class:`argnb.classroom.local.ModelServer`, the class model of a
local class, through the official ``openai`` client) -- the path on which prompt and schema text
reached the screen. Then nothing the record shows as said or found -- a turn, a field of an
analysis, a label of its map, a candidate statement, the group statement -- holds prompt or
schema text, a word 4-gram said three times, or the gate's own words; a stopped analysis is shown
as none; the candidates come from usable answers or from what the learners said.

What each path stopped is printed (``-s``): the measured rows of docs/gate.md. Slow (live turns,
about a minute per path on two cores), so ``make test-all`` only.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from argnb.gate import REASONS
from argnb.roundtable import record
from argnb.roundtable.room import Room
from argnb.transcript import Rejected
from tests.browser.test_live_gate import looped, problems

pytestmark = [pytest.mark.model, pytest.mark.full]

TOPIC = "Should students be allowed to use AI tools like ChatGPT for homework?"
LEARNERS = {
    "Ana": "I use AI to get maths explained, but some friends just copy the answers.",
    "Bo": "Teachers could ask us to explain our steps in class, then copying does not help.",
}
NEVER = (*REASONS.values(), "cannot be used", "{{", "<text>")


def run_room(backend: Any) -> Room:
    r = Room(TOPIC, moderator=backend, deliberators=[backend, backend], analyzer=backend,
             humans=tuple(LEARNERS), turns=4, analyze_every=4, word_limit=40)  # fmt: skip

    async def go() -> None:
        while r.ended is None:
            await r.aadvance()
            for h in r.waiting_for():
                if r.phase == "discussion":
                    await r.asay(LEARNERS[h], name=h)
                elif r.phase == "ranking":
                    r.rank(h, sorted(record.candidates(r.transcript).statements))
                else:
                    r.critique(h, "It should name who checks the rules." if h == "Ana" else "")

    asyncio.run(go())
    return r


def shown(r: Room) -> list[tuple[str, str]]:
    """(where, text) of everything the record shows as said or found."""
    tr = r.transcript
    out = [(f"turn of {t.speaker}", text) for t, text in record.said(tr)]
    for a in r.analyses:
        out += [("analysis", x) for x in (*a.summary, *a.agreements, *a.open_questions)]
        for arg in a.arguments:
            out += [("analysis", x) for x in (arg.claim, *arg.premises)]
            out += [
                ("analysis", x) for c in arg.counterarguments for x in (c.objection, c.rebuttal)
            ]
        m = r.to_map(a)
        out += [("map label", d.get("text", "")) for _, d in m.graph.nodes(data=True)]
    if (c := record.candidates(tr)) is not None:
        out += [(f"candidate ({c.source})", s) for s in c.statements.values()]
    if (rev := record.revision(tr)) is not None:
        out.append(("group statement", rev.statement))
    return [(where, text) for where, text in out if text]


def report(name: str, r: Room) -> str:
    tr = r.transcript
    stops = Counter(
        (t.role.removeprefix("gated "), t.payload.gate)
        for t in tr.turns
        if isinstance(t.payload, Rejected) and t.payload.gate
    )
    calls = sum(t.calls for t in tr.turns)
    c = record.candidates(tr)
    lines = [f"{name}: {calls} model calls, {sum(stops.values())} answers stopped by the gate"]
    lines += [f"  {role}: {why} ×{n}" for (role, why), n in sorted(stops.items())]
    lines.append(f"  analysis usable: {r.analysis is not None}; candidates from: {c and c.source}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Any:
    import argnb
    from argnb.classroom.local import ModelServer

    workdir: Path = tmp_path_factory.mktemp("model-server")
    with ModelServer(workdir) as srv:
        yield argnb.connect("openai", srv.alias, base_url=srv.url, api_key=srv.key, cache=False,
                            make_default=False)  # fmt: skip


@pytest.mark.parametrize("path", ["in-process", "llama.cpp server"])
def test_nothing_a_live_room_shows_holds_prompt_schema_loop_or_gate_text(path, request) -> None:
    import argnb

    if path == "in-process":
        backend = argnb.connect("local", cache=False, make_default=False)
    else:
        backend = request.getfixturevalue("served")
    r = run_room(backend)
    print("\n" + report(path, r))
    bad = []
    for where, text in shown(r):
        found = problems(text, "roundtable") + [x for x in NEVER if x in text]
        if loop := looped(text):
            found.append(f"loop {loop}")
        if found:
            bad.append(f"{where}: {text[:120]!r}: {found}")
    assert not bad, "\n".join(bad)
    tr = r.transcript
    tried = tr.of_kind("roundtable.analysis", valid=None)
    assert tried, "the room was analysed"
    c = record.candidates(tr)
    if c is not None and c.source == "learners":  # the model's and the analysis's were unusable
        said = {" ".join(text.split()) for _, text in record.spoken(tr)}
        assert all(any(x.startswith(s) for x in said) for s in c.statements.values())
