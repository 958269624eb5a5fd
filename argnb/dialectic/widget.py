"""A notebook widget to edit the two stances, rerun the dialogue and see it turn by turn.

The widget only builds a :class:`~argnb.dialectic.case.Case` from the text boxes and calls
:func:`~argnb.dialectic.protocol.run_dialogue`; the views it shows read the transcript.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from argnb.dialectic.case import Case, Stance
from argnb.views import esc
from argnb.widgets.static import StaticNote, live_box
from argnb.words import shorten


def stance_text(stance: Stance) -> str:
    """A stance as the YAML the editor shows."""
    data = stance.model_dump(exclude_defaults=True)
    data.pop("name", None)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def parse_stance(name: str, text: str) -> Stance:
    """Read a stance from the editor's YAML (``facts:``, ``rules:``, ``values:``)."""
    data = yaml.safe_load(text) or {}
    if isinstance(data, str):  # plain prose: values only
        data = {"values": data}
    if not isinstance(data, dict):
        raise ValueError("write the stance as 'facts:', 'rules:' and/or 'values:'")
    return Stance(name=name, **data)


class StanceEditor:
    """Issue, two stance boxes, a Run button; shows the dialogue as it happens, then the map.

    ``backend`` is a backend or a zero-argument function returning one (so a backend picked later
    in the notebook is used); ``run_kw`` goes to :func:`run_dialogue` (e.g. ``max_attacks``).
    """

    def __init__(
        self,
        case: Case,
        backend: Any = None,
        *,
        map_height: str = "560px",
        **run_kw: Any,
    ) -> None:
        import ipywidgets as w

        self.backend = backend
        self.run_kw = run_kw
        self.map_height = map_height
        self.dialogue = None
        self.issue = w.Text(value=case.issue, description="Issue", layout=w.Layout(width="95%"))
        self.names = [
            w.Text(value=a.name, description="Agent", layout=w.Layout(width="45%"))
            for a in case.agents
        ]
        self.boxes = [
            w.Textarea(value=stance_text(a), layout=w.Layout(width="49%", height="260px"))
            for a in case.agents
        ]
        self.button = w.Button(
            description="Run dialogue",
            button_style="primary",
            icon="play",
            # never shrink: beside a two-line outcome the label was cut to "Run di…"
            layout=w.Layout(width="auto", flex="0 0 auto"),
        )
        self.status = w.HTML()
        self.turns = w.Output()
        self.map = w.Output()
        self.note = StaticNote()
        self.button.on_click(lambda _: self.run())
        self.widget = live_box(
            "Stance editor",
            [
                self.issue,
                w.HBox(self.names),
                w.HBox(self.boxes),
                w.HBox([self.button, self.status]),
                self.turns,
                self.map,
            ],
        )

    def case(self) -> Case:
        """The case as currently edited (raises ValueError / ValidationError when malformed)."""
        agents = [
            parse_stance(n.value.strip(), b.value)
            for n, b in zip(self.names, self.boxes, strict=True)
        ]
        return Case(issue=self.issue.value.strip(), agents=agents)

    def _backend(self):
        if callable(self.backend) and not hasattr(self.backend, "chat"):
            return self.backend()
        if self.backend is None:
            from argnb.config import default_backend

            return default_backend()
        return self.backend

    def run(self, on_turn: Callable | None = None):
        """Run the dialogue on the edited stances; return the :class:`Dialogue` (or None)."""
        from IPython.display import HTML, display

        from argnb.dialectic.protocol import run_dialogue
        from argnb.dialectic.views import outcome_text, turn_html
        from argnb.errors import ArgnbError

        self.turns.clear_output()
        self.map.clear_output()
        try:
            case = self.case()
        except Exception as exc:  # show what is wrong in the editor, do not raise in a callback
            self.status.value = f"<span style='color:#b00'>{esc(str(exc))}</span>"
            return None
        self.status.value = "running… (each turn appears below as it is taken)"
        self.button.disabled = True
        count = 0

        def show(turn):
            nonlocal count
            count += 1
            self.status.value = f"running… {count} turn(s) so far"
            with self.turns:
                display(HTML(turn_html(turn)))
            if on_turn is not None:
                on_turn(turn)

        try:
            self.dialogue = run_dialogue(self._backend(), case, on_turn=show, **self.run_kw)
        except ArgnbError as exc:  # a server that is down: say so here, not in a log
            self.status.value = f"<span style='color:#b00'>{esc(str(exc))}</span>"
            # the saved copy's line says so too, instead of keeping an earlier run's result
            self.note.text(f"Last run ({shorten(case.issue, 80)}) stopped: {exc}")
            return None
        finally:
            self.button.disabled = False
        d = self.dialogue
        sentence = outcome_text(d.transcript.outcome)
        self.status.value = f"<b>{esc(d.outcome)}</b>: {esc(sentence)}"
        o = d.transcript.outcome  # "0 turns" beside four rejected ones read as a contradiction
        summary = f"{o.get('turns', 0)} valid turns, {o.get('rejected', 0)} rejected: {sentence}"
        if d.labelling:
            summary += " Grounded labelling: " + ", ".join(
                f"{k} {v}" for k, v in d.labelling.items()
            )
        self.note.text(f"Last run ({shorten(case.issue, 80)}): {summary}")
        with self.map:
            display(self.map_view(d))
        return d

    def map_view(self, dialogue: Any) -> Any:
        """The dialogue's map -- or, when it has nothing to draw, a sentence saying why."""
        from IPython.display import HTML

        m = dialogue.to_map()
        if not m.graph.number_of_nodes():
            return HTML(f"<p><i>{esc(NO_MAP)}</i></p>")
        return m.show(height=self.map_height)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
        self.note.display()


NO_MAP = (
    "No map to draw: no argument passed the checks, so the dialogue has no arguments or attacks."
)
