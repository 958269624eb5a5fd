"""The gate at the table: a seat whose answer the gate stops twice is recorded with the reason,
the session goes on, and every view shows it muted and marked, its raw text behind a click --
never as something a participant said."""

from __future__ import annotations

import html
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from argnb.gate import inspect
from argnb.llm.scripted import ScriptedBackend
from argnb.roundtable import record
from argnb.roundtable.payloads import Contribution
from argnb.roundtable.testing import table_backend
from argnb.roundtable.views import session_html, turn_html
from argnb.views import GATED, render_html

ECHO = (
    "Your task You are Deliberator 2. Also at the table: Deliberator 1, Ann (human). "
    "Your task You are Deliberator 2. Also at the table: Deliberator 1, Ann (human)."
)
_BLOCK = re.compile(rf"<div class='{GATED}'.*?</div>(?:</details></div>)?", re.DOTALL)


def unmarked(page: str) -> str:
    """The page without its gated blocks: what a learner sees as said."""
    return re.sub(
        rf"<div class='{GATED}'[^>]*>.*?</details></div>|<div class='{GATED}'[^>]*>.*?</span></div>",
        "",
        page,
        flags=re.DOTALL,
    )


def saying(text: str) -> ScriptedBackend:
    """A deliberator that answers ``text`` every time."""
    return table_backend() if not text else ScriptedBackend(lambda req: text)


def test_a_deliberator_stopped_twice_is_recorded_with_the_reason_and_the_session_goes_on(
    make_session,
):
    s = make_session(deliberators=[table_backend(), saying(ECHO)], turns=3)
    s.run(["I would allow phones for looking things up."])
    assert s.ended is not None and s.ended.turns == 3
    d2 = [t for t in s.transcript.turns if isinstance(t.payload, Contribution) and not t.valid]
    assert len(d2) == 1 and d2[0].speaker == "Deliberator 2"
    stop = record.gated(s.transcript, d2[0])
    assert stop is not None and stop.gate == "the model echoed its instructions"
    assert stop.raw.startswith("Your task")
    gated = [t for t in s.transcript.turns if t.role.startswith("gated")]
    assert len(gated) == 2  # the answer and its one retry
    # the rest of the table never reads it: the discussion holds no echo
    assert "Your task You are" not in s.context()
    shown = turn_html(s.transcript, d2[0])
    assert GATED in shown and "<details>" in shown
    assert "the model echoed its instructions" in shown
    assert session_html(s.transcript).count(GATED) == 1  # once, not once per attempt


def test_a_moderator_that_echoes_is_marked_and_the_rules_choose(make_session):
    def mod(req):
        title = (req.schema or {}).get("title", "")
        if title == "ModeratorStep":
            names = req.schema["properties"]["next_speaker"]["enum"]
            return {"intent": "invite", "message": "Your task", "next_speaker": names[0]}
        return table_backend()._fn(req)  # type: ignore[misc]

    s = make_session(moderator=ScriptedBackend(mod), turns=2)
    s.run(["Phones help."])
    decisions = record.decisions(s.transcript)
    assert decisions and all(d.payload.choice is None for d in decisions)
    assert all(d.payload.message == "" for d in decisions)
    page = session_html(s.transcript)
    assert page.count(GATED) >= len(decisions)
    assert "Your task" not in unmarked(page)


def test_an_agenda_that_writes_the_schema_is_marked(make_session):
    def mod(req):
        if (req.schema or {}).get("title", "") == "AgendaAnswer":
            return {
                "scope": "Your task",
                "criteria": ["Your task; type':'json'}}"],
                "welcome": "Your task",
            }
        return table_backend()._fn(req)  # type: ignore[misc]

    s = make_session(moderator=ScriptedBackend(mod), turns=1)
    s.run([])
    agenda = record.agenda(s.transcript)
    assert agenda is not None and agenda.scope == "" and agenda.criteria == []
    page = session_html(s.transcript)
    assert "type&#x27;:" not in unmarked(page) and "Your task" not in unmarked(page)
    assert GATED in page


_WORDS = st.sampled_from(
    [
        "cars",
        "air",
        "shops",
        "buses",
        "phones",
        "class",
        "rules",
        "homework",
        "tools",
        "fair",
        "learning",
        "city",
    ]
)


@st.composite
def stopped_texts(draw) -> str:
    """Texts the gate stops: echoed headings and schema words, loops, runs of the task."""
    base = " ".join(draw(st.lists(_WORDS, min_size=2, max_size=8)))
    kind = draw(st.sampled_from(["heading", "schema", "loop", "task"]))
    if kind == "heading":
        return f"Your task {base.capitalize()}."
    if kind == "schema":
        return f"{base}; type':'object; title':'AgendaAnswer'}}}}"
    if kind == "loop":
        return f"{base} and {base} and {base} and {base}."
    return f"{base}: put forward proposals with their reasons, take objections seriously."


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=stopped_texts())
def test_gated_text_never_reaches_a_view_unmarked(make_session, text):
    assert inspect(text) or "put forward proposals" in text  # the task run is an echo in context
    s = make_session(deliberators=[saying(text), saying(text)], turns=2, analyze_every=0)
    s.run([])
    raws = [t.payload.raw for t in s.transcript.turns if t.role.startswith("gated")]
    assert raws, "the gate stopped the deliberators' answers"
    for page in (session_html(s.transcript), render_html(s.transcript)):
        rest = html.unescape(unmarked(page))
        for raw in raws:
            assert raw not in rest
            # nor its first words, which a learner would read as said
            assert " ".join(raw.split()[:6]) not in rest


def test_what_streams_stops_where_the_gate_stops_the_answer(make_session):
    heard: list[str] = []
    s = make_session(
        deliberators=[saying(ECHO), table_backend()],
        turns=1,
        analyze_every=0,
        on_event=lambda e: (
            e.kind == "chunk" and e.speaker == "Deliberator 1" and heard.append(e.text)
        ),
    )
    s.run([])
    assert "Your" in "".join(heard) and "Deliberator 2" not in "".join(heard)
    assert "task" not in "".join(heard)  # the heading never finished on screen


def test_the_record_of_an_unusable_turn_costs_nothing_of_its_own(make_session):
    s = make_session(deliberators=[saying(ECHO), table_backend()], turns=1, analyze_every=0)
    s.run([])
    record_turn = next(t for t in s.transcript.turns if isinstance(t.payload, Contribution))
    assert not record_turn.valid and record_turn.calls == 0
    gated = [t for t in s.transcript.turns if t.role == "gated contribution"]
    assert sum(t.calls for t in gated) == 2  # the answer and its retry, each counted once


def test_a_moderators_streamed_message_stops_where_the_gate_stops_it(make_session):
    def mod(req):
        if (req.schema or {}).get("title", "") == "ModeratorStep":
            names = req.schema["properties"]["next_speaker"]["enum"]
            return {"intent": "invite", "message": "Your task You are the moderator.",
                    "next_speaker": names[0]}  # fmt: skip
        return table_backend()._fn(req)  # type: ignore[misc]

    heard: list[str] = []
    s = make_session(
        moderator=ScriptedBackend(mod),
        turns=1,
        analyze_every=0,
        on_event=lambda e: e.kind == "chunk" and e.label == "message" and heard.append(e.text),
    )
    s.run([])
    assert "moderator" not in "".join(heard) and "task" not in "".join(heard)
