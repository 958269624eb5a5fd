"""A widget to choose the model backend: local (embedded), Ollama (with its installed models), or
an OpenAI-compatible server. The API key field is a password box whose value lives only in the
backend object in memory -- it is never echoed, saved in the notebook or written to a cache.
"""

from __future__ import annotations

import html
from typing import Any

from argnb.config import DEFAULT_MODELS, connect
from argnb.errors import ArgnbError
from argnb.llm.base import Backend


class BackendPicker:
    """``BackendPicker().display()``; after *Connect*, ``.backend`` is the current backend."""

    def __init__(self) -> None:
        import ipywidgets as w

        self.backend: Backend | None = None
        self.kind = w.ToggleButtons(
            options=["local", "ollama", "openai"], value="local", description="Backend"
        )
        self.host = w.Text(
            value="", placeholder="http://127.0.0.1:11434 (OLLAMA_HOST)", description="Host"
        )
        self.ollama_model = w.Dropdown(options=[], description="Model")
        self.refresh = w.Button(description="List models", icon="refresh")
        self.base_url = w.Text(
            value="",
            placeholder="https://api.openai.com/v1 (OPENAI_BASE_URL)",
            description="Base URL",
        )
        self.openai_model = w.Text(value=DEFAULT_MODELS["openai"], description="Model")
        self.api_key = w.Password(
            value="", placeholder="empty: use OPENAI_API_KEY", description="API key"
        )
        self.go = w.Button(description="Connect", button_style="primary", icon="plug")
        self.status = w.HTML()
        self.ollama_box = w.VBox([self.host, w.HBox([self.ollama_model, self.refresh])])
        self.openai_box = w.VBox([self.base_url, self.openai_model, self.api_key])
        self.box = w.VBox([self.kind, self.ollama_box, self.openai_box, self.go, self.status])
        self.kind.observe(lambda _: self._show(), names="value")
        self.refresh.on_click(lambda _: self.list_ollama_models())
        self.go.on_click(lambda _: self.connect())
        self._show()

    def _show(self) -> None:
        self.ollama_box.layout.display = "" if self.kind.value == "ollama" else "none"
        self.openai_box.layout.display = "" if self.kind.value == "openai" else "none"

    def _say(self, text: str, ok: bool = True) -> None:
        colour = "#176117" if ok else "#a11"
        self.status.value = f"<span style='color:{colour}'>{html.escape(text)}</span>"

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
        self._say(
            f"{len(names)} models" if names else "no models: run `ollama pull llama3.2`",
            ok=bool(names),
        )
        return names

    def connect(self) -> Backend | None:
        """Connect with the form's values and make that backend the default."""
        kind = self.kind.value
        kw: dict[str, Any] = {}
        if kind == "ollama":
            kw = {"model": self.ollama_model.value or None, "host": self.host.value or None}
        elif kind == "openai":
            kw = {
                "model": self.openai_model.value or None,
                "base_url": self.base_url.value or None,
                "api_key": self.api_key.value or None,
            }
        try:
            self.backend = connect(kind, **kw)
            if kind != "local":
                self.backend.list_models()  # fail now, not at the first question
        except ArgnbError as exc:
            self._say(str(exc), ok=False)
            return None
        finally:
            self.api_key.value = ""  # do not keep the key in the widget state
        self._say(f"connected: {self.backend.name} / {self.backend.model}")
        return self.backend

    def display(self) -> Any:
        from IPython.display import display

        display(self.box)
        return self

    def _ipython_display_(self) -> None:
        self.display()
