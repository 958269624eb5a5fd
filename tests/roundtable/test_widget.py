"""The widget without a browser: its state machine, streaming repaints, escaping in every
panel, the feedback CSV and replay. (tests/roundtable/test_browser.py drives it in Chromium.)"""

from __future__ import annotations

import csv
import re
import threading
import time

import pytest

from argnb.errors import ArgnbError
from argnb.llm.scripted import ScriptedBackend
from argnb.roundtable import record
from argnb.roundtable.feedback import (
    COLUMNS,
    LIKERT,
    OPEN,
    feedback_row,
    read_feedback,
    save_feedback,
)
from argnb.roundtable.session import Session, load_session
from argnb.roundtable.testing import table_backend
from argnb.roundtable.widget import RoundtableWidget

from .test_views import EVIL, PAYLOADS, assert_inert, evil_backend

pytest.importorskip("ipywidgets")


def panels(w: RoundtableWidget) -> str:
    """Every HTML the widget shows, joined."""
    parts = [c.value for c in w.dialogue.children]
    parts += [w.analysis_text.value, w.map_view.value, w.status.value, w.turn_banner.value]
    return "\n".join(parts)


def test_input_is_active_only_on_the_humans_turn(tmp_path, make_session) -> None:
    s = make_session(turns=6, autosave=tmp_path / "s.json")
    w = RoundtableWidget(session=s, feedback=tmp_path / "f.csv")
    assert w.input.disabled and w.send_button.disabled
    w.start()
    w.wait(10)
    assert w.error is None and s.waiting_for_human
    assert not w.input.disabled and not w.send_button.disabled and not w.pass_button.disabled
    assert "Your turn, Ann" in w.turn_banner.value
    deadline = time.monotonic() + 10
    while w.prewarmed is None and time.monotonic() < deadline:  # reads ahead on its own thread
        time.sleep(0.01)
    moderator = s.moderator.agent.backend
    assert w.prewarmed and len(moderator.prefilled) == 1  # while Ann types
    w.send()  # empty box: refused, nothing recorded, still her turn
    assert "Write something first" in w.status.value and s.waiting_for_human
    w.input.value = "I would keep phones in bags."
    w.send()
    assert w.input.disabled  # at once, before the worker has finished
    w.wait(10)
    assert s.speakers[2:] == ["Ann", "Deliberator 1", "Deliberator 2"] and s.waiting_for_human
    after_send = next(r for r in moderator.requests if "I would keep phones" in r.prompt)
    assert after_send.messages[:2] == moderator.prefilled[0]  # the step read ahead, then her line
    w.send("/end")
    w.wait(10)
    assert s.ended is not None and s.ended.reason == "human"
    assert w.input.disabled and w.send_button.disabled
    assert w.feedback_box.selected_index == 0  # the form opens at the end
    assert len(load_session(tmp_path / "s.json").turns) == len(s.transcript.turns)
    shown = [c.value for c in w.dialogue.children]  # newest first
    assert "I would keep phones in bags." in next(x for x in shown if "Ann · human" in x)
    assert shown[-1].count("Welcome") == 1  # the agenda is the oldest message
    assert w.history.options and len(w.history.options) == len(s.analyses)


def test_the_form_builds_a_session_on_the_backend(tmp_path) -> None:
    w = RoundtableWidget(
        "Uniforms at school?",
        backend=table_backend(),
        human="Bo",
        turns=3,
        analyze_every=0,
        autosave=tmp_path / "s.json",
        feedback=tmp_path / "f.csv",
    )
    w.start()
    w.wait(10)
    assert w.session is not None and w.session.speakers == ["Deliberator 1", "Deliberator 2"]
    assert w.setup.layout.display == "none"
    w.topic.value = ""  # bad input on a new start is shown, not raised
    w2 = RoundtableWidget("", backend=table_backend(), autosave=None)
    w2.start()
    assert "topic" in w2.status.value and w2.session is None


def test_streaming_text_repaints_before_the_turn_is_recorded(
    tmp_path, make_session, monkeypatch
) -> None:
    import argnb.roundtable.widget as widget_mod

    monkeypatch.setattr(widget_mod, "REPAINT_S", 0.0)
    d = ScriptedBackend(lambda req: "One two three four five six seven.", delay_s=0.0)
    s = make_session(deliberators=[d, table_backend()], turns=1, analyze_every=0)
    w = RoundtableWidget(session=s, autosave=None)
    painted: list[str] = []
    original = w._prepend

    def prepend(value):
        box = original(value)
        box.observe(lambda ch: painted.append(ch["new"]), names="value")
        return box

    w._prepend = prepend  # type: ignore[method-assign]
    w.start()
    w.wait(10)
    # the deliberator's live bubble (the moderator's announcement has one of its own)
    live = [p for p in painted if "argnb-rt-cursor" in p and "· deliberator ·" in p]
    assert len(live) >= 5, painted
    assert "One two three" in live[2] and "seven." not in live[2]
    final = painted[-1]
    assert "argnb-rt-cursor" not in final and "One two three four five six seven." in final


def test_every_panel_of_the_widget_escapes(tmp_path, make_session) -> None:
    s = make_session(
        topic="Phones? " + PAYLOADS[0],
        moderator=evil_backend(),
        deliberators=[evil_backend(), evil_backend()],
        analyzer=evil_backend(),
        human="Ann <img src=x onerror=alert(9)>",
        turns=3,
    )
    w = RoundtableWidget(session=s, autosave=None)
    w.start()
    w.wait(10)
    assert_inert(panels(w))
    w.input.value = "The human writes " + EVIL
    w.send()
    w.wait(10)
    assert s.ended is not None
    page = panels(w)
    assert_inert(page)
    assert "The human writes &lt;img src=x onerror=alert(1)&gt;" in page
    assert "&lt;/script&gt;&lt;script&gt;alert(2)" in page  # the moderator's message
    assert "argnb-map" in w.map_view.value  # the analysis map drew (inside an escaped srcdoc)


def test_errors_from_the_worker_are_shown_escaped(make_session) -> None:
    from argnb.errors import BackendUnavailable
    from argnb.llm.scripted import ScriptedBackend

    down = ScriptedBackend(
        lambda req: BackendUnavailable("cannot reach <b>server</b>", hint="start it")
    )
    w = RoundtableWidget(session=make_session(moderator=down), autosave=None)
    w.start()
    w.wait(10)
    assert isinstance(w.error, BackendUnavailable)
    assert "cannot reach &lt;b&gt;server&lt;/b&gt;" in w.status.value
    assert w.input.disabled


def test_the_kernel_watch_is_rearmed_by_each_heartbeat(make_session) -> None:
    w = RoundtableWidget(session=make_session(), autosave=None)
    before = w.gone.value
    assert (
        "animation:argnb-rt-show 0s linear 10s forwards" in before and "visibility:hidden" in before
    )
    w.heartbeat.value = 1
    after = w.gone.value
    assert after != before and re.sub(r"<!-- \d+ -->", "", after) == re.sub(
        r"<!-- \d+ -->", "", before
    )
    assert w.heartbeat.layout.display == "none"


def test_the_watch_switches_the_heartbeat_on_until_beats_arrive(make_session, monkeypatch) -> None:
    import argnb.roundtable.widget as widget_mod

    monkeypatch.setattr(widget_mod, "BEAT_MS", 40)
    w = RoundtableWidget(session=make_session(), autosave=None)
    switched: list[bool] = []
    on = threading.Event()
    w.heartbeat.observe(lambda ch: (switched.append(ch["new"]), ch["new"] and on.set()), "playing")
    assert not w.heartbeat.playing  # a timer only starts on a change seen by a view
    w._ipython_display_()  # starts the watch (no view here, so no beats ever come)
    assert on.wait(10)  # switched on (again and again: nothing answers without a view)
    n = len(switched)
    w.heartbeat.value = 1  # beats arrive: the watch leaves the heartbeat alone
    for _ in range(8):
        time.sleep(0.05)
        w.heartbeat.value += 1
    assert len(switched) - n <= 2
    w.close()


def test_replay_shows_a_saved_session(tmp_path, make_session) -> None:
    path = tmp_path / "s.json"
    make_session(autosave=path, turns=3).run(["A point."])
    w = RoundtableWidget.replay(path, delay=0.0)
    w.wait(10)
    assert "replayed all" in w.status.value
    assert any("A point." in c.value for c in w.dialogue.children)
    assert w.history.options and "Rules help." in w.analysis_text.value
    assert w.input_area.layout.display == "none"


def test_feedback_rows_append_under_the_class_format(tmp_path) -> None:
    path = tmp_path / "feedback.csv"
    ratings = {k: i % 5 + 1 for i, (k, _) in enumerate(LIKERT)}
    ratings["use_again"] = None
    answers = {
        k: f'answer with, commas and "quotes"\nand a newline {i}' for i, (k, _) in enumerate(OPEN)
    }
    save_feedback(path, feedback_row("Ann", "s1", ratings, answers))
    save_feedback(path, feedback_row("Bo", "s1", {}, {}))
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == COLUMNS and len(COLUMNS) == 2 + 9 + 6
    assert (
        rows[0]["easy_to_use"] == "1" and rows[0]["use_again"] == "" and rows[1]["student"] == "Bo"
    )
    assert rows[0]["most_helpful"].endswith("newline 0")
    df = read_feedback(path)
    assert list(df.columns) == list(COLUMNS) and df["easy_to_use"].tolist()[0] == 1
    assert df["use_again"].isna().all()
    with pytest.raises(ArgnbError, match=r"1\.\.5"):
        feedback_row("Ann", "s1", {"easy_to_use": 6}, {})
    with pytest.raises(ArgnbError, match="unknown form fields"):
        feedback_row("Ann", "s1", {"nope": 3}, {})
    with pytest.raises(ArgnbError, match="needs a name"):
        feedback_row("  ", "s1", {}, {})
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(ArgnbError, match="other columns"):
        save_feedback(other, feedback_row("Ann", "s1", {}, {}))


def test_the_feedback_widget_saves_and_says_so(tmp_path) -> None:
    from argnb.roundtable.feedback import FeedbackForm

    form = FeedbackForm(tmp_path / "f.csv", session="demo")
    form.save()
    assert "needs a name" in form.status.value
    form.student.value = "Ann <script>"
    form.ratings["easy_to_use"].value = 4
    form.answers["most_helpful"].value = "the map"
    assert form.save() is not None and "saved to" in form.status.value
    row = read_feedback(tmp_path / "f.csv").iloc[0]
    assert (row["student"], row["session"], row["easy_to_use"], row["most_helpful"]) == (
        "Ann <script>",
        "demo",
        4,
        "the map",
    )


def test_a_session_object_keeps_its_own_settings(make_session) -> None:
    s: Session = make_session()
    w = RoundtableWidget(session=s, autosave=None)
    assert w.session is s and s.on_event is not None and w.setup.layout.display == "none"


def test_the_reference_session_replays_beside_start(tmp_path) -> None:
    w = RoundtableWidget(autosave=None, feedback=tmp_path / "f.csv")
    assert w.reference_button.description == "Replay the reference session"
    w.replay_reference(delay=0.0)
    w.wait(30)
    assert w.error is None
    assert "Replayed all" in w.status.value and "not produced by a model" in w.status.value
    shown = " ".join(c.value for c in w.dialogue.children)
    assert "Override" in shown and "one student" in shown
    assert len(w.history.options) == 3 and "Noting AI use" in w.analysis_text.value
    assert w.session is None  # a session of one's own can still be started from the form
    w.close()


def test_analyze_now_runs_on_demand_after_the_end(tmp_path, make_session) -> None:
    """The notebook says "Analyze now" runs on demand: after the session's end too."""
    s = make_session(turns=6, autosave=tmp_path / "s.json")
    w = RoundtableWidget(session=s, feedback=tmp_path / "f.csv")
    assert w.analyze_button.disabled is False  # a live session with an analyzer
    w.start()
    w.wait(10)
    w.send("/end")
    w.wait(10)
    assert s.ended is not None
    assert not w.analyze_button.disabled, w.analyze_button.tooltip
    before = len(s.analyses)
    w.analyze()
    w.wait(10)
    assert w.error is None and len(s.analyses) == before + 1
    assert not w.analyze_button.disabled


def test_analyze_now_says_why_it_cannot_run(tmp_path, make_session) -> None:
    view = RoundtableWidget(autosave=None, feedback=tmp_path / "f.csv")
    assert view.analyze_button.disabled and "press Start" in view.analyze_button.tooltip
    s = make_session(analyzer=None)
    view = RoundtableWidget(session=s, autosave=None, feedback=tmp_path / "f.csv")
    assert view.analyze_button.disabled and "no analyzer" in view.analyze_button.tooltip


def test_the_note_counts_contributions_in_words(tmp_path, make_session) -> None:
    s = make_session(turns=6, autosave=None)
    w = RoundtableWidget(session=s, autosave=None, feedback=tmp_path / "f.csv")
    w.start()
    w.wait(10)
    assert re.search(r"\b1 speaker turn \(|\b[02-9] speaker turns \(", w.note.result_html)
    assert "1 speaker turns" not in w.note.result_html and "so far; last," in w.note.result_html


def test_a_saved_copy_shows_the_final_state_of_a_replay(tmp_path) -> None:
    """05's saved note said "6 contributions so far" after a replay of 33 turns: it counted the
    deliberators only and never said the session had ended. Every speaker turn counts now, the
    human's too, and the note is written once more when the replay ends."""
    w = RoundtableWidget(autosave=None, feedback=tmp_path / "f.csv")
    w.replay_reference(delay=0.0)
    w.wait(30)
    note = w.note.result_html
    assert "9 speaker turns (3 by Sam), 3 analyses (the last after turn 9: 3 points" in note, note
    assert "agreement), ended (turns); last, Sam: " in note, note
    assert "so far" not in note
    w.close()


def test_the_feedback_buttons_label_is_never_cut(tmp_path) -> None:
    """The default button width cut "Save my answers" to "Save my answ…" (the browser suite
    checks the drawn label; this, that the layout asks for the label's width)."""
    from argnb.roundtable.feedback import FeedbackForm

    layout = FeedbackForm(tmp_path / "f.csv").save_button.layout
    assert (layout.width, layout.min_width, layout.flex) == ("auto", "max-content", "0 0 auto")


def test_first_words_show_within_a_second_of_send_while_the_models_still_work(
    tmp_path, make_session
) -> None:
    """After Send the rules' announcement shows at once (the moderator's model takes 2 s, and an
    analysis is due first); the recorded message replaces it, then the reply streams in."""
    slow = table_backend(delay_s=2.0)
    s = make_session(moderator=slow, analyzer=table_backend(delay_s=1.0), turns=6)
    w = RoundtableWidget(session=s, feedback=tmp_path / "f.csv")
    w.start()
    w.wait(30)
    assert s.waiting_for_human and "Choosing" not in panels(w)
    w.input.value = "I would keep phones in bags."
    start = time.monotonic()
    w.send()
    while "Choosing" not in panels(w) and time.monotonic() - start < 3:
        time.sleep(0.005)
    first = time.monotonic() - start
    assert first < 1.0 and w.busy, f"first words after {first:.2f} s"
    live = w.dialogue.children[0].value  # newest first
    assert "Next: Deliberator 1 or Deliberator 2 (Ann spoke last" in live
    assert "choosing who speaks next" in live and "argnb-rt-cursor" in live
    w.wait(30)
    assert w.error is None and s.waiting_for_human
    shown = [c.value for c in w.dialogue.children]
    assert not any("Choosing" in v for v in shown)  # each announcement gave way to its step
    messages = [v for v in shown if "Let us hear" in v]
    assert len(messages) == len(record.decisions(s.transcript))  # one bubble per step, no more


def test_the_panels_map_opens_full_width_to_be_read(tmp_path) -> None:
    """The side panel's map fits a narrow frame (its text was about 4 px in 05): a button opens
    the same map across the whole widget, and it is credited as the panel's is."""
    from argnb.roundtable.widget import FULL_MAP_HEIGHT

    w = RoundtableWidget(autosave=None, feedback=tmp_path / "f.csv")
    assert w.full_button.disabled and w.full_map.layout.display == "none"
    w.replay_reference(delay=0.0)
    w.wait(30)
    assert not w.full_button.disabled and w.full_map.layout.display == "none"
    w.full_button.value = True
    assert w.full_map.layout.display == "" and "Close" in w.full_button.description
    assert f"height:{FULL_MAP_HEIGHT}px" in w.full_map.value
    assert "Sam" in w.full_map.value and "Analyzer (no turn)" not in w.full_map.value
    w.full_button.value = False
    assert w.full_map.layout.display == "none"
    w.close()
