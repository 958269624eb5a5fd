"""Notebook 05's widget for a room on the class server: several learners at one roundtable.

A room runs in the hub's service (:mod:`argnb.classroom.rooms`), not in this kernel, so this
widget holds no session: it is a front end of :class:`~argnb.roundtable.remote.RoomClient`.
A background thread long-polls the room (``state(since)``) and draws what every seat sees -- the
transcript, the analyzer's panel and map, the flags, who is seated, whose turn it is, the phase --
with the roundtable's own views, so a room looks like the one-learner widget. Moves (Send, a
hand, a ballot, a critique) run on a second thread: a ``say`` waits while the room's models take
their next steps, and the kernel must keep serving the page meanwhile.

Reloading loses nothing: running the cell again with the room's code rejoins the same seat and
reads the whole transcript (``state(0)``). The feedback form is each learner's own, written to a
file of their server, never to the room. Off a class hub the widget says so in one line.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from argnb.errors import ArgnbError, RoomRefused
from argnb.roundtable import record
from argnb.roundtable.payloads import Analysis, Flag, Outcome
from argnb.roundtable.session import HUMAN_CHARS
from argnb.roundtable.views import (
    COLORS,
    analysis_html,
    analysis_stopped_html,
    bubble,
    header,
    outcome_html,
    turn_html,
)
from argnb.roundtable.widget import FullMap
from argnb.transcript import Transcript, Turn
from argnb.views import esc
from argnb.widgets.worker import Worker, Working
from argnb.words import count, shorten

#: what the widget says off a class hub (no ``ARGNB_CLASS_URL``)
OFF_HUB = (
    "Rooms run on a class hub: open this notebook from your class's JupyterHub (it tells argnb "
    "where the class server is), then run this cell again."
)
NO_ANALYSIS = "<div style='color:#999'>No analysis yet: the analyzer runs every few turns.</div>"
#: seconds between two polls after the server could not be reached (doubling up to the second)
RETRY_S = (2.0, 30.0)


def error_line(exc: BaseException) -> str:
    """One line for the widget, never a traceback: the server's line and its hint."""
    if isinstance(exc, ArgnbError):
        line = (exc.message or type(exc).__name__).splitlines()[0]
        return line + (f" ({exc.hint})" if exc.hint else "")
    text = str(exc).splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def room_note(tr: Transcript, code: str, phase: str) -> str:
    """What a saved copy of the notebook keeps of the room (the widget itself is gone there)."""
    turns = record.speaker_turns(tr)
    head = f"Room {code} ({tr.title}): {count(len(turns), 'speaker turn')}, {phase}"
    rev = record.revision(tr)
    if rev is not None:
        head += f"; group statement ({rev.winner}): {shorten(rev.statement, 300)}"
    else:
        spoken = [t for t in turns if t.text]
        if spoken:
            head += f"; last, {spoken[-1].speaker}: {shorten(spoken[-1].text, 300)}"
    return head


class RoomWidget(Working):
    """``RoomWidget(topic)``: open a room for ``topic`` (the code to share shows) or join one by
    its code; ``RoomWidget(code="K7QM2XAB")`` joins (again) at once; ``watch=True`` reads the room
    without a seat (an instructor), and :meth:`export` saves it as a roundtable transcript.
    ``settings``: the class server (default: what the hub put in the environment).

    Stable CSS classes (the browser test on the hub finds the elements by them):
    ``argnb-room`` the widget; ``argnb-room-topic``, ``argnb-room-open``,
    ``argnb-room-code-input``, ``argnb-room-join``, ``argnb-room-watch`` the form;
    ``argnb-room-code`` the room's code; ``argnb-room-status`` phase, seats, whose turn;
    ``argnb-room-error`` the last error, one line; ``argnb-room-dialogue`` the transcript (each
    message ``argnb-rt-msg``); ``argnb-room-input``, ``argnb-room-send``, ``argnb-room-pass``,
    ``argnb-room-hand``, ``argnb-room-lower``, ``argnb-room-ready``, ``argnb-room-leave`` the
    moves; ``argnb-room-analysis``, ``argnb-room-map``, ``argnb-room-flags`` the side panel;
    ``argnb-room-closing`` the closing, with ``argnb-room-candidates``, ``argnb-room-rank`` (one
    rank per candidate, each also ``argnb-room-rank-S1``, ...), ``argnb-room-submit-rank``,
    ``argnb-room-outcome``, ``argnb-room-critique``, ``argnb-room-submit-critique``,
    ``argnb-room-statement``; ``argnb-room-feedback`` the feedback form.
    """

    def __init__(
        self,
        topic: str = "",
        code: str = "",
        *,
        watch: bool = False,
        turns: int | None = None,
        settings: Any = None,
        feedback: str | Path = "work/roundtable_feedback.csv",
        map_height: int = 380,
    ) -> None:
        import ipywidgets as w

        from argnb.llm.classserver import class_settings
        from argnb.roundtable.widget import _gone_notice, _ids, dialogue_box
        from argnb.widgets.static import StaticNote, live_box

        self.uid = next(_ids)
        self.worker = Worker(f"room-poll-{self.uid}")  # the long-poll loop
        self.mover = Worker(f"room-move-{self.uid}")  # one move at a time
        self.map_height = map_height
        self.turns_asked = turns
        self.state: dict[str, Any] = {}
        self.transcript: Transcript | None = None
        self.watching = watch
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._closing_key: Any = None
        self._closed = False
        self._watching = False
        self._moving = False  # a move is on its way to the server
        self._from_room = False  # the line shown is the room's own error (it clears itself)
        self._last_beat = 0.0
        self.rank_boxes: dict[str, Any] = {}
        self.critique_box: Any = None
        self.note = StaticNote()
        settings = settings or class_settings()
        self.client: Any = None
        self.poller: Any = None
        self.problem = w.HTML()
        self.problem.add_class("argnb-room-error")
        if settings is None:
            self.problem.value = f"<span style='color:#555'>{esc(OFF_HUB)}</span>"
            self.note.text(OFF_HUB)
            self.widget = live_box("room", [self.problem])
            self.widget.add_class("argnb-room")
            return
        from argnb.roundtable.remote import RoomClient

        self.client = RoomClient(settings)  # moves
        self.poller = RoomClient(settings)  # the long poll, on its own connection

        def box(widget: Any, cls: str) -> Any:
            widget.add_class(cls)
            return widget

        # -- the form: open a room, or join or watch one by its code ----------------------------
        self.topic = box(
            w.Text(
                value=topic,
                description="Topic",
                placeholder="a question for the room",
                layout=w.Layout(width="60%"),
            ),
            "argnb-room-topic",
        )
        self.open_button = box(w.Button(description="Open a room", icon="plus"), "argnb-room-open")
        self.code_input = box(
            w.Text(
                value=code,
                description="Room code",
                placeholder="e.g. K7QM2XAB",
                layout=w.Layout(width="220px"),
            ),
            "argnb-room-code-input",
        )
        self.join_button = box(w.Button(description="Join", icon="sign-in"), "argnb-room-join")
        self.watch_button = box(
            w.Button(description="Watch", icon="eye", tooltip="read the room without a seat"),
            "argnb-room-watch",
        )
        self.form = w.VBox(
            [
                w.HBox([self.topic, self.open_button]),
                w.HBox([self.code_input, self.join_button, self.watch_button]),
            ]
        )
        self.code = box(w.HTML(), "argnb-room-code")
        self.status = box(w.HTML(), "argnb-room-status")

        # -- the dialogue and the moves ---------------------------------------------------------
        self.dialogue = box(dialogue_box("420px"), "argnb-room-dialogue")
        self.turn_banner = w.HTML()
        self.input = box(
            w.Textarea(
                placeholder="Wait for your turn…",
                disabled=True,
                layout=w.Layout(width="auto", flex="1 1 auto", height="72px"),
            ),
            "argnb-room-input",
        )
        buttons = {
            "send": ("Send", "success", "paper-plane"),
            "pass": ("Pass", "", ""),
            "hand": ("Raise hand", "", "hand-paper-o"),
            "lower": ("Lower hand", "", ""),
            "ready": ("Ready to end", "warning", "flag-checkered"),
            "leave": ("Leave", "danger", "sign-out"),
        }
        self.buttons: dict[str, Any] = {
            k: box(
                w.Button(description=d, button_style=s, icon=i, disabled=True), f"argnb-room-{k}"
            )
            for k, (d, s, i) in buttons.items()
        }
        self.buttons["send"].on_click(lambda _: self.send())
        self.buttons["pass"].on_click(lambda _: self.send(""))
        for k in ("hand", "lower", "ready", "leave"):
            self.buttons[k].on_click(lambda _, k=k: self._move(k))
        side = w.VBox([self.buttons[k] for k in ("send", "pass")], layout=w.Layout(flex="0 0 auto"))
        self.text_row = w.HBox([self.input, side])  # shown in the discussion only
        self.input_area = w.VBox(
            [
                self.turn_banner,
                self.text_row,
                w.HBox([self.buttons[k] for k in ("hand", "lower", "ready", "leave")]),
            ]
        )
        self.closing = box(w.VBox(), "argnb-room-closing")
        left = w.VBox(
            [w.HTML("<b>The room</b>"), self.dialogue, self.input_area, self.closing],
            layout=w.Layout(width="60%", padding="0 8px 0 0"),
        )

        # -- the analyzer's panel ---------------------------------------------------------------
        self.analysis = box(w.HTML(NO_ANALYSIS), "argnb-room-analysis")
        self.map_view = box(
            w.HTML(layout=w.Layout(flex="0 0 auto", width="auto")), "argnb-room-map"
        )
        self.flags = box(w.HTML(), "argnb-room-flags")
        self.full = FullMap()  # the map across the whole widget, where its labels can be read
        right = w.VBox(
            [
                w.HTML("<b>Analyzer</b>"),
                w.Box([self.analysis], layout=w.Layout(max_height="300px", overflow="auto")),
                w.HBox(
                    [
                        w.HTML(
                            "<b>Argument map</b> <span style='color:#777;font-size:11px'>"
                            "(colour: who said it)</span>"
                        ),
                        self.full.button,
                    ],
                    layout=w.Layout(flex_flow="row wrap", align_items="center"),
                ),
                self.map_view,
                self.flags,
            ],
            layout=w.Layout(width="40%", border_left="1px solid #ddd", padding="0 0 0 8px"),
        )

        # -- feedback form and kernel watch -----------------------------------------------------
        from argnb.roundtable.feedback import FeedbackForm

        self.feedback = FeedbackForm(feedback)
        self.feedback_box = box(
            w.Accordion(children=[self.feedback.widget], selected_index=None),
            "argnb-room-feedback",
        )
        self.feedback_box.set_title(0, "Feedback form (yours: saved on your server, not the room)")
        self.heartbeat = w.Play(value=0, min=0, max=10**9, step=1, interval=2000, repeat=True)
        self.heartbeat.layout.display = "none"
        again = "Run the cell again with the room's code to rejoin; the room goes on without you."
        self._gone = lambda beat: _gone_notice(self.uid, beat, "", again)
        self.gone = w.HTML(self._gone(0), layout=w.Layout(min_height="0px"))
        self.heartbeat.observe(self._on_beat, "value")
        self.body = w.HBox([left, right], layout=w.Layout(display="none"))
        self.widget = live_box(
            "room",
            [
                self.gone,
                self.heartbeat,
                self.form,
                w.HBox([self.code, self.status]),
                self.problem,
                self.body,
                self.full.view,
                self.feedback_box,
            ],
        )
        self.widget.add_class("argnb-room")
        self.open_button.on_click(lambda _: self.open())
        self.join_button.on_click(lambda _: self.join())
        self.watch_button.on_click(lambda _: self.join(watch=True))
        if code:
            self.join(code, watch=watch)

    # -- entering a room ---------------------------------------------------------------------
    def open(self, topic: str | None = None) -> None:
        """Open a room for ``topic`` (or the form's); you are seated, its code shows."""
        if self.client is None or self._moving:
            return
        topic = self.topic.value if topic is None else topic
        self.topic.value = topic
        self._enter(lambda: self.client.open(topic, self.turns_asked))

    def join(self, code: str | None = None, watch: bool = False) -> None:
        """Sit down at the room ``code`` (again, after a reload), or read it without a seat."""
        if self.client is None or self._moving:
            return
        code = (self.code_input.value if code is None else code).strip().upper()
        self.code_input.value = code
        if not code:
            self._fail("Type the room's code first (whoever opened the room has it).")
            return
        self.watching = watch
        if watch:
            self.client.code = code
            self._enter(lambda: self.client.state(0, wait=False))
        else:
            self._enter(lambda: self._join(code))

    def _join(self, code: str) -> dict[str, Any]:
        """Join; a room that has ended takes no seats, but its learners still read it whole."""
        try:
            return self.client.join(code)
        except RoomRefused as exc:
            if exc.status != 409:
                raise
            s = self.client.state(0, wait=False)
            if not s.get("ended"):
                raise
            return s

    def _enter(self, call: Callable[[], dict[str, Any]]) -> None:
        self._stop.set()  # a poll of another room ends (it returns within the server's wait)

        def run() -> None:
            s = call()
            self.poller.code = self.client.code
            with self._lock:
                self.transcript = None
                self._apply(s)
            self._stop = threading.Event()
            self.worker.start(self._loop, on_error=self._fail)

        self._fail("")
        self._moving = True
        self.mover.start(run, on_error=self._fail, on_done=self._moved)

    def _moved(self) -> None:
        """A move has finished (its thread is still alive while this runs: hence the flag)."""
        self._moving = False
        self._controls()

    # -- the long poll ------------------------------------------------------------------------
    def _loop(self) -> None:
        """Read the room until it ends or the widget closes; a server out of reach is retried."""
        pause, stop = RETRY_S[0], self._stop
        while not stop.is_set() and not self._closed:
            tr = self.transcript
            try:
                s = self.poller.state(len(tr.turns) if tr is not None else 0)
            except RoomRefused as exc:
                self._fail(error_line(exc))
                if exc.status in (401, 403, 404):
                    return
                stop.wait(pause)
                continue
            except ArgnbError as exc:  # out of reach, timed out: say so, try again later
                self._fail(error_line(exc) + f"; trying again in {pause:.0f} s")
                stop.wait(pause)
                pause = min(pause * 2, RETRY_S[1])
                continue
            if stop.is_set():
                return
            if pause != RETRY_S[0]:
                pause = RETRY_S[0]
                self._fail("")
            with self._lock:
                self._apply(s)
            if s.get("ended"):
                return

    def _apply(self, s: dict[str, Any]) -> None:
        """Take in one state: new turns drawn, then the seats, the moves and the closing."""
        tr = self.transcript
        if tr is None:
            meta = s.get("meta") or {"topic": s["topic"], "room": True}
            tr = self.transcript = Transcript(kind="roundtable", title=s["topic"], meta=meta)
            self.dialogue.children = ()
            self.analysis.value = NO_ANALYSIS
            self.map_view.value = self.flags.value = ""
            self._closing_key = None
        fresh = [Turn.model_validate(t) for t in s.get("turns", [])]
        if fresh and s.get("since") == len(tr.turns):  # else a gap: the next poll fills it
            for turn in fresh:
                tr.turns.append(turn)
                self._draw(tr, turn)
            if any(isinstance(t.payload, Analysis) for t in fresh):
                self._show_analysis(tr)
            if any(isinstance(t.payload, Flag) for t in fresh):
                self.flags.value = self._flags_html(tr)
        self.state = s
        self.form.layout.display = "none"
        self.body.layout.display = ""
        self.code.value = (
            "<div style='font-size:15px;padding:2px 8px 2px 0'>Room "
            f"<b style='font-family:monospace;font-size:18px;letter-spacing:2px'>{esc(s['code'])}"
            f"</b> · {esc(s['topic'])}</div>"
        )
        self.status.value = self._status_html(s)
        if s.get("error") or self._from_room:  # the room's own trouble, shown while it lasts
            self._fail(s.get("error", ""))
            self._from_room = bool(s.get("error"))
        self.feedback.session = s["code"]
        self._controls()
        self._draw_closing(tr, s)
        self.note.text(room_note(tr, s["code"], s["phase"]))

    # -- the learner's moves ------------------------------------------------------------------
    @property
    def you(self) -> str:
        return str(self.state.get("you", ""))

    @property
    def seated(self) -> bool:
        return self.you in self.state.get("seated", [])

    @property
    def my_turn(self) -> bool:
        """This learner holds the floor in the discussion (the only time Send works)."""
        s = self.state
        return s.get("phase") == "discussion" and self.seated and self.you in s["waiting_for"]

    def send(self, text: str | None = None) -> None:
        """Your turn: the box's text (``""``: pass). Only while you hold the floor."""
        if not self.my_turn or self._moving:
            return
        typed = text is None
        text = self.input.value if typed else text
        if typed and not text.strip():
            self._fail("Write something first, or press Pass.")
            return
        if len(text) > HUMAN_CHARS:
            self._fail(f"That is {len(text)} characters; a turn holds at most {HUMAN_CHARS}.")
            return
        self._move("say", text, done=lambda: setattr(self.input, "value", ""))

    def ranking(self) -> list[str]:
        """The ballot the rank boxes make, best first; each statement needs its own rank."""
        got = {k: d.value for k, d in self.rank_boxes.items()}
        n = len(got)
        if not n:
            raise ArgnbError("there is nothing to rank now", hint="wait for the closing")
        if any(v is None for v in got.values()) or sorted(got.values()) != list(range(1, n + 1)):
            raise ArgnbError(
                f"give each statement its own rank from 1 to {n}",
                hint="1 is the statement you prefer most",
            )
        return sorted(got, key=lambda k: got[k])

    def submit_rank(self) -> None:
        """Send your ranking (once); a ranking that is not whole is refused here."""
        try:
            order = self.ranking()
        except ArgnbError as exc:
            self._fail(error_line(exc))
            return
        self._move("rank", order)

    def submit_critique(self, text: str | None = None) -> None:
        """Your one critique of the chosen statement (``""``: none)."""
        if self.critique_box is None and text is None:
            return
        text = self.critique_box.value if text is None else text
        if len(text) > HUMAN_CHARS:
            self._fail(f"That is {len(text)} characters; a critique holds at most {HUMAN_CHARS}.")
            return
        self._move("critique", text)

    def _move(self, move: str, *args: Any, done: Callable[[], None] | None = None) -> None:
        """One move on the mover thread; the poll shows what it changed. ``done``: after it
        succeeded (a refused turn keeps its text in the box)."""
        if self.client is None or self._moving or not self.state:
            return
        self._fail("")
        call = getattr(self.client, move)
        for b in self.buttons.values():
            b.disabled = True
        self.input.disabled = True
        self._moving = True
        self.mover.start(
            lambda: call(*args), on_error=self._fail, on_success=done, on_done=self._moved
        )

    # -- drawing -----------------------------------------------------------------------------
    def _fail(self, exc: BaseException | str) -> None:
        line = exc if isinstance(exc, str) else error_line(exc)
        self.problem.value = f"<span style='color:#a50f15'>{esc(line)}</span>" if line else ""

    def _controls(self) -> None:
        """Switch each move on only when the room would take it from this learner now."""
        if self.client is None:
            return
        with self._lock:
            s, busy = self.state, self._moving
            live = bool(s) and not s.get("ended") and self.seated and not busy
            talk = live and s.get("phase") == "discussion"
            mine = talk and self.you in s.get("waiting_for", [])
            hand = self.you in s.get("hands", [])
            on = {
                "send": mine,
                "pass": mine,
                "hand": talk and not mine and not hand,
                "lower": talk and hand,
                "ready": talk and self.you not in s.get("ready", []),
                "leave": live,
            }
            for k, b in self.buttons.items():
                b.disabled = not on[k]
            self.input.disabled = not mine
            self.input.placeholder = (
                "Your turn: write, then Send." if mine else "Wait for your turn…"
            )
            self.turn_banner.value = (
                "<div style='background:#e5f5e0;border-left:4px solid #238b45;padding:4px 8px;"
                f"font-weight:bold'>Your turn, {esc(self.you)}: the moderator gives you the floor"
                f"{self._deadline(s)}.</div>"
                if mine
                else ""
            )
            self.input_area.layout.display = "" if self.seated or not s else "none"
            closing = s.get("phase") in ("ranking", "critique", "ended")
            self.text_row.layout.display = "none" if closing else ""

    @staticmethod
    def _deadline(s: dict[str, Any]) -> str:
        left = s.get("deadline_s")
        return f" (you are passed over after {left:.0f} more seconds)" if left else ""

    def _status_html(self, s: dict[str, Any]) -> str:
        hands, ready = set(s.get("hands", [])), set(s.get("ready", []))

        def seat(name: str) -> str:
            marks = ("✋" if name in hands else "") + (" ✔ready" if name in ready else "")
            you = " (you)" if name == s["you"] else ""
            return f"{esc(name)}{you}{esc(marks)}"

        waits = ", ".join(esc(x) for x in s.get("waiting_for", [])) or "the models"
        where = "watching, no seat" if s["you"] not in s.get("seated", []) else "seated"
        done = f" ({esc(s['ended'])})" if s.get("ended") else ""
        return (
            f"<div style='font-size:12px;color:#333'>phase: <b>{esc(s['phase'])}</b>{done} · "
            f"seated: {', '.join(seat(x) for x in s.get('seated', [])) or 'nobody'} · "
            f"waiting for: {waits if not s.get('ended') else '—'} · you: {esc(s['you'])}, "
            f"{where}</div>"
        )

    def _draw(self, tr: Transcript, turn: Turn) -> None:
        import ipywidgets as w

        if isinstance(turn.payload, Outcome):  # the count stands once: in the closing panel
            shown = bubble(
                header(tr, turn), f"{turn.text}. The count is below.", COLORS["moderator"]
            )
        else:
            shown = turn_html(tr, turn)
        if shown:
            self.dialogue.children = (w.HTML(shown), *self.dialogue.children)

    def _show_analysis(self, tr: Transcript) -> None:
        """The latest usable analysis (agreements new since the one before marked) and its map."""
        found = record.analyses(tr)
        stopped = analysis_stopped_html(tr)
        if not found:
            self.analysis.value = stopped
            return
        a = found[-1].payload
        prev = found[-2].payload if len(found) > 1 else None
        self.analysis.value = stopped + analysis_html(a, prev)  # type: ignore[arg-type]
        if not a.arguments:  # type: ignore[attr-defined]
            self.map_view.value = (
                "<div style='color:#999;font-size:12px'>no arguments in this analysis</div>"
            )
            self.full.show(None)
            return
        from argnb.maps.view import iframe
        from argnb.roundtable.analyzer import analysis_map

        spoken = record.spoken(tr, a.upto)  # type: ignore[attr-defined]
        page = analysis_map(a, tr.title, spoken).to_html(color_by="agent", fill=True)  # type: ignore[arg-type]
        self.map_view.value = iframe(page, self.map_height)
        self.full.show(page)

    @staticmethod
    def _flags_html(tr: Transcript) -> str:
        shown = [turn_html(tr, t) for t in tr.of_kind("roundtable.flag")]
        shown = [x for x in shown if x]
        return "<b>Fallacy check</b>" + "".join(shown) if shown else ""

    def _draw_closing(self, tr: Transcript, s: dict[str, Any]) -> None:
        """The closing as this learner's step: rank the candidates, see the count, critique the
        chosen statement once, read the revised one. Rebuilt only when the step changes."""
        import ipywidgets as w

        mine = self.you in s.get("waiting_for", []) and self.seated
        outcome, rev = record.outcome(tr), record.revision(tr)
        key = (
            s["phase"],
            mine,
            outcome is not None,
            rev is not None,
            len(s.get("candidates") or {}),
            () if mine else tuple(s.get("waiting_for", [])),  # a learner's own choices stay
        )
        if key == self._closing_key:
            return
        self._closing_key = key
        parts: list[Any] = []
        c = s.get("candidates")
        if s["phase"] == "ranking" and c:
            lis = "".join(f"<li><b>{esc(k)}</b> {esc(v)}</li>" for k, v in c.items())
            head = w.HTML(
                "<b>Rank the candidate statements</b> (1: the one you prefer most)"
                f"<ul style='font-size:13px;padding-left:18px'>{lis}</ul>"
                if mine
                else f"<b>The candidate statements</b><ul style='font-size:13px'>{lis}</ul>"
                f"<div style='color:#555'>Waiting for "
                f"{esc(', '.join(s.get('waiting_for', [])) or 'the count')} to rank.</div>"
            )
            head.add_class("argnb-room-candidates")
            parts.append(head)
            self.rank_boxes = {}
            if mine:
                ranks = [("–", None), *((str(i), i) for i in range(1, len(c) + 1))]
                for k in c:
                    d = w.Dropdown(
                        options=ranks, value=None, description=k, layout=w.Layout(width="140px")
                    )
                    d.add_class("argnb-room-rank")
                    d.add_class(f"argnb-room-rank-{k}")
                    self.rank_boxes[k] = d
                submit = w.Button(description="Submit my ranking", button_style="primary")
                submit.add_class("argnb-room-submit-rank")
                submit.on_click(lambda _: self.submit_rank())
                parts += [w.HBox(list(self.rank_boxes.values())), submit]
        if outcome is not None:
            o = w.HTML(outcome_html(tr, outcome))
            o.add_class("argnb-room-outcome")
            parts.append(o)
        if s["phase"] == "critique" and mine:
            self.critique_box = w.Textarea(
                placeholder="One critique of the chosen statement (empty: none). Once.",
                layout=w.Layout(width="95%", height="60px"),
            )
            self.critique_box.add_class("argnb-room-critique")
            send = w.Button(description="Send my critique", button_style="primary")
            send.add_class("argnb-room-submit-critique")
            send.on_click(lambda _: self.submit_critique())
            parts += [self.critique_box, send]
        elif s["phase"] == "critique":
            waits = ", ".join(s.get("waiting_for", [])) or "the moderator's revision"
            parts.append(w.HTML(f"<div style='color:#555'>Waiting for {esc(waits)}.</div>"))
        if rev is not None:
            stmt = w.HTML(
                "<div style='border:2px solid #6a51a3;padding:6px 10px;margin:6px 0'>"
                f"<b>The group's statement</b> ({esc(rev.winner)}"
                f"{', revised after the critiques' if rev.statement != rev.original else ''})"
                f"<div style='font-size:14px'>{esc(rev.statement)}</div></div>"
            )
            stmt.add_class("argnb-room-statement")
            parts.append(stmt)
        if s.get("ended"):
            parts.append(
                w.HTML(
                    f"<div style='color:#555'>The room has ended ({esc(s['ended'])})"
                    ". Fill in your feedback form below.</div>"
                )
            )
            self.feedback_box.selected_index = 0
        self.closing.children = tuple(parts)

    # -- the instructor's export ----------------------------------------------------------------
    def export(self, path: str | Path) -> Path:
        """The room as today's roundtable transcript JSON (every seat's turns; read it back with
        :func:`argnb.roundtable.session.load_session`), fetched whole from the server."""
        if self.client is None or not self.client.code:
            raise ArgnbError("no room to export", hint="join or watch a room first")
        s = self.client.state(0, wait=False)
        meta = s.get("meta") or {"topic": s["topic"], "room": True}
        tr = Transcript(kind="roundtable", title=s["topic"], meta=meta)
        tr.turns = [Turn.model_validate(t) for t in s["turns"]]
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        return tr.save(p)

    # -- display and closing -------------------------------------------------------------------
    def close(self) -> None:
        """Stop the poll (it ends within the server's wait) and close the widgets."""
        self._closed = True
        self._stop.set()
        self.widget.close()

    def __repr__(self) -> str:
        if self.client is None:
            return OFF_HUB
        return f"RoomWidget(code={self.state.get('code', '')!r}, phase={self.state.get('phase')!r})"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
        self.note.display()
        if self.client is not None and not self._watching:
            self._watching = True
            threading.Thread(target=self._watch, daemon=True, name=f"room-watch-{self.uid}").start()

    def _on_beat(self, change: dict[str, Any]) -> None:
        self._last_beat = time.monotonic()
        self.gone.value = self._gone(change["new"])

    def _watch(self) -> None:
        """Switch the page's heartbeat on (again) while no beat comes: the browser's timer starts
        only when ``playing`` turns true while a view exists (as in the one-learner widget)."""
        while not self._closed:
            time.sleep(3.0)
            if time.monotonic() - self._last_beat > 5.0:
                self.heartbeat.playing = False
                self.heartbeat.playing = True
