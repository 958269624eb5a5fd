"""The moderator's message streams to the front end while the model is still choosing the next
speaker: ``chunk`` events (``label="message"``) after the rules' announcement, then the recorded
step, which is what stays -- in the session's events and in the widget's dialogue panel."""

from __future__ import annotations

import time
from typing import Any

import pytest

from argnb.llm.scripted import Request, ScriptedBackend
from argnb.roundtable import record
from argnb.roundtable.payloads import Decision
from argnb.roundtable.testing import table_backend

from .test_views import PAYLOADS, assert_inert

MESSAGE = 'Thank you. Let us hear a "second" view now \u2014 short and concrete, please.'


def moderator(message: str = MESSAGE, choose: Any = None, **kw: Any) -> ScriptedBackend:
    """A table backend whose moderator says ``message`` (and chooses with ``choose``); from the
    second step on, the step's number stands for "second" (the gate stops a sentence it said at
    an earlier step)."""
    base = table_backend(**({"choose": choose} if choose else {}))
    steps = [0]

    def answer(req: Request) -> Any:
        out = base._fn(req)  # type: ignore[misc]
        if (req.schema or {}).get("title") == "ModeratorStep":
            steps[0] += 1
            return {**out, "message": said(message, steps[0])}
        return out

    return ScriptedBackend(answer, **kw)


def said(message: str, step: int) -> str:
    """The message of the ``step``-th moderator step."""
    return message if step == 1 else message.replace("second", f"step {step}")


def message_chunks(events: list, upto: int | None = None) -> list[list[str]]:
    """The moderator's message chunks, grouped by step (a step ends with its recorded turn)."""
    steps: list[list[str]] = [[]]
    for e in events[:upto]:
        if e.kind == "chunk" and e.speaker == "Moderator" and e.label == "message":
            steps[-1].append(e.text)
        elif e.kind == "turn" and isinstance(e.turn.payload, Decision):
            steps.append([])
    return steps[:-1]


def test_every_step_streams_its_message_and_the_chunks_are_the_recorded_message(make_session):
    events: list = []
    s = make_session(moderator=moderator(), on_event=events.append).run(["Phones help me."])
    decisions = record.decisions(s.transcript)
    streamed = message_chunks(events)
    assert len(decisions) == len(streamed) == 6
    for k, (chunks, turn) in enumerate(zip(streamed, decisions, strict=True), start=1):
        message = said(MESSAGE, k)
        assert len(chunks) > 3 and "".join(chunks) == turn.payload.message == turn.text == message
    # each step: the announcement first (at once, from the rules), then the message, then the turn
    kinds = [
        "start"
        if e.kind == "start" and e.label == "moderator"
        else "announce"
        if e.kind == "chunk" and e.speaker == "Moderator" and not e.label
        else "message"
        if e.kind == "chunk" and e.label == "message"
        else "step"
        if e.kind == "turn" and isinstance(e.turn.payload, Decision)
        else ""
        for e in events
    ]
    order = [k for k in kinds if k]
    one = ["start", "announce", *["message"] * len(streamed[0]), "step"]
    assert order[: len(one)] == one


def test_the_message_arrives_before_the_model_has_chosen(make_session):
    """The scripted model writes a word every 50 ms; the message is on screen while the words
    of ``next_speaker`` are still to come."""
    seen: list[tuple[float, Any]] = []
    s = make_session(
        moderator=moderator(chunk_delay_s=0.05),
        turns=1,
        analyze_every=0,
        on_event=lambda e: seen.append((time.monotonic(), e)),
    )
    s.run([])
    last_piece = max(t for t, e in seen if e.kind == "chunk" and e.label == "message")
    step = next(t for t, e in seen if e.kind == "turn" and isinstance(e.turn.payload, Decision))
    assert step - last_piece >= 0.09  # at least two more words ("next_speaker": "Deliberator 1"})


def test_an_overridden_step_keeps_the_recorded_turn(make_session):
    events: list = []
    s = make_session(
        moderator=moderator(choose=lambda req: "Deliberator 1"), turns=3, on_event=events.append
    ).run([])
    overrides = record.overrides(s.transcript)
    assert overrides  # Deliberator 1 twice in a row: the rules chose another speaker
    d = record.decisions(s.transcript)[1].payload
    assert d.choice == "Deliberator 1" and d.speaker != "Deliberator 1"
    assert "".join(message_chunks(events)[1]) == d.message == said(MESSAGE, 2)


def test_an_unusable_step_streams_nothing_and_records_the_decision(make_session):
    events: list = []
    bad = ScriptedBackend(
        lambda req: (
            "no json"
            if (req.schema or {}).get("title") == "ModeratorStep"
            else table_backend()._fn(req)
        )  # type: ignore[misc]
    )
    s = make_session(moderator=bad, turns=1, analyze_every=0, on_event=events.append).run([])
    d = record.decisions(s.transcript)[0]
    assert d.payload.message == "" and d.payload.choice is None
    assert message_chunks(events) == [[]]


def test_a_headless_session_records_the_same_turns(make_session):
    quiet = make_session(moderator=moderator()).run(["Phones help me."])
    heard = make_session(moderator=moderator(), on_event=lambda e: None).run(["Phones help me."])

    def keep(t):  # what is measured in seconds differs from run to run
        out = t.model_dump(exclude={"latency_s"})
        out["payload"].pop("first_chunk_s", None)
        return out

    assert [keep(t) for t in quiet.transcript.turns] == [keep(t) for t in heard.transcript.turns]


# -- the widget ------------------------------------------------------------------------------------
@pytest.fixture
def painted_widget(monkeypatch):
    """``make(session)``: a widget whose every repaint of a prepended message is kept."""
    pytest.importorskip("ipywidgets")
    import argnb.roundtable.widget as widget_mod

    monkeypatch.setattr(widget_mod, "REPAINT_S", 0.0)

    def make(session):
        w = widget_mod.RoundtableWidget(session=session, autosave=None)
        painted: list[str] = []
        original = w._prepend

        def prepend(value):
            box = original(value)
            painted.append(value)
            box.observe(lambda ch: painted.append(ch["new"]), names="value")
            return box

        w._prepend = prepend  # type: ignore[method-assign]
        return w, painted

    return make


def test_the_widget_shows_the_moderators_message_growing_then_the_recorded_step(
    make_session, painted_widget
):
    s = make_session(moderator=moderator(), turns=1, analyze_every=0)
    w, painted = painted_widget(s)
    w.start()
    w.wait(10)
    assert w.error is None
    live = [p for p in painted if "argnb-rt-cursor" in p and "· moderator ·" in p]
    growing = [p for p in live if "Thank you." in p]
    assert len(growing) >= 3, live
    # under the announcement, a paragraph of its own
    assert "Next: Deliberator 1, Deliberator 2 or Ann. Choosing…\n\nThank you." in growing[0]
    assert "&quot;second&quot;" not in growing[0] and "concrete, please." not in growing[0]
    assert "Let us hear a &quot;second&quot; view" in growing[-1]  # escaped as it grows
    shown = [c.value for c in w.dialogue.children]
    assert not any("argnb-rt-cursor" in v and "moderator" in v for v in shown)
    step = [v for v in shown if "Thank you." in v]
    assert len(step) == 1 and "next: Deliberator 1" in step[0]  # the recorded turn replaced it


def test_the_streaming_message_is_escaped(make_session, painted_widget):
    evil = " ".join(PAYLOADS[:2])
    s = make_session(moderator=moderator(evil), turns=1, analyze_every=0)
    w, painted = painted_widget(s)
    w.start()
    w.wait(10)
    live = [p for p in painted if "argnb-rt-cursor" in p and "· moderator ·" in p]
    assert any("&lt;img src=x" in p for p in live), live
    for p in painted:
        assert_inert(p)


def test_a_sentence_the_moderator_said_at_an_earlier_step_is_not_said_again(make_session):
    """Seen over the class path (issue 35): one line opened six steps of a session. The gate
    stops a step that says again a sentence of five words or more from an earlier step; its
    stream stops where the sentence is complete, and the rules choose the speaker."""
    events: list = []
    same = "Let us weigh what each of you has said so far. Go on."
    s = make_session(moderator=moderator(same, chunk_delay_s=0), turns=3, on_event=events.append)
    s.run([])
    messages = [d.payload.message for d in record.decisions(s.transcript)]
    assert messages[0] == same and all(m == "" for m in messages[1:])
    gated = [t for t in s.transcript.turns if t.role == "gated moderator"]
    assert len(gated) == 2 * (len(messages) - 1)  # each later step: the answer and its retry
    assert all("repeated itself" in t.payload.gate for t in gated)
    for chunks in message_chunks(events)[1:]:
        assert "so far." not in "".join(chunks)  # the repeated sentence never completes on screen
