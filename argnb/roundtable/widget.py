"""The roundtable in JupyterLab: the paper's three panels plus a feedback form.

    dialogue panel (every turn labelled with role and model,   | analyzer side panel: summary,
    deliberators' text streaming in as it is written)          | agreements (what changed), open
    input area (active only on the human's turn)               | questions, argument map, history

First words come at once: when the learner sends a turn, the session announces the next moderator
step from the turn rules alone (who may speak, and why; no model), and the widget shows it in a
live moderator bubble; the moderator's message grows under it as the model writes it, and the
recorded step (the message, the speaker the rules accepted) replaces the bubble; then the
speaker's reply streams in as the model writes it.

The widget is a view and a front end: it builds a :class:`~argnb.roundtable.session.Session`
(from the form, or one you pass), runs it in a worker thread so the notebook stays responsive,
and draws the session's events. All text from models and from the human is escaped
(:mod:`argnb.roundtable.views`); the map is a sandboxed iframe (:mod:`argnb.maps`).

When the kernel is gone (restarted, shut down, or the notebook reopened later) nothing can
answer the buttons any more, and the widget says so: a heartbeat widget in the page pings the
kernel every two seconds and each answer re-arms a notice that a CSS animation reveals after ten
seconds without one. Sessions are saved after every turn (``autosave``), so nothing is lost.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from argnb.errors import ArgnbError
from argnb.events import Event
from argnb.roundtable import record
from argnb.roundtable.payloads import Analysis, Contribution, Decision
from argnb.roundtable.session import HUMAN_END, HUMAN_PASS, YOUR_TURN, Session
from argnb.roundtable.views import (
    COLORS,
    analysis_html,
    analysis_stopped_html,
    bubble,
    color,
    turn_html,
)
from argnb.transcript import Transcript, Turn
from argnb.views import esc
from argnb.widgets.worker import Throttle, Worker, Working
from argnb.words import count, shorten

#: seconds without a heartbeat answer before the widget says the kernel is gone
GONE_AFTER_S = 10
#: milliseconds between two heartbeats of the page
BEAT_MS = 2000
#: the least time between two repaints of a streaming message
REPAINT_S = 0.08

#: the analyze button's tooltip before a live session exists (or in a replay: no model to ask)
#: the height (pixels) of the full-width map that "Open the full map" shows
FULL_MAP_HEIGHT = 640
NO_ANALYSIS_YET = "runs on a live session: press Start first (a replay shows its recorded analyses)"

_ids = itertools.count(1)


def note_text(tr: Transcript) -> str:
    """What the saved notebook keeps of a session (:class:`~argnb.widgets.static.StaticNote`):
    every speaker turn counted (the human's too), the analyses, whether it ended, the last
    words. Written after each spoken turn and once more when a run or replay finishes, so a
    saved copy shows the final state."""
    turns = record.speaker_turns(tr)
    human = record.human_name(tr)
    by_human = sum(1 for t in turns if t.speaker == human)
    head = f"{tr.title}: {count(len(turns), 'speaker turn')} ({by_human} by {human})"
    found = record.analyses(tr)
    if found:
        last = found[-1].payload
        head += (
            f", {count(len(found), 'analysis', 'analyses')} (the last after turn "
            f"{last.upto}: {count(len(last.agreements), 'point')} of agreement)"  # type: ignore[attr-defined]
        )
    end = record.ended(tr)
    head += f", ended ({end.reason})" if end is not None else " so far"
    spoken = [t for t in turns if t.text]
    if spoken:
        head += f"; last, {spoken[-1].speaker}: {shorten(spoken[-1].text, 300)}"
    return head


def _gone_notice(
    uid: int, beat: int, saved: str, again: str = "Run the cell again to start a new session."
) -> str:
    """The kernel-gone notice: hidden while heartbeats keep replacing it, shown after a pause."""
    where = f" The session was saved to {esc(saved)}." if saved else ""
    return (
        "<style>@keyframes argnb-rt-show{to{visibility:visible;max-height:12em;"
        "padding:6px 10px;border-width:1px}}"
        f".argnb-rt-gone-{uid}{{visibility:hidden;max-height:0;overflow:hidden;padding:0;"
        f"border:0 solid #e0b252;animation:argnb-rt-show 0s linear {GONE_AFTER_S}s forwards;"
        "background:#fff3cd;font-size:13px}</style>"
        f"<div class='argnb-rt-gone-{uid}'>⚠ No answer from the Python kernel for "
        f"{GONE_AFTER_S} seconds. It may be busy with another cell, or it is gone (restarted, "
        "shut down, or this notebook was reopened): then these panels only show the session as "
        f"it was.{where} {esc(again)}</div><!-- {beat} -->"
    )


def dialogue_box(height: str) -> Any:
    """The messages' panel: newest first in a column-reverse box, so the view stays scrolled to
    the newest (the one-learner widget and the room widget)."""
    import ipywidgets as w

    return w.Box(
        layout=w.Layout(
            display="flex",
            flex_flow="column-reverse",
            overflow="auto",
            height=height,
            border="1px solid #ddd",
            padding="4px 8px",
        )
    )


class FullMap:
    """The side panel's map fits its narrow frame, so its text gets small (about 7 px in 05): a
    button opens the same map across the whole widget, under both columns, where it can be read
    (the one-learner widget's and a room's)."""

    def __init__(self) -> None:
        import ipywidgets as w

        self.button = w.ToggleButton(
            description="Open the full map",
            icon="expand",
            disabled=True,
            tooltip="show this map across the whole width, under the dialogue",
            layout=w.Layout(width="auto", min_width="max-content"),
        )
        self.view = w.HTML(layout=w.Layout(display="none", width="100%", margin="8px 0 0 0"))
        self.view.add_class("argnb-rt-full-map")
        self.button.observe(lambda _: self.state(), names="value")

    def show(self, page: str | None) -> None:
        """The map page to open (None: no map)."""
        from argnb.maps.view import iframe

        self.view.value = iframe(page, FULL_MAP_HEIGHT) if page else ""
        self.state()

    def state(self) -> None:
        """The full map shows while its button is down and there is a map to show."""
        has = bool(self.view.value)
        self.button.disabled = not has
        on = has and self.button.value
        self.view.layout.display = "" if on else "none"
        self.button.description = "Close the full map" if on else "Open the full map"


class RoundtableWidget(Working):
    """``RoundtableWidget(backend=...)`` or ``RoundtableWidget(session=Session(...))``.

    With a ``backend`` (or None: the current default backend) the form at the top sets up the
    table: topic, your name, the deliberators' ``backend:model`` specs (empty: ``backend``),
    turns and how often the analyzer runs. ``feedback`` is the CSV the feedback form appends to.
    """

    def __init__(
        self,
        topic: str = "",
        *,
        backend: Any = None,
        session: Session | None = None,
        human: str = "You",
        deliberators: str = "",
        turns: int = 9,
        analyze_every: int = 3,
        autosave: str | Path | None = "work/roundtable_session.json",
        feedback: str | Path = "work/roundtable_feedback.csv",
        map_height: int = 420,
    ) -> None:
        import ipywidgets as w

        from argnb.roundtable.feedback import FeedbackForm

        self.uid = next(_ids)
        self.backend = backend
        self.session: Session | None = None
        #: the transcript the panels show (the session's, or a replay's as it stood)
        self.shown: Transcript | None = None
        #: prompt tokens the moderator's backend read ahead while the learner typed (None: reading)
        self.prewarmed: int | None = 0
        self.autosave = autosave
        self.map_height = map_height
        self.worker = Worker(f"roundtable-{self.uid}")
        self._live: Any = None
        self._live_text: list[str] = []
        self._live_message: list[str] = []  # the moderator's message under its announcement
        self._live_head = ("", "#888")
        self._live_note = ""
        self._live_role = ""  # "m": the moderator's announcement, "d": a deliberator streaming
        self._repaint = Throttle(REPAINT_S)
        self._beat = 0
        self._from_form = False

        # -- setup form -------------------------------------------------------------------
        wide = w.Layout(width="98%")
        self.topic = w.Text(
            value=topic, description="Topic", placeholder="a question to deliberate on", layout=wide
        )
        self.human = w.Text(value=human, description="Your name", layout=w.Layout(width="32%"))
        self.specs = w.Text(
            value=deliberators,
            description="Deliberators",
            placeholder="e.g. local:smollm2-135m, ollama:llama3.2 (empty: two on the current backend)",
            layout=w.Layout(width="66%"),
        )
        self.turns = w.BoundedIntText(
            value=turns, min=1, max=200, description="Turns", layout=w.Layout(width="160px")
        )
        self.every = w.BoundedIntText(
            value=analyze_every,
            min=0,
            max=200,
            description="Analyze every",
            style={"description_width": "initial"},
            layout=w.Layout(width="170px"),
        )
        self.start_button = w.Button(description="Start", button_style="primary", icon="play")
        self.reference_button = w.Button(
            description="Replay the reference session",
            icon="book",
            tooltip="a session written by the course authors, not produced by a model",
            layout=w.Layout(width="auto", min_width="fit-content", flex="0 0 auto"),
        )
        self.status = w.HTML()
        self.setup = w.VBox(
            [
                self.topic,
                w.HBox([self.human, self.specs]),
                w.HBox([self.turns, self.every]),
            ]
        )

        # -- dialogue panel + input area ----------------------------------------------------
        self.dialogue = dialogue_box("440px")
        self.dialogue.add_class("argnb-rt-dialogue")
        self.turn_banner = w.HTML()
        self.input = w.Textarea(
            placeholder="Wait for your turn…",
            disabled=True,
            layout=w.Layout(width="auto", flex="1 1 auto", height="72px"),
        )
        self.input.add_class("argnb-rt-input")
        self.send_button = w.Button(
            description="Send", button_style="success", icon="paper-plane", disabled=True
        )
        self.pass_button = w.Button(description="Pass", disabled=True)
        self.end_button = w.Button(description="End session", button_style="warning", disabled=True)
        # as wide as the buttons (at 20% of the column they stuck out under a scrollbar)
        buttons = w.VBox(
            [self.send_button, self.pass_button, self.end_button],
            layout=w.Layout(width="auto", flex="0 0 auto"),
        )
        self.input_area = w.VBox([self.turn_banner, w.HBox([self.input, buttons])])
        left = w.VBox(
            [w.HTML("<b>Dialogue</b>"), self.dialogue, self.input_area],
            layout=w.Layout(width="60%", padding="0 8px 0 0"),
        )

        # -- analyzer side panel ------------------------------------------------------------
        self.analyze_button = w.Button(
            description="Analyze now",
            icon="search",
            disabled=True,
            tooltip=NO_ANALYSIS_YET,
            layout=w.Layout(width="auto", min_width="max-content"),
        )
        self.history = w.Dropdown(
            options=[], description="Analysis", layout=w.Layout(width="230px")
        )
        self.analysis_text = w.HTML(
            "<div style='color:#999'>No analysis yet.</div>",
            layout=w.Layout(margin="0", width="100%"),  # its margins made the box scroll sideways
        )
        self.analysis_text.add_class("argnb-rt-analysis")
        # never shrunk by the column: the iframe keeps its whole height inside the panel
        self.map_view = w.HTML(layout=w.Layout(flex="0 0 auto", width="auto", margin="0"))
        self.map_view.add_class("argnb-rt-map")
        self.full = FullMap()
        self.full_button, self.full_map = self.full.button, self.full.view
        right = w.VBox(
            [
                w.HBox(  # wraps on a narrow screen instead of cutting the button's label
                    [w.HTML("<b>Analyzer</b>"), self.history, self.analyze_button],
                    layout=w.Layout(flex_flow="row wrap"),
                ),
                w.Box([self.analysis_text], layout=w.Layout(max_height="300px", overflow="auto")),
                w.HBox(
                    [
                        w.HTML(
                            "<b>Argument map</b> <span style='color:#777;font-size:11px'>"
                            "(colour: who said it)</span>"
                        ),
                        self.full_button,
                    ],
                    layout=w.Layout(flex_flow="row wrap", align_items="center"),
                ),
                self.map_view,
            ],
            layout=w.Layout(width="40%", border_left="1px solid #ddd", padding="0 0 0 8px"),
        )
        right.add_class("argnb-rt-side")

        # -- feedback form and kernel watch ---------------------------------------------------
        self.feedback = FeedbackForm(feedback)
        self.feedback_box = w.Accordion(children=[self.feedback.widget], selected_index=None)
        self.feedback_box.set_title(0, "Feedback form (after your session)")
        # the browser's Play timer only starts when ``playing`` turns true while a view of it
        # exists, so a watch thread (started on display) switches it on until beats arrive
        self.heartbeat = w.Play(
            value=0, min=0, max=10**9, step=1, interval=BEAT_MS, repeat=True, playing=False
        )
        self._last_beat = 0.0
        self._watching = False
        self._closed = False
        self.heartbeat.layout.display = "none"
        self.gone = w.HTML(
            _gone_notice(self.uid, 0, str(autosave or "")), layout=w.Layout(min_height="0px")
        )
        self.heartbeat.observe(self._on_beat, names="value")

        from argnb.widgets.static import StaticNote, live_box

        self.note = StaticNote()
        self.widget = live_box(
            "roundtable",
            [
                self.gone,
                self.heartbeat,
                self.setup,
                w.HBox([self.start_button, self.reference_button, self.status]),
                w.HBox([left, right]),
                self.full_map,
                self.feedback_box,
            ],
        )
        self.widget.add_class("argnb-roundtable")
        self.start_button.on_click(lambda _: self.start())
        self.reference_button.on_click(lambda _: self.replay_reference())
        self.send_button.on_click(lambda _: self.send())
        self.pass_button.on_click(lambda _: self.send(HUMAN_PASS))
        self.end_button.on_click(lambda _: self.send(HUMAN_END))
        self.analyze_button.on_click(lambda _: self.analyze())
        self.history.observe(lambda _: self._show_analysis(), names="value")
        if session is not None:
            self._attach(session)
            self.setup.layout.display = "none"

    # -- building the session --------------------------------------------------------------
    def _attach(self, session: Session) -> None:
        self.session = session
        self.shown = session.transcript
        session.on_event = self._on_event
        if self.autosave and session.autosave is None:
            session.autosave = Path(self.autosave)
        self.feedback.session = session.autosave.stem if session.autosave else session.topic
        for i, t in enumerate(session.transcript.turns):
            self._on_event(Event("turn", t.speaker, t.text, t, i))
        self._analyze_state()

    def build(self) -> Session:
        """The session the form describes (the deliberators on their specs or the backend)."""
        from argnb.roundtable.config import SessionConfig

        config = SessionConfig.parse(
            {
                "topic": self.topic.value,
                "human": self.human.value,
                "deliberators": self.specs.value or ["", ""],
                "turns": self.turns.value,
                "analyze_every": self.every.value,
            },
            where="the form",
        )
        for d in config.deliberators:
            d.spec = d.spec or None
        from argnb.agents import connect_spec

        backend = (
            self.backend()
            if callable(self.backend) and not hasattr(self.backend, "chat")
            else self.backend
        )
        if backend is None and config.needs_backend():
            from argnb.config import default_backend

            backend = default_backend()
        seats = {spec: connect_spec(spec) for spec in config.specs()}
        return config.build(backend, seats, autosave=self.autosave)

    # -- actions ---------------------------------------------------------------------------
    def start(self) -> None:
        """Set up the table (unless a session was given) and run until the human's turn."""
        if self.busy:
            return
        if self.session is None or self.session.ended is not None:
            try:
                session = self.build()
            except (ArgnbError, ValueError) as exc:
                self._say(str(exc), error=True)
                return
            self.dialogue.children = ()
            self.history.options = []
            self.analysis_text.value = self.map_view.value = self.full_map.value = ""
            self._full_state()
            self._attach(session)
            self._from_form = True
        self.setup.layout.display = "none"
        self.start_button.layout.display = "none"
        self._work(self.session.aadvance)  # type: ignore[union-attr]

    def replay_reference(self, delay: float = 0.3) -> None:
        """Replay the course authors' reference session (``assets/roundtable/
        reference_session.json``) in the panels: the real session runs on their written answers,
        no model is called. A session of your own can be started afterwards."""
        if self.busy or (self.session is not None and self.session.ended is None):
            return
        from argnb.roundtable.reference import load_reference, replay_session
        from argnb.roundtable.session import replay

        reference = load_reference()
        self.session = None
        self.dialogue.children = ()
        self.history.options = []
        self.analysis_text.value = self.map_view.value = self.full_map.value = ""
        self._full_state()
        self._say(f"Replaying: {reference.label}.")

        def run() -> None:
            tr = replay_session(reference).transcript
            for turn, partial in replay(tr, delay):
                self.shown = partial
                self._draw_turn(partial, turn)
            self._say(f"Replayed all {len(tr.turns)} turns: {reference.label}.")
            self.note.text(note_text(tr))

        self.worker.start(run, on_error=lambda exc: self._say(f"{type(exc).__name__}: {exc}", True))

    def send(self, text: str | None = None) -> None:
        """The human's turn: the box's text (or ``/pass``, ``/end``)."""
        s = self.session
        if s is None or self.busy or not s.waiting_for_human:
            return
        typed = text is None
        text = self.input.value if typed else text
        if typed and not text.strip():
            self._say("Write something first, or press Pass.", error=True)
            return
        if len(text) > 2000:
            self._say(f"That is {len(text)} characters; a turn holds at most 2000.", error=True)
            return
        self._set_input(False)

        async def turn() -> None:
            await s.asay(text, source="widget")
            if s.ended is None:
                await s.aadvance()

        self.input.value = ""
        self._work(turn)

    def analyze(self) -> None:
        """Run the analyzer now (between turns)."""
        if self.session is None or self.busy or self.session.analyzer is None:
            return
        waiting = self.session.waiting_for_human
        self._set_input(False)

        async def go() -> None:
            await self.session.aanalyze("demand")  # type: ignore[union-attr]
            if waiting:
                self._set_input(True)

        self._work(go)

    def _work(self, coro: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        """Run ``coro`` in a worker thread with its own event loop; show what goes wrong."""
        self.analyze_button.disabled = True

        def done() -> None:
            s = self.session
            self._analyze_state()
            if s is not None and s.transcript.turns:
                self.note.text(note_text(s.transcript))
            if s is not None and s.waiting_for_human and not s.ended:
                self._set_input(True)
                self._prewarm(s)

        self._say("")
        self.worker.run(
            coro,
            on_error=lambda exc: self._say(f"{type(exc).__name__}: {exc}", error=True),
            on_done=done,
        )

    def _prewarm(self, s: Session) -> None:
        """While the learner types, the moderator's backend reads the next step's request up to
        their line (:meth:`Session.prewarm`), on a thread of its own so the worker stays free
        for Send; a Send that comes sooner waits in the model's lock for what is left of it."""

        def run() -> None:
            try:
                self.prewarmed = s.prewarm()
            except ArgnbError:
                self.prewarmed = 0  # reading ahead only saves time: the step itself will say

        self.prewarmed = None
        threading.Thread(target=run, name="argnb-prewarm", daemon=True).start()

    def _analyze_state(self) -> None:
        """ "Analyze now" runs on demand whenever the worker is free -- after the session's end
        too (the notebook promises it); where it cannot run, its tooltip says why."""
        s = self.session
        why = (
            NO_ANALYSIS_YET
            if s is None
            else "this session has no analyzer"
            if s.analyzer is None
            else ""
        )
        self.analyze_button.disabled = bool(why)
        self.analyze_button.tooltip = why or "run the analyzer on the dialogue so far"

    # -- drawing -----------------------------------------------------------------------------
    def _say(self, text: str, error: bool = False) -> None:
        colour = "#a50f15" if error else "#555"
        self.status.value = f"<span style='color:{colour}'>{esc(text)}</span>" if text else ""

    def _set_input(self, on: bool) -> None:
        for x in (self.input, self.send_button, self.pass_button, self.end_button):
            x.disabled = not on
        s = self.session
        if on and s is not None:
            self.input.placeholder = "Type your contribution; Send when ready."
            self.turn_banner.value = (
                "<div style='background:#e5f5e0;border-left:4px solid #238b45;padding:4px 8px;"
                f"font-weight:bold'>{esc(YOUR_TURN.format(name=s.human))}</div>"
            )
        else:
            self.input.placeholder = "Wait for your turn…"
            self.turn_banner.value = ""

    def _prepend(self, value: str) -> Any:
        import ipywidgets as w

        box = w.HTML(value)
        self.dialogue.children = (box, *self.dialogue.children)
        return box

    def _on_event(self, e: Event) -> None:
        tr = self.shown
        if e.kind == "start" and e.label == "moderator":
            # the session's announcement (rules, no model) until the moderator's step is recorded
            head = " · ".join(x for x in (e.speaker, "moderator", e.model) if x)
            self._live_head = (head, COLORS["moderator"])
            self._live_text, self._live_note, self._live_role = [], "choosing who speaks next…", "m"
            self._live_message = []
            self._live = self._prepend(self._live_bubble())
        elif e.kind == "start":
            self._live_role = "d"
            head = " · ".join(x for x in (e.label or e.speaker, "deliberator", e.model) if x)
            if e.label and e.label != e.speaker:
                head = f"{e.speaker} ({e.label}) · deliberator · {e.model}"
            probe = Turn(speaker=e.speaker, payload=Contribution(step=0))
            self._live_head = (head, color(tr, probe) if tr is not None else "#2171b5")
            self._live_text, self._live_note, self._live_message = [], "writing…", []
            self._live = self._prepend(self._live_bubble())
        elif e.kind == "chunk" and self._live is not None:
            message = self._live_role == "m" and e.label == "message"
            parts = self._live_message if message else self._live_text
            parts.append(e.text)
            if self._repaint.due(force=len(parts) == 1):  # first words at once
                self._live.value = self._live_bubble()
        elif e.kind == "restart" and self._live is not None:
            self._live_text, self._live_note = [], "too long: revising to fit the word limit…"
            self._live.value = self._live_bubble()
        elif e.kind == "turn" and e.turn is not None and tr is not None:
            self._draw_turn(tr, e.turn)
        elif e.kind == "waiting":
            self._set_input(True)
        elif e.kind == "end":
            self._set_input(False)
            self.turn_banner.value = (
                "<div style='color:#555'>The session has ended. Look back at the analyses on the "
                "right, then fill in the feedback form below.</div>"
            )
            self.feedback_box.selected_index = 0
            if self._from_form:  # a new table can be set up from the form
                self.setup.layout.display = ""
                self.start_button.description = "New session"
                self.start_button.layout.display = ""

    def _live_bubble(self) -> str:
        head, colour = self._live_head
        said = ("".join(self._live_text), "".join(self._live_message))
        body = "\n\n".join(x for x in said if x)  # the message a paragraph under the announcement
        return bubble(head, body, colour, self._live_note, live=True)

    def _draw_turn(self, tr: Transcript, turn: Turn) -> None:
        p = turn.payload
        if isinstance(p, Analysis):
            self._add_analysis(tr)
            return
        shown = turn_html(tr, turn)
        if turn.text and turn.role != "agenda":
            self.note.text(note_text(tr))
        live = {"d": Contribution, "m": Decision}.get(self._live_role)
        if live is not None and isinstance(p, live) and self._live is not None:
            self._live.value = shown  # the recorded turn takes the live bubble's place
            self._live, self._live_role = None, ""
            return
        if shown:
            self._prepend(shown)

    def _add_analysis(self, tr: Transcript) -> None:
        found = record.analyses(tr)
        if not found:  # nothing usable yet: say so, and why the last attempt was not shown
            stopped = analysis_stopped_html(tr)
            if stopped:
                self.analysis_text.value = stopped
        self.history.options = [
            (f"#{i} after {t.payload['upto']} turns", i - 1) for i, t in enumerate(found, start=1)
        ]
        self.history.value = len(found) - 1 if found else None
        self._show_analysis()

    def _show_analysis(self) -> None:
        tr, i = self.shown, self.history.value
        if tr is None or i is None:
            return
        found = record.analyses(tr)
        if i >= len(found):
            return
        a = found[i].payload
        prev = found[i - 1].payload if i > 0 else None
        stopped = analysis_stopped_html(tr) if i == len(found) - 1 else ""
        self.analysis_text.value = stopped + analysis_html(a, prev)  # type: ignore[arg-type]
        page = self._map_page(a, tr.title, record.spoken(tr, a.upto))  # type: ignore[arg-type]
        if page is None:
            self.map_view.value = (
                "<div style='color:#999;font-size:12px'>no arguments in this analysis</div>"
            )
            self.full_map.value = ""
        else:
            from argnb.maps.view import iframe

            self.map_view.value = iframe(page, self.map_height)
            self.full_map.value = iframe(page, FULL_MAP_HEIGHT)
        self._full_state()

    def _map_page(self, a: Analysis, title: str, spoken: list[tuple[str, str]]) -> str | None:
        from argnb.roundtable.analyzer import analysis_map

        if not a.arguments:
            return None
        # the network fills the frame below its legend, however many lines the legend wraps to
        return analysis_map(a, title, spoken).to_html(color_by="agent", fill=True)

    def _full_state(self) -> None:
        self.full.state()

    def _on_beat(self, change: dict[str, Any]) -> None:
        self._last_beat = time.monotonic()
        self._beat += 1
        s = self.session
        saved = s.autosave if s is not None and s.autosave else self.autosave
        self.gone.value = _gone_notice(self.uid, self._beat, str(saved or ""))

    # -- replay ------------------------------------------------------------------------------
    @classmethod
    def replay(
        cls, source: str | Path | Transcript, delay: float = 0.5, **kw: Any
    ) -> RoundtableWidget:
        """Show a saved session turn by turn in the three panels (no model is called)."""
        from argnb.roundtable.session import load_session, replay

        tr = source if isinstance(source, Transcript) else load_session(source)
        view = cls(autosave=None, **kw)
        view.setup.layout.display = "none"
        view.input_area.layout.display = "none"

        def run() -> None:
            for turn, partial in replay(tr, delay):
                view.shown = partial
                view._draw_turn(partial, turn)
            view._say(f"replayed all {len(tr.turns)} turns of {tr.title!r}")
            view.note.text(note_text(tr))

        view.worker.name = f"roundtable-replay-{view.uid}"
        view.worker.start(run, on_error=lambda exc: view._say(f"{type(exc).__name__}: {exc}", True))
        return view

    def _watch(self) -> None:
        """Switch the page's heartbeat on (again) whenever no beat came for a while: when the
        view was not there yet, or a re-rendered view lost its timer."""
        while not self._closed:
            time.sleep(BEAT_MS / 1000 * 1.5)
            if time.monotonic() - self._last_beat > BEAT_MS / 1000 * 2.5:
                self.heartbeat.playing = False
                self.heartbeat.playing = True

    def close(self) -> None:
        """Stop the heartbeat watch and close the widgets."""
        self._closed = True
        self.widget.close()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
        self.note.display()
        if not self._watching:
            self._watching = True
            threading.Thread(
                target=self._watch, daemon=True, name=f"roundtable-watch-{self.uid}"
            ).start()
