"""Notebook 05's room widget (argnb.roundtable.room_widget) on the in-process rooms service of
test_rooms.py: two widgets, two learners' tokens, one room. Driven through the widget's own
methods and the values of its widgets (the browser test on a real hub drives the page): each
sees the other's turns, the analyzer's panel and map, the ranking step; the ballot recorded is
the ranking set in the widget; hostile text stays inert in every panel; Send is off unless you
hold the floor; a rejoin shows the whole transcript; an instructor watches without a seat and
exports the room; off a hub the widget is one line."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from argnb.llm.classserver import ClassSettings
from argnb.roundtable import record
from argnb.roundtable.room_widget import OFF_HUB, RoomWidget
from argnb.roundtable.session import load_session
from argnb.roundtable.widget import FULL_MAP_HEIGHT
from argnb.views import esc

from .test_rooms import service

pytest.importorskip("ipywidgets")

EVIL = "<img src=x onerror=\"alert('bo')\"><script>alert(2)</script>"
TOPIC = "<b>Homework</b> with AI tools?"


def widget(url: str, token: str, **kw: Any) -> RoomWidget:
    return RoomWidget(settings=ClassSettings("test class", url, "m", token), **kw)


def until(cond: Callable[[], Any], what: str, seconds: float = 30) -> None:
    end = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < end, f"timed out: {what}"
        time.sleep(0.02)


def htmls(w: Any) -> Iterator[str]:
    """Every HTML string in a widget tree (the values of its HTML widgets; a text box's value
    is text, never markup)."""
    import ipywidgets

    if isinstance(w, ipywidgets.HTML):
        yield w.value
    for child in getattr(w, "children", ()):
        yield from htmls(child)


def said(w: RoomWidget, text: str) -> bool:
    tr = w.transcript
    return tr is not None and any(t.role == "human" and t.text == text for t in tr.turns)


def classes(w: Any) -> set[str]:
    out = set(getattr(w, "_dom_classes", ()))
    for child in getattr(w, "children", ()):
        out |= classes(child)
    return out


def test_two_learners_share_a_room_through_their_widgets_to_a_ranked_closing(tmp_path: Path):
    with service(tmp_path) as (url, _):
        ana = widget(url, "t-ana", turns=6)
        ana.open(TOPIC)
        until(lambda: ana.state.get("code"), "ana's room opened")
        code = ana.state["code"]
        assert code in ana.code.value and ana.state["seated"] == ["ana"]
        stable = {f"argnb-room{x}" for x in ("", "-code", "-status", "-error", "-dialogue")}
        stable |= {f"argnb-room-{x}" for x in ("input", "send", "pass", "hand", "lower", "ready")}
        stable |= {f"argnb-room-{x}" for x in ("leave", "analysis", "map", "flags", "closing")}
        stable |= {f"argnb-room-{x}" for x in ("feedback", "topic", "open", "code-input", "join")}
        assert stable <= classes(ana.widget)  # the browser test's handles (the class docstring)
        bo = widget(url, "t-bo", code=code.lower())  # joins at once, the code as typed
        until(lambda: bo.state.get("seated") == ["ana", "bo"], "bo seated")
        said_by = {"ana": "ana wants rules written with the class.", "bo": EVIL}
        spoke: set[str] = set()
        hand_shown = False
        end = time.monotonic() + 60
        while ana.state.get("phase") == "discussion":
            assert time.monotonic() < end, "the discussion did not end"
            for me, other in ((ana, bo), (bo, ana)):
                if not me.my_turn or me.mover.busy:
                    continue
                # only the learner holding the floor can type and send
                assert not me.input.disabled and not me.buttons["send"].disabled
                until(
                    lambda o=other, m=me: (
                        o.state.get("next") == m.state.get("next") and not o.mover.busy
                    ),
                    "the same state, no move on its way",
                )
                assert other.input.disabled and other.buttons["send"].disabled
                assert not other.buttons["hand"].disabled or other.you in other.state["hands"]
                before = len(other.transcript.turns)
                other.send("not my turn")  # does nothing: no move is sent
                assert not other.mover.busy and len(other.transcript.turns) == before
                if not hand_shown:  # a hand raised and lowered through the buttons
                    hand_shown = True
                    other.buttons["hand"].click()
                    until(lambda o=other: o.you in o.state["hands"], "the hand shows")
                    until(lambda o=other: not o.buttons["lower"].disabled, "lower is on")
                    other.buttons["lower"].click()
                    until(lambda o=other: o.you not in o.state["hands"], "the hand is down")
                    if not me.my_turn:
                        break
                text = said_by[me.you]
                me.input.value = text
                me.buttons["send"].click()
                until(lambda m=me, t=text: said(m, t), f"{me.you}'s turn recorded")
                spoke.add(me.you)
            time.sleep(0.02)
        assert spoke == {"ana", "bo"} and hand_shown
        # a rejoin (the cell run again, the same learner) reads the whole transcript so far
        again = widget(url, "t-ana", code=code)
        until(lambda: again.state.get("next", -1) >= bo.state["next"], "rejoined")
        n = bo.state["next"]
        assert again.transcript.turns[:n] == bo.transcript.turns[:n] and again.seated
        assert len(again.dialogue.children) >= len(bo.dialogue.children) > 5
        again.close()
        # each sees the other's turn, as theirs, escaped
        until(lambda: said(ana, EVIL) and said(bo, said_by["ana"]), "both see both turns")
        ana_dialogue = "".join(htmls(ana.dialogue))
        assert esc(EVIL) in ana_dialogue and "bo · human" in ana_dialogue
        # the analyzer's panel and its map, the same for both
        until(lambda: "Points of agreement" in bo.analysis.value, "bo's analysis panel")
        until(lambda: "<iframe" in ana.map_view.value and "<iframe" in bo.map_view.value, "maps")
        # ... and opened across the whole widget, where its labels can be read (issue 35)
        assert not bo.full.button.disabled and bo.full.view.layout.display == "none"
        bo.full.button.value = True
        assert (
            bo.full.view.layout.display == ""
            and f"height:{FULL_MAP_HEIGHT}px" in bo.full.view.value
        )
        # the ranking step: the candidates, one rank box each; a partial ranking is refused here
        until(lambda: ana.rank_boxes and bo.rank_boxes, "the ranking step")
        cands = list(ana.state["candidates"])
        assert len(cands) >= 2 and set(ana.rank_boxes) == set(cands)
        assert "argnb-room-rank" in classes(ana.closing)
        ana.rank_boxes[cands[0]].value = 1
        ana.submit_rank()
        assert "its own rank" in ana.problem.value and not ana.mover.busy
        mine = list(reversed(cands))  # ana prefers the last drafted
        for i, k in enumerate(mine, start=1):
            ana.rank_boxes[k].value = i
        assert ana.ranking() == mine
        ana.submit_rank()
        for i, k in enumerate(cands, start=1):
            bo.rank_boxes[k].value = i
        submit = [b for b in bo.closing.children if "argnb-room-submit-rank" in b._dom_classes]
        submit[0].click()
        until(lambda: record.outcome(ana.transcript) is not None, "the count")
        ballots = record.ballots(ana.transcript)
        assert ballots == {"ana": mine, "bo": cands}  # the ballots are the widgets' rankings
        until(lambda: "argnb-room-outcome" in classes(bo.closing), "bo sees the count")
        outcome = "".join(htmls(bo.closing))
        assert "Schulze" in outcome and "ana: " + esc(" > ".join(mine)) in outcome
        # the count stands once on the page: the dialogue says what the ranking chose and points
        # to it (issue 35: the whole count was shown twice)
        until(lambda: any("The count is below" in h for h in htmls(bo.dialogue)), "the line")
        assert sum(h.count("Schulze") for h in htmls(bo.widget)) == outcome.count("Schulze")
        # the critique step: once each, then the revised statement, then the end
        until(lambda: ana.critique_box is not None and bo.critique_box is not None, "critique")
        ana.submit_critique("It forgets the teachers.")
        bo.submit_critique(EVIL)
        until(lambda: ana.state.get("ended") and bo.state.get("ended"), "the end")
        until(lambda: "argnb-room-statement" in classes(ana.closing), "the group's statement")
        assert ana.feedback_box.selected_index == 0 and ana.feedback.session == code
        assert all(b.disabled for b in ana.buttons.values()) and ana.input.disabled
        # what a saved copy keeps, and the notice for a kernel that is gone
        assert f"Room {code}" in ana.note.result_html and "group statement" in ana.note.result_html
        assert "room&#x27;s code to rejoin" in ana.gone.value and "<img" not in ana.note.result_html
        # hostile text from a seat, and the opener's topic, inert in every panel of both widgets
        for w in (ana, bo):
            page = "".join(htmls(w.widget))
            assert "<img" not in page and "<script>alert" not in page and "<b>Homework" not in page
            assert "&lt;img" in page and esc(TOPIC) in page
        assert "".join(htmls(ana.dialogue)).count(esc(EVIL)) == 2  # bo's turn, then critique
        # the cell run again after the end: the whole room, read back
        late = widget(url, "t-bo", code=code)
        until(lambda: late.state.get("ended"), "read after the end")
        assert late.transcript.turns == ana.transcript.turns and not late.problem.value
        # an instructor watches without a seat, and exports the room as a transcript
        dee = widget(url, "t-dee", code=code, watch=True)
        until(lambda: dee.state.get("ended"), "dee watching")
        assert "dee" not in dee.state["seated"] and dee.input_area.layout.display == "none"
        assert "watching, no seat" in dee.status.value
        out = dee.export(tmp_path / "export" / "room.json")
        back = load_session(out)
        saved = load_session(tmp_path / "argnb-rooms" / f"{code}.json")
        assert back.turns == saved.turns and back.meta == saved.meta and back.title == TOPIC
        assert {t.speaker for t in back.turns if t.role == "human"} == {"ana", "bo"}
        for w in (ana, bo, late, dee):
            w.close()


def test_errors_from_the_server_are_one_line_and_off_a_hub_the_widget_says_where_rooms_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from argnb.classroom.local import free_port

    with service(tmp_path) as (url, _):
        w = widget(url, "t-ana")
        w.join("ZZZZZZ")
        w.mover.wait(10)
        assert "there is no room" in w.problem.value and "Traceback" not in w.problem.value
        w.join("")
        assert "code first" in w.problem.value
        w.close()
    dead = widget(f"http://127.0.0.1:{free_port()}/services/argnb-gateway/v1", "t-ana")
    dead.open("Homework with AI?")
    dead.mover.wait(20)
    assert "cannot reach the class server" in dead.problem.value
    assert "\n" not in dead.problem.value
    monkeypatch.delenv("ARGNB_CLASS_URL", raising=False)
    off = RoomWidget("Homework with AI?")
    assert esc(OFF_HUB) in off.problem.value and repr(off) == OFF_HUB
    off.open()
    off.join("ABCDEF")
    off.send("hello")
    off.submit_rank()
    assert off.client is None and not off.mover.busy and not off.worker.busy
