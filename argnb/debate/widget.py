"""The learner debates the agent: pick a motion and a side, write a turn, read the reply.

    motion (from the memory, or your own) · your side · [Start] [Replay the reference turn]
    dialogue panel: your turns and the agent's
    live panel: the step the agent is in ("finding your premises…", "writing a draft…", …) from
    the moment you press Send, what each step made, the draft streaming in; replaced by the reply
    your turn: [text box] [Send]
    the agent's steps for its last reply: keywords, retrieved passages and their schemes, the
    flaws it found in YOUR argument, drafts, the judge's verdicts, the revisions

The widget is a front end: it runs a :class:`~argnb.debate.generate.Debater` for the other side
in a worker thread (the notebook stays responsive) and draws the turns it records; it never calls
a model itself. Every text from the learner, a model or the memory is escaped
(:mod:`argnb.debate.views`). The debate is a transcript (``widget.transcript``): save it and
evaluate it like any other (``argnb debate evaluate``), or add it to a memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from argnb.debate.generate import Debater
from argnb.debate.record import SIDE_WORDS, other, utterance_turn, utterances
from argnb.debate.views import live_box, steps_html, stopped_raw, utterance_box
from argnb.events import Event
from argnb.transcript import Transcript
from argnb.views import esc
from argnb.widgets.worker import Throttle, Worker, Working
from argnb.words import count, shorten

#: the least time between two repaints of a streaming reply
REPAINT_S = 0.08
MAX_CHARS = 3000
#: how the live panel names each step of the agent's turn (``Event("step").label``)
STEP_WORDS = {
    "logic": "finding your premises…",
    "retrieval": "recalling earlier debates…",
    "draft": "writing a draft…",
    "judge": "checking the draft…",
    "revision": "revising the draft…",
}
#: finished steps whose text the live panel shows while the next one runs
SHOWN = {"predicates", "reasoning chain", "flaws", "keywords"}


class DebateWidget(Working):
    """``DebateWidget(debater, motions=[...])``: the learner takes one side, ``debater`` (any
    method, any backend) the other. ``autosave`` writes the transcript after every turn."""

    def __init__(
        self,
        debater: Debater,
        motions: list[str] | None = None,
        *,
        side: str = "pro",
        autosave: str | Path | None = "work/debate_session.json",
        name: str = "You",
    ) -> None:
        import ipywidgets as w

        from argnb.widgets.static import StaticNote, live_box

        self.debater = debater
        self.autosave = Path(autosave) if autosave else None
        self.name = name
        self.transcript: Transcript | None = None
        self.worker = Worker("argnb-debate")
        self._live: list[str] = []
        self._step = ""
        self._repaint = Throttle(REPAINT_S)
        self.note = StaticNote()
        self._reply_note = ""  # how the note names the agent's last reply (method and cost)

        self.motion = w.Combobox(
            options=list(motions or []),
            value=(motions or [""])[0],
            placeholder="choose a motion or write your own",
            description="Motion",
            ensure_option=False,
            layout=w.Layout(width="70%"),
        )
        self.side = w.ToggleButtons(
            options=[("for (pro)", "pro"), ("against (con)", "con")],
            value=side,
            description="You argue",
            style={"button_width": "110px"},
        )
        self.start_button = w.Button(description="Start", button_style="primary", icon="play")
        self.reference_button = w.Button(
            description="Replay the reference turn",
            icon="book",
            tooltip="a turn written by the course authors, not produced by a model",
            layout=w.Layout(width="auto", min_width="fit-content", flex="0 0 auto"),
        )
        self.status = w.HTML()
        self.dialogue = w.HTML(
            "<div style='color:#999'>Choose a motion and your side, then Start.</div>",
            layout=w.Layout(border="1px solid #ddd", padding="4px 8px", min_height="80px"),
        )
        self.dialogue.add_class("argnb-debate-dialogue")
        self.live = w.HTML()
        self.live.add_class("argnb-debate-live")
        self.input = w.Textarea(
            placeholder="Start first…", disabled=True, layout=w.Layout(width="80%", height="80px")
        )
        self.input.add_class("argnb-debate-input")
        self.send_button = w.Button(
            description="Send", button_style="success", icon="paper-plane", disabled=True
        )
        self.steps = w.HTML("<div style='color:#999'>The agent's steps show here.</div>")
        self.steps.add_class("argnb-debate-steps")
        self.widget = live_box(
            "debate with the agent",
            [
                self.motion,
                w.HBox([self.side, self.start_button, self.reference_button]),
                self.status,
                w.HTML("<b>Debate</b>"),
                self.dialogue,
                self.live,
                w.HBox([self.input, self.send_button]),
                w.HTML("<b>How the agent made its last reply</b> (open a step)"),
                self.steps,
            ],
        )
        self.widget.add_class("argnb-debate")
        self.start_button.on_click(lambda _: self.start())
        self.reference_button.on_click(lambda _: self.replay_reference())
        self.send_button.on_click(lambda _: self.send())

    # -- actions ---------------------------------------------------------------------------
    @property
    def learner_side(self) -> str:
        return str(self.side.value)

    def start(self) -> None:
        """A new debate on the chosen motion; the agent opens when it argues for the motion."""
        if self.busy:
            return
        topic = " ".join(str(self.motion.value).split())
        if not topic:
            self._say("Choose or write a motion first.", error=True)
            return
        self.transcript = Transcript(
            kind="debate",
            title=topic,
            meta={"topic": topic, "learner": self.learner_side, "agent": self.debater.describe()},
        )
        self.start_button.description = "New debate"
        self._draw()
        self.steps.value = ""
        if self.learner_side == "pro":
            self._ready()
        else:
            self._work(self._reply)

    def replay_reference(self) -> None:
        """Replay the course authors' reference turn (``assets/debate/reference_turn.json``)
        through the real pipeline, no model called; the learner may then answer it, as con."""
        if self.busy:
            return
        from argnb.debate.reference import areplay_turn, history, load_reference

        session = load_reference()
        topic = str(session.setup["motion"])
        tr = Transcript(
            kind="debate",
            title=topic,
            meta={"topic": topic, "reference": {"file": session.source}},
        )
        for stance, text in history(session):
            tr.add(utterance_turn(stance, text, topic))
        self.transcript = tr
        self.motion.value = topic
        self.side.value = other(str(session.setup.get("stance", "pro")))
        self.start_button.description = "New debate"
        self._draw()
        self.steps.value = ""

        async def replay() -> None:
            u = await areplay_turn(session, on_event=self._on_event)
            for t in u.turns:
                tr.add(t)
            self.live.value = ""
            self._reply_note = f"Reference turn ({session.label})"
            self._draw()
            self.steps.value = steps_html(list(u.turns))

        self._work(
            replay,
            done=f"Replayed: {session.label}. Answer it yourself, or Start a new debate.",
        )

    def send(self, text: str | None = None) -> None:
        """The learner's turn (the box's text), then the agent's reply."""
        if self.transcript is None or self.busy:
            return
        text = " ".join((self.input.value if text is None else text).split())
        if not text:
            self._say("Write your argument first.", error=True)
            return
        if len(text) > MAX_CHARS:
            self._say(f"That is {len(text)} characters; a turn holds at most {MAX_CHARS}.", True)
            return
        self.transcript.add(
            utterance_turn(self.learner_side, text, self.transcript.title, self.name)
        )
        self.input.value = ""
        self._save()
        self._draw()
        self._work(self._reply)

    async def _reply(self) -> None:
        tr = self.transcript
        assert tr is not None
        self._live = []
        self._step = "thinking…"
        self._paint_live(force=True)
        result = await self.debater.anext(
            tr.title,
            utterances(tr),
            stance=other(self.learner_side),
            on_event=self._on_event,
        )
        for t in result.turns:
            tr.add(t)
        self.live.value = ""
        self._save()
        self._reply_note = f"Last reply ({result.method}, {result.cost})"
        self._draw()
        self.steps.value = steps_html(list(result.turns)) + (
            "<ul style='color:#a60'>"
            + "".join(f"<li>{esc(n)}</li>" for n in result.notes)
            + "</ul>"
            if result.notes
            else ""
        )

    def _work(self, coro: Any, done: str = "") -> None:
        self._set_input(False)
        self._say("The agent is thinking…")
        self.worker.run(
            coro,
            on_success=lambda: self._say(done),
            on_error=lambda exc: self._say(f"{type(exc).__name__}: {exc}", error=True),
            on_done=self._ready,
        )

    # -- drawing -----------------------------------------------------------------------------
    def _say(self, text: str, error: bool = False) -> None:
        colour = "#a50f15" if error else "#555"
        self.status.value = f"<span style='color:{colour}'>{esc(text)}</span>" if text else ""

    def _ready(self) -> None:
        self._set_input(self.transcript is not None)

    def _set_input(self, on: bool) -> None:
        self.input.disabled = self.send_button.disabled = not on
        side = SIDE_WORDS[self.learner_side]
        self.input.placeholder = (
            f"Your turn: argue {side} the motion, then Send." if on else "Wait for the agent…"
        )

    def _draw(self) -> None:
        tr = self.transcript
        if tr is None:
            return
        said = utterances(tr)
        head = f"<div style='font-weight:bold'>{esc(tr.title)}</div>"
        body = "".join(utterance_box(t, stopped_raw(tr.turns, t)) for t in said) or (
            "<div style='color:#999'>No turns yet.</div>"
        )
        self.dialogue.value = head + body
        self._note(said)

    def _note(self, said: list[Any]) -> None:
        """The line a saved or shared copy shows (:mod:`argnb.widgets.static`): the turns so far
        (the learner's counted), the last one in full; written on every redraw, so the copy
        shows the final state whatever ended the run."""
        tr = self.transcript
        assert tr is not None
        mine = sum(1 for t in said if t.speaker == self.name)
        line = f"{tr.title}: {count(len(said), 'turn')} ({mine} yours)"
        if said:
            last = said[-1]
            agent = last.speaker != self.name and self._reply_note
            line += f"; {agent or f'last, {last.speaker}'}: {shorten(last.text, 400)}"
        self.note.text(line)

    def _on_event(self, e: Event) -> None:
        """Show each step as it begins and what it makes, labelled ("writing a draft…"); the final
        reply replaces all of it."""
        if e.kind == "step":
            self._step = STEP_WORDS.get(e.label, e.label)
            if e.label == "logic":
                self._live = []
            self._say(f"The agent is {self._step}")
            self._paint_live(force=True)
        elif e.kind in ("start", "restart"):  # a draft or a revision starts streaming
            self._live = []
            if e.kind == "restart":
                self._step = "too long: writing it shorter…"
            self._paint_live(force=True)
        elif e.kind == "chunk":
            self._live.append(e.text)
            self._paint_live()
        elif e.kind == "turn" and e.turn is not None:
            role = e.turn.role
            if role in SHOWN and e.turn.text.strip():
                self._live.append(f"\n{role}: {e.turn.text}\n")
                self._paint_live(force=True)
            elif role == "verdict":
                self._step = f"judge: {e.turn.text}"
                self._paint_live(force=True)

    def _paint_live(self, force: bool = False) -> None:
        if not self._repaint.due(force):
            return
        self.live.value = live_box(
            self._step,
            "".join(self._live).split("\n"),
            self.debater.name,
            other(self.learner_side),
        )

    def _save(self) -> None:
        if self.autosave is not None and self.transcript is not None:
            self.transcript.save(self.autosave)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
        self.note.display()
