"""A multi-turn debate between two configured debaters, recorded as one transcript.

:func:`asimulate` lets a pro and a con :class:`~argnb.debate.generate.Debater` (any method, any
backend each) alternate from a given history -- or from the opening, pro first -- for ``turns``
turns or until both sides have concluded. Two rules end a debate, both in code:

* **the turn limit**: the last turn of each side is a closing statement;
* **both concluded**: a side has concluded when its turn repeats its previous one (at least
  :data:`REPEAT` of its words were already in that side's previous turn) or is a closing
  statement; once both have, the debate ends early.

Every generated turn is checked for the paper's stance predicate by a judge
(:mod:`argnb.debate.stance`) and flagged when it fails; the check is a turn of its own. The
transcript holds every agent step (logic, retrieval, drafts, verdicts, revisions) with its cost,
the utterances (role ``utterance``, payload ``debate.utterance``) and the checks, so it can be
replayed, evaluated (:mod:`argnb.debate.evaluate`), drawn (:func:`argnb.debate.mapping.debate_map`)
or added to a memory (:func:`argnb.debate.corpora.from_transcript`).

    >>> from argnb.llm import ScriptedBackend
    >>> pro = Debater(ScriptedBackend(["Cars pollute the centre.", "So close it to cars."]),
    ...               method="llm", name="Pro")
    >>> con = Debater(ScriptedBackend(["Shops need customers who drive."]), method="llm",
    ...               name="Con")
    >>> tr = simulate("Close the city centre to cars", pro, con, turns=3, check=False)
    >>> [(t.speaker, t.payload.concluding) for t in tr.turns if t.role == "utterance"]
    [('Pro', False), ('Con', True), ('Pro', True)]
    >>> tr.outcome["ended"]
    'turn limit'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from argnb.batch import run_sync
from argnb.debate.generate import Debater, NextUtterance
from argnb.debate.record import as_history, next_side, other, utterance_turn, utterances
from argnb.debate.stance import acheck_stance
from argnb.errors import ArgnbError
from argnb.events import Event
from argnb.llm.base import Backend
from argnb.transcript import Transcript, Turn

#: share of a turn's words already in the same side's previous turn that counts as repeating
REPEAT = 0.8


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9']+", text.lower()))


def repeats(text: str, before: str) -> bool:
    """True when at least :data:`REPEAT` of ``text``'s words were already in ``before``.

    >>> repeats("Cars pollute the centre.", "The centre: cars pollute it."), repeats("New", "")
    (True, False)
    """
    now = _words(text)
    return bool(now) and len(now & _words(before)) / len(now) >= REPEAT


async def asimulate(
    topic: str,
    pro: Debater,
    con: Debater,
    *,
    turns: int = 6,
    history: Sequence[Any] = (),
    judge: Backend | None = None,
    check: bool = True,
    stop_when_concluded: bool = True,
    on_event: Callable[[Event], None] | None = None,
) -> Transcript:
    """Run the debate; see the module docstring. ``judge`` runs the stance checks (default:
    the judge of the side that spoke, or its backend); ``check=False`` skips them.
    ``on_event`` hears each turn as it is recorded (``turn``, with its index) and each side's
    text as it is written (``start``, ``chunk``, ``restart``)."""
    if turns < 1:
        raise ArgnbError("a debate needs at least one turn", hint="turns >= 1")
    debaters = {"pro": pro, "con": con}
    tr = Transcript(
        kind="debate",
        title=topic,
        meta={"topic": topic, "pro": pro.describe(), "con": con.describe(), "turns": turns},
    )

    def add(ts: Sequence[Turn]) -> None:
        for t in ts:
            tr.add(t)
            if on_event is not None:
                on_event(Event("turn", t.speaker, t.text, t, len(tr.turns) - 1))

    def streamed(e: Event) -> None:  # a step's turns are heard when they are recorded here
        if on_event is not None and e.kind != "turn":
            on_event(e)

    for said in as_history(history):
        add([utterance_turn(said.stance, said.text, topic, said.speaker)])
    concluded = {"pro": False, "con": False}
    last_text = {"pro": "", "con": ""}
    failures: list[int] = []
    ended = "turn limit"
    for n in range(turns):
        said = utterances(tr)
        hist = as_history(said)
        # the floor passes after every turn, a stopped (empty) one too: it is recorded as skipped,
        # never shown to the other side, and the side that spoke last is not asked again
        side = next_side(hist) if not said else other(said[-1].payload.stance)
        closing = n >= turns - 2
        d = debaters[side]
        result: NextUtterance = await d.anext(
            topic, hist, stance=side, closing=closing, on_event=streamed
        )
        final = result.utterance
        done = closing or (bool(result.text) and repeats(result.text, last_text[side]))
        if done and not closing:
            payload = final.payload.model_copy(update={"concluding": True})
            final = final.model_copy(update={"payload": payload})
        for t in result.turns[:-1]:
            add([t.model_copy(update={"round": n})])
        add([final.model_copy(update={"round": n})])
        last_text[side] = result.text or last_text[side]
        concluded[side] = concluded[side] or done
        if check and result.text:
            backend = judge or d.judge or d.backend
            verdict, ct = await acheck_stance(backend, topic, side, result.text)
            add([t.model_copy(update={"round": n}) for t in ct])
            if verdict is not None and not verdict.ok:
                failures.append(n)
        if stop_when_concluded and all(concluded.values()) and n < turns - 1:
            ended = "both concluded"
            break
    tr.outcome = {
        "turns": len(utterances(tr)),
        "generated": sum(1 for t in utterances(tr) if t.payload.method),
        "ended": ended,
        "stance_failures": failures,
    }
    return tr


def simulate(topic: str, pro: Debater, con: Debater, **kw: Any) -> Transcript:
    """Sync twin of :func:`asimulate` (works inside Jupyter too)."""
    return run_sync(asimulate(topic, pro, con, **kw))
